// Running an experiment in a child process so that nothing a plugin does can take the report
// with it: a crash (SIGSEGV, abort), a call to exit(), a step that never returns. The child runs
// and writes its own summary; when it ends without one, the parent writes it from what the
// child left: the rows of results.csv (a torn last row is cut) and the beacon, a page shared
// with the child that says which subsystem was stepping, at what time.
//
// Signals: INT, TERM, HUP and PIPE ask the run to stop (status "interrupted", with a complete
// last row and a summary). When the child has not ended `grace` seconds after the first one,
// or at a second INT/TERM/HUP, it is told to flush its rows and is then killed.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <vector>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>

#include <stride/stride.hpp>

namespace stride::host {

class Experiment;
class OutputFolder;
struct RunOptions;

// Shared between a run process and its supervisor (lock-free atomics in a MAP_SHARED page).
struct RunBeacon {
  std::atomic<int> node{-1};              // index of the subsystem inside a plugin call, -1 none
  std::atomic<double> node_time{0.0};     // its time at the call
  std::atomic<double> time_reached{0.0};  // every subsystem has reached this time
  std::atomic<std::uint64_t> rows{0};     // rows of results.csv written whole
  std::atomic<int> phase{0};              // 0 building, 1 initializing, 2 stepping, 3 summary
  std::atomic<int> link{-1};              // index of the connection whose extrapolator is called
  std::atomic<int> stop_signal{0};        // the signal that asked the run to stop
  void reset() {
    node = -1;
    node_time = 0.0;
    time_reached = 0.0;
    rows = 0;
    phase = 0;
    link = -1;
    stop_signal = 0;
  }
};

// Exit code of a run process that ran but could not write its summary.json.
constexpr int kExitSummaryNotWritten = 124;
static_assert(std::atomic<double>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free);

// A beacon in memory shared with children forked later; never null (throws).
RunBeacon* make_beacon();
void free_beacon(RunBeacon*);

// Called in a freshly forked run process: stop requests (INT, TERM, HUP, PIPE) set the flag
// RunOptions::stop points to; SIGUSR1 (from the supervisor) writes the rows held in memory and
// ends the process. Returns the flag.
const volatile int* install_run_signals(RunBeacon* beacon);
// Called first in main: signals ignored by whoever started Stride (nohup) stay ignored.
void note_inherited_signals();
// Called first in a process just forked to run for `parent` (a run process, a sweep worker;
// before install_run_signals): no run outlives the command that started it. When `parent` ends,
// however it ends (kill -9, the OOM killer), this process gets SIGTERM (PR_SET_PDEATHSIG; the
// request is tied to the thread that forked, which waits for it), which stops the run as Ctrl-C
// does; a run whose step does not return writes its rows and ends `grace` + 1 seconds later, as
// there is no supervisor left to end it. A parent that ended before the request took effect is
// caught by comparing getppid() with `parent`.
void end_with_parent(pid_t parent, double grace);
// Whether the process end_with_parent named has ended.
bool parent_ended();
// When it has: says so in the summary's message and writes it into the folder again.
void note_parent_ended(json& summary, const OutputFolder& folder);
// The rows held in memory that SIGUSR1 writes (set by the results writer, cleared at its end).
struct PendingRows {
  int fd = -1;
  const char* data = nullptr;
  std::size_t size = 0;
  volatile int busy = 0;  // the writer is changing data/size: leave them alone
};
extern PendingRows g_pending_rows;

// How a run process ended.
struct ChildEnd {
  int wait_status = 0;
  int stop_signal = 0;       // the first signal the supervisor received (0: none)
  bool grace_expired = false;
  bool forced = false;       // a second signal
};

// Waits for run processes, forwarding INT/TERM/HUP/PIPE to them and enforcing the grace
// period. Block the signals (block_supervisor_signals) before forking the first child so that
// none is lost.
class Supervisor {
 public:
  explicit Supervisor(double grace) : grace_(grace) {}
  void add(pid_t child);
  std::size_t running() const { return children_.size(); }
  // Waits until one child ends and returns it; nullopt when none is left. With `poll`, returns
  // at once when no child has ended (after handling pending signals).
  std::optional<std::pair<pid_t, ChildEnd>> wait(bool poll = false);
  // As wait(), but also returns when one of `fds` (pipes from long-lived children) can be
  // read: then pid is 0 and `ready_fd` names it.
  struct Event {
    pid_t pid = 0;
    ChildEnd end;
    int ready_fd = -1;
  };
  std::optional<Event> wait_for(std::span<const int> fds);
  ~Supervisor();
  // The first stop signal received (0: none): stop starting new runs.
  int stop_signal() const { return stop_signal_; }

 private:
  struct Child {
    pid_t pid;
    bool flush_requested = false, killed = false;
    std::chrono::steady_clock::time_point flush_asked{};
  };
  void escalate();
  std::optional<Event> next(bool poll, std::span<const int> fds);
  int signal_fd_ = -1;  // for wait_for: the supervisor's signals as a readable fd
  double grace_;
  std::vector<Child> children_;
  int stop_signal_ = 0;
  bool forced_ = false;
  std::chrono::steady_clock::time_point first_{};
};
void block_supervisor_signals();
void unblock_signals();

// The summary of the run in folder `dir` after its process ended: the one it wrote, or, when it
// ended without one, a summary written here from the running marker in summary.json, the
// beacon and results.csv (cut after its last complete row).
json conclude(const std::filesystem::path& dir, const ChildEnd& end, const RunBeacon& beacon);

// Exit code of `stride run` for a summary: 0 completed, 1 otherwise.
int exit_code_of(const json& summary);

}  // namespace stride::host
