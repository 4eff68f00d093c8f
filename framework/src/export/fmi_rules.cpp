// Checks of a modelDescription.xml against the FMI 2.0 / 3.0 rules (see fmi_rules.hpp). One
// method per section of the document, in the order the standard declares them.
#include "export/fmi_rules.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <pugixml.hpp>

namespace stride::host::fmu_export {

namespace {

const std::set<std::string> kCausalities2 = {"parameter", "calculatedParameter", "input", "output",
                                             "local",     "independent"};
const std::set<std::string> kCausalities3 = {"parameter",   "calculatedParameter", "input", "output",
                                              "local",       "independent",         "structuralParameter"};
const std::set<std::string> kVariabilities = {"constant", "fixed", "tunable", "discrete", "continuous"};
const std::set<std::string> kTypes2 = {"Real", "Integer", "Boolean", "String", "Enumeration"};
const std::set<std::string> kTypes3 = {"Float32", "Float64", "Int8",   "UInt8",  "Int16",  "UInt16",      "Int32",
                                        "UInt32",  "Int64",   "UInt64", "Boolean", "String", "Binary", "Enumeration",
                                        "Clock"};
const std::set<std::string> kDependencyKinds = {"dependent", "constant", "fixed", "tunable", "discrete"};

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
  return true;
}

std::optional<double> number(const std::string& s) {
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(s.c_str(), &end);
  if (*end != '\0' || errno == ERANGE) return std::nullopt;
  return x;
}

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}

// One variable as the checks need it.
struct Var {
  pugi::xml_node node;  // <ScalarVariable> (FMI 2) or the typed element (FMI 3)
  pugi::xml_node type;  // the element with start, unit, min, max
  std::string name, type_name, causality, variability, initial;
  unsigned long vr = 0;
  std::size_t index = 0;  // from 1, in document order
  std::size_t elements = 1;
};

class Rules {
 public:
  explicit Rules(const std::string& text) : text_(text) {}

  std::vector<std::string> check() {
    const pugi::xml_parse_result r = doc_.load_string(text_.c_str());
    if (!r) {
      problem(static_cast<std::ptrdiff_t>(r.offset), std::string("malformed XML: ") + r.description());
      return problems_;
    }
    root_ = doc_.child("fmiModelDescription");
    if (!root_) {
      problem(doc_.first_child(), "the root element must be <fmiModelDescription>");
      return problems_;
    }
    if (!root()) return problems_;
    element_order();
    interfaces();
    units();
    types();
    default_experiment();
    variables();
    model_structure();
    return problems_;
  }

 private:
  // <fmiModelDescription>: version and the attributes it requires.
  bool root() {
    const std::string v = root_.attribute("fmiVersion").value();
    if (v == "2.0") version_ = 2;
    else if (v.rfind("3.", 0) == 0) version_ = 3;
    else {
      problem(root_, "fmiVersion=\"" + v + "\": expected \"2.0\" or \"3.0\"");
      return false;
    }
    require(root_, "modelName");
    require(root_, version_ == 2 ? "guid" : "instantiationToken");
    const std::string naming = root_.attribute("variableNamingConvention").as_string("flat");
    if (naming != "flat" && naming != "structured")
      problem(root_, "variableNamingConvention=\"" + naming + "\": expected flat or structured");
    structured_ = naming == "structured";
    return true;
  }

  // The children in the order of the schema (each at most once, ModelVariables required).
  void element_order() {
    const std::vector<std::string> order =
        version_ == 2 ? std::vector<std::string>{"ModelExchange", "CoSimulation", "UnitDefinitions", "TypeDefinitions",
                                                 "LogCategories", "DefaultExperiment", "VendorAnnotations",
                                                 "ModelVariables", "ModelStructure"}
                      : std::vector<std::string>{"ModelExchange", "CoSimulation", "ScheduledExecution",
                                                 "UnitDefinitions", "TypeDefinitions", "LogCategories",
                                                 "DefaultExperiment", "ModelVariables", "ModelStructure",
                                                 "Annotations"};
    std::size_t at = 0;
    std::set<std::string> seen;
    for (pugi::xml_node c = root_.first_child(); c; c = c.next_sibling()) {
      if (c.type() != pugi::node_element) continue;
      const std::string n = c.name();
      std::size_t pos = 0;
      while (pos < order.size() && order[pos] != n) ++pos;
      if (pos == order.size()) problem(c, "<" + n + "> is not an element of <fmiModelDescription>");
      else if (!seen.insert(n).second) problem(c, "<" + n + "> appears twice");
      else if (pos < at) problem(c, "<" + n + "> comes after <" + order[at] + ">, the standard orders it before");
      else at = pos;
    }
    if (!root_.child("ModelVariables")) problem(root_, "<ModelVariables> is missing");
    if (!root_.child("ModelStructure")) problem(root_, "<ModelStructure> is missing");
  }

