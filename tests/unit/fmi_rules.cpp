// The modelDescription.xml Stride writes for an exported FMU (export/model_description.hpp),
// checked three ways: against our own reading of the FMI 2.0 and 3.0 rules
// (export/fmi_rules.hpp), which must also find every rule a deliberately broken description
// breaks; read back by the importer's reader (fmi/model_description.hpp), which must see the
// variables, units and feedthrough written; and its unit definitions against the SI
// definitions of the units (1 bar = 1e5 Pa, 0 degC = 273.15 K, 1 rpm = pi/30 rad/s).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>

#include "export/fmi_rules.hpp"
#include "export/model_description.hpp"
#include "fmi/model_description.hpp"
#include "input/units.hpp"
#include "files.hpp"

namespace {

using stride_test::contains;

namespace fs = std::filesystem;
using namespace stride::host;
using namespace stride::host::fmu_export;
using stride::json;

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += x + "\n";
  return s;
}

// A subsystem with every kind of variable an export writes: parameters of each type, a scalar
// and a vector input, an output with and one without direct feedthrough.
ExportedModel model(int version) {
  ExportedModel m;
  m.fmi_version = version;
  m.model_name = "cylinder";
  m.model_identifier = "cylinder";
  m.description = "hydraulic cylinder & valve <test>";
  m.generation_tool = "Stride";
  m.token = content_token("cylinder" + std::to_string(version));
  m.start_time = 0;
  m.stop_time = 10;
  m.step_size = 2e-4;
  m.can_get_set_state = true;
  auto var = [&](std::string name, std::uint32_t vr, Causality c, ValueType t, std::string unit, json start) {
    ExportedVariable v;
    v.name = std::move(name);
    v.value_reference = vr;
    v.causality = c;
    v.type = t;
    v.unit = std::move(unit);
    v.start = std::move(start);
    return v;
  };
  m.variables.push_back(var("time", 0, Causality::independent, ValueType::real, "s", nullptr));
  ExportedVariable p = var("p_s", 1, Causality::parameter, ValueType::real, "bar", 140.0);
  p.min = 0;
  p.max = 1000;
  p.description = "supply pressure";
  m.variables.push_back(p);
  m.variables.push_back(var("actuators", 2, Causality::parameter, ValueType::integer, "", 1));
  m.variables.push_back(var("leak", 3, Causality::parameter, ValueType::boolean, "", false));
  m.variables.push_back(var("coupling", 4, Causality::parameter, ValueType::string, "", "force"));
  m.variables.push_back(var("T_oil", 5, Causality::parameter, ValueType::real, "degC", 40.0));
  m.variables.push_back(var("s", 6, Causality::input, ValueType::real, "m", 0.0));
  m.variables.push_back(var("n", 7, Causality::input, ValueType::real, "rpm", 0.0));
  ExportedVariable f = var("f_h", 8, Causality::output, ValueType::real, "N", nullptr);
  f.dependencies = {6};
  m.variables.push_back(f);
  m.variables.push_back(var("p1", 9, Causality::output, ValueType::real, "Pa", nullptr));
  if (version == 3) {
    ExportedVariable w = var("w", 10, Causality::input, ValueType::real, "m/s", json::array({0.0, 0.0}));
    w.size = 2;
    m.variables.push_back(w);
  } else {
    m.variables.push_back(var("w[1]", 10, Causality::input, ValueType::real, "m/s", 0.0));
    m.variables.push_back(var("w[2]", 11, Causality::input, ValueType::real, "m/s", 0.0));
  }
  return m;
}

// The description written to a file, read by the importer's reader.
fmi::ModelDescription read_back(const std::string& xml) {
  static int n = 0;
  const fs::path file = fs::temp_directory_path() / ("stride_md_" + std::to_string(::getpid()) + "_" + std::to_string(n++) + ".xml");
  std::ofstream(file) << xml;
  fmi::ModelDescription md = fmi::read_model_description(file, "exported");
  fs::remove(file);
  return md;
}

const fmi::Variable& find(const fmi::ModelDescription& md, const std::string& name) {
  for (const auto& v : md.variables)
    if (v.name == name) return v;
  FAIL("no variable " << name);
  throw 0;
}

