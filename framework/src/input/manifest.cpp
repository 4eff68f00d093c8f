// Reading a manifest and checking its structure (types, keys, ranges). Checks that need the
// plugins (parameters, ports, units, loops) are the graph builder's (graph/graph_builder.hpp).
#include <algorithm>
#include <cmath>
#include <functional>
#include <set>

#include "input/manifest_coupling.hpp"
#include "input/plugin_version.hpp"
#include "stride/host/input/manifest.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

std::string escape(const std::string& key) { return pointer_escape(key); }

// Collects diagnostics while walking the document.
struct Checker : DocumentChecker {
  // "name" or {"plugin": "name", "parameters": {...}}
  std::optional<PluginRef> plugin_ref(const json& obj, const std::string& ptr, const std::string& key) {
    if (!obj.contains(key)) return std::nullopt;
    const json& v = obj[key];
    const std::string p = ptr + "/" + key;
    if (v.is_string()) return PluginRef{v.get<std::string>(), json::object(), p};
    if (!v.is_object()) {
      error(p, "expected a plugin name or {\"plugin\": name, \"parameters\": {...}}, found " + type_name(v));
      return std::nullopt;
    }
    if (!object(v, p, {"plugin", "version", "parameters"}, {"plugin"})) return std::nullopt;
    auto name = string(v, p, "plugin");
    if (!name) return std::nullopt;
    PluginRef r{*name, json::object(), p};
    version(v, p, r);
    if (v.contains("parameters")) {
      if (!v["parameters"].is_object())
        error(p + "/parameters", "expected an object, found " + type_name(v["parameters"]));
      else r.parameters = v["parameters"];
    }
    return r;
  }
  // "version": ">=1.2, <2" next to "plugin" in `obj` (at `ptr`), into r.
  void version(const json& obj, const std::string& ptr, PluginRef& r) {
    if (!obj.contains("version")) return;
    r.version_pointer = ptr + "/version";
    const json& v = obj["version"];
    if (!v.is_string()) {
      error(r.version_pointer,
            "expected a version requirement such as \">=1.2\" or \">=1.2, <2\" (a string), found " + type_name(v));
      return;
    }
    std::vector<VersionClause> clauses;
    if (auto why = parse_requirement(v.get<std::string>(), clauses); !why.empty()) {
      error(r.version_pointer,
            "expected a version requirement: clauses OP VERSION with OP one of >=, >, <=, <, == and "
            "VERSION dotted integers, separated by commas (\">=1.2, <2\"); in \"" +
                v.get<std::string>() + "\": " + why);
      return;
    }
    r.version = v.get<std::string>();
  }
};

// "sub.port" -> (sub, port)
bool split_endpoint(const std::string& s, std::string& sub, std::string& port) {
  auto dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size()) return false;
  sub = s.substr(0, dot);
  port = s.substr(dot + 1);
  return true;
}

// An element index as written: decimal digits only (no sign, no blanks), at most 9 of them,
// so that no arithmetic on it can wrap.
bool parse_index(const std::string& s, std::size_t& out) {
  if (s.empty() || s.size() > 9) return false;
  out = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    out = out * 10 + static_cast<std::size_t>(c - '0');
  }
  return true;
}

// "sub.port", "sub.port[i]" or "sub.port[i:j]" (elements i..j-1, j > i) -> (sub, port, first,
// count); count 0 means the whole port.
bool split_endpoint(const std::string& s, std::string& sub, std::string& port, std::size_t& first,
                    std::size_t& count) {
  if (!split_endpoint(s, sub, port)) return false;
  first = count = 0;
  auto open = port.find('[');
  if (open == std::string::npos) return port.find(']') == std::string::npos;
  if (port.back() != ']' || open == 0) return false;
  const std::string range = port.substr(open + 1, port.size() - open - 2);
  port = port.substr(0, open);
  if (port.find_first_of("[]") != std::string::npos) return false;
  const auto colon = range.find(':');
  if (colon == std::string::npos) {
    count = 1;
    return parse_index(range, first);
  }
  std::size_t last = 0;
  if (!parse_index(range.substr(0, colon), first) || !parse_index(range.substr(colon + 1), last) || last <= first)
    return false;
  count = last - first;
  return true;
}

