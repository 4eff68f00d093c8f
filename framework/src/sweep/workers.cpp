// Workers and pool: the worker processes that run a sweep's points, and one job of a
// distributed sweep run here.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <deque>
#include <iostream>
#include <memory>

#include "fmi/fmu.hpp"
#include "load/elf_section.hpp"
#include "stride/host/api/commands.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/output.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/run/supervise.hpp"
#include "sweep/point.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace sweep_detail {
namespace {

// One run of the grid in this (worker) process; returns its exit code.
int run_point(const Point& p, const PluginRegistry& reg, RunBeacon* beacon) {
  std::error_code ec;
  fs::create_directories(p.out, ec);
  const int log = ::open((p.out / "stderr.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log >= 0) {
    ::dup2(log, 2);
    ::close(log);
  }
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null >= 0) {
    ::dup2(null, 1);
    ::close(null);
  }
  const volatile int* stop = install_run_signals(beacon);
  try {
    OutputFolder folder(p.out, json{{"status", "running"}, {"manifest", fs::absolute(p.manifest).string()}});
    std::unique_ptr<Experiment> ex;
    try {
      ex = std::make_unique<Experiment>(read_manifest(p.manifest, p.sets), reg);
    } catch (const ManifestError& e) {
      std::string msg;
      for (const auto& d : e.diagnostics()) msg += (msg.empty() ? "" : "\n") + d.str();
      folder.write_summary({{"status", "invalid"}, {"message", msg}});
      std::cerr << msg << "\n";
      return 2;
    }
    folder.write_summary(running_summary(*ex));
    RunOptions o;
    o.folder = &folder;
    o.progress = false;
    o.stop = stop;
    o.beacon = beacon;
    RunResult r = run(*ex, o);
    if (r.summary_error.empty()) note_parent_ended(r.summary, folder);
    if (!r.summary_error.empty()) {
      std::cerr << "error: " << r.summary_error << "\n";
      return kExitSummaryNotWritten;
    }
    return exit_code_of(r.summary);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}

// A run's concluded summary into its point, and the progress line.
void take_summary(Point& p, std::size_t total, std::size_t& done) {
  const json& s = p.summary;
  p.status = s.value("status", "failed");
  if (p.status == "running") p.status = "failed";
  p.message = s.value("message", "");
  p.end_time = s.value("end_time_reached", std::nan(""));
  p.wall = s.value("wall_time_s", std::nan(""));
  p.residual = s.value("energy_residual_J", std::nan(""));
  if (const auto a = s.find("accuracy"); a != s.end() && a->is_object()) {
    auto number = [&](const char* key) {
      const auto v = a->find(key);
      return v != a->end() && v->is_number() ? v->get<double>() : std::nan("");
    };
    p.coupling_error = number("max_relative_coupling_error");
    p.coupling_error_rms = number("rms_relative_coupling_error");
    p.residual_relative = number("max_relative_energy_residual");
  }
  if (p.quiet) return;
  if (p.reference) {
    std::fprintf(stderr, "reference: %s\n", p.status.c_str());
  } else {
    ++done;
    std::fprintf(stderr, "[%zu/%zu] run %zu: %s\n", done, total, p.index, p.status.c_str());
  }
}

}  // namespace

// The points through a distributor (distributed sweeps), as run_points does here.
bool distribute_points(const SweepDistributor& d, std::vector<Point*> points, std::size_t total, std::size_t& done) {
  std::vector<SweepJob> jobs(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    jobs[i] = {fs::absolute(points[i]->manifest), points[i]->sets, fs::absolute(points[i]->out), json()};
  return d(jobs, [&](std::size_t i) {
    points[i]->summary =
        jobs[i].summary.is_object() ? jobs[i].summary : json{{"status", "failed"}, {"message", "no summary came back"}};
    take_summary(*points[i], total, done);
  });
}

namespace {

// Whether point `p` uses one of the plugins `per_run` names (declared process_per_run, or
// found keeping state).
bool needs_own_process(const Point& p, const std::set<std::string>& per_run) {
  if (per_run.empty()) return false;
  try {
    for (const std::string& n : plugin_names(read_manifest(p.manifest, p.sets)))
      if (per_run.count(n)) return true;
  } catch (const std::exception&) {
    // The run reports it (status invalid).
  }
  return false;
}

// The global data (.data, .bss) of the plugin libraries, where a plugin that keeps state
// between runs keeps it.
struct PluginGlobals {
  std::vector<std::string> names, files;  // per library
  std::vector<std::vector<std::pair<const unsigned char*, std::size_t>>> ranges;
  PluginGlobals() = default;  // none watched
  explicit PluginGlobals(const PluginRegistry& reg) {
    for (const LoadedPlugin* lp : reg.plugins()) {
      if (!lp->library || !lp->plugin || lp->info().process_per_run) continue;
      void* h = ::dlopen(lp->file.c_str(), RTLD_LAZY | RTLD_NOLOAD);
      if (!h) continue;
      link_map* map = nullptr;
      if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map) {
        names.push_back(lp->info().name);
        files.push_back(lp->file.string());
        ranges.emplace_back();
        for (const auto& [addr, size] : elf_section_addresses(lp->file, {".data", ".bss"}))
          ranges.back().emplace_back(reinterpret_cast<const unsigned char*>(map->l_addr + addr), size);
      }
      ::dlclose(h);
    }
  }
  // FNV-1a of each library's globals.
  std::vector<std::uint64_t> hashes() const {
    std::vector<std::uint64_t> out;
    for (const auto& lib : ranges) {
      std::uint64_t h = 1469598103934665603ull;
      for (const auto& [p, n] : lib) h = fnv1a(h, p, n);
      out.push_back(h);
    }
    return out;
  }
  // Reads whole sections, the AddressSanitizer's red zones between globals included.
  __attribute__((no_sanitize("address"))) static std::uint64_t fnv1a(std::uint64_t h, const unsigned char* p,
                                                                     std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
    return h;
  }
};

// A worker's answer for one point: the run's exit code and the libraries (indices into
// PluginGlobals) whose globals the run changed after an earlier run of the worker had changed
// them. Written and read whole (smaller than PIPE_BUF).
struct Answer {
  int exit_code = 0;
  std::uint32_t changed = 0;
  std::uint32_t library[62] = {};
};
static_assert(sizeof(Answer) <= 512);

// A long-lived run process. Forked once the plugins are loaded, it runs points one after
// another in-process, each answered on a pipe: no fork, dynamic linking or teardown of a
// process per point. A point that crashes takes only its worker down; it is concluded as a run
// process that died, and the next point gets a new worker.
struct Worker {
  pid_t pid = -1;
  int jobs = -1, answers = -1;  // the parent writes point indices, reads answers
  RunBeacon* beacon = nullptr;
  Point* point = nullptr;  // the point it runs; null when idle
  bool last = false;       // ends after this point (a process_per_run point)
  bool fresh = true;       // has run nothing yet
};

[[noreturn]] void worker_loop(const std::vector<Point*>& points, const PluginRegistry& reg,
                              const PluginGlobals& globals, RunBeacon* beacon, int jobs, int answers) {
  // A library's globals may change in the first run that changes them (constant tables and
  // caches filled on first use); a later run that changes them again keeps state between runs.
  std::vector<std::uint64_t> last = globals.hashes();
  std::vector<char> filled(last.size(), 0);
  for (;;) {
    std::uint64_t i = 0;
    // EOF: no more points. EINTR: a stop signal while idle.
    if (::read(jobs, &i, sizeof i) != static_cast<ssize_t>(sizeof i) || i >= points.size()) break;
    Answer a;
    a.exit_code = run_point(*points[i], reg, beacon);
    const std::vector<std::uint64_t> now = globals.hashes();
    for (std::size_t k = 0; k < now.size(); ++k)
      if (now[k] != last[k]) {
        if (!filled[k]) filled[k] = 1;
        else if (a.changed < std::size(a.library)) a.library[a.changed++] = static_cast<std::uint32_t>(k);
      }
    last = now;
    if (::write(answers, &a, sizeof a) != static_cast<ssize_t>(sizeof a) || beacon->stop_signal.load() || a.changed)
      break;
  }
  fmi::remove_temporary_fmu_folders();  // _exit skips destructors
  ::_exit(0);
}

// The worker processes of a sweep and the points they run: hands each free worker the next
// point, reads its answers, concludes the points whose worker died, and repeats in a fresh
// process a point whose run found a plugin keeping state.
class WorkerPool {
 public:
  WorkerPool(std::vector<Point*> points, const PluginRegistry& reg, int jobs, double grace, std::size_t total,
             std::size_t& done, bool process_per_run)
      : points_(std::move(points)),
        reg_(reg),
        grace_(grace),
        sup_(grace),
        // Kept state shows only in a worker's second run: one point (a reference, a distributed
        // job) needs no watch, nor the plugin files read for it.
        globals_(points_.size() > 1 ? PluginGlobals(reg) : PluginGlobals()),
        workers_(static_cast<std::size_t>(std::max(1, jobs))),
        total_(total),
        done_(done),
        process_per_run_(process_per_run) {
    for (const LoadedPlugin* lp : reg.plugins())
      if (lp->plugin && lp->info().process_per_run) per_run_.insert(lp->info().name);
    for (Worker& w : workers_) w.beacon = make_beacon();
  }
  ~WorkerPool() {
    for (Worker& w : workers_) retire(w);
    while (sup_.wait()) {
    }
    for (Worker& w : workers_) free_beacon(w.beacon);
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Runs every point; false when interrupted.
  bool run() {
    for (;;) {
      dispatch();
      std::vector<int> busy;
      for (const Worker& w : workers_)
        if (w.point && w.answers >= 0) busy.push_back(w.answers);
      const bool running =
          std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) { return w.point != nullptr; });
      if (!running) break;
      const auto ev = sup_.wait_for(busy);
      if (!ev) break;
      if (ev->ready_fd >= 0) read_answer(ev->ready_fd);
      else worker_ended(ev->pid, ev->end);
    }
    for (Worker& w : workers_) retire(w);
    while (sup_.wait()) {
    }
    return sup_.stop_signal() == 0;
  }

 private:
  // A retired worker reads EOF and ends; the supervisor reaps it.
  static void retire(Worker& w) {
    if (w.jobs >= 0) ::close(w.jobs);
    if (w.answers >= 0) ::close(w.answers);
    w.pid = -1;
    w.jobs = w.answers = -1;
    w.point = nullptr;
    w.last = false;
    w.fresh = true;
  }

  // Forks worker `w`; "" or why it could not be started.
  std::string spawn(Worker& w) {
    // Jobs go down a socket: a send to a worker that died is an error, not a SIGPIPE (which
    // the supervisor would take for a stop request).
    int down[2], up[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, down) != 0) return std::strerror(errno);
    if (::pipe2(up, O_CLOEXEC) != 0) {
      const std::string why = std::strerror(errno);
      ::close(down[0]);
      ::close(down[1]);
      return why;
    }
    std::fflush(nullptr);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid == 0) {
      end_with_parent(parent, grace_);
      ::close(down[1]);
      ::close(up[0]);
      for (const Worker& o : workers_)  // the other workers' pipes: their EOF must not wait for us
        if (o.jobs >= 0) {
          ::close(o.jobs);
          ::close(o.answers);
        }
      worker_loop(points_, reg_, globals_, w.beacon, down[0], up[1]);
    }
    const int e = errno;
    ::close(down[0]);
    ::close(up[1]);
    if (pid < 0) {
      ::close(down[1]);
      ::close(up[0]);
      return std::strerror(e);
    }
    ::fcntl(up[0], F_SETFL, O_NONBLOCK);
    w.pid = pid;
    w.jobs = down[1];
    w.answers = up[0];
    w.fresh = true;
    sup_.add(pid);
    return "";
  }

  // Hands every idle worker the next point (a point to repeat first), starting workers as needed.
  void dispatch() {
    for (Worker& w : workers_) {
      if (sup_.stop_signal() || (again_.empty() && next_ >= points_.size())) break;
      if (w.point) continue;
      const bool repeat = !again_.empty();
      const std::size_t index = repeat ? again_.front() : next_;
      Point& p = *points_[index];
      const bool alone = repeat || process_per_run_ || needs_own_process(p, per_run_);
      if (w.pid > 0 && alone && !w.fresh) retire(w);
      if (w.pid <= 0)
        if (const std::string why = spawn(w); !why.empty()) {
          p.status = "failed";
          p.message = "cannot start the run process: " + why;
          if (repeat) again_.pop_front();
          else ++next_;
          continue;
        }
      w.beacon->reset();
      // A summary left by an earlier sweep in this folder must not be taken for this run's,
      // should the worker end before the run marks its folder.
      std::error_code ec;
      fs::remove(p.out / "summary.json", ec);
      const std::uint64_t i = index;
      if (::send(w.jobs, &i, sizeof i, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof i)) {
        retire(w);  // the worker is gone; the point goes to the next one free
        continue;
      }
      if (repeat) again_.pop_front();
      else ++next_;
      w.point = &p;
      w.last = alone;
      w.fresh = false;
    }
  }

  void conclude_point(Worker& w, const ChildEnd& end) {
    Point& p = *w.point;
    w.point = nullptr;
    p.summary = conclude(p.out, end, *w.beacon);
    take_summary(p, total_, done_);
  }

  // The answer the worker sent for its point, if it did.
  static bool answer(Worker& w, Answer& a) {
    return w.answers >= 0 && ::read(w.answers, &a, sizeof a) == static_cast<ssize_t>(sizeof a);
  }

  // A run that changed a plugin's globals after an earlier run of its worker may have seen that
  // run's state: it runs again in a fresh process, as does every later run of the plugin.
  void kept_state(Worker& w, const Answer& a) {
    for (std::uint32_t k = 0; k < a.changed; ++k) {
      const std::string& name = globals_.names.at(a.library[k]);
      if (per_run_.insert(name).second)
        std::fprintf(
            stderr,
            "sweep: plugin \"%s\" (%s) changed its global data in a run after an earlier run in the same "
            "process: it keeps state between runs. That run is repeated in a fresh process, as is every run "
            "that uses the plugin from now on (a plugin that needs this declares PluginInfo::process_per_run)\n",
            name.c_str(), globals_.files.at(a.library[k]).c_str());
    }
    const auto i = static_cast<std::size_t>(std::find(points_.begin(), points_.end(), w.point) - points_.begin());
    w.point = nullptr;
    again_.push_back(i);
  }

  void answered(Worker& w, const Answer& a) {
    if (a.changed && !sup_.stop_signal()) return kept_state(w, a);
    ChildEnd end;
    end.wait_status = W_EXITCODE(a.exit_code, 0);
    end.stop_signal = sup_.stop_signal();
    conclude_point(w, end);
  }

  // A worker's answer pipe can be read: its answer, or EOF when it died.
  void read_answer(int fd) {
    auto w = std::find_if(workers_.begin(), workers_.end(), [&](const Worker& x) { return x.answers == fd; });
    if (w == workers_.end()) return;
    Answer a;
    if (answer(*w, a)) {
      answered(*w, a);
      if (w->last || a.changed) retire(*w);  // (a worker that found kept state ends)
    } else {                                 // EOF: the worker died; its end follows from the supervisor
      ::close(w->answers);
      w->answers = -1;
    }
  }

  void worker_ended(pid_t pid, const ChildEnd& end) {
    auto w = std::find_if(workers_.begin(), workers_.end(), [&](const Worker& x) { return x.pid == pid; });
    if (w == workers_.end()) return;  // a retired worker ended
    if (w->point) {
      Answer a;
      if (answer(*w, a)) answered(*w, a);  // it answered, then ended
      else conclude_point(*w, end);        // it died in the run
    }
    retire(*w);
  }

  std::vector<Point*> points_;
  const PluginRegistry& reg_;
  double grace_;
  Supervisor sup_;
  std::set<std::string> per_run_;  // plugins whose runs get a fresh process
  const PluginGlobals globals_;
  std::deque<std::size_t> again_;  // points to run again in a fresh process
  std::vector<Worker> workers_;
  std::size_t next_ = 0;
  std::size_t total_;
  std::size_t& done_;
  bool process_per_run_;
};

}  // namespace

