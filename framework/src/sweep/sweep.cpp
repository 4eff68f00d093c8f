#include "stride/host/sweep/sweep.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "load/elf_section.hpp"
#include "run/row_file.hpp"  // each_csv_record
#include "fmi/fmu.hpp"
#include "stride/host/cli/commands.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/run/output.hpp"
#include "stride/host/run/supervise.hpp"

extern char** environ;

namespace stride::host {
namespace fs = std::filesystem;

namespace {

std::string value_label(const json& v) { return v.is_string() ? v.get<std::string>() : dump_safe(v); }

// A pointer of a "set": a valid JSON pointer that --set can carry (no '=').
bool check_pointer(DocumentChecker& chk, const std::string& where, const std::string& p) {
  std::string why;
  if (p.empty() || p[0] != '/') why = "expected a JSON pointer starting with '/'";
  else if (p.find('=') != std::string::npos) why = "a pointer may not contain '='";
  else
    try {
      json::json_pointer jp(p);
    } catch (const json::exception&) {
      why = "not a valid JSON pointer ('~' must be followed by 0 or 1)";
    }
  if (why.empty()) return true;
  chk.error(where, why + ", found \"" + p + "\"");
  return false;
}

// {"/pointer": value, ...}
std::vector<std::pair<std::string, json>> sets_of(DocumentChecker& chk, const json& v, const std::string& ptr) {
  std::vector<std::pair<std::string, json>> out;
  if (!v.is_object()) {
    chk.error(ptr, "expected {\"/json/pointer\": value, ...}, found " + type_name(v));
    return out;
  }
  for (auto it = v.begin(); it != v.end(); ++it)
    if (check_pointer(chk, ptr + "/" + pointer_escape(it.key()), it.key())) out.emplace_back(it.key(), *it);
  return out;
}

}  // namespace

namespace {

// The readers of a sweep file's sections; relative paths are anchored at `base`.
struct SweepReader {
  DocumentChecker& chk;
  fs::path base;
  fs::path path_of(const std::string& p) const { return fs::path(p).is_absolute() ? fs::path(p) : base / p; }

  void reference(const json& r, SweepSpec& s) {
    if (!chk.object(r, "/reference", {"manifest", "columns", "set", "error_scale", "error_unit"}, {"manifest", "columns"})) return;
    if (auto m = chk.string(r, "/reference", "manifest")) s.reference = path_of(*m);
    if (auto e = chk.number(r, "/reference", "error_scale", "a positive scale of the errors", true)) s.error_scale = *e;
    if (auto u = chk.string(r, "/reference", "error_unit")) s.error_unit = *u;
    if (r.contains("set")) s.reference_sets = sets_of(chk, r["set"], "/reference/set");
    if (!r.contains("columns")) return;
    const json& c = r["columns"];
    if (!c.is_object() || c.empty()) {
      chk.error("/reference/columns", "expected {\"run column\": \"reference column\", ...}, found " + type_name(c));
      return;
    }
    for (auto it = c.begin(); it != c.end(); ++it) {
      if (!it->is_string())
        chk.error("/reference/columns/" + pointer_escape(it.key()), "expected a column name, found " + type_name(*it));
      else s.columns.emplace_back(it.key(), it->get<std::string>());
    }
  }