  void interfaces() {
    bool any = false;
    for (const char* kind : {"ModelExchange", "CoSimulation", "ScheduledExecution"}) {
      pugi::xml_node i = root_.child(kind);
      if (!i) continue;
      any = true;
      const std::string id = i.attribute("modelIdentifier").value();
      if (!i.attribute("modelIdentifier")) problem(i, std::string("<") + kind + "> has no modelIdentifier");
      else if (!is_identifier(id))
        problem(
            i, "modelIdentifier=\"" + id + "\" is not a C identifier (it names the binary and prefixes its functions)");
    }
    if (!any) problem(root_, "neither <CoSimulation> nor <ModelExchange> is declared");
  }

  void units() {
    for (pugi::xml_node u : root_.child("UnitDefinitions").children("Unit")) {
      const std::string name = u.attribute("name").value();
      if (!u.attribute("name")) problem(u, "<Unit> has no name");
      else if (!units_.insert(name).second) problem(u, "unit \"" + name + "\" is defined twice");
      if (pugi::xml_node b = u.child("BaseUnit")) {
        for (pugi::xml_attribute a : b.attributes()) {
          const std::string an = a.name();
          if (an == "factor" || an == "offset") {
            const auto x = number(a.value());
            if (!x || (an == "factor" && *x == 0.0))
              problem(b, "unit \"" + name + "\": " + an + "=\"" + a.value() + "\"");
          } else if (!std::set<std::string>{"kg", "m", "s", "A", "K", "mol", "cd", "rad"}.count(an)) {
            problem(b, "unit \"" + name + "\": <BaseUnit> has no attribute " + an);
          }
        }
      }
    }
  }

  void types() {
    for (pugi::xml_node t : root_.child("TypeDefinitions").children()) {
      const std::string name = t.attribute("name").value();
      if (name.empty()) problem(t, "a type definition has no name");
      else if (!types_.emplace(name, version_ == 2 ? t.first_child() : t).second)
        problem(t, "type \"" + name + "\" is defined twice");
    }
  }

  void default_experiment() {
    pugi::xml_node e = root_.child("DefaultExperiment");
    if (!e) return;
    std::map<std::string, double> v;
    for (const char* a : {"startTime", "stopTime", "tolerance", "stepSize"})
      if (e.attribute(a)) {
        if (auto x = number(e.attribute(a).value())) v[a] = *x;
        else problem(e, std::string(a) + "=\"" + e.attribute(a).value() + "\" is not a number");
      }
    if (v.count("startTime") && v.count("stopTime") && !(v["stopTime"] > v["startTime"]))
      problem(e, "stopTime must be after startTime");
    for (const char* a : {"tolerance", "stepSize"})
      if (v.count(a) && !(v[a] > 0)) problem(e, std::string(a) + " must be positive");
  }

  // <ModelVariables>: each variable on its own, then value references across them.
  void variables() {
    std::size_t index = 0;
    for (pugi::xml_node n : root_.child("ModelVariables").children()) {
      if (n.type() != pugi::node_element) continue;
      Var v;
      v.node = n;
      v.index = ++index;
      if (version_ == 2) {
        if (std::string(n.name()) != "ScalarVariable") {
          problem(n, std::string("<") + n.name() + "> in <ModelVariables>: FMI 2 declares <ScalarVariable> elements");
          continue;
        }
        v.type = n.first_child();
        v.type_name = v.type.name();
      } else {
        v.type = n;
        v.type_name = n.name();
      }
      variable(v);
      vars_.push_back(v);
    }
    value_references();
    for (const Var& v : vars_) dimensions(v);
    independent_variable();
  }

