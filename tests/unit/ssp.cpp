// SSP 1.0 systems read as manifests (stride/host/ssp/ssp.hpp), with SSP files written for these
// tests (tests/ssp) around FMUs this project builds: the two-mass test as an SSP (a Stride
// plugin component, an FMU component, parameters from inline sets, a set file with its own unit,
// a mapping file with a linear transformation and a system-level set with a prefix) runs to the
// same result as manifests/fmu_two_mass.json, as a package and as an .ssd beside its FMUs; every
// element Stride does not support, and every broken reference, is named with its line and path.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

#include "run/simulation.hpp"
#include "shipped_plugins.hpp"
#include "stride/host/api/commands.hpp"
#include "stride/host/ssp/ssp.hpp"
#include "stride_run.hpp"
#include "files.hpp"

namespace {

using stride_test::contains;

namespace fs = std::filesystem;
using namespace stride::host;
using stride_test::json;

const fs::path kSsp = STRIDE_TEST_SSP_DIR;
const fs::path kFmus = STRIDE_FMU_DIR;

std::string joined(const std::vector<Diagnostic>& d) {
  std::string s;
  for (const auto& x : d) s += x.str() + "\n";
  return s;
}

// A folder of this test with a copy of the oscillator FMU in resources/.
fs::path folder_with_fmu(const std::string& tag) {
  const fs::path dir = stride_test::scratch() / tag;
  fs::remove_all(dir);
  fs::create_directories(dir / "resources");
  fs::copy_file(kFmus / "oscillator.fmu", dir / "resources" / "oscillator.fmu");
  return dir;
}

const char* kHead = R"(<?xml version="1.0" encoding="UTF-8"?>
<ssd:SystemStructureDescription version="1.0" name="t"
    xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription"
    xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"
    xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues"
    xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping">
  <ssd:System name="root">
)";
const char* kTail = R"(  </ssd:System>
  <ssd:DefaultExperiment startTime="0" stopTime="1"/>
</ssd:SystemStructureDescription>
)";
// One oscillator component (co-simulation) with its connectors, and `extra` inside the system.
std::string ssd_with(const std::string& component_extra, const std::string& system_extra,
                     const std::string& attributes = "source=\"resources/oscillator.fmu\"") {
  return std::string(kHead) + "    <ssd:Elements>\n      <ssd:Component name=\"osc\" " + attributes + R"(>
        <ssd:Connectors>
          <ssd:Connector name="x" kind="output"><ssc:Real unit="m"/></ssd:Connector>
          <ssd:Connector name="x_other" kind="input"><ssc:Real/></ssd:Connector>
        </ssd:Connectors>
)" + component_extra + "      </ssd:Component>\n    </ssd:Elements>\n" + system_extra + kTail;
}

// The problems read_ssp() finds in `ssd` (written as SystemStructure.ssd beside the FMU).
std::vector<Diagnostic> problems_of(const std::string& ssd, const std::string& tag,
                                    const std::map<std::string, std::string>& files = {}) {
  const fs::path dir = folder_with_fmu(tag);
  std::ofstream(dir / "SystemStructure.ssd") << ssd;
  for (const auto& [name, text] : files) std::ofstream(dir / name) << text;
  try {
    ssp::read_ssp(dir / "SystemStructure.ssd");
  } catch (const ManifestError& e) {
    return e.diagnostics();
  }
  return {};
}

}  // namespace

TEST_CASE("an SSP becomes the manifest it describes: components, connections, parameters, experiment, steps") {
  const ssp::SspManifest s = ssp::read_ssp(kSsp / "two_mass.ssp");
  const json d = json::parse(s.text);
  INFO(s.text);
  REQUIRE(d["subsystems"].size() == 2);
  const json& fast = d["subsystems"]["fast"];
  const json& slow = d["subsystems"]["slow"];
  CHECK(fast["plugin"] == "two_mass_fast");
  CHECK(fast["step"] == 0.01);  // Stride's annotation before libcosim's step hint (0.05)
  CHECK(fast["integrator"]["plugin"] == "rk4");
  CHECK(fast["parameters"]["AR2"] == -1000.0);
  CHECK(fs::path(slow["fmu"].get<std::string>()).filename() == "oscillator.fmu");
  CHECK(slow["step"] == 0.1);  // libcosim's step hint
  CHECK(slow["integrator"]["plugin"] == "trapezoidal");
  const json& p = slow["parameters"];
  CHECK(p["m"].get<double>() == doctest::Approx(100).epsilon(1e-15));  // 100000 g, the set's own unit
  CHECK(p["k"].get<double>() == 39.47841760435743);                     // 2 x 19.739..., the mapping's transformation
  CHECK(p["k2"].get<double>() == 38.69666676070679);                    // the system's binding wins over the component's
  CHECK(p["x0"].get<double>() == doctest::Approx(9.99).epsilon(1e-15));  // 999 cm
  CHECK(p["v0"].get<double>() == 0.0);
  CHECK(p["d"].get<double>() == 0.0);
  CHECK_FALSE(p.contains("mass"));
  REQUIRE(d["connections"].size() == 2);
  CHECK(d["connections"][0]["from"] == "fast.x");
  CHECK(d["connections"][0]["to"] == "slow.x_other");
  CHECK(d["connections"][0]["extrapolator"]["plugin"] == "lagrange");
  CHECK(d["connections"][1]["from"] == "slow.x");  // written with the input end first
  CHECK(d["connections"][1]["to"] == "fast.x2");
  CHECK(d["coupling"]["end"] == 20.0);
  CHECK(d["coupling"]["macro_step"] == 0.1);  // OMSimulator's fixed step before libcosim's (0.2)
  CHECK(d["record"]["interval"] == 0.01);
  bool ignored = false;
  for (const auto& n : s.notes) ignored |= contains(n, "no_such_parameter") && contains(n, "line ");
  CHECK(ignored);
  CHECK(s.keep);  // the unpacked package
  CHECK(fs::exists(slow["fmu"].get<std::string>()));
}

