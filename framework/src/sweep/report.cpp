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
    for (double v :
         {r.end_time, r.error, r.residual, r.coupling_error, r.coupling_error_rms, r.residual_relative, r.wall})
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

// "name (unit)", or the name alone when there is no unit to give.
std::string labelled(const std::string& name, const std::string& unit) {
  return unit.empty() ? name : name + " (" + unit + ")";
}

// The unit of the errors: error_unit, else the compared columns' (all of them, if they differ).
std::string error_unit(const SweepSpec& spec, const ColumnUnits& units) {
  if (!spec.error_unit.empty()) return spec.error_unit;
  std::string out;
  for (const auto& [run, ref] : spec.columns) {
    const auto it = units.run.find(run);
    const std::string u = it == units.run.end() ? "" : it->second;
    if (!u.empty() && (", " + out + ", ").find(", " + u + ", ") == std::string::npos)
      out += (out.empty() ? "" : ", ") + u;
  }
  return out;
}

// Report: error.png with gnuplot when it is on the PATH; else a note where the plot data is.
void plot_errors(const SweepSpec& spec, const ColumnUnits& units, const std::vector<std::string>& labels) {
  if (!have_gnuplot()) {
    std::cerr << "note: gnuplot not found, plot data in " << (spec.output / sweep_files::plot_data).string() << "\n";
    return;
  }
  const auto quoted = gnuplot_quoted;
  std::ofstream gp(spec.output / sweep_files::plot_script);
  const int rows = static_cast<int>((labels.size() + 2) / 3);
  gp << "set terminal pngcairo noenhanced size 1200," << 600 + 16 * rows << " font ',9'\nset output "
     << quoted(spec.output / sweep_files::plot) << "\n"
     << "set logscale xy\nset xlabel " << quoted(labelled(spec.axes[spec.step_axis].name, units.step_axis))
     << "\nset ylabel " << quoted(labelled("largest |error| against the reference", error_unit(spec, units))) << "\n"
     << "set key outside below maxrows " << rows << "\nset grid\nplot ";
  for (std::size_t i = 0; i < labels.size(); ++i)
    gp << (i ? ", " : "") << quoted(spec.output / sweep_files::plot_data) << " index " << i
       << " with linespoints title " << quoted(labels[i]);
  gp << "\n";
  gp.close();
  if (run_gnuplot(spec.output / sweep_files::plot_script)) {
    std::cerr << "plot: " << (spec.output / sweep_files::plot).string() << "\n";
  } else {  // no PNG rather than an empty one (no stable run with an error to draw)
    fs::remove(spec.output / sweep_files::plot);
    std::cerr << "warning: gnuplot drew nothing for " << (spec.output / sweep_files::plot).string()
              << " (no stable run with an error?); the data is in " << (spec.output / sweep_files::plot_data).string()
              << "\n";
  }
}

}  // namespace

namespace {

// One curve of a history: its title and values (time in ns, value), up to where its run ended.
struct Curve {
  std::string title;
  std::vector<std::pair<long long, double>> values;
  bool ended_early = false;  // the run did not complete: the last value is marked
};

// The curve of `run` (the reference when pick is empty): its column, less the reference's
// (reference.columns' name) where the history is a difference, times the scale.
Curve history_curve(const SweepSpec& spec, const SweepHistory& h, const Point& run, bool is_reference,
                    const std::map<long long, std::map<std::string, double>>& ref) {
  Curve c;
  const std::string column = is_reference ? reference_column(spec, h.column) : h.column;
  const std::string ref_column = reference_column(spec, h.column);
  c.ended_early = run.status != "completed";
  for (const auto& [t, row] : read_csv(run.out / "results.csv", {column})) {
    const auto v = row.find(column);
    if (v == row.end()) continue;
    double y = v->second;
    if (h.difference) {
      const auto r = ref.find(t);
      if (r == ref.end() || !r->second.count(ref_column)) continue;
      y -= r->second.at(ref_column);
    }
    c.values.emplace_back(t, h.scale * y);
  }
  if (c.ended_early)
    c.title += " (" + run.status +
               (c.values.empty() ? "" : " at t = " + num(double(c.values.back().first) * 1e-9) + " s") + ")";
  return c;
}

// The y label: the history's "ylabel", else its column with its unit (and scale, difference).
std::string history_ylabel(const SweepHistory& h, const ColumnUnits& units) {
  if (!h.ylabel.empty()) return h.ylabel;
  const auto it = units.run.find(h.column);
  std::string unit = it == units.run.end() ? "" : it->second;
  if (h.scale != 1.0) unit = unit.empty() ? "x " + num(h.scale) : unit + " x " + num(h.scale);
  return labelled(h.difference ? h.column + " - reference" : h.column, unit);
}

}  // namespace

