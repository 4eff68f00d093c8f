// Conversions between units that differ only by a factor and an offset (kN and N, bar and Pa,
// mm and m, degC and K), for connections between subsystems that declare different units for
// the same quantity (an FMU exported in kN feeding a plugin in N). Internal to the host.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace stride::host {

// value_to = value_from * scale + offset
struct UnitConversion {
  double scale = 1.0;
  double offset = 0.0;
};

// The conversion from `from` to `to`, when both are known units of the same SI unit;
// nullopt otherwise (also for equal units: nothing to convert).
std::optional<UnitConversion> unit_conversion(const std::string& from, const std::string& to);

// A unit name the table above knows (SI or not).
bool known_unit(const std::string& name);

// The SI unit name for exponents of the base units kg, m, s, A, K, mol, cd, rad (as in an FMU's
// <BaseUnit>), e.g. {kg 1, m -1, s -2} -> "Pa"; "" when Stride has no name for it.
std::string si_unit_name(const std::map<std::string, int>& exponents);

}  // namespace stride::host
