#include "stride/host/load/registry.hpp"

#include "load/elf_section.hpp"
#include "stride/host/input/json_input.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <sstream>

#include <dlfcn.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>

#include "fmi/fmu.hpp"
#include "input/units.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

std::map<std::string, std::string> parse_fingerprint(const std::string& s) {
  std::map<std::string, std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ';')) {
    auto eq = item.find('=');
    if (eq == std::string::npos) out[item] = "";
    else out[item.substr(0, eq)] = item.substr(eq + 1);
  }
  return out;
}

// "" when equal, otherwise the list of differing keys with both values.
std::string fingerprint_difference(const std::string& host, const std::string& plugin) {
  auto h = parse_fingerprint(host), p = parse_fingerprint(plugin);
  std::string diff;
  auto add = [&](const std::string& key, const std::string& hv, const std::string& pv) {
    if (!diff.empty()) diff += ", ";
    diff += key + ": host " + hv + ", plugin " + pv;
  };
  for (auto& [k, v] : h) {
    auto it = p.find(k);
    if (it == p.end()) add(k, v, "(missing)");
    else if (it->second != v) add(k, v, it->second);
  }
  for (auto& [k, v] : p)
    if (!h.count(k)) add(k, "(missing)", v);
  return diff;
}

template <class T>
std::shared_ptr<T> keep_loaded(std::unique_ptr<T> obj, const LoadedPlugin& p) {
  // The deleter owns the library: the object's code stays mapped until it is destroyed.
  auto lib = p.library;
  return std::shared_ptr<T>(obj.release(), [lib](T* o) { delete o; });
}

template <class Fn>
auto guarded(const LoadedPlugin& p, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const PluginError&) {
    throw;
  } catch (const ParameterError&) {
    throw;  // names the parameter; reported with its pointer
  } catch (const std::exception& e) {
    throw PluginError(p.info().name, e.what());
  } catch (...) {
    throw PluginError(p.info().name, "unknown exception");
  }
}

}  // namespace

namespace {
fs::path g_home_plugin_folder;
}

void PluginRegistry::set_home_plugin_folder(const fs::path& folder) { g_home_plugin_folder = folder; }

std::vector<fs::path> PluginRegistry::default_search_path() {
  std::vector<fs::path> dirs;
  // The plugins next to the executable (<prefix>/bin/stride -> <prefix>/lib/stride/plugins;
  // in the build tree that is the build's plugin folder), else the build's folder.
  std::error_code ec;
  const fs::path beside = boost::dll::program_location(ec).parent_path().parent_path() / "lib" / "stride" / "plugins";
  const fs::path build_dir = STRIDE_BUILD_PLUGIN_DIR;
  if (!g_home_plugin_folder.empty()) dirs.push_back(g_home_plugin_folder);
  else if (!ec && fs::is_directory(beside, ec)) dirs.push_back(beside);
  else if (fs::is_directory(build_dir, ec)) dirs.push_back(build_dir);
  if (const char* env = std::getenv("STRIDE_PLUGIN_PATH")) {
    std::stringstream ss(env);
    std::string dir;
    while (std::getline(ss, dir, ':'))
      if (!dir.empty()) dirs.emplace_back(dir);
  }
  return dirs;
}

void PluginRegistry::scan(const std::vector<fs::path>& folders) {
  for (const auto& folder : folders) {
    searched_.push_back(folder);
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) {
      refusals_.push_back({folder, "plugin folder does not exist"});
      continue;
    }
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder, ec))
      if (entry.is_regular_file() && entry.path().extension() == ".so") files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& f : files) load(f);
  }
}