// `xml` with `from` replaced by `to` (once; the text must be there).
std::string broken(std::string xml, const std::string& from, const std::string& to) {
  const auto at = xml.find(from);
  REQUIRE_MESSAGE(at != std::string::npos, from);
  return xml.replace(at, from.size(), to);
}

}  // namespace

TEST_CASE("an exported model description follows the FMI 2 and FMI 3 rules and reads back as written") {
  for (int version : {2, 3}) {
    CAPTURE(version);
    const std::string xml = model_description_xml(model(version));
    CHECK_MESSAGE(model_description_problems(xml).empty(), joined(model_description_problems(xml)) << xml);
    const fmi::ModelDescription md = read_back(xml);
    CHECK(md.version == version);
    CHECK(md.has_cs);
    CHECK_FALSE(md.has_me);
    CHECK(md.cs_can_get_set_state);
    CHECK(md.can_variable_step);
    CHECK(md.model_name == "cylinder");
    CHECK(find(md, "p_s").causality == "parameter");
    CHECK(find(md, "p_s").start.get<double>() == 140.0);
    CHECK(*find(md, "p_s").min == 0.0);
    CHECK(*find(md, "p_s").max == 1000.0);
    CHECK(find(md, "actuators").start.get<long>() == 1);
    CHECK(find(md, "leak").start.get<bool>() == false);
    CHECK(find(md, "coupling").start.get<std::string>() == "force");
    CHECK(find(md, "f_h").feedthrough);
    CHECK_FALSE(find(md, "p1").feedthrough);
    CHECK(find(md, "s").causality == "input");
    if (version == 3) CHECK(find(md, "w").size == 2);
    CHECK(contains(xml, "&amp;"));  // the description's & and < are escaped
  }
}

TEST_CASE("unit definitions of an exported model description are the SI definitions of the units") {
  const auto bar = unit_definition("bar");
  REQUIRE(bar);
  CHECK(bar->exponents == std::map<std::string, int>{{"kg", 1}, {"m", -1}, {"s", -2}});
  CHECK(bar->factor == 1e5);
  CHECK(bar->offset == 0.0);
  const auto degc = unit_definition("degC");
  REQUIRE(degc);
  CHECK(degc->exponents == std::map<std::string, int>{{"K", 1}});
  CHECK(degc->factor == 1.0);
  CHECK(degc->offset == doctest::Approx(273.15).epsilon(1e-15));
  const auto rpm = unit_definition("rpm");
  REQUIRE(rpm);
  CHECK(rpm->exponents == std::map<std::string, int>{{"rad", 1}, {"s", -1}});
  CHECK(rpm->factor == doctest::Approx(std::numbers::pi / 30).epsilon(1e-15));
  const auto kn = unit_definition("kN.m");
  REQUIRE(kn);
  CHECK(kn->exponents == std::map<std::string, int>{{"kg", 1}, {"m", 2}, {"s", -2}});
  CHECK(kn->factor == 1000.0);
  CHECK(unit_definition("1")->exponents.empty());
  CHECK_FALSE(unit_definition("ln(re 1 m)"));
  CHECK_FALSE(unit_definition("furlongs_per_fortnight_x"));
  const std::string xml = model_description_xml(model(2));
  CHECK(contains(xml, "<Unit name=\"bar\">"));
  CHECK(contains(xml, "<BaseUnit kg=\"1\" m=\"-1\" s=\"-2\" factor=\"1e+05\""));
  CHECK(contains(xml, "offset=\"273.15\""));
}

TEST_CASE("the token is a UUID-shaped hash of the content") {
  const std::string a = content_token("a"), b = content_token("b");
  CHECK(a == content_token("a"));
  CHECK(a != b);
  REQUIRE(a.size() == 38);
  CHECK(a.front() == '{');
  CHECK(a[9] == '-');
  CHECK(a[14] == '-');
  CHECK(a[19] == '-');
  CHECK(a[24] == '-');
  CHECK(a.back() == '}');
}

