// The `signal` source plugin (plugins/subsystems/signal): each kind of signal against its closed
// form, tables with each interpolation and extrapolation (a jump where a time repeats), a CSV
// file in the input format of fmusim and FMPy, and bad specifications reported at their pointer.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "../../plugins/subsystems/signal/signals.hpp"
#include "stride_run.hpp"

namespace {

namespace fs = std::filesystem;
using stride_test::json;
using namespace stride::signals;

double at(const Signal& s, double t) {
  std::vector<double> v(s.size());
  s.value(t, v);
  return v[0];
}

// `stride <verb> <manifest>` in a scratch folder; the summary and table when it ran.
struct Result {
  int code = -1;
  std::string err;
  stride_test::Table table;
};
Result run(const std::string& verb, const json& manifest, const std::string& tag) {
  const fs::path dir = stride_test::scratch() / tag;
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "m.json") << manifest.dump(2);
  const std::string cmd = std::string("'") + STRIDE_EXE + "' " + verb + " '" + (dir / "m.json").string() + "'" +
                          (verb == "run" ? " --quiet --out '" + (dir / "out").string() + "'" : "") + " 2>'" +
                          (dir / "err.txt").string() + "' >/dev/null";
  const int st = std::system(cmd.c_str());
  Result r;
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream e(dir / "err.txt");
  r.err.assign(std::istreambuf_iterator<char>(e), {});
  if (fs::exists(dir / "out" / "results.csv")) r.table = stride_test::read_csv(dir / "out" / "results.csv");
  return r;
}

json source(const json& parameters, double end) {
  return {{"format", 1},
          {"subsystems", {{"src", {{"plugin", "signal"}, {"step", 0.1}, {"parameters", parameters}}}}},
          {"connections", json::array()},
          {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.1}, {"start", 0}, {"end", end}}},
          {"record", {{"interval", 0.1}}}};
}

}  // namespace

TEST_CASE("signal: tables interpolate, extrapolate and jump as declared") {
  const std::vector<std::vector<double>> rows = {{0, 0}, {1, 2}, {1, 5}, {2, 5}, {3, 2}};
  const Tabulated linear(rows, Interpolation::linear, Extrapolation::hold);
  CHECK(at(linear, -1) == 0);
  CHECK(at(linear, 0.25) == 0.5);
  CHECK(at(linear, 1 - 1e-12) == doctest::Approx(2));
  CHECK(at(linear, 1) == 5);  // the value after the jump
  CHECK(at(linear, 2.5) == 3.5);
  CHECK(at(linear, 4) == 2);
  const Tabulated previous(rows, Interpolation::previous, Extrapolation::hold);
  CHECK(at(previous, 0.99) == 0);
  CHECK(at(previous, 1) == 5);
  CHECK(at(previous, 2.99) == 5);
  const Tabulated extended(rows, Interpolation::linear, Extrapolation::linear);
  CHECK(at(extended, -1) == -2);
  CHECK(at(extended, 4) == -1);
  const Tabulated periodic(rows, Interpolation::linear, Extrapolation::periodic);  // period 3
  CHECK(at(periodic, 3.25) == 0.5);
  CHECK(at(periodic, -2.75) == 0.5);
  CHECK(at(periodic, 7) == 5);
  // Breaks: every row time, once per period when periodic.
  CHECK(linear.breaks_after(0.5) == 1);
  CHECK(linear.breaks_after(1) == 2);
  CHECK(std::isinf(linear.breaks_after(3)));
  CHECK(periodic.breaks_after(3.5) == 4);
  CHECK(periodic.breaks_after(5.5) == 6);
}

