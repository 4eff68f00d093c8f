// modelDescription.xml, one function per section (see model_description.hpp).
#include "fmi/model_description.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include <pugixml.hpp>

#include "fmi/limits.hpp"
#include "input/units.hpp"
#include "stride/host/input/json_input.hpp"

namespace stride::host::fmi {
namespace fs = std::filesystem;

namespace {

std::string line_of(const fs::path& xml, std::ptrdiff_t offset) {
  std::ifstream in(xml, std::ios::binary);
  std::size_t line = 1;
  char c;
  for (std::ptrdiff_t i = 0; i < offset && in.get(c); ++i)
    if (c == '\n') ++line;
  return std::to_string(line);
}

bool attr_bool(const pugi::xml_node& n, const char* name, bool def) {
  auto a = n.attribute(name);
  if (!a) return def;
  const std::string v = a.value();
  return v == "true" || v == "1";
}

std::optional<double> attr_number(const pugi::xml_node& n, const char* name, const std::string& where) {
  auto a = n.attribute(name);
  if (!a) return std::nullopt;
  const std::string v = a.value();
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE)
    throw FmuError(where + ": attribute " + name + "=\"" + v + "\" is not a number");
  return x;
}

// The type of an FMI 2 <ScalarVariable>'s child or an FMI 3 variable element.
std::optional<VarType> type_of(const std::string& element, int version) {
  static const std::map<std::string, VarType> v2 = {{"Real", VarType::float64},      {"Integer", VarType::int32},
                                                    {"Boolean", VarType::boolean},   {"String", VarType::string},
                                                    {"Enumeration", VarType::enumeration}};
  static const std::map<std::string, VarType> v3 = {
      {"Float64", VarType::float64}, {"Float32", VarType::float32},
      {"Int8", VarType::int8},       {"UInt8", VarType::uint8},
      {"Int16", VarType::int16},     {"UInt16", VarType::uint16},
      {"Int32", VarType::int32},     {"UInt32", VarType::uint32},
      {"Int64", VarType::int64},     {"UInt64", VarType::uint64},
      {"Boolean", VarType::boolean}, {"String", VarType::string},
      {"Binary", VarType::binary},   {"Enumeration", VarType::enumeration},
      {"Clock", VarType::clock}};
  const auto& table = version <= 2 ? v2 : v3;
  auto it = table.find(element);
  if (it == table.end()) return std::nullopt;
  return it->second;
}

// One start value of type t from its text.
json start_value(VarType t, const std::string& v, const std::string& where) {
  try {
    std::size_t used = 0;
    switch (t) {
      case VarType::float64:
      case VarType::float32: {
        const double x = std::stod(v, &used);
        if (used == v.size()) return x;
        break;
      }
      case VarType::uint64: {
        if (v.empty() || v[0] == '-') break;
        const unsigned long long x = std::stoull(v, &used);
        if (used == v.size()) return x;
        break;
      }
      case VarType::boolean:
        if (v == "true" || v == "1") return true;
        if (v == "false" || v == "0") return false;
        break;
      case VarType::string:
      case VarType::binary: return v;
      case VarType::clock: break;
      default: {
        const long long x = std::stoll(v, &used);
        const auto [lo, hi] = integer_range(t);
        if (used == v.size() && double(x) >= lo && double(x) <= hi) return x;
        break;
      }
    }
  } catch (const std::exception&) {
  }
  throw FmuError(where + ": start=\"" + v + "\" is not a value of the variable's type");
}

std::vector<long> index_list(const char* text) {
  std::vector<long> out;
  std::stringstream ss(text);
  for (long i; ss >> i;) out.push_back(i);
  return out;
}

// Declared types: unit, min and max a variable inherits; an enumeration's items.
struct TypeDef {
  std::string unit, items;
  std::optional<double> min, max;
};
// Unit definitions: the SI unit name Stride has for it, factor and offset.
struct UnitDef {
  std::string si;
  double factor = 1.0, offset = 0.0;
};

}  // namespace

