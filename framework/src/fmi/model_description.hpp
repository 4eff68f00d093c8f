// modelDescription.xml of an FMI 1.0, 2.0 or 3.0 FMU, read into what Stride uses of it. Internal
// to the host.
//
// read_model_description() reads the sections in the order the standard declares them:
// the root element (version, names, token), the interfaces (<CoSimulation>, <ModelExchange>,
// <ScheduledExecution>; FMI 1.0: <Implementation> for co-simulation, model exchange without it),
// <UnitDefinitions>, <TypeDefinitions>, <DefaultExperiment>, <ModelVariables> and
// <ModelStructure> (FMI 1.0: each output's <DirectDependency>). Each is read by its own function; a problem throws
// FmuError naming the FMU, the file and the variable. Every variable is kept, whatever its type:
// one that Stride cannot exchange is refused only where a manifest names it.
//
// Arrays (FMI 3) may be sized by structural parameters; shape() gives every variable's size for
// the structural parameters' values of one subsystem (their start values by default).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <stride/stride.hpp>

namespace stride::host::fmi {

// A broken FMU: the message names the file and what is wrong.
class FmuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// FMI 3's types; FMI 1's and FMI 2's Real, Integer, Boolean, String and Enumeration are float64,
// int32, boolean, string and enumeration.
enum class VarType {
  float64,
  float32,
  int8,
  uint8,
  int16,
  uint16,
  int32,
  uint32,
  int64,
  uint64,
  boolean,
  string,
  binary,
  enumeration,
  clock
};

// The type's name in modelDescription.xml of `version` ("Real" / "Float64", ...).
const char* type_name(VarType t, int version);
// Exchanged as numbers on ports: every type but String, Binary and Clock.
inline bool is_numeric(VarType t) { return t != VarType::string && t != VarType::binary && t != VarType::clock; }
inline bool is_real(VarType t) { return t == VarType::float64 || t == VarType::float32; }
// The range of an integer type as doubles, the one table of them (bounds of parameters, start
// values): Boolean 0 and 1; Int64 and Enumeration the Int64 range.
std::pair<double, double> integer_range(VarType t);

// An FMI 3 array dimension: a fixed size, or the value of a structural parameter.
struct Dimension {
  std::size_t start = 0;
  long structural = -1;  // index of the structural parameter in ModelDescription::variables
};

// FMI 1.0 variables are read into FMI 2 terms: variability "parameter" is causality "parameter"
// (variability "fixed"), "internal" and "none" are "local", a start value of another variable is
// initial "exact" (fixed="false": "approx"), a negated alias reads through factor -1 (Booleans:
// 1 - value).
struct Variable {
  std::string name;
  unsigned value_reference = 0;
  VarType type = VarType::float64;
  std::string causality = "local";
  std::string variability = "continuous";
  std::string initial;  // "exact", "approx", "calculated" or "" (not given)
  std::string description;
  std::string unit;  // after the declared type, "" when none; SI for ports when converted (below)
  // Ports whose unit Stride does not know but the FMU defines with a <BaseUnit>: the port is in
  // the SI unit and value_SI = value_FMU * unit_factor + unit_offset; fmu_unit is the FMU's name.
  std::string fmu_unit;
  double unit_factor = 1.0, unit_offset = 0.0;
  // null when none; a number, bool or string, a list of them for an array; Binary values as
  // hexadecimal text.
  json start;
  std::optional<double> min, max;
  std::vector<Dimension> dimensions;  // FMI 3 arrays
  std::size_t size = 1;               // elements with the structural parameters' start values
  // Outputs only: depends on inputs at the same time (ModelStructure).
  bool feedthrough = false;
  std::vector<std::string> aliases;  // FMI 3 <Alias> names (FMI 2 aliases are variables of their own)
  long derivative_of = -1;           // a state's derivative: index of the state variable
  std::string items;                 // enumerations: "1 = low, 2 = high"
  bool negated = false;              // FMI 1 alias="negatedAlias": the FMU's value negated