std::string file_text(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST_CASE("an SSP runs as the manifest it describes: the two-mass test as .ssp, as .ssd and as manifest") {
  const auto ref = stride_test::run_stride("manifests/fmu_two_mass.json", {"/coupling/end=20"}, "ssp_ref");
  REQUIRE(ref.status() == "completed");
  // The same system written by hand as a manifest (tests/ssp/two_mass/two_mass.json).
  const fs::path by_hand = stride_test::scratch() / "ssp_run_by_hand";
  const auto h = stride_test::run_command(std::string("'") + STRIDE_EXE + "' run '" + (kSsp / "two_mass.stage" / "two_mass.json").string() +
                                          "' --quiet --out '" + by_hand.string() + "'");
  INFO(h.output);
  REQUIRE(h.exit_code == 0);
  const std::string by_hand_csv = file_text(by_hand / "results.csv");
  REQUIRE(by_hand_csv.size() > 1000);
  for (const fs::path& system : {kSsp / "two_mass.ssp", kSsp / "two_mass.stage" / "SystemStructure.ssd"}) {
    CAPTURE(system);
    const fs::path out = stride_test::scratch() / ("ssp_run_" + system.extension().string().substr(1));
    const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' run '" + system.string() + "' --quiet --out '" + out.string() + "'");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    CHECK(file_text(out / "results.csv") == by_hand_csv);  // bit for bit: every value printed in full
    const auto t = stride_test::read_csv(out / "results.csv");
    REQUIRE(t.rows() == ref.table.rows());
    for (const char* col : {"fast.x", "fast.v", "slow.x", "slow.v"}) {
      CAPTURE(col);
      std::size_t common = 0;
      CHECK(stride_test::largest_difference(t, col, ref.table, col, &common) < 1e-9);
      CHECK(common == 2001);
    }
  }
  const auto v = stride_test::run_command(std::string("'") + STRIDE_EXE + "' validate '" + (kSsp / "two_mass.ssp").string() + "'");
  CHECK(v.exit_code == 0);
  CHECK(contains(v.output, "valid (2 subsystems, 2 connections"));
  CHECK(contains(v.output, "note: "));
  CHECK(contains(v.output, "no_such_parameter"));
}

namespace {

std::string stride_run_csv(const fs::path& system, const std::string& tag) {
  const fs::path out = stride_test::scratch() / tag;
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' run '" + system.string() +
                                          "' --quiet --out '" + out.string() + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  return file_text(out / "results.csv");
}

fs::path export_ssp_of(const fs::path& source, const std::string& name, const std::string& options = "") {
  fs::create_directories(stride_test::scratch());
  const fs::path out = stride_test::scratch() / (name + ".ssp");
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' export '" + source.string() + "' --ssp '" +
                                          out.string() + "' " + options);
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.output, "SSP 1.0 package"));
  return out;
}

// The manifest an SSP reads as, without what names its unpacked folder or its own file.
json read_back(const fs::path& system) {
  json d = json::parse(ssp::read_ssp(system).text);
  for (auto& [name, s] : d["subsystems"].items())
    if (s.contains("fmu")) s["fmu"] = fs::path(s["fmu"].get<std::string>()).filename().string();
  d.erase("output");
  d.erase("title");
  return d;
}

}  // namespace

