// The modelDescription.xml of an exported FMU (FMI 2.0 or 3.0 co-simulation), written from what
// the exported subsystem or experiment declares: its parameters, its inputs and outputs with
// their units, bounds, start values and direct feedthrough. Internal to the host.
//
// Order: the interface (export/interface.hpp) fills an ExportedModel -> model_description_xml()
// writes it -> fmi_rules.hpp checks the text against the standard's rules before it is packed.
// Pure functions of their arguments; any thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <stride/stride.hpp>

namespace stride::host::fmu_export {

enum class Causality { parameter, input, output, independent };
enum class ValueType { real, integer, boolean, string };

// One variable of the FMU. FMI 2 knows scalars only: a port of n elements is n variables
// "name[1]" ... "name[n]" (structured naming); FMI 3 declares it as one array (size n).
struct ExportedVariable {
  std::string name;
  std::uint32_t value_reference = 0;
  Causality causality = Causality::output;
  ValueType type = ValueType::real;
  std::size_t size = 1;  // FMI 3 arrays; 1 in FMI 2
  std::string unit;      // "" when dimensionless
  json start;            // parameters and inputs: a value, or an array of `size` values
  std::optional<double> min, max;
  std::string description;
  // Outputs: the value references of the inputs their value depends on at the same instant.
  std::vector<std::uint32_t> dependencies;
};

// FMI 3 declares exactly one independent variable: "time" (s), value reference 0 (the ports'
// and parameters' value references start at 1); the binary reads it as the time reached.
inline constexpr std::uint32_t kTimeValueReference = 0;

struct ExportedModel {
  int fmi_version = 2;  // 2 or 3
  std::string model_name;
  std::string model_identifier;  // the binary's name: binaries/<platform>/<id>.so
  std::string description;
  std::string token;  // FMI 2 guid, FMI 3 instantiationToken
  std::string generation_tool;
  std::vector<ExportedVariable> variables;
  double start_time = 0.0, stop_time = 1.0, step_size = 0.0;
  bool can_get_set_state = false;
  bool only_once_per_process = false;
};

// The model description as text (UTF-8, one element per line).
std::string model_description_xml(const ExportedModel& model);

// A token for the model: a UUID-shaped hash of `content` ("{xxxxxxxx-xxxx-...}"), the same for
// the same content, so an FMU exported twice from one manifest carries one token.
std::string content_token(const std::string& content);

}  // namespace stride::host::fmu_export
