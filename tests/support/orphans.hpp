// Processes left behind when their parent is killed (kill -9 of `stride run`): the test process
// becomes the reaper of such orphans while an OrphanReaper lives, so it can wait for them and
// see how (and whether) they ended.
#pragma once

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace stride_test {

// The children of `parent`, from /proc/<pid>/stat (field 4 is the parent's pid).
inline std::vector<pid_t> children_of(pid_t parent) {
  std::vector<pid_t> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(e.path() / "stat");
    std::string stat;
    std::getline(in, stat);
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    long ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %ld", &state, &ppid) == 2 && ppid == parent)
      out.push_back(static_cast<pid_t>(std::stol(name)));
  }
  return out;
}

class OrphanReaper {
 public:
  OrphanReaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 1); }
  ~OrphanReaper() { ::prctl(PR_SET_CHILD_SUBREAPER, 0); }
  OrphanReaper(const OrphanReaper&) = delete;
  OrphanReaper& operator=(const OrphanReaper&) = delete;

  // Waits up to `seconds` for `pid` (a child, or an orphan handed to this process) to end and
  // returns its wait status; nullopt when it is still running then (it is killed, so that a
  // failing test leaves nothing behind).
  static std::optional<int> wait_end(pid_t pid, double seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    int status = 0;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
      if (::waitpid(pid, &status, WNOHANG) == pid) return status;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    return std::nullopt;
  }
};

}  // namespace stride_test