TEST_CASE("stride export --ssp: a manifest as an SSP runs to the same results; SSP -> Stride -> SSP keeps everything") {
  // An FMU and a plugin, and plugins alone (the crane with ZOH): the package runs bit for bit
  // as the manifest it was written from.
  for (const char* manifest : {"fmu_two_mass.json", "crane1_zoh.json"}) {
    CAPTURE(manifest);
    const fs::path source = fs::path(STRIDE_SOURCE_DIR) / "manifests" / manifest;
    const fs::path package = export_ssp_of(source, fs::path(manifest).stem().string());
    CHECK(stride_run_csv(package, std::string("ssp_export_") + manifest) ==
          stride_run_csv(source, std::string("ssp_native_") + manifest));
  }
  // Every plugin subsystem exported as an FMU first (--fmus): a package of FMUs only, as any SSP
  // importer takes it, runs bit for bit as the manifest.
  const fs::path crane = fs::path(STRIDE_SOURCE_DIR) / "manifests" / "crane1_zoh.json";
  for (const char* fmi : {"2", "3"}) {
    CAPTURE(fmi);
    const fs::path package = export_ssp_of(crane, std::string("crane_fmus") + fmi, std::string("--fmus --fmi ") + fmi);
    const json d = read_back(package);
    CHECK(d["subsystems"]["crane"]["fmu"] == "crane.fmu");
    CHECK(d["subsystems"]["cylinder"]["fmu"] == "cylinder.fmu");
    CHECK(stride_run_csv(package, std::string("ssp_fmus") + fmi) == stride_run_csv(crane, "ssp_fmus_native"));
  }
  // The hand-written package (parameter files, a mapping with a transformation, a system-level
  // set with a prefix, three tools' step annotations) written again: the same manifest, every
  // connection and parameter, and the package written from that one is the same again.
  const fs::path first = export_ssp_of(kSsp / "two_mass.ssp", "two_mass_again");
  const json original = read_back(kSsp / "two_mass.ssp"), again = read_back(first);
  CHECK(again["subsystems"] == original["subsystems"]);
  CHECK(again["connections"] == original["connections"]);
  CHECK(again["coupling"] == original["coupling"]);
  CHECK(again["record"] == original["record"]);
  const fs::path second = export_ssp_of(first, "two_mass_again_again");
  CHECK(read_back(second) == again);
  CHECK(stride_run_csv(first, "ssp_again") == stride_run_csv(kSsp / "two_mass.ssp", "ssp_original"));
  // A connection of port elements has no SSP 1.0 form: refused with its pointer, no file left.
  json d = json::parse(file_text(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "crane1_zoh.json"));
  d["connections"][0]["from"] = "crane.s[0]";
  const fs::path m = stride_test::scratch() / "elements.json";
  std::ofstream(m) << d.dump(2);
  const fs::path out = stride_test::scratch() / "elements.ssp";
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' export '" + m.string() + "' --ssp '" +
                                          out.string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "/connections/0: a connection of port elements"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("an SSP and the same system written by hand are one experiment: every output bit for bit at every macro step") {
  Experiment from_ssp(manifest_of((kSsp / "two_mass.ssp").string(), {}), stride_test::registry());
  Experiment by_hand(read_manifest(kSsp / "two_mass.stage" / "two_mass.json"), stride_test::registry());
  Simulation a(from_ssp), b(by_hand);
  a.initialize();
  b.initialize();
  const std::vector<std::string> ports{"fast.x", "fast.v", "slow.x", "slow.v"};
  std::size_t compared = 0, equal = 0;
  for (int k = 1; k <= 200; ++k) {
    const double t = 0.1 * k;
    a.advance_to(t);
    b.advance_to(t);
    for (const auto& p : ports) {
      const auto ya = a.outputs(p), yb = b.outputs(p);
      ++compared;
      equal += ya.size() == yb.size() && std::equal(ya.begin(), ya.end(), yb.begin());
    }
  }
  CHECK(compared == 800);
  CHECK(equal == compared);
  CHECK(a.outputs("slow.x")[0] != 9.99);  // it moved
}

TEST_CASE("a problem a later check finds in an SSP's values names the element it came from") {
  const fs::path dir = folder_with_fmu("ssp_bounds");
  std::ofstream(dir / "SystemStructure.ssd") << ssd_with(R"(        <ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues>
          <ssv:ParameterSet version="1.0" name="p"><ssv:Parameters>
            <ssv:Parameter name="m"><ssv:Real value="-5" unit="kg"/></ssv:Parameter>
          </ssv:Parameters></ssv:ParameterSet>
        </ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>
        <ssd:Annotations><ssc:Annotation type="org.stride.manifest">{"step": 0.01}</ssc:Annotation></ssd:Annotations>
)", R"(    <ssd:Annotations><ssc:Annotation type="org.stride.manifest">{"coupling": {"macro_step": 0.1}}</ssc:Annotation></ssd:Annotations>
)", "source=\"resources/oscillator.fmu\" implementation=\"CoSimulation\"");
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' validate '" + (dir / "SystemStructure.ssd").string() + "'");
  INFO(r.output);
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "/subsystems/osc/parameters/m"));
  CHECK(contains(r.output, "/Parameter[m]"));
  // With the mass valid, the graph's own checks run: the unconnected FMU input keeps its start
  // value, and validate lists it.
  std::string ssd = file_text(dir / "SystemStructure.ssd");
  ssd = std::regex_replace(ssd, std::regex("value=\"-5\""), "value=\"5\"");
  std::ofstream(dir / "SystemStructure.ssd") << ssd;
  const auto u = stride_test::run_command(std::string("'") + STRIDE_EXE + "' validate '" + (dir / "SystemStructure.ssd").string() + "'");
  INFO(u.output);
  CHECK(u.exit_code == 0);
  CHECK(contains(u.output, "unconnected FMU input, kept at its start value"));
  CHECK(contains(u.output, "x_other"));
}

