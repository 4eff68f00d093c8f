// Parameter types table, matrix and integer list: the SDK getters (Params::table, matrix,
// integers) and Table's interpolation against values worked out by hand; the host's checks
// with the pointer of the offending element, through check_param and through manifests
// with the test plugin test_log (tests/broken_plugins/runtime/test_log.cpp).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "stride/host/graph/experiment.hpp"
#include "stride_run.hpp"

namespace fs = std::filesystem;
using stride::json;
using stride::host::check_param;

namespace {

const stride::host::PluginRegistry& registry() {
  static const stride::host::PluginRegistry reg = [] {
    stride::host::PluginRegistry r;
    r.scan({STRIDE_BUILD_PLUGIN_DIR, STRIDE_TEST_RUNTIME_DIR});
    return r;
  }();
  return reg;
}

std::vector<stride::host::Diagnostic> problems(const json& parameters) {
  std::ifstream in(STRIDE_SOURCE_DIR "/tests/manifests/log_ramp.json");
  json m = json::parse(in);
  m["plugin_paths"] = {STRIDE_TEST_RUNTIME_DIR};
  m["subsystems"]["ramp"]["parameters"] = parameters;
  const fs::path file = stride_test::scratch() / "params.json";
  fs::create_directories(file.parent_path());
  std::ofstream(file) << m.dump(2);
  try {
    stride::host::Experiment ex(stride::host::read_manifest(file), registry());
  } catch (const stride::host::ManifestError& e) {
    return e.diagnostics();
  }
  return {};
}

// The one diagnostic's pointer and message.
std::string only(const std::vector<stride::host::Diagnostic>& d) {
  REQUIRE(d.size() == 1);
  return d[0].pointer + ": " + d[0].message;
}

}  // namespace

TEST_CASE("params: getters and table interpolation") {
  const stride::Params p(json{{"n", {3, -1, 7}},
                              {"m", {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.5}}},
                              {"t", {{0.0, 0.0, 10.0}, {2.0, 1.0, 30.0}, {3.0, 4.0, 20.0}}}});
  CHECK(p.integers("n") == std::vector<long>{3, -1, 7});
  const Eigen::MatrixXd m = p.matrix("m");
  REQUIRE(m.rows() == 2);
  REQUIRE(m.cols() == 3);
  CHECK(m(1, 2) == 6.5);
  CHECK(m(0, 1) == 2.0);
  const stride::Table t = p.table("t");
  REQUIRE(t.columns() == 2);
  CHECK(t.x == std::vector<double>{0.0, 2.0, 3.0});
  // Column 0 through (0, 0), (2, 1), (3, 4); column 1 through (0, 10), (2, 30), (3, 20).
  CHECK(t(1.0) == doctest::Approx(0.5));
  CHECK(t(2.5) == doctest::Approx(2.5));
  CHECK(t(2.0) == 1.0);
  CHECK(t(0.5, 1) == doctest::Approx(15.0));
  CHECK(t(2.75, 1) == doctest::Approx(22.5));
  CHECK(t(-1.0) == 0.0);  // the end values beyond the ends
  CHECK(t(9.0, 1) == 20.0);
  CHECK_THROWS(t(1.0, 2));
}

