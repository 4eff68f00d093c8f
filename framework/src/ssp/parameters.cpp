// Parameter sets (.ssv), mappings (.ssm) and bindings of an SSD (see parameters.hpp).
#include "ssp/parameters.hpp"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "input/units.hpp"
#include "ssp/files.hpp"
#include "stride/host/ssp/ssp.hpp"

namespace stride::host::ssp {
namespace fs = std::filesystem;

namespace {

std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string w; ss >> w;) out.push_back(w);
  return out;
}

// The transformation of a mapping entry or a connection (its ssc child, if any).
Transformation read_transformation(const XmlFile& f, pugi::xml_node parent, std::vector<Diagnostic>& problems) {
  Transformation t;
  t.suppress_unit_conversion = f.boolean(parent, "suppressUnitConversion", problems).value_or(false);
  if (pugi::xml_node l = XmlFile::child(parent, kSsc, "LinearTransformation")) {
    t.linear = true;
    t.factor = f.number(l, "factor", problems).value_or(1.0);
    t.offset = f.number(l, "offset", problems).value_or(0.0);
  }
  for (const char* kind :
       {"BooleanMappingTransformation", "IntegerMappingTransformation", "EnumerationMappingTransformation"})
    if (pugi::xml_node m = XmlFile::child(parent, kSsc, kind)) {
      t.mapped = true;
      for (pugi::xml_node e : XmlFile::children(m, kSsc, "MapEntry"))
        t.table[e.attribute("source").value()] = e.attribute("target").value();
    }
  return t;
}

// The root element of a referenced or inline document: `container` holds it inline, or its
// `source` attribute names the file (relative to the SSD).
const XmlFile* document(const XmlFile& ssd, pugi::xml_node container, const fs::path& root, const char* ns,
                        const char* root_name, Bindings& keep, pugi::xml_node& out, std::vector<Diagnostic>& problems) {
  if (auto source = container.attribute("source")) {
    const auto file = resolve_uri(ssd, container, source.value(), root, problems);
    if (!file) return nullptr;
    keep.files.push_back(std::make_unique<XmlFile>(*file, ssd.label() + " -> " + std::string(source.value())));
    const XmlFile& f = *keep.files.back();
    if (!XmlFile::is(f.root(), ns, root_name)) {
      problems.push_back(
          f.problem(f.root(), std::string("expected the root element ") + root_name + " in namespace " + ns));
      return nullptr;
    }
    out = f.root();
    return &f;
  }
  out = XmlFile::child(container, ns, root_name);
  if (!out)
    problems.push_back(ssd.problem(container, std::string("neither a source attribute nor an inline ") + root_name));
  return out ? &ssd : nullptr;
}

// A parameter's value element: its type and values as written.
bool read_value(const XmlFile& f, pugi::xml_node p, BoundValue& v, std::vector<Diagnostic>& problems) {
  pugi::xml_node e;
  for (pugi::xml_node c = p.first_child(); c; c = c.next_sibling())
    if (c.type() == pugi::node_element && XmlFile::uri(c) == kSsv) e = c;
  if (!e) {
    problems.push_back(
        f.problem(p, "the parameter has no value element (Real, Integer, Boolean, String or Enumeration)"));
    return false;
  }
  v.type = XmlFile::local(e);
  if (v.type == "Real" || v.type == "Integer" || v.type == "Boolean") {
    v.values = words(e.attribute("value").value());
    v.unit = e.attribute("unit").value();
  } else if (v.type == "String") {
    if (auto a = e.attribute("value")) v.values = {a.value()};
    for (pugi::xml_node s : XmlFile::children(e, kSsv, "Value")) v.values.push_back(s.attribute("value").value());
  } else if (v.type == "Enumeration") {
    v.values = {e.attribute("value").value()};
    v.enumeration = e.attribute("name").value();
  } else {
    problems.push_back(
        f.problem(e, "a parameter of type " + v.type +
                         " is not supported (Stride reads Real, Integer, Boolean, String and Enumeration values)"));
    return false;
  }
  if (v.values.empty() || (v.type != "String" && !e.attribute("value"))) {
    problems.push_back(f.problem(e, "the value attribute is missing"));
    return false;
  }
  return true;
}

}  // namespace

void read_units(const XmlFile& f, pugi::xml_node units, UnitDefs& out, std::vector<Diagnostic>& problems) {
  for (pugi::xml_node u : XmlFile::children(units, kSsc, "Unit")) {
    UnitDef d;
    if (pugi::xml_node b = XmlFile::child(u, kSsc, "BaseUnit")) {
      for (const char* base : {"kg", "m", "s", "A", "K", "mol", "cd", "rad"})
        if (int e = b.attribute(base).as_int(0)) d.exponents[base] = e;
      d.factor = f.number(b, "factor", problems).value_or(1.0);
      d.offset = f.number(b, "offset", problems).value_or(0.0);
      if (d.factor == 0.0) problems.push_back(f.problem(b, "factor 0 defines no unit"));
    }
    out[u.attribute("name").value()] = d;
  }
}

