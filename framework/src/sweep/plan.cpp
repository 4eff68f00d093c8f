// Plan and check: the grid's points, and the checks of every manifest before anything runs.
#include <algorithm>
#include <cstdio>
#include <optional>

#include "stride/host/graph/experiment.hpp"
#include "sweep/point.hpp"

namespace stride::host::sweep_detail {

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

std::string reference_column(const SweepSpec& spec, const std::string& column) {
  for (const auto& [run, ref] : spec.columns)
    if (run == column) return ref;
  return column;
}

namespace {

// Every column a plot reads is a numeric column of the experiment that writes it: a history's
// column in every run checked, its reference's name (SweepSpec::columns) in the reference when
// the history draws or subtracts the reference. Their units are kept for the plots' labels.
void check_plotted_columns(const SweepSpec& spec, const Experiment& ex, bool reference, const std::string& which,
                           std::map<std::string, std::string>& units) {
  std::vector<Diagnostic> problems;
  for (std::size_t k = 0; k < spec.histories.size(); ++k) {
    const SweepHistory& h = spec.histories[k];
    const bool uses_reference =
        h.difference || std::any_of(h.curves.begin(), h.curves.end(), [](const auto& c) { return c.empty(); });
    if (reference && !uses_reference) continue;
    const std::string column = reference ? reference_column(spec, h.column) : h.column;
    const std::string unit = ex.column_unit(column);
    if (!unit.empty()) {
      units[column] = unit;
      continue;
    }
    problems.push_back(
        {spec.file.string(), "/histories/" + std::to_string(k) + "/column",
         "history \"" + h.file + "\" plots column \"" + column + "\"" +
             (reference && column != h.column ? " (reference.columns maps \"" + h.column + "\" to it)" : "") +
             ", which " + which + " does not record as a number; its columns: " + listed(ex.columns())});
  }
  for (const auto& [run, ref] : spec.columns) {
    const std::string column = reference ? ref : run;
    if (const std::string unit = ex.column_unit(column); !unit.empty()) units[column] = unit;
  }
  if (!problems.empty()) throw SweepInputError("a plot of the sweep would be empty", ManifestError(problems));
}

// Whether `manifest` (its document) uses `value` ("$name") as a step or macro step anywhere.
bool used_as_step(const json& j, const std::string& value) {
  if (j.is_object())
    for (auto it = j.begin(); it != j.end(); ++it) {
      if ((it.key() == "step" || it.key() == "macro_step") && it->is_string() && it->get<std::string>() == value)
        return true;
      if (used_as_step(*it, value)) return true;
    }
  if (j.is_array())
    for (const json& e : j)
      if (used_as_step(e, value)) return true;
  return false;
}

// The step axis's unit: its "unit", else s when each pointer sets a step (a subsystem's or the
// macro step, or a variable the manifest uses as one). error.png plots its values along x.
std::string step_axis_unit(const SweepSpec& spec) {
  const SweepAxis& ax = spec.axes[spec.step_axis];
  if (!ax.unit.empty()) return ax.unit;
  const json doc = json::parse(read_text_file(spec.manifest), nullptr, false);
  const bool steps =
      !ax.pointers.empty() && std::all_of(ax.pointers.begin(), ax.pointers.end(), [&](const std::string& p) {
        const std::string last = p.substr(p.rfind('/') + 1);
        if (last == "step" || last == "macro_step") return true;
        return p.rfind("/variables/", 0) == 0 && used_as_step(doc, "$" + p.substr(11));
      });
  if (steps) return "s";
  if (spec.reference.empty()) return "";
  const std::string at = "/axes/" + std::to_string(spec.step_axis);
  throw SweepInputError("error.png of the sweep would have no unit along x",
                        ManifestError({{spec.file.string(), at + "/unit",
                                        "the step axis \"" + ax.name +
                                            "\" is error.png's x axis, and its pointers set no "
                                            "step of the manifest: give its unit (\"unit\": \"s\")"}}));
}

// An axis whose values give the same manifest (its variables aside: a variable no "$" reads is
// no change) wherever the other axes stand would label identical runs differently: refused at
// the axis. Stops at the first place where it changes something (usually the first).
void check_axes_change_something(const SweepSpec& spec, const std::vector<Point>& points) {
  std::vector<Diagnostic> problems;
  for (std::size_t a = 0; a < spec.axes.size(); ++a) {
    const SweepAxis& ax = spec.axes[a];
    if (ax.values.size() < 2) continue;
    bool changes = false;
    for (std::size_t i = 0; i < points.size() && !changes; ++i) {
      if (points[i].choice[a] != 0) continue;
      std::optional<json> first;
      for (std::size_t j = i; j < points.size() && !changes; ++j) {
        std::vector<std::size_t> other = points[j].choice;
        other[a] = 0;
        if (other != points[i].choice) continue;
        json doc = read_manifest(points[j].manifest, points[j].sets).document;
        if (doc.is_object()) doc.erase("variables");
        doc["manifest file"] = points[j].manifest.string();
        if (!first) first = std::move(doc);
        else changes = doc != *first;
      }
    }
    if (changes) continue;
    std::string pointers;
    for (const auto& [p, v] : ax.values[0].sets) pointers += (pointers.empty() ? "" : ", ") + p;
    problems.push_back({spec.file.string(), "/axes/" + std::to_string(a),
                        "axis \"" + ax.name + "\" changes nothing: its pointers (" + pointers +
                            ") give the same manifest for every value in every manifest of the sweep; point them at"
                            " a value the manifest reads (a variable must be read by a \"$name\")"});
  }
  if (!problems.empty()) throw SweepInputError("the sweep file is not valid", ManifestError(problems));
}

// A sweep's runs are not paced: a manifest (or an axis) asking for real time is refused.
void refuse_real_time(const fs::path& file, const Manifest& m, const std::vector<std::string>& sets) {
  std::string by = m.real_time.enabled ? "\"real_time\"" : "";
  for (const auto& set : sets)
    if (set.rfind("/real_time", 0) == 0) by = "the sweep's " + set;
  if (by.empty()) return;
  throw ManifestError({{file.string(), "/real_time",
                        "a sweep runs its points as fast as they go, several at a time, so it cannot hold them to "
                        "the wall clock: remove " +
                            by + " and run a real-time experiment alone (`stride run MANIFEST --real-time`)"}});
}

}  // namespace

// Check: the plugins of every manifest once, for every run; then one grid point per axis value
// (and the reference) checked completely (plugins, parameters, ports) before anything runs.
// Throws SweepInputError naming the run.
void check_points(const SweepSpec& spec, const std::vector<Point>& points,
                  const std::vector<std::string>& reference_sets, PluginRegistry& reg, ColumnUnits& units) {
  const std::vector<SweepAxis>& axes = spec.axes;
  try {
    std::vector<fs::path> dirs = PluginRegistry::default_search_path();
    std::set<fs::path> seen;
    for (const auto& p : points) {
      const bool first = seen.insert(p.manifest).second;
      const Manifest m = first ? read_manifest(p.manifest, p.sets) : Manifest{};
      refuse_real_time(p.manifest, m, p.sets);
      if (first) dirs.insert(dirs.end(), m.plugin_paths.begin(), m.plugin_paths.end());
    }
    if (!spec.reference.empty()) {
      const Manifest m = read_manifest(spec.reference, reference_sets);
      refuse_real_time(spec.reference, m, reference_sets);
      dirs.insert(dirs.end(), m.plugin_paths.begin(), m.plugin_paths.end());
    }
    reg.scan(dirs);
    check_axes_change_something(spec, points);
    std::set<std::pair<std::size_t, std::size_t>> checked;
    for (const auto& p : points) {
      bool fresh = points.size() == 1;
      for (std::size_t a = 0; a < axes.size(); ++a) fresh |= checked.insert({a, p.choice[a]}).second;
      if (!fresh) continue;
      try {
        Experiment ex(read_manifest(p.manifest, p.sets), reg);
        check_plotted_columns(spec, ex, false, "run " + std::to_string(p.index) + " (" + p.manifest.string() + ")",
                              units.run);
      } catch (const ManifestError& e) {
        std::string where;
        for (std::size_t a = 0; a < axes.size(); ++a)
          where += (where.empty() ? "" : ", ") + axes[a].name + " = " + axes[a].values[p.choice[a]].label;
        throw SweepInputError("run " + std::to_string(p.index) + " of the sweep (" + where + ") is not valid", e);
      }
    }
    if (!spec.axes.empty()) units.step_axis = step_axis_unit(spec);
    if (!spec.reference.empty()) {
      Experiment ex(read_manifest(spec.reference, reference_sets), reg);
      check_plotted_columns(spec, ex, true, "the reference (" + spec.reference.string() + ")", units.reference);
    }
  } catch (const ManifestError& e) {
    throw SweepInputError("a manifest of the sweep is not valid", e);
  }
}

}  // namespace stride::host::sweep_detail
