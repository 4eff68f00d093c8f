// Loading the force-element plugins a mechanism description names (stride/force_element.hpp):
// library stride_force_NAME.so from the `forces` folder beside this plugin, or from a folder
// in STRIDE_FORCE_PATH (':'-separated, searched first). The handshake is checked like the
// host's (ABI version, struct size, build fingerprint); parameters are checked against the
// element's ParamSpecs. Problems are ParameterErrors pointing at the element in the description.
#pragma once

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <stride/force_element.hpp>

#include "description.hpp"

namespace stride::mechanism {

struct LoadedForce {
  std::size_t index = 0;  // into Description::external
  std::shared_ptr<void> library;  // keeps the code loaded while the element lives
  std::shared_ptr<ForceElement> element;
  const ForceElementDerivatives* derivatives = nullptr;  // the element's, if it gives them
};

namespace detail {

inline std::filesystem::path own_folder() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&own_folder), &info) && info.dli_fname)
    return std::filesystem::path(info.dli_fname).parent_path();
  return {};
}

// "" when the value fits the spec, else what was expected and found.
inline std::string check(const ParamSpec& s, const json& v) {
  auto in = [&](double x) { return (!s.min || x >= *s.min) && (!s.max || x <= *s.max); };
  auto range = [&] {
    std::ostringstream o;
    if (s.min || s.max)
      o << " in [" << (s.min ? format_text("{}", *s.min) : "-inf") << ", "
        << (s.max ? format_text("{}", *s.max) : "inf") << "]";
    return o.str();
  };
  switch (s.type) {
    case ParamType::real:
      return v.is_number() && std::isfinite(v.get<double>()) && in(v.get<double>())
                 ? ""
                 : "expected a real number" + range() + (s.unit.empty() ? "" : " " + s.unit) + ", found " + v.dump();
    case ParamType::integer:
      return v.is_number_integer() && in(double(v.get<long>()))
                 ? ""
                 : "expected an integer" + range() + ", found " + v.dump();
    case ParamType::boolean: return v.is_boolean() ? "" : "expected true or false, found " + v.dump();
    case ParamType::string:
      if (!v.is_string()) return "expected a string, found " + v.dump();
      if (!s.choices.empty() &&
          std::find(s.choices.begin(), s.choices.end(), v.get<std::string>()) == s.choices.end()) {
        std::string all;
        for (const auto& c : s.choices) all += (all.empty() ? "" : ", ") + c;
        return "expected one of " + all + ", found " + v.dump();
      }
      return "";
    case ParamType::real_list:
      if (!v.is_array()) return "expected a list of numbers, found " + v.dump();
      for (const auto& x : v)
        if (!x.is_number() || !in(x.get<double>()))
          return "expected a list of numbers" + range() + ", found " + v.dump();
      return "";
    case ParamType::object: return v.is_object() ? "" : "expected an object, found " + v.dump();
    case ParamType::path: return v.is_string() ? "" : "expected a file name, found " + v.dump();
    case ParamType::integer_list:
      if (!v.is_array()) return "expected a list of integers, found " + v.dump();
      for (const auto& x : v)
        if (!x.is_number_integer() || !in(double(x.get<long>())))
          return "expected a list of integers" + range() + ", found " + v.dump();
      return "";
    case ParamType::matrix:
    case ParamType::table: {
      // Rows of equal length (a table: at least [x, y] with x strictly increasing).
      const bool table = s.type == ParamType::table;
      const std::string what =
          table ? "a table: rows [x, y...] with x increasing" : "a matrix: a list of rows of numbers";
      if (!v.is_array() || v.empty() || !v[0].is_array()) return "expected " + what + ", found " + v.dump();
      const std::size_t cols = table && !s.column_units.empty() ? s.column_units.size() : v[0].size();
      for (std::size_t i = 0; i < v.size(); ++i) {
        if (!v[i].is_array() || v[i].size() != cols || cols < (table ? 2u : 1u))
          return "expected " + what + ", row " + std::to_string(i) + " found " + v[i].dump();
        for (std::size_t j = 0; j < cols; ++j)
          if (!v[i][j].is_number() || !std::isfinite(v[i][j].get<double>()) ||
              ((!table || j > 0) && !in(v[i][j].get<double>())))
            return "expected " + what + range() + ", row " + std::to_string(i) + " found " + v[i].dump();
        if (table && i > 0 && !(v[i][0].get<double>() > v[i - 1][0].get<double>()))
          return "expected " + what + " (x strictly increasing), row " + std::to_string(i) + " found " + v[i].dump();
      }
      return "";
    }
  }
  return "";
}

}  // namespace detail

