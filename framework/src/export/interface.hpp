// What an exported experiment shows an importer: output ports as output variables and inputs
// no connection feeds as input variables, all of them or those the manifest lists under
// "exports", named "subsystem.port" (one subsystem exported: "port"; FMI 2: one scalar per element, "subsystem.port[i]"
// for a port of several), with the port's unit and description. An output with direct feedthrough depends on the inputs
// of its subsystem. The parameters are the manifest's, fixed inside the FMU. Internal to the host.
//
// Order: Experiment -> experiment_interface() -> model_description_xml() and the binding of
// value references to ports that the FMU's binary reads back (interface_json /
// bindings_of), so the exporter and the binary agree on one list. Pure; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "export/model_description.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/load/registry.hpp"

namespace stride::host::fmu_export {

// Value reference -> element of an output port.
struct PortBinding {
  std::uint32_t value_reference = 0;
  std::string port;         // "subsystem.port"
  std::size_t element = 0;  // 0-based within the port (FMI 3: the first of the array)
  std::size_t size = 1;     // elements this value reference stands for (FMI 3 arrays)
  bool input = false;       // an input the importer sets; else an output it reads
  // A real parameter of a subsystem's plugin: its manifest pointer ("/subsystems/c/parameters/k"),
  // set before initialization; `port` is then "subsystem.parameter".
  std::string parameter;
  double start = 0.0;  // parameters: the manifest's value (or the plugin's default)
};

struct ExperimentInterface {
  ExportedModel model;
  std::vector<PortBinding> bindings;
};

// The model of `ex` for FMI `fmi_version` (2 or 3); `model_identifier` names the binary. Throws
// ManifestError naming /exports/i for a listed port that is neither an output nor an input no
// connection feeds, and /exports for an unconnected input left out of the list.
// With port_names (one subsystem exported), variables are named after the ports alone, so that
// the FMU replaces the subsystem in its manifest with the same connections.
// The real parameters of the subsystems' plugins (found in `registry`; FMU subsystems have none
// here) are FMU parameters (fixed: set before initialization), unless their name is taken.
ExperimentInterface experiment_interface(const Experiment& ex, const PluginRegistry& registry, int fmi_version,
                                         const std::string& model_identifier, bool port_names = false);

// The bindings as resources/stride_export.json holds them (with the token the binary checks
// fmi2Instantiate's GUID against), and back (throws std::runtime_error naming what is wrong).
json interface_json(const ExperimentInterface& i);
std::vector<PortBinding> bindings_of(const json& j);

}  // namespace stride::host::fmu_export
