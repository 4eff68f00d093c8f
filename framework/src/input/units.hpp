// Units of ports, parameters and manifest numbers, read by UDUNITS-2 (its default XML
// database, or the one UDUNITS2_XML_PATH names): prefixes, products, powers and offsets, so
// kN and N, bar and Pa, kg*m/s^2 and N, degC and K are related without a table of our own.
// Internal to the host. Every function may be called from any thread (UDUNITS-2 itself is
// not thread-safe: calls are serialized here). A missing database is not an exception: every
// function reports it as the reason the unit could not be read.
#pragma once

#include <map>
#include <optional>
#include <string>

namespace stride::host {

// value_to = value_from * scale + offset
struct UnitConversion {
  double scale = 1.0;
  double offset = 0.0;
  bool identity() const { return scale == 1.0 && offset == 0.0; }
};

// The database to read instead of UDUNITS-2's default (a host inside an exported FMU reads the
// copy the FMU carries). Call before the first unit is read; later calls change nothing.
void set_unit_database(const std::string& xml);
// The database file read (or to be read): the one named, else UDUNITS-2's default; "" when
// there is none.
std::string unit_database_file();

// "" when `unit` is a unit Stride understands: UDUNITS-2 syntax and names ("kN", "kg*m/s^2",
// "m^3/s", "N.m", "degC", "rpm", "deg"), or dimensionless written "", "1" or "-" (known without
// the database); otherwise why not, "not a unit (UDUNITS-2 knows no unit of that name)", for a
// message that already names the unit.
std::string unit_problem(const std::string& unit);

// The conversion from `from` to `to` ("kN" -> "N": x 1000; "degC" -> "K": + 273.15); scale 1
// and offset 0 for two spellings of the same unit ("kg*m/s^2" and "N"). nullopt when either is
// not understood or they measure different quantities, with the reason in `why`.
std::optional<UnitConversion> unit_conversion(const std::string& from, const std::string& to,
                                              std::string* why = nullptr);

// A quantity written with its unit ("2 ms", "3.85 MPa", "-1.5e3 N", "20 degC") as a finite
// number in `to`; nullopt with the reason in `why` ("ms is not convertible to m/s (...)") when
// the text is not a number followed by a unit convertible to `to`. Texts of more than 160
// characters are refused unread.
std::optional<double> quantity_in(const std::string& text, const std::string& to, std::string& why);

// The SI unit name for exponents of the base units kg, m, s, A, K, mol, cd, rad (as in an FMU's
// <BaseUnit>), e.g. {kg 1, m -1, s -2} -> "Pa"; "" when Stride has no name for it.
std::string si_unit_name(const std::map<std::string, int>& exponents);

// The product of powers of SI base units in UDUNITS-2's syntax ({kg 1, m -1, s -2} ->
// "kg.m-1.s-2"), "1" for none: a unit text for exponents Stride has no name for.
std::string si_product(const std::map<std::string, int>& exponents);

// A unit as the FMI and SSP standards define one (<BaseUnit>): exponents of the SI base units
// kg, m, s, A, K, mol, cd and of rad, with value_SI = factor * value + offset. "bar" ->
// {kg 1, m -1, s -2}, factor 1e5; "degC" -> {K 1}, offset 273.15; "rpm" -> {rad 1, s -1},
// factor pi/30. Dimensionless ("", "1", "-") -> no exponents, factor 1.
struct UnitDefinition {
  std::map<std::string, int> exponents;  // nonzero ones only
  double factor = 1.0, offset = 0.0;
};
// nullopt, with the reason in `why`, when the unit is not understood or is not a product of
// powers of those base units (a logarithmic unit, a time origin).
std::optional<UnitDefinition> unit_definition(const std::string& unit, std::string* why = nullptr);

}  // namespace stride::host