namespace {

// What the handshake section .stride_handshake of `file` says against this host, read from the
// file before it is loaded (a library refused here never runs any code); "" when it matches.
std::string section_handshake_problem(const fs::path& file) {
  std::string elf_error;
  const auto text = read_elf_section(file, ".stride_handshake", elf_error);
  if (!text) {
    if (!elf_error.empty()) return "cannot be loaded: " + elf_error;
    return "missing entry point 'stride_plugin' and its handshake section .stride_handshake (not built with "
           "STRIDE_PLUGIN, or against an SDK older than ABI " +
           std::to_string(STRIDE_ABI_VERSION) + ")";
  }
  const std::string note(text->c_str());  // up to the terminating NUL
  const std::string prefix = "stride-plugin;abi=";
  const auto semi = note.find(';', prefix.size());
  if (note.rfind(prefix, 0) != 0 || semi == std::string::npos) return "malformed handshake section .stride_handshake";
  const std::string abi = note.substr(prefix.size(), semi - prefix.size());
  if (abi != std::to_string(STRIDE_ABI_VERSION))
    return "SDK ABI version " + abi + ", host expects " + std::to_string(STRIDE_ABI_VERSION) +
           ": rebuild the plugin against this SDK";
  if (auto diff = fingerprint_difference(STRIDE_FINGERPRINT, note.substr(semi + 1)); !diff.empty())
    return "build fingerprint differs (" + diff + ")";
  return "";
}

// The same checks on the handshake the entry point returned; "" when it matches.
std::string entry_handshake_problem(const StrideHandshake* hs) {
  if (!hs) return "entry point returned no handshake";
  if (hs->abi_version != STRIDE_ABI_VERSION)
    return "SDK ABI version " + std::to_string(hs->abi_version) + ", host expects " +
           std::to_string(STRIDE_ABI_VERSION) + ": rebuild the plugin against this SDK";
  if (hs->struct_size != sizeof(StrideHandshake))
    return "handshake size " + std::to_string(hs->struct_size) + ", host expects " +
           std::to_string(sizeof(StrideHandshake));
  const std::string fp = hs->fingerprint ? hs->fingerprint : "";
  if (auto diff = fingerprint_difference(STRIDE_FINGERPRINT, fp); !diff.empty())
    return "build fingerprint differs (" + diff + ")";
  return "";
}

// "" when the plugin's class is of the kind (and form) its description declares, else what it
// is instead. May throw (plugin code).
std::string kind_problem(const Plugin& plugin, const PluginInfo& info) {
  if (plugin.implements(info.kind, info.form)) return "";
  std::string is;
  for (Kind k : {Kind::subsystem, Kind::integrator, Kind::formulation, Kind::extrapolator})
    for (Form f : {Form::stepper, Form::ode, Form::multibody}) {
      if (k != Kind::subsystem && f != Form::stepper) continue;
      if (plugin.implements(k, f) && is.empty())
        is = k == Kind::subsystem ? std::string("a subsystem of form ") + to_string(f) : to_string(k);
    }
  return "plugin '" + info.name + "' declares kind " + to_string(info.kind) +
         (info.kind == Kind::subsystem ? std::string(" (form ") + to_string(info.form) + ")" : "") +
         ", but its class is " + (is.empty() ? "none of the plugin kinds" : is);
}

}  // namespace

bool PluginRegistry::load(const fs::path& file) {
  std::string declared;  // the plugin's name, once known
  auto refuse = [&](std::string why) {
    refusals_.push_back({file, std::move(why), declared});
    return false;
  };
  for (const auto& [name, p] : plugins_) {
    std::error_code ec;
    if (fs::equivalent(p.file, file, ec)) return true;  // same file listed twice in the path
  }
  if (auto why = section_handshake_problem(file); !why.empty()) return refuse(why);

  auto lib = std::make_shared<boost::dll::shared_library>();
  std::error_code ec;
  lib->load(file, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    // Boost reports every dlopen failure as "Bad file descriptor"; dlerror() has the cause.
    const char* why = ::dlerror();
    return refuse("cannot be loaded: " + (why ? std::string(why) : ec.message()));
  }
  if (!lib->has("stride_plugin"))
    return refuse("missing entry point 'stride_plugin' (not built with STRIDE_PLUGIN?)");

  const StrideHandshake* hs = nullptr;
  try {
    hs = lib->get<const StrideHandshake*()>("stride_plugin")();
  } catch (const std::exception& e) {
    return refuse(std::string("entry point threw: ") + e.what());
  } catch (...) {
    return refuse("entry point threw an exception that is not a std::exception");
  }
  if (auto why = entry_handshake_problem(hs); !why.empty()) return refuse(why);

  LoadedPlugin loaded{file, lib, nullptr};
  try {
    loaded.plugin = hs->plugin();
    if (!loaded.plugin) return refuse("plugin() returned null");
    (void)loaded.plugin->info();
  } catch (const std::exception& e) {
    return refuse(std::string("registration threw: ") + e.what());
  } catch (...) {
    return refuse("registration threw an unknown exception");
  }
  const auto& info = loaded.info();
  if (info.name.empty()) return refuse("plugin declares an empty name");
  declared = info.name;
  if (auto why = declaration_problem(info); !why.empty()) return refuse("plugin '" + info.name + "' " + why);
  try {
    if (auto why = kind_problem(*loaded.plugin, info); !why.empty()) return refuse(why);
  } catch (const std::exception& e) {
    return refuse(std::string("registration threw: ") + e.what());
  }
  if (auto it = plugins_.find(info.name); it != plugins_.end())
    return refuse("duplicate plugin name '" + info.name + "' (already provided by " + it->second.file.string() + ")");
  plugins_.emplace(info.name, std::move(loaded));
  return true;
}