  // FMI 3.0 (2.4.7.4): exactly one variable is the independent one; FMI 2.0: at most one. It is
  // a floating-point scalar, the time the FMU is at.
  void independent_variable() {
    std::vector<const Var*> found;
    for (const Var& v : vars_)
      if (v.causality == "independent") found.push_back(&v);
    if (version_ == 3 && found.empty())
      problem(root_.child("ModelVariables"),
              "no variable has causality=\"independent\" (FMI 3.0 requires exactly one, e.g. <Float64 name=\"time\" "
              "valueReference=\"...\" causality=\"independent\" variability=\"continuous\"/>)");
    for (std::size_t i = 1; i < found.size(); ++i)
      problem(found[i]->node, "variable \"" + found[i]->name + "\" is a second independent variable (\"" +
                                  found[0]->name + "\" is one; the standard allows " +
                                  (version_ == 3 ? "exactly one)" : "at most one)"));
    for (const Var* v : found) {
      const bool floating = v->type_name == "Real" || v->type_name == "Float64" || v->type_name == "Float32";
      if (!floating)
        problem(v->node,
                "the independent variable \"" + v->name + "\" is " + v->type_name + ", not a floating-point type");
      if (v->node.child("Dimension"))
        problem(v->node, "the independent variable \"" + v->name + "\" is an array, not a scalar");
    }
  }

  void variable(Var& v) {
    v.name = v.node.attribute("name").value();
    const std::string what = "variable \"" + v.name + "\"";
    if (!v.node.attribute("name")) problem(v.node, "a variable has no name");
    else if (!names_.insert(v.name).second) problem(v.node, what + " is declared twice");
    else if (!structured_ && (v.name.find('[') != std::string::npos))
      problem(v.node, what + ": an array element's name needs variableNamingConvention=\"structured\"");
    if (!v.node.attribute("valueReference")) problem(v.node, what + " has no valueReference");
    else {
      const std::string text = v.node.attribute("valueReference").value();
      char* end = nullptr;
      v.vr = std::strtoul(text.c_str(), &end, 10);
      if (text.empty() || *end != '\0' || text[0] == '-' || v.vr > 0xffffffffUL)
        problem(v.node, what + ": valueReference=\"" + text + "\" is not an unsigned 32-bit integer");
    }
    if (!(version_ == 2 ? kTypes2 : kTypes3).count(v.type_name)) {
      problem(v.node, what + ": no type element (expected one of " +
                          std::string(version_ == 2 ? "Real, Integer, Boolean, String, Enumeration"
                                                    : "Float64, Int32, Boolean, String, ...") +
                          ")");
      return;
    }
    causality_variability(v, what);
    start_value(v, what);
    unit_of(v, what);
  }

  // The combinations of causality, variability and initial the standard allows (FMI 2.0 Table
  // of section 2.2.7; FMI 3.0 section 2.4.7.4).
  void causality_variability(Var& v, const std::string& what) {
    v.causality = v.node.attribute("causality").as_string("local");
    const bool continuous_type = v.type_name == "Real" || v.type_name == "Float64" || v.type_name == "Float32";
    v.variability = v.node.attribute("variability").as_string(continuous_type ? "continuous" : "discrete");
    if (!(version_ == 2 ? kCausalities2 : kCausalities3).count(v.causality))
      problem(v.node, what + ": causality=\"" + v.causality + "\" is not a causality");
    if (!kVariabilities.count(v.variability))
      problem(v.node, what + ": variability=\"" + v.variability + "\" is not a variability");
    if (v.variability == "continuous" && !continuous_type)
      problem(v.node, what + ": only Real (Float) variables may be continuous, this is " + v.type_name);
    static const std::map<std::string, std::set<std::string>> allowed = {
        {"parameter", {"fixed", "tunable"}},          {"calculatedParameter", {"fixed", "tunable"}},
        {"structuralParameter", {"fixed", "tunable"}}, {"input", {"discrete", "continuous"}},
        {"output", {"constant", "discrete", "continuous"}},
        {"local", {"constant", "fixed", "tunable", "discrete", "continuous"}},
        {"independent", {"continuous"}}};
    if (auto it = allowed.find(v.causality); it != allowed.end() && !it->second.count(v.variability))
      problem(v.node, what + ": causality " + v.causality + " with variability " + v.variability + " is not allowed");
    initial_of(v, what);
  }

