// modelDescription.xml, one function per section (see model_description.hpp).
#include "fmi/model_description.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <pugixml.hpp>

#include "fmi/limits.hpp"
#include "input/units.hpp"

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

json start_value(VarType t, const std::string& v, const std::string& where) {
  try {
    switch (t) {
      case VarType::real: {
        std::size_t used = 0;
        double x = std::stod(v, &used);
        if (used != v.size()) break;
        return x;
      }
      case VarType::integer:
      case VarType::enumeration: {
        std::size_t used = 0;
        long x = std::stol(v, &used);
        if (used != v.size()) break;
        return x;
      }
      case VarType::boolean:
        if (v == "true" || v == "1") return true;
        if (v == "false" || v == "0") return false;
        break;
      case VarType::string: return v;
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

// Declared types: unit, min and max a variable inherits.
struct TypeDef {
  std::string unit;
  std::optional<double> min, max;
};
// Unit definitions: the SI unit name Stride has for it, factor and offset.
struct UnitDef {
  std::string si;
  double factor = 1.0, offset = 0.0;
};

// The reader of one modelDescription.xml: the document, what earlier sections declared, and the
// description filled section by section.
class Reader {
 public:
  Reader(const fs::path& xml, const std::string& label) : xml_(xml), label_(label), file_(label + ": modelDescription.xml") {}

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
    read_model_variables();
    check_columns();
    if (md_.version == 2) read_model_structure2();
    else read_model_structure3();
    return std::move(md_);
  }

 private:
  // <fmiModelDescription>: version, names and the instantiation token.
  void read_root() {
    md_.fmi_version = root_.attribute("fmiVersion").value();
    if (md_.fmi_version.rfind("2.", 0) == 0) md_.version = 2;
    else if (md_.fmi_version.rfind("3.", 0) == 0) md_.version = 3;
    else throw FmuError(file_ + ": unsupported FMI version \"" + md_.fmi_version + "\"; Stride reads FMI 2.0 and 3.0");
    md_.model_name = root_.attribute("modelName").value();
    md_.token = root_.attribute(md_.version == 2 ? "guid" : "instantiationToken").value();
    md_.description = root_.attribute("description").value();
    md_.generation_tool = root_.attribute("generationTool").value();
    if (md_.model_name.empty()) throw FmuError(file_ + ": <fmiModelDescription> has no modelName");
  }

  // <CoSimulation> and <ModelExchange>: identifiers and capabilities.
  void read_interfaces() {
    const char* state_flag = md_.version == 2 ? "canGetAndSetFMUstate" : "canGetAndSetFMUState";
    if (auto cs = root_.child("CoSimulation")) {
      md_.has_cs = true;
      md_.cs_identifier = model_identifier(cs);
      md_.can_variable_step = attr_bool(cs, "canHandleVariableCommunicationStepSize", false);
      md_.cs_can_get_set_state = attr_bool(cs, state_flag, false);
      md_.only_once_per_process |= attr_bool(cs, "canBeInstantiatedOnlyOncePerProcess", false);
    }
    if (auto me = root_.child("ModelExchange")) {
      md_.has_me = true;
      md_.me_identifier = model_identifier(me);
      md_.me_can_get_set_state = attr_bool(me, state_flag, false);
      md_.only_once_per_process |= attr_bool(me, "canBeInstantiatedOnlyOncePerProcess", false);
    }
    if (!md_.has_cs && !md_.has_me) throw FmuError(file_ + ": neither <CoSimulation> nor <ModelExchange> is declared");
  }

  // The binary's name: binaries/<platform>/<modelIdentifier>.so, so a plain file name (the
  // standard asks for a C identifier; anything that could name another folder is refused).
  std::string model_identifier(pugi::xml_node interface) const {
    const std::string id = interface.attribute("modelIdentifier").value();
    const std::string where = file_ + ": <" + interface.name() + "> ";
    if (id.empty()) throw FmuError(where + "has no modelIdentifier");
    if (id == "." || id == ".." || id.find_first_of(std::string("/\\\0", 3)) != std::string::npos || id.size() > 200)
      throw FmuError(where + "modelIdentifier=\"" + id +
                     "\" is not a plain file name (the binary must be binaries/<platform>/<modelIdentifier>.so inside the FMU)");
    return id;
  }

  // <UnitDefinitions>: units given by SI base-unit exponents, a factor and an offset.
  void read_unit_definitions() {
    for (auto u : root_.child("UnitDefinitions").children("Unit")) {
      pugi::xml_node b = u.child("BaseUnit");
      if (!b) continue;
      std::map<std::string, int> exponents;
      for (const char* base : {"kg", "m", "s", "A", "K", "mol", "cd", "rad"}) exponents[base] = b.attribute(base).as_int(0);
      const std::string where = file_ + ": unit \"" + std::string(u.attribute("name").value()) + "\"";
      units_[u.attribute("name").value()] = {si_unit_name(exponents), attr_number(b, "factor", where).value_or(1.0),
                                             attr_number(b, "offset", where).value_or(0.0)};
    }
  }

  // <TypeDefinitions>: FMI 2 puts the attributes on a child element, FMI 3 on the type itself.
  void read_type_definitions() {
    for (auto t : root_.child("TypeDefinitions").children()) {
      pugi::xml_node v = md_.version == 2 ? t.first_child() : t;
      types_[t.attribute("name").value()] = {v.attribute("unit").value(), attr_number(v, "min", file_),
                                             attr_number(v, "max", file_)};
    }
  }

  // <ModelVariables>: every variable Stride exchanges; others are skipped (and refused where
  // they would be an input, output or parameter).
  void read_model_variables() {
    // FMI 3 structural parameters (array sizes) by value reference: their start values. Stride
    // sizes ports when the FMU is loaded, so they keep their start values.
    if (md_.version == 3)
      for (auto sv : root_.child("ModelVariables").children())
        if (std::string(sv.attribute("causality").value()) == "structuralParameter" && sv.attribute("start"))
          structural_[sv.attribute("valueReference").as_uint()] = sv.attribute("start").as_llong();
    if (md_.version == 3) check_value_references();
    std::size_t k = 0;
    for (auto sv : root_.child("ModelVariables").children()) {
      ++k;
      if (md_.version == 2 && std::string(sv.name()) != "ScalarVariable") continue;
      Variable v;
      if (!read_variable(sv, k, v)) continue;
      md_.variables.push_back(std::move(v));
    }
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
        throw FmuError(where(k, name) + ": valueReference=\"" + vr.value() + "\" is also that of variable \"" + it->second +
                       "\" (FMI 3 value references are unique; an alias is an <Alias> element)");
    }
  }

  // Every variable can be recorded: a scalar (or an alias) as <subsystem>.<name>, an array's
  // elements as <subsystem>.<name>.<index>. Two variables that would give one column are refused.
  void check_columns() const {
    std::map<std::string, const Variable*> scalars;
    for (const auto& v : md_.variables) {
      if (v.size == 1) scalars.emplace(v.name, &v);
      for (const auto& a : v.aliases)
        if (!scalars.emplace(a, &v).second)
          throw FmuError(file_ + ": alias \"" + a + "\" of variable \"" + v.name + "\" is the name of another variable");
    }
    for (const auto& v : md_.variables) {
      if (v.size == 1) continue;
      const std::string prefix = v.name + ".";
      for (auto it = scalars.lower_bound(prefix); it != scalars.end() && it->first.compare(0, prefix.size(), prefix) == 0; ++it) {
        const std::string index = it->first.substr(prefix.size());
        if (index.empty() || index.size() > 9 || index.find_first_not_of("0123456789") != std::string::npos ||
            (index.size() > 1 && index[0] == '0') || std::stoul(index) >= v.size)
          continue;
        throw FmuError(file_ + ": variable \"" + it->first + "\" and element " + index + " of array \"" + v.name +
                       "\" would both be recorded as column \"" + it->first + "\"");
      }
    }
  }

  std::string where(std::size_t k, const std::string& name) const {
    return file_ + ": variable " + std::to_string(k) + " \"" + name + "\"";
  }

  // One variable (element k of <ModelVariables>); false for a type Stride skips.
  bool read_variable(pugi::xml_node sv, std::size_t k, Variable& v) {
    pugi::xml_node tn = md_.version == 2 ? sv.first_child() : sv;  // the element with start/unit
    const std::string type_name = tn.name();
    v.name = sv.attribute("name").value();
    const std::string at = where(k, v.name);
    if (v.name.empty()) throw FmuError(file_ + ": variable " + std::to_string(k) + " has no name");
    if (!names_.insert(v.name).second) throw FmuError(at + ": declared twice");
    auto vr = sv.attribute("valueReference");
    if (!vr) throw FmuError(at + ": no valueReference");
    v.value_reference = vr.as_uint();
    v.causality = sv.attribute("causality") ? sv.attribute("causality").value() : "local";
    const bool real = type_name == "Real" || type_name == "Float64" || type_name == "Float32";
    v.variability = sv.attribute("variability") ? sv.attribute("variability").value() : (real ? "continuous" : "discrete");
    v.description = sv.attribute("description").value();
    if (type_name == "Real" || type_name == "Float64") v.type = VarType::real;
    else if (type_name == "Integer" || type_name == "Int32") v.type = VarType::integer;
    else if (type_name == "Boolean") v.type = VarType::boolean;
    else if (type_name == "String") v.type = VarType::string;
    else if (type_name == "Enumeration") v.type = VarType::enumeration;
    else {
      // Types Stride does not exchange (Float32, Int8..UInt64, Binary, Clock): such a variable
      // may not be an input, output or parameter.
      if (v.causality == "input" || v.causality == "output" || v.causality == "parameter")
        throw FmuError(at + ": type " + type_name + " is not supported as " + v.causality +
                       " (Stride exchanges Float64/Real, Int32/Integer, Boolean, String and Enumeration)");
      return false;
    }
    if (md_.version == 3 && sv.child("Dimension")) read_dimensions(sv, v, at);
    if (md_.version == 3)
      for (auto a : sv.children("Alias")) v.aliases.push_back(a.attribute("name").value());
    read_unit(tn, v, at);
    read_start(sv, tn, v, at);
    return true;
  }

  // An FMI 3 array: a port (or a list parameter) of that many elements. A dimension is a fixed
  // start or the start value of a structural parameter.
  void read_dimensions(pugi::xml_node sv, Variable& v, const std::string& at) const {
    for (auto dim : sv.children("Dimension")) {
      long long n = 0;
      std::string text;
      if (dim.attribute("start")) {
        n = dim.attribute("start").as_llong();
        text = std::string("start=\"") + dim.attribute("start").value() + "\"";
      } else if (dim.attribute("valueReference")) {
        const unsigned ref = dim.attribute("valueReference").as_uint();
        auto it = structural_.find(ref);
        if (it == structural_.end())
          throw FmuError(at + ": array dimension valueReference=\"" + std::to_string(ref) +
                         "\" names no structural parameter with a start value");
        n = it->second;
        text = "structural parameter " + std::to_string(ref) + " = " + std::to_string(n);
      } else {
        throw FmuError(at + ": a <Dimension> needs start or valueReference");
      }
      if (n < 1 || n > 1000000 || v.size * std::size_t(n) > 1000000)
        throw FmuError(at + ": array dimension " + text + " (expected arrays of 1 to 1000000 elements)");
      v.size *= std::size_t(n);
    }
    if (v.causality == "parameter" && v.type != VarType::real)
      throw FmuError(at + ": array parameters must be Float64 (Stride's list parameters are real numbers)");
    if (v.type == VarType::string && (v.causality == "input" || v.causality == "output"))
      throw FmuError(at + ": String arrays are not exchanged (Stride exchanges numbers only)");
  }

  // Unit, min and max from the declared type, then from the variable itself.
  void read_unit(pugi::xml_node tn, Variable& v, const std::string& at) const {
    std::string declared = tn.attribute("declaredType").value();
    if (!declared.empty()) {
      auto it = types_.find(declared);
      if (it == types_.end()) throw FmuError(at + ": unknown declaredType \"" + declared + "\"");
      v.unit = it->second.unit;
      v.min = it->second.min;
      v.max = it->second.max;
    }
    if (tn.attribute("unit")) v.unit = tn.attribute("unit").value();
    // A port in a unit the FMU defines from SI base units (<BaseUnit m="1" factor="0.0254"/>):
    // the FMU's definition is what it computes in, whatever UDUNITS-2 means by the name, so the
    // port is offered in the SI unit and converted at the FMU's boundary. Other units are
    // converted at connections (UDUNITS-2).
    if (v.type == VarType::real && (v.causality == "input" || v.causality == "output") && !v.unit.empty()) {
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

  // The start value: a scalar, an FMI 3 String's <Start value=.../>, or an array's elements
  // separated by white space (one value: every element).
  void read_start(pugi::xml_node sv, pugi::xml_node tn, Variable& v, const std::string& at) const {
    if (md_.version == 3 && v.type == VarType::string && sv.child("Start")) v.start = sv.child("Start").attribute("value").value();
    auto s = tn.attribute("start");
    if (s && v.size == 1) {
      v.start = start_value(v.type, s.value(), at);
    } else if (s && v.type == VarType::real) {
      json list = json::array();
      std::stringstream words(s.value());
      for (std::string w; words >> w;) list.push_back(start_value(v.type, w, at));
      if (list.size() == 1) list = json(std::vector<double>(v.size, list[0].get<double>()));
      if (list.size() != v.size)
        throw FmuError(at + ": start has " + std::to_string(list.size()) + " values for an array of " + std::to_string(v.size) +
                       " elements");
      v.start = list;
    }
  }

  bool is_input(std::size_t i) const { return i < md_.variables.size() && md_.variables[i].causality == "input"; }
  bool any_input() const {
    return std::any_of(md_.variables.begin(), md_.variables.end(), [](const Variable& v) { return v.causality == "input"; });
  }

  // FMI 2 <ModelStructure>: outputs' dependencies by ScalarVariable index (counting the ones
  // skipped above), derivatives, and the event indicators from the root's attribute.
  void read_model_structure2() {
    std::map<long, std::size_t> index_to_var;
    long idx = 0;
    std::size_t kept = 0;
    for (auto sv : root_.child("ModelVariables").children("ScalarVariable")) {
      ++idx;
      if (kept < md_.variables.size() && md_.variables[kept].name == sv.attribute("name").value()) index_to_var[idx] = kept++;
    }
    const pugi::xml_node ms = root_.child("ModelStructure");
    const bool inputs = any_input();
    for (auto u : ms.child("Outputs").children("Unknown")) {
      auto it = index_to_var.find(u.attribute("index").as_int());
      if (it == index_to_var.end()) continue;
      Variable& out = md_.variables[it->second];
      if (!u.attribute("dependencies")) out.feedthrough = inputs;  // no list: depends on everything
      else
        for (long d : index_list(u.attribute("dependencies").value()))
          if (auto j = index_to_var.find(d); j != index_to_var.end() && is_input(j->second)) out.feedthrough = true;
    }
    for (auto u : ms.child("Derivatives").children("Unknown")) (void)u, ++md_.state_count;
    md_.event_indicator_count = root_.attribute("numberOfEventIndicators").as_uint();
  }

  // FMI 3 <ModelStructure>: outputs' dependencies by value reference, derivatives, indicators.
  void read_model_structure3() {
    std::map<unsigned, std::size_t> vr_to_var;
    for (std::size_t i = 0; i < md_.variables.size(); ++i) vr_to_var.emplace(md_.variables[i].value_reference, i);
    const pugi::xml_node ms = root_.child("ModelStructure");
    const bool inputs = any_input();
    for (auto u : ms.children("Output")) {
      auto it = vr_to_var.find(u.attribute("valueReference").as_uint());
      if (it == vr_to_var.end()) continue;
      Variable& out = md_.variables[it->second];
      if (!u.attribute("dependencies")) out.feedthrough = inputs;
      else
        for (long d : index_list(u.attribute("dependencies").value()))
          if (auto j = vr_to_var.find(unsigned(d)); j != vr_to_var.end() && is_input(j->second)) out.feedthrough = true;
    }
    for (auto u : ms.children("ContinuousStateDerivative")) (void)u, ++md_.state_count;
    for (auto u : ms.children("EventIndicator")) (void)u, ++md_.event_indicator_count;
  }

  const fs::path& xml_;
  const std::string& label_;
  const std::string file_;  // for messages
  pugi::xml_document doc_;
  pugi::xml_node root_;
  std::map<std::string, TypeDef> types_;
  std::map<std::string, UnitDef> units_;
  std::map<unsigned, long long> structural_;
  std::set<std::string> names_;
  ModelDescription md_;
};

}  // namespace

std::string platform_folder(int version) {
#if defined(__x86_64__) && defined(__linux__)
  return version == 2 ? "linux64" : "x86_64-linux";
#elif defined(__aarch64__) && defined(__linux__)
  return version == 2 ? "linux64" : "aarch64-linux";
#else
  return version == 2 ? "unknown" : "unknown";
#endif
}

ModelDescription read_model_description(const fs::path& xml, const std::string& label) { return Reader(xml, label).read(); }

}  // namespace stride::host::fmi