std::pair<double, double> integer_range(VarType t) {
  switch (t) {
    case VarType::int8: return {-128.0, 127.0};
    case VarType::uint8: return {0.0, 255.0};
    case VarType::int16: return {-32768.0, 32767.0};
    case VarType::uint16: return {0.0, 65535.0};
    case VarType::int32: return {-2147483648.0, 2147483647.0};
    case VarType::uint32: return {0.0, 4294967295.0};
    case VarType::uint64: return {0.0, 18446744073709551615.0};
    case VarType::boolean: return {0.0, 1.0};
    default: return {-9223372036854775808.0, 9223372036854775807.0};
  }
}

const char* type_name(VarType t, int version) {
  static const char* const v3[] = {"Float64", "Float32", "Int8",   "UInt8",       "Int16",
                                   "UInt16",  "Int32",   "UInt32", "Int64",       "UInt64",
                                   "Boolean", "String",  "Binary", "Enumeration", "Clock"};
  if (version <= 2) {
    if (t == VarType::float64) return "Real";
    if (t == VarType::int32) return "Integer";
  }
  return v3[static_cast<int>(t)];
}

const Variable* ModelDescription::find(const std::string& name) const {
  for (const auto& v : variables)
    if (v.name == name || std::find(v.aliases.begin(), v.aliases.end(), name) != v.aliases.end()) return &v;
  return nullptr;
}

namespace {

// The reader of one modelDescription.xml: the document, what earlier sections declared, and the
// description filled section by section.
class Reader {
 public:
  Reader(const fs::path& xml, const std::string& label)
      : xml_(xml), label_(label), file_(label + ": modelDescription.xml") {}

  ModelDescription read() {
    std::error_code ec;
    if (!fs::is_regular_file(xml_, ec)) throw FmuError(label_ + ": the archive has no modelDescription.xml");
    if (const auto size = fs::file_size(xml_, ec); !ec && size > max_xml_bytes())
      throw FmuError(file_ + ": " + std::to_string(size) + " bytes, more than the " + std::to_string(max_xml_bytes()) +
                     " Stride reads (STRIDE_FMU_MAX_XML_MIB)");
    pugi::xml_parse_result r = doc_.load_file(xml_.c_str());
    if (!r) throw FmuError(file_ + ": line " + line_of(xml_, r.offset) + ": malformed XML: " + r.description());
    root_ = doc_.child("fmiModelDescription");
    if (!root_) throw FmuError(file_ + ": the root element is not <fmiModelDescription>");
    read_root();
    read_interfaces();
    read_unit_definitions();
    read_type_definitions();
    read_default_experiment();
    read_model_variables();
    check_columns();
    if (md_.version == 1) read_direct_dependencies1();
    else if (md_.version == 2) read_model_structure2();
    else read_model_structure3();
    return std::move(md_);
  }

 private:
  // <fmiModelDescription>: version, names and the instantiation token.
  void read_root() {
    md_.fmi_version = root_.attribute("fmiVersion").value();
    if (md_.fmi_version == "1.0") md_.version = 1;
    else if (md_.fmi_version.rfind("2.", 0) == 0) md_.version = 2;
    else if (md_.fmi_version.rfind("3.", 0) == 0) md_.version = 3;
    else
      throw FmuError(file_ + ": unsupported FMI version \"" + md_.fmi_version +
                     "\"; Stride reads FMI 1.0, 2.0 and 3.0");
    md_.model_name = root_.attribute("modelName").value();
    md_.token = root_.attribute(md_.version <= 2 ? "guid" : "instantiationToken").value();
    md_.description = root_.attribute("description").value();
    md_.generation_tool = root_.attribute("generationTool").value();
    if (md_.model_name.empty()) throw FmuError(file_ + ": <fmiModelDescription> has no modelName");
  }

