#include "stride/host/run/supervise.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstring>
#include <algorithm>
#include <new>
#include <vector>

#include "core/signals.hpp"
#include "fmi/fmu.hpp"
#include "stride/host/input/json_input.hpp"
#include "stride/host/run/output.hpp"

namespace stride::host {
namespace fs = std::filesystem;

PendingRows g_pending_rows;

namespace {

constexpr int kFlushedExit = 125;  // the run process wrote its rows on request and ended
volatile int g_stop_signal = 0;
RunBeacon* g_beacon = nullptr;
constexpr int kStopSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};
pid_t g_parent = 0;             // the supervising process (end_with_parent), 0 none
unsigned g_orphan_grace_s = 4;  // how long a run whose supervisor ended may take to stop

extern "C" void on_flush_signal(int);

extern "C" void on_stop_signal(int sig) {
  if (!g_stop_signal) g_stop_signal = sig;
  if (g_beacon && !g_beacon->stop_signal.load(std::memory_order_relaxed)) g_beacon->stop_signal.store(sig);
  if (g_parent != 0 && ::getppid() != g_parent) {
    // No supervisor is left to end a step that never returns: write the rows and end after the
    // grace period (async-signal-safe calls only).
    struct sigaction sa {};
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_flush_signal;
    ::sigaction(SIGALRM, &sa, nullptr);
    ::alarm(g_orphan_grace_s);
  }
}

// Writes the rows held in memory, when the writer is not in the middle of changing them.
void write_pending_rows() {
  const PendingRows& p = g_pending_rows;
  if (!p.busy && p.fd >= 0 && p.data && p.size) {
    const char* d = p.data;
    std::size_t left = p.size;
    while (left > 0) {
      const ssize_t n = ::write(p.fd, d, left);
      if (n <= 0) break;
      d += n;
      left -= static_cast<std::size_t>(n);
    }
  }
}

// A plugin called exit(): the rows computed so far still reach the file.
// FMUs unpacked by this process are removed too (their owners' destructors do not run).
extern "C" void write_pending_rows_at_exit() {
  write_pending_rows();
  fmi::remove_temporary_fmu_folders();
}

// The supervisor gave up waiting: write the rows held in memory, whole, and end.
extern "C" void on_flush_signal(int) {
  write_pending_rows();
  ::_exit(kFlushedExit);
}

// A crash: keep the rows computed so far, then die of the same signal (the default action
// was restored on entry) so the supervisor reports it.
extern "C" void on_crash_signal(int sig) {
  write_pending_rows();
  ::raise(sig);
}

sigset_t supervisor_set() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  for (int s : kStopSignals) sigaddset(&set, s);
  return set;
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

// Cuts results.csv after its last complete row; returns the number of rows after the
// header and the time of the last one (NaN when there is none).
std::pair<std::uint64_t, double> repair_table(const fs::path& csv) {
  const int fd = ::open(csv.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return {0, std::nan("")};
  struct stat st {};
  ::fstat(fd, &st);
  std::uint64_t lines = 0;
  off_t last_newline = -1, before_last = -1;
  char buf[1 << 16];
  off_t pos = 0;
  for (;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, pos);
    if (n <= 0) break;
    for (ssize_t i = 0; i < n; ++i)
      if (buf[i] == '\n') {
        ++lines;
        before_last = last_newline;
        last_newline = pos + i;
      }
    pos += n;
  }
  if (last_newline + 1 < pos && ::ftruncate(fd, last_newline + 1) != 0) {
  }
  double last_time = std::nan("");
  if (lines >= 2) {
    char row[64] = {};
    const ssize_t n = ::pread(fd, row, sizeof row - 1, before_last + 1);
    if (n > 0) last_time = std::strtod(row, nullptr);
  }
  ::close(fd);
  return {lines > 0 ? lines - 1 : 0, last_time};
}

}  // namespace