TEST_CASE("every SSP element Stride does not support, and every broken reference, is named with its line and path") {
  struct Case {
    std::string name, ssd, expect, where;
    std::map<std::string, std::string> files = {};
  };
  const std::string binding_head = "        <ssd:ParameterBindings>\n";
  const std::vector<Case> cases = {
      {"version", std::regex_replace(ssd_with("", ""), std::regex("version=\"1.0\" name=\"t\""), "version=\"2.0\" name=\"t\""),
       "Stride reads SSP 1.0", "/SystemStructureDescription"},
      {"not an ssd", "<?xml version=\"1.0\"?><fmiModelDescription/>", "the root element must be ssd:SystemStructureDescription",
       "line 1"},
      {"malformed", std::string(kHead) + "<ssd:Elements>", "malformed XML", "line "},
      {"nested system", ssd_with("", "    <ssd:Elements><ssd:System name=\"inner\"/></ssd:Elements>\n"),
       "nested systems and signal dictionaries are not flattened", "/Elements/System[inner]"},
      {"component type", ssd_with("", "", "type=\"application/x-ssp-definition\" source=\"resources/other.ssd\""),
       "components of type \"application/x-ssp-definition\" are not supported", "/Component[osc]"},
      {"no source", ssd_with("", "", "implementation=\"any\""), "has no source", "/Component[osc]"},
      {"scheme", ssd_with("", "", "source=\"http://example.com/x.fmu\""), "only relative URIs", "/Component[osc]"},
      {"fragment", ssd_with("", "", "source=\"resources/x.ssp#b.ssd\""), "fragment", "/Component[osc]"},
      {"missing file", ssd_with("", "", "source=\"resources/missing.fmu\""), "no such file", "/Component[osc]"},
      {"scheduled", ssd_with("", "", "source=\"resources/oscillator.fmu\" implementation=\"ScheduledExecution\""),
       "implementation=\"ScheduledExecution\" is not supported", "/Component[osc]"},
      {"unknown variable",
       std::regex_replace(ssd_with("", ""), std::regex("name=\"x_other\" kind=\"input\""), "name=\"y\" kind=\"input\""),
       "the FMU has no variable \"y\"", "/Connectors/Connector[y]"},
      {"wrong kind", std::regex_replace(ssd_with("", ""), std::regex("name=\"x\" kind=\"output\""), "name=\"x\" kind=\"input\""),
       "kind \"input\", but the FMU's variable has causality \"output\"", "/Connector[x]"},
      {"wrong unit", std::regex_replace(ssd_with("", ""), std::regex("<ssc:Real unit=\"m\"/>"), "<ssc:Real unit=\"s\"/>"),
       "does not measure the quantity", "/Connector[x]/Real"},
      {"wrong type", std::regex_replace(ssd_with("", ""), std::regex("<ssc:Real unit=\"m\"/>"), "<ssc:Boolean/>"),
       "a Boolean connector for the FMU's real variable", "/Connector[x]/Boolean"},
      {"undeclared connector",
       ssd_with("", "    <ssd:Connections><ssd:Connection startElement=\"osc\" startConnector=\"v\" endElement=\"osc\" "
                    "endConnector=\"x_other\"/></ssd:Connections>\n"),
       "component \"osc\" declares no connector \"v\"", "/Connections/Connection"},
      {"output to output",
       ssd_with("", "    <ssd:Connections><ssd:Connection startElement=\"osc\" startConnector=\"x\" endElement=\"osc\" "
                    "endConnector=\"x\"/></ssd:Connections>\n"),
       "from a output to a output connector", "/Connections/Connection"},
      {"mapping on a connection",
       ssd_with("", "    <ssd:Connections><ssd:Connection startElement=\"osc\" startConnector=\"x\" endElement=\"osc\" "
                    "endConnector=\"x_other\"><ssc:BooleanMappingTransformation/></ssd:Connection></ssd:Connections>\n"),
       "<BooleanMappingTransformation> on a connection is not supported", "/Connection/BooleanMappingTransformation"},
      {"indices",
       ssd_with("", "    <ssd:Connections><ssd:Connection startElement=\"osc\" startConnector=\"x\" startIndices=\"1\" "
                    "endElement=\"osc\" endConnector=\"x_other\"/></ssd:Connections>\n"),
       "startIndices (connections to array elements) is not supported", "/Connection"},
      {"binding type", ssd_with(binding_head + "<ssd:ParameterBinding type=\"text/csv\" source=\"p.csv\"/></ssd:ParameterBindings>\n", ""),
       "parameter sources of type \"text/csv\" are not supported", "/ParameterBinding"},
      {"source base", ssd_with(binding_head + "<ssd:ParameterBinding sourceBase=\"component\" source=\"p.ssv\"/></ssd:ParameterBindings>\n", ""),
       "sourceBase=\"component\"", "/ParameterBinding"},
      {"binary parameter",
       ssd_with(binding_head + "<ssd:ParameterBinding><ssd:ParameterValues><ssv:ParameterSet version=\"1.0\" name=\"p\">"
                               "<ssv:Parameters><ssv:Parameter name=\"m\"><ssv:Binary value=\"00\"/></ssv:Parameter>"
                               "</ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>\n",
                ""),
       "a parameter of type Binary is not supported", "/Parameter[m]/Binary"},
      {"boolean for a real",
       ssd_with(binding_head + "<ssd:ParameterBinding><ssd:ParameterValues><ssv:ParameterSet version=\"1.0\" name=\"p\">"
                               "<ssv:Parameters><ssv:Parameter name=\"m\"><ssv:Boolean value=\"true\"/></ssv:Parameter>"
                               "</ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>\n",
                ""),
       "a Boolean value for a parameter of type real", "/Parameter[m]"},
      {"unit of another quantity",
       ssd_with(binding_head + "<ssd:ParameterBinding source=\"p.ssv\"/></ssd:ParameterBindings>\n", ""),
       "cannot be converted to the parameter's unit kg", "p.ssv: line 3: /ParameterSet[p]/Parameters/Parameter[m]",
       {{"p.ssv", "<ssv:ParameterSet version=\"1.0\" name=\"p\" xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\">\n"
                  "<ssv:Parameters>\n<ssv:Parameter name=\"m\"><ssv:Real value=\"3\" unit=\"s\"/></ssv:Parameter>\n"
                  "</ssv:Parameters></ssv:ParameterSet>"}}},
      {"mapping file root",
       ssd_with(binding_head + "<ssd:ParameterBinding source=\"p.ssv\"><ssd:ParameterMapping source=\"p.ssv\"/></ssd:ParameterBinding>"
                               "</ssd:ParameterBindings>\n",
                ""),
       "expected the root element ParameterMapping", "p.ssv",
       {{"p.ssv", "<ssv:ParameterSet version=\"1.0\" name=\"p\" xmlns:ssv=\"http://ssp-standard.org/SSP1/SystemStructureParameterValues\">"
                  "<ssv:Parameters/></ssv:ParameterSet>"}}},
      {"annotation json", ssd_with("<ssd:Annotations><ssc:Annotation type=\"org.stride.manifest\">{\"step\": </ssc:Annotation></ssd:Annotations>\n", ""),
       "holds a JSON object", "/Annotation"},
      {"annotation key", ssd_with("<ssd:Annotations><ssc:Annotation type=\"org.stride.manifest\">{\"stpe\": 1}</ssc:Annotation></ssd:Annotations>\n", ""),
       "\"stpe\" is not a key of this annotation", "/Annotation"},
      {"name with a dot", std::regex_replace(ssd_with("", ""), std::regex("name=\"osc\""), "name=\"o.sc\""),
       "contain no '.'", "/Component[o.sc]"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const auto d = problems_of(c.ssd, "ssp_case", c.files);
    INFO(joined(d));
    CHECK(contains(joined(d), c.expect));
    CHECK(contains(joined(d), c.where));
  }
}

TEST_CASE("a package's files stay inside it") {
  const fs::path dir = folder_with_fmu("ssp_escape");
  std::ofstream(dir / "SystemStructure.ssd") << ssd_with("", "", "source=\"../escape.fmu\"");
  fs::copy_file(kFmus / "oscillator.fmu", dir.parent_path() / "escape.fmu", fs::copy_options::overwrite_existing);
  const fs::path pkg = stride_test::scratch() / "escape.ssp";
  fs::remove(pkg);
  const auto z = stride_test::run_command("cd '" + dir.string() + "' && '" + STRIDE_CMAKE + "' -E tar cf '" + pkg.string() +
                                          "' --format=zip SystemStructure.ssd resources");
  REQUIRE(z.exit_code == 0);
  try {
    ssp::read_ssp(pkg);
    FAIL("read");
  } catch (const ManifestError& e) {
    CHECK(contains(joined(e.diagnostics()), "the file would lie outside the package"));
  }
  // The same .ssd beside its files may name a file in a folder above it.
  CHECK_NOTHROW(ssp::read_ssp(dir / "SystemStructure.ssd"));
}

namespace {

// An oscillator component with two parameter sets on it ("light": m = 1, "heavy": m = 4) and,
// when `bind_input`, its unconnected input x_other bound to 1 m in both.
std::string two_sets(bool bind_input) {
  auto set = [&](const char* name, const char* m) {
    return std::string(R"(          <ssd:ParameterBinding><ssd:ParameterValues>
            <ssv:ParameterSet version="1.0" name=")") +
           name + R"("><ssv:Parameters>
              <ssv:Parameter name="m"><ssv:Real value=")" +
           m + R"("/></ssv:Parameter>
              <ssv:Parameter name="k"><ssv:Real value="1"/></ssv:Parameter>
              <ssv:Parameter name="k2"><ssv:Real value="3"/></ssv:Parameter>
              <ssv:Parameter name="x0"><ssv:Real value="0"/></ssv:Parameter>
)" +
           (bind_input
                ? R"(              <ssv:Parameter name="x_other"><ssv:Real value="100" unit="cm"/></ssv:Parameter>
)"
                : "") +
           R"(            </ssv:Parameters></ssv:ParameterSet>
          </ssd:ParameterValues></ssd:ParameterBinding>
)";
  };
  return ssd_with("        <ssd:ParameterBindings>\n" + set("light", "1") + set("heavy", "4") +
                      R"(        </ssd:ParameterBindings>
        <ssd:Annotations><ssc:Annotation type="org.stride.manifest"><stride:Manifest xmlns:stride="urn:stride:ssp:manifest">{"step": 0.001}</stride:Manifest></ssc:Annotation></ssd:Annotations>
)",
                  R"(    <ssd:Units><ssc:Unit name="cm"><ssc:BaseUnit m="1" factor="0.01"/></ssc:Unit></ssd:Units>
    <ssd:Annotations><ssc:Annotation type="org.stride.manifest"><stride:Manifest xmlns:stride="urn:stride:ssp:manifest">{"coupling": {"macro_step": 0.01}}</stride:Manifest></ssc:Annotation></ssd:Annotations>
)",
                  "source=\"resources/oscillator.fmu\" implementation=\"CoSimulation\"");
}