std::string declaration_problem(const PluginInfo& info) {
  std::set<std::string> names;
  for (const auto& spec : info.parameters) {
    const std::string what = "declares parameter '" + spec.name + "'";
    if (spec.name.empty()) return "declares a parameter without a name";
    if (!names.insert(spec.name).second) return "declares parameter '" + spec.name + "' twice";
    if (!spec.unit.empty())
      if (auto why = unit_problem(spec.unit); !why.empty())
        return what + " in unit \"" + spec.unit + "\": " + why;
    for (const auto& u : spec.column_units)
      if (auto why = unit_problem(u); !why.empty())
        return what + " with a column in unit \"" + u + "\": " + why;
    if (!spec.column_units.empty() && (spec.type != ParamType::table || spec.column_units.size() < 2))
      return what + " with column units, which only a table of x and at least one y column has";
    if (spec.min && spec.max && !(*spec.min <= *spec.max))
      return what + " with bounds [" + number_text(*spec.min) + ", " + number_text(*spec.max) + "] that admit no value";
    if (!spec.default_value.is_null())
      if (auto why = check_param(spec, spec.default_value); !why.empty())
        return what + " with a default its own declaration rejects: " + why;
  }
  return "";
}

std::string refused_note(const PluginRegistry& reg, const std::string& name) {
  for (const auto& r : reg.refusals())
    if (r.plugin == name || (r.plugin.empty() && r.file.stem() == "stride_" + name))
      return " (" + r.file.string() + (r.plugin == name ? ", which provides it," : ", which may provide it,") +
             " was refused at load: " + r.reason + ")";
  return "";
}

std::string searched_note(const PluginRegistry& reg) {
  std::string folders;
  for (const auto& f : reg.searched()) folders += (folders.empty() ? "" : ", ") + f.string();
  return "; searched " + (folders.empty() ? std::string("no folder") : folders) +
         " (add a folder with STRIDE_PLUGIN_PATH=DIR[:DIR...] or the manifest's \"plugin_paths\")";
}

const LoadedPlugin* PluginRegistry::find(const std::string& name) const {
  auto it = plugins_.find(name);
  if (it != plugins_.end()) return &it->second;
  auto f = fmus_.find(name);
  return f == fmus_.end() ? nullptr : &f->second;
}

const LoadedPlugin* PluginRegistry::load_fmu(const fs::path& file, std::string& error) const {
  const std::string key = file.string();
  if (auto it = fmus_.find(key); it != fmus_.end()) return &it->second;
  if (auto it = fmu_errors_.find(key); it != fmu_errors_.end()) {
    error = it->second;
    return nullptr;
  }
  try {
    auto fmu = fmi::load_fmu(file);
    LoadedPlugin lp{file, fmu->library(false), fmu.get(), fmu};
    return &fmus_.emplace(key, std::move(lp)).first->second;
  } catch (const std::exception& e) {
    error = e.what();
  }
  fmu_errors_[key] = error;
  return nullptr;
}

std::vector<const LoadedPlugin*> PluginRegistry::plugins() const {
  std::vector<const LoadedPlugin*> out;
  for (const auto& [n, p] : plugins_) out.push_back(&p);
  return out;
}

std::vector<const LoadedPlugin*> PluginRegistry::plugins(Kind kind) const {
  std::vector<const LoadedPlugin*> out;
  for (const auto& [n, p] : plugins_)
    if (p.info().kind == kind) out.push_back(&p);
  return out;
}

