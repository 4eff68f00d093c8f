// Running an experiment: the outcome of a run, its options, and run() itself, writing
// results.csv as it goes and summary.json at the end. run() is a Simulation
// (framework/src/run/simulation.hpp: run state, master, coupling scheme) with the results
// recorder and the progress display as its observers.
#pragma once

#include <filesystem>
#include <limits>
#include <string>

#include "stride/host/graph/experiment.hpp"

namespace stride::host {

// inaccurate: the run reached its end, but a subsystem's answer lies outside the accuracy bounds
// it checks (Component::accuracy(), e.g. a formulation's constraint residuals); exit code 1.
// deadline_missed: a real-time run with "overrun": "stop" reached a communication point after
// its wall-clock deadline (docs/real-time.md); the rows up to it are complete; exit code 1.
enum class RunStatus { completed, diverged, failed, interrupted, inaccurate, deadline_missed };
const char* to_string(RunStatus s);

class OutputFolder;
struct RunBeacon;

struct RunOptions {
  std::filesystem::path output;      // overrides the manifest's output folder when not empty
  bool progress = true;              // progress on stderr
  const volatile int* stop = nullptr;  // set to a signal number (by a signal handler) to stop
  const OutputFolder* folder = nullptr;  // the folder, already locked and marked; else run() takes it
  RunBeacon* beacon = nullptr;           // shared with a supervising process
};

struct RunResult {
  RunStatus status = RunStatus::completed;
  double end_time_reached = 0.0;
  double wall_time = 0.0;
  double initialization_time = 0.0;  // wall time of the initialization (part of wall_time)
  double stepping_time = 0.0;        // wall time of the stepping (part of wall_time)
  std::string message;  // cause of divergence or failure
  std::filesystem::path output;
  json summary;
  std::string summary_error;  // summary.json could not be written (the disk refused): why
};

// The last line `stride run` prints for a real-time run: whether every deadline was kept, from
// summary.json's "real_time" block (run/real_time.hpp); "" when the summary has none.
std::string real_time_verdict(const json& summary);

// The content of summary.json while a run is under way: status "running".
json running_summary(const Experiment& experiment);

// The running summary with each subsystem's plugin and report() as constructed (a mechanism's
// geometry), for the live page of `stride run --view` before the run has a summary of its own.
json live_summary(const Experiment& experiment);

// Runs the experiment: writes <output>/results.csv as it goes (whole rows, at least every 50 ms
// of wall time, and completely when run() returns) and <output>/summary.json at the end,
// whatever the outcome. Throws OutputError when the folder cannot be used (no folder given).
RunResult run(Experiment& experiment, const RunOptions& options);

// A subsystem's time after a step, as the masters keep it. A time is a sum of steps; where it
// lies within 1e-9 h of a point t0 + k h of the subsystem's own grid it is set to that point,
// so that round-off does not accumulate: over 10^4 steps the drift of a plain sum outgrows any
// fixed tolerance, and a subsystem on the macro grid would take a second step in one macro step.
// `taken` is the step just taken (shorter than h when it was cut at a communication point).
double on_grid(double t, double t0, double h, double taken = std::numeric_limits<double>::infinity());

}  // namespace stride::host