fs::path written(const std::string& tag, const std::string& ssd) {
  const fs::path dir = folder_with_fmu(tag);
  std::ofstream(dir / "SystemStructure.ssd") << ssd;
  return dir / "SystemStructure.ssd";
}

}  // namespace

TEST_CASE("an element's bindings are parameter sets: the first applies, --parameter-set chooses one by name") {
  const fs::path ssd = written("ssp_sets", two_sets(false));
  const auto first = ssp::read_ssp(ssd);
  CHECK(json::parse(first.text)["subsystems"]["osc"]["parameters"]["m"] == 1.0);
  bool told = false;
  for (const auto& n : first.notes) told |= contains(n, "\"light\" applied, not \"heavy\"");
  CHECK(told);
  CHECK(json::parse(ssp::read_ssp(ssd, {"", "heavy"}).text)["subsystems"]["osc"]["parameters"]["m"] == 4.0);
  try {
    ssp::read_ssp(ssd, {"", "medium"});
    FAIL("an unknown set was accepted");
  } catch (const ManifestError& e) {
    CHECK(contains(joined(e.diagnostics()),
                   "--parameter-set \"medium\": no parameter set of that name (the sets: "
                   "\"heavy\", \"light\")"));
  }
  // From the command line: the heavy mass oscillates at half the frequency.
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' validate '" + ssd.string() +
                                          "' --parameter-set heavy --set /coupling/end=1");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "\"heavy\" applied, not \"light\""));
}