  // <CoSimulation>, <ModelExchange> and <ScheduledExecution>: identifiers and capabilities.
  void read_interfaces() {
    if (md_.version == 1) return read_implementation1();
    const char* state_flag = md_.version == 2 ? "canGetAndSetFMUstate" : "canGetAndSetFMUState";
    if (auto cs = root_.child("CoSimulation")) {
      md_.has_cs = true;
      md_.cs_identifier = model_identifier(cs);
      md_.can_variable_step = attr_bool(cs, "canHandleVariableCommunicationStepSize", false);
      md_.cs_event_mode = md_.version == 3 && attr_bool(cs, "hasEventMode", false);
      md_.cs_can_get_set_state = attr_bool(cs, state_flag, false);
      md_.only_once_per_process |= attr_bool(cs, "canBeInstantiatedOnlyOncePerProcess", false);
    }
    if (auto me = root_.child("ModelExchange")) {
      md_.has_me = true;
      md_.me_identifier = model_identifier(me);
      md_.me_can_get_set_state = attr_bool(me, state_flag, false);
      md_.only_once_per_process |= attr_bool(me, "canBeInstantiatedOnlyOncePerProcess", false);
    }
    md_.has_se = md_.version == 3 && root_.child("ScheduledExecution");
    if (!md_.has_cs && !md_.has_me && md_.has_se)
      throw FmuError(file_ + ": the FMU is for scheduled execution only (<ScheduledExecution>, its model partitions "
                             "activated by clocks); Stride runs co-simulation and model-exchange FMUs");
    if (!md_.has_cs && !md_.has_me) throw FmuError(file_ + ": neither <CoSimulation> nor <ModelExchange> is declared");
  }

  // FMI 1.0: one interface per FMU, named by the root's modelIdentifier (also every function's
  // prefix): co-simulation when <Implementation> declares <CoSimulation_StandAlone> or
  // <CoSimulation_Tool> (capabilities in its <Capabilities>), else model exchange. FMI 1.0
  // declares the numbers of continuous states and event indicators on the root.
  void read_implementation1() {
    const std::string id = model_identifier(root_);
    const pugi::xml_node impl = root_.child("Implementation");
    const pugi::xml_node tool = impl.child("CoSimulation_Tool");
    const pugi::xml_node cs = tool ? tool : impl.child("CoSimulation_StandAlone");
    if (impl && !cs)
      throw FmuError(file_ + ": <Implementation> declares neither <CoSimulation_StandAlone> nor <CoSimulation_Tool>");
    if (cs) {
      const pugi::xml_node caps = cs.child("Capabilities");
      md_.has_cs = true;
      md_.cs_identifier = id;
      md_.can_variable_step = attr_bool(caps, "canHandleVariableCommunicationStepSize", false);
      md_.only_once_per_process = attr_bool(caps, "canBeInstantiatedOnlyOncePerProcess", false);
      md_.cs_mime_type = tool ? tool.child("Model").attribute("type").value() : "application/x-fmu-sharedlibrary";
    } else {
      md_.has_me = true;
      md_.me_identifier = id;
    }
    md_.state_count = root_.attribute("numberOfContinuousStates").as_uint();
    md_.event_indicator_count = root_.attribute("numberOfEventIndicators").as_uint();
  }

  // The binary's name: binaries/<platform>/<modelIdentifier>.so, so a plain file name (the
  // standard asks for a C identifier; anything that could name another folder is refused).
  std::string model_identifier(pugi::xml_node interface) const {
    const std::string id = interface.attribute("modelIdentifier").value();
    const std::string where = file_ + ": <" + interface.name() + "> ";
    if (id.empty()) throw FmuError(where + "has no modelIdentifier");
    if (id == "." || id == ".." || id.find_first_of(std::string("/\\\0", 3)) != std::string::npos || id.size() > 200)
      throw FmuError(
          where + "modelIdentifier=\"" + id +
          "\" is not a plain file name (the binary must be binaries/<platform>/<modelIdentifier>.so inside the FMU)");
    return id;
  }