TEST_CASE("params: the host's checks point at the element") {
  auto ints = stride::integer_list_param("n", {}, "doc", 0, 10);
  std::string where;
  CHECK(check_param(ints, json{1, 2, 10}).empty());
  CHECK(check_param(ints, json{1, 11}, &where) == "expected an integer in [0, 10], found integer 11");
  CHECK(where == "/1");
  CHECK(check_param(ints, json{1, 2.5}, &where) == "expected an integer in [0, 10], found number 2.5");
  CHECK(check_param(ints, json("3")).find("expected a list of integers") == 0);

  auto mat = stride::matrix_param("g", json(), "1", "doc", -1, 1);
  CHECK(check_param(mat, json{{0.5, 1}, {-1, 0}}).empty());
  where.clear();
  CHECK(check_param(mat, json{{0.5, 1}, {-1, 0, 0}}, &where) == "expected a row of 2 numbers like row 0, found 3");
  CHECK(where == "/1");
  CHECK(check_param(mat, json{{0.5, 1}, {0, "a"}}, &where) == "expected a real number in [-1, 1], found string \"a\"");
  CHECK(where == "/1/1");
  CHECK(check_param(mat, json{{0.5, 2}}, &where).find("found integer 2") != std::string::npos);
  CHECK(where == "/0/1");
  CHECK(check_param(mat, json::array()).find("found an empty list") != std::string::npos);
  CHECK(check_param(mat, json{1, 2}).find("expected a matrix") == 0);

  auto tab = stride::table_param("c", json(), {"m", "m^3/s"}, "doc", 0.0);
  CHECK(check_param(tab, json{{0, 0}, {1, 2}}).empty());
  CHECK(check_param(tab, json{{0, 0}, {1, 2}, {1, 3}}, &where) ==
        "expected x (the first column) strictly increasing: row 2 has x = 1, row 1 has x = 1");
  CHECK(where == "/2/0");
  CHECK(check_param(tab, json{{0, 0}, {1, 2, 3}}, &where) == "expected a row of 2 numbers (rows [x, y]), found 3");
  CHECK(where == "/1");
  CHECK(check_param(tab, json{{0, 0}, {1, -2}}, &where) == "expected a value in [0, inf], found integer -2");
  CHECK(where == "/1/1");
  CHECK(check_param(tab, json{{0, 0}, {-1, 0}}, &where).find("strictly increasing") != std::string::npos);
  auto free_tab = stride::table_param("c", json(), {}, "doc");
  CHECK(check_param(free_tab, json{{0, 1, 2, 3}, {1, 2, 3, 4}}).empty());
  CHECK(check_param(free_tab, json::array({json::array({0})}), &where).find("at least 2") != std::string::npos);
}

TEST_CASE("params: a declaration whose default its checks reject is refused") {
  stride::PluginInfo info;
  info.name = "x";
  info.parameters = {stride::table_param("c", json{{1, 0}, {0, 1}}, {"s", "m"}, "doc")};
  CHECK(stride::host::declaration_problem(info).find("strictly increasing") != std::string::npos);
  info.parameters = {stride::table_param("c", json{{0, 0}, {1, 1}}, {"s", "meter per fortnight squared"}, "doc")};
  CHECK(stride::host::declaration_problem(info).find("with a column in unit") != std::string::npos);
}

TEST_CASE("params: manifest errors name the manifest pointer of the element") {
  CHECK(problems(json{{"gains", {{1, 2}, {3, 4}, {5, 6}}}, {"curve", {{0, 0}, {0.5, 2}, {2, 1}}}, {"marks", {1, 2}}}).empty());
  CHECK(only(problems(json{{"gains", {{1, 2}, {3, "x"}}}})) ==
        "/subsystems/ramp/parameters/gains/1/1: expected a real number in [-1000, 1000], found string \"x\"");
  CHECK(only(problems(json{{"gains", {{1, 2}, {3}}}})) ==
        "/subsystems/ramp/parameters/gains/1: expected a row of 2 numbers like row 0, found 1");
  CHECK(only(problems(json{{"curve", {{0, 0}, {0.5, 2}, {0.5, 1}}}})) ==
        "/subsystems/ramp/parameters/curve/2/0: expected x (the first column) strictly increasing: row 2 has x = 0.5, "
        "row 1 has x = 0.5");
  CHECK(only(problems(json{{"marks", {1, 0}}})) == "/subsystems/ramp/parameters/marks/1: expected an integer in [1, 1000], found integer 0");
}