TEST_CASE("a binding on an input sets its start value: the unconnected input holds it (closed form)") {
  // m x'' = -k x + k2 (x_other - x), x(0) = 0, x_other = 1 m (written as 100 cm):
  // x(t) = x_eq (1 - cos(w t)), x_eq = k2 / (k + k2) = 0.75 m, w = sqrt((k + k2) / m) = 2 rad/s.
  const fs::path ssd = written("ssp_input_start", two_sets(true));
  CHECK(json::parse(ssp::read_ssp(ssd).text)["subsystems"]["osc"]["parameters"]["x_other"] == 1.0);
  const fs::path out = stride_test::scratch() / "ssp_input_start_run";
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' run '" + ssd.string() +
                                          "' --quiet --set /coupling/end=3 --out '" + out.string() + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto t = stride_test::read_csv(out / "results.csv");
  REQUIRE(t.rows() == 301);
  double worst = 0.0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const double time = t["time"][i];
    worst = std::max(worst, std::abs(t["osc.x"][i] - 0.75 * (1.0 - std::cos(2.0 * time))));
  }
  CHECK(worst < 1e-9);           // the FMU's RK4 at 1 ms
  CHECK(t["osc.x"][150] > 1.4);  // near t = pi/2 it stands at 2 x_eq: the bound value pulled it, not 0
}