// A connection's end: "sub.port", "sub.port[i]", "sub.port[i:j]"; at an FMU also "sub.NAME" with
// NAME as written (a variable with brackets in its name, such as "x[1,2]": the builder resolves it).
bool split_connection_end(const std::string& s, const Manifest& m, std::string& sub, std::string& port,
                          std::size_t& first, std::size_t& count) {
  if (split_endpoint(s, sub, port, first, count)) return true;
  first = count = 0;
  if (!split_endpoint(s, sub, port)) return false;
  const std::string name = sub;
  return std::any_of(m.subsystems.begin(), m.subsystems.end(),
                     [&](const SubsystemConfig& c) { return c.name == name && !c.fmu.empty(); });
}

// A variable that no "$name" reads would change nothing (a typo such as --set /variables/hM=0.05
// for h_M): an error at it, naming the --set that made it, and the variables that are read.
void refuse_unused_variables(const std::vector<std::string>& names, const std::map<std::string, std::string>& uses,
                             const std::vector<std::string>& overrides, Checker& chk) {
  std::vector<std::string> used;
  for (const auto& [ptr, name] : uses)
    if (std::find(used.begin(), used.end(), name) == used.end()) used.push_back(name);
  for (const std::string& name : names) {
    if (std::find(used.begin(), used.end(), name) != used.end()) continue;
    const std::string ptr = "/variables/" + escape(name);
    std::string msg = "variable \"" + name + "\" is not used: no value in the manifest is \"$" + name + "\"";
    for (const std::string& o : overrides)
      if (o.rfind(ptr + "=", 0) == 0 || o.rfind(ptr + "/", 0) == 0) msg = "--set " + o + ": " + msg;
    if (auto c = closest(name, used); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
    chk.error(ptr, msg + "; variables used: " + (used.empty() ? std::string("(none)") : dump_safe(json(used))));
  }
}

// "variables": {"h_M": 0.01} lets any value elsewhere be the string "$h_M"; --set
// /variables/h_M=0.02 then changes every use at once. Each place substituted is remembered, so
// that a value rejected there is also reported at the variable.
void substitute_variables(json& doc, Checker& chk, std::map<std::string, std::string>& uses,
                          const std::vector<std::string>& overrides,
                          const std::map<std::string, std::string>* read_by_file) {
  if (!doc.is_object() || !doc.contains("variables")) return;
  const json vars = doc["variables"];
  if (!vars.is_object()) {
    chk.error("/variables", "expected an object {\"name\": value}, found " + type_name(vars));
    return;
  }
  std::vector<std::string> names;
  for (auto it = vars.begin(); it != vars.end(); ++it) names.push_back(it.key());
  // Depth is bounded by the reader's nesting limit.
  std::function<void(json&, const std::string&)> walk = [&](json& v, const std::string& ptr) {
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (s.size() > 1 && s[0] == '$') {
        const std::string name = s.substr(1);
        auto it = vars.find(name);
        if (it == vars.end()) {
          std::string msg = "unknown variable \"" + name + "\"";
          if (auto c = closest(name, names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
          chk.error(ptr, msg + "; variables: " + (names.empty() ? std::string("(none)") : dump_safe(json(names))));
        } else {
          v = *it;
          uses[ptr] = name;
        }
      }
    } else if (v.is_object()) {
      for (auto it = v.begin(); it != v.end(); ++it) walk(*it, ptr + "/" + escape(it.key()));
    } else if (v.is_array()) {
      for (std::size_t i = 0; i < v.size(); ++i) walk(v[i], ptr + "/" + std::to_string(i));
    }
  };
  for (auto it = doc.begin(); it != doc.end(); ++it)
    if (it.key() != "variables") walk(*it, "/" + escape(it.key()));
  if (!read_by_file) return;
  std::map<std::string, std::string> reads = uses;
  for (const auto& [ptr, name] : *read_by_file) reads.emplace("file:" + ptr, name);
  refuse_unused_variables(names, reads, overrides, chk);
}

void apply_override(json& doc, const std::string& text, Checker& chk, const JsonLimits& limits) {
  auto eq = text.find('=');
  if (eq == std::string::npos || text.empty() || text[0] != '/') {
    chk.error("", "--set " + text + ": expected POINTER=VALUE with a JSON pointer such as /coupling/macro_step=0.01");
    return;
  }
  const std::string ptr = text.substr(0, eq), value = text.substr(eq + 1);
  try {
    json::json_pointer jp(ptr);
    // The value may nest only as deep as the document's limit leaves below the pointer.
    std::vector<Diagnostic> problems;
    json v;
    if (auto parsed = parse_json(value, chk.file, problems, limits, ptr)) {
      v = std::move(*parsed);
    } else {
      const bool syntax_only = std::all_of(problems.begin(), problems.end(), [](const Diagnostic& d) {
        return d.message.rfind("invalid JSON", 0) == 0;
      });
      if (!syntax_only) {
        for (auto& d : problems) chk.error(d.pointer, "--set: " + d.message);
        return;
      }
      v = value;  // not JSON: a plain string, which needs no quotes on the command line
    }
    const json::json_pointer parent = jp.parent_pointer();
    // A plugin's or FMU's "parameters" object, and the optional "record" and "real_time"
    // sections (`stride run model.fmu --set /record/event_rows=true`, `--real-time`), are
    // created for their first value.
    const bool section = parent.to_string() == "/record" || parent.to_string() == "/real_time" ||
                         (!parent.empty() && parent.back() == "parameters");
    if (!jp.empty() && section && !doc.contains(parent) && doc.contains(parent.parent_pointer()) &&
        doc[parent.parent_pointer()].is_object())
      doc[parent] = json::object();
    if (!jp.empty() && !doc.contains(parent)) {
      chk.error(ptr, "--set: the parent " + parent.to_string() + " does not exist in the manifest");
      return;
    }
    json& target = doc[parent];
    if (!jp.empty() && target.is_array()) {
      // An index may replace an element or append one ("-" or the size); a larger index would
      // silently grow the array with nulls.
      const std::string last = jp.back();
      std::size_t index = 0;
      if (last != "-" && (!parse_index(last, index) || index > target.size())) {
        chk.error(ptr, "--set: expected an index of " + parent.to_string() + " from 0 to " +
                           std::to_string(target.size()) + " (or \"-\" to append), found \"" + last + "\"");
        return;
      }
    } else if (!jp.empty() && !target.is_object()) {
      chk.error(ptr, "--set: " + parent.to_string() + " is " + type_name(target) + ", not an object or array");
      return;
    }
    doc[jp] = std::move(v);
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (auto q = what.find("] "); q != std::string::npos) what = what.substr(q + 2);
    chk.error(ptr, "--set: " + what);
  }
}

// The manifest's sections, one reader each, in the order their problems are reported. Each
// reads its part of the document `d` into `m` and reports what it cannot use.

// "$schema", "format", "title", "description".
void read_header(Checker& chk, const json& d) {
  if (d.contains("format") && !(d["format"].is_number_integer() && d["format"].get<int>() == 1))
    chk.error("/format", "expected format version 1, found " + type_name(d["format"]));
  // "$schema": the JSON Schema editors complete and check the file with (docs/schema/); not used.
  for (const char* k : {"$schema", "title", "description"})
    if (d.contains(k) && !d[k].is_string())
      chk.error(std::string("/") + k, "expected a string, found " + type_name(d[k]));
}

// "plugin_paths": folders relative to the manifest's folder `base`.
void read_plugin_paths(Checker& chk, const json& d, const fs::path& base, Manifest& m) {
  if (!d.contains("plugin_paths")) return;
  const json& paths = d["plugin_paths"];
  if (!paths.is_array()) {
    chk.error("/plugin_paths", "expected an array of folder names, found " + type_name(paths));
    return;
  }
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const json& p = paths[i];
    if (!p.is_string())
      chk.error("/plugin_paths/" + std::to_string(i), "expected a folder name, found " + type_name(p));
    else
      m.plugin_paths.push_back(fs::path(p.get<std::string>()).is_absolute() ? fs::path(p.get<std::string>())
                                                                            : base / p.get<std::string>());
  }
}

// The subsystems' names in the order written (json objects are sorted by key; the order matters
// for consistent initialization and as the default Gauss–Seidel order), read again from `text`.
std::vector<std::string> subsystem_order(const json& subs, const std::string& text) {
  std::vector<std::string> order;
  auto ordered = nlohmann::ordered_json::parse(text, nullptr, false);
  if (!ordered.is_discarded() && ordered.contains("subsystems") && ordered["subsystems"].is_object())
    for (auto it = ordered["subsystems"].begin(); it != ordered["subsystems"].end(); ++it)
      if (subs.contains(it.key())) order.push_back(it.key());
  for (auto it = subs.begin(); it != subs.end(); ++it)
    if (std::find(order.begin(), order.end(), it.key()) == order.end()) order.push_back(it.key());
  return order;
}

// One subsystem `s` named `name` at pointer `p`.
std::optional<SubsystemConfig> read_subsystem(Checker& chk, const std::string& name, const json& s,
                                              const std::string& p, const fs::path& base) {
  if (name.find('.') != std::string::npos || name.empty()) {
    chk.error(p, "subsystem names must be non-empty and contain no '.', found \"" + name + "\"");
    return std::nullopt;
  }
  if (!chk.object(s, p, {"plugin", "version", "fmu", "parameters", "step", "integrator", "formulation", "description"},
                  {"step"}))
    return std::nullopt;
  SubsystemConfig sc;
  sc.name = name;
  sc.pointer = p;
  // A plugin by name, or an FMU file (relative to the manifest's folder).
  if (s.contains("plugin") == s.contains("fmu"))
    chk.error(p + (s.contains("plugin") ? "/fmu" : "/plugin"),
              "a subsystem names either a plugin (\"plugin\": name) or an FMU file (\"fmu\": \"path/model.fmu\"), " +
                  std::string(s.contains("plugin") ? "not both" : "found neither"));
  if (auto plugin = chk.string(s, p, "plugin")) sc.plugin = PluginRef{*plugin, json::object(), p + "/plugin"};
  if (auto f = chk.string(s, p, "fmu")) {
    if (f->empty()) chk.error(p + "/fmu", "expected the path of an FMU file, found an empty string");
    else sc.fmu = (fs::path(*f).is_absolute() ? fs::path(*f) : base / *f).lexically_normal();
  }
  if (s.contains("parameters")) {
    if (!s["parameters"].is_object())
      chk.error(p + "/parameters", "expected an object, found " + type_name(s["parameters"]));
    else sc.plugin.parameters = s["parameters"];
  }
  sc.plugin.pointer = p;
  chk.version(s, p, sc.plugin);
  sc.step = chk.quantity(s, p, "step", "a positive step size in s", "s", true).value_or(0.0);
  sc.integrator = chk.plugin_ref(s, p, "integrator");
  sc.formulation = chk.plugin_ref(s, p, "formulation");
  if (sc.integrator && sc.formulation)
    chk.error(p + "/formulation", "a subsystem takes an integrator or a formulation, not both");
  return sc;
}

void read_subsystems(Checker& chk, const json& d, const std::string& text, const fs::path& base, Manifest& m) {
  if (!d.contains("subsystems")) return;
  const json& subs = d["subsystems"];
  std::vector<std::string> order;
  if (subs.is_object()) {
    for (auto it = subs.begin(); it != subs.end(); ++it) m.declared_subsystems.push_back(it.key());
    order = subsystem_order(subs, text);
  }
  if (!subs.is_object() || subs.empty()) {
    chk.error("/subsystems", "expected an object with at least one subsystem, found " + type_name(subs));
    return;
  }
  for (const auto& key : order)
    if (auto sc = read_subsystem(chk, key, subs[key], "/subsystems/" + escape(key), base))
      m.subsystems.push_back(std::move(*sc));
}

// A connection's "transformation" {"factor", "offset"} and "unit_conversion".
void read_transformation(Checker& chk, const json& c, const std::string& p, ConnectionConfig& out) {
  if (c.contains("unit_conversion")) {
    if (!c["unit_conversion"].is_boolean())
      chk.error(p + "/unit_conversion", "expected true or false (false: values pass in no unit), found " +
                                            type_name(c["unit_conversion"]));
    else out.unit_conversion = c["unit_conversion"].get<bool>();
  }
  if (!c.contains("transformation")) return;
  const json& t = c["transformation"];
  const std::string tp = p + "/transformation";
  if (!chk.object(t, tp, {"factor", "offset"}, {})) return;
  for (const char* key : {"factor", "offset"}) {
    if (!t.contains(key)) continue;
    if (!t[key].is_number() || !std::isfinite(t[key].get<double>()))
      chk.error(tp + "/" + key, std::string("expected a finite number, found ") + type_name(t[key]));
    else (std::string(key) == "factor" ? out.factor : out.offset) = t[key].get<double>();
  }
}

void read_connections(Checker& chk, const json& d, Manifest& m) {
  if (!d.contains("connections")) return;
  const json& cs = d["connections"];
  if (!cs.is_array()) {
    chk.error("/connections", "expected an array, found " + type_name(cs));
    return;
  }
  for (std::size_t i = 0; i < cs.size(); ++i) {
    const std::string p = "/connections/" + std::to_string(i);
    if (!chk.object(cs[i], p, {"from", "to", "extrapolator", "description", "transformation", "unit_conversion"},
                    {"from", "to"}))
      continue;
    ConnectionConfig c;
    c.pointer = p;
    auto from = chk.string(cs[i], p, "from");
    auto to = chk.string(cs[i], p, "to");
    if (from && !split_connection_end(*from, m, c.from_subsystem, c.from_port, c.from_first, c.from_count))
      chk.error(p + "/from", "expected \"subsystem.port\", \"subsystem.port[i]\" or \"subsystem.port[i:j]\", found \"" +
                                 *from + "\"");
    if (to && !split_connection_end(*to, m, c.to_subsystem, c.to_port, c.to_first, c.to_count))
      chk.error(p + "/to",
                "expected \"subsystem.port\", \"subsystem.port[i]\" or \"subsystem.port[i:j]\", found \"" + *to + "\"");
    c.from_text = from.value_or("");
    c.to_text = to.value_or("");
    c.extrapolator = chk.plugin_ref(cs[i], p, "extrapolator").value_or(PluginRef{"zoh", json::object(), p});
    read_transformation(chk, cs[i], p, c);
    m.connections.push_back(std::move(c));
  }
}

void read_record(Checker& chk, const json& d, Manifest& m) {
  if (!d.contains("record")) return;
  const json& r = d["record"];
  if (!chk.object(r, "/record", {"interval", "variables", "event_rows"}, {})) return;
  m.record.interval = chk.quantity(r, "/record", "interval", "a positive interval in s", "s", true, 0.0).value_or(0.0);
  if (r.contains("event_rows")) {
    if (!r["event_rows"].is_boolean())
      chk.error("/record/event_rows", "expected true or false, found " + type_name(r["event_rows"]));
    else m.record.event_rows = r["event_rows"].get<bool>();
    if (m.record.event_rows && (m.coupling.iteration.enabled || m.coupling.step_control.enabled))
      chk.error("/record/event_rows",
                std::string("event rows cannot be taken back when a macro step is repeated: remove ") +
                    (m.coupling.iteration.enabled ? "/coupling/iteration" : "/coupling/step_control") +
                    " or event_rows");
  }
  if (!r.contains("variables")) return;
  const json& vars = r["variables"];
  if (!vars.is_array()) {
    chk.error("/record/variables", "expected an array of \"subsystem.port\", found " + type_name(vars));
    return;
  }
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const json& v = vars[i];
    std::string a, b;
    if (!v.is_string() || !split_endpoint(v.get<std::string>(), a, b))
      chk.error("/record/variables/" + std::to_string(i), "expected \"subsystem.port\", found " + type_name(v));
    else m.record.variables.push_back(v.get<std::string>());
  }
}

