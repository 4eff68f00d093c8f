// Values between Stride's representation and an FMU's types. Internal to the host.
//
// Ports carry doubles: an integer port value is rounded to the nearest integer and must lie in
// the type's range; a 64-bit integer from the FMU must be one a double holds exactly (|n| <= 2^53
// or a multiple of the spacing there). A Boolean is true above 0.5. Manifest values (JSON) keep
// their exact integers. A problem throws PluginError naming the FMU and the variable.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "fmi/model_description.hpp"
#include "stride/host/input/json_input.hpp"  // number_text
#include "stride/host/core/plugin_error.hpp"

namespace stride::host::fmi {

// A port value as the integer type T (rounded to the nearest).
template <class T>
T to_integer(double x, const std::string& label, const std::string& name) {
  const double r = std::nearbyint(x);
  // The largest T is not exact as a double for 64-bit types: compare against 2^63 / 2^64.
  const double hi = std::ldexp(1.0, std::numeric_limits<T>::digits);
  const double lo = std::numeric_limits<T>::is_signed ? -hi : 0.0;
  if (!(r >= lo && r < hi))
    throw PluginError(label, "input \"" + name + "\" = " + number_text(x) +
                                 " is outside the range of its integer type [" + number_text(lo) + ", " +
                                 number_text(hi - 1) + "]");
  return static_cast<T>(r);
}

// An integer of the FMU as a port value; 64-bit integers a double cannot hold are an error.
template <class T>
double from_integer(T v, const std::string& label, const std::string& name) {
  const double x = static_cast<double>(v);
  if constexpr (sizeof(T) == 8) {
    if (static_cast<long double>(x) != static_cast<long double>(v))
      throw PluginError(label,
                        "output \"" + name + "\" = " + std::to_string(v) +
                            " cannot be represented exactly as a number on a port (64-bit integers beyond 2^53)");
  }
  return x;
}

// A manifest value (a scalar or a list) as `n` elements of T; Booleans from true/false or 0/1.
template <class T>
std::vector<T> json_values(const json& value, std::size_t n) {
  std::vector<T> out;
  auto one = [](const json& x) -> T {
    if constexpr (std::is_same_v<T, bool>) return x.is_boolean() ? x.get<bool>() : x.get<double>() > 0.5;
    else return x.get<T>();
  };
  if (value.is_array())
    for (const auto& x : value) out.push_back(one(x));
  else
    out.assign(n, one(value));
  return out;
}

// Binary values are written as hexadecimal text ("0a1b"); throws std::invalid_argument.
std::vector<std::uint8_t> from_hex(const std::string& text);
std::string to_hex(const std::uint8_t* data, std::size_t size);

}  // namespace stride::host::fmi
