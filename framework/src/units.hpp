// Conversions between units that differ only by a factor and an offset (kN and N, bar and Pa,
// mm and m, degC and K), for connections between subsystems that declare different units for
// the same quantity (an FMU exported in kN feeding a plugin in N). Internal to the host.
#pragma once

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

}  // namespace stride::host
