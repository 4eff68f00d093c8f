// What an exported experiment shows an importer: every output port of every subsystem as output
// variables named "subsystem.port" (FMI 2: one scalar per element, "subsystem.port[i]" for a port
// of several), with the port's unit and description. A valid experiment has no unconnected
// input, so the FMU has no inputs; its parameters are the manifest's, fixed inside it. Internal
// to the host.
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

namespace stride::host::fmu_export {

// Value reference -> element of an output port.
struct PortBinding {
  std::uint32_t value_reference = 0;
  std::string port;         // "subsystem.port"
  std::size_t element = 0;  // 0-based within the port (FMI 3: the first of the array)
  std::size_t size = 1;     // elements this value reference stands for (FMI 3 arrays)
};

struct ExperimentInterface {
  ExportedModel model;
  std::vector<PortBinding> bindings;
};

// The model of `ex` for FMI `fmi_version` (2 or 3); `model_identifier` names the binary.
ExperimentInterface experiment_interface(const Experiment& ex, int fmi_version, const std::string& model_identifier);

// The bindings as resources/stride_export.json holds them (with the token the binary checks
// fmi2Instantiate's GUID against), and back (throws std::runtime_error naming what is wrong).
json interface_json(const ExperimentInterface& i);
std::vector<PortBinding> bindings_of(const json& j);

}  // namespace stride::host::fmu_export
