// Instantiation probed in a child process (see probe.hpp).
#include "fmi/probe.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fmi/instance.hpp"
#include "fmi/limits.hpp"
#include "stride/host/run/supervise.hpp"

namespace stride::host::fmi {

void probe_instantiation(const std::shared_ptr<const Fmu>& fmu, bool model_exchange) {
  const double timeout = probe_timeout();
  const std::string fn = fmu->md.version == 2 ? "fmi2Instantiate"
                         : model_exchange     ? "fmi3InstantiateModelExchange"
                                              : "fmi3InstantiateCoSimulation";
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return;  // no probe: the host instantiates unguarded
  if (pid == 0) {
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, 2);  // the host prints the FMU's messages when it instantiates
    try {
      make_instance(fmu, model_exchange, Params{}, "probe");
    } catch (...) {
      ::_exit(3);
    }
    ::_exit(0);
  }
  int status = 0;
  const auto start = std::chrono::steady_clock::now();
  for (int wait_us = 100;; wait_us = std::min(wait_us * 2, 20000)) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) return;
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      throw PluginError(fmu->label, fn + " did not return within " + fmt_time(timeout) +
                                        " s (tried in a separate process before the run); the FMU cannot be used");
    }
    ::usleep(static_cast<useconds_t>(wait_us));
  }
  if (WIFSIGNALED(status))
    throw PluginError(fmu->label, fn + " crashed with " + signal_name(WTERMSIG(status)) +
                                      " (tried in a separate process before the run); the FMU cannot be used");
}

}  // namespace stride::host::fmi
