// Parameter bindings of an SSD (SSP 1.0): the values of a parameter set (.ssv, inline or a
// file), renamed and transformed by a parameter mapping (.ssm, inline or a file), with the
// binding's prefix; then each value made into a manifest parameter value for the variable it
// sets (units converted, linear transformations and mapping tables applied). Internal to the
// host.
//
// Order: read_binding() for each <ParameterBinding> (component level first, then system level;
// an element's bindings are alternative sets, one of them applied, the system's winning over a
// component's) -> for each entry, parameter_value() with the declaration of the variable it sets.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ssp/xml.hpp"

namespace stride::host::ssp {

// A unit a file defines by its SI base units (<ssc:Unit><ssc:BaseUnit .../>).
struct UnitDef {
  std::map<std::string, int> exponents;
  double factor = 1.0, offset = 0.0;
};
using UnitDefs = std::map<std::string, UnitDef>;
// Enumerations: name -> item name -> value.
using Enumerations = std::map<std::string, std::map<std::string, long long>>;

void read_units(const XmlFile& f, pugi::xml_node units, UnitDefs& out, std::vector<Diagnostic>& problems);
void read_enumerations(pugi::xml_node enumerations, Enumerations& out);

// The transformation a mapping entry applies (ssc:LinearTransformation, or a mapping table).
struct Transformation {
  double factor = 1.0, offset = 0.0;
  std::map<std::string, std::string> table;  // Boolean, Integer and Enumeration mappings (values as text)
  bool linear = false, mapped = false;
  bool suppress_unit_conversion = false;
};

// One value a binding gives a name.
struct BoundValue {
  std::string name;                 // after the prefix and the mapping
  std::string type;                 // Real, Integer, Boolean, String, Enumeration
  std::vector<std::string> values;  // as written (arrays: several)
  std::string unit;                 // Real
  std::string enumeration;          // Enumeration: the enumeration's name, when given
  Transformation transformation;
  std::string file, where;  // the <Parameter>: its file and "line N: path"
  std::string origin() const { return file + ": " + where; }
  const UnitDefs* units = nullptr;  // the units the parameter set defines
  const Enumerations* enumerations = nullptr;
};

// Everything the bindings of one element read, kept alive with their files.
struct Bindings {
  std::string set_name;  // the <ParameterSet name>
  std::vector<BoundValue> values;
  std::vector<std::unique_ptr<XmlFile>> files;
  std::vector<std::unique_ptr<UnitDefs>> units;
  std::vector<std::unique_ptr<Enumerations>> enumerations;
};

// Reads the <ParameterBinding> `b` of the SSD `ssd` (files relative to `root`, which they may not
// leave) into `out`.
void read_binding(const XmlFile& ssd, pugi::xml_node b, const std::filesystem::path& root, Bindings& out,
                  std::vector<Diagnostic>& problems);

// What a parameter of a Stride subsystem expects: its type ("real", "integer", "boolean",
// "string"; "" when not known, for a plugin the manifest checks later), unit and size.
struct ParameterTarget {
  std::string type;
  std::string unit;
  std::size_t size = 1;
};

// The manifest value of `v` for `target`; nullopt with a problem in `why`. `ssd_units` and
// `ssd_enumerations` are the SSD's, consulted after the parameter set's own.
std::optional<json> parameter_value(const BoundValue& v, const ParameterTarget& target, const UnitDefs& ssd_units,
                                    const Enumerations& ssd_enumerations, std::string& why);

}  // namespace stride::host::ssp
