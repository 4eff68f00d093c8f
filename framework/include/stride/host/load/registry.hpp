// Finds, checks and loads plugin libraries; creates plugin objects that keep their library
// loaded for as long as they live.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "stride/host/core/plugin_error.hpp"
#include "stride/host/input/manifest.hpp"

namespace boost::dll {
class shared_library;
}

namespace stride::host {

class FmuModel;  // fmi/model.hpp: an FMU as the host sees it

// A plugin library that passed the handshake, or an FMU (then `fmu` owns the plugin object).
struct LoadedPlugin {
  std::filesystem::path file;
  std::shared_ptr<boost::dll::shared_library> library;
  const Plugin* plugin = nullptr;
  std::shared_ptr<const FmuModel> fmu;
  const PluginInfo& info() const { return plugin->info(); }
};

// A library that was refused, and why (ABI version, fingerprint, missing entry point,
// exception during registration, duplicate name).
struct Refusal {
  std::filesystem::path file;
  std::string reason;
  std::string plugin;  // the name it declares, when it was refused after declaring one
};

class PluginRegistry {
 public:
  // <prefix>/lib/stride/plugins next to the running executable (in the build tree: the build's
  // plugin folder), else the build's plugin folder (or the folder set_home_plugin_folder named);
  // then every folder in STRIDE_PLUGIN_PATH (':'-separated).
  static std::vector<std::filesystem::path> default_search_path();
  // A program that embeds the host (the Python module, whose executable is the interpreter)
  // names the plugin folder that came with it; it then replaces the folder found beside the
  // executable or in the build. Call before the first default_search_path().
  static void set_home_plugin_folder(const std::filesystem::path& folder);

  // Loads every shared library in each folder (not recursive). Refusals are recorded, never
  // thrown; a name already registered from an earlier library is refused as a duplicate.
  void scan(const std::vector<std::filesystem::path>& folders);
  // Loads one library file; returns false (and records a Refusal) when it is refused.
  bool load(const std::filesystem::path& file);
  // Loads from `folders` only the libraries that provide `names`, found through an index of
  // each folder (plugin name and kind of every library, cached in the user's cache folder and
  // checked against each library's modification time and size; plugin_index.cpp). Libraries the
  // index does not know yet are loaded to learn their names; every refusal a full scan would
  // record is recorded too. Returns false when a name is in no folder (or the index cannot
  // tell which library provides it first), or when STRIDE_PLUGIN_INDEX=0: the caller then scans
  // everything, into a new registry.
  bool load_named(const std::vector<std::filesystem::path>& folders, const std::vector<std::string>& names);

  // Unpacks and checks an FMU (once per file; later calls return the same entry, or the same
  // error). Its name is the file as given. Returns nullptr and sets `error` when it is broken.
  // FMUs are loaded when a manifest names them, so this is const; the temporary folder is
  // removed when the registry and every subsystem made from the FMU are gone.
  const LoadedPlugin* load_fmu(const std::filesystem::path& file, std::string& error) const;

  // A plugin library by name, or an FMU loaded already by its file name.
  const LoadedPlugin* find(const std::string& name) const;
  std::vector<const LoadedPlugin*> plugins() const;                 // sorted by name
  std::vector<const LoadedPlugin*> plugins(Kind kind) const;        // sorted by name
  const std::vector<Refusal>& refusals() const { return refusals_; }
  // Every folder scan() or load_named() looked in, in order (for "where did it look" reports).
  const std::vector<std::filesystem::path>& searched() const { return searched_; }

  // Parameters are validated against the plugin's ParamSpecs, defaults filled in
  // (throws std::invalid_argument with a message naming the parameter otherwise).
  // Exceptions thrown by the plugin's factory are rethrown as PluginError.
  Params make_params(const LoadedPlugin& p, const json& given) const;
  std::shared_ptr<Subsystem> create_subsystem(const std::string& name, const json& params) const;
  std::shared_ptr<OdeSystem> create_ode(const std::string& name, const json& params) const;
  std::shared_ptr<Integrator> create_integrator(const std::string& name, const json& params) const;
  std::shared_ptr<Extrapolator> create_extrapolator(const std::string& name, const json& params) const;
#if __has_include(<stride/multibody.hpp>)
  std::shared_ptr<MultibodyModel> create_model(const std::string& name, const json& params) const;
  std::shared_ptr<Formulation> create_formulation(const std::string& name, const json& params) const;
#endif

 private:
  std::map<std::string, LoadedPlugin> plugins_;
  std::vector<Refusal> refusals_;
  std::vector<std::filesystem::path> searched_;
  mutable std::map<std::string, LoadedPlugin> fmus_;
  mutable std::map<std::string, std::string> fmu_errors_;
  friend class PluginIndex;
};

// One problem of a parameter value: what is wrong ("expected a real number in [0, 1] (m),
// found 3") and where inside the value, as a pointer relative to the parameter ("" for the
// value itself; "/1/3" for row 1, column 3 of a matrix or table; "/2" for an element of a list).
struct ParamProblem {
  std::string where;
  std::string message;
};
// Every problem of one parameter value against its spec (each bad element of a list, matrix or
// table), in the order of the elements; empty when the value is valid.
std::vector<ParamProblem> param_problems(const ParamSpec& spec, const json& value);
// The same as one message: "" when valid, else the first problem (its pointer into `where`,
// when given), followed by the others with their pointers ("...; 2 more: /3/1: ...; /4/0: ...").
std::string check_param(const ParamSpec& spec, const json& value, std::string* where = nullptr);
// The one place a manifest's parameter value is read: a real (or an element of a real list)
// may be written with a unit ("2 ms", "3.85 MPa"), converted here in place to the declared unit
// (a plain number is taken as already in it; a unit with a number inside it, a logarithmic unit
// or an offset other than a temperature's is refused, input/units.hpp); then checked as by
// param_problems. Every element written with a unit that was converted goes to `converted`
// (pointers relative to the parameter) when the value is valid.
std::vector<ParamProblem> accept_param_problems(const ParamSpec& spec, json& value,
                                                std::vector<ConvertedValue>* converted = nullptr);
// The same as one message, as check_param gives it.
std::string accept_param(const ParamSpec& spec, json& value, std::string* where = nullptr,
                         std::vector<ConvertedValue>* converted = nullptr);
// Every parameter value of the manifest's plugin references (subsystems, integrators,
// formulations, extrapolators) that accept_param converts from a unit, with its pointer in the
// manifest; for `validate`. Plugins the registry does not know are skipped.
std::vector<ConvertedValue> converted_parameters(const Manifest& manifest, const PluginRegistry& registry);
// What is wrong with a plugin's own declaration (a default its bounds or choices reject, bounds
// that admit no value, a parameter declared twice, a unit UDUNITS-2 cannot read); "" when it is
// sound. Checked at load.
std::string declaration_problem(const PluginInfo& info);
// " (FILE, which provides it, was refused at load: REASON)" when a refused library declared
// `name` or is named after it (stride_NAME.so); "" otherwise. For "unknown plugin" errors.
std::string refused_note(const PluginRegistry& reg, const std::string& name);
// "; searched A, B (add a folder: ...)": where the registry looked for plugins, in order, and
// how to add one. For "unknown plugin" errors, after refused_note and the did-you-mean.
std::string searched_note(const PluginRegistry& reg);

}  // namespace stride::host