namespace {
std::string fmt_num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}
std::string bounds(const ParamSpec& s) {
  if (!s.min && !s.max) return "";
  return " in [" + (s.min ? fmt_num(*s.min) : std::string("-inf")) + ", " +
         (s.max ? fmt_num(*s.max) : std::string("inf")) + "]";
}
}  // namespace

namespace {

// One parameter value against its spec: every problem, each bad element of a list, matrix or
// table at its own pointer relative to the value ("/1/3": row 1, column 3).
struct ParamCheck {
  const ParamSpec& spec;
  std::vector<ParamProblem> problems;

  std::string unit() const { return spec.unit.empty() || spec.unit == "1" ? "" : " (" + spec.unit + ")"; }
  bool in_bounds(double x) const { return (!spec.min || x >= *spec.min) && (!spec.max || x <= *spec.max); }
  bool real_ok(const json& x) const {
    return x.is_number() && std::isfinite(x.get<double>()) && in_bounds(x.get<double>());
  }
  void bad(std::string where, std::string message) { problems.push_back({std::move(where), std::move(message)}); }
  static std::string index(std::size_t i) { return "/" + std::to_string(i); }

  void check(const json& v) {
    switch (spec.type) {
      case ParamType::real_list: return real_list(v);
      case ParamType::integer_list: return integer_list(v);
      case ParamType::string_list: return string_list(v);
      case ParamType::matrix: return matrix(v);
      case ParamType::table: return table(v);
      default: return scalar(v);
    }
  }

  void scalar(const json& v) {
    const std::string found = " found " + v.dump();
    switch (spec.type) {
      case ParamType::real:
        if (!v.is_number() || !in_bounds(v.get<double>()) || !std::isfinite(v.get<double>()))
          bad("", "expected a real number" + bounds(spec) + unit() + "," + found);
        return;
      case ParamType::integer:
        if (!v.is_number_integer() || !in_bounds(static_cast<double>(v.get<long>())))
          bad("", "expected an integer" + bounds(spec) + "," + found);
        return;
      case ParamType::boolean:
        if (!v.is_boolean()) bad("", "expected true or false," + found);
        return;
      case ParamType::object:
        if (!v.is_object()) bad("", "expected an object," + found);
        return;
      case ParamType::object_list:
        if (!v.is_array()) {
          bad("", "expected a list of objects [{...}, ...]," + found);
          return;
        }
        for (std::size_t i = 0; i < v.size(); ++i)
          if (!v[i].is_object()) bad(index(i), "expected an object {...}, found " + v[i].dump());
        return;
      case ParamType::path:
        if (!v.is_string()) bad("", "expected a file name (a string; relative to the manifest's folder)," + found);
        else if (v.get<std::string>().find('\0') != std::string::npos)
          bad("", "expected a file name without NUL characters," + found);
        return;
      default: return text(v);
    }
  }

  void text(const json& v) {
    const std::string found = " found " + v.dump();
    if (!v.is_string()) return bad("", "expected a string," + found);
    if (spec.choices.empty() ||
        std::find(spec.choices.begin(), spec.choices.end(), v.get<std::string>()) != spec.choices.end())
      return;
    std::string allowed;
    for (const auto& c : spec.choices) allowed += (allowed.empty() ? "\"" : ", \"") + c + "\"";
    bad("", "expected one of " + allowed + "," + found);
  }

  void real_list(const json& v) {
    if (!v.is_array())
      return bad("", "expected a list of real numbers" + bounds(spec) + unit() + ", found " + v.dump());
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!real_ok(v[i]))
        bad(index(i), "expected a real number" + bounds(spec) + unit() + ", found " + type_name(v[i]));
  }