// "exports": ["subsystem.port", ...] (what the ports are is checked against the graph by
// `stride export`).
void read_exports(Checker& chk, const json& d, Manifest& m) {
  if (!d.contains("exports")) return;
  const json& e = d["exports"];
  if (!e.is_array()) {
    chk.error("/exports", "expected an array of \"subsystem.port\" (the ports an exported FMU shows), found " +
                              type_name(e));
    return;
  }
  for (std::size_t i = 0; i < e.size(); ++i) {
    std::string a, b;
    if (!e[i].is_string() || !split_endpoint(e[i].get<std::string>(), a, b))
      chk.error("/exports/" + std::to_string(i), "expected \"subsystem.port\", found " + type_name(e[i]));
    else if (std::find(m.exports.begin(), m.exports.end(), e[i].get<std::string>()) != m.exports.end())
      chk.error("/exports/" + std::to_string(i), "\"" + e[i].get<std::string>() + "\" is listed twice");
    else m.exports.push_back(e[i].get<std::string>());
  }
}

// One output bound "subsystem.port[i:j]": [min, max] or {"min": ..., "max": ...}; null or a
// missing side is no bound.
std::optional<OutputBound> read_bound(Checker& chk, const std::string& key, const json& v, const std::string& p) {
  OutputBound ob;
  if (!split_endpoint(key, ob.subsystem, ob.port, ob.first, ob.count)) {
    chk.error(p,
              "expected a key \"subsystem.port\", \"subsystem.port[i]\" or \"subsystem.port[i:j]\" (i, j element "
              "indices from 0), found \"" +
                  key + "\"");
    return std::nullopt;
  }
  std::optional<double> lo = -INFINITY, hi = INFINITY;
  auto side = [&](const json& x, double none, const std::string& ptr) -> std::optional<double> {
    if (x.is_null()) return none;
    if (x.is_number() && !std::isnan(x.get<double>())) return x.get<double>();
    chk.error(ptr, "expected a number or null (no bound), found " + type_name(x));
    return std::nullopt;
  };
  if (v.is_array() && v.size() == 2) {
    lo = side(v[0], -INFINITY, p + "/0");
    hi = side(v[1], INFINITY, p + "/1");
  } else if (v.is_object()) {
    if (!chk.object(v, p, {"min", "max"}, {})) return std::nullopt;
    if (v.contains("min")) lo = side(v["min"], -INFINITY, p + "/min");
    if (v.contains("max")) hi = side(v["max"], INFINITY, p + "/max");
  } else {
    chk.error(p, "expected [min, max] or {\"min\": min, \"max\": max} (null for no bound), found " + type_name(v));
    return std::nullopt;
  }
  if (!lo || !hi) return std::nullopt;
  if (*lo > *hi) {
    chk.error(p, "expected min <= max, found min " + number_text(*lo) + " > max " + number_text(*hi));
    return std::nullopt;
  }
  ob.variable = key;
  ob.pointer = p;
  ob.min = *lo;
  ob.max = *hi;
  return ob;
}