inline std::vector<LoadedForce> load_force_elements(const Description& d) {
  std::vector<LoadedForce> out;
  std::map<std::string, std::pair<std::shared_ptr<void>, const ForceElementPlugin*>> loaded;
  std::vector<std::filesystem::path> dirs;
  if (const char* env = std::getenv("STRIDE_FORCE_PATH")) {
    std::stringstream ss(env);
    for (std::string dir; std::getline(ss, dir, ':');)
      if (!dir.empty()) dirs.emplace_back(dir);
  }
  dirs.push_back(detail::own_folder() / "forces");
  for (std::size_t k = 0; k < d.external.size(); ++k) {
    const ExternalForce& x = d.external[k];
    auto it = loaded.find(x.plugin);
    if (it == loaded.end()) {
      const std::string file = "stride_force_" + x.plugin + ".so";
      std::string searched, problem;
      std::shared_ptr<void> lib;
      const ForceElementPlugin* plugin = nullptr;
      for (const auto& dir : dirs) {
        searched += (searched.empty() ? "" : ", ") + dir.string();
        const auto path = dir / file;
        std::error_code ec;
        if (!std::filesystem::is_regular_file(path, ec)) continue;
        void* h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!h) {
          problem = std::string("could not load ") + path.string() + ": " + ::dlerror();
          break;
        }
        lib = std::shared_ptr<void>(h, [](void* p) { ::dlclose(p); });
        auto entry = reinterpret_cast<const StrideForceHandshake* (*)()>(::dlsym(h, "stride_force_element"));
        const StrideForceHandshake* hs = entry ? entry() : nullptr;
        if (!hs)
          problem = path.string() + " has no entry point stride_force_element (not built with STRIDE_FORCE_ELEMENT?)";
        else if (hs->abi_version != STRIDE_ABI_VERSION || hs->struct_size != sizeof(StrideForceHandshake))
          problem = path.string() + ": ABI version " + std::to_string(hs->abi_version) + " (expected " +
                    std::to_string(STRIDE_ABI_VERSION) + ")";
        else if (!hs->fingerprint || std::string(hs->fingerprint) != STRIDE_FINGERPRINT)
          problem = path.string() + ": build fingerprint differs (" + (hs->fingerprint ? hs->fingerprint : "none") +
                    " vs " + STRIDE_FINGERPRINT + ")";
        else
          plugin = hs->plugin();
        break;
      }
      if (!plugin) {
        if (problem.empty())
          problem = "no force-element plugin \"" + x.plugin + "\" (looked for " + file + " in " + searched + ")";
        throw ParameterError(x.pointer + "/plugin", problem);
      }
      it = loaded.emplace(x.plugin, std::make_pair(lib, plugin)).first;
    }
    const ForceElementPlugin& pl = *it->second.second;
    // Parameters: declared, right type, defaults filled in.
    json values = json::object();
    for (auto p = x.parameters.begin(); p != x.parameters.end(); ++p) {
      const auto& specs = pl.info().parameters;
      auto s = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& sp) { return sp.name == p.key(); });
      if (s == specs.end()) {
        std::string all;
        for (const auto& sp : specs) all += (all.empty() ? "" : ", ") + sp.name;
        throw ParameterError(
            x.pointer + "/parameters/" + p.key(),
            "force element \"" + x.plugin + "\" has no parameter \"" + p.key() + "\"; parameters: " + all);
      }
      if (auto e = detail::check(*s, p.value()); !e.empty())
        throw ParameterError(x.pointer + "/parameters/" + p.key(), e);
      values[p.key()] = p.value();
    }
    for (const auto& s : pl.info().parameters)
      if (!values.contains(s.name)) {
        if (s.default_value.is_null())
          throw ParameterError(
              x.pointer + "/parameters/" + s.name,
              "required parameter \"" + s.name + "\" of force element \"" + x.plugin + "\" is missing (" + s.doc + ")");
        values[s.name] = s.default_value;
      }
    std::unique_ptr<ForceElement> e;
    try {
      e = pl.create(Params(values));
    } catch (const ParameterError& pe) {
      throw ParameterError(x.pointer + "/parameters" + pe.pointer(), pe.what());
    } catch (const std::exception& ex) {
      throw ParameterError(x.pointer, "force element \"" + x.plugin + "\" could not be created: " + ex.what());
    }
    if (!e) throw ParameterError(x.pointer, "force element \"" + x.plugin + "\" created nothing");
    // The element's code must stay loaded as long as the element: the deleter holds the library.
    auto lib = it->second.first;
    const auto* derivatives = dynamic_cast<const ForceElementDerivatives*>(e.get());
    out.push_back(
        {k, lib, std::shared_ptr<ForceElement>(e.release(), [lib](ForceElement* p) { delete p; }), derivatives});
  }
  return out;
}

}  // namespace stride::mechanism