TEST_CASE("the rules find every rule a broken model description breaks") {
  const std::string x2 = model_description_xml(model(2)), x3 = model_description_xml(model(3));
  struct Case {
    const std::string* xml;
    std::string from, to, expect;
  };
  const std::vector<Case> cases = {
      {&x2, "guid=", "gid=", "requires the attribute guid"},
      {&x3, "instantiationToken=", "token=", "requires the attribute instantiationToken"},
      {&x2, "modelIdentifier=\"cylinder\"", "modelIdentifier=\"../lib\"", "is not a C identifier"},
      {&x2, "name=\"actuators\"", "name=\"p_s\"", "declared twice"},
      {&x3, "valueReference=\"2\"", "valueReference=\"1\"", "FMI 3 value references are unique"},
      {&x2, "name=\"leak\" valueReference=\"3\"", "name=\"leak\" valueReference=\"1\"", ""},  // FMI 2 alias of another type: allowed
      {&x2, "causality=\"parameter\" variability=\"fixed\" initial=\"exact\">\n      <Real start=\"140\"",
       "causality=\"parameter\" variability=\"continuous\" initial=\"exact\">\n      <Real start=\"140\"",
       "causality parameter with variability continuous is not allowed"},
      {&x2, "<Integer start=\"1\"", "<Integer start=\"1.5\"", ""},  // numbers only: the rules do not type-check integers
      {&x3, "name=\"s\" valueReference=\"6\" causality=\"input\" variability=\"continuous\" start=\"0\"",
       "name=\"s\" valueReference=\"6\" causality=\"input\" variability=\"continuous\"", "a start value is required"},
      {&x3, "name=\"p1\" valueReference=\"9\" causality=\"output\" variability=\"continuous\" initial=\"calculated\"",
       "name=\"p1\" valueReference=\"9\" causality=\"output\" variability=\"continuous\" initial=\"calculated\" start=\"1\"",
       "a start value is not allowed"},
      {&x2, "<Real start=\"140\" unit=\"bar\"", "<Real start=\"140\" unit=\"psi\"", "unit \"psi\" is not defined"},
      {&x2, "<Real start=\"140\" unit=\"bar\" min=\"0\"", "<Real start=\"140\" unit=\"bar\" min=\"200\"", "outside [min, max]"},
      {&x3, "<Output valueReference=\"9\" dependencies=\"\" />", "", "variable \"p1\" (causality output) is not listed"},
      {&x3, "<InitialUnknown valueReference=\"9\" />", "", "variable \"p1\" (causality output) is not listed"},
      {&x3, "valueReference=\"8\" dependencies=\"6\"", "valueReference=\"8\" dependencies=\"9\"", "depends on \"p1\""},
      {&x2, "dependencies=\"7\" dependenciesKind=\"dependent\"", "dependencies=\"7 8\" dependenciesKind=\"dependent\"",
       "2 dependencies but 1 dependenciesKind"},
      {&x2, "<ModelVariables>", "<LogCategories/>\n  <ModelVariables>", "appears twice"},
      {&x3, "name=\"actuators\" valueReference=\"2\" causality=\"parameter\" variability=\"fixed\"",
       "name=\"actuators\" valueReference=\"2\" causality=\"parameter\" variability=\"continuous\"",
       "only Real (Float) variables may be continuous"},
      {&x3, "<Dimension start=\"2\" />", "<Dimension start=\"3\" />", "start has 2 values for 3 elements"},
      {&x3, "<Dimension start=\"2\" />", "<Dimension start=\"0\" />", "is not a positive size"},
      {&x2, "fmiVersion=\"2.0\"", "fmiVersion=\"1.0\"", "expected \"2.0\" or \"3.0\""},
      {&x2, "causality=\"independent\" variability=\"continuous\"", "causality=\"independent\" variability=\"discrete\"",
       "causality independent with variability discrete is not allowed"},
      {&x2, "variableNamingConvention=\"structured\"", "variableNamingConvention=\"flat\"", "needs variableNamingConvention"},
      {&x2, "stopTime=\"10\"", "stopTime=\"-1\"", "stopTime must be after startTime"},
      {&x2, "</fmiModelDescription>", "", "malformed XML"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.from);
    CAPTURE(c.to);
    const auto problems = model_description_problems(broken(*c.xml, c.from, c.to));
    if (c.expect.empty()) {
      CHECK_MESSAGE(problems.empty(), joined(problems));
    } else {
      CHECK_MESSAGE(contains(joined(problems), c.expect), joined(problems));
      CHECK(contains(joined(problems), "line "));
    }
  }
}
