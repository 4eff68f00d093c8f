// Units through UDUNITS-2 (framework/src/units.cpp): conversions checked against the SI
// definitions of the units (1 bar = 1e5 Pa, 1 rpm = 2π/60 rad/s, 0 degC = 273.15 K exactly by
// definition), quantities written with a unit, and hostile unit texts.
#include <doctest/doctest.h>

#include <cmath>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "input/units.hpp"
#include "files.hpp"

using namespace stride::host;

namespace {

using stride_test::contains;
UnitConversion conversion(const std::string& from, const std::string& to) {
  std::string why;
  auto c = unit_conversion(from, to, &why);
  INFO(from << " -> " << to << ": " << why);
  REQUIRE(c.has_value());
  return *c;
}

double quantity(const std::string& text, const std::string& to) {
  std::string why;
  auto q = quantity_in(text, to, why);
  INFO(text << " in " << to << ": " << why);
  REQUIRE(q.has_value());
  return *q;
}

std::string quantity_error(const std::string& text, const std::string& to) {
  std::string why;
  auto q = quantity_in(text, to, why);
  CHECK_FALSE(q.has_value());
  return why;
}
}  // namespace

TEST_CASE("units: prefixes, products and powers convert by the SI definitions") {
  // Exact in binary floating point: the SI prefixes 1e3, 1e5 and 1e6 are representable.
  CHECK(conversion("kN", "N").scale == 1000.0);
  CHECK(conversion("kN", "N").offset == 0.0);
  CHECK(conversion("bar", "Pa").scale == 1e5);
  CHECK(conversion("MPa", "Pa").scale == 1e6);
  CHECK(conversion("N", "kN").scale == doctest::Approx(1e-3).epsilon(1e-15));
  CHECK(conversion("ms", "s").scale == doctest::Approx(1e-3).epsilon(1e-15));
  CHECK(conversion("m", "mm").scale == 1000.0);
  CHECK(conversion("l/min", "m^3/s").scale == doctest::Approx(1e-3 / 60).epsilon(1e-14));
  CHECK(conversion("km/h", "m/s").scale == doctest::Approx(1 / 3.6).epsilon(1e-15));
  CHECK(conversion("kN.m", "N*m").scale == 1000.0);
  // rpm = one revolution (2π rad) per minute; "deg" is Stride's name for UDUNITS-2's degree.
  CHECK(conversion("rpm", "rad/s").scale == doctest::Approx(2 * std::numbers::pi / 60).epsilon(1e-15));
  CHECK(conversion("deg", "rad").scale == doctest::Approx(std::numbers::pi / 180).epsilon(1e-15));
}

TEST_CASE("units: degC to K is a scale and an offset (273.15 K by the definition of the Celsius scale)") {
  const UnitConversion c = conversion("degC", "K");
  CHECK(c.scale == doctest::Approx(1.0).epsilon(1e-14));
  CHECK(c.offset == doctest::Approx(273.15).epsilon(1e-15));
  const UnitConversion back = conversion("K", "degC");
  CHECK(back.offset == doctest::Approx(-273.15).epsilon(1e-15));
  // Fahrenheit: 212 degF = 100 degC.
  const UnitConversion f = conversion("degF", "degC");
  CHECK(f.scale * 212 + f.offset == doctest::Approx(100.0).epsilon(1e-12));
}

TEST_CASE("units: spellings of one unit convert with scale 1 and offset 0") {
  CHECK(conversion("kg*m/s^2", "N").identity());
  CHECK(conversion("N.m", "J").identity());
  CHECK(conversion("N*s/m", "kg/s").identity());
  CHECK(conversion("m3/s", "m^3/s").identity());
  // Dimensionless: "", "1" and "-" are the same unit.
  CHECK(conversion("", "1").identity());
  CHECK(conversion("-", "1").identity());
}

TEST_CASE("units: different quantities, unknown names and non-affine units do not convert") {
  std::string why;
  CHECK_FALSE(unit_conversion("m", "s", &why));
  CHECK(contains(why, "different quantities"));
  CHECK_FALSE(unit_conversion("N", "Pa", &why));
  CHECK_FALSE(unit_conversion("newton_meter", "N*m", &why));
  CHECK(contains(why, "\"newton_meter\": not a unit"));
  CHECK_FALSE(unit_conversion("N", "kN/", &why));
  CHECK(contains(why, "\"kN/\": not a unit"));
  // A logarithmic unit relates to W, but not by a scale and an offset.
  CHECK_FALSE(unit_conversion("lg(re 1 mW)", "W", &why));
  CHECK(contains(why, "not a scale and an offset"));
}

TEST_CASE("units: a unit text is checked (names, syntax, length, encoding)") {
  for (const char* ok : {"", "1", "-", "m", "N", "m/s^2", "N*s/m", "kg/m^3", "m^3/s", "rad/s", "rpm", "degC", "deg", "°C"})
    CHECK_MESSAGE(unit_problem(ok).empty(), ok);
  CHECK(contains(unit_problem("meterz"), "knows no unit of that name"));
  CHECK(contains(unit_problem("m^"), "cannot parse"));
  CHECK(contains(unit_problem(std::string(100000, 'm')), "at most 128 characters"));
  CHECK(contains(unit_problem("m\xc3"), "invalid UTF-8"));  // UDUNITS-2 alone would read "m"
  CHECK(contains(unit_problem("m\n"), "control characters"));
  CHECK(contains(unit_problem("m^999999999999"), "cannot parse"));
}

