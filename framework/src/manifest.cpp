// Reading a manifest and checking its structure (types, keys, ranges). Checks that need the
// plugins (parameters, ports, units, loops) are in graph.cpp.
#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "stride/host/experiment.hpp"

namespace stride::host {
namespace fs = std::filesystem;

ManifestError::ManifestError(std::vector<Diagnostic> d)
    : std::runtime_error([&] {
        std::string s;
        for (const auto& x : d) s += (s.empty() ? "" : "\n") + x.str();
        return s;
      }()),
      diags_(std::move(d)) {}

std::string closest(const std::string& word, const std::vector<std::string>& candidates) {
  auto distance = [](const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= b.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    return prev[b.size()];
  };
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    auto d = distance(word, c);
    if (d < best_d) best_d = d, best = c;
  }
  return best;
}

namespace {

std::string type_name(const json& v) {
  if (v.is_number_integer()) return "integer " + v.dump();
  if (v.is_number()) return "number " + v.dump();
  if (v.is_string()) return "string " + v.dump();
  if (v.is_boolean()) return "boolean " + v.dump();
  if (v.is_null()) return "null";
  if (v.is_array()) return "an array";
  return "an object";
}

std::string escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

// Collects diagnostics while walking the document.
struct Checker {
  std::string file;
  std::vector<Diagnostic> diags;

  void error(const std::string& ptr, std::string msg) { diags.push_back({file, ptr, std::move(msg)}); }

  // Unknown keys get a "did you mean"; missing required keys are reported.
  bool object(const json& v, const std::string& ptr, const std::vector<std::string>& allowed,
              const std::vector<std::string>& required) {
    if (!v.is_object()) {
      error(ptr, "expected an object, found " + type_name(v));
      return false;
    }
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (std::find(allowed.begin(), allowed.end(), it.key()) != allowed.end()) continue;
      std::string msg = "unknown key \"" + it.key() + "\"";
      if (auto c = closest(it.key(), allowed); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      std::string all;
      for (const auto& a : allowed) all += (all.empty() ? "" : ", ") + a;
      error(ptr + "/" + escape(it.key()), msg + "; allowed keys: " + all);
    }
    for (const auto& r : required)
      if (!v.contains(r)) error(ptr + "/" + escape(r), "required key \"" + r + "\" is missing");
    return true;
  }

  std::optional<double> number(const json& obj, const std::string& ptr, const std::string& key,
                               const char* expected, bool positive, std::optional<double> def = {}) {
    if (!obj.contains(key)) return def;
    const json& v = obj[key];
    if (!v.is_number() || !std::isfinite(v.get<double>()) || (positive && v.get<double>() <= 0)) {
      error(ptr + "/" + key, std::string("expected ") + expected + ", found " + type_name(v));
      return std::nullopt;
    }
    return v.get<double>();
  }

