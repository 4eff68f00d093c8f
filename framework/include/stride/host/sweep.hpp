// `stride sweep`: a grid of runs of one manifest over values addressed by JSON pointers, run
// in parallel, each compared with a reference run; reports the largest stable step of every
// configuration.
//
// SWEEP.json:
// {
//   "format": 1,
//   "manifest": "crane1_zoh.json",                 // relative to the sweep file
//   "reference": {"manifest": "crane1_monolithic.json",
//                 "columns": {"crane.s": "reference.s"}},   // run column -> reference column
//   "axes": [
//     {"name": "H", "pointers": ["/coupling/macro_step", "/subsystems/crane/step"],
//      "values": [0.005, 0.01, 0.015]},
//     {"name": "formulation", "values": [
//        {"label": "ali3p", "set": {"/subsystems/crane/formulation": "ali3p"}}, ...]}
//   ],
//   "step_axis": "H",                              // x of the stability analysis and the plot
//   "stable_error": 0.002,                         // optional: a stable run's largest error
//   "set": {"/coupling/end": 10},                  // optional: applied to every run
//   "output": "out/sweep_crane1"
// }
// Writes <output>/sweep.csv (one row per run), <output>/stability.md and, when gnuplot is on
// the PATH, <output>/error.png.
#pragma once

#include <filesystem>

namespace stride::host {

// Returns the process exit code: 0 when every run ended (whatever its status), 2 for a bad
// sweep file.
int run_sweep(const std::filesystem::path& sweep_file, const std::filesystem::path& stride_exe, int jobs);

}  // namespace stride::host