  // A value of an axis at `vp`: {"label", "set", "manifest", "value"}, or a plain value written
  // at each of the axis' `pointers`. False when it is not used.
  bool axis_value(const json& v, const std::string& p, const std::string& vp, const std::vector<std::string>& pointers,
                  SweepAxisValue& av) {
    if (v.is_object() && (v.contains("set") || v.contains("manifest"))) {
      if (!chk.object(v, vp, {"label", "set", "manifest", "value"}, {})) return false;
      if (v.contains("set")) av.sets = sets_of(chk, v["set"], vp + "/set");
      if (auto m = chk.string(v, vp, "manifest")) av.manifest = path_of(*m).string();
      if (auto n = chk.number(v, vp, "value", "a number (the value on the step axis)", false)) av.number = *n;
      if (auto l = chk.string(v, vp, "label")) av.label = *l;
      else
        av.label = !av.manifest.empty() ? fs::path(av.manifest).filename().string()
                                        : value_label(v.value("set", json::object()));
      return true;
    }
    if (pointers.empty())
      chk.error(p + "/pointers", "values that are not {\"label\", \"set\"} objects need \"pointers\"");
    av.label = value_label(v);
    for (const auto& q : pointers) av.sets.emplace_back(q, v);
    if (v.is_number()) av.number = v.get<double>();
    return true;
  }

  std::vector<std::string> pointers(const json& a, const std::string& p) {
    std::vector<std::string> out;
    if (!a.contains("pointers")) return out;
    const json& ps = a["pointers"];
    if (!ps.is_array()) {
      chk.error(p + "/pointers", "expected an array of JSON pointers, found " + type_name(ps));
      return out;
    }
    for (std::size_t k = 0; k < ps.size(); ++k) {
      const std::string pp = p + "/pointers/" + std::to_string(k);
      if (!ps[k].is_string()) chk.error(pp, "expected a JSON pointer, found " + type_name(ps[k]));
      else if (check_pointer(chk, pp, ps[k].get<std::string>())) out.push_back(ps[k].get<std::string>());
    }
    return out;
  }

  // Axis `a` at `p` into s.axes (the grid grows by its values).
  void axis(const json& a, const std::string& p, SweepSpec& s) {
    if (!chk.object(a, p, {"name", "pointers", "values", "description"}, {"name", "values"})) return;
    SweepAxis ax;
    if (auto n = chk.string(a, p, "name")) ax.name = *n;
    if (ax.name.empty() && a.contains("name") && a["name"].is_string())
      chk.error(p + "/name", "expected a non-empty name");
    for (const auto& other : s.axes)
      if (!ax.name.empty() && other.name == ax.name) chk.error(p + "/name", "axis \"" + ax.name + "\" is named twice");
    const std::vector<std::string> ptrs = pointers(a, p);
    const json& vs = a.contains("values") ? a["values"] : json();
    if (!vs.is_array() || vs.empty()) {
      if (a.contains("values"))
        chk.error(p + "/values", "expected a non-empty array of values, found " + type_name(vs));
      return;
    }
    std::set<std::string> labels;
    for (std::size_t k = 0; k < vs.size(); ++k) {
      const std::string vp = p + "/values/" + std::to_string(k);
      SweepAxisValue av;
      if (!axis_value(vs[k], p, vp, ptrs, av)) continue;
      if (!labels.insert(av.label).second)
        chk.error(vp, "axis \"" + ax.name + "\" has the label \"" + av.label + "\" twice");
      ax.values.push_back(std::move(av));
    }
    s.runs *= static_cast<double>(ax.values.size());
    s.axes.push_back(std::move(ax));
  }

