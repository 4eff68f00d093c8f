// Manifest validation: one test per class of error. Every diagnostic must carry the manifest's
// file name, the JSON pointer of the offending value, and what was expected and found, and
// everything must be reported before anything runs.
//  Manifests: tests/manifests/ (ramp_gain.json is the valid base; most errors are produced
//  from it with --set overrides, the way a user would on the command line).
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <unistd.h>
#include <cstdlib>
#include <string>
#include <vector>

#include "stride/host/graph/experiment.hpp"
#include "files.hpp"
#include "stride_run.hpp"

using namespace stride::host;
namespace fs = std::filesystem;

namespace {

using stride_test::contains;

const std::string kDir = STRIDE_SOURCE_DIR "/tests/manifests/";
const std::string kBase = kDir + "ramp_gain.json";

const PluginRegistry& registry() {
  static const PluginRegistry reg = [] {
    PluginRegistry r;
    r.scan({STRIDE_BUILD_PLUGIN_DIR, STRIDE_TEST_RUNTIME_DIR});
    return r;
  }();
  return reg;
}

// Everything the host reports for `file` with `overrides` (empty when the manifest is valid).
std::vector<Diagnostic> problems(const std::string& file, const std::vector<std::string>& overrides = {}) {
  try {
    Manifest m = read_manifest(file, overrides);  // as `stride validate`: every stage reports
    Experiment ex(std::move(m), registry());
  } catch (const ManifestError& e) {
    CHECK(std::string(e.what()) == [&] {  // what() lists every diagnostic, one a line
      std::string s;
      for (const auto& d : e.diagnostics()) s += (s.empty() ? "" : "\n") + d.str();
      return s;
    }());
    return e.diagnostics();
  }
  return {};
}

// Asserts that a diagnostic at `pointer` exists, names `file`, and its message holds `parts`.
void expect(const std::vector<Diagnostic>& diags, const std::string& file, const std::string& pointer,
            const std::vector<std::string>& parts) {
  std::string all;
  for (const auto& d : diags) all += d.str() + "\n";
  INFO("diagnostics:\n" << all);
  auto it = std::find_if(diags.begin(), diags.end(), [&](const Diagnostic& d) { return d.pointer == pointer; });
  REQUIRE(it != diags.end());
  CHECK(it->file == file);
  CHECK(contains(it->str(), file));
  CHECK(contains(it->str(), pointer.empty() ? "(document)" : pointer));
  for (const auto& p : parts) {
    INFO("expected part: " << p);
    CHECK(contains(it->message, p));
  }
}

}  // namespace

TEST_CASE("validation: the base manifest is valid") {
  auto d = problems(kBase);
  CHECK(d.empty());
  Experiment ex(load_manifest(kBase), registry());
  CHECK(ex.subsystem_count() == 2);
  CHECK(ex.connection_count() == 1);
  CHECK(ex.columns() == std::vector<std::string>{"src.y", "amp.y"});
}

TEST_CASE("validation: invalid JSON gives line and column") {
  // invalid_json.json misses a comma at the end of line 4; the parser stops at the unexpected
  // string "amp", columns 5-9 of line 5 (nlohmann/json reports the token's last character).
  const std::string f = kDir + "invalid_json.json";
  auto d = problems(f);
  REQUIRE(d.size() == 1);
  expect(d, f, "", {"invalid JSON", "line 5, column "});
  const auto& msg = d.front().message;
  const int column = std::atoi(msg.c_str() + msg.find("column ") + 7);
  CHECK(column >= 5);
  CHECK(column <= 9);
}