TEST_CASE("units: quantities written with a unit") {
  CHECK(quantity("2 ms", "s") == doctest::Approx(0.002).epsilon(1e-15));
  CHECK(quantity("3.85 MPa", "Pa") == 3.85e6);
  CHECK(quantity("2ms", "s") == doctest::Approx(0.002).epsilon(1e-15));
  CHECK(quantity("-1.5e3 N", "kN") == doctest::Approx(-1.5).epsilon(1e-15));
  CHECK(quantity("+20 degC", "K") == doctest::Approx(293.15).epsilon(1e-15));
  CHECK(quantity("1 bar", "Pa") == 1e5);
  CHECK(quantity("60 rpm", "rad/s") == doctest::Approx(2 * std::numbers::pi).epsilon(1e-15));
  CHECK(quantity("50 %", "1") == doctest::Approx(0.5).epsilon(1e-15));

  // Both units named when they do not match.
  auto why = quantity_error("2 ms ms", "s");
  CHECK(contains(why, "ms ms is not convertible to s"));
  why = quantity_error("3 m", "s");
  CHECK(contains(why, "m is not convertible to s"));
  // Hostile texts: no crash, a reason each.
  CHECK(contains(quantity_error("1e400 Pa", "Pa"), "out of the range of a double"));
  CHECK(contains(quantity_error("1e308 km", "m"), "in m it is out of the range of a double"));
  CHECK(contains(quantity_error("nan Pa", "Pa"), "does not start with a finite number"));
  CHECK(contains(quantity_error("inf s", "s"), "does not start with a finite number"));
  CHECK(contains(quantity_error("", "s"), "does not start with a finite number"));
  CHECK(contains(quantity_error("2", "s"), "has no unit"));
  CHECK(contains(quantity_error("ms", "s"), "does not start with a finite number"));
  CHECK(contains(quantity_error("+-2 s", "s"), "does not start with a finite number"));
  CHECK(contains(quantity_error("2 \xe2\x82", "s"), "invalid UTF-8"));
  CHECK(contains(quantity_error("2 " + std::string(1 << 20, 's'), "s"), "too long"));
  CHECK(contains(quantity_error("2 s", "newton_meter"), "the declared unit \"newton_meter\": not a unit"));
}

TEST_CASE("units: calls from several threads give the single-threaded answers") {
  // UDUNITS-2's parser keeps global state; units.cpp serializes the calls (a sweep or a host
  // program may validate experiments in parallel).
  std::vector<int> wrong(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < 300; ++i) {
        std::string why;
        auto c = unit_conversion(t % 2 ? "kN" : "bar", t % 2 ? "N" : "Pa", &why);
        auto q = quantity_in("2 ms", "s", why);
        if (!c || c->scale != (t % 2 ? 1000.0 : 1e5) || !q || std::abs(*q - 0.002) > 1e-18 || unit_problem("meterz").empty())
          ++wrong[t];
      }
    });
  for (auto& th : threads) th.join();
  CHECK(wrong == std::vector<int>(4, 0));
}

TEST_CASE(
    "units: a value is one number followed by one unit that converts by a scale (and an offset for temperatures)") {
  // UDUNITS-2 alone reads these as other units: "1 ln(re 1 s)" was e s (2.718 s), "1 s 2" was
  // 2 s, "3 s 1e-1" 0.3 s, "1 s/2" 0.5 s. Each is refused, naming the number inside the unit.
  CHECK(contains(quantity_error("1 ln(re 1 s)", "s"), "has the number 1 inside it"));
  CHECK(contains(quantity_error("-2 lg(re 1 s)", "s"), "has the number 1 inside it"));
  CHECK(contains(quantity_error("1 s 2", "s"), "\"s 2\" has the number 2 inside it"));
  CHECK(contains(quantity_error("3 s 1e-1", "s"), "has the number 1e-1 inside it"));
  CHECK(contains(quantity_error("1 s/2", "s"), "has the number 2 inside it"));
  CHECK(contains(quantity_error("1 s.2", "s"), "has the number 2 inside it"));
  CHECK(contains(quantity_error("1 2*s", "s"), "has the number 2 inside it"));
  CHECK(contains(quantity_error("1 s @ 2", "s"), "has the number 2 inside it"));  // a time origin
  CHECK(contains(quantity_error("1 s since 1970-01-01", "s"), "has the number 1970 inside it"));
  CHECK(contains(quantity_error("1 lg(re mW)", "W"), "lg(re mW)"));  // refused either way, with the unit
  // Exponents and the 1 of a reciprocal are part of a unit; offsets belong to temperatures.
  CHECK(quantity("2 m^3/s", "l/s") == doctest::Approx(2000).epsilon(1e-15));
  CHECK(quantity("2 m3/s", "m^3/s") == 2.0);
  CHECK(quantity("4 kg*m**-3", "kg/m^3") == 4.0);
  CHECK(quantity("2 s-1", "Hz") == 2.0);
  CHECK(quantity("5 1/min", "1/s") == doctest::Approx(5.0 / 60).epsilon(1e-15));
  CHECK(quantity("3 1", "1") == 3.0);
  CHECK(quantity("20 degC", "K") == doctest::Approx(293.15).epsilon(1e-15));
  CHECK(quantity("300 K", "degC") == doctest::Approx(26.85).epsilon(1e-13));
}