  bool is_parameter() const { return causality == "parameter" || causality == "structuralParameter"; }
  // A value the importer may set before initialization other than a parameter: the start of
  // an input, or of a state or output declared with initial="exact" / "approx".
  bool has_settable_start() const {
    return !is_parameter() && causality != "independent" && causality != "calculatedParameter" &&
           type != VarType::clock && (causality == "input" || initial == "exact" || initial == "approx");
  }
};

struct DefaultExperiment {
  std::optional<double> start, stop, step, tolerance;
};

struct ModelDescription {
  int version = 2;  // 1, 2 or 3
  std::string fmi_version, model_name, token, description, generation_tool;
  bool has_cs = false, has_me = false, has_se = false;
  std::string cs_identifier, me_identifier;
  bool can_variable_step = true;
  bool cs_event_mode = false;  // FMI 3 <CoSimulation hasEventMode>: events handled by the importer
  bool cs_can_get_set_state = false, me_can_get_set_state = false;  // canGetAndSetFMUstate per interface
  bool only_once_per_process = false;  // canBeInstantiatedOnlyOncePerProcess (either interface)
  // FMI 1.0 co-simulation: the MIME type fmiInstantiateSlave is given (<CoSimulation_Tool>'s
  // <Model type>, else the FMU's own binary's).
  std::string cs_mime_type;
  DefaultExperiment experiment;
  std::vector<Variable> variables;
  // Model exchange: the continuous states' derivatives in state order (indices into
  // variables), FMI 3 event indicators (indices), FMI 2 numberOfEventIndicators.
  std::vector<std::size_t> derivatives, indicators;
  std::size_t event_indicator_count = 0;
  std::size_t state_count = 0;  // FMI 1 numberOfContinuousStates (its states are no variables)

  // Continuous states to integrate (with their structural parameters' start values).
  bool has_states() const { return !derivatives.empty() || state_count > 0; }

  // The variable named `name` (or one of its FMI 3 aliases), null when none.
  const Variable* find(const std::string& name) const;
};

// "x[k]" read as the array "x" and the decimal index k as written; none for other names.
struct IndexedName {
  std::string base;
  std::size_t index = 0;
};
std::optional<IndexedName> indexed_name(const std::string& name);

// FMI 2 structured naming of an array port: the variables "x[1]", ..., "x[n]" (or "x[0]", ...,
// "x[n-1]": the index as the FMU writes it; n >= 2, Real, one causality, unit and variability,
// declared one after the other from index i) as one port "x" of n elements; their indices, or
// none when variable i does not start such a run.
std::vector<std::size_t> structured_array(const ModelDescription& md, std::size_t i);
// The port name of a run found by structured_array ("x" of "x[1]").
std::string structured_array_name(const Variable& first);
// The FMU's own names of single elements of its array ports: "u[1]" is element 0 of port "u"
// when the FMU counts from 1 (every run structured_array finds).
struct ElementName {
  std::string name, port;
  std::size_t element = 0;
};
std::vector<ElementName> element_names(const ModelDescription& md);

// Every variable's size for one subsystem's structural parameters (values by name in
// `parameters`; the start values for the others); the numbers of continuous states and event
// indicators that follow. Throws ParameterError for a size out of range.
struct Shape {
  std::vector<std::size_t> size;  // per variable
  std::size_t states = 0, indicators = 0;
};
Shape shape(const ModelDescription& md, const json& parameters);

// Reads and checks modelDescription.xml (throws FmuError naming `label`).
ModelDescription read_model_description(const std::filesystem::path& xml, const std::string& label);

// The platform folder name under binaries/ of this host (FMI 1 and 2 "linux64", FMI 3
// "x86_64-linux").
std::string platform_folder(int version);

}  // namespace stride::host::fmi
