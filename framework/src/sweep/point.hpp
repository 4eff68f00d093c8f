// The sweep's own pieces, shared by its source files (internal to the host): a point of the
// grid (one run, or the reference) with what its run concluded, and the phases that
// sweep() (sweep.cpp) calls in this order:
//   1. plan_points, check_points (plan.cpp): the grid's points; every manifest's plugins and
//      one point per axis value checked before anything runs (throws SweepInputError)
//   2. run_reference_and_points (sweep.cpp), which runs them with run_points or
//      distribute_points (workers.cpp: the worker processes and their pool)
//   3. measure_errors (sweep.cpp), report and plot_histories (report.cpp)
// The spec itself is read by parse_sweep (spec.cpp, declared in the public sweep.hpp).
//
// One thread in the sweep's process (the workers are processes forked by run_points, each
// running one point at a time). A Point is owned by the caller of these phases; run_points and
// distribute_points write each point's concluded summary into it.
#pragma once

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "stride/host/load/registry.hpp"
#include "stride/host/sweep/sweep.hpp"

namespace stride::host::sweep_detail {
namespace fs = std::filesystem;

// The files of the sweep itself in its folder (docs/reference/sweep-file.md, "The sweep's
// folder"), besides the runs' folders and the histories: report() writes them, sweep() removes
// them all when it starts so that none outlives an earlier sweep.
namespace sweep_files {
inline constexpr const char* table = "sweep.csv";
inline constexpr const char* stability = "stability.md";
inline constexpr const char* plot_data = "plot.dat";
inline constexpr const char* plot_script = "plot.gp";
inline constexpr const char* plot = "error.png";
inline constexpr const char* reference_columns = "reference_columns.json";
inline constexpr const char* all[] = {table, stability, plot_data, plot_script, plot, reference_columns};
}  // namespace sweep_files

struct Point {
  std::size_t index = 0;
  std::vector<std::size_t> choice;  // per axis
  fs::path manifest;
  std::vector<std::string> sets;  // "POINTER=VALUE"
  fs::path out;
  std::string status = "not run", message;
  double end_time = std::nan(""), wall = std::nan(""), error = std::nan(""), residual = std::nan("");
  // The run's own accuracy estimate (summary.json "accuracy"): the largest relative local
  // coupling error over its connections (max and RMS) and the largest relative energy residual.
  double coupling_error = std::nan(""), coupling_error_rms = std::nan(""), residual_relative = std::nan("");
  bool reference = false;  // the sweep's reference run, not a point of the grid
  json summary;            // as concluded
  bool quiet = false;      // no progress line (a worker's job)
};

// Reads a CSV into time -> column -> value for the given columns (rows cut by a crash are
// not read).
std::map<long long, std::map<std::string, double>> read_csv(const fs::path& file, const std::set<std::string>& want);

// A number for a table or a message ("–" for NaN).
std::string num(double x);

// Plan and check (plan.cpp).
std::vector<std::string> override_texts(const std::vector<std::pair<std::string, json>>& sets);
std::vector<Point> plan_points(const SweepSpec& spec);
// The units of the columns a sweep plots, as the experiments check_points builds declare them.
struct ColumnUnits {
  std::map<std::string, std::string> run, reference;  // column -> unit
  std::string step_axis;                              // the step axis's (SweepAxis::unit, or found)
};
// The reference's name of a run column (SweepSpec::columns; the same name where not mapped).
std::string reference_column(const SweepSpec& spec, const std::string& column);
void check_points(const SweepSpec& spec, const std::vector<Point>& points,
                  const std::vector<std::string>& reference_sets, PluginRegistry& reg, ColumnUnits& units);

// Workers and pool (workers.cpp). Runs `points` on at most `jobs` worker processes; false when
// interrupted.
bool run_points(std::vector<Point*> points, const PluginRegistry& reg, int jobs, double grace, std::size_t total,
                std::size_t& done, bool process_per_run = false);
// The points through a distributor (distributed sweeps), as run_points does here.
bool distribute_points(const SweepDistributor& d, std::vector<Point*> points, std::size_t total, std::size_t& done);

// Reference and run (sweep.cpp).
bool run_reference_and_points(const SweepSpec& spec, const SweepOptions& opt,
                              const std::vector<std::string>& reference_sets, const PluginRegistry& reg,
                              std::vector<Point>& points, Point& rr, std::size_t& done, SweepOutcome& outcome);
void measure_errors(const SweepSpec& spec, const Point& rr, std::vector<Point>& points);

// Report (report.cpp).
void report(const SweepSpec& spec, const ColumnUnits& units, const std::vector<Point>& points, bool finished,
            std::size_t done, SweepOutcome& outcome);
// "" or why a history could not be drawn (a curve without values: the history and the column).
std::string plot_histories(const SweepSpec& spec, const ColumnUnits& units, const Point& rr,
                           const std::vector<Point>& points);

}  // namespace stride::host::sweep_detail