  void initial_of(Var& v, const std::string& what) {
    // The default and the allowed values of initial, by causality and variability.
    std::string def;
    std::set<std::string> ok;
    const std::string& c = v.causality;
    const bool constant = v.variability == "constant", fixed = v.variability == "fixed" || v.variability == "tunable";
    if (c == "parameter" || c == "structuralParameter") def = "exact", ok = {"exact"};
    else if (c == "calculatedParameter") def = "calculated", ok = {"approx", "calculated"};
    else if (c == "output" || c == "local") {
      if (constant) def = "exact", ok = {"exact"};
      else if (fixed) def = "calculated", ok = {"approx", "calculated"};
      else def = "calculated", ok = {"exact", "approx", "calculated"};
    }
    const auto a = v.node.attribute("initial");
    if (a && ok.empty()) problem(v.node, what + ": causality " + c + " takes no initial attribute");
    else if (a && !ok.count(a.value()))
      problem(v.node, what + ": initial=\"" + std::string(a.value()) + "\" is not allowed for causality " + c +
                          " with variability " + v.variability);
    v.initial = a ? a.value() : def;
  }

  // start: required for inputs, constants and initial exact or approx; not allowed for
  // calculated values and the independent variable. Within [min, max].
  void start_value(const Var& v, const std::string& what) {
    const bool string3 = version_ == 3 && v.type_name == "String";
    const bool has = string3 ? static_cast<bool>(v.node.child("Start")) : static_cast<bool>(v.type.attribute("start"));
    const bool needed =
        v.causality == "input" || v.variability == "constant" || v.initial == "exact" || v.initial == "approx";
    const bool forbidden = v.initial == "calculated" || v.causality == "independent";
    if (needed && !has)
      problem(v.node, what + ": a start value is required (causality " + v.causality + ", initial " + v.initial + ")");
    if (forbidden && has)
      problem(v.node,
              what + ": a start value is not allowed (" +
                  (v.causality == "independent" ? std::string("the independent variable") : "initial calculated") +
                  ")");
    if (!has || string3 || v.type_name == "String" || v.type_name == "Binary" || v.type_name == "Clock") return;
    const auto min = number(bound(v, "min")), max = number(bound(v, "max"));
    if (min && max && *min > *max) problem(v.node, what + ": min is above max");
    for (const std::string& w : words(v.type.attribute("start").value())) {
      if (v.type_name == "Boolean") {
        if (w != "true" && w != "false" && w != "0" && w != "1")
          problem(v.node, what + ": start \"" + w + "\" is not a Boolean");
        continue;
      }
      const auto x = number(w);
      if (!x) problem(v.node, what + ": start \"" + w + "\" is not a number");
      else if ((min && *x < *min) || (max && *x > *max))
        problem(v.node, what + ": start " + w + " is outside [min, max]");
    }
  }

  // An attribute of the variable, else of its declared type.
  std::string bound(const Var& v, const char* name) const {
    if (auto a = v.type.attribute(name)) return a.value();
    if (auto t = types_.find(v.type.attribute("declaredType").value()); t != types_.end())
      return t->second.attribute(name).value();
    return "";
  }

  void unit_of(const Var& v, const std::string& what) {
    const std::string declared = v.type.attribute("declaredType").value();
    if (!declared.empty() && !types_.count(declared))
      problem(v.node, what + ": declaredType \"" + declared + "\" is not defined");
    for (const char* a : {"unit", "displayUnit"}) {
      const std::string u = v.type.attribute(a).value();
      if (!u.empty() && !units_.count(u))
        problem(v.node, what + ": " + a + " \"" + u + "\" is not defined in <UnitDefinitions>");
    }
  }

  // FMI 3: every variable has its own value reference. FMI 2: variables sharing one are aliases
  // of one type, of which at most one can be set (an input or a parameter).
  void value_references() {
    std::map<std::pair<std::string, unsigned long>, const Var*> seen;
    for (const Var& v : vars_) {
      if (!v.node.attribute("valueReference")) continue;
      const std::string key = version_ == 2 ? base_type(v.type_name) : std::string();
      auto [it, fresh] = seen.emplace(std::make_pair(key, v.vr), &v);
      if (fresh) continue;
      const Var& other = *it->second;
      if (version_ == 3)
        problem(v.node, "variable \"" + v.name + "\" has valueReference " + std::to_string(v.vr) + " of variable \"" +
                            other.name + "\" (FMI 3 value references are unique)");
      else if (settable(v) && settable(other))
        problem(v.node, "variables \"" + other.name + "\" and \"" + v.name + "\" share valueReference " +
                            std::to_string(v.vr) + " and can both be set");
    }
    for (const Var& v : vars_) by_vr_[v.vr] = &v;
  }
  static std::string base_type(const std::string& t) { return t == "Enumeration" ? "Integer" : t; }
  static bool settable(const Var& v) { return v.causality == "input" || v.causality == "parameter"; }