TEST_CASE("params: every bad element of a list, matrix or table is reported, each with its pointer") {
  // One diagnostic per parameter: the first element at its pointer, the others after it.
  const std::string m = only(problems(json{{"gains", {{1, "x"}, {"y", 2}, {3, 4000}}}}));
  CHECK(m.rfind("/subsystems/ramp/parameters/gains/0/1: expected a real number in [-1000, 1000], found string \"x\"; 2 "
                "more: ",
                0) == 0);
  CHECK(m.find("/1/0: expected a real number in [-1000, 1000], found string \"y\"") != std::string::npos);
  CHECK(m.find("/2/1: expected a real number in [-1000, 1000], found integer 4000") != std::string::npos);
  const std::string t = only(problems(json{{"curve", {{0, 0}, {1, "a"}, {0.5, 1}, {2, "b", 3}}}}));
  CHECK(t.find("curve/1/1: expected a real number, found string \"a\"") != std::string::npos);
  CHECK(t.find("/2/0: expected x (the first column) strictly increasing") != std::string::npos);
  CHECK(t.find("/3: expected a row of 2 numbers") != std::string::npos);
  CHECK(t.find("/3/1: expected a real number, found string \"b\"") != std::string::npos);
  const std::string k = only(problems(json{{"marks", {0, 5, 2000, "x"}}}));
  CHECK(k.find("marks/0: expected an integer in [1, 1000], found integer 0; 2 more: /2: ") != std::string::npos);
  CHECK(k.find("/3: expected an integer in [1, 1000], found string \"x\"") != std::string::npos);
  // A real list with units: each element converted or reported at its own index.
  auto list = stride::real_list_param("lengths", {}, "m", "doc");
  json v{"2 mm", 3, "1 s", "4 m 2", "5 km"};
  const auto all = stride::host::accept_param_problems(list, v);
  REQUIRE(all.size() == 2);
  CHECK(all[0].where == "/2");
  CHECK(all[0].message.find("s is not convertible to m") != std::string::npos);
  CHECK(all[1].where == "/3");
  CHECK(all[1].message.find("has the number 2 inside it") != std::string::npos);
  // A long list of bad elements: the first 21 spelled out, the rest counted.
  json many = json::array();
  for (int i = 0; i < 100; ++i) many.push_back(-1);
  const std::string c = check_param(stride::integer_list_param("n", {}, "doc", 0, 10), many);
  CHECK(c.find("99 more: /1: ") != std::string::npos);
  CHECK(c.find("/20: ") != std::string::npos);
  CHECK(c.find("/21: ") == std::string::npos);
  CHECK(c.find("; and 79 others") != std::string::npos);
}

