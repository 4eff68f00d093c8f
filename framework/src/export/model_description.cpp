// modelDescription.xml of an exported FMU (see model_description.hpp).
#include "export/model_description.hpp"

#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include <pugixml.hpp>

#include "input/units.hpp"
#include "stride/host/input/json_input.hpp"

namespace stride::host::fmu_export {

namespace {

// Descriptions are free text from plugins: one printable line.
std::string text(const std::string& s) { return one_line(s, 1024); }

std::string value_text(const json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return number_text(v.get<double>());
  if (v.is_string()) return v.get<std::string>();
  std::string out;
  if (v.is_array())
    for (const json& e : v) out += (out.empty() ? "" : " ") + value_text(e);
  return out;
}

const char* fmi2_type(ValueType t) {
  switch (t) {
    case ValueType::real: return "Real";
    case ValueType::integer: return "Integer";
    case ValueType::boolean: return "Boolean";
    case ValueType::string: return "String";
  }
  return "Real";
}
const char* fmi3_type(ValueType t) {
  switch (t) {
    case ValueType::real: return "Float64";
    case ValueType::integer: return "Int32";
    case ValueType::boolean: return "Boolean";
    case ValueType::string: return "String";
  }
  return "Float64";
}
const char* causality_name(Causality c) {
  switch (c) {
    case Causality::parameter: return "parameter";
    case Causality::input: return "input";
    case Causality::output: return "output";
    case Causality::independent: return "independent";
  }
  return "local";
}
// Parameters are set before initialization (fixed); ports change with time, continuously for
// Real values.
const char* variability(const ExportedVariable& v) {
  if (v.causality == Causality::parameter) return "fixed";
  return v.type == ValueType::real ? "continuous" : "discrete";
}

void add_units(pugi::xml_node root, const ExportedModel& m) {
  std::set<std::string> units;
  for (const auto& v : m.variables)
    if (!v.unit.empty()) units.insert(v.unit);
  if (units.empty()) return;
  pugi::xml_node defs = root.append_child("UnitDefinitions");
  for (const std::string& u : units) {
    pugi::xml_node unit = defs.append_child("Unit");
    unit.append_attribute("name") = u.c_str();
    const auto d = unit_definition(u);
    if (!d) continue;  // declared, without its base units
    pugi::xml_node base = unit.append_child("BaseUnit");
    for (const auto& [name, e] : d->exponents) base.append_attribute(name.c_str()) = e;
    if (d->factor != 1.0) base.append_attribute("factor") = number_text(d->factor).c_str();
    if (d->offset != 0.0) base.append_attribute("offset") = number_text(d->offset).c_str();
  }
}

void add_log_categories(pugi::xml_node root) {
  pugi::xml_node cats = root.append_child("LogCategories");
  const std::pair<const char*, const char*> categories[] = {
      {"logStatusWarning", "warnings of the subsystems and of the co-simulation"},
      {"logStatusError", "errors: why a call returned an error"},
      {"logInfo", "messages of level info of the subsystems' plugins"},
      {"logAll", "every message"}};
  for (const auto& [name, description] : categories) {
    pugi::xml_node c = cats.append_child("Category");
    c.append_attribute("name") = name;
    c.append_attribute("description") = description;
  }
}

void add_default_experiment(pugi::xml_node root, const ExportedModel& m) {
  pugi::xml_node e = root.append_child("DefaultExperiment");
  e.append_attribute("startTime") = number_text(m.start_time).c_str();
  e.append_attribute("stopTime") = number_text(m.stop_time).c_str();
  if (m.step_size > 0) e.append_attribute("stepSize") = number_text(m.step_size).c_str();
}

// The attributes every version writes on the variable's element.
void common_attributes(pugi::xml_node n, const ExportedVariable& v) {
  n.append_attribute("name") = v.name.c_str();
  n.append_attribute("valueReference") = v.value_reference;
  if (!v.description.empty()) n.append_attribute("description") = text(v.description).c_str();
  n.append_attribute("causality") = causality_name(v.causality);
  n.append_attribute("variability") = v.causality == Causality::independent ? "continuous" : variability(v);
  if (v.causality == Causality::parameter) n.append_attribute("initial") = "exact";
  if (v.causality == Causality::output) n.append_attribute("initial") = "calculated";
}

// The type attributes (FMI 2: on the type element; FMI 3: on the variable itself).
void type_attributes(pugi::xml_node t, const ExportedVariable& v, int version) {
  const bool has_start = v.causality == Causality::parameter || v.causality == Causality::input;
  if (has_start && !v.start.is_null() && !(version == 3 && v.type == ValueType::string))
    t.append_attribute("start") = value_text(v.start).c_str();
  if (v.type == ValueType::real && !v.unit.empty()) t.append_attribute("unit") = v.unit.c_str();
  if (v.type == ValueType::real || v.type == ValueType::integer) {
    if (v.min)
      t.append_attribute("min") =
          value_text(v.type == ValueType::integer ? json(std::llround(*v.min)) : json(*v.min)).c_str();
    if (v.max)
      t.append_attribute("max") =
          value_text(v.type == ValueType::integer ? json(std::llround(*v.max)) : json(*v.max)).c_str();
  }
}

void add_variables2(pugi::xml_node root, const ExportedModel& m) {
  pugi::xml_node vars = root.append_child("ModelVariables");
  for (const auto& v : m.variables) {
    pugi::xml_node sv = vars.append_child("ScalarVariable");
    common_attributes(sv, v);
    type_attributes(sv.append_child(fmi2_type(v.type)), v, 2);
  }
}

void add_variables3(pugi::xml_node root, const ExportedModel& m) {
  pugi::xml_node vars = root.append_child("ModelVariables");
  for (const auto& v : m.variables) {
    pugi::xml_node n = vars.append_child(fmi3_type(v.type));
    common_attributes(n, v);
    type_attributes(n, v, 3);
    if (v.size > 1) n.append_child("Dimension").append_attribute("start") = static_cast<unsigned long long>(v.size);
    if (v.type == ValueType::string && !v.start.is_null())
      n.append_child("Start").append_attribute("value") = value_text(v.start).c_str();
  }
}

std::string joined(const std::vector<std::string>& items) {
  std::string s;
  for (const auto& i : items) s += (s.empty() ? "" : " ") + i;
  return s;
}

// Outputs and the initial unknowns (every output is calculated at initialization). FMI 2 names
// variables by their index in <ModelVariables> (from 1), FMI 3 by value reference.
void add_model_structure(pugi::xml_node root, const ExportedModel& m) {
  std::map<std::uint32_t, std::size_t> index;
  for (std::size_t i = 0; i < m.variables.size(); ++i) index[m.variables[i].value_reference] = i + 1;
  auto ref = [&](std::uint32_t vr) { return std::to_string(m.fmi_version == 2 ? index.at(vr) : vr); };
  pugi::xml_node ms = root.append_child("ModelStructure");
  pugi::xml_node outputs = m.fmi_version == 2 ? ms.append_child("Outputs") : ms;
  for (const auto& v : m.variables) {
    if (v.causality != Causality::output) continue;
    pugi::xml_node u = outputs.append_child(m.fmi_version == 2 ? "Unknown" : "Output");
    u.append_attribute(m.fmi_version == 2 ? "index" : "valueReference") = ref(v.value_reference).c_str();
    std::vector<std::string> deps, kinds;
    for (std::uint32_t d : v.dependencies) {
      deps.push_back(ref(d));
      kinds.push_back("dependent");
    }
    u.append_attribute("dependencies") = joined(deps).c_str();
    if (!deps.empty()) u.append_attribute("dependenciesKind") = joined(kinds).c_str();
  }
  pugi::xml_node initial = m.fmi_version == 2 ? ms.append_child("InitialUnknowns") : ms;
  for (const auto& v : m.variables)
    if (v.causality == Causality::output)
      initial.append_child(m.fmi_version == 2 ? "Unknown" : "InitialUnknown")
          .append_attribute(m.fmi_version == 2 ? "index" : "valueReference") = ref(v.value_reference).c_str();
  if (m.fmi_version == 2 && initial.empty()) ms.remove_child(initial);
  if (m.fmi_version == 2 && outputs.empty()) ms.remove_child(outputs);
}

void add_co_simulation(pugi::xml_node root, const ExportedModel& m) {
  pugi::xml_node cs = root.append_child("CoSimulation");
  cs.append_attribute("modelIdentifier") = m.model_identifier.c_str();
  cs.append_attribute("canHandleVariableCommunicationStepSize") = true;
  cs.append_attribute("canBeInstantiatedOnlyOncePerProcess") = m.only_once_per_process;
  cs.append_attribute(m.fmi_version == 2 ? "canGetAndSetFMUstate" : "canGetAndSetFMUState") = m.can_get_set_state;
  cs.append_attribute(m.fmi_version == 2 ? "canSerializeFMUstate" : "canSerializeFMUState") = false;
  if (m.fmi_version == 2) {
    cs.append_attribute("canNotUseMemoryManagementFunctions") = true;
    cs.append_attribute("canInterpolateInputs") = false;
    cs.append_attribute("maxOutputDerivativeOrder") = 0;
  } else {
    cs.append_attribute("hasEventMode") = false;
    cs.append_attribute("providesIntermediateUpdate") = false;
  }
}

}  // namespace

std::string model_description_xml(const ExportedModel& m) {
  pugi::xml_document doc;
  pugi::xml_node root = doc.append_child("fmiModelDescription");
  root.append_attribute("fmiVersion") = m.fmi_version == 2 ? "2.0" : "3.0";
  root.append_attribute("modelName") = text(m.model_name).c_str();
  root.append_attribute(m.fmi_version == 2 ? "guid" : "instantiationToken") = m.token.c_str();
  if (!m.description.empty()) root.append_attribute("description") = text(m.description).c_str();
  if (!m.generation_tool.empty()) root.append_attribute("generationTool") = text(m.generation_tool).c_str();
  root.append_attribute("variableNamingConvention") = "structured";
  if (m.fmi_version == 2) root.append_attribute("numberOfEventIndicators") = 0;
  add_co_simulation(root, m);
  add_units(root, m);
  add_log_categories(root);
  add_default_experiment(root, m);
  if (m.fmi_version == 2) add_variables2(root, m);
  else add_variables3(root, m);
  add_model_structure(root, m);
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_indent | pugi::format_no_declaration, pugi::encoding_utf8);
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" + out.str();
}

std::string content_token(const std::string& content) {
  // Two 64-bit FNV-1a hashes with different offsets: 128 bits, printed as a UUID.
  auto fnv = [&](std::uint64_t h) {
    for (unsigned char c : content) {
      h ^= c;
      h *= 0x100000001b3ULL;
    }
    return h;
  };
  const std::uint64_t a = fnv(0xcbf29ce484222325ULL), b = fnv(0x84222325cbf29ce4ULL);
  char s[64];
  std::snprintf(s, sizeof s, "{%08llx-%04llx-%04llx-%04llx-%012llx}", (unsigned long long)(a >> 32),
                (unsigned long long)((a >> 16) & 0xffff), (unsigned long long)(a & 0xffff),
                (unsigned long long)(b >> 48), (unsigned long long)(b & 0xffffffffffffULL));
  return s;
}

}  // namespace stride::host::fmu_export