void read_monitor(Checker& chk, const json& d, Manifest& m) {
  if (!d.contains("monitor")) return;
  const json& mo = d["monitor"];
  if (!chk.object(mo, "/monitor", {"bounds", "energy_residual_limit", "coupling_error"}, {})) return;
  if (mo.contains("coupling_error")) {
    if (!mo["coupling_error"].is_boolean())
      chk.error("/monitor/coupling_error", "expected true or false, found " + type_name(mo["coupling_error"]));
    else m.monitor.coupling_error = mo["coupling_error"].get<bool>();
  }
  m.monitor.energy_residual_limit = chk.quantity(mo, "/monitor", "energy_residual_limit", "a positive energy in J", "J",
                                                 true, m.monitor.energy_residual_limit)
                                        .value_or(m.monitor.energy_residual_limit);
  if (!mo.contains("bounds")) return;
  const json& b = mo["bounds"];
  if (!b.is_object()) {
    chk.error("/monitor/bounds", "expected an object {\"subsystem.port\": [min, max]}, found " + type_name(b));
    return;
  }
  for (auto it = b.begin(); it != b.end(); ++it)
    if (auto ob = read_bound(chk, it.key(), *it, "/monitor/bounds/" + escape(it.key())))
      m.monitor.bounds.push_back(*ob);
}

