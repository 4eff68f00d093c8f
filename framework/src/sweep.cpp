#include "stride/host/sweep.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "stride/host/experiment.hpp"

extern char** environ;

namespace stride::host {
namespace fs = std::filesystem;

namespace {

struct AxisValue {
  std::string label;
  std::string manifest;  // replaces the sweep's manifest when not empty
  std::vector<std::pair<std::string, json>> sets;  // pointer -> value
  double number = std::nan("");                    // for the step axis
};
struct Axis {
  std::string name;
  std::vector<AxisValue> values;
};
struct Run {
  std::size_t index;
  std::vector<std::size_t> choice;  // per axis
  std::vector<std::string> args;
  fs::path out;
  std::string status = "not run", message;
  double end_time = 0, wall = 0, error = std::nan(""), residual = std::nan("");
};

std::string value_label(const json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

// Reads a CSV into time -> column -> value for the given columns.
std::map<long long, std::map<std::string, double>> read_csv(const fs::path& file, const std::set<std::string>& want) {
  std::map<long long, std::map<std::string, double>> rows;
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return rows;
  std::vector<std::string> header;
  {
    std::stringstream ss(line);
    std::string c;
    while (std::getline(ss, c, ',')) header.push_back(c);
  }
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string c;
    std::size_t i = 0;
    long long key = 0;
    std::map<std::string, double> row;
    bool complete = true;
    while (std::getline(ss, c, ',')) {
      if (i >= header.size()) break;
      double v = std::strtod(c.c_str(), nullptr);
      if (i == 0) key = std::llround(v * 1e9);
      else if (want.count(header[i])) row[header[i]] = v;
      ++i;
    }
    if (i != header.size()) complete = false;  // a row cut by a crash
    if (complete) rows[key] = std::move(row);
  }
  return rows;
}

int spawn_and_wait_all(std::vector<Run>& runs, const fs::path& exe, int jobs, std::size_t total) {
  std::map<pid_t, Run*> active;
  std::size_t next = 0, done = 0;
  auto launch = [&](Run& r) {
    std::vector<std::string> argv = {exe.string()};
    argv.insert(argv.end(), r.args.begin(), r.args.end());
    std::vector<char*> cargv;
    for (auto& a : argv) cargv.push_back(a.data());
    cargv.push_back(nullptr);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    fs::create_directories(r.out);
    const std::string log = (r.out / "stderr.log").string();
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid;
    int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, cargv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
      r.status = "failed";
      r.message = "could not start stride";
      ++done;
      return;
    }
    active[pid] = &r;
  };
  while (done < runs.size()) {
    while (next < runs.size() && static_cast<int>(active.size()) < jobs) launch(runs[next++]);
    if (active.empty()) continue;
    int st = 0;
    pid_t pid = waitpid(-1, &st, 0);
    if (pid <= 0) break;
    auto it = active.find(pid);
    if (it == active.end()) continue;
    Run& r = *it->second;
    active.erase(it);
    ++done;
    std::ifstream sf(r.out / "summary.json");
    json s = json::parse(sf, nullptr, false);
    if (s.is_discarded()) {
      r.status = WIFEXITED(st) && WEXITSTATUS(st) == 2 ? "invalid" : "failed";
      std::ifstream lf(r.out / "stderr.log");
      std::stringstream b;
      b << lf.rdbuf();
      r.message = b.str();
    } else {
      r.status = s.value("status", "failed");
      r.message = s.value("message", "");
      r.end_time = s.value("end_time_reached", 0.0);
      r.wall = s.value("wall_time_s", 0.0);
      r.residual = s.value("energy_residual_J", std::nan(""));
    }
    std::fprintf(stderr, "[%zu/%zu] run %zu: %s\n", done, total, r.index, r.status.c_str());
  }
  return 0;
}

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

}  // namespace