  void integer_list(const json& v) {
    if (!v.is_array()) return bad("", "expected a list of integers" + bounds(spec) + ", found " + type_name(v));
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!v[i].is_number_integer() || !in_bounds(static_cast<double>(v[i].get<long>())))
        bad(index(i), "expected an integer" + bounds(spec) + ", found " + type_name(v[i]));
  }

  void string_list(const json& v) {
    if (!v.is_array()) return bad("", "expected a list of strings, found " + type_name(v));
    for (std::size_t i = 0; i < v.size(); ++i)
      if (!v[i].is_string()) bad(index(i), "expected a string, found " + type_name(v[i]));
  }

  void matrix(const json& v) {
    if (!v.is_array() || v.empty() || !v[0].is_array() || v[0].empty())
      return bad("", "expected a matrix: a list of rows, each a non-empty list of numbers, found " +
                         (v.is_array() && v.empty() ? std::string("an empty list") : type_name(v)));
    const std::size_t cols = v[0].size();
    for (std::size_t i = 0; i < v.size(); ++i) {
      const json& row = v[i];
      if (!row.is_array()) {
        bad(index(i), "expected a row (a list of numbers), found " + type_name(row));
        continue;
      }
      if (row.size() != cols)
        bad(index(i),
            "expected a row of " + std::to_string(cols) + " numbers like row 0, found " + std::to_string(row.size()));
      for (std::size_t j = 0; j < std::min(cols, row.size()); ++j)
        if (!real_ok(row[j]))
          bad(index(i) + index(j), "expected a real number" + bounds(spec) + unit() + ", found " + type_name(row[j]));
    }
  }

  // Rows [x, y_1, ..., y_k]: as many columns as the spec's column units (else as the first
  // row), x finite and strictly increasing, the y values within the bounds.
  void table(const json& v) {
    const std::size_t want = spec.column_units.size();
    const std::string shape =
        want ? "rows [x" + std::string(want == 2 ? ", y" : ", y_1, ..., y_" + std::to_string(want - 1)) + "]"
             : std::string("rows [x, y_1, ..., y_k]");
    if (!v.is_array() || v.empty())
      return bad("", "expected a table: a list of " + shape + " with x increasing, found " +
                         (v.is_array() ? std::string("an empty list") : type_name(v)));
    std::size_t cols = want;
    std::optional<std::pair<std::size_t, double>> previous;  // the last row with a finite x
    for (std::size_t i = 0; i < v.size(); ++i) {
      const json& row = v[i];
      if (!row.is_array()) {
        bad(index(i), "expected a table row [x, y...] (a list of numbers), found " + type_name(row));
        continue;
      }
      if (cols == 0) cols = row.size();
      if (row.size() != cols || cols < 2)
        bad(index(i), "expected a row of " + (cols < 2 ? std::string("at least 2") : std::to_string(cols)) +
                          " numbers (" + shape + (want ? "" : ", all as long as row 0") + "), found " +
                          std::to_string(row.size()));
      for (std::size_t j = 0; j < row.size(); ++j) {
        const json& x = row[j];
        if (!x.is_number() || !std::isfinite(x.get<double>()))
          bad(index(i) + index(j), "expected a real number, found " + type_name(x));
        else if (j > 0 && !in_bounds(x.get<double>()))
          bad(index(i) + index(j), "expected a value" + bounds(spec) + ", found " + type_name(x));
      }
      if (row.empty() || !row[0].is_number() || !std::isfinite(row[0].get<double>())) continue;
      const double x = row[0].get<double>();
      if (previous && !(x > previous->second))
        bad(index(i) + "/0", "expected x (the first column) strictly increasing: row " + std::to_string(i) +
                                 " has x = " + number_text(x) + ", row " + std::to_string(previous->first) +
                                 " has x = " + number_text(previous->second));
      previous.emplace(i, x);
    }
  }
};

// At most this many problems of one value are spelled out; the rest are counted.
constexpr std::size_t kProblemsShown = 20;

// The problems of one value as one message: the first, then the others with their pointers.
std::string joined(const std::vector<ParamProblem>& problems, std::string* where) {
  if (problems.empty()) return "";
  if (where) *where = problems[0].where;
  std::string out = problems[0].message;
  if (problems.size() == 1) return out;
  out += "; " + std::to_string(problems.size() - 1) + " more: ";
  for (std::size_t k = 1; k < problems.size() && k <= kProblemsShown; ++k)
    out += (k > 1 ? "; " : "") + problems[k].where + (problems[k].where.empty() ? "" : ": ") + problems[k].message;
  if (problems.size() > kProblemsShown + 1)
    out += "; and " + std::to_string(problems.size() - kProblemsShown - 1) + " others";
  return out;
}

