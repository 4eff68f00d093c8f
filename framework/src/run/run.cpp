// run(): a Simulation (run/simulation.hpp) with its observers (results.csv, progress), the
// output folder, and summary.json at the end, whatever the outcome.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <optional>

#include "run/progress.hpp"
#include "run/real_time.hpp"
#include "run/recorder.hpp"
#include "run/simulation.hpp"
#include "run/summary.hpp"
#include "stride/host/run/output.hpp"
#include "stride/host/run/run.hpp"

namespace stride::host {
namespace fs = std::filesystem;

double on_grid(double t, double t0, double h, double taken) {
  const double k = std::floor((t - t0) / h + 0.5);  // t >= t0
  const double tk = t0 + k * h;
  // Within round-off of the step actually taken: a step shortened to land on a communication
  // point (or a step far longer than the run) must not be pulled back to its grid point.
  // (Two doubles' spacing at t is round-off at any step.)
  return std::abs(t - tk) <= std::max(1e-9 * std::min(h, taken), 4.5e-16 * std::abs(t)) ? tk : t;
}

const char* to_string(RunStatus s) {
  switch (s) {
    case RunStatus::completed: return "completed";
    case RunStatus::diverged: return "diverged";
    case RunStatus::failed: return "failed";
    case RunStatus::interrupted: return "interrupted";
    case RunStatus::inaccurate: return "inaccurate";
    case RunStatus::deadline_missed: return "deadline_missed";
  }
  return "?";
}

json running_summary(const Experiment& ex) {
  const Manifest& m = ex.manifest();
  json order = json::array();
  for (const auto& sc : m.subsystems) order.push_back(sc.name);
  return {{"status", "running"},
          {"message",
           "the run has not ended (or its process was killed before it could say how it ended): "
           "nothing here is a result"},
          {"pid", ::getpid()},
          {"manifest", fs::absolute(m.file).string()},
          {"start_time", m.coupling.start},
          {"end_time", m.coupling.end},
          {"coupling", m.document.value("coupling", json::object())},
          {"results", "results.csv"},
          {"column_units", column_units(ex)},
          {"subsystem_order", order}};
}

namespace {

// The rows the recorder holds before they are complete: what the longest step spans, twice
// (see Limits::max_buffered_rows).
std::size_t row_capacity(const Manifest& m, const Graph& g, double interval) {
  const double span = m.coupling.end - m.coupling.start;
  const double longest_macro =
      m.coupling.step_control.enabled ? m.coupling.step_control.max_step : m.coupling.macro_step;
  double widest = std::min(longest_macro, span);
  for (const Node& n : g.nodes) {
    const bool clipped = m.coupling.scheme != Scheme::multirate && m.coupling.align;
    widest = std::max(widest, std::min(clipped ? std::min(n.step, longest_macro) : n.step, span));
  }
  return static_cast<std::size_t>(std::min(std::ceil(widest / interval), Limits::max_buffered_rows)) * 2 + 8;
}

// What ends a run, as its status and message.
void note_end(RunResult& res) {
  try {
    throw;
  } catch (const Stop& s) {
    res.status = s.status;
    res.message = s.message;
  } catch (const std::bad_alloc&) {
    res.status = RunStatus::failed;
    res.message = "out of memory";
  } catch (const std::exception& e) {
    res.status = RunStatus::failed;
    res.message = e.what();
  } catch (...) {
    res.status = RunStatus::failed;
    res.message = "an exception that is not a std::exception";
  }
}

// A run that reached its end is completed only when every subsystem vouches for its answer
// (Component::accuracy()): the first that does not makes it inaccurate, with its reason.
void judge_accuracy(const RunState& state, RunResult& res) {
  for (const NodeState& n : state.nodes) {
    const Accuracy a = accuracy_of(n);
    if (a.within) continue;
    res.status = RunStatus::inaccurate;
    res.message = "subsystem \"" + n.node->name + "\" (" + n.node->plugin + "): " + a.reason;
    return;
  }
}

// Everything the run wrote reaches its files; a refusal fails a run that reached its end.
void finish_files(RunResult& res, std::optional<Recorder>& rec, std::optional<RowFile>& macro_log) {
  const bool reached_end = res.status == RunStatus::completed || res.status == RunStatus::inaccurate;
  if (rec && !reached_end) {
    try {
      rec->finish();
    } catch (const Stop& s) {
      res.message += "; " + s.message;
    }
  }
  if (macro_log) {
    try {
      macro_log->finish_writing();
    } catch (const Stop& s) {
      if (res.status == RunStatus::completed) res.status = RunStatus::failed, res.message = s.message;
      else if (res.status == RunStatus::inaccurate)
        res.status = RunStatus::failed, res.message = s.message + "; " + res.message;
      else res.message += "; " + s.message;
    }
  }
}

// A real-time run: the pacer watches the communication points ahead of the progress display,
// which shows its lateness; with "results": "background", results.csv and the macro-step log
// are written by threads of their own.
void pace(Simulation& sim, std::optional<RealTimePacer>& pacer, Progress& prog, const Manifest& m,
          const RunOptions& opt) {
  sim.observe(pacer.emplace(m.real_time, m.coupling, opt.stop));
  prog.show_lateness(&*pacer);
}

// summary.json's "real_time" block, with its verdict written to log.txt.
json real_time_block(const RealTimePacer& pacer, const Manifest& m, RunLog& log) {
  json block = pacer.summary(m.real_time.background_rows);
  const std::string line = real_time_verdict(json{{"real_time", block}});
  log.sink("pacer", "real time", nullptr)
      .write(pacer.misses() > 0 ? LogLevel::warning : LogLevel::info, LogFormat("{}"), line);
  return block;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

RunResult run(Experiment& ex, const RunOptions& opt) {
  const auto wall0 = std::chrono::steady_clock::now();
  const Manifest& m = ex.manifest();
  const Graph& g = ex.graph();
  RunResult res;
  res.output = opt.output.empty() ? m.output : opt.output;
  std::optional<OutputFolder> own_folder;
  const OutputFolder* folder = opt.folder;
  if (!folder) folder = &own_folder.emplace(res.output, running_summary(ex));  // throws OutputError
  res.output = folder->path();
  RunBeacon* beacon = opt.beacon;
  ::signal(SIGXFSZ, SIG_IGN);  // a file-size limit is a refused write, not a killed process
  // Plugin messages from now on (and those from creating the plugins) go to log.txt.
  g.log->open(folder->log());

  const double span = m.coupling.end - m.coupling.start;
  const double interval = m.record.interval > 0 ? m.record.interval : std::min(m.coupling.macro_step, span);
  Progress prog(opt.progress, m.coupling.start, m.coupling.end);
  std::optional<Recorder> rec;
  std::optional<RowFile> macro_log;  // iterations.csv or steps.csv
  std::optional<Simulation> sim;
  std::optional<RealTimePacer> pacer;
  try {
    sim.emplace(ex, Simulation::Options{opt.stop, beacon, true});
    rec.emplace(g, folder->results(), m.coupling.start, interval, m.coupling.end, row_capacity(m, g, interval), beacon,
                m.record.event_rows);
    sim->observe(*rec);
    if (m.real_time.enabled) pace(*sim, pacer, prog, m, opt);
    if (prog.enabled()) sim->observe(prog);
    if (m.coupling.iteration.enabled)
      macro_log.emplace(folder->path() / "iterations.csv",
                        "time,passes,largest_change,change_over_tolerance,converged");
    else if (m.coupling.step_control.enabled)
      macro_log.emplace(folder->path() / "steps.csv", "time,macro_step,residual_over_tolerance,accepted");
    if (macro_log) sim->log_macro_steps(*macro_log);
    if (pacer && m.real_time.background_rows) {
      rec->write_in_background();
      if (macro_log) macro_log->write_in_background();
    }
    const auto init0 = std::chrono::steady_clock::now();
    sim->initialize();
    res.initialization_time = seconds_since(init0);
    const auto step0 = std::chrono::steady_clock::now();
    if (pacer) pacer->start();
    sim->advance_to(m.coupling.end);
    res.stepping_time = seconds_since(step0);
    rec->finish();
    res.status = RunStatus::completed;
    judge_accuracy(sim->state(), res);
  } catch (...) {
    note_end(res);
    // A model's request to end the simulation ends the run normally: every row up to the time
    // it stopped at is complete and kept.
    if (res.status == RunStatus::completed && rec && sim) try {
        rec->accepted(sim->time());
        rec->finish();
      } catch (...) {
        note_end(res);
      }
  }
  finish_files(res, rec, macro_log);
  if (beacon) beacon->phase.store(3);
  res.end_time_reached = sim ? sim->time() : m.coupling.start;
  res.wall_time = seconds_since(wall0);
  prog.done(to_string(res.status), res.end_time_reached);
  const json real_time = pacer ? real_time_block(*pacer, m, *g.log) : json();
  g.log->close();

  json s = run_summary(ex, sim ? &sim->state() : nullptr, res, rec ? rec->rows_written() : 0);
  if (pacer) s["real_time"] = real_time;
  if (sim) sim->summarize(s);
  res.summary = s;
  res.summary_error = folder->write_summary(s);
  return res;
}

}  // namespace stride::host