  // "histories": each names a PNG in the output folder, a column and its curves; a curve picks
  // one run by a label of every axis with more than one value, or is "reference".
  void histories(const json& h, SweepSpec& s) {
    if (!h.is_array()) return chk.error("/histories", "expected an array of time histories, found " + type_name(h));
    std::set<std::string> files;
    for (std::size_t k = 0; k < h.size(); ++k) {
      const std::string p = "/histories/" + std::to_string(k);
      if (!chk.object(h[k], p, {"file", "title", "column", "scale", "ylabel", "difference", "runs"}, {"file", "column", "runs"})) continue;
      SweepHistory hi;
      hi.file = chk.string(h[k], p, "file").value_or("");
      if (hi.file.size() < 5 || hi.file.find('/') != std::string::npos || hi.file.substr(hi.file.size() - 4) != ".png" ||
          !files.insert(hi.file).second)
        chk.error(p + "/file", "expected a file name of its own ending in .png (no folders), found \"" + hi.file + "\"");
      hi.title = chk.string(h[k], p, "title").value_or("");
      hi.column = chk.string(h[k], p, "column").value_or("");
      hi.ylabel = chk.string(h[k], p, "ylabel").value_or(hi.column);
      if (auto v = chk.number(h[k], p, "scale", "a non-zero scale", false)) {
        hi.scale = *v;
        if (hi.scale == 0.0) chk.error(p + "/scale", "expected a non-zero scale, found 0");
      }
      if (h[k].contains("difference")) {
        if (!h[k]["difference"].is_boolean()) chk.error(p + "/difference", "expected true or false, found " + type_name(h[k]["difference"]));
        else hi.difference = h[k]["difference"].get<bool>();
      }
      if (hi.difference && s.reference.empty()) chk.error(p + "/difference", "a difference needs the sweep's \"reference\"");
      if (h[k].contains("runs")) {  // else chk.object has named it missing
        const json& rs = h[k]["runs"];
        if (!rs.is_array() || rs.empty()) chk.error(p + "/runs", "expected a non-empty array of runs, found " + type_name(rs));
        else
          for (std::size_t c = 0; c < rs.size(); ++c) history_curve(rs[c], p + "/runs/" + std::to_string(c), s, hi);
      }
      s.histories.push_back(std::move(hi));
    }
  }
  void history_curve(const json& r, const std::string& p, const SweepSpec& s, SweepHistory& hi) {
    if (r == "reference") {
      if (s.reference.empty()) chk.error(p, "the sweep has no reference run");
      else if (hi.difference) chk.error(p, "the reference less itself is zero; leave it out of a difference");
      hi.curves.emplace_back();
      return;
    }
    if (!r.is_object()) return chk.error(p, "expected \"reference\" or {\"axis\": \"label\", ...}, found " + type_name(r));
    std::vector<std::pair<std::size_t, std::size_t>> pick;
    for (std::size_t a = 0; a < s.axes.size(); ++a) {
      const SweepAxis& ax = s.axes[a];
      if (!r.contains(ax.name)) {
        if (ax.values.size() > 1) chk.error(p, "name a value of axis \"" + ax.name + "\" (it has " + std::to_string(ax.values.size()) + ")");
        else pick.emplace_back(a, 0);
        continue;
      }
      const std::string label = value_label(r[ax.name]);
      auto v = std::find_if(ax.values.begin(), ax.values.end(), [&](const SweepAxisValue& x) { return x.label == label; });
      if (v == ax.values.end()) chk.error(p + "/" + pointer_escape(ax.name), "axis \"" + ax.name + "\" has no value \"" + label + "\"");
      else pick.emplace_back(a, std::size_t(v - ax.values.begin()));
    }
    for (auto it = r.begin(); it != r.end(); ++it)
      if (std::none_of(s.axes.begin(), s.axes.end(), [&](const SweepAxis& ax) { return ax.name == it.key(); }))
        chk.error(p + "/" + pointer_escape(it.key()), "no axis is named \"" + it.key() + "\"");
    hi.curves.push_back(std::move(pick));
  }