  // <UnitDefinitions>: units given by SI base-unit exponents, a factor and an offset.
  void read_unit_definitions() {
    for (auto u : root_.child("UnitDefinitions").children("Unit")) {
      pugi::xml_node b = u.child("BaseUnit");
      if (!b) continue;
      std::map<std::string, int> exponents;
      for (const char* base : {"kg", "m", "s", "A", "K", "mol", "cd", "rad"})
        exponents[base] = b.attribute(base).as_int(0);
      const std::string where = file_ + ": unit \"" + std::string(u.attribute("name").value()) + "\"";
      units_[u.attribute("name").value()] = {si_unit_name(exponents), attr_number(b, "factor", where).value_or(1.0),
                                             attr_number(b, "offset", where).value_or(0.0)};
    }
  }

  // <TypeDefinitions>: FMI 2 puts the attributes on a child element, FMI 3 on the type itself;
  // enumerations list their items.
  void read_type_definitions() {
    for (auto t : root_.child("TypeDefinitions").children()) {
      pugi::xml_node v = md_.version <= 2 ? t.first_child() : t;
      TypeDef def{v.attribute("unit").value(), "", attr_number(v, "min", file_), attr_number(v, "max", file_)};
      int index = 0;  // FMI 1.0 items have no value: they count from 1
      for (auto item : v.children("Item"))
        def.items += (def.items.empty() ? "" : ", ") +
                     (md_.version == 1 ? std::to_string(++index) : std::string(item.attribute("value").value())) +
                     " = " + item.attribute("name").value();
      types_[t.attribute("name").value()] = def;
    }
  }

  // <DefaultExperiment>: start, stop, step and tolerance where given.
  void read_default_experiment() {
    const pugi::xml_node e = root_.child("DefaultExperiment");
    const std::string where = file_ + ": <DefaultExperiment>";
    md_.experiment = {attr_number(e, "startTime", where), attr_number(e, "stopTime", where),
                      attr_number(e, "stepSize", where), attr_number(e, "tolerance", where)};
  }

  // <ModelVariables>: every variable, whatever its type.
  void read_model_variables() {
    if (md_.version == 3) check_value_references();
    std::size_t k = 0;
    for (auto sv : root_.child("ModelVariables").children()) {
      ++k;
      if (md_.version <= 2 && std::string(sv.name()) != "ScalarVariable") continue;
      Variable v;
      read_variable(sv, k, v);
      md_.variables.push_back(std::move(v));
    }
    if (md_.version == 3) resolve_dimensions();
  }

  // FMI 3: every variable has its own value reference (aliases are <Alias> elements).
  void check_value_references() const {
    std::map<unsigned, std::string> owner;
    std::size_t k = 0;
    for (auto sv : root_.child("ModelVariables").children()) {
      ++k;
      auto vr = sv.attribute("valueReference");
      if (!vr) continue;  // reported with the variable
      const std::string name = sv.attribute("name").value();
      auto [it, fresh] = owner.emplace(vr.as_uint(), name);
      if (!fresh)
        throw FmuError(where(k, name) + ": valueReference=\"" + vr.value() + "\" is also that of variable \"" +
                       it->second + "\" (FMI 3 value references are unique; an alias is an <Alias> element)");
    }
  }

  // Every variable can be recorded: a scalar (or an alias) as <subsystem>.<name>, an array's
  // elements as <subsystem>.<name>.<index>. Two variables that would give one column are refused.
  void check_columns() const {
    std::map<std::string, const Variable*> scalars;
    for (const auto& v : md_.variables) {
      if (v.dimensions.empty()) scalars.emplace(v.name, &v);
      for (const auto& a : v.aliases)
        if (!scalars.emplace(a, &v).second)
          throw FmuError(file_ + ": alias \"" + a + "\" of variable \"" + v.name +
                         "\" is the name of another variable");
    }
    for (const auto& v : md_.variables) {
      if (v.dimensions.empty()) continue;
      const std::string prefix = v.name + ".";
      for (auto it = scalars.lower_bound(prefix);
           it != scalars.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        const std::string index = it->first.substr(prefix.size());
        if (index.empty() || index.size() > 9 || index.find_first_not_of("0123456789") != std::string::npos ||
            (index.size() > 1 && index[0] == '0'))
          continue;
        throw FmuError(file_ + ": variable \"" + it->first + "\" and element " + index + " of array \"" + v.name +
                       "\" would both be recorded as column \"" + it->first + "\"");
      }
    }
  }