TEST_CASE("a folder is a system; --ssd chooses one of several .ssd files, in a folder and in a package") {
  const fs::path ssd = written("ssp_folder", two_sets(false));
  const fs::path dir = ssd.parent_path();
  CHECK(json::parse(ssp::read_ssp(dir).text)["subsystems"]["osc"]["parameters"]["m"] == 1.0);
  std::ofstream(dir / "Variant.ssd") << std::regex_replace(
      two_sets(false), std::regex(R"(name="m"><ssv:Real value="1")"), R"(name="m"><ssv:Real value="9")");
  CHECK(json::parse(ssp::read_ssp(dir, {"Variant", ""}).text)["subsystems"]["osc"]["parameters"]["m"] == 9.0);
  CHECK(json::parse(ssp::read_ssp(dir, {"Variant.ssd", ""}).text)["subsystems"]["osc"]["parameters"]["m"] == 9.0);
  CHECK(json::parse(ssp::read_ssp(dir).text)["output"] == "out/ssp_folder");
  // Without SystemStructure.ssd, two .ssd files are a choice to make.
  fs::remove(ssd);
  fs::copy_file(dir / "Variant.ssd", dir / "Other.ssd");
  try {
    ssp::read_ssp(dir);
    FAIL("two .ssd files and no choice");
  } catch (const ManifestError& e) {
    CHECK(contains(joined(e.diagnostics()), "several .ssd files: choose one with --ssd NAME (Other.ssd, Variant.ssd)"));
  }
  try {
    ssp::read_ssp(dir, {"Missing", ""});
    FAIL("a missing .ssd");
  } catch (const ManifestError& e) {
    CHECK(contains(joined(e.diagnostics()),
                   "--ssd Missing: no Missing.ssd here (the .ssd files: Other.ssd, Variant.ssd)"));
  }
  // The same in a package, from the command line.
  const fs::path pkg = stride_test::scratch() / "variants.ssp";
  fs::remove(pkg);
  const auto z = stride_test::run_command("cd '" + dir.string() + "' && '" + STRIDE_CMAKE + "' -E tar cf '" +
                                          pkg.string() + "' --format=zip Variant.ssd Other.ssd resources");
  REQUIRE(z.exit_code == 0);
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' validate '" + pkg.string() +
                                          "' --ssd Variant --set /coupling/end=1");
  INFO(r.output);
  CHECK(r.exit_code == 0);
  const auto refused = stride_test::run_command(std::string("'") + STRIDE_EXE + "' validate '" + pkg.string() + "'");
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.output, "choose one with --ssd NAME"));
}

namespace {

// Two oscillators as libcosim's users write them (OspSystemStructure.xml): b follows a's
// position, a follows half of b's plus 0.1 m through a LinearTransformation function.
std::string osp_system(const std::string& b_attributes = "", const std::string& extra = "") {
  return R"(<?xml version="1.0" encoding="UTF-8"?>
<OspSystemStructure xmlns="http://opensimulationplatform.com/MSMI/OSPSystemStructure" version="0.1">
  <StartTime>0.5</StartTime>
  <BaseStepSize>0.01</BaseStepSize>
  <Algorithm>fixedStep</Algorithm>
  <Simulators>
    <Simulator name="a" source="resources/oscillator.fmu">
      <InitialValues>
        <InitialValue variable="k2"><Real value="4"/></InitialValue>
        <InitialValue variable="x0"><Real value="1"/></InitialValue>
      </InitialValues>
    </Simulator>
    <Simulator name="b" source="resources/oscillator.fmu")" +
         b_attributes + R"(>
      <InitialValues>
        <InitialValue variable="k2"><Real value="4"/></InitialValue>
        <InitialValue variable="x0"><Real value="0"/></InitialValue>
      </InitialValues>
    </Simulator>
  </Simulators>
  <Functions>
    <LinearTransformation name="half" factor="0.5" offset="0.1"/>
  </Functions>
  <Connections>
    <VariableConnection>
      <Variable simulator="b" name="x_other"/>
      <Variable simulator="a" name="x"/>
    </VariableConnection>
    <SignalConnection><Signal function="half" name="in"/><Variable simulator="b" name="x"/></SignalConnection>
    <SignalConnection><Signal function="half" name="out"/><Variable simulator="a" name="x_other"/></SignalConnection>
)" + extra +
         R"(  </Connections>
</OspSystemStructure>
)";
}

}  // namespace