TEST_CASE("signal: every kind of signal from a run, against its closed form; steps end at jumps and kinks") {
  const fs::path csv = stride_test::scratch() / "inputs.csv";
  fs::create_directories(csv.parent_path());
  // fmusim / FMPy input format: quoted header, a repeated time for a jump, a held Integer column.
  std::ofstream(csv) << "\"time\",\"u\",\"n\"\n0,0,1\n0.5,1,1\n0.5,3,2\n1.5,3,2\n";
  const json p = {{"outputs",
                   {{"c", {{"constant", {2, 3}}}},
                    {"s", {{"steps", {{0.25, 10}, {0.55, -1}}}, {"initial", 1}, {"unit", "N"}}},
                    {"r", {{"ramp", {{"height", 2}, {"duration", 1}, {"start", 0.35}, {"offset", 0.5}}}}},
                    {"w", {{"sine", {{"amplitude", 1.5}, {"frequency", 0.5}, {"phase", 0.2}, {"offset", 0.1}}}}},
                    {"p", {{"table", {{0, 0}, {0.3, 3}, {0.3, -3}, {0.6, 0}}}, {"extrapolation", "periodic"}}}}},
                  {"csv", csv.string()},
                  {"csv_options", {{"hold", {"n"}}}}};
  const Result r = run("run", source(p, 2.0), "kinds");
  INFO(r.err);
  REQUIRE(r.code == 0);
  REQUIRE(r.table.rows() == 21);
  int wrong = 0;
  for (std::size_t i = 0; i < r.table.rows(); ++i) {
    const double t = r.table["time"][i];
    const double s = t < 0.25 ? 1 : t < 0.55 ? 10 : -1;
    const double ramp = 0.5 + 2 * std::clamp((t - 0.35) / 1.0, 0.0, 1.0);
    const double w = 0.1 + 1.5 * std::sin(2 * std::numbers::pi * 0.5 * t + 0.2);
    const double ph = std::fmod(t + 1e-12, 0.6), pt = ph < 0.3 ? 10 * ph : -3 + 10 * (ph - 0.3);
    const double u = t < 0.5 ? 2 * t : 3, n = t < 0.5 ? 1 : 2;
    CAPTURE(t);
    const bool ok = r.table["src.c.0"][i] == 2 && r.table["src.c.1"][i] == 3 && r.table["src.s"][i] == s &&
                    std::abs(r.table["src.r"][i] - ramp) < 1e-11 && std::abs(r.table["src.w"][i] - w) < 1e-11 &&
                    std::abs(r.table["src.p"][i] - pt) < 1e-10 && std::abs(r.table["src.u"][i] - u) < 1e-11 &&
                    r.table["src.n"][i] == n;
    wrong += !ok;
    if (!ok)
      MESSAGE("t = " << t << ": s " << r.table["src.s"][i] << " vs " << s << ", r " << r.table["src.r"][i] << " vs " << ramp
                     << ", w " << r.table["src.w"][i] << " vs " << w << ", p " << r.table["src.p"][i] << " vs " << pt << ", u "
                     << r.table["src.u"][i] << " vs " << u << ", n " << r.table["src.n"][i] << " vs " << n);
  }
  CHECK(wrong == 0);
}

TEST_CASE("signal: bad specifications and CSV files are reported at their pointer or line") {
  struct Case {
    json parameters;
    std::string message;
  };
  const fs::path bad = stride_test::scratch() / "bad.csv";
  std::ofstream(bad) << "time,u\n0,1\n0.5,x\n";
  const std::vector<Case> cases = {
      {{{"outputs", {{"u", {{"wave", 1}}}}}}, "/subsystems/src/parameters/outputs/u/wave: unknown key"},
      {{{"outputs", {{"u", {{"table", {{0, 1}, {-1, 2}}}}}}}}, "/subsystems/src/parameters/outputs/u/table: the table: row 1 goes back in time"},
      {{{"outputs", {{"u", {{"table", {{0, 1}, {1, 2}}}, {"interpolation", "cubic"}}}}}},
       "/subsystems/src/parameters/outputs/u/interpolation: expected one of \"linear\", \"previous\", found \"cubic\""},
      {{{"outputs", {{"u", {{"ramp", {{"duration", -1}}}}}}}}, "/subsystems/src/parameters/outputs/u/ramp/duration"},
      {{{"csv", bad.string()}}, "bad.csv: (document): line 3: \"x\" is not a number"},
      {json::object(), "/subsystems/src/parameters/outputs: expected at least one output"},
  };
  for (std::size_t k = 0; k < cases.size(); ++k) {
    CAPTURE(cases[k].parameters.dump());
    const Result r = run("validate", source(cases[k].parameters, 1.0), "bad" + std::to_string(k));
    CHECK(r.code == 2);
    CHECK(r.err.find(cases[k].message) != std::string::npos);
    if (r.err.find(cases[k].message) == std::string::npos) MESSAGE(r.err);
  }
}