// "log": plugin messages (stride/log.hpp).
void read_log(Checker& chk, const json& d, Manifest& m) {
  if (!d.contains("log")) return;
  const json& l = d["log"];
  if (!chk.object(l, "/log", {"level", "stderr_level", "repeats"}, {})) return;
  const std::vector<std::string> levels = {"debug", "info", "warning", "error", "off"};
  auto level_of = [&](const std::string& s) {
    return static_cast<LogLevel>(std::find(levels.begin(), levels.end(), s) - levels.begin());
  };
  if (auto v = chk.string(l, "/log", "level", levels)) m.log.level = level_of(*v);
  if (auto v = chk.string(l, "/log", "stderr_level", levels)) m.log.stderr_level = level_of(*v);
  if (l.contains("repeats")) {
    const json& r = l["repeats"];
    if (!r.is_number_integer() || r.get<long long>() < 1 || r.get<long long>() > 1000000)
      chk.error("/log/repeats",
                "expected an integer from 1 to 1000000 (messages one place in a plugin's source may "
                "write per run; later ones are counted), found " +
                    type_name(r));
    else m.log.repeats = static_cast<long>(r.get<long long>());
  }
}

// "real_time": {"factor": F, "interval": s, "overrun": "continue" | "stop", "results": "background" |
// "synchronous"}.
void read_real_time(Checker& chk, const json& d, Manifest& m) {
  if (!d.contains("real_time")) return;
  const json& r = d["real_time"];
  if (!chk.object(r, "/real_time", {"factor", "interval", "overrun", "results"}, {})) return;
  m.real_time.enabled = true;
  m.real_time.factor = chk.number(r, "/real_time", "factor",
                                  "a real-time factor > 0 (simulated seconds per wall second: 1 real time, 2 twice as "
                                  "fast), a finite number",
                                  true, 1.0)
                           .value_or(1.0);
  m.real_time.interval =
      chk.quantity(r, "/real_time", "interval",
                   "a positive time in s: the simulated time between the communication points held to the clock", "s",
                   true, 0.0)
          .value_or(0.0);
  if (auto v = chk.string(r, "/real_time", "overrun", {"continue", "stop"})) m.real_time.stop_on_overrun = *v == "stop";
  if (auto v = chk.string(r, "/real_time", "results", {"background", "synchronous"}))
    m.real_time.background_rows = *v == "background";
}

