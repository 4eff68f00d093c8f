// Report: sweep.csv, the stability table, the error plot and the time histories.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "stride/host/input/json_input.hpp"  // number_text
#include "stride/host/run/output.hpp"
#include "sweep/point.hpp"

extern char** environ;

namespace stride::host::sweep_detail {

std::string num(double x) {
  if (std::isnan(x)) return "–";
  std::ostringstream o;
  o << x;
  return o.str();
}

namespace {

std::string csv_escape(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  if (s.find_first_of(",\"") != std::string::npos) {
    std::string o = "\"";
    for (char c : s) o += c == '"' ? std::string("\"\"") : std::string(1, c);
    return o + "\"";
  }
  return s;
}

// Report: sweep.csv, one row per run.
std::string sweep_csv(const SweepSpec& spec, const std::vector<Point>& points) {
  const std::vector<SweepAxis>& axes = spec.axes;
  std::ostringstream csv;
  csv << "run";
  for (const auto& ax : axes) csv << "," << csv_escape(ax.name);
  csv << ",status,end_time_reached,error,energy_residual_J,coupling_error_max_relative,coupling_error_rms_relative,"
         "energy_residual_relative,wall_time_s,message\n";
  for (const auto& r : points) {
    csv << r.index;
    for (std::size_t a = 0; a < axes.size(); ++a) csv << "," << csv_escape(axes[a].values[r.choice[a]].label);
    csv << "," << r.status;
    for (double v : {r.end_time, r.error, r.residual, r.coupling_error, r.coupling_error_rms, r.residual_relative, r.wall})
      csv << "," << number_text(v);
    csv << "," << csv_escape(r.message) << "\n";
  }
  return csv.str();
}

// Report: stability per configuration (every axis but the step axis), as stability.md, and
// the plot's data and series labels.
struct StabilityReport {
  std::string table, plot_data;
  std::vector<std::string> labels;
};

// One configuration's row: the largest step such that every run with a step up to it reached
// its end (completed, or inaccurate: its own accuracy bounds passed) and, with stable_error,
// stayed within it; usable only while every run also completed. A configuration with a run
// that did not finish (interrupted, not run) is incomplete beyond it.
void stability_row(const SweepSpec& spec, const std::vector<std::size_t>& key, std::vector<const Point*>& rs,
                   std::ostringstream& md, std::ostringstream& plotdata, StabilityReport& out) {
  const std::vector<SweepAxis>& axes = spec.axes;
  const std::size_t si = spec.step_axis;
  std::sort(rs.begin(), rs.end(), [&](const Point* x, const Point* y) {
    return axes[si].values[x->choice[si]].number < axes[si].values[y->choice[si]].number;
  });
  std::string label;
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (a != si) label += (label.empty() ? "" : " ") + axes[a].values[key[a]].label;
  if (label.empty()) label = "all";
  out.labels.push_back(label);
  double best = std::nan(""), best_err = std::nan(""), usable = std::nan("");
  const Point* best_run = nullptr;
  bool usable_so_far = true;
  std::string first_bad;
  for (const Point* r : rs) {
    const double h = axes[si].values[r->choice[si]].number;
    if (r->status == "not run" || r->status == "interrupted") {
      first_bad = "incomplete (run " + std::to_string(r->index) + " " + r->status + ")";
      break;
    }
    const bool reached_end = r->status == "completed" || r->status == "inaccurate";
    if (!reached_end || r->error > spec.stable_error) {
      first_bad = num(h);
      break;
    }
    best = h;
    best_err = r->error;
    best_run = r;
    usable_so_far = usable_so_far && r->status == "completed" && r->error <= spec.usable_error;
    if (usable_so_far) usable = h;
  }
  md << "| ";
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (a != si) md << axes[a].values[key[a]].label << " | ";
  md << num(best) << " | " << (first_bad.empty() ? "none up to " + num(axes[si].values.back().number) : first_bad)
     << " | " << num(best_err) << " |";
  if (!std::isnan(spec.usable_error)) md << " " << (std::isnan(usable) ? std::string("none") : num(usable)) << " |";
  // How accurate the largest stable run says it is, without a reference.
  md << " " << num(best_run ? best_run->coupling_error_rms : std::nan("")) << " | "
     << num(best_run ? best_run->residual_relative : std::nan("")) << " |\n";
  plotdata << "# " << label << "\n";
  for (const Point* r : rs)
    if ((r->status == "completed" || r->status == "inaccurate") && !std::isnan(r->error))
      plotdata << axes[si].values[r->choice[si]].number << " " << r->error << "\n";
  plotdata << "\n\n";
}

StabilityReport stability_report(const SweepSpec& spec, const std::vector<Point>& points, bool finished,
                                 std::size_t done) {
  const std::vector<SweepAxis>& axes = spec.axes;
  const std::size_t si = spec.step_axis;
  std::map<std::vector<std::size_t>, std::vector<const Point*>> configs;
  for (const auto& r : points) {
    auto key = r.choice;
    key[si] = 0;
    configs[key].push_back(&r);
  }
  std::ostringstream md, plotdata;
  md << "| ";
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (a != si) md << axes[a].name << " | ";
  // Not diverging is not enough: with an accuracy, a run is usable only within it.
  const bool usable_column = !std::isnan(spec.usable_error);
  const std::string unit = spec.error_unit.empty() ? "" : " (" + spec.error_unit + ")";
  md << "largest stable " << axes[si].name << " | first unstable " << axes[si].name << " | error at largest stable"
     << unit << " |";
  if (usable_column) md << " largest usable " << axes[si].name << " (error <= " << num(spec.usable_error) << ") |";
  // RMS, not max: at a discontinuity (a valve switching) the local error is the jump, at any H.
  md << " its estimated coupling error (RMS relative) | its energy residual (relative) |";
  md << "\n|";
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (a != si) md << "---|";
  md << (usable_column ? "---|---|---|---|---|---|\n" : "---|---|---|---|---|\n");
  StabilityReport out;
  for (auto& [key, rs] : configs) stability_row(spec, key, rs, md, plotdata, out);
  if (!finished) md << "\nThe sweep was interrupted: " << done << " of " << points.size() << " runs finished.\n";
  out.table = md.str();
  out.plot_data = plotdata.str();
  return out;
}

// A gnuplot single-quoted string.
std::string gnuplot_quoted(const fs::path& p) {
  std::string s = "'";
  for (char c : p.string()) s += c == '\'' ? std::string("''") : std::string(1, c);
  return s + "'";
}

// Runs gnuplot on a script without a shell (the folder name is the user's); true when it ran
// and exited with 0.
bool run_gnuplot(const fs::path& script_file) {
  const std::string script = script_file.string();
  char* argv[] = {const_cast<char*>("gnuplot"), const_cast<char*>(script.c_str()), nullptr};
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int st = 1;
  if (posix_spawnp(&pid, "gnuplot", &fa, nullptr, argv, environ) == 0) ::waitpid(pid, &st, 0);
  posix_spawn_file_actions_destroy(&fa);
  return WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

bool have_gnuplot() { return std::system("command -v gnuplot >/dev/null 2>&1") == 0; }

// Report: error.png with gnuplot when it is on the PATH; else a note where the plot data is.
void plot_errors(const SweepSpec& spec, const std::vector<std::string>& labels) {
  if (!have_gnuplot()) {
    std::cerr << "note: gnuplot not found, plot data in " << (spec.output / "plot.dat").string() << "\n";
    return;
  }
  const auto quoted = gnuplot_quoted;
  std::ofstream gp(spec.output / "plot.gp");
  const int rows = static_cast<int>((labels.size() + 2) / 3);
  gp << "set terminal pngcairo noenhanced size 1200," << 600 + 16 * rows << " font ',9'\nset output "
     << quoted(spec.output / "error.png") << "\n"
     << "set logscale xy\nset xlabel '" << spec.axes[spec.step_axis].name
     << "'\nset ylabel 'largest |error| against the reference'\n"
     << "set key outside below maxrows " << rows << "\nset grid\nplot ";
  for (std::size_t i = 0; i < labels.size(); ++i)
    gp << (i ? ", " : "") << quoted(spec.output / "plot.dat") << " index " << i << " with linespoints title "
       << quoted(labels[i]);
  gp << "\n";
  gp.close();
  if (run_gnuplot(spec.output / "plot.gp")) std::cerr << "plot: " << (spec.output / "error.png").string() << "\n";
}

}  // namespace

// Report: the time histories (SweepHistory), each as <file>.dat (one block per curve: time,
// value) and, with gnuplot, <file>.
void plot_histories(const SweepSpec& spec, const Point& rr, const std::vector<Point>& points) {
  for (const SweepHistory& h : spec.histories) {
    const fs::path stem = spec.output / fs::path(h.file).stem();
    std::map<long long, std::map<std::string, double>> ref;
    if (h.difference) ref = read_csv(rr.out / "results.csv", {h.column});
    std::ostringstream dat;
    std::vector<std::string> titles;
    for (const auto& pick : h.curves) {
      const Point* run = &rr;
      std::string title = "reference";
      if (!pick.empty()) {
        title.clear();
        for (const auto& [a, v] : pick)  // the axes that vary
          if (spec.axes[a].values.size() > 1)
            title += (title.empty() ? "" : ", ") + spec.axes[a].name + " = " + spec.axes[a].values[v].label;
        auto it = std::find_if(points.begin(), points.end(), [&](const Point& p) {
          return std::all_of(pick.begin(), pick.end(), [&](const auto& av) { return p.choice[av.first] == av.second; });
        });
        run = it == points.end() ? nullptr : &*it;
      }
      if (!run || run->status != "completed") continue;
      titles.push_back(title);
      dat << "# " << title << "\n";
      for (const auto& [t, row] : read_csv(run->out / "results.csv", {h.column})) {
        auto r = ref.find(t);
        if (!row.count(h.column) || (h.difference && (r == ref.end() || !r->second.count(h.column)))) continue;
        const double y = row.at(h.column) - (h.difference ? r->second.at(h.column) : 0.0);
        dat << double(t) * 1e-9 << " " << h.scale * y << "\n";
      }
      dat << "\n\n";
    }
    if (auto err = write_file_atomically(fs::path(stem.string() + ".dat"), dat.str()); !err.empty()) {
      std::cerr << "error: " << err << "\n";
      continue;
    }
    if (titles.empty() || !have_gnuplot()) continue;
    std::ofstream gp(stem.string() + ".gp");
    gp << "set terminal pngcairo noenhanced size 1200,500 font ',10'\nset output "
       << gnuplot_quoted(spec.output / h.file) << "\n"
       << "set title " << gnuplot_quoted(h.title) << "\nset xlabel 'time (s)'\nset ylabel " << gnuplot_quoted(h.ylabel)
       << "\nset grid\nset key outside below\nplot ";
    for (std::size_t i = 0; i < titles.size(); ++i)
      gp << (i ? ", " : "") << gnuplot_quoted(stem.string() + ".dat") << " index " << i << " with lines title "
         << gnuplot_quoted(titles[i]);
    gp << "\n";
    gp.close();
    if (run_gnuplot(stem.string() + ".gp")) std::cerr << "plot: " << (spec.output / h.file).string() << "\n";
  }
}

// Report: the tables into the sweep's folder, the stability table on stdout, the plot.
void report(const SweepSpec& spec, const std::vector<Point>& points, bool finished, std::size_t done,
            SweepOutcome& outcome) {
  if (auto err = write_file_atomically(spec.output / "sweep.csv", sweep_csv(spec, points)); !err.empty()) {
    outcome.error = err;
    return;
  }
  const StabilityReport st = stability_report(spec, points, finished, done);
  for (const auto& [name, text] :
       {std::pair<const char*, std::string>{"plot.dat", st.plot_data}, {"stability.md", st.table}})
    if (auto err = write_file_atomically(spec.output / name, text); !err.empty()) {
      outcome.error = err;
      return;
    }
  std::cout << st.table;
  if (finished && !spec.columns.empty()) plot_errors(spec, st.labels);
  std::cerr << "sweep: " << (finished ? "" : "interrupted, ") << done << " of " << points.size() << " runs, table in "
            << (spec.output / "sweep.csv").string() << "\n";
}

}  // namespace stride::host::sweep_detail