void read_enumerations(pugi::xml_node enumerations, Enumerations& out) {
  for (pugi::xml_node e : XmlFile::children(enumerations, kSsc, "Enumeration"))
    for (pugi::xml_node i : XmlFile::children(e, kSsc, "Item"))
      out[e.attribute("name").value()][i.attribute("name").value()] = i.attribute("value").as_llong();
}

void read_binding(const XmlFile& ssd, pugi::xml_node b, const fs::path& root, Bindings& out,
                  std::vector<Diagnostic>& problems) {
  const std::string type = b.attribute("type").as_string("application/x-ssp-parameter-set");
  if (type != "application/x-ssp-parameter-set") {
    problems.push_back(
        ssd.problem(b, "parameter sources of type \"" + type + "\" are not supported (only SSP parameter sets, .ssv)"));
    return;
  }
  if (std::string(b.attribute("sourceBase").as_string("SSD")) != "SSD") {
    problems.push_back(ssd.problem(b, "sourceBase=\"component\" (a parameter set inside the FMU) is not supported"));
    return;
  }
  pugi::xml_node values_holder = b.attribute("source") ? b : XmlFile::child(b, kSsd, "ParameterValues");
  if (!values_holder) {
    problems.push_back(ssd.problem(b, "the binding has neither a source attribute nor <ParameterValues>"));
    return;
  }
  pugi::xml_node set;
  const XmlFile* set_file = document(ssd, values_holder, root, kSsv, "ParameterSet", out, set, problems);
  if (!set_file) return;
  out.set_name = set.attribute("name").value();
  // The mapping: source name -> every (target, transformation).
  std::multimap<std::string, std::pair<std::string, Transformation>> mapping;
  if (pugi::xml_node m = XmlFile::child(b, kSsd, "ParameterMapping")) {
    pugi::xml_node pm;
    if (const XmlFile* mf = document(ssd, m, root, kSsm, "ParameterMapping", out, pm, problems))
      for (pugi::xml_node e : XmlFile::children(pm, kSsm, "MappingEntry"))
        mapping.emplace(e.attribute("source").value(),
                        std::make_pair(e.attribute("target").value(), read_transformation(*mf, e, problems)));
  }
  out.units.push_back(std::make_unique<UnitDefs>());
  read_units(*set_file, XmlFile::child(set, kSsv, "Units"), *out.units.back(), problems);
  out.enumerations.push_back(std::make_unique<Enumerations>());
  read_enumerations(XmlFile::child(set, kSsv, "Enumerations"), *out.enumerations.back());
  const std::string prefix = b.attribute("prefix").value();
  for (pugi::xml_node p : XmlFile::children(XmlFile::child(set, kSsv, "Parameters"), kSsv, "Parameter")) {
    BoundValue v;
    v.file = set_file->label();
    v.where = set_file->where(p);
    v.units = out.units.back().get();
    v.enumerations = out.enumerations.back().get();
    if (!read_value(*set_file, p, v, problems)) continue;
    const std::string name = prefix + p.attribute("name").value();
    auto [first, last] = mapping.equal_range(name);
    if (first == last) {
      v.name = name;
      out.values.push_back(v);
    }
    for (auto it = first; it != last; ++it) {
      BoundValue mapped = v;
      mapped.name = it->second.first;
      mapped.transformation = it->second.second;
      out.values.push_back(mapped);
    }
  }
}

