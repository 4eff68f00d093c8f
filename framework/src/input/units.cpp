#include "input/units.hpp"

#include "stride/host/input/json_input.hpp"

#include <udunits2.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <sstream>

namespace stride::host {
namespace {

// Longer unit texts are refused before UDUNITS-2 sees them (its parser is a generated scanner
// over the whole string; no real unit is this long).
constexpr std::size_t kMaxUnitLength = 128;

struct UnitFree {
  void operator()(ut_unit* u) const { ut_free(u); }
};
struct ConverterFree {
  void operator()(cv_converter* c) const { cv_free(c); }
};
using Unit = std::unique_ptr<ut_unit, UnitFree>;
using Converter = std::unique_ptr<cv_converter, ConverterFree>;

// The unit system, read once. UDUNITS-2 keeps global state (its status, the parser's scanner),
// so every call into it holds `lock`.
struct Database {
  std::mutex lock;
  ut_system* system = nullptr;
  std::string problem;  // why the database could not be read
};

// The database a program named (set_unit_database), "" for UDUNITS-2's own choice.
std::string& database_path() {
  static std::string path;
  return path;
}

Database& database() {
  static Database db;
  static std::once_flag once;
  std::call_once(once, [] {
    ut_set_error_message_handler(ut_ignore);  // reasons are reported by Stride, with the unit
    ut_status status = UT_SUCCESS;
    const std::string& named = database_path();
    const char* path = named.empty() ? ut_get_path_xml(nullptr, &status) : named.c_str();
    const std::string where = std::string(path ? path : "(none)") +
                              (!named.empty() ? " (named by the program)"
                               : status == UT_OPEN_ENV ? " from UDUNITS2_XML_PATH" : " (the default)");
    db.system = ut_read_xml(named.empty() ? nullptr : named.c_str());
    if (!db.system) {
      db.problem = "UDUNITS-2 could not read its unit database " + where +
                   " (install the Debian package libudunits2-data, or set UDUNITS2_XML_PATH to udunits2.xml)";
      return;
    }
    // Names in common use that the database lacks: "deg" (Modelica and FMUs) for the degree.
    if (Unit degree{ut_parse(db.system, "degree", UT_ASCII)})
      ut_map_name_to_unit("deg", UT_ASCII, degree.get());
  });
  return db;
}

// Valid UTF-8 without control characters: UDUNITS-2 stops at a broken sequence and reads the
// start as the whole unit ("m\xc3" would be m).
bool clean_text(const std::string& s) {
  for (std::size_t i = 0, n = 0; i < s.size(); i += n) {
    const auto c = static_cast<unsigned char>(s[i]);
    n = utf8_sequence(s, i);
    if (n == 0 || c < 0x20 || c == 0x7f) return false;
  }
  return true;
}

std::string trimmed(const std::string& s) {
  const auto a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  const auto b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

// The conventions plugins use for dimensionless quantities.
bool is_dimensionless(const std::string& trimmed_text) {
  return trimmed_text.empty() || trimmed_text == "1" || trimmed_text == "-";
}

// The unit, or null with the reason in `why`. Holds db.lock (taken by the caller).
Unit parse(Database& db, const std::string& text, std::string& why) {
  if (text.size() > kMaxUnitLength) {
    why = "not a unit (at most " + std::to_string(kMaxUnitLength) + " characters, this one has " +
          std::to_string(text.size()) + ")";
    return nullptr;
  }
  if (!clean_text(text)) {
    why = "not a unit (control characters or invalid UTF-8)";
    return nullptr;
  }
  if (!db.system) {
    why = db.problem;
    return nullptr;
  }
  const std::string t = trimmed(text);
  if (is_dimensionless(t)) return Unit{ut_get_dimensionless_unit_one(db.system)};
  Unit u{ut_parse(db.system, t.c_str(), UT_UTF8)};
  if (!u) {
    const ut_status s = ut_get_status();
    why = s == UT_UNKNOWN
              ? "not a unit (UDUNITS-2 knows no unit of that name)"
              : "not a unit (UDUNITS-2 cannot parse it; units look like N, kN, kg*m/s^2, m^3/s, bar, degC, rpm)";
  }
  return u;
}

// The affine map between two parsed units, checked at a third point (UDUNITS-2 also has
// logarithmic units, which no scale and offset represent).
std::optional<UnitConversion> affine(const ut_unit* from, const ut_unit* to, std::string& why) {
  if (!ut_are_convertible(from, to)) {
    why = "they measure different quantities";
    return std::nullopt;
  }
  Converter cv{ut_get_converter(const_cast<ut_unit*>(from), const_cast<ut_unit*>(to))};
  if (!cv) {
    why = "UDUNITS-2 has no converter between them";
    return std::nullopt;
  }
  UnitConversion c;
  c.offset = cv_convert_double(cv.get(), 0.0);
  c.scale = cv_convert_double(cv.get(), 1.0) - c.offset;
  const double x = 1000.0, expected = cv_convert_double(cv.get(), x), affine_value = c.scale * x + c.offset;
  if (!std::isfinite(c.scale) || !std::isfinite(c.offset) || c.scale == 0.0 || !std::isfinite(expected) ||
      std::abs(expected - affine_value) > 1e-9 * std::max(1.0, std::abs(expected))) {
    why = "the conversion between them is not a scale and an offset";
    return std::nullopt;
  }
  return c;
}

// The first number in a unit text that is a factor rather than an exponent ("2" in "s 2",
// "s/2", "s.2", "2*s"; "1" in "ln(re 1 s)"), "" when there is none. UDUNITS-2 reads such a
// number as a scale of the unit, so "1 s 2" would be 2 s. Allowed: exponents after ^ or ** or
// attached to a name ("m^3", "m3", "s-2"), and the 1 of "1/s".
std::string factor_in_unit(const std::string& unit) {
  auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  auto letter = [](char c) {
    return std::isalpha(static_cast<unsigned char>(c)) != 0 || (static_cast<unsigned char>(c) & 0x80);
  };
  for (std::size_t i = 0; i < unit.size();) {
    if (!digit(unit[i])) {
      ++i;
      continue;
    }
    std::size_t end = i;
    while (end < unit.size() && (digit(unit[end]) || unit[end] == '.')) ++end;
    std::size_t power = end;  // "1e-1": the whole number, for the message
    if (power < unit.size() && (unit[power] == 'e' || unit[power] == 'E')) ++power;
    if (power > end && power < unit.size() && (unit[power] == '-' || unit[power] == '+')) ++power;
    const bool scientific = power > end && power < unit.size() && digit(unit[power]);
    while (scientific && power < unit.size() && digit(unit[power])) ++power;
    std::size_t lead = i;
    if (lead > 0 && (unit[lead - 1] == '-' || unit[lead - 1] == '+')) --lead;
    const char before = lead > 0 ? unit[lead - 1] : '\0';
    const bool exponent =
        before == '^' || (before == '*' && lead > 1 && unit[lead - 2] == '*') || (lead > 0 && letter(before));
    const std::size_t after = unit.find_first_not_of(" \t", end);
    const bool reciprocal =
        i == 0 && unit.compare(0, end, "1") == 0 && after != std::string::npos && unit[after] == '/';
    if (!exponent && !reciprocal) return unit.substr(i, (scientific ? power : end) - i);
    i = end;
  }
  return "";
}

// Whether `unit` measures a temperature (the only quantity whose conversions may have an offset).
bool is_temperature(Database& db, const ut_unit* unit) {
  Unit kelvin{ut_parse(db.system, "K", UT_ASCII)};
  return kelvin && ut_are_convertible(unit, kelvin.get());
}

}  // namespace

void set_unit_database(const std::string& xml) { database_path() = xml; }

std::string unit_database_file() {
  if (!database_path().empty()) return database_path();
  ut_status status = UT_SUCCESS;
  const char* path = ut_get_path_xml(nullptr, &status);
  return path ? path : "";
}

std::string unit_problem(const std::string& unit) {
  if (is_dimensionless(trimmed(unit))) return "";  // needs no database
  Database& db = database();
  std::lock_guard<std::mutex> hold(db.lock);
  std::string why;
  return parse(db, unit, why) ? "" : why;
}

std::optional<UnitConversion> unit_conversion(const std::string& from, const std::string& to, std::string* why) {
  std::string reason;
  std::optional<UnitConversion> c;
  {
    Database& db = database();
    std::lock_guard<std::mutex> hold(db.lock);
    Unit a = parse(db, from, reason);
    if (!a) reason = "\"" + from + "\": " + reason;
    Unit b = a ? parse(db, to, reason) : nullptr;
    if (a && !b) reason = "\"" + to + "\": " + reason;
    if (a && b) c = affine(a.get(), b.get(), reason);
  }
  if (!c && why) *why = reason;
  return c;
}

std::optional<double> quantity_in(const std::string& text, const std::string& to, std::string& why) {
  const std::string to_text = trimmed(to).empty() ? "1" : to;
  if (text.size() > kMaxUnitLength + 32) {
    why = "a text of " + std::to_string(text.size()) + " characters is too long for a number and a unit";
    return std::nullopt;
  }
  const std::string t = trimmed(text);
  const bool plus = t.size() > 1 && t[0] == '+' && (std::isdigit(static_cast<unsigned char>(t[1])) || t[1] == '.');
  const char* first = t.data() + (plus ? 1 : 0);
  const char* last = t.data() + t.size();
  double value = 0.0;
  const auto r = std::from_chars(first, last, value);
  if (r.ec == std::errc::result_out_of_range) {
    why = "the number is out of the range of a double";
    return std::nullopt;
  }
  if (r.ec != std::errc() || !std::isfinite(value)) {
    why = "it does not start with a finite number";
    return std::nullopt;
  }
  const std::string unit = trimmed(std::string(r.ptr, last));
  if (unit.empty()) {
    why = "it has no unit (a number without quotes is a value in " + to_text + ")";
    return std::nullopt;
  }
  if (const std::string factor = is_dimensionless(unit) ? "" : factor_in_unit(unit); !factor.empty()) {
    why = "\"" + unit + "\" has the number " + factor + " inside it: a value is one number followed by one unit (no " +
          "second number, expression or logarithmic unit)";
    return std::nullopt;
  }
  Database& db = database();
  std::lock_guard<std::mutex> hold(db.lock);
  Unit a = parse(db, unit, why);
  if (!a) {
    why = "\"" + unit + "\": " + why;
    return std::nullopt;
  }
  Unit b = parse(db, to, why);
  if (!b) {
    why = "the declared unit \"" + to + "\": " + why;
    return std::nullopt;
  }
  if (!ut_are_convertible(a.get(), b.get())) {
    why = unit + " is not convertible to " + to_text + " (they measure different quantities)";
    return std::nullopt;
  }
  // Only a scale, and an offset for temperatures: a value keeps its meaning (a logarithmic unit
  // or a time origin would not).
  std::string reason;
  const auto c = affine(a.get(), b.get(), reason);
  if (!c) {
    why = unit + " does not convert to " + to_text + " by a scale and an offset";
    return std::nullopt;
  }
  if (c->offset != 0.0 && !is_temperature(db, b.get())) {
    char offset[32];
    std::snprintf(offset, sizeof offset, "%g", c->offset);
    why = unit + " converts to " + to_text + " with an offset (" + offset + "), which only temperatures have";
    return std::nullopt;
  }
  const Converter cv{ut_get_converter(a.get(), b.get())};
  const double x = cv ? cv_convert_double(cv.get(), value) : std::nan("");  // as UDUNITS-2 computes it
  if (!std::isfinite(x)) {
    why = "in " + to_text + " it is out of the range of a double";
    return std::nullopt;
  }
  return x;
}

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

namespace {

// The base units and their exponents in UDUNITS-2's definition of a unit ("100000 m-1.kg.s-2",
// "K @ 273.15", "0.10471975511966 s-1.rad"); false for anything else. The number in front is
// rounded by the formatting, so the factor is computed apart (unit_definition).
bool base_exponents(const std::string& definition, std::map<std::string, int>& out) {
  static const std::set<std::string> bases = {"kg", "m", "s", "A", "K", "mol", "cd", "rad"};
  std::string text = definition.substr(0, definition.find(" @ "));
  if (const auto space = text.rfind(' '); space != std::string::npos) text = text.substr(space + 1);
  if (text == "1") return true;
  std::stringstream factors(text);
  for (std::string f; std::getline(factors, f, '.');) {
    const auto digits = f.find_first_of("-0123456789");
    const std::string name = f.substr(0, digits);
    int exponent = 1;
    if (digits != std::string::npos) {
      const auto r = std::from_chars(f.data() + digits, f.data() + f.size(), exponent);
      if (r.ec != std::errc() || r.ptr != f.data() + f.size()) return false;
    }
    if (!bases.count(name)) return false;
    out[name] += exponent;
  }
  std::erase_if(out, [](const auto& e) { return e.second == 0; });
  return true;
}

}  // namespace

std::string si_product(const std::map<std::string, int>& exponents) {
  std::string s;
  for (const auto& [name, e] : exponents)
    if (e != 0) s += (s.empty() ? "" : ".") + name + (e == 1 ? "" : std::to_string(e));
  return s.empty() ? "1" : s;
}

std::optional<UnitDefinition> unit_definition(const std::string& unit, std::string* why) {
  std::string reason;
  UnitDefinition d;
  if (is_dimensionless(trimmed(unit))) return d;
  Database& db = database();
  std::lock_guard<std::mutex> hold(db.lock);
  Unit u = parse(db, unit, reason);
  char text[256];
  if (u) {
    const int n = ut_format(u.get(), text, sizeof text, UT_ASCII | UT_DEFINITION);
    if (n <= 0 || n >= static_cast<int>(sizeof text) || !base_exponents(text, d.exponents))
      reason = "not a product of powers of SI base units";
  }
  Unit si = reason.empty() ? parse(db, si_product(d.exponents), reason) : nullptr;
  std::optional<UnitConversion> c;
  if (si) c = affine(u.get(), si.get(), reason);
  if (!c) {
    if (why) *why = "\"" + unit + "\": " + reason;
    return std::nullopt;
  }
  d.factor = c->scale;
  d.offset = c->offset;
  return d;
}

}  // namespace stride::host