  // FMI 3 arrays: each <Dimension> a positive start, or a structural parameter or constant.
  void dimensions(const Var& v) {
    if (version_ != 3) return;
    std::size_t n = 1;
    bool fixed = true;
    for (pugi::xml_node d : v.node.children("Dimension")) {
      if (d.attribute("start") && d.attribute("valueReference"))
        problem(d, "variable \"" + v.name + "\": a <Dimension> has start or valueReference, not both");
      if (auto s = d.attribute("start")) {
        const long long x = s.as_llong(0);
        if (x < 1)
          problem(d, "variable \"" + v.name + "\": <Dimension start=\"" + s.value() + "\"> is not a positive size");
        n *= static_cast<std::size_t>(std::max(1LL, x));
      } else if (auto r = d.attribute("valueReference")) {
        fixed = false;
        auto it = by_vr_.find(r.as_ullong());
        if (it == by_vr_.end() ||
            !(it->second->causality == "structuralParameter" || it->second->variability == "constant"))
          problem(d, "variable \"" + v.name + "\": <Dimension valueReference=\"" + r.value() +
                         "\"> names no structural parameter or constant");
      } else {
        problem(d, "variable \"" + v.name + "\": a <Dimension> needs start or valueReference");
      }
    }
    if (!fixed || v.type_name == "String" || !v.type.attribute("start")) return;
    const std::size_t given = words(v.type.attribute("start").value()).size();
    if (given != 1 && given != n)
      problem(v.node, "variable \"" + v.name + "\": start has " + std::to_string(given) + " values for " +
                          std::to_string(n) + " elements");
  }

  // <ModelStructure>: outputs (all of them, in order), derivatives, initial unknowns.
  void model_structure() {
    pugi::xml_node ms = root_.child("ModelStructure");
    if (!ms) return;
    std::vector<const Var*> outputs, needed_initial;
    for (const Var& v : vars_) {
      if (v.causality == "output") outputs.push_back(&v);
      if ((v.causality == "output" && v.initial != "exact") || v.causality == "calculatedParameter")
        needed_initial.push_back(&v);
    }
    if (version_ == 2) {
      unknowns(ms.child("Outputs"), "Unknown", outputs, true, "Outputs");
      unknowns(ms.child("Derivatives"), "Unknown", derivatives(), false, "Derivatives");
      unknowns(ms.child("InitialUnknowns"), "Unknown", needed_initial, false, "InitialUnknowns");
    } else {
      unknowns(ms, "Output", outputs, true, "Output");
      unknowns(ms, "ContinuousStateDerivative", derivatives(), false, "ContinuousStateDerivative");
      unknowns(ms, "InitialUnknown", needed_initial, false, "InitialUnknown");
    }
  }

  std::vector<const Var*> derivatives() const {
    std::vector<const Var*> out;
    for (const Var& v : vars_)
      if (v.type.attribute("derivative")) out.push_back(&v);
    return out;
  }

  // The variable an Unknown / Output element names (FMI 2 by index, FMI 3 by value reference).
  const Var* named(pugi::xml_node u) {
    const char* key = version_ == 2 ? "index" : "valueReference";
    return lookup(u.attribute(key).value(), u, key);
  }
  // The variable `ref` names (an index from 1, or a value reference); problem at `at` if none.
  const Var* lookup(const std::string& ref, pugi::xml_node at, const char* key) {
    char* end = nullptr;
    const unsigned long long x = std::strtoull(ref.c_str(), &end, 10);
    const bool ok = !ref.empty() && *end == '\0' && ref[0] != '-';
    if (ok && version_ == 2 && x >= 1 && x <= vars_.size()) return &vars_[static_cast<std::size_t>(x - 1)];
    if (ok && version_ == 3)
      if (auto it = by_vr_.find(static_cast<unsigned long>(x)); it != by_vr_.end()) return it->second;
    problem(at, std::string(key) + " \"" + ref + "\" names no variable");
    return nullptr;
  }

