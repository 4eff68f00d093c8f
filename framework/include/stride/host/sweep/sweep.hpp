// `stride sweep`: a grid of runs of one manifest over values addressed by JSON pointers, run
// in parallel, each compared with a reference run; reports the largest stable step of every
// configuration.
//
// SWEEP.json:
// {
//   "format": 1,
//   "manifest": "crane1_zoh.json",                 // relative to the sweep file
//   "reference": {"manifest": "crane1_monolithic.json",
//                 "columns": {"crane.s": "reference.s"},    // run column -> reference column
//                 "set": {"/variables/h_M": 0.0005},        // optional: applied to the reference
//                 "error_scale": 57.29577951308232,         // optional: errors in another unit
//                 "error_unit": "deg"},                     //   (here radians -> degrees)
//   "axes": [
//     {"name": "H", "pointers": ["/coupling/macro_step", "/subsystems/crane/step"],
//      "values": [0.005, 0.01, 0.015], "unit": "s"},   // unit optional for steps (plots)
//     {"name": "formulation", "values": [
//        {"label": "ali3p", "set": {"/subsystems/crane/formulation": "ali3p"}}, ...]}
//   ],
//   "step_axis": "H",                              // x of the stability analysis and the plot
//   "stable_error": 0.002,                         // optional: a stable run's largest error
//   "usable_error": 0.002,                         // optional (with a reference): the accuracy
//                                                  // a run must keep to count as usable
//   "set": {"/coupling/end": 10},                  // optional: applied to every run
//   "histories": [                                 // optional: time histories to plot
//     {"file": "s1.png", "column": "crane.s", "scale": 1000, "ylabel": "s1 - s1_ref (mm)",
//      "difference": true,                         // the run's column less the reference's
//      "runs": [{"H": "0.01"}, "reference"]}       // per curve: a label of every axis that
//   ],                                             //   has more than one, or the reference run
//   "output": "out/sweep_crane1"
// }
// Writes <output>/sweep.csv (one row per run), <output>/stability.md and, when gnuplot is on
// the PATH, <output>/error.png and each history's PNG (its data beside it, .dat).
//
// The runs go to `jobs` worker processes, forked from the sweep after the plugins are loaded;
// a worker runs points one after another in-process. A run that crashes takes only its
// worker: it is marked failed with its signal and the time its table reached, a new worker
// takes the next point, and the others go on. A run that uses a plugin declaring
// PluginInfo::process_per_run gets a fresh worker that ends after it. Ctrl-C stops the runs
// under way (status "interrupted") and still writes the tables for the runs that finished; a
// sweep that is killed takes its workers with it (end_with_parent, run/supervise.hpp).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <stdexcept>

#include <stride/stride.hpp>

#include "stride/host/input/json_input.hpp"

namespace stride::host {

struct SweepAxisValue {
  std::string label;
  std::string manifest;                            // replaces the sweep's manifest when not empty
  std::vector<std::pair<std::string, json>> sets;  // pointer -> value
  double number = std::numeric_limits<double>::quiet_NaN();  // for the step axis
};
struct SweepAxis {
  std::string name;
  // The values' unit, for the plots: "unit" in the sweep file, or found by check_points from
  // where the manifest uses the value (a step: s); "" when neither says.
  std::string unit;
  std::vector<std::string> pointers;
  std::vector<SweepAxisValue> values;
};
// A time history plotted after the sweep: per curve one run's column (or its difference from
// the reference run's at the same record times) times `scale`, against time.
struct SweepHistory {
  std::string file, title, column, ylabel;
  double scale = 1.0;
  bool difference = false;
  std::vector<std::vector<std::pair<std::size_t, std::size_t>>>
      curves;  // per curve: (axis, value) pairs; empty: the reference
};
struct SweepSpec {
  std::filesystem::path file;
  std::filesystem::path manifest;                  // absolute or relative to the working folder
  std::filesystem::path reference;                 // empty: no reference run
  std::vector<std::pair<std::string, std::string>> columns;  // run column -> reference column
  std::vector<std::pair<std::string, json>> reference_sets;  // applied to the reference run
  double error_scale = 1.0;                        // errors are error_scale * |run - reference|
  std::string error_unit;                          // their unit when scaled ("" otherwise)
  std::vector<SweepHistory> histories;
  std::vector<SweepAxis> axes;
  std::size_t step_axis = 0;
  double stable_error = std::numeric_limits<double>::infinity();
  // A stable run is usable only within this error against the reference (NaN: not stated).
  double usable_error = std::numeric_limits<double>::quiet_NaN();
  std::vector<std::pair<std::string, json>> sets;  // applied to every run
  std::filesystem::path output;
  double runs = 0;                                 // size of the grid (a double: it may be huge)
};

// Reads a sweep file's text (`file` labels diagnostics and anchors relative paths). Throws
// ManifestError with every problem, each with its JSON pointer.
SweepSpec parse_sweep(const std::string& text, const std::filesystem::path& file);

// One run of a sweep handed to another process (distributed sweeps): its manifest, overrides
// and folder (absolute); `summary` receives the run's summary.json as concluded (status
// "failed" with the signal when its process died, "interrupted" after Ctrl-C).
struct SweepJob {
  std::filesystem::path manifest;
  std::vector<std::string> sets;
  std::filesystem::path out;
  json summary;
};
// Runs the jobs elsewhere, calling done(i) as job i ends; false when interrupted (jobs not
// started keep an empty summary and count as not run).
using SweepDistributor = std::function<bool(std::vector<SweepJob>& jobs, const std::function<void(std::size_t)>& done)>;

struct SweepOptions {
  int jobs = 1;
  double max_runs = 10000;  // a larger grid needs an explicit --max-runs
  double grace = 3.0;       // seconds a run may take to stop after Ctrl-C
  SweepDistributor distribute;  // empty: the runs are forked here, `jobs` at a time
  bool process_per_run = false; // every run in a fresh process (as if every plugin declared it)
};

// What a worker of a distributed sweep does with a job: runs it in a forked process here (the
// plugins found as for `stride run`) and fills its summary; false when interrupted.
bool run_sweep_job(SweepJob& job, double grace);

// A sweep that cannot start: the sweep file or a manifest of its grid is not valid, or the grid
// is larger than SweepOptions::max_runs. what() is the whole report, one problem a line.
class SweepInputError : public std::runtime_error {
 public:
  explicit SweepInputError(const std::string& what) : std::runtime_error(what) {}
  SweepInputError(const std::string& what, const ManifestError& e);
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }

 private:
  std::vector<Diagnostic> diags_;
};

struct SweepOutcome {
  std::filesystem::path output;  // the sweep's folder: sweep.csv, stability.md, run_NNNN/
  bool finished = false;         // every run ended (false: interrupted)
  std::string error;             // the sweep could not conclude: the reference failed, a table could not be written
};

// Runs the sweep, writing its tables (progress and the stability table on stderr and stdout).
// Throws SweepInputError, or OutputError when the folder is locked by another sweep.
SweepOutcome sweep(const std::filesystem::path& sweep_file, const SweepOptions& options);

// `stride sweep`: returns the process exit code: 0 when every run ended (whatever its status),
// 1 when the sweep was interrupted or its reference failed, 2 for a bad sweep file or manifest.
int run_sweep(const std::filesystem::path& sweep_file, const SweepOptions& options);

}  // namespace stride::host
