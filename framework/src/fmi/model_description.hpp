// modelDescription.xml of an FMI 2.0 or 3.0 FMU, read into what Stride uses of it. Internal to
// the host.
//
// read_model_description() reads the sections in the order the standard declares them:
// the root element (version, names, token), the interfaces (<CoSimulation>, <ModelExchange>),
// <UnitDefinitions>, <TypeDefinitions>, <ModelVariables> and <ModelStructure>. Each is read by
// its own function; a problem throws FmuError naming the FMU, the file and the variable.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <stride/stride.hpp>

namespace stride::host::fmi {

// A broken FMU: the message names the file and what is wrong.
class FmuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class VarType { real, integer, boolean, string, enumeration };

struct Variable {
  std::string name;
  unsigned value_reference = 0;
  VarType type = VarType::real;
  std::string causality = "local";
  std::string variability = "continuous";
  std::string description;
  std::string unit;  // after the declared type, "" when none; SI for ports when converted (below)
  // Ports whose unit Stride does not know but the FMU defines with a <BaseUnit>: the port is in
  // the SI unit and value_SI = value_FMU * unit_factor + unit_offset; fmu_unit is the FMU's name.
  std::string fmu_unit;
  double unit_factor = 1.0, unit_offset = 0.0;
  json start;        // null when none
  std::optional<double> min, max;
  std::size_t size = 1;  // FMI 3 arrays: the product of the fixed dimensions
  // Outputs only: depends on inputs at the same time (ModelStructure).
  bool feedthrough = false;
  std::vector<std::string> aliases;  // FMI 3 <Alias> names (FMI 2 aliases are variables of their own)
};

struct ModelDescription {
  int version = 2;  // 2 or 3
  std::string fmi_version, model_name, token, description, generation_tool;
  bool has_cs = false, has_me = false;
  std::string cs_identifier, me_identifier;
  bool can_variable_step = true;
  bool cs_can_get_set_state = false, me_can_get_set_state = false;  // canGetAndSetFMUstate per interface
  bool only_once_per_process = false;  // canBeInstantiatedOnlyOncePerProcess (either interface)
  std::size_t state_count = 0, event_indicator_count = 0;
  std::vector<Variable> variables;
};

// Reads and checks modelDescription.xml (throws FmuError naming `label`).
ModelDescription read_model_description(const std::filesystem::path& xml, const std::string& label);

// The platform folder name under binaries/ of this host ("linux64" / "x86_64-linux").
std::string platform_folder(int version);

}  // namespace stride::host::fmi