RunBeacon* make_beacon() {
  void* p = ::mmap(nullptr, sizeof(RunBeacon), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::runtime_error(std::string("cannot map the run beacon: ") + std::strerror(errno));
  return new (p) RunBeacon();
}

void free_beacon(RunBeacon* b) {
  if (!b) return;
  b->~RunBeacon();
  ::munmap(b, sizeof(RunBeacon));
}

namespace {
bool g_ignored[NSIG] = {};
}

void note_inherited_signals() {
  for (int s : kStopSignals) {
    struct sigaction old {};
    if (::sigaction(s, nullptr, &old) == 0) g_ignored[s] = old.sa_handler == SIG_IGN;
  }
}

const volatile int* install_run_signals(RunBeacon* beacon) {
  g_beacon = beacon;
  g_stop_signal = 0;
  struct sigaction sa {};
  sigemptyset(&sa.sa_mask);
  for (int s : kStopSignals) {
    sa.sa_handler = g_ignored[s] ? SIG_IGN : on_stop_signal;  // nohup stays nohup
    ::sigaction(s, &sa, nullptr);
  }
  sa.sa_handler = on_flush_signal;
  ::sigaction(SIGUSR1, &sa, nullptr);
  // Crash handlers run on their own stack (a stack overflow is a crash too).
  static std::vector<char> alt(1 << 16);
  stack_t ss{};
  ss.ss_sp = alt.data();
  ss.ss_size = alt.size();
  ::sigaltstack(&ss, nullptr);
  sa.sa_handler = on_crash_signal;
  sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
  for (int s : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::sigaction(s, &sa, nullptr);
  static bool at_exit = false;
  if (!at_exit) at_exit = std::atexit(write_pending_rows_at_exit) == 0;
  ::signal(SIGCHLD, SIG_DFL);
  unblock_signals();
  return &g_stop_signal;
}

void end_with_parent(pid_t parent, double grace) {
  g_parent = parent;
  g_orphan_grace_s = static_cast<unsigned>(std::clamp(std::ceil(grace), 0.0, 3600.0)) + 1;
  // SIGTERM asks the run to stop as Ctrl-C does (status "interrupted", whole rows, a summary);
  // where SIGTERM was ignored when Stride started, only SIGKILL ends the process.
  const int sig = g_ignored[SIGTERM] ? SIGKILL : SIGTERM;
  ::prctl(PR_SET_PDEATHSIG, sig);
  if (::getppid() != parent) ::kill(::getpid(), sig);  // it ended before the request was in place
}

bool parent_ended() { return g_parent != 0 && ::getppid() != g_parent; }

void note_parent_ended(json& summary, const OutputFolder& folder) {
  if (!parent_ended() || !summary.is_object()) return;
  summary["message"] = summary.value("message", std::string()) +
                       " (the process that started and supervised the run, pid " + std::to_string(g_parent) +
                       ", ended)";
  folder.write_summary(summary);
}

void block_supervisor_signals() {
  const sigset_t set = supervisor_set();
  ::sigprocmask(SIG_BLOCK, &set, nullptr);
}

void unblock_signals() {
  const sigset_t set = supervisor_set();
  ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

void Supervisor::add(pid_t child) {
  Child c;
  c.pid = child;
  children_.push_back(c);
  if (stop_signal_) ::kill(child, stop_signal_);  // started before the signal was seen
}

// After the grace period (or at a second signal): ask for the rows, then kill.
void Supervisor::escalate() {
  if (!stop_signal_) return;
  for (Child& c : children_) {
    if (!c.flush_requested && (forced_ || seconds_since(first_) > grace_)) {
      ::kill(c.pid, SIGUSR1);
      c.flush_requested = true;
      c.flush_asked = std::chrono::steady_clock::now();
    }
    if (c.flush_requested && !c.killed && seconds_since(c.flush_asked) > 1.0) {
      ::kill(c.pid, SIGKILL);
      c.killed = true;
    }
  }
}

std::optional<std::pair<pid_t, ChildEnd>> Supervisor::wait(bool poll) {
  auto e = next(poll, {});
  if (!e) return std::nullopt;
  return std::make_pair(e->pid, e->end);
}

std::optional<Supervisor::Event> Supervisor::wait_for(std::span<const int> fds) { return next(false, fds); }

Supervisor::~Supervisor() {
  if (signal_fd_ >= 0) ::close(signal_fd_);
}

std::optional<Supervisor::Event> Supervisor::next(bool poll, std::span<const int> fds) {
  const sigset_t set = supervisor_set();
  for (;;) {
    if (children_.empty()) return std::nullopt;
    // Each child by its pid: a process embedding the host (Python) may have children of its
    // own, which must stay for their owners to reap.
    int st = 0;
    pid_t r = 0;
    auto it = children_.begin();
    for (; it != children_.end(); ++it) {
      r = ::waitpid(it->pid, &st, WNOHANG);
      if (r != 0) break;
    }
    if (r < 0 && errno == ECHILD) {  // lost track of it (reaped elsewhere): nothing to wait for
      children_.erase(it);
      continue;
    }
    if (r > 0) {
      Event e;
      e.pid = r;
      e.end.wait_status = st;
      e.end.stop_signal = stop_signal_;
      e.end.forced = forced_;
      e.end.grace_expired = it->flush_requested && !forced_;
      children_.erase(it);
      return e;
    }
    escalate();
    timespec timeout{0, 50'000'000};
    if (!stop_signal_) timeout = poll ? timespec{0, 0} : timespec{1, 0};  // a SIGCHLD wakes us at once
    int sig = 0;
    if (fds.empty()) {
      siginfo_t info{};
      sig = ::sigtimedwait(&set, &info, &timeout);
    } else {
      // The signals (blocked) through a signalfd, beside the children's pipes.
      if (signal_fd_ < 0) signal_fd_ = ::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
      std::vector<pollfd> pf;
      pf.push_back({signal_fd_, POLLIN, 0});
      for (int fd : fds) pf.push_back({fd, POLLIN, 0});
      const int ms = static_cast<int>(timeout.tv_sec * 1000 + timeout.tv_nsec / 1'000'000);
      if (::poll(pf.data(), pf.size(), ms) > 0) {
        for (std::size_t i = 1; i < pf.size(); ++i)
          if (pf[i].revents) {
            Event e;
            e.ready_fd = pf[i].fd;
            return e;
          }
        signalfd_siginfo si{};
        if (::read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) sig = static_cast<int>(si.ssi_signo);
      }
    }
    if (sig <= 0) {
      if (poll && !stop_signal_) return std::nullopt;
      continue;
    }
    if (sig == SIGCHLD) continue;
    if (!stop_signal_) {
      stop_signal_ = sig;
      first_ = std::chrono::steady_clock::now();
      for (const Child& c : children_) ::kill(c.pid, sig);
    } else if (sig != SIGPIPE) {
      forced_ = true;
    }
  }
}

json conclude(const fs::path& dir, const ChildEnd& end, const RunBeacon& beacon) {
  const fs::path summary = dir / "summary.json";
  std::vector<Diagnostic> ignored;
  json written;
  try {
    if (auto j = parse_json(read_text_file(summary), summary.string(), ignored)) written = *j;
  } catch (const std::exception&) {
  }
  const bool normal_exit = WIFEXITED(end.wait_status) && WEXITSTATUS(end.wait_status) != kFlushedExit;
  if (normal_exit && written.is_object() && written.value("status", "") != "running" && written.contains("status"))
    return written;

  json s = written.is_object() ? written : json::object();
  const auto [rows, last_time] = repair_table(dir / "results.csv");
  std::string why;
  if (WIFSIGNALED(end.wait_status)) {
    const int sig = WTERMSIG(end.wait_status);
    why = sig == SIGKILL && end.stop_signal
              ? "the run process did not stop and was killed"
              : "the run process was killed by " + signal_name(sig) + " (" + strsignal(sig) + ")";
  } else if (WIFEXITED(end.wait_status) && WEXITSTATUS(end.wait_status) == kExitSummaryNotWritten) {
    why = "the run process could not write summary.json";
  } else if (WIFEXITED(end.wait_status) && WEXITSTATUS(end.wait_status) == kFlushedExit) {
    why = "the run process did not stop and was ended after writing its rows";
  } else {
    why = "the run process exited with code " +
          std::to_string(WIFEXITED(end.wait_status) ? WEXITSTATUS(end.wait_status) : -1) +
          " without writing its summary (a plugin called exit()?)";
  }
  std::string where;
  const json order = s.value("subsystem_order", json::array());
  const int node = beacon.node.load(), link = beacon.link.load(), phase = beacon.phase.load();
  auto time_text = [](double t) { return number_text(t); };
  if (node >= 0) {
    const std::string name = node < static_cast<int>(order.size()) && order[node].is_string()
                                 ? order[node].get<std::string>()
                                 : "#" + std::to_string(node);
    where =
        " while subsystem \"" + name + "\" was in a plugin call at t = " + time_text(beacon.node_time.load()) + " s";
  } else if (link >= 0) {
    where = " while the extrapolator of connection #" + std::to_string(link) + " was called";
  } else if (phase == 0) {
    where = " before the run started";
  } else if (phase == 3) {
    where = " while it wrote its summary";
  }
  std::string msg;
  if (end.stop_signal) {
    msg = "interrupted by signal " + signal_name(end.stop_signal) + "; " + why + where +
          (end.grace_expired ? " (no return from the plugin within the grace period)"
           : end.forced      ? " (a second signal)"
                             : "");
  } else {
    msg = why + where;
  }
  double reached = beacon.time_reached.load();
  if (phase < 2) reached = s.value("start_time", 0.0);
  if (!std::isnan(last_time)) reached = std::max(reached, last_time);
  s["status"] = end.stop_signal ? "interrupted" : "failed";
  s["message"] = msg;
  s["end_time_reached"] = reached;
  s["rows"] = rows;
  if (WIFSIGNALED(end.wait_status)) s["signal"] = signal_name(WTERMSIG(end.wait_status));
  s.erase("pid");
  if (auto err = write_file_atomically(summary, summary_text(s)); !err.empty()) s["summary_error"] = err;
  return s;
}

int exit_code_of(const json& summary) {
  return summary.is_object() && summary.value("status", "") == "completed" ? 0 : 1;
}

}  // namespace stride::host