void read_output(Checker& chk, const json& d, const fs::path& file, Manifest& m) {
  if (!d.contains("output")) {
    m.output = fs::path("out") / file.stem();
    return;
  }
  if (!d["output"].is_string() || d["output"].get<std::string>().empty())
    chk.error("/output", "expected a folder name, found " + type_name(d["output"]));
  else m.output = d["output"].get<std::string>();
}

// The document with the --set overrides applied and the variables substituted; throws
// ManifestError when it cannot be read at all.
DocumentCompletion g_completion = nullptr;

// What the manifest leaves out and a later stage knows is filled in (`filled`).
json read_document(const std::string& text, const fs::path& file, const std::vector<std::string>& overrides,
                   Checker& chk, std::map<std::string, std::string>& variable_uses, std::vector<std::string>& filled) {
  const JsonLimits limits;
  auto document = parse_json(text, file.string(), chk.diags, limits);
  if (!document) throw ManifestError(chk.diags);
  if (!document->is_object())
    throw ManifestError({{file.string(), "", "expected a manifest object {...}, found " + type_name(*document)}});
  // A variable the file itself reads stays used when a --set replaces the value that read it.
  std::map<std::string, std::string> read_by_file;
  {
    json original = *document;
    Checker quiet{chk.file, {}};
    substitute_variables(original, quiet, read_by_file, {}, nullptr);
  }
  for (const auto& o : overrides) apply_override(*document, o, chk, limits);
  if (!chk.diags.empty()) throw ManifestError(chk.diags);
  substitute_variables(*document, chk, variable_uses, overrides, &read_by_file);
  if (g_completion) g_completion(*document, file.parent_path(), filled);
  return std::move(*document);
}