int run_sweep(const fs::path& file, const fs::path& exe, int jobs) {
  const std::string fname = file.string();
  std::vector<Diagnostic> diags;
  auto error = [&](const std::string& ptr, const std::string& msg) { diags.push_back({fname, ptr, msg}); };
  std::ifstream in(file);
  if (!in) {
    std::cerr << "error: " << fname << ": cannot open the file\n";
    return 2;
  }
  json d = json::parse(in, nullptr, false);
  if (d.is_discarded() || !d.is_object()) {
    std::cerr << "error: " << fname << ": not a JSON object\n";
    return 2;
  }
  const std::vector<std::string> keys = {"format", "title", "manifest", "reference", "axes", "step_axis", "stable_error", "set", "output"};
  for (auto it = d.begin(); it != d.end(); ++it)
    if (std::find(keys.begin(), keys.end(), it.key()) == keys.end()) {
      std::string msg = "unknown key \"" + it.key() + "\"";
      if (auto c = closest(it.key(), keys); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      error("/" + it.key(), msg);
    }
  const fs::path base = file.parent_path();
  if (!d.contains("manifest") || !d["manifest"].is_string()) error("/manifest", "expected the manifest file name");
  if (!d.contains("axes") || !d["axes"].is_array() || d["axes"].empty()) error("/axes", "expected a non-empty array of axes");
  std::vector<Axis> axes;
  if (d.contains("axes") && d["axes"].is_array())
    for (std::size_t i = 0; i < d["axes"].size(); ++i) {
      const json& a = d["axes"][i];
      const std::string p = "/axes/" + std::to_string(i);
      if (!a.is_object() || !a.contains("name") || !a["name"].is_string() || !a.contains("values") ||
          !a["values"].is_array() || a["values"].empty()) {
        error(p, "expected {\"name\": ..., \"pointers\": [...], \"values\": [...]}");
        continue;
      }
      Axis ax{a["name"].get<std::string>(), {}};
      std::vector<std::string> pointers;
      if (a.contains("pointers")) {
        if (!a["pointers"].is_array()) error(p + "/pointers", "expected an array of JSON pointers");
        else
          for (const auto& q : a["pointers"])
            if (q.is_string()) pointers.push_back(q.get<std::string>());
      }
      for (std::size_t k = 0; k < a["values"].size(); ++k) {
        const json& v = a["values"][k];
        AxisValue av;
        if (v.is_object() && (v.contains("set") || v.contains("manifest"))) {
          const json set = v.value("set", json::object());
          av.label = v.value("label", v.value("manifest", set.dump()));
          if (v.contains("manifest")) av.manifest = v["manifest"].get<std::string>();
          if (v.contains("value") && v["value"].is_number()) av.number = v["value"].get<double>();
          if (!set.is_object()) error(p + "/values/" + std::to_string(k) + "/set", "expected {\"/pointer\": value}");
          else
            for (auto it = set.begin(); it != set.end(); ++it) av.sets.push_back({it.key(), *it});
        } else {
          if (pointers.empty()) error(p + "/pointers", "values that are not {\"label\", \"set\"} objects need \"pointers\"");
          av.label = value_label(v);
          for (const auto& q : pointers) av.sets.push_back({q, v});
          if (v.is_number()) av.number = v.get<double>();
        }
        ax.values.push_back(av);
      }
      axes.push_back(ax);
    }
  std::string step_axis = d.value("step_axis", axes.empty() ? "" : axes[0].name);
  int step_index = -1;
  for (std::size_t i = 0; i < axes.size(); ++i)
    if (axes[i].name == step_axis) step_index = static_cast<int>(i);
  if (step_index < 0) error("/step_axis", "expected the name of an axis with numeric values, found \"" + step_axis + "\"");
  else
    for (const auto& v : axes[step_index].values)
      if (std::isnan(v.number)) error("/step_axis", "axis \"" + step_axis + "\" has a non-numeric value " + v.label);
  const double stable_error = d.value("stable_error", std::numeric_limits<double>::infinity());
  if (!diags.empty()) {
    std::cerr << "error: the sweep file is not valid:\n";
    for (const auto& x : diags) std::cerr << "  " << x.str() << "\n";
    return 2;
  }
  const fs::path manifest = base / d["manifest"].get<std::string>();
  const fs::path out = d.contains("output") ? fs::path(d["output"].get<std::string>()) : fs::path("out") / file.stem();
  fs::create_directories(out);
  std::vector<std::string> common;
  if (d.contains("set") && d["set"].is_object())
    for (auto it = d["set"].begin(); it != d["set"].end(); ++it) common.push_back(it.key() + "=" + it->dump());

  // The manifest of a grid point: the last axis value naming one, else the sweep's.
  auto manifest_of = [&](const std::vector<std::size_t>& ch) {
    fs::path m = manifest;
    for (std::size_t a = 0; a < axes.size(); ++a)
      if (!axes[a].values[ch[a]].manifest.empty()) m = base / axes[a].values[ch[a]].manifest;
    return m;
  };
  // Validate one grid point per manifest before launching anything.
  {
    std::vector<std::size_t> ch(axes.size(), 0);
    std::set<fs::path> checked;
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (std::size_t k = 0; k < axes[a].values.size(); ++k) {
        ch.assign(axes.size(), 0);
        ch[a] = k;
        const fs::path m = manifest_of(ch);
        if (!checked.insert(m).second) continue;
        std::vector<std::string> sets = common;
        for (std::size_t b = 0; b < axes.size(); ++b)
          for (const auto& [ptr, v] : axes[b].values[ch[b]].sets) sets.push_back(ptr + "=" + v.dump());
        try {
          load_manifest(m, sets);
        } catch (const ManifestError& e) {
          std::cerr << "error: a manifest of the sweep is not valid:\n";
          for (const auto& x : e.diagnostics()) std::cerr << "  " << x.str() << "\n";
          return 2;
        }
      }
  }

  // Grid.
  std::vector<Run> runs;
  std::vector<std::size_t> choice(axes.size(), 0);
  for (;;) {
    Run r;
    r.index = runs.size();
    r.choice = choice;
    char name[32];
    std::snprintf(name, sizeof name, "run_%04zu", r.index);
    r.out = out / name;
    r.args = {"run", manifest_of(choice).string(), "--out", r.out.string(), "--quiet"};
    for (const auto& s : common) r.args.insert(r.args.end(), {"--set", s});
    for (std::size_t a = 0; a < axes.size(); ++a)
      for (const auto& [ptr, v] : axes[a].values[choice[a]].sets) r.args.insert(r.args.end(), {"--set", ptr + "=" + v.dump()});
    runs.push_back(r);
    std::size_t a = 0;
    for (; a < axes.size(); ++a) {
      if (++choice[a] < axes[a].values.size()) break;
      choice[a] = 0;
    }
    if (a == axes.size()) break;
  }

  // Reference.
  std::map<std::string, std::string> columns;
  std::map<long long, std::map<std::string, double>> ref;
  if (d.contains("reference")) {
    const json& r = d["reference"];
    Run rr;
    rr.index = 0;
    rr.out = out / "reference";
    rr.args = {"run", (base / r.value("manifest", "")).string(), "--out", rr.out.string(), "--quiet"};
    if (r.contains("columns"))
      for (auto it = r["columns"].begin(); it != r["columns"].end(); ++it) columns[it.key()] = it->get<std::string>();
    std::vector<Run> one{rr};
    std::fprintf(stderr, "reference: %s\n", rr.args[1].c_str());
    spawn_and_wait_all(one, exe, 1, 1);
    if (one[0].status != "completed") {
      std::cerr << "error: the reference run did not complete (" << one[0].status << "): " << one[0].message << "\n";
      return 1;
    }
    std::set<std::string> want;
    for (auto& [a, b] : columns) want.insert(b);
    ref = read_csv(rr.out / "results.csv", want);
  }

  spawn_and_wait_all(runs, exe, std::max(1, jobs), runs.size());

  // Errors against the reference: largest absolute difference over the common record times.
  for (auto& r : runs) {
    if (columns.empty()) continue;
    std::set<std::string> want;
    for (auto& [a, b] : columns) want.insert(a);
    auto rows = read_csv(r.out / "results.csv", want);
    double e = 0;
    std::size_t n = 0;
    for (auto& [t, row] : rows) {
      auto it = ref.find(t);
      if (it == ref.end()) continue;
      for (auto& [a, b] : columns)
        if (row.count(a) && it->second.count(b)) e = std::max(e, std::abs(row[a] - it->second[b])), ++n;
    }
    r.error = n ? e : std::nan("");
  }

  // sweep.csv
  {
    std::ofstream csv(out / "sweep.csv");
    csv << "run";
    for (const auto& ax : axes) csv << "," << csv_escape(ax.name);
    csv << ",status,end_time_reached,error,energy_residual_J,wall_time_s,message\n";
    for (const auto& r : runs) {
      csv << r.index;
      for (std::size_t a = 0; a < axes.size(); ++a) csv << "," << csv_escape(axes[a].values[r.choice[a]].label);
      csv << "," << r.status << "," << r.end_time << "," << r.error << "," << r.residual << "," << r.wall << ","
          << csv_escape(r.message) << "\n";
    }
  }

  // Stability per configuration: the largest step such that every run with a step up to it
  // completed (and, with stable_error, stayed within it).
  std::map<std::vector<std::size_t>, std::vector<const Run*>> configs;
  for (const auto& r : runs) {
    auto key = r.choice;
    key[step_index] = 0;
    configs[key].push_back(&r);
  }
  std::ostringstream md;
  md << "| ";
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (int(a) != step_index) md << axes[a].name << " | ";
  md << "largest stable " << step_axis << " | first unstable " << step_axis << " | error at largest stable |\n|";
  for (std::size_t a = 0; a < axes.size(); ++a)
    if (int(a) != step_index) md << "---|";
  md << "---|---|---|\n";
  std::ofstream plotdata(out / "plot.dat");
  std::vector<std::string> config_labels;
  for (auto& [key, rs] : configs) {
    std::sort(rs.begin(), rs.end(), [&](const Run* x, const Run* y) {
      return axes[step_index].values[x->choice[step_index]].number < axes[step_index].values[y->choice[step_index]].number;
    });
    std::string label;
    for (std::size_t a = 0; a < axes.size(); ++a)
      if (int(a) != step_index) label += (label.empty() ? "" : " ") + axes[a].values[key[a]].label;
    if (label.empty()) label = "all";
    config_labels.push_back(label);
    double best = std::nan(""), first_bad = std::nan(""), best_err = std::nan("");
    for (const Run* r : rs) {
      const double h = axes[step_index].values[r->choice[step_index]].number;
      const bool ok = r->status == "completed" && !(r->error > stable_error);
      if (!ok) {
        first_bad = h;
        break;
      }
      best = h;
      best_err = r->error;
    }
    md << "| ";
    for (std::size_t a = 0; a < axes.size(); ++a)
      if (int(a) != step_index) md << axes[a].values[key[a]].label << " | ";
    auto num = [](double x) {
      if (std::isnan(x)) return std::string("–");
      std::ostringstream o;
      o << x;
      return o.str();
    };
    md << num(best) << " | " << (std::isnan(first_bad) ? "none up to " + num(axes[step_index].values.back().number) : num(first_bad))
       << " | " << num(best_err) << " |\n";
    plotdata << "# " << label << "\n";
    for (const Run* r : rs)
      if (r->status == "completed" && !std::isnan(r->error))
        plotdata << axes[step_index].values[r->choice[step_index]].number << " " << r->error << "\n";
    plotdata << "\n\n";
  }
  plotdata.close();
  std::ofstream(out / "stability.md") << md.str();
  std::cout << md.str();

  // Plot with gnuplot when available.
  if (!columns.empty() && std::system("command -v gnuplot >/dev/null 2>&1") == 0) {
    std::ofstream gp(out / "plot.gp");
    const int rows = static_cast<int>((config_labels.size() + 2) / 3);
    gp << "set terminal pngcairo noenhanced size 1200," << 600 + 16 * rows << " font ',9'\nset output '"
       << (out / "error.png").string() << "'\n"
       << "set logscale xy\nset xlabel '" << step_axis << "'\nset ylabel 'largest |error| against the reference'\n"
       << "set key outside below maxrows " << rows << "\nset grid\nplot ";
    for (std::size_t i = 0; i < config_labels.size(); ++i)
      gp << (i ? ", " : "") << "'" << (out / "plot.dat").string() << "' index " << i << " with linespoints title '"
         << config_labels[i] << "'";
    gp << "\n";
    gp.close();
    if (std::system(("gnuplot '" + (out / "plot.gp").string() + "' 2>/dev/null").c_str()) == 0)
      std::cerr << "plot: " << (out / "error.png").string() << "\n";
  } else if (!columns.empty()) {
    std::cerr << "note: gnuplot not found, plot data in " << (out / "plot.dat").string() << "\n";
  }
  std::cerr << "sweep: " << runs.size() << " runs, table in " << (out / "sweep.csv").string() << "\n";
  return 0;
}

}  // namespace stride::host