TEST_CASE("params: validate lists every value it converted from a unit") {
  std::ifstream in(STRIDE_SOURCE_DIR "/tests/manifests/log_ramp.json");
  json m = json::parse(in);
  m["plugin_paths"] = {STRIDE_TEST_RUNTIME_DIR};
  m["subsystems"]["ramp"]["parameters"]["slope"] = "7.2 km/h";
  m["subsystems"]["ramp"]["parameters"]["limit"] = "50 cm";
  m["subsystems"]["ramp"]["step"] = "10 ms";
  m["coupling"]["end"] = "1 min";
  const fs::path file = stride_test::scratch() / "converted.json";
  fs::create_directories(file.parent_path());
  std::ofstream(file) << m.dump(2);
  auto r = stride_test::run_command("'" STRIDE_EXE "' validate '" + file.string() + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  CHECK(r.output.find("value converted: /subsystems/ramp/step: \"10 ms\" = 0.01 s") != std::string::npos);
  CHECK(r.output.find("value converted: /coupling/end: \"1 min\" = 60 s") != std::string::npos);
  CHECK(r.output.find("value converted: /subsystems/ramp/parameters/slope: \"7.2 km/h\" = 2 m/s") != std::string::npos);
  CHECK(r.output.find("value converted: /subsystems/ramp/parameters/limit: \"50 cm\" = 0.5 m") != std::string::npos);
}

TEST_CASE("params: a table and a matrix drive test_log's outputs") {
  // z = curve(t) through (0, 0), (0.5, 2), (1, 1); g = row sums of gains.
  std::ifstream in(STRIDE_SOURCE_DIR "/tests/manifests/log_ramp.json");
  json m = json::parse(in);
  m["plugin_paths"] = {STRIDE_TEST_RUNTIME_DIR};
  m["subsystems"]["ramp"]["parameters"]["curve"] = {{0, 0}, {0.5, 2}, {1, 1}};
  m["subsystems"]["ramp"]["parameters"]["gains"] = {{1, 2}, {3, -4.5}};
  const fs::path file = stride_test::scratch() / "table_run" / "manifest.json";
  fs::create_directories(file.parent_path());
  std::ofstream(file) << m.dump(2);
  const fs::path out = file.parent_path() / "out";
  auto r = stride_test::run_command("'" STRIDE_EXE "' run '" + file.string() + "' --quiet --out '" + out.string() + "'");
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  const auto t = stride_test::read_csv(out / "results.csv");
  const auto& time = t["time"];
  REQUIRE(time.size() > 50);
  for (std::size_t i = 0; i < time.size(); ++i) {
    const double s = time[i];
    const double z = s <= 0.5 ? 4 * s : 2 - 2 * (s - 0.5);
    CHECK(t["ramp.z"][i] == doctest::Approx(z).epsilon(1e-12));
  }
  CHECK(t["ramp.g.0"].back() == 3.0);
  CHECK(t["ramp.g.1"].back() == -1.5);
}

TEST_CASE("params: describe shows the new types") {
  const std::string env = "STRIDE_PLUGIN_PATH='" STRIDE_TEST_RUNTIME_DIR "' '" STRIDE_EXE "' plugins describe test_log";
  auto text = stride_test::run_command(env);
  REQUIRE(text.exit_code == 0);
  CHECK(text.output.find("marks : integer list = []  in [1, 1000]") != std::string::npos);
  CHECK(text.output.find("gains : matrix = [[1.0,0.0],[0.0,1.0]]") != std::string::npos);
  CHECK(text.output.find("curve : table [x: s, y: m] = [[0.0,0.0],[1.0,1.0]]") != std::string::npos);
  auto j = stride_test::run_command(env + " --json");
  REQUIRE(j.exit_code == 0);
  const json d = json::parse(j.output.substr(j.output.find('{')));
  bool found = false;
  for (const auto& p : d["parameters"])
    if (p["name"] == "curve") {
      found = true;
      CHECK(p["type"] == "table");
      CHECK(p["column_units"] == json{"s", "m"});
    }
  CHECK(found);
}

TEST_CASE("params: issue 33's table, matrix and list: every bad element at its own pointer, in one report") {
  // curve [[0,0],[0,1],[2]], gains [[1,2],[3],[1,"x"]], marks [1.5,1e20,true] in one manifest.
  const auto d = problems(json{{"curve", {{0, 0}, {0, 1}, {2}}},
                               {"gains", {{1, 2}, {3}, {1, "x"}}},
                               {"marks", {1.5, 1e20, true}}});
  std::string all;
  for (const auto& x : d) all += x.pointer + ": " + x.message + "\n";
  INFO(all);
  const std::string p = "/subsystems/ramp/parameters/";
  for (const std::string& part : std::vector<std::string>{
           p + "curve/1/0: expected x (the first column) strictly increasing: row 1 has x = 0, row 0 has x = 0", "/2: expected a row of 2 numbers",
        p + "gains/1: expected a row of 2 numbers like row 0, found 1",
        "/2/1: expected a real number in [-1000, 1000], found string \"x\"",
        p + "marks/0: expected an integer in [1, 1000], found number 1.5",
        "/1: expected an integer in [1, 1000], found number 1e+20", "/2: expected an integer in [1, 1000], found boolean true"})
    CHECK_MESSAGE(all.find(part) != std::string::npos, part);
}