  std::string where(std::size_t k, const std::string& name) const {
    return file_ + ": variable " + std::to_string(k) + " \"" + name + "\"";
  }

  // One variable (element k of <ModelVariables>).
  void read_variable(pugi::xml_node sv, std::size_t k, Variable& v) {
    pugi::xml_node tn = md_.version <= 2 ? sv.first_child() : sv;  // the element with start/unit
    v.name = sv.attribute("name").value();
    const std::string at = where(k, v.name);
    if (v.name.empty()) throw FmuError(file_ + ": variable " + std::to_string(k) + " has no name");
    if (!names_.insert(v.name).second) throw FmuError(at + ": declared twice");
    const auto type = type_of(tn.name(), md_.version);
    if (!type) throw FmuError(at + ": unknown type <" + std::string(tn.name()) + ">");
    v.type = *type;
    auto vr = sv.attribute("valueReference");
    if (!vr) throw FmuError(at + ": no valueReference");
    v.value_reference = vr.as_uint();
    v.causality = sv.attribute("causality") ? sv.attribute("causality").value() : "local";
    v.variability = sv.attribute("variability") ? sv.attribute("variability").value()
                                                 : (is_real(v.type) ? "continuous" : "discrete");
    v.initial = sv.attribute("initial").value();
    if (md_.version == 1) fmi1_roles(sv, tn, v);
    v.description = sv.attribute("description").value();
    if (auto d = tn.attribute("derivative"))
      v.derivative_of = long(d.as_llong()) - (md_.version == 2 ? 1 : 0);  // resolved later
    for (auto dim : sv.children("Dimension")) read_dimension(dim, v, at);
    for (auto a : sv.children("Alias")) v.aliases.push_back(a.attribute("name").value());
    read_unit(tn, v, at);
    read_start(sv, tn, v, at);
    if (v.negated) v.unit_factor = -1.0, v.unit_offset = v.type == VarType::boolean ? 1.0 : 0.0;
  }

  // FMI 1.0 causality and variability in FMI 2 terms (see Variable).
  void fmi1_roles(pugi::xml_node sv, pugi::xml_node tn, Variable& v) const {
    const std::string causality = sv.attribute("causality") ? sv.attribute("causality").value() : "internal";
    const std::string variability = sv.attribute("variability") ? sv.attribute("variability").value() : "continuous";
    if (variability == "parameter" && causality != "output") v.causality = "parameter";
    else if (causality == "input" || causality == "output") v.causality = causality;
    else v.causality = "local";
    v.variability = variability == "parameter"                        ? "fixed"
                    : variability == "continuous" && !is_real(v.type) ? "discrete"
                                                                      : variability;
    if (tn.attribute("start") && !v.is_parameter() && v.causality != "input" && variability != "constant")
      v.initial = attr_bool(tn, "fixed", true) ? "exact" : "approx";
    v.negated = std::string(sv.attribute("alias").value()) == "negatedAlias";
  }

  // An FMI 3 array dimension: a fixed start, or a structural parameter's value reference
  // (resolved when all variables are read).
  void read_dimension(pugi::xml_node dim, Variable& v, const std::string& at) {
    Dimension d;
    if (auto s = dim.attribute("start")) {
      const long long n = s.as_llong(-1);
      if (n < 0 || n > 1000000)
        throw FmuError(at + ": array dimension start=\"" + s.value() + "\" (expected 0 to 1000000 elements)");
      d.start = std::size_t(n);
    } else if (auto r = dim.attribute("valueReference")) {
      d.structural = -2 - long(r.as_uint());  // a value reference, until resolved
    } else {
      throw FmuError(at + ": a <Dimension> needs start or valueReference");
    }
    v.dimensions.push_back(d);
  }