// Element order: "" first, then by the numbers of the pointer.
bool element_before(const ParamProblem& a, const ParamProblem& b) {
  auto numbers = [](const std::string& w) {
    std::vector<long long> n;
    for (std::size_t i = 0; i < w.size();)
      if (w[i] == '/') {
        const std::size_t end = w.find('/', i + 1);
        n.push_back(std::atoll(w.substr(i + 1, end == std::string::npos ? std::string::npos : end - i - 1).c_str()));
        i = end == std::string::npos ? w.size() : end;
      } else {
        ++i;
      }
    return n;
  };
  return numbers(a.where) < numbers(b.where);
}

}  // namespace

std::vector<ParamProblem> param_problems(const ParamSpec& spec, const json& v) {
  ParamCheck check{spec, {}};
  check.check(v);
  return std::move(check.problems);
}

std::string check_param(const ParamSpec& spec, const json& v, std::string* where) {
  return joined(param_problems(spec, v), where);
}

std::vector<ParamProblem> accept_param_problems(const ParamSpec& spec, json& v,
                                                std::vector<ConvertedValue>* converted) {
  if (spec.type != ParamType::real && spec.type != ParamType::real_list) return param_problems(spec, v);
  std::vector<ParamProblem> unit_problems;
  std::vector<ConvertedValue> done;
  // A real (where "") or an element of a real list ("/i") written with a unit, into its number.
  auto convert = [&](json& x, const std::string& where) {
    if (!x.is_string()) return;
    const std::string text = x.get<std::string>();
    const auto start = text.find_first_not_of(" \t");
    // Not a quantity ("steep"): the check says what is expected.
    if (start == std::string::npos || std::string_view("0123456789+-.").find(text[start]) == std::string_view::npos)
      return;
    std::string why;
    auto q = quantity_in(text, spec.unit, why);
    if (!q) {
      const bool one = spec.unit.empty() || spec.unit == "1";
      unit_problems.push_back(
          {where, "expected a real number" + bounds(spec) + (one ? "" : " (" + spec.unit + ")") +
                      ", or a string with a number and a unit convertible to " +
                      (one ? "1 (such as \"50 %\")" : spec.unit + " (such as \"2 " + spec.unit + "\")") + ", found " +
                      type_name(x) + ": " + why});
      return;
    }
    done.push_back({where, text, *q, spec.unit});
    x = *q;
  };
  if (v.is_array())
    for (std::size_t i = 0; i < v.size(); ++i) convert(v[i], "/" + std::to_string(i));
  else convert(v, "");
  std::vector<ParamProblem> problems = unit_problems;
  for (ParamProblem& p : param_problems(spec, v)) {
    auto same = [&](const ParamProblem& x) { return x.where == p.where; };
    if (std::any_of(unit_problems.begin(), unit_problems.end(), same)) continue;  // said already
    auto from = std::find_if(done.begin(), done.end(), [&](const ConvertedValue& c) { return c.pointer == p.where; });
    if (from != done.end()) p.message += " (from \"" + from->written + "\")";
    problems.push_back(std::move(p));
  }
  std::stable_sort(problems.begin(), problems.end(), element_before);
  if (converted && problems.empty()) converted->insert(converted->end(), done.begin(), done.end());
  return problems;
}

std::string accept_param(const ParamSpec& spec, json& v, std::string* where, std::vector<ConvertedValue>* converted) {
  return joined(accept_param_problems(spec, v, converted), where);
}

std::vector<ConvertedValue> converted_parameters(const Manifest& m, const PluginRegistry& reg) {
  std::vector<ConvertedValue> out;
  auto add = [&](const LoadedPlugin* p, const PluginRef& ref) {
    if (!p || !ref.parameters.is_object()) return;
    const auto& specs = p->info().parameters;
    for (auto it = ref.parameters.begin(); it != ref.parameters.end(); ++it) {
      auto spec = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == it.key(); });
      if (spec == specs.end()) continue;
      json value = it.value();
      std::vector<ConvertedValue> converted;
      accept_param_problems(*spec, value, &converted);
      for (ConvertedValue& c : converted) {
        c.pointer = ref.pointer + "/parameters/" + pointer_escape(it.key()) + c.pointer;
        out.push_back(std::move(c));
      }
    }
  };
  for (const SubsystemConfig& sc : m.subsystems) {
    std::string why;
    add(sc.fmu.empty() ? reg.find(sc.plugin.plugin) : reg.load_fmu(sc.fmu, why), sc.plugin);
    if (sc.integrator) add(reg.find(sc.integrator->plugin), *sc.integrator);
    if (sc.formulation) add(reg.find(sc.formulation->plugin), *sc.formulation);
  }
  for (const ConnectionConfig& c : m.connections) add(reg.find(c.extrapolator.plugin), c.extrapolator);
  return out;
}

