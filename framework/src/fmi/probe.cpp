// Instantiation and initialization probed in a child process (see probe.hpp).
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

#include "core/signals.hpp"
#include "fmi/instance.hpp"
#include "fmi/limits.hpp"
#include "stride/host/input/json_input.hpp"  // pointer_escape

namespace stride::host::fmi {
namespace {

// What the child writes to the pipe: "I" once instantiated; after a failed initialization
// the variable being set (or nothing), a newline and the message.
constexpr char kInstantiated = 'I';
constexpr std::size_t kMaxReport = 16384;

void write_report(int fd, const std::string& text) {
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += std::size_t(n);
  }
}

[[noreturn]] void child(int fd, const std::shared_ptr<const Fmu>& fmu, bool model_exchange, const Params& p,
                        const std::string& name, double t0, bool leave_initialization) {
  const int null = ::open("/dev/null", O_WRONLY);
  if (null >= 0) ::dup2(null, 2);  // the host prints the FMU's messages when it instantiates
  std::unique_ptr<Instance> inst;
  try {
    inst = make_instance(fmu, model_exchange, p, name);
  } catch (...) {
    ::_exit(3);
  }
  write_report(fd, std::string(1, kInstantiated));
  try {
    inst->start(t0, leave_initialization);
  } catch (const std::exception& e) {
    std::string message = e.what();
    if (const std::string own = "plugin '" + fmu->label + "': "; message.rfind(own, 0) == 0)
      message.erase(0, own.size());
    std::string report = inst->setting() + "\n" + message;
    report.resize(std::min(report.size(), kMaxReport));
    write_report(fd, report);
    ::_exit(4);
  }
  inst.reset();
  ::_exit(0);
}

std::string read_report(int fd) {
  std::string text;
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0 || text.size() > kMaxReport) break;
    text.append(buf, std::size_t(n));
  }
  ::close(fd);
  return text;
}

}  // namespace

void probe_instantiation(const std::shared_ptr<const Fmu>& fmu, bool model_exchange, const Params& p,
                         const std::string& name, double t0) {
  const double timeout = probe_timeout();
  const int version = fmu->md.version;
  const std::string v = version == 2 ? "fmi2" : "fmi3";
  const std::string instantiate = version == 1     ? (model_exchange ? "fmiInstantiateModel" : "fmiInstantiateSlave")
                                  : version == 2   ? "fmi2Instantiate"
                                  : model_exchange ? "fmi3InstantiateModelExchange"
                                                   : "fmi3InstantiateCoSimulation";
  // As the run does: a co-simulation FMU with inputs stays in initialization mode until its
  // inputs hold the other subsystems' initial outputs, which the probe does not have.
  const bool leaves = model_exchange || Interface(fmu->md, shape(fmu->md, p.values())).in.empty();
  const std::string steps = version == 1
                                ? (model_exchange ? "fmiSetTime, fmiInitialize)" : "fmiInitializeSlave)")
                                : v + "EnterInitializationMode" + (leaves ? ", " + v + "ExitInitializationMode)" : ")");
  const std::string initialize =
      "initialization at t = " + fmt_time(t0) + " (parameters and start values set, " + steps;
  const char* where = " (tried in a separate process before the run)";
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return;  // no probe: the host instantiates unguarded
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]), ::close(fds[1]);
    return;
  }
  if (pid == 0) child(fds[1], fmu, model_exchange, p, name, t0, leaves);
  ::close(fds[1]);
  int status = 0;
  bool hung = false;
  const auto start = std::chrono::steady_clock::now();
  for (int wait_us = 100;; wait_us = std::min(wait_us * 2, 20000)) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) {
      ::close(fds[0]);
      return;
    }
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > timeout) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      hung = true;
      break;
    }
    ::usleep(static_cast<useconds_t>(wait_us));
  }
  const std::string report = read_report(fds[0]);
  const bool instantiated = !report.empty() && report[0] == kInstantiated;
  const std::string& fn = instantiated ? initialize : instantiate;
  if (hung)
    throw PluginError(fmu->label, fn + " did not return within " + fmt_time(timeout) + " s" + where +
                                      "; the FMU cannot be used (STRIDE_FMU_PROBE_TIMEOUT sets the limit)");
  if (WIFSIGNALED(status))
    throw PluginError(fmu->label,
                      fn + " crashed with " + signal_name(WTERMSIG(status)) + where + "; the FMU cannot be used");
  if (!instantiated || !WIFEXITED(status) || WEXITSTATUS(status) != 4) return;
  const std::size_t eol = report.find('\n');
  const std::string variable = report.substr(1, eol == std::string::npos ? 0 : eol - 1);
  const std::string message = eol == std::string::npos ? std::string("no message") : report.substr(eol + 1);
  if (!variable.empty())
    throw ParameterError("/" + pointer_escape(variable),
                         "the FMU refused this value when it was set before initialization: " + message + where);
  throw PluginError(fmu->label, "the FMU failed its " + initialize + ": " + message + where);
}

}  // namespace stride::host::fmi