  // Dimensions by value reference become indices of structural parameters; sizes follow from
  // their start values.
  void resolve_dimensions() {
    std::map<unsigned, std::size_t> by_vr;
    for (std::size_t i = 0; i < md_.variables.size(); ++i) by_vr.emplace(md_.variables[i].value_reference, i);
    for (auto& v : md_.variables)
      for (auto& d : v.dimensions) {
        if (d.structural >= -1) continue;
        const unsigned ref = unsigned(-2 - d.structural);
        auto it = by_vr.find(ref);
        if (it == by_vr.end() || md_.variables[it->second].causality != "structuralParameter" ||
            !md_.variables[it->second].start.is_number_integer())
          throw FmuError(file_ + ": variable \"" + v.name + "\": array dimension valueReference=\"" +
                         std::to_string(ref) + "\" names no structural parameter with an integer start value");
        d.structural = long(it->second);
      }
    const Shape s = shape(md_, json::object());
    for (std::size_t i = 0; i < md_.variables.size(); ++i) {
      Variable& v = md_.variables[i];
      v.size = s.size[i];
      if (!v.start.is_array() || v.start.size() == v.size) continue;
      if (v.start.size() != 1)
        throw FmuError(file_ + ": variable \"" + v.name + "\": start has " + std::to_string(v.start.size()) +
                       " values for an array of " + std::to_string(v.size) + " elements");
      v.start = json(std::vector<json>(v.size, v.start[0]));  // one value: every element
    }
  }

  // Unit, min, max and enumeration items from the declared type, then from the variable.
  void read_unit(pugi::xml_node tn, Variable& v, const std::string& at) const {
    std::string declared = tn.attribute("declaredType").value();
    if (!declared.empty()) {
      auto it = types_.find(declared);
      if (it == types_.end()) throw FmuError(at + ": unknown declaredType \"" + declared + "\"");
      v.unit = it->second.unit;
      v.min = it->second.min;
      v.max = it->second.max;
      v.items = it->second.items;
    }
    if (tn.attribute("unit")) v.unit = tn.attribute("unit").value();
    // A port in a unit the FMU defines from SI base units (<BaseUnit m="1" factor="0.0254"/>):
    // the FMU's definition is what it computes in, whatever UDUNITS-2 means by the name, so the
    // port is offered in the SI unit and converted at the FMU's boundary. Other units are
    // converted at connections (UDUNITS-2).
    if (is_real(v.type) && (v.causality == "input" || v.causality == "output") && !v.unit.empty()) {
      auto u = units_.find(v.unit);
      if (u != units_.end() && !u->second.si.empty() && u->second.si != v.unit && u->second.factor != 0.0) {
        v.fmu_unit = v.unit;
        v.unit = u->second.si;
        v.unit_factor = u->second.factor;
        v.unit_offset = u->second.offset;
      }
    }
    if (auto x = attr_number(tn, "min", at)) v.min = x;
    if (auto x = attr_number(tn, "max", at)) v.max = x;
  }

  // The start value: an attribute (an array's elements separated by white space; one value:
  // every element), or FMI 3 String and Binary <Start value="..."/> elements.
  void read_start(pugi::xml_node sv, pugi::xml_node tn, Variable& v, const std::string& at) const {
    std::vector<json> values;
    if (md_.version == 3 && (v.type == VarType::string || v.type == VarType::binary)) {
      for (auto s : sv.children("Start")) values.push_back(start_value(v.type, s.attribute("value").value(), at));
    } else if (auto s = tn.attribute("start")) {
      if (v.type == VarType::string || v.dimensions.empty()) {
        values.push_back(start_value(v.type, s.value(), at));
      } else {
        std::stringstream words(s.value());
        for (std::string w; words >> w;) values.push_back(start_value(v.type, w, at));
      }
    }
    if (values.empty()) return;
    if (v.dimensions.empty()) v.start = values.front();
    else v.start = json(values);
  }