namespace {

// A real number written in `unit` (a unit the file or the SSD defines, else one UDUNITS-2
// reads) in the unit `to`.
std::optional<double> convert(double x, const std::string& unit, const std::string& to, const UnitDefs& file_units,
                              const UnitDefs& ssd_units, std::string& why) {
  if (unit.empty() || unit == to) return x;
  std::string from = unit;
  const UnitDef* def = file_units.count(unit)  ? &file_units.at(unit)
                       : ssd_units.count(unit) ? &ssd_units.at(unit)
                                               : nullptr;
  if (def) {
    x = x * def->factor + def->offset;
    from = si_product(def->exponents);
  }
  const auto c = unit_conversion(from, to.empty() ? "1" : to, &why);
  if (!c) {
    why =
        "the value in " + unit + " cannot be converted to the parameter's unit " + (to.empty() ? "1" : to) + ": " + why;
    return std::nullopt;
  }
  return x * c->scale + c->offset;
}

std::optional<json> real_value(const BoundValue& v, const ParameterTarget& t, const UnitDefs& ssd_units,
                               std::string& why) {
  json out = json::array();
  for (const std::string& w : v.values) {
    char* end = nullptr;
    double x = std::strtod(w.c_str(), &end);
    if (w.empty() || *end != '\0' || !std::isfinite(x)) {
      why = "\"" + w + "\" is not a finite number";
      return std::nullopt;
    }
    const bool keep_unit = v.transformation.suppress_unit_conversion || v.unit.empty();
    if (t.type.empty() && !keep_unit) {
      // A plugin's parameter: Stride converts "value unit" to its declared unit.
      if (v.transformation.linear) {
        why = "a linear transformation of a value with a unit is not supported for a Stride plugin's parameter";
        return std::nullopt;
      }
      const UnitDef* def = v.units->count(v.unit)    ? &v.units->at(v.unit)
                           : ssd_units.count(v.unit) ? &ssd_units.at(v.unit)
                                                     : nullptr;
      out.push_back(def ? number_text(x * def->factor + def->offset) + " " + si_product(def->exponents)
                        : w + " " + v.unit);
      continue;
    }
    if (!keep_unit) {
      auto y = convert(x, v.unit, t.unit, *v.units, ssd_units, why);
      if (!y) return std::nullopt;
      x = *y;
    }
    if (v.transformation.linear) x = v.transformation.factor * x + v.transformation.offset;
    out.push_back(x);
  }
  return out;
}

// An enumeration item's value: the parameter set's enumerations, then the SSD's.
std::optional<long long> item_value(const BoundValue& v, const std::string& item, const Enumerations& ssd,
                                    std::string& why) {
  for (const Enumerations* e : {v.enumerations, &ssd})
    for (const auto& [name, items] : *e)
      if ((v.enumeration.empty() || v.enumeration == name) && items.count(item)) return items.at(item);
  why = "enumeration item \"" + item + "\"" + (v.enumeration.empty() ? "" : " of " + v.enumeration) +
        " has no value (declare the enumeration in the parameter set's or the SSD's <Enumerations>)";
  return std::nullopt;
}

std::optional<json> scalar(const BoundValue& v, const std::string& word, const ParameterTarget& t,
                           const Enumerations& ssd, std::string& why) {
  std::string w = word;
  if (v.transformation.mapped && v.transformation.table.count(w)) w = v.transformation.table.at(w);
  if (v.type == "String") return json(w);
  if (v.type == "Boolean") {
    if (w == "true" || w == "1") return json(true);
    if (w == "false" || w == "0") return json(false);
    why = "\"" + w + "\" is not a Boolean";
    return std::nullopt;
  }
  if (v.type == "Enumeration") {
    if (t.type.empty() || t.type == "string") return json(w);  // a plugin's choice by name
    auto x = item_value(v, w, ssd, why);
    return x ? std::optional<json>(json(*x)) : std::nullopt;
  }
  char* end = nullptr;
  const long long x = std::strtoll(w.c_str(), &end, 10);
  if (w.empty() || *end != '\0') {
    why = "\"" + w + "\" is not an integer";
    return std::nullopt;
  }
  return json(x);
}

}  // namespace

std::optional<json> parameter_value(const BoundValue& v, const ParameterTarget& t, const UnitDefs& ssd_units,
                                    const Enumerations& ssd_enumerations, std::string& why) {
  static const std::map<std::string, std::set<std::string>> fits = {{"real", {"Real", "Integer"}},
                                                                    {"integer", {"Integer", "Enumeration"}},
                                                                    {"boolean", {"Boolean"}},
                                                                    {"string", {"String", "Enumeration"}}};
  if (!t.type.empty() && !fits.at(t.type).count(v.type)) {
    why = "a " + v.type + " value for a parameter of type " + t.type;
    return std::nullopt;
  }
  if (v.transformation.linear && v.type != "Real") {
    why = "a linear transformation applies to Real values only";
    return std::nullopt;
  }
  json out;
  if (v.type == "Real" || (t.type == "real" && v.type == "Integer")) {
    auto r = real_value(v, t, ssd_units, why);
    if (!r) return std::nullopt;
    out = *r;
  } else {
    out = json::array();
    for (const std::string& w : v.values) {
      auto x = scalar(v, w, t, ssd_enumerations, why);
      if (!x) return std::nullopt;
      out.push_back(*x);
    }
  }
  if (t.size > 1 || (t.type.empty() && out.size() > 1)) {
    if (t.size > 1 && out.size() != t.size) {
      why = std::to_string(out.size()) + " values for a parameter of " + std::to_string(t.size) + " elements";
      return std::nullopt;
    }
    return out;
  }
  if (out.size() != 1) {
    why = std::to_string(out.size()) + " values for a scalar parameter";
    return std::nullopt;
  }
  return out[0];
}

}  // namespace stride::host::ssp