Manifest parse_document(const std::string& text, const fs::path& file, const std::vector<std::string>& overrides) {
  Checker chk{file.string(), {}};
  Manifest m;
  m.file = file;
  m.document = read_document(text, file, overrides, chk, m.variable_uses, m.from_fmus);
  const json& d = m.document;
  chk.object(d, "",
             {"$schema", "format", "title", "description", "variables", "plugin_paths", "subsystems", "connections",
              "coupling", "record", "monitor", "log", "real_time", "output", "exports"},
             {"format", "subsystems", "coupling"});
  const fs::path base = file.parent_path();
  read_header(chk, d);
  read_plugin_paths(chk, d, base, m);
  read_subsystems(chk, d, text, base, m);
  read_connections(chk, d, m);
  read_coupling(chk, d, m);
  read_record(chk, d, m);
  read_exports(chk, d, m);
  read_monitor(chk, d, m);
  read_log(chk, d, m);
  read_real_time(chk, d, m);
  read_output(chk, d, file, m);
  check_sizes(m, chk);
  for (const auto& x : chk.diags)
    if (x.pointer.empty() || x.pointer.rfind("/subsystems", 0) == 0 || x.pointer.rfind("/connections", 0) == 0)
      m.graph_complete = false;
  m.problems = std::move(chk.diags);
  m.converted = std::move(chk.converted);
  return m;
}

}  // namespace

