// What the front ends share (the `stride` command and the Python module): the experiment of a
// manifest with the plugins it names, a run in a supervised child process, and the plugin list
// and descriptions as JSON.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/load/registry.hpp"
#include "stride/host/ssp/ssp.hpp"

namespace stride::host {

// Loads every plugin on the search path, then the folders in `extra`. With `warn`, refused
// libraries are reported on stderr.
void load_plugins(PluginRegistry& reg, const std::vector<std::filesystem::path>& extra, bool warn);

// Manifests take what they leave out (end time, steps) from their FMUs' default experiments.
// Called once by each program at startup (`stride`, the Python module).
void use_fmu_default_experiments();

// The experiment of a manifest with only the plugins it names, found through the index of the
// plugin folders. A name the index does not find, or any problem in the manifest, loads every
// plugin and builds again: the diagnostics then list everything that is available. Throws
// ManifestError.
std::unique_ptr<Experiment> build_experiment(PluginRegistry& reg, Manifest m);

// The manifest in `path`: a manifest (JSON); an FMU (*.fmu) as the manifest of its default
// experiment run alone, recording every output (like fmusim); or a system structure (an .ssp
// package, an .ssd or OspSystemStructure.xml beside its FMUs, or a folder holding one;
// ssp/ssp.hpp) read as one, `choice` naming the .ssd and parameter set. Throws ManifestError; a
// problem of an SSP names the XML element it comes from.
Manifest manifest_of(const std::string& path, const std::vector<std::string>& overrides,
                     const ssp::SystemChoice& choice = {});
// build_experiment(manifest_of(path)), with the same naming of an SSP's elements in every
// problem the experiment finds.
std::unique_ptr<Experiment> experiment_of(PluginRegistry& reg, const std::string& path,
                                          const std::vector<std::string>& overrides,
                                          const ssp::SystemChoice& choice = {});

// `validate`'s list of every manifest value written with a unit and what it became: times and
// energies (Manifest::converted), then plugin parameters (converted_parameters).
std::vector<ConvertedValue> converted_values(const Manifest& m, const PluginRegistry& reg);

// A name that is neither a plugin nor an FMU file. The message names the closest plugin.
class UnknownPlugin : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The plugin `name`, or the FMU file `name` (*.fmu). Throws UnknownPlugin, or
// std::invalid_argument when the FMU is broken.
const LoadedPlugin& find_plugin(const PluginRegistry& reg, const std::string& name);

// Ports of a subsystem plugin made with `parameters` (defaults for the others; ports may
// depend on parameters); nullopt and `error` when it cannot be instantiated that way.
std::optional<std::vector<PortSpec>> ports_for(const PluginRegistry& reg, const LoadedPlugin& p, const json& parameters,
                                               std::string& error);

// `describe NAME --set name=value`: the parameter values as an object. A value is read as JSON
// (2, 1e-3, true, "text", [1, 2]) and otherwise taken as text (pressure). Throws
// std::invalid_argument naming an unknown parameter (with the list) or a value of the wrong
// type (what the parameter expects).
json describe_parameters(const LoadedPlugin& p, const std::vector<std::string>& assignments);

// A bound as the parameter's type writes it: 4 for an integer, 4.0 for a real.
json bound_json(const ParamSpec& p, double bound);

// `stride plugins --json`: {"plugins": [{name, kind, version, description, file}], "refused": [{file, reason}]}.
json plugin_list_json(const PluginRegistry& reg);
// `stride plugins describe NAME --json`: name, kind, form, version, description, file,
// parameters, and ports (for `parameters`, defaults for the others; left out when they cannot
// be made), and "port_parameters" when parameters were given. An FMU also has "fmu" (below).
json plugin_description_json(const PluginRegistry& reg, const LoadedPlugin& p, const json& parameters = json::object());
// What an FMI user asks of an FMU first (for its structural parameters `parameters`): "fmi_version"
// (as its modelDescription.xml writes it), "interfaces" (["co-simulation", "model exchange",
// "scheduled execution"], those it declares), "generation_tool" (null when not given),
// "states" and "event_indicators" (numbers of continuous states and event indicators),
// "default_experiment" ({start, stop, step, tolerance}, those given).
json fmu_summary_json(const LoadedPlugin& p, const json& parameters = json::object());

// One run of an experiment as `stride run` makes it.
struct SupervisedRun {
  json summary;         // as in summary.json
  int exit_code = 0;    // `stride run`'s exit code: 0 completed, 1 otherwise
  int stop_signal = 0;  // the signal that asked the run to stop (SIGINT for Ctrl-C), 0 none
};

// Runs `ex` in a forked child process (options.folder must be set) that this process
// supervises: INT, TERM, HUP and PIPE are forwarded to it, and after `grace` seconds (or a second
// signal) it is told to flush its rows and is killed. A crash, exit() or hang in a plugin ends
// the child only; the summary is then written here from what it left (conclude()). The child
// ends with this process (end_with_parent: kill -9 of it stops the run too). `report` is
// called once with the summary, in the process that has it. The signal mask and SIGPIPE's
// disposition are restored before returning, so that an embedding interpreter keeps its own.
// `forked`, when given, is called here once the child exists: where this process starts
// threads of its own (a thread running at fork() can hold a lock the child then waits on).
SupervisedRun run_supervised(Experiment& ex, RunOptions options, double grace,
                             const std::function<void(const json&)>& report, const std::function<void()>& forked = {});

}  // namespace stride::host
