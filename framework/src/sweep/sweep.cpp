// Reference and run: sweep() from the spec to the report (the phases of sweep/point.hpp in
// order), the reference run and the errors against it; `stride sweep`'s exit code.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "run/row_file.hpp"  // each_csv_record
#include "stride/host/run/output.hpp"
#include "stride/host/run/supervise.hpp"
#include "sweep/point.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace sweep_detail {

// Reads a CSV into time -> column -> value for the given columns (rows cut by a crash are
// not read).
std::map<long long, std::map<std::string, double>> read_csv(const fs::path& file, const std::set<std::string>& want) {
  std::map<long long, std::map<std::string, double>> rows;
  std::ifstream in(file);
  std::vector<std::string> header;
  // Quoted text columns (String, Binary) may hold commas and line breaks; they read as NaN.
  each_csv_record(in, [&](const std::vector<std::string>& fields) {
    if (header.empty()) {
      header = fields;
      return;
    }
    if (fields.size() != header.size()) return;
    std::map<std::string, double> row;
    const double t = std::strtod(fields[0].c_str(), nullptr);
    const long long key =
        std::abs(t) < 9e9 ? std::llround(t * 1e9) : std::llround(std::min(std::abs(t), 9e18) * (t < 0 ? -1 : 1));
    for (std::size_t i = 1; i < fields.size(); ++i) {
      if (!want.count(header[i])) continue;
      char* end = nullptr;
      const double v = std::strtod(fields[i].c_str(), &end);
      row[header[i]] = end == fields[i].c_str() ? std::nan("") : v;
    }
    rows[key] = std::move(row);
  });
  return rows;
}

// Reference and run: the reference (when there is one) and every point. With one job the
// reference runs first, and a reference that fails stops the sweep before any point runs; with
// more it is the first job of the pool, beside the points (its results are needed only for the
// errors, after every point has run). False when the sweep cannot conclude (outcome.error says
// why, or it was interrupted before the points ran).
bool run_reference_and_points(const SweepSpec& spec, const SweepOptions& opt,
                              const std::vector<std::string>& reference_sets, const PluginRegistry& reg,
                              std::vector<Point>& points, Point& rr, std::size_t& done, SweepOutcome& outcome) {
  const int jobs = std::max(1, opt.jobs);
  std::vector<Point*> pending_runs;
  auto reference_failed = [&] {
    if (rr.status == "completed") return false;
    outcome.error = "the reference run did not complete (" + rr.status + "): " + rr.message;
    return true;
  };
  if (!spec.reference.empty()) {
    rr.manifest = spec.reference;
    rr.sets = reference_sets;
    rr.out = spec.output / "reference";
    rr.reference = true;
    std::fprintf(stderr, "reference: %s\n", rr.manifest.c_str());
    if (jobs == 1 && !opt.distribute) {
      std::size_t ref_done = 0;
      const bool finished = run_points({&rr}, reg, 1, opt.grace, 1, ref_done, opt.process_per_run);
      if (!finished || reference_failed()) return false;
    } else {
      pending_runs.push_back(&rr);
    }
  }
  const bool reference_in_pool = !pending_runs.empty();
  for (auto& p : points) pending_runs.push_back(&p);
  const bool finished = opt.distribute
                            ? distribute_points(opt.distribute, pending_runs, points.size(), done)
                            : run_points(pending_runs, reg, jobs, opt.grace, points.size(), done, opt.process_per_run);
  // (Interrupted: the tables of the finished runs are written, without errors if the reference
  // did not finish.)
  outcome.finished = finished;
  return !(reference_in_pool && reference_failed() && finished);
}

// Each run's error against the reference: the largest absolute difference over the common
// record times of the compared columns.
void measure_errors(const SweepSpec& spec, const Point& rr, std::vector<Point>& points) {
  std::map<long long, std::map<std::string, double>> ref;
  if (!spec.reference.empty() && rr.status == "completed") {
    std::set<std::string> want;
    for (auto& [a, b] : spec.columns) want.insert(b);
    ref = read_csv(rr.out / "results.csv", want);
  }
  for (auto& r : points) {
    if (spec.columns.empty() || r.status == "not run" || r.status == "invalid") continue;
    std::set<std::string> want;
    for (auto& [a, b] : spec.columns) want.insert(a);
    auto rows = read_csv(r.out / "results.csv", want);
    double e = 0;
    std::size_t n = 0;
    for (auto& [t, row] : rows) {
      auto it = ref.find(t);
      if (it == ref.end()) continue;
      for (auto& [a, b] : spec.columns)
        if (row.count(a) && it->second.count(b)) e = std::max(e, std::abs(row[a] - it->second[b])), ++n;
    }
    r.error = n ? spec.error_scale * e : std::nan("");
  }
}

}  // namespace sweep_detail

SweepInputError::SweepInputError(const std::string& what, const ManifestError& e)
    : std::runtime_error([&] {
        const auto& d = e.diagnostics();
        std::string s = what + " (" + std::to_string(d.size()) + " problem" + (d.size() == 1 ? "" : "s") + "):";
        for (const auto& x : d) s += "\n  " + x.str();
        return s;
      }()),
      diags_(e.diagnostics()) {}

int run_sweep(const fs::path& file, const SweepOptions& opt) {
  try {
    const SweepOutcome o = sweep(file, opt);
    if (!o.error.empty()) {
      std::cerr << "error: " << o.error << "\n";
      return 1;
    }
    return o.finished ? 0 : 1;
  } catch (const SweepInputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const OutputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
}

SweepOutcome sweep(const fs::path& file, const SweepOptions& opt) {
  using namespace sweep_detail;
  SweepSpec spec;
  try {
    spec = parse_sweep(read_text_file(file), file);
  } catch (const ManifestError& e) {
    throw SweepInputError("the sweep file is not valid", e);
  }
  if (spec.runs > opt.max_runs)
    throw SweepInputError(file.string() + ": the grid has " + num(spec.runs) + " runs, more than the limit of " +
                          num(opt.max_runs) + "; pass --max-runs " + num(spec.runs) + " to run it");
  SweepOutcome outcome;
  outcome.output = spec.output;
  std::vector<Point> points = plan_points(spec);
  PluginRegistry reg;
  const std::vector<std::string> reference_sets = override_texts(spec.reference_sets);
  ColumnUnits units;
  check_points(spec, points, reference_sets, reg, units);

  const FolderLock lock(spec.output, "stride sweep, pid " + std::to_string(::getpid()) + ", " + file.string());
  // Tables of an earlier sweep must not outlive this one's start.
  for (const char* f : sweep_files::all) fs::remove(spec.output / f);
  for (const auto& h : spec.histories)
    for (const std::string& f :
         {h.file, fs::path(h.file).stem().string() + ".dat", fs::path(h.file).stem().string() + ".gp"})
      fs::remove(spec.output / f);
  std::cerr << "sweep: " << points.size() << " runs, " << std::max(1, opt.jobs) << " at a time, results in "
            << spec.output.string() << "\n";

  Point rr;
  std::size_t done = 0;
  if (!run_reference_and_points(spec, opt, reference_sets, reg, points, rr, done, outcome)) return outcome;
  measure_errors(spec, rr, points);
  report(spec, units, points, outcome.finished, done, outcome);
  if (outcome.finished && outcome.error.empty()) outcome.error = plot_histories(spec, units, rr, points);
  return outcome;
}

}  // namespace stride::host