  std::optional<std::string> string(const json& obj, const std::string& ptr, const std::string& key,
                                    const std::vector<std::string>& choices = {}) {
    if (!obj.contains(key)) return std::nullopt;
    const json& v = obj[key];
    std::string allowed;
    for (const auto& c : choices) allowed += (allowed.empty() ? "\"" : ", \"") + c + "\"";
    if (!allowed.empty()) allowed += "\"";
    if (!v.is_string()) {
      error(ptr + "/" + key, "expected a string" + (allowed.empty() ? "" : " (one of " + allowed + ")") +
                                 ", found " + type_name(v));
      return std::nullopt;
    }
    auto s = v.get<std::string>();
    if (!choices.empty() && std::find(choices.begin(), choices.end(), s) == choices.end()) {
      std::string msg = "expected one of " + allowed + ", found \"" + s + "\"";
      if (auto c = closest(s, choices); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      error(ptr + "/" + key, msg);
      return std::nullopt;
    }
    return s;
  }

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
    if (!object(v, p, {"plugin", "parameters"}, {"plugin"})) return std::nullopt;
    auto name = string(v, p, "plugin");
    if (!name) return std::nullopt;
    PluginRef r{*name, json::object(), p};
    if (v.contains("parameters")) {
      if (!v["parameters"].is_object()) error(p + "/parameters", "expected an object, found " + type_name(v["parameters"]));
      else r.parameters = v["parameters"];
    }
    return r;
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

// "sub.port", "sub.port[i]" or "sub.port[i:j]" -> (sub, port, first, count)
bool split_endpoint(const std::string& s, std::string& sub, std::string& port, std::size_t& first,
                    std::size_t& count) {
  if (!split_endpoint(s, sub, port)) return false;
  first = count = 0;
  auto open = port.find('[');
  if (open == std::string::npos) return port.find(']') == std::string::npos;
  if (port.back() != ']' || open == 0) return false;
  std::string range = port.substr(open + 1, port.size() - open - 2);
  port = port.substr(0, open);
  try {
    std::size_t used = 0;
    auto colon = range.find(':');
    if (colon == std::string::npos) {
      first = std::stoul(range, &used);
      if (used != range.size()) return false;
      count = 1;
      return true;
    }
    first = std::stoul(range.substr(0, colon), &used);
    if (used != colon) return false;
    std::string rest = range.substr(colon + 1);
    std::size_t last = std::stoul(rest, &used);
    if (used != rest.size() || last <= first) return false;
    count = last - first;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

// "variables": {"h_M": 0.01} lets any value elsewhere be the string "$h_M"; --set
// /variables/h_M=0.02 then changes every use at once.
void substitute_variables(json& doc, Checker& chk) {
  if (!doc.is_object() || !doc.contains("variables")) return;
  const json vars = doc["variables"];
  if (!vars.is_object()) {
    chk.error("/variables", "expected an object {\"name\": value}, found " + type_name(vars));
    return;
  }
  std::vector<std::string> names;
  for (auto it = vars.begin(); it != vars.end(); ++it) names.push_back(it.key());
  std::function<void(json&, const std::string&)> walk = [&](json& v, const std::string& ptr) {
    if (v.is_string()) {
      const auto& s = v.get_ref<const std::string&>();
      if (s.size() > 1 && s[0] == '$') {
        auto it = vars.find(s.substr(1));
        if (it == vars.end()) {
          std::string msg = "unknown variable \"" + s.substr(1) + "\"";
          if (auto c = closest(s.substr(1), names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
          chk.error(ptr, msg + "; variables: " + (names.empty() ? std::string("(none)") : json(names).dump()));
        } else {
          v = *it;
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
}

void apply_override(json& doc, const std::string& text, Checker& chk) {
  auto eq = text.find('=');
  if (eq == std::string::npos || text.empty() || text[0] != '/') {
    chk.error("", "--set " + text + ": expected POINTER=VALUE with a JSON pointer such as /coupling/macro_step=0.01");
    return;
  }
  std::string ptr = text.substr(0, eq), value = text.substr(eq + 1);
  json v = json::parse(value, nullptr, false);
  if (v.is_discarded()) v = value;  // plain strings need no quotes on the command line
  try {
    json::json_pointer jp(ptr);
    if (!jp.empty() && !doc.contains(jp.parent_pointer())) {
      chk.error(ptr, "--set: the parent " + jp.parent_pointer().to_string() + " does not exist in the manifest");
      return;
    }
    doc[jp] = v;
  } catch (const json::exception& e) {
    chk.error(ptr, std::string("--set: ") + e.what());
  }
}

}  // namespace

Manifest load_manifest(const fs::path& file, const std::vector<std::string>& overrides) {
  Checker chk{file.string(), {}};
  std::ifstream in(file);
  if (!in) throw ManifestError({{file.string(), "", "cannot open the file"}});
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();

  Manifest m;
  m.file = file;
  try {
    m.document = json::parse(text);
  } catch (const json::parse_error& e) {
    std::size_t line = 1, col = 1;
    for (std::size_t i = 0; i < e.byte - 1 && i < text.size(); ++i) {
      if (text[i] == '\n') ++line, col = 1;
      else ++col;
    }
    std::string what = e.what();
    if (auto p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
    throw ManifestError({{file.string(), "", "invalid JSON at line " + std::to_string(line) + ", column " +
                                                 std::to_string(col) + ": " + what}});
  }
  for (const auto& o : overrides) apply_override(m.document, o, chk);
  if (!chk.diags.empty()) throw ManifestError(chk.diags);
  substitute_variables(m.document, chk);
  if (!chk.diags.empty()) throw ManifestError(chk.diags);

  const json& d = m.document;
  if (!chk.object(d, "", {"format", "title", "description", "variables", "plugin_paths", "subsystems",
                          "connections", "coupling", "record", "monitor", "output"},
                  {"format", "subsystems", "coupling"}))
    throw ManifestError(chk.diags);

  if (d.contains("format") && !(d["format"].is_number_integer() && d["format"].get<int>() == 1))
    chk.error("/format", "expected format version 1, found " + type_name(d["format"]));
  for (const char* k : {"title", "description"})
    if (d.contains(k) && !d[k].is_string()) chk.error(std::string("/") + k, "expected a string, found " + type_name(d[k]));

  const fs::path base = file.parent_path();
  if (d.contains("plugin_paths")) {
    if (!d["plugin_paths"].is_array()) chk.error("/plugin_paths", "expected an array of folder names, found " + type_name(d["plugin_paths"]));
    else
      for (std::size_t i = 0; i < d["plugin_paths"].size(); ++i) {
        const json& p = d["plugin_paths"][i];
        if (!p.is_string()) chk.error("/plugin_paths/" + std::to_string(i), "expected a folder name, found " + type_name(p));
        else m.plugin_paths.push_back(fs::path(p.get<std::string>()).is_absolute() ? fs::path(p.get<std::string>()) : base / p.get<std::string>());
      }
  }

  // subsystems, in the order written (json objects are sorted by key; the order matters for
  // consistent initialization and as the default Gauss–Seidel order)
  if (d.contains("subsystems")) {
    const json& subs = d["subsystems"];
    std::vector<std::string> subsystem_order;
    if (subs.is_object()) {
      auto ordered = nlohmann::ordered_json::parse(text, nullptr, false);
      if (!ordered.is_discarded() && ordered.contains("subsystems") && ordered["subsystems"].is_object())
        for (auto it = ordered["subsystems"].begin(); it != ordered["subsystems"].end(); ++it)
          if (subs.contains(it.key())) subsystem_order.push_back(it.key());
      for (auto it = subs.begin(); it != subs.end(); ++it)
        if (std::find(subsystem_order.begin(), subsystem_order.end(), it.key()) == subsystem_order.end())
          subsystem_order.push_back(it.key());
    }
    if (!subs.is_object() || subs.empty())
      chk.error("/subsystems", "expected an object with at least one subsystem, found " + type_name(subs));
    else
      for (const auto& key : subsystem_order) {
        auto it = subs.find(key);
        const std::string p = "/subsystems/" + escape(it.key());
        if (it.key().find('.') != std::string::npos || it.key().empty()) {
          chk.error(p, "subsystem names must be non-empty and contain no '.', found \"" + it.key() + "\"");
          continue;
        }
        if (!chk.object(*it, p, {"plugin", "parameters", "step", "integrator", "formulation", "description"},
                        {"plugin", "step"}))
          continue;
        SubsystemConfig s;
        s.name = it.key();
        s.pointer = p;
        if (auto name = chk.string(*it, p, "plugin")) s.plugin = PluginRef{*name, json::object(), p + "/plugin"};
        if (it->contains("parameters")) {
          if (!(*it)["parameters"].is_object())
            chk.error(p + "/parameters", "expected an object, found " + type_name((*it)["parameters"]));
          else s.plugin.parameters = (*it)["parameters"];
        }
        s.plugin.pointer = p;
        s.step = chk.number(*it, p, "step", "a positive step size in s", true).value_or(0.0);
        s.integrator = chk.plugin_ref(*it, p, "integrator");
        s.formulation = chk.plugin_ref(*it, p, "formulation");
        if (s.integrator && s.formulation)
          chk.error(p + "/formulation", "a subsystem takes an integrator or a formulation, not both");
        m.subsystems.push_back(std::move(s));
      }
  }

  // connections
  if (d.contains("connections")) {
    const json& cs = d["connections"];
    if (!cs.is_array()) chk.error("/connections", "expected an array, found " + type_name(cs));
    else
      for (std::size_t i = 0; i < cs.size(); ++i) {
        const std::string p = "/connections/" + std::to_string(i);
        if (!chk.object(cs[i], p, {"from", "to", "extrapolator", "description"}, {"from", "to"})) continue;
        ConnectionConfig c;
        c.pointer = p;
        auto from = chk.string(cs[i], p, "from");
        auto to = chk.string(cs[i], p, "to");
        if (from && !split_endpoint(*from, c.from_subsystem, c.from_port, c.from_first, c.from_count))
          chk.error(p + "/from", "expected \"subsystem.port\", \"subsystem.port[i]\" or \"subsystem.port[i:j]\", found \"" + *from + "\"");
        if (to && !split_endpoint(*to, c.to_subsystem, c.to_port, c.to_first, c.to_count))
          chk.error(p + "/to", "expected \"subsystem.port\", \"subsystem.port[i]\" or \"subsystem.port[i:j]\", found \"" + *to + "\"");
        c.from_text = from.value_or("");
        c.to_text = to.value_or("");
        c.extrapolator = chk.plugin_ref(cs[i], p, "extrapolator").value_or(PluginRef{"zoh", json::object(), p});
        m.connections.push_back(std::move(c));
      }
  }

  // coupling
  if (d.contains("coupling")) {
    const json& c = d["coupling"];
    const std::string p = "/coupling";
    if (chk.object(c, p, {"scheme", "macro_step", "start", "end", "order", "synchronization", "align"},
                   {"scheme", "macro_step", "end"})) {
      auto scheme = chk.string(c, p, "scheme", {"jacobi", "gauss_seidel", "multirate"});
      if (scheme) m.coupling.scheme = *scheme == "jacobi" ? Scheme::jacobi
                                      : *scheme == "gauss_seidel" ? Scheme::gauss_seidel
                                                                  : Scheme::multirate;
      m.coupling.macro_step = chk.number(c, p, "macro_step", "a positive macro step in s", true).value_or(0.0);
      m.coupling.start = chk.number(c, p, "start", "a start time in s", false, 0.0).value_or(0.0);
      auto end = chk.number(c, p, "end", "an end time in s", false);
      if (end) {
        m.coupling.end = *end;
        if (*end <= m.coupling.start)
          chk.error(p + "/end", "expected an end time after the start time " + json(m.coupling.start).dump() +
                                    " s, found " + json(*end).dump());
      }
      if (auto sync = chk.string(c, p, "synchronization", {"slowest_first", "fastest_first"}))
        m.coupling.synchronization = *sync == "slowest_first" ? Synchronization::slowest_first
                                                              : Synchronization::fastest_first;
      if (c.contains("align")) {
        if (!c["align"].is_boolean()) chk.error(p + "/align", "expected true or false, found " + type_name(c["align"]));
        else m.coupling.align = c["align"].get<bool>();
      }
      if (c.contains("order")) {
        if (!c["order"].is_array()) chk.error(p + "/order", "expected an array of subsystem names, found " + type_name(c["order"]));
        else
          for (std::size_t i = 0; i < c["order"].size(); ++i) {
            if (!c["order"][i].is_string()) chk.error(p + "/order/" + std::to_string(i), "expected a subsystem name, found " + type_name(c["order"][i]));
            else m.coupling.order.push_back(c["order"][i].get<std::string>());
          }
      }
    }
  }

  // record
  if (d.contains("record")) {
    const json& r = d["record"];
    if (chk.object(r, "/record", {"interval", "variables"}, {})) {
      m.record.interval = chk.number(r, "/record", "interval", "a positive interval in s", true, 0.0).value_or(0.0);
      if (r.contains("variables")) {
        if (!r["variables"].is_array()) chk.error("/record/variables", "expected an array of \"subsystem.port\", found " + type_name(r["variables"]));
        else
          for (std::size_t i = 0; i < r["variables"].size(); ++i) {
            const json& v = r["variables"][i];
            std::string a, b;
            if (!v.is_string() || !split_endpoint(v.get<std::string>(), a, b))
              chk.error("/record/variables/" + std::to_string(i), "expected \"subsystem.port\", found " + type_name(v));
            else m.record.variables.push_back(v.get<std::string>());
          }
      }
    }
  }

  // monitor
  if (d.contains("monitor")) {
    const json& mo = d["monitor"];
    if (chk.object(mo, "/monitor", {"bounds", "energy_residual_limit"}, {})) {
      m.monitor.energy_residual_limit =
          chk.number(mo, "/monitor", "energy_residual_limit", "a positive energy in J", true, m.monitor.energy_residual_limit)
              .value_or(m.monitor.energy_residual_limit);
      if (mo.contains("bounds")) {
        const json& b = mo["bounds"];
        if (!b.is_object()) chk.error("/monitor/bounds", "expected an object {\"subsystem.port\": [min, max]}, found " + type_name(b));
        else
          for (auto it = b.begin(); it != b.end(); ++it) {
            const std::string p = "/monitor/bounds/" + escape(it.key());
            std::string a, c;
            std::size_t f, n;
            if (!split_endpoint(it.key(), a, c, f, n)) {
              chk.error(p, "expected a key \"subsystem.port\" or \"subsystem.port[i]\", found \"" + it.key() + "\"");
              continue;
            }
            const json& v = *it;
            auto bound = [&](const json& x, double inf) -> std::optional<double> {
              if (x.is_null()) return inf;
              if (x.is_number()) return x.get<double>();
              return std::nullopt;
            };
            OutputBound ob;
            ob.variable = it.key();
            ob.pointer = p;
            if (!v.is_array() || v.size() != 2 || !bound(v[0], 0) || !bound(v[1], 0) ||
                *bound(v[0], -INFINITY) > *bound(v[1], INFINITY)) {
              chk.error(p, "expected [min, max] with min <= max (null for no bound), found " + v.dump());
              continue;
            }
            ob.min = *bound(v[0], -std::numeric_limits<double>::infinity());
            ob.max = *bound(v[1], std::numeric_limits<double>::infinity());
            m.monitor.bounds.push_back(ob);
          }
      }
    }
  }

  if (d.contains("output")) {
    if (!d["output"].is_string() || d["output"].get<std::string>().empty())
      chk.error("/output", "expected a folder name, found " + type_name(d["output"]));
    else m.output = d["output"].get<std::string>();
  } else {
    m.output = fs::path("out") / file.stem();
  }

  if (!chk.diags.empty()) throw ManifestError(chk.diags);
  return m;
}

}  // namespace stride::host
