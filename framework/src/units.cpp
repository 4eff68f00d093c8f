#include "units.hpp"

#include <map>
#include <numbers>

namespace stride::host {
namespace {

// A unit as (SI unit, factor, offset): value_SI = value * factor + offset.
struct Known {
  const char* si;
  double factor;
  double offset;
};

const std::map<std::string, Known>& table() {
  static const std::map<std::string, Known> t = {
      // force
      {"N", {"N", 1, 0}}, {"mN", {"N", 1e-3, 0}}, {"kN", {"N", 1e3, 0}}, {"MN", {"N", 1e6, 0}},
      // pressure
      {"Pa", {"Pa", 1, 0}}, {"kPa", {"Pa", 1e3, 0}}, {"MPa", {"Pa", 1e6, 0}}, {"bar", {"Pa", 1e5, 0}},
      {"mbar", {"Pa", 1e2, 0}},
      // length
      {"m", {"m", 1, 0}}, {"mm", {"m", 1e-3, 0}}, {"cm", {"m", 1e-2, 0}}, {"km", {"m", 1e3, 0}},
      // velocity
      {"m/s", {"m/s", 1, 0}}, {"mm/s", {"m/s", 1e-3, 0}}, {"km/h", {"m/s", 1 / 3.6, 0}},
      // mass
      {"kg", {"kg", 1, 0}}, {"g", {"kg", 1e-3, 0}}, {"t", {"kg", 1e3, 0}},
      // time
      {"s", {"s", 1, 0}}, {"ms", {"s", 1e-3, 0}}, {"min", {"s", 60, 0}}, {"h", {"s", 3600, 0}},
      // temperature
      {"K", {"K", 1, 0}}, {"degC", {"K", 1, 273.15}},
      // angle and angular velocity
      {"rad", {"rad", 1, 0}}, {"deg", {"rad", std::numbers::pi / 180, 0}},
      {"rad/s", {"rad/s", 1, 0}}, {"rpm", {"rad/s", 2 * std::numbers::pi / 60, 0}},
      {"deg/s", {"rad/s", std::numbers::pi / 180, 0}},
      // volume flow
      {"m3/s", {"m^3/s", 1, 0}}, {"m^3/s", {"m^3/s", 1, 0}}, {"l/min", {"m^3/s", 1e-3 / 60, 0}},
      {"L/min", {"m^3/s", 1e-3 / 60, 0}},
      // power, energy, torque
      {"W", {"W", 1, 0}}, {"kW", {"W", 1e3, 0}}, {"J", {"J", 1, 0}}, {"kJ", {"J", 1e3, 0}},
      {"N.m", {"N.m", 1, 0}}, {"N*m", {"N.m", 1, 0}}, {"kN.m", {"N.m", 1e3, 0}},
  };
  return t;
}

}  // namespace

std::optional<UnitConversion> unit_conversion(const std::string& from, const std::string& to) {
  if (from == to) return std::nullopt;
  const auto& t = table();
  auto a = t.find(from), b = t.find(to);
  if (a == t.end() || b == t.end() || std::string(a->second.si) != b->second.si) return std::nullopt;
  // v_SI = v_from fa + oa = v_to fb + ob
  UnitConversion c;
  c.scale = a->second.factor / b->second.factor;
  c.offset = (a->second.offset - b->second.offset) / b->second.factor;
  return c;
}

bool known_unit(const std::string& name) { return table().count(name) > 0; }

std::string si_unit_name(const std::map<std::string, int>& exponents) {
  using E = std::map<std::string, int>;
  static const std::map<E, std::string> names = {
      {{{"m", 1}}, "m"},
      {{{"kg", 1}}, "kg"},
      {{{"s", 1}}, "s"},
      {{{"K", 1}}, "K"},
      {{{"rad", 1}}, "rad"},
      {{{"m", 1}, {"s", -1}}, "m/s"},
      {{{"m", 1}, {"s", -2}}, "m/s^2"},
      {{{"rad", 1}, {"s", -1}}, "rad/s"},
      {{{"kg", 1}, {"m", 1}, {"s", -2}}, "N"},
      {{{"kg", 1}, {"m", -1}, {"s", -2}}, "Pa"},
      {{{"kg", 1}, {"m", 2}, {"s", -2}}, "J"},
      {{{"kg", 1}, {"m", 2}, {"s", -3}}, "W"},
      {{{"m", 3}, {"s", -1}}, "m^3/s"},
  };
  E e;
  for (const auto& [k, v] : exponents)
    if (v != 0) e[k] = v;
  auto it = names.find(e);
  return it == names.end() ? "" : it->second;
}

}  // namespace stride::host
