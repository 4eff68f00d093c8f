// FMU components of a system structure (see fmu_facts.hpp).
#include "ssp/fmu_facts.hpp"

#include <algorithm>

#include "fmi/unpack.hpp"

namespace stride::host::ssp {

const fmi::Variable* FmuFacts::variable(const std::string& name) const {
  for (const auto& v : md.variables)
    if (v.name == name || std::find(v.aliases.begin(), v.aliases.end(), name) != v.aliases.end()) return &v;
  return nullptr;
}

FmuFacts read_fmu_facts(const std::filesystem::path& fmu, const std::string& label) {
  fmi::TempFolder folder;
  fmi::unpack(fmu, folder.path(), label);
  return FmuFacts{fmi::read_model_description(folder.path() / "modelDescription.xml", label)};
}

std::string type_of(fmi::VarType t) {
  if (fmi::is_real(t)) return "real";
  switch (t) {
    case fmi::VarType::boolean: return "boolean";
    case fmi::VarType::string: return "string";
    case fmi::VarType::binary:
    case fmi::VarType::clock: return "";
    default: return "integer";  // the integer types and enumerations
  }
}

std::string endpoint(const std::string& component, const std::string& name, const FmuFacts* facts) {
  if (facts)
    for (const fmi::ElementName& n : fmi::element_names(facts->md))
      if (n.name == name)
        return component + "." + n.port + "[" + std::to_string(n.element) + ":" + std::to_string(n.element + 1) + "]";
  return component + "." + name;
}

bool settable(const fmi::Variable& v) { return v.is_parameter() || v.has_settable_start(); }

}  // namespace stride::host::ssp
