// Spec reading: a sweep file into a SweepSpec, every problem reported at its JSON pointer.
#include <algorithm>
#include <cmath>
#include <set>

#include "stride/host/sweep/sweep.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

std::string value_label(const json& v) { return v.is_string() ? v.get<std::string>() : dump_safe(v); }

// A pointer of a "set": a valid JSON pointer that --set can carry (no '=').
bool check_pointer(DocumentChecker& chk, const std::string& where, const std::string& p) {
  std::string why;
  if (p.empty() || p[0] != '/') why = "expected a JSON pointer starting with '/'";
  else if (p.find('=') != std::string::npos) why = "a pointer may not contain '='";
  else try {
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
    if (!chk.object(r, "/reference", {"manifest", "columns", "set", "error_scale", "error_unit"},
                    {"manifest", "columns"}))
      return;
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
    if (!chk.object(a, p, {"name", "pointers", "values", "description", "unit"}, {"name", "values"})) return;
    SweepAxis ax;
    if (auto n = chk.string(a, p, "name")) ax.name = *n;
    if (auto u = chk.string(a, p, "unit")) ax.unit = *u;
    ax.pointers = pointers(a, p);
    if (ax.name.empty() && a.contains("name") && a["name"].is_string())
      chk.error(p + "/name", "expected a non-empty name");
    for (const auto& other : s.axes)
      if (!ax.name.empty() && other.name == ax.name) chk.error(p + "/name", "axis \"" + ax.name + "\" is named twice");
    const std::vector<std::string>& ptrs = ax.pointers;
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
      if (!chk.object(h[k], p, {"file", "title", "column", "scale", "ylabel", "difference", "runs"},
                      {"file", "column", "runs"}))
        continue;
      SweepHistory hi;
      hi.file = chk.string(h[k], p, "file").value_or("");
      if (hi.file.size() < 5 || hi.file.find('/') != std::string::npos ||
          hi.file.substr(hi.file.size() - 4) != ".png" || !files.insert(hi.file).second)
        chk.error(p + "/file",
                  "expected a file name of its own ending in .png (no folders), found \"" + hi.file + "\"");
      hi.title = chk.string(h[k], p, "title").value_or("");
      hi.column = chk.string(h[k], p, "column").value_or("");
      hi.ylabel = chk.string(h[k], p, "ylabel").value_or("");  // "": the column and its unit
      if (auto v = chk.number(h[k], p, "scale", "a non-zero scale", false)) {
        hi.scale = *v;
        if (hi.scale == 0.0) chk.error(p + "/scale", "expected a non-zero scale, found 0");
      }
      if (h[k].contains("difference")) {
        if (!h[k]["difference"].is_boolean())
          chk.error(p + "/difference", "expected true or false, found " + type_name(h[k]["difference"]));
        else hi.difference = h[k]["difference"].get<bool>();
      }
      if (hi.difference && s.reference.empty())
        chk.error(p + "/difference", "a difference needs the sweep's \"reference\"");
      if (h[k].contains("runs")) {  // else chk.object has named it missing
        const json& rs = h[k]["runs"];
        if (!rs.is_array() || rs.empty())
          chk.error(p + "/runs", "expected a non-empty array of runs, found " + type_name(rs));
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
    if (!r.is_object())
      return chk.error(p, "expected \"reference\" or {\"axis\": \"label\", ...}, found " + type_name(r));
    std::vector<std::pair<std::size_t, std::size_t>> pick;
    for (std::size_t a = 0; a < s.axes.size(); ++a) {
      const SweepAxis& ax = s.axes[a];
      if (!r.contains(ax.name)) {
        if (ax.values.size() > 1)
          chk.error(p, "name a value of axis \"" + ax.name + "\" (it has " + std::to_string(ax.values.size()) + ")");
        else pick.emplace_back(a, 0);
        continue;
      }
      const std::string label = value_label(r[ax.name]);
      auto v =
          std::find_if(ax.values.begin(), ax.values.end(), [&](const SweepAxisValue& x) { return x.label == label; });
      if (v == ax.values.end())
        chk.error(p + "/" + pointer_escape(ax.name), "axis \"" + ax.name + "\" has no value \"" + label + "\"");
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
  if (!d.is_object())
    throw ManifestError({{file.string(), "", "expected a sweep object {...}, found " + type_name(d)}});
  SweepSpec s;
  s.file = file;
  SweepReader read{chk, file.parent_path()};
  chk.object(d, "",
             {"$schema", "format", "title", "description", "manifest", "reference", "axes", "step_axis", "stable_error",
              "usable_error", "set", "histories", "output"},
             {"manifest", "axes"});
  if (d.contains("format") && !(d["format"].is_number_integer() && d["format"].get<long long>() == 1))
    chk.error("/format", "expected format version 1, found " + type_name(d["format"]));
  for (const char* k : {"$schema", "title", "description"})  // $schema: for editors (docs/schema/), not used
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
    if (!axes.is_array() || axes.empty())
      chk.error("/axes", "expected a non-empty array of axes, found " + type_name(axes));
    else
      for (std::size_t i = 0; i < axes.size(); ++i) read.axis(axes[i], "/axes/" + std::to_string(i), s);
  }
  read.step_axis(d, s);
  if (d.contains("histories")) read.histories(d["histories"], s);
  if (!chk.diags.empty()) throw ManifestError(chk.diags);
  return s;
}

}  // namespace stride::host
