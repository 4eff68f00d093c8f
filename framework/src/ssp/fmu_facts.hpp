// What a system structure (SSD or OSP) needs to know of an FMU component: its variables as its
// modelDescription.xml declares them, the connector type of each, and the manifest's name for
// one of them. Internal to the host.
#pragma once

#include <filesystem>
#include <string>

#include "fmi/model_description.hpp"

namespace stride::host::ssp {

struct FmuFacts {
  fmi::ModelDescription md;
  const fmi::Variable* variable(const std::string& name) const;  // by name or alias
};

// Unpacks `fmu` into a temporary folder and reads its model description (throws with `label`).
FmuFacts read_fmu_facts(const std::filesystem::path& fmu, const std::string& label);

// The SSP connector type of an FMU variable type ("" for Binary and Clock, which SSP 1.0
// connectors do not have).
std::string type_of(fmi::VarType t);

// The manifest endpoint of variable `name` of `component`: an element of an FMI 2 structured
// array ("u[1]", the index as the FMU counts) is that element of the port Stride makes of the
// array, written as a range; anything else is "component.name".
std::string endpoint(const std::string& component, const std::string& name, const FmuFacts* facts);

// Whether a value bound by the system may set `v`: what the manifest's "parameters" of an FMU
// set (parameters, and the start values of inputs and of outputs and states that take one).
bool settable(const fmi::Variable& v);

}  // namespace stride::host::ssp