TEST_CASE("validation: a number beyond a double (1e400) is reported with line, column and pointer") {
  // Before: "(document): invalid JSON number overflow parsing '1e400'", with no place.
  std::ifstream in(kBase);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string end = "\"end\": ";
  const auto at = text.find(end, text.find("\"coupling\""));
  REQUIRE(at != std::string::npos);
  const auto value_end = text.find_first_of(",}\n", at + end.size());
  text.replace(at + end.size(), value_end - at - end.size(), "1e400");
  const auto line_start = text.rfind('\n', at) + 1;
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n');
  const auto column = at + end.size() - line_start + 1;
  const std::string file =
      (fs::temp_directory_path() / ("stride_overflow_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(file) << text;
  const auto d = problems(file);
  fs::remove(file);
  REQUIRE(d.size() == 1);
  expect(d, file, "/coupling/end",
         {"invalid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
          ": the number 1e400 is beyond the range of a double"});
  // Inside an array: the element's own pointer.
  std::vector<Diagnostic> direct;
  CHECK_FALSE(parse_json("{\"a\": [0,\n  1, -2e999]}", "x.json", direct));
  REQUIRE(direct.size() == 1);
  CHECK(direct[0].pointer == "/a/2");
  CHECK(direct[0].message ==
        "invalid JSON at line 2, column 6: the number -2e999 is beyond the range of a double (about 1.8e308)");
}

TEST_CASE("validation: unknown top-level key suggests the closest one") {
  const std::string f = kDir + "unknown_key.json";
  auto d = problems(f);
  expect(d, f, "/subsytems", {"unknown key \"subsytems\"", "did you mean \"subsystems\"", "allowed keys:"});
  expect(d, f, "/subsystems", {"required key \"subsystems\" is missing"});
}

TEST_CASE("validation: wrong type") {
  auto d = problems(kBase, {"/coupling/macro_step=\"0.1\""});
  expect(d, kBase, "/coupling/macro_step", {"expected a positive macro step in s", "found string \"0.1\""});
  d = problems(kBase, {"/subsystems/amp/parameters/k=\"three\""});
  expect(d, kBase, "/subsystems/amp/parameters/k", {"expected a real number", "found \"three\""});
  d = problems(kBase, {"/subsystems/amp=[1,2]"});
  expect(d, kBase, "/subsystems/amp", {"expected an object", "found an array"});
}

TEST_CASE("validation: missing required key") {
  const std::string f = kDir + "missing_key.json";
  auto d = problems(f);
  expect(d, f, "/subsystems/amp/step", {"required key \"step\" is missing"});
}

TEST_CASE("validation: parameter out of its declared bounds") {
  auto d = problems(kBase, {"/subsystems/amp/parameters/k=5000"});
  REQUIRE(d.size() == 1);
  expect(d, kBase, "/subsystems/amp/parameters/k", {"in [-1000, 1000]", "found 5000"});
  d = problems(kBase, {"/subsystems/amp/parameters/size=0"});
  expect(d, kBase, "/subsystems/amp/parameters/size", {"expected an integer in [1, 8]", "found 0"});
  d = problems(kBase, {"/subsystems/amp/parameters/gian=1"});
  expect(d, kBase, "/subsystems/amp/parameters/gian", {"has no parameter \"gian\"", "parameters: k, size, unit"});
}

TEST_CASE("validation: unknown plugin lists the available ones") {
  auto d = problems(kBase, {"/subsystems/amp/plugin=test_gian"});
  expect(d, kBase, "/subsystems/amp/plugin",
         {"unknown subsystem plugin \"test_gian\"", "did you mean \"test_gain\"", "available:", "test_ramp"});
  d = problems(kBase, {"/connections/0/extrapolator=zho"});
  expect(d, kBase, "/connections/0/extrapolator", {"unknown extrapolator plugin \"zho\"", "did you mean \"zoh\""});
}

TEST_CASE("validation: plugin of the wrong kind") {
  auto d = problems(kBase, {"/subsystems/amp/plugin=zoh"});
  expect(d, kBase, "/subsystems/amp/plugin", {"expected a subsystem plugin", "found \"zoh\"", "which is an extrapolator", "test_gain"});
  d = problems(kBase, {"/connections/0/extrapolator=rk4"});
  expect(d, kBase, "/connections/0/extrapolator", {"expected an extrapolator plugin", "found \"rk4\"", "which is an integrator", "zoh"});
}

TEST_CASE("validation: unknown subsystem in a connection") {
  auto d = problems(kBase, {"/connections/0/from=source.y"});
  expect(d, kBase, "/connections/0/from", {"unknown subsystem \"source\"", "subsystems: src, amp"});
  d = problems(kBase, {"/connections/0/to=amp"});
  expect(d, kBase, "/connections/0/to", {"expected \"subsystem.port\"", "found \"amp\""});
}

TEST_CASE("validation: unknown port lists the ports") {
  auto d = problems(kBase, {"/connections/0/to=amp.x"});
  expect(d, kBase, "/connections/0/to", {"subsystem \"amp\" has no port \"x\"", "u (input, 1 x m)"});
  d = problems(kBase, {"/connections/0/from=src.z"});
  expect(d, kBase, "/connections/0/from", {"has no port \"z\"", "y (output, 1 x m)"});
}

TEST_CASE("validation: an output used as an input") {
  auto d = problems(kBase, {"/connections/0/to=amp.y"});
  expect(d, kBase, "/connections/0/to", {"expected an input port", "\"amp.y\"", "which is an output", "u (input"});
}

TEST_CASE("validation: size mismatch") {
  auto d = problems(kBase, {"/subsystems/amp/parameters/size=2"});
  expect(d, kBase, "/connections/0/to", {"size mismatch", "src.y gives 1 element", "amp.u expects 2"});
}

TEST_CASE("validation: unit mismatch") {
  auto d = problems(kBase, {"/subsystems/amp/parameters/unit=N"});
  expect(d, kBase, "/connections/0/to", {"unit mismatch", "src.y is in m", "amp.u expects N"});
}

TEST_CASE("validation: units at connections go through UDUNITS-2") {
  // The mismatch names both ports, both units and why.
  auto d = problems(kBase, {"/subsystems/amp/parameters/unit=s"});
  expect(d, kBase, "/connections/0/to", {"unit mismatch", "src.y is in m", "amp.u expects s", "different quantities"});
  // A compatible unit converts, and the experiment says where.
  CHECK(problems(kBase, {"/subsystems/amp/parameters/unit=mm"}).empty());
  Experiment mm(read_manifest(kBase, {"/subsystems/amp/parameters/unit=mm"}), registry());
  CHECK(mm.unit_conversions() == std::vector<std::string>{"src.y -> amp.u: m to mm (x 1000)"});
  // Another spelling of the same unit: nothing to convert, nothing said.
  Experiment meter(read_manifest(kBase, {"/subsystems/amp/parameters/unit=meter"}), registry());
  CHECK(meter.unit_conversions().empty());
  // A plugin port in a unit that is not one: the subsystem, the port and the unit are named.
  d = problems(kBase, {"/subsystems/amp/parameters/unit=newton_meter"});
  expect(d, kBase, "/subsystems/amp", {"plugin \"test_gain\" declares port \"u\" in unit \"newton_meter\": not a unit"});
}

TEST_CASE("validation: parameters and times may be written with a unit") {
  // slope is declared in m/s: 2 mm/ms = 2 m/s; the times are in s.
  const Manifest m = read_manifest(kBase, {"/subsystems/src/parameters/slope=2 mm/ms", "/coupling/macro_step=100 ms",
                                           "/coupling/end=0.5 min", "/record/interval=50 ms", "/subsystems/amp/step=10 ms"});
  CHECK(m.coupling.macro_step == doctest::Approx(0.1).epsilon(1e-15));
  CHECK(m.coupling.end == 30.0);
  CHECK(m.record.interval == doctest::Approx(0.05).epsilon(1e-15));
  CHECK(problems(kBase, {"/subsystems/src/parameters/slope=2 mm/ms", "/coupling/macro_step=100 ms"}).empty());
  // What the plugin gets: the value in its declared unit.
  const LoadedPlugin* ramp = registry().find("test_ramp");
  REQUIRE(ramp != nullptr);
  CHECK(registry().make_params(*ramp, {{"slope", "7.2 km/h"}}).real("slope") == doctest::Approx(2.0).epsilon(1e-15));

  // Incompatible units: the pointer and both units.
  auto d = problems(kBase, {"/subsystems/src/parameters/slope=2 ms"});
  expect(d, kBase, "/subsystems/src/parameters/slope", {"convertible to m/s", "ms is not convertible to m/s"});
  d = problems(kBase, {"/coupling/macro_step=0.1 kg"});
  expect(d, kBase, "/coupling/macro_step", {"a positive macro step in s", "kg is not convertible to s"});
  // Bounds are checked in the declared unit, and the written value is quoted.
  d = problems(kBase, {"/subsystems/src/parameters/slope=3 km/s"});
  expect(d, kBase, "/subsystems/src/parameters/slope", {"in [-1000, 1000] (m/s), found 3000", "(from \"3 km/s\")"});
  d = problems(kBase, {"/coupling/macro_step=-5 ms"});
  expect(d, kBase, "/coupling/macro_step", {"a positive macro step in s", "= -0.005 s"});
  // Not a unit, not a number, no unit.
  d = problems(kBase, {"/subsystems/src/parameters/slope=2 meterz/s"});
  expect(d, kBase, "/subsystems/src/parameters/slope", {"\"meterz/s\": not a unit"});
  d = problems(kBase, {"/coupling/end=nan s"});
  expect(d, kBase, "/coupling/end", {"does not start with a finite number"});
  d = problems(kBase, {"/subsystems/src/parameters/slope=\"2\""});
  expect(d, kBase, "/subsystems/src/parameters/slope", {"has no unit"});
}

TEST_CASE("validation: an input fed twice") {
  auto d = problems(kBase, {"/connections/1={\"from\": \"src.y\", \"to\": \"amp.u\"}"});
  expect(d, kBase, "/connections/1/to", {"\"amp.u\" is already fed by /connections/0"});
}

TEST_CASE("validation: unconnected input") {
  auto d = problems(kBase, {"/connections=[]"});
  REQUIRE(d.size() == 1);
  expect(d, kBase, "/connections", {"input \"amp.u\"", "is not connected", "\"to\": \"amp.u\""});
}

TEST_CASE("validation: a feedthrough loop is no error (the scheme breaks it; graph_builder checks the warning)") {
  const std::string f = kDir + "algebraic_loop.json";
  CHECK(problems(f).empty());
  CHECK(problems(f, {"/subsystems/src={\"plugin\": \"test_ramp\", \"step\": 0.01}", "/connections/1/from=src.y"}).empty());
}

TEST_CASE("validation: bad --set override") {
  auto d = problems(kBase, {"coupling/end=1"});
  expect(d, kBase, "", {"--set coupling/end=1", "expected POINTER=VALUE"});
  d = problems(kBase, {"/couplings/end=1"});
  expect(d, kBase, "/couplings/end", {"the parent /couplings does not exist"});
  d = problems(kBase, {"/coupling/end=0"});
  expect(d, kBase, "/coupling/end", {"expected an end time after the start time", "found 0"});
}

TEST_CASE("validation: Gauss–Seidel order and scheme names") {
  auto d = problems(kBase, {"/coupling/order/1=amplifier"});
  expect(d, kBase, "/coupling/order/1", {"unknown subsystem \"amplifier\"", "subsystems: src, amp"});
  d = problems(kBase, {"/coupling/order/1=src"});
  expect(d, kBase, "/coupling/order/1", {"\"src\" is listed twice"});
  d = problems(kBase, {"/coupling/scheme=gauss_siedel"});
  expect(d, kBase, "/coupling/scheme", {"expected one of", "found \"gauss_siedel\"", "did you mean \"gauss_seidel\""});
}

TEST_CASE("validation: bad record variable") {
  auto d = problems(kBase, {"/record/variables=[\"amp.z\"]"});
  expect(d, kBase, "/record/variables/0", {"has no port \"z\"", "y (output, 1 x m)"});
  d = problems(kBase, {"/record/variables=[\"amp\"]"});
  expect(d, kBase, "/record/variables/0", {"expected \"subsystem.port\"", "found string \"amp\""});
  d = problems(kBase, {"/record/variables=[\"amp.u\"]"});
  expect(d, kBase, "/record/variables/0", {"expected an output port", "which is an input"});
}

TEST_CASE("validation: a plugin constructor that throws is reported at the subsystem") {
  const std::string f = kDir + "ctor_throws.json";
  auto d = problems(f);
  expect(d, f, "/subsystems/src", {"could not create", "test_ctor_throws", "missing_table.csv"});
}

TEST_CASE("validation: every problem is reported, not only the first") {
  auto d = problems(kBase, {"/subsystems/amp/parameters/k=5000", "/subsystems/src/parameters/slope=\"steep\"",
                            "/connections/0/extrapolator=zho"});
  CHECK(d.size() == 3);
  expect(d, kBase, "/subsystems/amp/parameters/k", {"found 5000"});
  expect(d, kBase, "/subsystems/src/parameters/slope", {"found \"steep\""});
  expect(d, kBase, "/connections/0/extrapolator", {"did you mean \"zoh\""});
}

// ---- Hostile input: sizes, depth, selectors, duplicates, stages ----

namespace {

// A manifest written to a scratch file (removed with the process's temp folder).
std::string scratch_manifest(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::temp_directory_path() / ("stride_validation_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto f = dir / name;
  std::ofstream(f) << text;
  return f.string();
}

std::string slurp(const std::string& f) {
  std::ifstream in(f);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("validation: the README's two problems in different stages are both reported") {
  auto d = problems(kBase, {"/coupling/sheme=\"jacobi\"", "/subsystems/amp/parameters/k=-3000"});
  CHECK(d.size() == 2);
  expect(d, kBase, "/coupling/sheme", {"unknown key \"sheme\"", "did you mean \"scheme\""});
  expect(d, kBase, "/subsystems/amp/parameters/k", {"found -3000"});
}

TEST_CASE("validation: element selectors are digits within the port, never wrapped") {
  for (const char* sel : {"[-1]", "[+0]", "[ 0]", "[0x1]", "[18446744073709551615]", "[1:0]", "[0:-1]", "[]", "[0][0]"}) {
    CAPTURE(sel);
    auto d = problems(kBase, {std::string("/connections/0/from=src.y") + sel});
    expect(d, kBase, "/connections/0/from", {"expected \"subsystem.port\", \"subsystem.port[i]\""});
    d = problems(kBase, {std::string("/connections/0/to=amp.u") + sel});
    expect(d, kBase, "/connections/0/to", {"expected \"subsystem.port\""});
  }
  // In range of the digits, out of range of the port: the bounds check is overflow-safe.
  for (const char* sel : {"[1]", "[999999999]", "[0:999999999]", "[999999998:999999999]"}) {
    CAPTURE(sel);
    auto d = problems(kBase, {std::string("/connections/0/from=src.y") + sel});
    expect(d, kBase, "/connections/0/from", {"out of range", "src.y has 1 elements"});
  }
  auto ok = problems(kBase, {"/connections/0/from=src.y[0]", "/connections/0/to=amp.u[0:1]"});
  CHECK(ok.empty());
}

TEST_CASE("validation: JSON nesting deeper than the limit is refused with its pointer") {
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "[";
  auto d = problems(kBase, {"/title=" + deep});
  REQUIRE(d.size() == 1);
  CHECK(d[0].pointer.size() == std::string("/title").size() + 63 * 2);  // the 64th level
  CHECK(contains(d[0].message, "--set: nesting deeper than 64 levels"));
  const std::string f = scratch_manifest("deep.json", "{\"format\": 1, \"title\": " + deep);
  d = problems(f);
  REQUIRE(d.size() == 1);
  CHECK(contains(d[0].message, "nesting deeper than 64 levels"));
  // Unterminated but not deep: a plain string on the command line, rejected where used.
  d = problems(kBase, {"/coupling/end=[[1]"});
  expect(d, kBase, "/coupling/end", {"expected an end time", "found string \"[[1]\""});
}

TEST_CASE("validation: duplicate keys are refused, not silently replaced") {
  std::string text = slurp(kBase);
  text.replace(text.find("\"step\": 0.01}"), 13, "\"step\": 0.01, \"step\": 5}");
  const std::string f = scratch_manifest("duplicate.json", text);
  auto d = problems(f);
  expect(d, f, "/subsystems/src/step", {"duplicate key \"step\""});
  d = problems(kBase, {"/subsystems/amp/parameters={\"k\": 1, \"k\": 2}"});
  expect(d, kBase, "/subsystems/amp/parameters/k", {"--set", "duplicate key \"k\""});
}

TEST_CASE("validation: files that are not manifests are refused without reading them whole") {
  for (const char* f : {"/dev/zero", "/dev/null", "/tmp"}) {
    CAPTURE(f);
    try {
      read_manifest(f);
      FAIL("accepted");
    } catch (const ManifestError& e) {
      REQUIRE(e.diagnostics().size() == 1);
      CHECK(e.diagnostics()[0].file == f);
      CHECK((contains(e.what(), "expected a regular file") || contains(e.what(), "expected a file, found a directory") ||
             contains(e.what(), "invalid JSON")));
    }
  }
  const std::string big = scratch_manifest("big.json", std::string(17u << 20, ' '));
  try {
    read_manifest(big);
    FAIL("accepted");
  } catch (const ManifestError& e) {
    CHECK(contains(e.what(), "more than the limit of 16777216 bytes"));
  }
}

TEST_CASE("validation: --set cannot grow an array or write into a value") {
  auto d = problems(kBase, {"/connections/100000000={\"from\": \"src.y\", \"to\": \"amp.u\"}"});
  expect(d, kBase, "/connections/100000000", {"expected an index of /connections from 0 to 1"});
  d = problems(kBase, {"/coupling/end/x=1"});
  expect(d, kBase, "/coupling/end/x", {"is number 2.0, not an object or array"});
  d = problems(kBase, {"/connections/-={\"from\": \"src.y\", \"to\": \"amp.u\"}"});
  expect(d, kBase, "/connections/1/to", {"already fed by /connections/0"});
}

TEST_CASE("validation: times and sizes a run could not reach are refused before running") {
  auto d = problems(kBase, {"/coupling/macro_step=1e-300"});
  expect(d, kBase, "/coupling/macro_step", {"expected a macro step of at least", "cannot advance time"});
  d = problems(kBase, {"/coupling/start=1e17", "/coupling/end=1.000000000000001e17"});
  expect(d, kBase, "/coupling/macro_step", {"expected a macro step of at least 16000 s", "consecutive doubles are 16 s apart"});
  expect(d, kBase, "/subsystems/src/step", {"cannot advance time"});
  d = problems(kBase, {"/coupling/end=1e9", "/coupling/macro_step=0.05", "/record/interval=100", "/subsystems/amp/step=1"});
  expect(d, kBase, "/coupling/macro_step", {"expected at most 1e+10 steps", "takes 2e+10"});
  expect(d, kBase, "/subsystems/src/step", {"expected at most 1e+10 steps", "takes 1e+11"});
  d = problems(kBase, {"/coupling/start=-1.7e308", "/coupling/end=1.7e308"});
  expect(d, kBase, "/coupling/end", {"longer than a double can hold"});
  d = problems(kBase, {"/record/interval=1e-9"});
  expect(d, kBase, "/record/interval", {"expected at most 1e+08 rows", "gives 2e+09"});
  // A step that spans more rows than are held while it is under way (multirate: not cut at
  // the macro step).
  d = problems(kBase, {"/coupling/scheme=multirate", "/coupling/end=1e5", "/record/interval=0.001",
                       "/subsystems/amp/step=1e4"});
  expect(d, kBase, "/subsystems/amp/step", {"spans 1e+07 record intervals", "more than the 1e+06 rows"});
  // The history an extrapolator is asked to keep is bounded by its declaration.
  d = problems(kBase, {"/connections/0/extrapolator={\"plugin\": \"lagrange\", \"parameters\": {\"history\": 1000000000000}}"});
  expect(d, kBase, "/connections/0/extrapolator/parameters/history", {"expected an integer in [1, 1e+06]", "found 1000000000000"});
  // A macro step far beyond the run would be one exchange at most: refused (issue 33).
  d = problems(kBase, {"/coupling/macro_step=1e23", "/subsystems/amp/step=1e7"});
  REQUIRE(d.size() == 1);
  expect(d, kBase, "/coupling/macro_step", {"expected a macro step of at most the run's length", "found 1e+23 s"});
}

TEST_CASE("validation: a bad variable value is reported at the variable and where it is used") {
  auto d = problems(kBase, {"/variables={\"h\": \"fast\"}", "/coupling/macro_step=\"$h\"", "/subsystems/src/step=\"$h\""});
  expect(d, kBase, "/coupling/macro_step", {"found string \"fast\"", "(the value of variable \"h\", /variables/h)"});
  expect(d, kBase, "/subsystems/src/step", {"(the value of variable \"h\", /variables/h)"});
  expect(d, kBase, "/variables/h", {"the value string \"fast\" is rejected where it is used", "/coupling/macro_step",
                                    "/subsystems/src/step"});
  // The same inside a plugin's parameters (checked in the second stage).
  d = problems(kBase, {"/variables={\"gain\": 5000}", "/subsystems/amp/parameters/k=\"$gain\""});
  expect(d, kBase, "/subsystems/amp/parameters/k", {"found 5000", "variable \"gain\""});
  expect(d, kBase, "/variables/gain", {"rejected where it is used: /subsystems/amp/parameters/k"});
}

TEST_CASE("validation: monitor bounds, as [min, max] or {min, max}, with element selectors") {
  CHECK(problems(kBase, {"/monitor={\"bounds\": {\"src.y\": [0, 10], \"amp.y[0]\": {\"max\": 100}}}"}).empty());
  auto d = problems(kBase, {"/monitor={\"bounds\": {\"src.y\": {\"min\": 0, \"mx\": 1}}}"});
  expect(d, kBase, "/monitor/bounds/src.y/mx", {"unknown key \"mx\"", "did you mean \"max\""});
  d = problems(kBase, {"/monitor={\"bounds\": {\"src.y[-1]\": [0, 1]}}"});
  expect(d, kBase, "/monitor/bounds/src.y[-1]", {"expected a key \"subsystem.port\""});
  d = problems(kBase, {"/monitor={\"bounds\": {\"src.y[3]\": [0, 1]}}"});
  expect(d, kBase, "/monitor/bounds/src.y[3]", {"out of range", "src.y has 1 elements"});
  d = problems(kBase, {"/monitor={\"bounds\": {\"src.y\": [2, 1]}}"});
  expect(d, kBase, "/monitor/bounds/src.y", {"expected min <= max"});
  d = problems(kBase, {"/monitor={\"bounds\": {\"src.y\": [0, \"1\"]}}"});
  expect(d, kBase, "/monitor/bounds/src.y/1", {"expected a number or null"});
}

TEST_CASE("validation: an ODE system's state declaration is checked when it is created") {
  auto with = [](const std::string& mistake) {
    return std::vector<std::string>{"/subsystems/bad={\"plugin\": \"test_bad_states\", \"parameters\": {\"mistake\": \"" + mistake +
                                    "\"}, \"step\": 0.01, \"integrator\": \"rk4\"}"};
  };
  CHECK(problems(kBase, with("none")).empty());
  expect(problems(kBase, with("count")), kBase, "/subsystems/bad",
         {"plugin \"test_bad_states\" declares 2 states in states() for a state of size 1"});
  expect(problems(kBase, with("nominal")), kBase, "/subsystems/bad",
         {"declares state \"x\" with nominal value 0", "expected a positive number"});
  expect(problems(kBase, with("unit")), kBase, "/subsystems/bad", {"declares state \"x\" in unit \"meter_per_fortnight\""});
}

TEST_CASE("validation: record patterns: \"*\" any run, \"?\" one character, every other character itself") {
  using stride::host::pattern_match;
  CHECK(pattern_match("*", ""));
  CHECK(pattern_match("*", "der(x)"));
  CHECK(pattern_match("der(?)", "der(x)"));
  CHECK(!pattern_match("der(?)", "der(xy)"));
  CHECK(pattern_match("counter*", "counter"));
  CHECK(pattern_match("*.a.*", "s.a.0"));
  CHECK(!pattern_match("?", ""));
  CHECK(pattern_match("x[1]", "x[1]"));  // brackets are no character class (FMI 2 array names)
  CHECK(!pattern_match("x[12]", "x1"));
  CHECK(!stride::host::is_pattern("x[1]"));
  // A hostile pattern is linear in practice: 2000 stars against 100 000 characters without the "b".
  std::string pattern;
  for (int i = 0; i < 2000; ++i) pattern += "*a";
  CHECK(!pattern_match(pattern + "*b", std::string(100000, 'a')));
  CHECK(pattern_match(pattern + "*b", std::string(100000, 'a') + "b"));
}

TEST_CASE("validation: a variable no \"$\" reads is refused, from the file, a --set or a sweep axis") {
  const std::string crane = STRIDE_SOURCE_DIR "/manifests/crane1_zoh.json";
  // The typo of issue 33: --set /variables/hM for h_M.
  auto d = problems(crane, {"/variables/hM=0.05"});
  REQUIRE(d.size() == 1);
  expect(d, crane, "/variables/hM",
         {"--set /variables/hM=0.05: variable \"hM\" is not used: no value in the manifest is \"$hM\"",
          "(did you mean \"h_M\"?)", "variables used: [\"order\",\"h_M\",\"h_S\"]"});
  // A variable the file reads stays used when a --set replaces the value that read it.
  CHECK(problems(crane, {"/subsystems/cylinder/step=0.0001"}).empty());
  // One declared in the file and read nowhere.
  const fs::path file = fs::temp_directory_path() / ("stride_unused_" + std::to_string(::getpid()) + ".json");
  std::ifstream in(kBase);
  nlohmann::json m = nlohmann::json::parse(in);
  m["variables"] = {{"gain", 2}};
  std::ofstream(file) << m.dump(2);
  d = problems(file.string());
  fs::remove(file);
  REQUIRE(d.size() == 1);
  expect(d, file.string(), "/variables/gain", {"variable \"gain\" is not used", "variables used: (none)"});
  // A --set that creates a key no reader knows is refused as the same key in the file would be.
  expect(problems(crane, {"/coupling/macro_stepp=0.005"}), crane, "/coupling/macro_stepp",
         {"unknown key \"macro_stepp\" (did you mean \"macro_step\"?)"});
  expect(problems(crane, {"/subsystems/crane/parameters/mass=1"}), crane, "/subsystems/crane/parameters/mass",
         {"plugin \"crane_independent\" has no parameter \"mass\""});
}

TEST_CASE("validation: steps that cannot mean what they say are errors with both pointers and the values") {
  const std::string crane = STRIDE_SOURCE_DIR "/manifests/crane1_zoh.json";
  // One exchange in a 10-s run.
  auto d = problems(crane, {"/coupling/macro_step=20"});
  REQUIRE(d.size() == 1);
  expect(d, crane, "/coupling/macro_step",
         {"expected a macro step of at most the run's length (/coupling/end - /coupling/start = 10 s), found 20 s"});
  // A subsystem step in ms typed as s: cut to the macro step under Jacobi.
  d = problems(crane, {"/subsystems/cylinder/step=0.2"});
  REQUIRE(d.size() == 1);
  expect(d, crane, "/subsystems/cylinder/step",
         {"expected a step of at most /coupling/macro_step = 0.01 s, found 0.2 s", "steps of 0.01 s, not the 0.2 s"});
  // A smaller macro step under the crane's declared 0.01 s: the error, at the variable too.
  d = problems(crane, {"/coupling/macro_step=0.005"});
  expect(d, crane, "/subsystems/crane/step",
         {"expected a step of at most /coupling/macro_step = 0.005 s, found 0.01 s", "(the value of variable \"h_M\""});
  expect(d, crane, "/variables/h_M", {"is rejected where it is used: /subsystems/crane/step"});
  // align: false lets the step overshoot, as documented: valid.
  CHECK(problems(crane, {"/coupling/macro_step=0.005", "/coupling/align=false"}).empty());
  // A step that does not divide the macro step is legitimately cut: a warning naming the steps.
  Manifest m = read_manifest(crane, {"/subsystems/cylinder/step=0.003"});
  CHECK(m.problems.empty());
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0] == "/subsystems/cylinder/step: 0.003 s does not divide /coupling/macro_step = 0.01 s: each macro "
                         "step is 3 steps of 0.003 s and one of " + number_text(0.01 - 3 * 0.003) + " s");
}

TEST_CASE("validation: an option that changes nothing under the manifest's other choices is said, not silent") {
  // Warnings, not errors: --set can switch the scheme but cannot remove the other scheme's key.
  const std::string crane = STRIDE_SOURCE_DIR "/manifests/crane1_zoh.json";
  // The multirate scheme's synchronization under Jacobi: the steps' order there is /coupling/order.
  Manifest m = read_manifest(crane, {"/coupling/synchronization=\"fastest_first\""});
  CHECK(m.problems.empty());
  REQUIRE(m.warnings.size() == 1);
  CHECK(m.warnings[0] ==
        "/coupling/synchronization: orders the steps of the \"multirate\" scheme only; under "
        "\"jacobi\" it changes nothing (/coupling/order is the Gauss-Seidel order)");
  CHECK(read_manifest(crane, {"/coupling/scheme=\"multirate\"", "/coupling/synchronization=\"fastest_first\""})
            .warnings.empty());
  // align under multirate, which has no communication points to land on.
  m = read_manifest(crane, {"/coupling/scheme=\"multirate\"", "/coupling/align=false"});
  CHECK(m.problems.empty());
  REQUIRE(m.warnings.size() == 1);
  CHECK(contains(m.warnings[0], "/coupling/align: cuts the steps"));
  CHECK(contains(m.warnings[0], "under \"multirate\" every subsystem takes its own steps and it changes nothing"));
  // `stride validate` prints them.
  const auto v = stride_test::run_command(std::string("'") + STRIDE_EXE + "' validate '" + crane +
                                          "' --set '/coupling/synchronization=\"fastest_first\"'");
  CHECK(v.exit_code == 0);
  CHECK(contains(v.output, "warning: /coupling/synchronization: orders the steps"));
  // An energy residual limit where no power bond pairs two subsystems (the base manifest: a ramp
  // into a gain) watches nothing: said as a warning (a manifest whose subsystem was swapped for
  // an FMU keeps its monitor); on the crane's bonds, nothing to say.
  auto warnings_of = [](const std::string& file, const std::vector<std::string>& sets) {
    return Experiment(read_manifest(file, sets), registry()).bond_warnings();
  };
  const auto w = warnings_of(kBase, {"/monitor={\"energy_residual_limit\": 10}"});
  REQUIRE(w.size() == 1);
  CHECK(contains(w[0], "/monitor/energy_residual_limit watches nothing: no two subsystems here exchange power"));
  CHECK(warnings_of(kBase, {}).empty());
  for (const auto& s : warnings_of(crane, {"/monitor/energy_residual_limit=10"}))
    CHECK_FALSE(contains(s, "energy_residual_limit"));
}