// Report: the time histories (SweepHistory), each as <file>.dat (one block per curve: time,
// value; then one block per run that ended early: its last value, marked) and, with gnuplot,
// <file>. A run that diverged or failed is drawn up to where it ended. A curve without any
// value is an error naming the history, the curve and the column.
std::string plot_histories(const SweepSpec& spec, const ColumnUnits& units, const Point& rr,
                           const std::vector<Point>& points) {
  for (std::size_t k = 0; k < spec.histories.size(); ++k) {
    const SweepHistory& h = spec.histories[k];
    const fs::path stem = spec.output / fs::path(h.file).stem();
    std::map<long long, std::map<std::string, double>> ref;
    if (h.difference) ref = read_csv(rr.out / "results.csv", {reference_column(spec, h.column)});
    std::vector<Curve> curves;
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
      Curve c = run ? history_curve(spec, h, *run, pick.empty(), ref) : Curve{};
      c.title = (title.empty() ? std::string("the only run") : title) + c.title;
      if (c.values.empty())
        return "history \"" + h.file + "\" (/histories/" + std::to_string(k) + "): the curve \"" + c.title +
               "\" has no values of column \"" + (pick.empty() ? reference_column(spec, h.column) : h.column) + "\"" +
               (h.difference ? " less the reference's \"" + reference_column(spec, h.column) + "\"" : "") + " in " +
               (run ? (run->out / "results.csv").string() : std::string("a run of the grid")) +
               (run && run->status != "completed" ? " (the run " + run->status + ": " + run->message + ")" : "");
      curves.push_back(std::move(c));
    }
    std::ostringstream dat;
    for (const Curve& c : curves) {
      dat << "# " << c.title << "\n";
      for (const auto& [t, y] : c.values) dat << double(t) * 1e-9 << " " << y << "\n";
      dat << "\n\n";
    }
    for (const Curve& c : curves)
      if (c.ended_early)
        dat << "# " << c.title << ": where it ended\n"
            << double(c.values.back().first) * 1e-9 << " " << c.values.back().second << "\n\n\n";
    if (auto err = write_file_atomically(fs::path(stem.string() + ".dat"), dat.str()); !err.empty()) return err;
    if (!have_gnuplot()) continue;
    std::ofstream gp(stem.string() + ".gp");
    gp << "set terminal pngcairo noenhanced size 1200,500 font ',10'\nset output "
       << gnuplot_quoted(spec.output / h.file) << "\n"
       << "set title " << gnuplot_quoted(h.title) << "\nset xlabel 'time (s)'\nset ylabel "
       << gnuplot_quoted(history_ylabel(h, units)) << "\nset grid\nset key outside below\nplot ";
    std::size_t block = 0;
    for (const Curve& c : curves)
      gp << (block ? ", " : "") << gnuplot_quoted(stem.string() + ".dat") << " index " << block++
         << " with lines title " << gnuplot_quoted(c.title);
    for (const Curve& c : curves)
      if (c.ended_early)
        gp << ", " << gnuplot_quoted(stem.string() + ".dat") << " index " << block++
           << " with points pointtype 7 pointsize 1.5 title " << gnuplot_quoted(c.title + ": ended here");
    gp << "\n";
    gp.close();
    if (run_gnuplot(stem.string() + ".gp")) {
      std::cerr << "plot: " << (spec.output / h.file).string() << "\n";
    } else {  // no PNG rather than an empty one
      fs::remove(spec.output / h.file);
      std::cerr << "warning: gnuplot drew nothing for " << (spec.output / h.file).string() << "; the data is in "
                << stem.string() << ".dat\n";
    }
  }
  return "";
}

// Report: the tables (and reference_columns.json) into the sweep's folder, the stability table on stdout, the plot.
void report(const SweepSpec& spec, const ColumnUnits& units, const std::vector<Point>& points, bool finished,
            std::size_t done, SweepOutcome& outcome) {
  if (auto err = write_file_atomically(spec.output / sweep_files::table, sweep_csv(spec, points)); !err.empty()) {
    outcome.error = err;
    return;
  }
  // Which reference column each compared run column stands against, for `stride view` to overlay them.
  if (!spec.reference.empty() && !spec.columns.empty()) {
    json compared = json::object();
    for (const auto& [run, ref] : spec.columns) compared[run] = ref;
    if (auto err = write_file_atomically(spec.output / sweep_files::reference_columns, compared.dump(2) + "\n");
        !err.empty()) {
      outcome.error = err;
      return;
    }
  }
  const StabilityReport st = stability_report(spec, points, finished, done);
  for (const auto& [name, text] :
       {std::pair<const char*, std::string>{sweep_files::plot_data, st.plot_data}, {sweep_files::stability, st.table}})
    if (auto err = write_file_atomically(spec.output / name, text); !err.empty()) {
      outcome.error = err;
      return;
    }
  std::cout << st.table;
  if (finished && !spec.columns.empty()) plot_errors(spec, units, st.labels);
  std::cerr << "sweep: " << (finished ? "" : "interrupted, ") << done << " of " << points.size() << " runs, table in "
            << (spec.output / sweep_files::table).string() << "\n";
}

}  // namespace stride::host::sweep_detail