// Runs `points` on at most `jobs` worker processes; false when interrupted.
bool run_points(std::vector<Point*> points, const PluginRegistry& reg, int jobs, double grace, std::size_t total,
                std::size_t& done, bool process_per_run) {
  block_supervisor_signals();
  bool finished = false;
  {
    WorkerPool pool(std::move(points), reg, jobs, grace, total, done, process_per_run);
    finished = pool.run();
  }
  unblock_signals();
  return finished;
}

}  // namespace sweep_detail

bool run_sweep_job(SweepJob& job, double grace) {
  using sweep_detail::Point;
  // The plugins as for `stride run` (the default folders and the manifest's plugin_paths),
  // loaded once per set of folders.
  static std::map<std::vector<fs::path>, PluginRegistry> registries;
  std::vector<fs::path> extra;
  try {
    extra = read_manifest(job.manifest, job.sets).plugin_paths;
  } catch (const ManifestError&) {
    // The run reports it (status invalid).
  }
  auto [it, fresh] = registries.try_emplace(extra);
  if (fresh) load_plugins(it->second, extra, false);
  Point p;
  p.manifest = job.manifest;
  p.sets = job.sets;
  p.out = job.out;
  p.quiet = true;
  std::size_t done = 0;
  const bool finished = sweep_detail::run_points({&p}, it->second, 1, grace, 1, done);
  job.summary = p.summary.is_object() ? p.summary : json{{"status", "not run"}};
  return finished;
}

}  // namespace stride::host