  // "step_axis" (default: the first axis); its values must be numbers.
  void step_axis(const json& d, SweepSpec& s) {
    std::string name;
    if (d.contains("step_axis")) name = chk.string(d, "", "step_axis").value_or("");
    else if (!s.axes.empty()) name = s.axes[0].name;
    if (s.axes.empty() || (d.contains("step_axis") && !d["step_axis"].is_string())) return;
    auto it = std::find_if(s.axes.begin(), s.axes.end(), [&](const SweepAxis& a) { return a.name == name; });
    if (it == s.axes.end()) {
      std::vector<std::string> names;
      for (const auto& a : s.axes) names.push_back(a.name);
      std::string msg = "expected the name of an axis, found \"" + name + "\"";
      if (auto c = closest(name, names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      chk.error("/step_axis", msg);
      return;
    }
    s.step_axis = static_cast<std::size_t>(it - s.axes.begin());
    for (const auto& v : it->values)
      if (!std::isfinite(v.number))
        chk.error("/step_axis",
                  "axis \"" + name + "\" has the value " + v.label + ", which is not a number (give it a \"value\")");
  }
};

}  // namespace

SweepSpec parse_sweep(const std::string& text, const fs::path& file) {
  DocumentChecker chk{file.string(), {}};
  auto parsed = parse_json(text, file.string(), chk.diags);
  if (!parsed) throw ManifestError(chk.diags);
  const json& d = *parsed;
  if (!d.is_object()) throw ManifestError({{file.string(), "", "expected a sweep object {...}, found " + type_name(d)}});
  SweepSpec s;
  s.file = file;
  SweepReader read{chk, file.parent_path()};
  chk.object(d, "", {"format", "title", "description", "manifest", "reference", "axes", "step_axis", "stable_error", "usable_error", "set", "histories", "output"},
             {"manifest", "axes"});
  if (d.contains("format") && !(d["format"].is_number_integer() && d["format"].get<long long>() == 1))
    chk.error("/format", "expected format version 1, found " + type_name(d["format"]));
  for (const char* k : {"title", "description"})
    if (d.contains(k) && !d[k].is_string())
      chk.error(std::string("/") + k, "expected a string, found " + type_name(d[k]));
  if (auto m = chk.string(d, "", "manifest")) {
    if (m->empty()) chk.error("/manifest", "expected a manifest file name, found \"\"");
    s.manifest = read.path_of(*m);
  }
  if (d.contains("reference")) read.reference(d["reference"], s);
  if (d.contains("set")) s.sets = sets_of(chk, d["set"], "/set");
  if (auto e = chk.number(d, "", "stable_error", "a positive error bound", true)) s.stable_error = *e;
  if (auto e = chk.number(d, "", "usable_error", "a positive error bound", true)) {
    s.usable_error = *e;
    if (!d.contains("reference"))
      chk.error("/usable_error", "an accuracy needs a reference to measure the error against; add \"reference\"");
  }
  if (auto o = chk.string(d, "", "output")) {
    if (o->empty()) chk.error("/output", "expected a folder name, found \"\"");
    s.output = *o;
  } else {
    s.output = fs::path("out") / file.stem();
  }
  s.runs = 1;
  if (d.contains("axes")) {
    const json& axes = d["axes"];
    if (!axes.is_array() || axes.empty()) chk.error("/axes", "expected a non-empty array of axes, found " + type_name(axes));
    else
      for (std::size_t i = 0; i < axes.size(); ++i) read.axis(axes[i], "/axes/" + std::to_string(i), s);
  }
  read.step_axis(d, s);
  if (d.contains("histories")) read.histories(d["histories"], s);
  if (!chk.diags.empty()) throw ManifestError(chk.diags);
  return s;
}

namespace {

struct Point {
  std::size_t index = 0;
  std::vector<std::size_t> choice;  // per axis
  fs::path manifest;
  std::vector<std::string> sets;    // "POINTER=VALUE"
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
    const long long key = std::abs(t) < 9e9 ? std::llround(t * 1e9) : std::llround(std::min(std::abs(t), 9e18) * (t < 0 ? -1 : 1));
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

std::string num(double x) {
  if (std::isnan(x)) return "–";
  std::ostringstream o;
  o << x;
  return o.str();
}

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

// The points through a distributor (distributed sweeps), as run_points does here.
bool distribute_points(const SweepDistributor& d, std::vector<Point*> points, std::size_t total, std::size_t& done) {
  std::vector<SweepJob> jobs(points.size());
  for (std::size_t i = 0; i < points.size(); ++i)
    jobs[i] = {fs::absolute(points[i]->manifest), points[i]->sets, fs::absolute(points[i]->out), json()};
  return d(jobs, [&](std::size_t i) {
    points[i]->summary = jobs[i].summary.is_object() ? jobs[i].summary : json{{"status", "failed"}, {"message", "no summary came back"}};
    take_summary(*points[i], total, done);
  });
}

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
  __attribute__((no_sanitize("address"))) static std::uint64_t fnv1a(std::uint64_t h, const unsigned char* p, std::size_t n) {
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
  Point* point = nullptr;       // the point it runs; null when idle
  bool last = false;            // ends after this point (a process_per_run point)
  bool fresh = true;            // has run nothing yet
};

[[noreturn]] void worker_loop(const std::vector<Point*>& points, const PluginRegistry& reg, const PluginGlobals& globals,
                              RunBeacon* beacon, int jobs, int answers) {
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
    if (::write(answers, &a, sizeof a) != static_cast<ssize_t>(sizeof a) || beacon->stop_signal.load() || a.changed) break;
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

// Runs `points` on at most `jobs` worker processes; false when interrupted.
bool run_points(std::vector<Point*> points, const PluginRegistry& reg, int jobs, double grace, std::size_t total,
                std::size_t& done, bool process_per_run = false) {
  block_supervisor_signals();
  bool finished = false;
  {
    WorkerPool pool(std::move(points), reg, jobs, grace, total, done, process_per_run);
    finished = pool.run();
  }
  unblock_signals();
  return finished;
}

}  // namespace

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

bool run_sweep_job(SweepJob& job, double grace) {
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
  const bool finished = run_points({&p}, it->second, 1, grace, 1, done);
  job.summary = p.summary.is_object() ? p.summary : json{{"status", "not run"}};
  return finished;
}

namespace {

// "POINTER=VALUE" overrides of a list of (pointer, value).
std::vector<std::string> override_texts(const std::vector<std::pair<std::string, json>>& sets) {
  std::vector<std::string> out;
  for (const auto& [p, v] : sets) out.push_back(p + "=" + dump_safe(v));
  return out;
}

// Plan: the grid's points, last axis slowest, each with its manifest, overrides and folder.
std::vector<Point> plan_points(const SweepSpec& spec) {
  const std::vector<SweepAxis>& axes = spec.axes;
  const std::vector<std::string> common = override_texts(spec.sets);
  std::vector<Point> points;
  points.reserve(static_cast<std::size_t>(spec.runs));
  std::vector<std::size_t> choice(axes.size(), 0);
  for (;;) {
    Point r;
    r.index = points.size();
    r.choice = choice;
    char name[32];
    std::snprintf(name, sizeof name, "run_%04zu", r.index);
    r.out = spec.output / name;
    r.manifest = spec.manifest;
    r.sets = common;
    for (std::size_t a = 0; a < axes.size(); ++a) {
      const SweepAxisValue& v = axes[a].values[choice[a]];
      if (!v.manifest.empty()) r.manifest = v.manifest;
      for (const auto& [p, x] : v.sets) r.sets.push_back(p + "=" + dump_safe(x));
    }
    points.push_back(std::move(r));
    std::size_t a = 0;
    for (; a < axes.size(); ++a) {
      if (++choice[a] < axes[a].values.size()) break;
      choice[a] = 0;
    }
    if (a == axes.size()) break;
  }
  return points;
}

// Check: the plugins of every manifest once, for every run; then one grid point per axis value
// (and the reference) checked completely (plugins, parameters, ports) before anything runs.
// Throws SweepInputError naming the run.
void check_points(const SweepSpec& spec, const std::vector<Point>& points,
                  const std::vector<std::string>& reference_sets, PluginRegistry& reg) {
  const std::vector<SweepAxis>& axes = spec.axes;
  try {
    std::vector<fs::path> dirs = PluginRegistry::default_search_path();
    std::set<fs::path> seen;
    for (const auto& p : points)
      if (seen.insert(p.manifest).second) {
        const Manifest m = read_manifest(p.manifest, p.sets);
        dirs.insert(dirs.end(), m.plugin_paths.begin(), m.plugin_paths.end());
      }
    if (!spec.reference.empty()) {
      const Manifest m = read_manifest(spec.reference, reference_sets);
      dirs.insert(dirs.end(), m.plugin_paths.begin(), m.plugin_paths.end());
    }
    reg.scan(dirs);
    std::set<std::pair<std::size_t, std::size_t>> checked;
    for (const auto& p : points) {
      bool fresh = points.size() == 1;
      for (std::size_t a = 0; a < axes.size(); ++a) fresh |= checked.insert({a, p.choice[a]}).second;
      if (!fresh) continue;
      try {
        Experiment ex(read_manifest(p.manifest, p.sets), reg);
      } catch (const ManifestError& e) {
        std::string where;
        for (std::size_t a = 0; a < axes.size(); ++a) where += (where.empty() ? "" : ", ") + axes[a].name + " = " + axes[a].values[p.choice[a]].label;
        throw SweepInputError("run " + std::to_string(p.index) + " of the sweep (" + where + ") is not valid", e);
      }
    }
    if (!spec.reference.empty()) Experiment ex(read_manifest(spec.reference, reference_sets), reg);
  } catch (const ManifestError& e) {
    throw SweepInputError("a manifest of the sweep is not valid", e);
  }
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
  const bool finished = opt.distribute ? distribute_points(opt.distribute, pending_runs, points.size(), done)
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
    csv << "," << r.status << "," << r.end_time << "," << r.error << "," << r.residual << "," << r.coupling_error << ","
        << r.coupling_error_rms << "," << r.residual_relative << "," << r.wall << "," << csv_escape(r.message) << "\n";
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
  md << "largest stable " << axes[si].name << " | first unstable " << axes[si].name << " | error at largest stable" << unit << " |";
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
          if (spec.axes[a].values.size() > 1) title += (title.empty() ? "" : ", ") + spec.axes[a].name + " = " + spec.axes[a].values[v].label;
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
    gp << "set terminal pngcairo noenhanced size 1200,500 font ',10'\nset output " << gnuplot_quoted(spec.output / h.file) << "\n"
       << "set title " << gnuplot_quoted(h.title) << "\nset xlabel 'time (s)'\nset ylabel " << gnuplot_quoted(h.ylabel)
       << "\nset grid\nset key outside below\nplot ";
    for (std::size_t i = 0; i < titles.size(); ++i)
      gp << (i ? ", " : "") << gnuplot_quoted(stem.string() + ".dat") << " index " << i << " with lines title " << gnuplot_quoted(titles[i]);
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

}  // namespace

SweepOutcome sweep(const fs::path& file, const SweepOptions& opt) {
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
  check_points(spec, points, reference_sets, reg);

  const FolderLock lock(spec.output, "stride sweep, pid " + std::to_string(::getpid()) + ", " + file.string());
  // Tables of an earlier sweep must not outlive this one's start.
  for (const char* f : {"sweep.csv", "stability.md", "plot.dat", "plot.gp", "error.png"}) fs::remove(spec.output / f);
  for (const auto& h : spec.histories)
    for (const std::string& f : {h.file, fs::path(h.file).stem().string() + ".dat", fs::path(h.file).stem().string() + ".gp"})
      fs::remove(spec.output / f);
  std::cerr << "sweep: " << points.size() << " runs, " << std::max(1, opt.jobs) << " at a time, results in "
            << spec.output.string() << "\n";

  Point rr;
  std::size_t done = 0;
  if (!run_reference_and_points(spec, opt, reference_sets, reg, points, rr, done, outcome)) return outcome;
  measure_errors(spec, rr, points);
  report(spec, points, outcome.finished, done, outcome);
  if (outcome.finished && outcome.error.empty()) plot_histories(spec, rr, points);
  return outcome;
}

}  // namespace stride::host