TEST_CASE("OspSystemStructure.xml: libcosim's system runs as the same system written as a manifest, bit for bit") {
  const fs::path dir = folder_with_fmu("osp_two");
  std::ofstream(dir / "OspSystemStructure.xml") << osp_system();
  const ssp::SspManifest s = ssp::read_ssp(dir);
  const json d = json::parse(s.text);
  INFO(s.text);
  CHECK(d["coupling"]["scheme"] == "jacobi");
  CHECK(d["coupling"]["macro_step"] == 0.01);
  CHECK(d["coupling"]["start"] == 0.5);
  CHECK(d["coupling"]["initialization"] == "exchange");
  CHECK(d["subsystems"]["b"]["parameters"]["x0"] == 0.0);
  CHECK(d["subsystems"]["a"]["step"] == 0.01);
  REQUIRE(d["connections"].size() == 2);
  CHECK(d["connections"][0]["from"] == "a.x");  // the output end, whatever the order written
  CHECK(d["connections"][0]["to"] == "b.x_other");
  CHECK(d["connections"][1]["transformation"]["factor"] == 0.5);
  CHECK(d["connections"][1]["unit_conversion"] == false);
  CHECK(d["output"] == "out/osp_two");
  // The same system by hand.
  json m = {{"format", 1},
            {"subsystems",
             {{"a",
               {{"fmu", (dir / "resources/oscillator.fmu").string()},
                {"step", 0.01},
                {"parameters", {{"k2", 4}, {"x0", 1}}}}},
              {"b",
               {{"fmu", (dir / "resources/oscillator.fmu").string()},
                {"step", 0.01},
                {"parameters", {{"k2", 4}, {"x0", 0}}}}}}},
            {"connections",
             {{{"from", "a.x"}, {"to", "b.x_other"}},
              {{"from", "b.x"}, {"to", "a.x_other"}, {"transformation", {{"factor", 0.5}, {"offset", 0.1}}}}}},
            {"coupling",
             {{"scheme", "jacobi"}, {"macro_step", 0.01}, {"start", 0.5}, {"end", 3}, {"initialization", "exchange"}}}};
  std::ofstream(dir / "by_hand.json") << m.dump(2);
  const std::string by_hand = stride_run_csv(dir / "by_hand.json", "osp_by_hand");
  const fs::path out = stride_test::scratch() / "osp_run";
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' run '" + dir.string() +
                                          "' --quiet --set /coupling/end=3 --out '" + out.string() + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(file_text(out / "results.csv") == by_hand);
  const auto t = stride_test::read_csv(out / "results.csv");
  REQUIRE(t.rows() == 251);
  CHECK(t["time"][0] == 0.5);
  CHECK(std::abs(t["b.x"][250]) > 0.01);  // b was pulled by a through the connection
}

TEST_CASE("OspSystemStructure.xml: what Stride cannot run as libcosim would is refused, named with its line") {
  struct Case {
    std::string name, xml, expect;
  };
  const std::vector<Case> cases = {
      {"decimation", osp_system(" stepSize=\"0.02\""), "stepSize 0.02 differs from BaseStepSize"},
      {"sum",
       std::regex_replace(osp_system(), std::regex("<LinearTransformation name=\"half\""),
                          "<Sum name=\"half\" inputCount=\"2\""),
       "<Sum> functions are not supported"},
      {"group", osp_system("", "    <VariableGroupConnection/>\n"), "<VariableGroupConnection> is not supported"},
      {"unknown simulator",
       osp_system("",
                  "    <VariableConnection><Variable simulator=\"c\" name=\"x\"/><Variable simulator=\"a\" "
                  "name=\"x_other\"/></VariableConnection>\n"),
       "no simulator \"c\""},
      {"two outputs",
       osp_system("",
                  "    <VariableConnection><Variable simulator=\"a\" name=\"v\"/><Variable simulator=\"b\" "
                  "name=\"v\"/></VariableConnection>\n"),
       "a connection joins an output to an input; here output and output"},
      {"initial value of an output",
       std::regex_replace(osp_system(), std::regex("variable=\"x0\"><Real value=\"0\""),
                          "variable=\"x\"><Real value=\"0\""),
       "\"x\" (causality output) takes no value before the run"},
      {"algorithm", std::regex_replace(osp_system(), std::regex(">fixedStep<"), ">ecco<"),
       "algorithm \"ecco\" is not supported"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const fs::path dir = folder_with_fmu("osp_bad");
    std::ofstream(dir / "OspSystemStructure.xml") << c.xml;
    try {
      ssp::read_ssp(dir / "OspSystemStructure.xml");
      FAIL("accepted");
    } catch (const ManifestError& e) {
      INFO(joined(e.diagnostics()));
      CHECK(contains(joined(e.diagnostics()), c.expect));
      CHECK(contains(joined(e.diagnostics()), "OspSystemStructure.xml: line "));
    }
  }
}