  // The elements `tag` under `parent`: each names one of `expected` (all of them when `exact`,
  // else at least those), in the variables' order, with dependencies on known variables only.
  void unknowns(pugi::xml_node parent, const char* tag, const std::vector<const Var*>& expected, bool exact,
                const std::string& section) {
    std::set<const Var*> listed;
    std::size_t last = 0;
    for (pugi::xml_node u : parent.children(tag)) {
      const Var* v = named(u);
      if (!v) continue;
      if (!listed.insert(v).second) problem(u, section + ": variable \"" + v->name + "\" is listed twice");
      if (std::find(expected.begin(), expected.end(), v) == expected.end())
        problem(u, section + ": variable \"" + v->name + "\" does not belong here (causality " + v->causality + ")");
      if (v->index < last) problem(u, section + ": variable \"" + v->name + "\" is out of the variables' order");
      last = v->index;
      dependencies(u, *v, section);
    }
    for (const Var* v : expected)
      if (!listed.count(v) && (exact || section.find("nitial") != std::string::npos))
        problem(parent ? parent : root_.child("ModelStructure"),
                section + ": variable \"" + v->name + "\" (causality " + v->causality + ") is not listed");
  }

  void dependencies(pugi::xml_node u, const Var& v, const std::string& section) {
    const auto deps = u.attribute("dependencies");
    const auto kinds = u.attribute("dependenciesKind");
    if (!deps) {
      if (kinds) problem(u, section + ": variable \"" + v.name + "\": dependenciesKind without dependencies");
      return;
    }
    const auto d = words(deps.value()), k = words(kinds.value());
    if (kinds && k.size() != d.size())
      problem(u, section + ": variable \"" + v.name + "\": " + std::to_string(d.size()) + " dependencies but " +
                     std::to_string(k.size()) + " dependenciesKind");
    for (const auto& kind : k)
      if (!kDependencyKinds.count(kind)) problem(u, section + ": dependenciesKind \"" + kind + "\" is not a kind");
    const bool initial = section.find("nitial") != std::string::npos;
    for (const auto& w : d) {
      const Var* on = lookup(w, u, version_ == 2 ? "dependency index" : "dependency valueReference");
      if (!on) continue;
      // Known: inputs and states (continuous time); at initialization also parameters and
      // values with initial exact.
      const bool state = is_state(*on);
      const bool known = on->causality == "input" || state || on->causality == "independent" ||
                         (initial && (on->initial == "exact" || on->causality == "parameter" ||
                                      on->causality == "structuralParameter"));
      if (!known)
        problem(u, section + ": variable \"" + v.name + "\" depends on \"" + on->name + "\", which is not a known " +
                       (initial ? "at initialization" : "(an input or a state)"));
    }
  }

  bool is_state(const Var& v) const {
    for (const Var& d : vars_) {
      const auto a = d.type.attribute("derivative");
      if (!a) continue;
      const unsigned long ref = a.as_ullong();
      if (version_ == 2 ? ref == v.index : ref == v.vr) return true;
    }
    return false;
  }

  void require(pugi::xml_node n, const char* attribute) {
    if (!n.attribute(attribute) || std::string(n.attribute(attribute).value()).empty())
      problem(n, std::string("<") + n.name() + "> requires the attribute " + attribute);
  }

  void problem(pugi::xml_node n, const std::string& what) { problem(n.offset_debug(), what); }
  void problem(std::ptrdiff_t offset, const std::string& what) {
    std::size_t line = 1;
    for (std::ptrdiff_t i = 0; i < offset && static_cast<std::size_t>(i) < text_.size(); ++i)
      if (text_[static_cast<std::size_t>(i)] == '\n') ++line;
    problems_.push_back("line " + std::to_string(line) + ": " + what);
  }

  const std::string& text_;
  pugi::xml_document doc_;
  pugi::xml_node root_;
  int version_ = 2;
  bool structured_ = false;
  std::set<std::string> units_, names_;
  std::map<std::string, pugi::xml_node> types_;
  std::vector<Var> vars_;
  std::map<unsigned long, const Var*> by_vr_;
  std::vector<std::string> problems_;
};

}  // namespace

std::vector<std::string> model_description_problems(const std::string& xml_text) { return Rules(xml_text).check(); }

}  // namespace stride::host::fmu_export