  bool is_input(std::size_t i) const { return i < md_.variables.size() && md_.variables[i].causality == "input"; }
  bool any_input() const {
    return std::any_of(md_.variables.begin(), md_.variables.end(),
                       [](const Variable& v) { return v.causality == "input"; });
  }
  // An output's feedthrough from its <Unknown>/<Output> element; `to_index` maps a dependency.
  template <class ToIndex>
  void read_dependencies(pugi::xml_node u, Variable& out, ToIndex to_index) {
    if (!u.attribute("dependencies")) {
      out.feedthrough = any_input();  // no list: depends on everything
      return;
    }
    for (long d : index_list(u.attribute("dependencies").value()))
      if (auto j = to_index(d); j && is_input(*j)) out.feedthrough = true;
  }
  void derivative(std::size_t i, std::optional<std::size_t> state) {
    if (!state) throw FmuError(file_ + ": the derivative \"" + md_.variables[i].name + "\" names no state variable");
    md_.variables[i].derivative_of = long(*state);
    md_.derivatives.push_back(i);
  }

  // FMI 1.0 <DirectDependency> of each output: the inputs it depends on at the same time, by
  // name; without the element, every input.
  void read_direct_dependencies1() {
    std::size_t i = 0;
    for (auto sv : root_.child("ModelVariables").children("ScalarVariable")) {
      Variable& v = md_.variables[i++];
      if (v.causality != "output") continue;
      const pugi::xml_node dd = sv.child("DirectDependency");
      if (!dd) {
        v.feedthrough = any_input();
        continue;
      }
      for (auto n : dd.children("Name")) {
        const Variable* u = md_.find(n.text().get());
        v.feedthrough = v.feedthrough || (u && u->causality == "input");
      }
    }
  }

  // FMI 2 <ModelStructure>: outputs and derivatives by ScalarVariable index (from 1).
  void read_model_structure2() {
    auto by_index = [&](long index) -> std::optional<std::size_t> {
      if (index < 1 || std::size_t(index) > md_.variables.size()) return std::nullopt;
      return std::size_t(index - 1);
    };
    const pugi::xml_node ms = root_.child("ModelStructure");
    for (auto u : ms.child("Outputs").children("Unknown"))
      if (auto i = by_index(u.attribute("index").as_int())) read_dependencies(u, md_.variables[*i], by_index);
    for (auto u : ms.child("Derivatives").children("Unknown")) {
      const auto i = by_index(u.attribute("index").as_int());
      if (!i) throw FmuError(file_ + ": <Derivatives> names no variable at index " + u.attribute("index").value());
      derivative(*i, by_index(md_.variables[*i].derivative_of + 1));
    }
    md_.event_indicator_count = root_.attribute("numberOfEventIndicators").as_uint();
  }

  // FMI 3 <ModelStructure>: outputs, derivatives and event indicators by value reference.
  void read_model_structure3() {
    std::map<unsigned, std::size_t> vr_to_var;
    for (std::size_t i = 0; i < md_.variables.size(); ++i) vr_to_var.emplace(md_.variables[i].value_reference, i);
    auto by_vr = [&](long vr) -> std::optional<std::size_t> {
      auto it = vr_to_var.find(unsigned(vr));
      if (vr < 0 || it == vr_to_var.end()) return std::nullopt;
      return it->second;
    };
    const pugi::xml_node ms = root_.child("ModelStructure");
    for (auto u : ms.children("Output"))
      if (auto i = by_vr(u.attribute("valueReference").as_llong(-1))) read_dependencies(u, md_.variables[*i], by_vr);
    for (auto u : ms.children("ContinuousStateDerivative")) {
      const auto i = by_vr(u.attribute("valueReference").as_llong(-1));
      if (!i) throw FmuError(file_ + ": <ContinuousStateDerivative> names no variable: valueReference=\"" +
                             u.attribute("valueReference").value() + "\"");
      derivative(*i, by_vr(md_.variables[*i].derivative_of));
    }
    for (auto u : ms.children("EventIndicator")) {
      const auto i = by_vr(u.attribute("valueReference").as_llong(-1));
      if (!i) throw FmuError(file_ + ": <EventIndicator> names no variable");
      md_.indicators.push_back(*i);
    }
  }