Params PluginRegistry::make_params(const LoadedPlugin& p, const json& given) const {
  const auto& specs = p.info().parameters;
  json values = json::object();
  if (!given.is_null() && !given.is_object())
    throw std::invalid_argument("parameters of '" + p.info().name + "': expected an object, found " + given.dump());
  if (given.is_object()) {
    for (auto it = given.begin(); it != given.end(); ++it) {
      auto spec = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == it.key(); });
      if (spec == specs.end())
        throw std::invalid_argument("plugin '" + p.info().name + "' has no parameter '" + it.key() + "'");
      json v = it.value();
      std::string where;
      if (auto err = accept_param(*spec, v, &where); !err.empty())
        throw std::invalid_argument("parameter '" + it.key() + where + "' of '" + p.info().name + "': " + err);
      values[it.key()] = std::move(v);
    }
  }
  for (const auto& s : specs) {
    if (values.contains(s.name)) continue;
    if (s.default_value.is_null())
      throw std::invalid_argument("plugin '" + p.info().name + "' requires parameter '" + s.name + "'");
    values[s.name] = s.default_value;
  }
  return Params(std::move(values));
}

namespace {
template <class T, class Make>
std::shared_ptr<T> create(const PluginRegistry& reg, const std::string& name, const json& params,
                          Kind kind, const char* what, Make make) {
  const LoadedPlugin* p = reg.find(name);
  if (!p) throw std::invalid_argument("unknown plugin '" + name + "'" + searched_note(reg));
  if (p->info().kind != kind)
    throw std::invalid_argument("plugin '" + name + "' is " + with_article(to_string(p->info().kind)) + ", not " +
                                with_article(what));
  Params prm = reg.make_params(*p, params);
  auto obj = guarded(*p, [&] { return make(*p->plugin, prm); });
  if (!obj) throw PluginError(name, std::string("did not create a ") + what);
  return keep_loaded(std::move(obj), *p);
}
}  // namespace

std::shared_ptr<Subsystem> PluginRegistry::create_subsystem(const std::string& name, const json& params) const {
  return create<Subsystem>(*this, name, params, Kind::subsystem, "subsystem",
                           [](const Plugin& pl, const Params& pr) { return pl.create_subsystem(pr); });
}
std::shared_ptr<OdeSystem> PluginRegistry::create_ode(const std::string& name, const json& params) const {
  return create<OdeSystem>(*this, name, params, Kind::subsystem, "subsystem",
                           [](const Plugin& pl, const Params& pr) { return pl.create_ode(pr); });
}
std::shared_ptr<Integrator> PluginRegistry::create_integrator(const std::string& name, const json& params) const {
  return create<Integrator>(*this, name, params, Kind::integrator, "integrator",
                            [](const Plugin& pl, const Params& pr) { return pl.create_integrator(pr); });
}
std::shared_ptr<Extrapolator> PluginRegistry::create_extrapolator(const std::string& name, const json& params) const {
  return create<Extrapolator>(*this, name, params, Kind::extrapolator, "extrapolator",
                              [](const Plugin& pl, const Params& pr) { return pl.create_extrapolator(pr); });
}
#if __has_include(<stride/multibody.hpp>)
std::shared_ptr<MultibodyModel> PluginRegistry::create_model(const std::string& name, const json& params) const {
  return create<MultibodyModel>(*this, name, params, Kind::subsystem, "multibody model",
                                [](const Plugin& pl, const Params& pr) { return pl.create_model(pr); });
}
std::shared_ptr<Formulation> PluginRegistry::create_formulation(const std::string& name, const json& params) const {
  return create<Formulation>(*this, name, params, Kind::formulation, "formulation",
                             [](const Plugin& pl, const Params& pr) { return pl.create_formulation(pr); });
}
#endif

}  // namespace stride::host