void set_document_completion(DocumentCompletion completion) { g_completion = completion; }

Manifest read_manifest_text(const std::string& text, const fs::path& file, const std::vector<std::string>& overrides) {
  return parse_document(text, file, overrides);
}

Manifest read_manifest(const fs::path& file, const std::vector<std::string>& overrides) {
  return parse_document(read_text_file(file), file, overrides);
}

Manifest load_manifest(const fs::path& file, const std::vector<std::string>& overrides) {
  Manifest m = read_manifest(file, overrides);
  if (!m.problems.empty()) {
    attribute_to_variables(m.problems, m);
    throw ManifestError(m.problems);
  }
  return m;
}

void attribute_to_variables(std::vector<Diagnostic>& diags, const Manifest& m) {
  if (m.variable_uses.empty()) return;
  std::map<std::string, std::vector<std::string>> rejected;  // variable -> "pointer (message)"
  for (auto& d : diags) {
    for (const auto& [use, name] : m.variable_uses) {
      if (d.pointer != use && d.pointer.rfind(use + "/", 0) != 0) continue;
      const std::string where = "/variables/" + pointer_escape(name);
      d.message += " (the value of variable \"" + name + "\", " + where + ")";
      rejected[name].push_back(d.pointer);
      break;
    }
  }
  for (const auto& [name, places] : rejected) {
    diags.push_back({m.file.string(), "/variables/" + pointer_escape(name),
                     "the value " + type_name(m.document.value("variables", json::object()).value(name, json())) +
                         " is rejected where it is used: " + listed(places)});
  }
}

std::vector<std::string> plugin_names(const Manifest& m) {
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const auto& sc : m.subsystems) {
    add(sc.plugin.plugin);
    if (sc.integrator) add(sc.integrator->plugin);
    if (sc.formulation) add(sc.formulation->plugin);
  }
  for (const auto& cc : m.connections) add(cc.extrapolator.plugin);
  return names;
}

}  // namespace stride::host