  const fs::path& xml_;
  const std::string& label_;
  const std::string file_;  // for messages
  pugi::xml_document doc_;
  pugi::xml_node root_;
  std::map<std::string, TypeDef> types_;
  std::map<std::string, UnitDef> units_;
  std::set<std::string> names_;
  ModelDescription md_;
};

// A structural parameter's value for a subsystem: from the manifest's parameters, else its start.
long long structural_value(const Variable& p, const json& parameters) {
  const json& v = parameters.contains(p.name) ? parameters[p.name] : p.start;
  if (v.is_number_unsigned()) return v.get<unsigned long long>() > 1000000 ? 1000001 : v.get<long long>();
  return v.is_number_integer() ? v.get<long long>() : -1;
}

}  // namespace

Shape shape(const ModelDescription& md, const json& parameters) {
  Shape s;
  s.size.resize(md.variables.size(), 1);
  for (std::size_t i = 0; i < md.variables.size(); ++i) {
    const Variable& v = md.variables[i];
    std::size_t n = 1;
    for (const auto& d : v.dimensions) {
      std::size_t k = d.start;
      if (d.structural >= 0) {
        const Variable& p = md.variables[std::size_t(d.structural)];
        const long long value = structural_value(p, parameters);
        if (value < 0 || value > 1000000)
          throw ParameterError("/" + pointer_escape(p.name),
                               "expected an array size of 0 to 1000000 (structural parameter of \"" + v.name +
                                   "\"), found " + std::to_string(value));
        k = std::size_t(value);
      }
      n *= k;
      if (n > 1000000)
        throw ParameterError("/" + pointer_escape(v.name),
                             "array \"" + v.name + "\" would have more than 1000000 elements");
    }
    s.size[i] = n;
  }
  for (std::size_t i : md.derivatives) s.states += s.size[i];
  for (std::size_t i : md.indicators) s.indicators += s.size[i];
  if (md.version <= 2) s.indicators = md.event_indicator_count;
  if (md.version == 1) s.states = md.state_count;
  return s;
}

std::string platform_folder(int version) {
#if defined(__x86_64__) && defined(__linux__)
  return version <= 2 ? "linux64" : "x86_64-linux";
#elif defined(__aarch64__) && defined(__linux__)
  return version <= 2 ? "linux64" : "aarch64-linux";
#else
  return version <= 2 ? "unknown" : "unknown";
#endif
}

ModelDescription read_model_description(const fs::path& xml, const std::string& label) {
  return Reader(xml, label).read();
}

std::optional<IndexedName> indexed_name(const std::string& name) {
  const auto open = name.rfind('[');
  if (open == std::string::npos || open == 0 || name.back() != ']' || name.size() - open > 11) return std::nullopt;
  const std::string digits = name.substr(open + 1, name.size() - open - 2);
  if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos ||
      (digits.size() > 1 && digits[0] == '0'))
    return std::nullopt;
  return IndexedName{name.substr(0, open), std::stoul(digits)};
}

std::string structured_array_name(const Variable& first) { return indexed_name(first.name)->base; }

std::vector<std::size_t> structured_array(const ModelDescription& md, std::size_t i) {
  const Variable& first = md.variables[i];
  const auto named = indexed_name(first.name);
  if (md.version > 2 || first.type != VarType::float64 || !named || named->index > 1) return {};
  std::vector<std::size_t> run{i};
  for (std::size_t j = i + 1; j < md.variables.size(); ++j) {
    const Variable& v = md.variables[j];
    if (v.name != named->base + "[" + std::to_string(named->index + run.size()) + "]" || v.type != first.type ||
        v.causality != first.causality || v.variability != first.variability || v.unit != first.unit)
      break;
    run.push_back(j);
  }
  if (run.size() < 2 || md.find(named->base)) return {};
  return run;
}

std::vector<ElementName> element_names(const ModelDescription& md) {
  std::vector<ElementName> out;
  for (std::size_t i = 0; i < md.variables.size(); ++i) {
    const std::vector<std::size_t> run = structured_array(md, i);
    for (std::size_t k = 0; k < run.size(); ++k)
      out.push_back({md.variables[run[k]].name, structured_array_name(md.variables[i]), k});
    if (!run.empty()) i = run.back();
  }
  return out;
}

}  // namespace stride::host::fmi
