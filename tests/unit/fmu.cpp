// FMUs as subsystems, with FMUs built by this project from C sources (examples/fmus, and the
// broken variants of tests/fmus): a damped oscillator as co-simulation and model exchange FMU,
// FMI 2 and FMI 3, against its analytic solution; a bouncing ball (model exchange, state
// events, FMI 2 and FMI 3) against its analytic bounce times; the two-mass problem with one
// mass as an FMU against the all-plugin run; a feedthrough FMU in an algebraic loop; and every
// kind of broken FMU, before the run (exit 2, file + pointer + reason) and during it (status
// failed with the FMU's own message, rows kept, temporary folders removed), a hung doStep, and
// unit conversion at connections.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <chrono>
#include <csignal>
#include <thread>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "stride_run.hpp"
#include "files.hpp"
#include "fmu_commands.hpp"

namespace {

using stride_test::contains;
using stride_test::slurp;

namespace fs = std::filesystem;
using stride_test::json;
using stride_test::Table;

const std::string kFmus = STRIDE_FMU_DIR;           // example FMUs
const std::string kBroken = STRIDE_TEST_FMU_DIR;    // broken FMUs
const std::string kManifests = STRIDE_SOURCE_DIR "/tests/manifests/";

// The verbs a bad manifest is tried with. Under the sanitizers validate only (CI time): run takes
// the same reader and builder before it stops.
const std::vector<std::string> kVerbs =
    STRIDE_TEST_SANITIZED ? std::vector<std::string>{"validate"} : std::vector<std::string>{"validate", "run"};

using stride_test::fmu_commands::Outcome;
using stride_test::fmu_commands::Scratch;
using stride_test::fmu_commands::stride;
using stride_test::fmu_commands::write_manifest;

// x(t) of m x'' + d x' + k x = 0 from x(0) = x0, x'(0) = 0 (underdamped).
double damped(double t, double m, double k, double d, double x0) {
  const double w = std::sqrt(k / m), z = d / (2 * std::sqrt(k * m)), wd = w * std::sqrt(1 - z * z);
  return x0 * std::exp(-z * w * t) * (std::cos(wd * t) + z * w / wd * std::sin(wd * t));
}

// Two oscillators of one FMU coupled by their springs.
json two_oscillators(const std::string& fmu) {
  const json params = {{"m", 1}, {"k", 39.47841760435743}, {"d", 0.4}, {"k2", 1}, {"x0", 1}, {"v0", 0}};
  return {{"format", 1},
          {"subsystems", {{"a", {{"fmu", fmu}, {"parameters", params}, {"step", 0.01}}},
                          {"b", {{"fmu", fmu}, {"parameters", params}, {"step", 0.01}}}}},
          {"connections", {{{"from", "a.x"}, {"to", "b.x_other"}}, {{"from", "b.x"}, {"to", "a.x_other"}}}},
          {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.01}, {"start", 0}, {"end", 0.1}}}};
}

double oscillator_error(const Table& t) {
  const double k = 39.47841760435743, d = 0.4;
  double e = 0.0;
  const auto& time = t["time"];
  const auto& x = t["osc.x"];
  for (std::size_t i = 0; i < time.size(); ++i) e = std::max(e, std::abs(x[i] - damped(time[i], 1.0, k, d, 1.0)));
  return e;
}

}  // namespace

TEST_CASE("fmu: damped oscillator as co-simulation and model-exchange FMU, FMI 2 and FMI 3, vs analytic") {
  const std::string m = kManifests + "fmu_oscillator.json";
  struct Case {
    std::string name;
    std::vector<std::string> sets;
    double bound;  // m, from the integration method (below)
  };
  // Co-simulation: the FMU integrates with RK4 at 1 ms inside each 10 ms step: error ~1e-9.
  // Model exchange with Stride's rk4 at 10 ms: (ω h)^4 ≈ 1.6e-5 per unit time scale.
  const std::vector<Case> cases = {
      {"FMI 2 CS", {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu"}, 1e-8},
      {"FMI 3 CS", {"/subsystems/osc/fmu=" + kFmus + "/oscillator3.fmu"}, 1e-8},
      {"FMI 2 ME + rk4", {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu", "/subsystems/osc/integrator=rk4"}, 2e-5},
      {"FMI 3 ME + rk4", {"/subsystems/osc/fmu=" + kFmus + "/oscillator3.fmu", "/subsystems/osc/integrator=rk4"}, 2e-5},
      {"FMI 2 ME + cvode",
       {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu",
        R"(/subsystems/osc/integrator={"plugin": "cvode", "parameters": {"rtol": 1e-10, "atol": 1e-12}})"},
       1e-7},
      {"FMI 2 ME + arkode (implicit)",
       {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu",
        R"(/subsystems/osc/integrator={"plugin": "arkode", "parameters": {"method": "implicit", "rtol": 1e-10, "atol": 1e-12}})"},
       1e-7},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    Scratch s;
    Outcome o = stride(s, "run", m, c.sets);
    REQUIRE(o.code == 0);
    CHECK(o.status() == "completed");
    REQUIRE(o.table.rows() == 201);
    const double e = oscillator_error(o.table);
    MESSAGE(c.name << ": largest |x - x_exact| over 2 s = " << e << " m");
    CHECK(e < c.bound);
    CHECK(s.leftovers() == 0);
  }
}

TEST_CASE("fmu: bouncing ball (model exchange): bounce times within 1e-6 s of the analytic ones") {
  const double g = 9.81, e = 0.8, h0 = 1.0;
  // t1 = sqrt(2 h0/g); after bounce k the ball leaves with e^k v1 and is back 2 e^k v1/g later.
  std::vector<double> exact;
  const double v1 = std::sqrt(2 * g * h0);
  double t = std::sqrt(2 * h0 / g);
  for (int k = 1; t < 3.0; ++k) {
    exact.push_back(t);
    t += 2 * std::pow(e, k) * v1 / g;
  }
  // RK4 integrates the parabola exactly; CVODE (BDF) to its tolerance. FMI 2 and FMI 3.
  struct Case {
    std::string fmu, integrator;
  };
  const std::vector<Case> cases = {{"bouncing_ball.fmu", "\"rk4\""},
                                   {"bouncing_ball.fmu", R"({"plugin": "cvode", "parameters": {"rtol": 1e-10, "atol": 1e-12}})"},
                                   {"bouncing_ball3.fmu", "\"rk4\""}};
  for (const auto& c : cases) {
    const std::string& file = c.fmu;
    const std::string& integrator = c.integrator;
    CAPTURE(file);
    CAPTURE(integrator);
    Scratch s;
    Outcome o = stride(s, "run", kManifests + "fmu_bouncing_ball.json",
                       {"/subsystems/ball/fmu=" + kFmus + "/" + file, "/subsystems/ball/integrator=" + integrator});
    REQUIRE(o.code == 0);
    const json times = o.summary["subsystems"]["ball"]["report"]["state_event_times"];
    REQUIRE(times.size() == exact.size());
    double worst = 0.0;
    for (std::size_t i = 0; i < exact.size(); ++i) worst = std::max(worst, std::abs(times[i].get<double>() - exact[i]));
    MESSAGE(file << " + " << integrator << ": " << exact.size() << " bounces, largest |t - t_exact| = " << worst << " s");
    CHECK(worst < 1e-6);
    // The ball never goes through the ground.
    for (double h : o.table["ball.h"]) CHECK(h > -1e-6);
  }
}

TEST_CASE("fmu: two-mass problem with m2 as an FMU matches the all-plugin run") {
  // manifests/two_mass.json (both plugins) against manifests/fmu_two_mass.json (m2 as the
  // oscillator FMU, the same parameters, the same integrator): the same equations, so the
  // same numbers up to the Newton tolerance (finite-difference Jacobian for the FMU). The
  // summary shows the FMU was used: its statistics count FMU derivative evaluations. Rows
  // every 0.01 s inside the slow mass's 0.1-s steps: both its outputs at the interpolated states.
  Scratch a, b;
  const std::vector<std::string> common = {"/coupling/end=20"};
  Outcome plugins = stride(a, "run", STRIDE_SOURCE_DIR "/manifests/two_mass.json", common);
  std::vector<std::string> with_fmu = common;
  with_fmu.push_back("/subsystems/slow/fmu=" + kFmus + "/oscillator.fmu");
  Outcome fmu = stride(b, "run", STRIDE_SOURCE_DIR "/manifests/fmu_two_mass.json", with_fmu);
  REQUIRE(plugins.code == 0);
  REQUIRE(fmu.code == 0);
  std::size_t n = 0;
  const double dx1 = stride_test::largest_difference(fmu.table, "fast.x", plugins.table, "fast.x", &n);
  const double dx2 = stride_test::largest_difference(fmu.table, "slow.x", plugins.table, "slow.x");
  MESSAGE("largest |x1_fmu - x1_plugin| = " << dx1 << " m, |x2_fmu - x2_plugin| = " << dx2 << " m over " << n << " rows");
  CHECK(n == 2001);
  CHECK(contains(fmu.summary["subsystems"]["slow"]["plugin"].get<std::string>(), "oscillator.fmu + trapezoidal"));
  CHECK(fmu.summary["subsystems"]["slow"]["statistics"]["rhs_evaluations"].get<long>() > 0);
  // results.csv reads back exactly; the runs differ by round-off at most.
  CHECK(dx1 < 1e-9);
  CHECK(dx2 < 1e-9);
}

// Two gain FMUs (y = k u, outputs that depend on their inputs) feeding each other: no scheme
// solves the loop within a step; under Jacobi every connection reads the previous communication
// point, so the run is the delayed recursion y1' = k1 y2, y2' = k2 (y1 + 1) (the + 1 is the
// connection's offset), row by row.
TEST_CASE("fmu: feedthrough FMUs in a loop run under Jacobi as the one-step-delayed loop") {
  Scratch s;
  const std::vector<std::string> sets = {
      "/subsystems/g1/fmu=" + kFmus + "/gain.fmu", "/subsystems/g2/fmu=" + kFmus + "/gain.fmu",
      "/subsystems/g1/parameters={\"k\": 0.5}", "/connections/0/transformation={\"factor\": 1, \"offset\": 1}"};
  Outcome v = stride(s, "validate", kManifests + "fmu_gain_loop.json", sets);
  CHECK(v.code == 0);
  CHECK(contains(v.out, "warning: feedthrough loop g1.y -> g2.y -> g1.y: the \"jacobi\" scheme breaks it"));
  Outcome o = stride(s, "run", kManifests + "fmu_gain_loop.json", sets);
  REQUIRE(o.code == 0);
  const auto& y1 = o.table["g1.y"];
  const auto& y2 = o.table["g2.y"];
  REQUIRE(y1.size() == 11);
  for (std::size_t n = 0; n + 1 < y1.size(); ++n) {
    CHECK(y1[n + 1] == doctest::Approx(0.5 * y2[n]).epsilon(1e-12));
    CHECK(y2[n + 1] == doctest::Approx(0.5 * (y1[n] + 1)).epsilon(1e-12));
  }
  CHECK(std::abs(y2.back() - 2.0 / 3.0) < 1e-3);  // toward the loop's fixed point (1/3, 2/3)
  CHECK(s.leftovers() == 0);
}

TEST_CASE("fmu: plugins describe lists an FMU's parameters and ports; parameters are checked like a plugin's") {
  Scratch s;
  const std::string cmd = std::string("'") + STRIDE_EXE + "' plugins describe '" + kFmus + "/oscillator.fmu' --json >'" +
                          (s.dir / "d.json").string() + "'";
  REQUIRE(std::system(cmd.c_str()) == 0);
  const json d = json::parse(slurp(s.dir / "d.json"));
  CHECK(d["version"] == "FMI 2.0");
  std::vector<std::string> params, ports;
  for (const auto& p : d["parameters"]) params.push_back(p["name"]);
  for (const auto& p : d["ports"]) ports.push_back(p["name"].get<std::string>() + ":" + p["direction"].get<std::string>() + ":" + p["unit"].get<std::string>());
  // Parameters, and the start value of the input (used while it is not connected).
  CHECK(params == std::vector<std::string>{"m", "k", "d", "k2", "x0", "v0", "x_other", "h_internal"});
  CHECK(ports == std::vector<std::string>{"x_other:input:m", "x:output:m", "v:output:m/s"});
  CHECK(d["parameters"][0]["min"] == 1e-9);
  // A broken FMU is refused by describe too.
  const std::string broken = std::string("'") + STRIDE_EXE + "' plugins describe '" + kBroken + "/not_a_zip.fmu' 2>'" +
                             (s.dir / "e.txt").string() + "'";
  const int st = std::system(broken.c_str());
  CHECK(WEXITSTATUS(st) == 2);
  CHECK(contains(slurp(s.dir / "e.txt"), "not_a_zip.fmu: not an FMU archive"));
  // --set on an FMU parameter, out of the FMU's declared range.
  Outcome o = stride(s, "validate", kManifests + "fmu_oscillator.json",
                     {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu", "/subsystems/osc/parameters/m=-1", "/subsystems/osc/parameters/q=1"});
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/subsystems/osc/parameters/m: expected a real number in [1e-09, inf] (kg), found -1"));
  CHECK(contains(o.err, "/subsystems/osc/parameters/q"));
  // Units are checked at connections: x (m) cannot feed an input in m/s... of another FMU.
  Outcome u = stride(s, "validate", kManifests + "fmu_oscillator.json",
                     {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu", "/connections/0/from=osc.v"});
  CHECK(u.code == 2);
  CHECK(contains(u.err, "unit mismatch: osc.v is in m/s, osc.x_other expects m"));
}

TEST_CASE("fmu: broken FMUs are refused before anything runs, with the file, the pointer and the reason") {
  ::setenv("STRIDE_FMU_PROBE_TIMEOUT", "1", 1);  // the hanging instantiation is given up after 1 s
  struct Case {
    std::string file, reason;
  };
  const std::vector<Case> cases = {
      {kBroken + "/scheduled3.fmu",
       "the FMU is for scheduled execution only (<ScheduledExecution>, its model partitions "
       "activated by clocks); Stride runs co-simulation and model-exchange FMUs"},
      {kBroken + "/does_not_exist.fmu", "no such file"},
      {kBroken + "/not_a_zip.fmu", "not an FMU archive (a zip file expected)"},
      {kBroken + "/no_model_description.fmu", "the archive has no modelDescription.xml"},
      {kBroken + "/bad_xml.fmu", "malformed XML"},
      // An FMI 2 description labelled 1.0: read as FMI 1.0, which names its binary on the root.
      {kBroken + "/fmi1.fmu", "modelDescription.xml: <fmiModelDescription> has no modelIdentifier"},
      {kBroken + "/fmi4.fmu", "unsupported FMI version \"4.0\"; Stride reads FMI 1.0, 2.0 and 3.0"},
      {kBroken + "/no_binary.fmu", "no binary for this platform: binaries/linux64/oscillator.so is missing"},
      {kBroken + "/missing_function.fmu", "the co-simulation binary lacks required function fmi2DoStep"},
      {kBroken + "/null_instance.fmu", "fmi2Instantiate returned NULL"},
      {kBroken + "/crash_instance.fmu",
       "fmi2Instantiate crashed with SIGSEGV (tried in a separate process before the run)"},
      {kBroken + "/hang_instance.fmu",
       "fmi2Instantiate did not return within 1 s (tried in a separate process before the run)"},
      {kBroken + "/duplicate_variable.fmu", "modelDescription.xml: variable 9 \"k\": declared twice"},
      {kBroken + "/unknown_type.fmu", "modelDescription.xml: variable 1 \"x\": unknown declaredType \"Distance\""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    Scratch s;
    for (const std::string verb : {"validate", "run"}) {
      Outcome o = stride(s, verb, kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + c.file});
      CHECK(o.code == 2);
      CHECK(contains(o.err, "fmu_oscillator.json: /subsystems/osc/fmu: "));
      CHECK(contains(o.err, c.file));
      CHECK(contains(o.err, c.reason));
      CHECK(!fs::exists(s.dir / "out" / "results.csv"));
      CHECK(s.leftovers() == 0);
    }
  }
  // The FMU's own log message reaches the report.
  Scratch s;
  Outcome o = stride(s, "validate", kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/null_instance.fmu"});
  CHECK(contains(o.err, "no licence for this model"));
  // A malformed modelDescription.xml is reported with its line.
  o = stride(s, "validate", kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/bad_xml.fmu"});
  CHECK(contains(o.err, "modelDescription.xml: line "));
}

TEST_CASE("fmu: fmi2Error from a step and a crash inside doStep end the run as failed, rows kept, folders removed") {
  {
    Scratch s;
    Outcome o = stride(s, "run", kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/step_error.fmu"});
    CHECK(o.code == 1);
    CHECK(o.status() == "failed");
    CHECK(contains(o.message(), "fmi2DoStep returned fmi2Error at t = 0.5;"));
    CHECK(contains(o.message(), "the spring broke at t = 0.5"));  // the FMU's log message
    // The FMU's log goes where plugins' messages go: log.txt, and stderr from "warning" up.
    CHECK(contains(o.err, "osc"));
    CHECK(contains(o.err, "error [model]: solver failure: the spring broke"));
    const std::string log = slurp(s.dir / "out" / "log.txt");
    CHECK(contains(log, "[error] osc"));
    CHECK(contains(log, "error [model]: solver failure: the spring broke"));
    CHECK(o.summary["subsystems"]["osc"]["messages"]["errors"].get<long>() >= 1);
    CHECK(o.table.rows() == 51);  // t = 0 .. 0.5, the step from 0.5 failed
    CHECK(s.leftovers() == 0);
  }
  {
    Scratch s;
    Outcome o = stride(s, "run", kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/step_crash.fmu"});
    CHECK(o.code == 1);
    CHECK(o.status() == "failed");
    CHECK(contains(o.message(), "SIGSEGV"));
    CHECK(o.table.rows() >= 40);
    CHECK(s.leftovers() == 0);
  }
}

TEST_CASE("fmu: fmi2Discard and FMI 3 early return shorten the step; the master continues from where the FMU stopped") {
  // The FMU accepts at most 4 ms per doStep and says fmi2Discard (FMI 3: returns early) for
  // the 10-ms steps asked: the run takes 3 doSteps per 10 ms and still matches the analytic
  // solution.
  for (const std::string fmu : {"discard.fmu", "discard3.fmu"}) {
    CAPTURE(fmu);
    Scratch s;
    Outcome o = stride(s, "run", kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/" + fmu});
    REQUIRE(o.code == 0);
    CHECK(o.summary["subsystems"]["osc"]["statistics"]["discarded_steps"].get<long>() == 400);
    CHECK(oscillator_error(o.table) < 1e-8);
  }
}

TEST_CASE("fmu: fmi3Error from fmi3DoStep ends the run as failed with the FMU's message") {
  Scratch s;
  Outcome o = stride(s, "run", kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/step_error3.fmu"});
  CHECK(o.code == 1);
  CHECK(o.status() == "failed");
  CHECK(contains(o.message(), "fmi3DoStep returned fmi3Error at t = 0.5;"));
  CHECK(contains(o.message(), "the spring broke"));
  CHECK(o.table.rows() == 51);
  CHECK(s.leftovers() == 0);
}

TEST_CASE("fmu: a sweep with FMUs leaves no unpacked folders, also when a run crashes") {
  Scratch s;
  const json spec = {{"format", 1},
                     {"manifest", kManifests + "fmu_oscillator.json"},
                     {"axes",
                      {{{"name", "fmu"},
                        {"values",
                         {{{"label", "good"}, {"set", {{"/subsystems/osc/fmu", kFmus + "/oscillator.fmu"}}}},
                          {{"label", "crash"}, {"set", {{"/subsystems/osc/fmu", kBroken + "/step_crash.fmu"}}}}}}},
                       {{"name", "h"}, {"pointers", {"/coupling/macro_step", "/subsystems/osc/step"}}, {"values", {0.01, 0.02}}}}},
                     {"step_axis", "h"},
                     {"output", (s.dir / "sweep").string()}};
  std::ofstream(s.dir / "sweep.json") << spec.dump(2);
  const std::string cmd = "TMPDIR='" + s.tmp.string() + "' '" + STRIDE_EXE + "' sweep '" + (s.dir / "sweep.json").string() +
                          "' --jobs 2 >'" + (s.dir / "o.txt").string() + "' 2>&1";
  const int st = std::system(cmd.c_str());
  INFO(slurp(s.dir / "o.txt"));
  CHECK(WIFEXITED(st));
  const std::string table = slurp(s.dir / "sweep" / "sweep.csv");
  CHECK(contains(table, "completed"));
  CHECK(contains(table, "failed"));
  CHECK(s.leftovers() == 0);
}

TEST_CASE("fmu: units that differ by a factor are converted (at the connection, or at an FMU's own unit definitions)") {
  // osc.x is in m, g.u and g.y in mm; Gauss–Seidel in the order osc, g, so g reads the x of the
  // same communication point: g.y = k · 1000 · x.
  Scratch s;
  const std::vector<std::string> sets = {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu",
                                         "/subsystems/g/fmu=" + kBroken + "/gain_mm.fmu"};
  Outcome v = stride(s, "validate", kManifests + "fmu_unit_conversion.json", sets);
  CHECK(v.code == 0);
  CHECK(contains(v.out, "unit conversion: osc.x -> g.u: m to mm (x 1000)"));
  Outcome o = stride(s, "run", kManifests + "fmu_unit_conversion.json", sets);
  REQUIRE(o.code == 0);
  const auto& x = o.table["osc.x"];
  const auto& y = o.table["g.y"];
  REQUIRE(x.size() == 101);
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(y[i] - 2000.0 * x[i]));
  MESSAGE("largest |g.y - 2000 osc.x| = " << worst << " mm");
  CHECK(worst < 1e-7);  // round-off of the unit conversion at 2000 mm
  // Units the FMU defines itself from SI base units (in and ft): its ports are offered in m
  // and converted at its boundary. The FMU computes y[ft] = k u[in], so y = k x (0.3048/0.0254)
  // = 12 k x in m: the two conversions do not cancel, a wrong direction would show.
  Outcome d = stride(s, "validate", kManifests + "fmu_unit_conversion.json",
                     {sets[0], "/subsystems/g/fmu=" + kBroken + "/gain_in_ft.fmu"});
  CHECK(d.code == 0);
  CHECK(!contains(d.out, "unit conversion"));  // m to m at the connection
  Outcome f = stride(s, "run", kManifests + "fmu_unit_conversion.json", {sets[0], "/subsystems/g/fmu=" + kBroken + "/gain_in_ft.fmu"});
  REQUIRE(f.code == 0);
  for (std::size_t i = 0; i < x.size(); ++i) CHECK(f.table["g.y"][i] == doctest::Approx(24.0 * f.table["osc.x"][i]).epsilon(1e-10));
  // Units that are not the same quantity stay an error.
  Outcome bad = stride(s, "validate", kManifests + "fmu_unit_conversion.json",
                       {sets[0], sets[1], "/connections/1/from=osc.v"});
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "unit mismatch: osc.v is in m/s, g.u expects mm"));
}

TEST_CASE("fmu: a doStep that never returns is stopped after the grace period; the unpacked folder is removed") {
  Scratch s;
  const std::string fmu = "/subsystems/osc/fmu=" + kBroken + "/step_hang.fmu";
  const std::string out = (s.dir / "out").string(), manifest = kManifests + "fmu_oscillator.json";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("TMPDIR", s.tmp.c_str(), 1);
    const int null = open("/dev/null", O_WRONLY);
    dup2(null, 1);
    dup2(null, 2);
    execl(STRIDE_EXE, STRIDE_EXE, "run", manifest.c_str(), "--quiet", "--grace", "0.5", "--out", out.c_str(), "--set",
          fmu.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait for the hang (the FMU marks it with $TMPDIR/hanging), then Ctrl-C.
  for (int i = 0; i < 1000 && !fs::exists(s.tmp / "hanging"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(fs::exists(s.tmp / "hanging"));
  CHECK(s.leftovers() == 1);  // unpacked by the supervising process, in use by the run
  kill(pid, SIGINT);
  int st = 0;
  REQUIRE(waitpid(pid, &st, 0) == pid);
  CHECK(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 1);
  const json sum = json::parse(slurp(s.dir / "out" / "summary.json"));
  CHECK(sum["status"] == "interrupted");
  CHECK(contains(sum["message"].get<std::string>(), "grace period"));
  CHECK(contains(sum["message"].get<std::string>(), "subsystem \"osc\""));
  CHECK(stride_test::read_csv(s.dir / "out" / "results.csv").rows() == 51);
  CHECK(s.leftovers() == 0);
}

TEST_CASE("fmu: an FMU that cannot change its step size runs on a fixed grid and refuses a shortened step") {
  Scratch s;
  const std::string fmu = "/subsystems/osc/fmu=" + kBroken + "/fixed_step.fmu";
  // 10 ms steps on a 10 ms macro grid: the same step throughout.
  Outcome ok = stride(s, "run", kManifests + "fmu_oscillator.json", {fmu});
  CHECK(ok.code == 0);
  CHECK(oscillator_error(ok.table) < 1e-8);
  // 30 ms steps in 50 ms macro steps: the second step would be 20 ms; validate and run refuse
  // it before anything runs. So do a span that is no multiple of the step and an adaptive step.
  for (const std::string verb : {"validate", "run"}) {
    Outcome bad = stride(s, verb, kManifests + "fmu_oscillator.json",
                         {fmu, "/subsystems/osc/step=0.03", "/coupling/macro_step=0.05", "/record/interval=0.05"});
    CHECK(bad.code == 2);
    CHECK(contains(bad.err, "/subsystems/osc/step: the FMU cannot change its communication step size "
                            "(canHandleVariableCommunicationStepSize=\"false\"), but steps of 0.03 s in macro steps of "
                            "0.05 s end with a step of 0.02 s"));
  }
  Outcome end = stride(s, "validate", kManifests + "fmu_oscillator.json", {fmu, "/coupling/end=2.005"});
  CHECK(end.code == 2);
  CHECK(contains(end.err, "/coupling/end: the FMU cannot change its communication step size"));
}

TEST_CASE("fmu: Integer and Boolean variables are numbers: an Integer parameter, a Boolean input, an Integer output") {
  // h.sign = sign(x) (Integer output) switches g (Boolean input): g.y = x > 0 ? n k x : 0 with
  // n = 4 (Integer parameter), k = 2; g.n_out = 4 (Integer output) keeps h switched on.
  // Gauss–Seidel in the order osc, h, g: each reads the values of the same point.
  Scratch s;
  const std::vector<std::string> sets = {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu",
                                         "/subsystems/h/fmu=" + kFmus + "/switched_gain.fmu",
                                         "/subsystems/g/fmu=" + kFmus + "/switched_gain.fmu"};
  Outcome o = stride(s, "run", kManifests + "fmu_switched_gain.json", sets);
  REQUIRE(o.code == 0);
  const auto &x = o.table["osc.x"], &hs = o.table["h.sign"], &y = o.table["g.y"], &gs = o.table["g.sign"];
  REQUIRE(x.size() == 101);
  int on = 0, off = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    CAPTURE(i);
    const double sign = x[i] > 0 ? 1.0 : x[i] < 0 ? -1.0 : 0.0;
    CHECK(hs[i] == sign);
    CHECK(gs[i] == sign);
    (sign > 0 ? on : off) += 1;
    CHECK(y[i] == doctest::Approx(sign > 0 ? 8.0 * x[i] : 0.0).epsilon(1e-9));
  }
  CHECK(on > 10);
  CHECK(off > 10);
  // The Integer parameter's type and declared range are checked.
  for (const std::string value : {"2.5", "11"}) {
    Outcome bad = stride(s, "validate", kManifests + "fmu_switched_gain.json", {sets[0], sets[1], sets[2], "/subsystems/g/parameters/n=" + value});
    CHECK(bad.code == 2);
    CHECK(contains(bad.err, "/subsystems/g/parameters/n: expected an integer in [0, 10], found " + value));
  }
}

TEST_CASE("fmu: an FMI 3 array output is a port vector") {
  // oscillator3's "state" is a Float64 array [x, v]: one port of two elements, recorded as
  // state.0 and state.1, equal to the scalar outputs x and v.
  Scratch s;
  for (const std::string integrator : {"", "rk4"}) {
    CAPTURE(integrator);
    std::vector<std::string> sets = {"/subsystems/osc/fmu=" + kFmus + "/oscillator3.fmu",
                                     R"(/record/variables=["osc.x", "osc.v", "osc.state"])"};
    if (!integrator.empty()) sets.push_back("/subsystems/osc/integrator=" + integrator);
    Outcome o = stride(s, "run", kManifests + "fmu_oscillator.json", sets);
    REQUIRE(o.code == 0);
    REQUIRE(o.table.rows() == 201);
    CHECK(o.table["osc.state.0"] == o.table["osc.x"]);
    CHECK(o.table["osc.state.1"] == o.table["osc.v"]);
  }
}

TEST_CASE("fmu: FMI 3 arrays sized by a structural parameter, Int32 and Boolean arrays, array and String parameters") {
  // vector_gain3: y = gains .* u (n = 3 from a structural parameter), count_true = number of
  // true flags, counts_twice = 2 counts, flags_not = not flags, label_length = strlen(label).
  Scratch s;
  const std::vector<std::string> sets = {"/subsystems/osc/fmu=" + kFmus + "/oscillator.fmu",
                                         "/subsystems/s/fmu=" + kFmus + "/switched_gain.fmu",
                                         "/subsystems/a/fmu=" + kFmus + "/vector_gain3.fmu"};
  Outcome o = stride(s, "run", kManifests + "fmu_vector_gain.json", sets);
  REQUIRE(o.code == 0);
  const auto& x = o.table["osc.x"];
  const auto& sign = o.table["s.sign"];
  REQUIRE(x.size() == 101);
  int on = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    CAPTURE(i);
    CHECK(o.table["a.y.0"][i] == doctest::Approx(x[i]).epsilon(1e-9));
    CHECK(o.table["a.y.1"][i] == doctest::Approx(-2.0 * x[i]).epsilon(1e-9));
    CHECK(o.table["a.y.2"][i] == doctest::Approx(0.5 * x[i]).epsilon(1e-9));
    const bool flag = sign[i] > 0.5;
    on += flag;
    CHECK(o.table["a.count_true"][i] == (flag ? 2.0 : 0.0));
    CHECK(o.table["a.counts_twice.0"][i] == 6.0);  // 2 n_out, n = 3
    CHECK(o.table["a.counts_twice.1"][i] == 2.0 * sign[i]);
    CHECK(o.table["a.flags_not.0"][i] == (flag ? 0.0 : 1.0));
    CHECK(o.table["a.flags_not.1"][i] == (flag ? 0.0 : 1.0));
    CHECK(o.table["a.label_length"][i] == 6.0);  // "stride"
  }
  CHECK(on > 10);
  CHECK(on < 90);
  // describe: the array parameter is a list of 3, the String parameter has its start value, the
  // structural parameter is offered (it sizes the arrays).
  Outcome d = stride(s, "plugins describe --json", kFmus + "/vector_gain3.fmu", {});
  REQUIRE(d.code == 0);
  const json j = json::parse(d.out);
  const std::string text = j.dump();
  CHECK(contains(text, "\"gains\""));
  CHECK(contains(text, "3 values"));
  CHECK(contains(text, "\"none\""));
  CHECK(contains(text, "\"name\":\"n\""));
  CHECK(contains(text, "structural parameter: sizes arrays"));
  // An array parameter of the wrong length is refused with its pointer.
  Outcome bad = stride(s, "validate", kManifests + "fmu_vector_gain.json", {sets[0], sets[1], sets[2], "/subsystems/a/parameters/gains=[1, 2]"});
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "/subsystems/a/parameters/gains: expected a list of 3 values (the FMU's array), found 2"));
}

TEST_CASE("fmu: time events (model exchange): steps end at the FMU's event times") {
  // dx/dt = ±1 switched every 0.125 s, with 10-ms steps: the events fall inside steps, so the
  // triangle wave is exact only when each step is cut at the event.
  Scratch s;
  Outcome o = stride(s, "run", kManifests + "fmu_square_wave.json", {"/subsystems/wave/fmu=" + kFmus + "/square_wave.fmu"});
  REQUIRE(o.code == 0);
  const auto &t = o.table["time"], &x = o.table["wave.x"];
  REQUIRE(t.size() == 101);
  const double T = 0.25;
  double worst = 0.0;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const double p = std::fmod(t[i] + 1e-12, T);
    worst = std::max(worst, std::abs(x[i] - (p < T / 2 ? p : T - p)));
  }
  MESSAGE("largest |x - x_exact| = " << worst);
  CHECK(worst < 1e-9);
  CHECK(o.summary["subsystems"]["wave"]["statistics"]["time_events"].get<long>() == 8);
}

TEST_CASE("fmu: hostile FMUs are refused before anything of theirs runs, with the reason (exit 2, nothing left behind)") {
  struct Case {
    std::string file, reason, shell;
  };
  const std::vector<Case> cases = {
      {"identifier_dotdot.fmu", "modelIdentifier=\"../../../../../../lib/x86_64-linux-gnu/libm\" is not a plain file name", ""},
      {"identifier_absolute.fmu", "modelIdentifier=\"/lib/x86_64-linux-gnu/libm\" is not a plain file name", ""},
      {"symlink_binary.fmu", "archive entry \"binaries/linux64/oscillator.so\" is a symbolic link", ""},
      {"duplicate_vr3.fmu", "variable 13 \"h_internal\": valueReference=\"10\" is also that of variable \"x_other\"", ""},
      {"column_clash3.fmu", "variable \"state.1\" and element 1 of array \"state\" would both be recorded as column \"state.1\"", ""},
      // 2 MiB where at most 1 MiB is allowed; a 2-MiB entry under a file-size limit of 1 MiB
      // (SIGXFSZ would end the host: the write fails and is reported like a full disk).
      {"big_xml.fmu", "modelDescription.xml is 2.00311 MiB, more than the 1 MiB Stride reads (STRIDE_FMU_MAX_XML_MIB)",
       "export STRIDE_FMU_MAX_XML_MIB=1"},
      {"big_entry.fmu", "the archive unpacks to more than 1 MiB (STRIDE_FMU_MAX_UNPACKED_MIB)", "export STRIDE_FMU_MAX_UNPACKED_MIB=1"},
      {"big_entry.fmu", "archive entry \"blob.bin\" cannot be unpacked into ", "ulimit -f 2000"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.file);
    CAPTURE(c.shell);
    Scratch s;
    for (const std::string verb : {"validate", "run"}) {
      Outcome o = stride(s, verb, kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/" + c.file}, c.shell);
      CHECK(o.code == 2);
      CHECK(contains(o.err, "/subsystems/osc/fmu: " + kBroken + "/" + c.file));
      CHECK(contains(o.err, c.reason));
      if (c.shell.rfind("ulimit", 0) == 0) CHECK(contains(o.err, "File too large"));
      CHECK(!fs::exists(s.dir / "out" / "results.csv"));
      CHECK(s.leftovers() == 0);
    }
  }
}

TEST_CASE("fmu: canBeInstantiatedOnlyOncePerProcess is honoured; every instantiation is probed first") {
  // The FMU crashes on its second instantiation in a process (as one with global state may).
  Scratch s;
  const std::string two = write_manifest(s, "two.json", two_oscillators(kBroken + "/only_once.fmu"));
  for (const std::string verb : {"validate", "run"}) {
    Outcome o = stride(s, verb, two, {});
    CHECK(o.code == 2);
    CHECK(contains(o.err, "/subsystems/b/fmu: could not create: plugin '" + kBroken + "/only_once.fmu'"));
    CHECK(contains(o.err, "canBeInstantiatedOnlyOncePerProcess=\"true\" and subsystem \"a\" already has its instance"));
    CHECK(s.leftovers() == 0);
  }
  // One subsystem of it runs.
  Outcome one = stride(s, "run", kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/only_once.fmu"});
  CHECK(one.code == 0);
  CHECK(oscillator_error(one.table) < 1e-8);
  // An FMU that does not declare it but crashes on the second instance: the probe of the second
  // instantiation (a child process holding the first instance) finds it.
  const std::string other = write_manifest(s, "other.json", two_oscillators(kBroken + "/crash_second.fmu"));
  Outcome o = stride(s, "validate", other, {});
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/subsystems/b/fmu: could not create: plugin '" + kBroken + "/crash_second.fmu'"));
  CHECK(contains(o.err, "fmi2Instantiate crashed with SIGSEGV (tried in a separate process before the run)"));
  CHECK(s.leftovers() == 0);
}

TEST_CASE("fmu: a discarded step without progress, or beyond the step, is a failure naming it") {
  // fmi2Discard without integrating, fmi2LastSuccessfulTime claiming the whole step.
  Scratch s;
  Outcome o = stride(s, "run", kManifests + "fmu_oscillator.json", {"/subsystems/osc/fmu=" + kBroken + "/discard_no_progress.fmu"});
  CHECK(o.code == 1);
  CHECK(o.status() == "failed");
  CHECK(contains(o.message(), "fmi2DoStep discarded the step from t = 0 to 0.01 and reports fmi2LastSuccessfulTime = 0.01, "
                              "not inside the step"));
  CHECK(o.table.rows() == 1);
  CHECK(s.leftovers() == 0);
}

TEST_CASE("fmu: an FMU's log messages are cut like a plugin's (a 10 MB message)") {
  Scratch s;
  Outcome o = stride(s, "run", kManifests + "fmu_oscillator.json",
                     {"/subsystems/osc/fmu=" + kBroken + "/log_flood3.fmu", "/log={\"stderr_level\": \"warning\"}"});
  REQUIRE(o.code == 0);
  const std::string log = slurp(s.dir / "out" / "log.txt");
  CHECK(contains(log, std::string(100, 'w') + "..."));
  CHECK(log.size() < 4000);
  CHECK(o.err.size() < 4000);
  CHECK(contains(o.err, "www..."));
  CHECK(fs::file_size(s.dir / "out" / "summary.json") < 20000);
}

namespace {

// One FMU alone, stepped with h (macro step and record interval h too), until `end`.
json alone(const std::string& fmu, double h, double end, const json& parameters, const std::string& integrator) {
  json sub = {{"fmu", fmu}, {"parameters", parameters}, {"step", h}};
  if (!integrator.empty()) sub["integrator"] = integrator;
  return {{"format", 1},
          {"subsystems", {{"s", sub}}},
          {"connections", json::array()},
          {"coupling", {{"scheme", "jacobi"}, {"macro_step", h}, {"start", 0}, {"end", end}}},
          {"record", {{"interval", h}}}};
}

// Many FMUs side by side, each with its own step, meeting only at the end (one communication
// step over the whole run): independent runs in one process, compared at `end`.
struct Alone {
  std::string name, fmu, integrator;
  double h;
  json parameters;
};
json side_by_side(const std::vector<Alone>& subs, double end) {
  json m = {{"format", 1},
            {"subsystems", json::object()},
            {"connections", json::array()},
            {"coupling", {{"scheme", "jacobi"}, {"macro_step", end}, {"start", 0}, {"end", end}}},
            {"record", {{"interval", end}}}};
  for (const auto& a : subs) {
    json sub = {{"fmu", a.fmu}, {"parameters", a.parameters}, {"step", a.h}};
    if (!a.integrator.empty()) sub["integrator"] = a.integrator;
    m["subsystems"][a.name] = sub;
  }
  return m;
}

// The stair's closed form at t: counter = k + 1, settled = k, x = P k (k + 1) / 2 + (k + 1)(t - k P)
// with k = floor(t / P) events so far (an event at t itself counted: rows show values after it).
double stair_x(double t, double period) {
  const double k = std::floor(t / period + 1e-9);
  return period * k * (k + 1) / 2 + (k + 1) * (t - k * period);
}
struct StairError {
  double x = 0.0;
  int counter = 0;  // rows with a wrong counter or settled
};
StairError stair_error(const Table& t, const std::string& s, double period) {
  StairError e;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const double time = t["time"][i], k = std::floor(time / period + 1e-9), x = stair_x(time, period);
    e.x = std::max(e.x, std::abs(t[s + ".x"][i] - x) / std::max(1.0, x));
    e.counter += t[s + ".counter"][i] != k + 1 || t[s + ".settled"][i] != k;
  }
  return e;
}

}  // namespace

TEST_CASE("fmu: no time event is lost: at communication points up to round-off, between them, every interface and step size") {
  // The stair steps its counter at t = 1, 2, ...; with steps of 0.3 s the event at t = 3 s
  // falls on 10 * 0.3 up to round-off. Each event takes three rounds of event iteration (the
  // FMU refuses continuous-time mode before). 9 events in 9.5 s for every step size, so at
  // 9.5 s: counter 10, settled 9, x = 45 + 10 * 0.5.
  const json never_ends = {{"last", 1000}};
  std::vector<Alone> subs;
  for (const std::string fmu : {"stair", "stair3"})
    for (const std::string integrator : {"rk4", "forward_euler", ""})
      for (const double h : {0.3, 0.6, 0.35, 0.03, 0.1, 0.2, 0.25, 0.5})
        subs.push_back({fmu + "_" + (integrator.empty() ? "cs" : integrator) + "_" + std::to_string(int(h * 100)),
                        kBroken + "/" + fmu + ".fmu", integrator, h, never_ends});
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "stairs.json", side_by_side(subs, 9.5)), {});
  REQUIRE(o.code == 0);
  REQUIRE(o.table.rows() == 2);
  for (const auto& a : subs) {
    CAPTURE(a.name);
    CHECK(o.table[a.name + ".counter"][1] == 10);
    CHECK(o.table[a.name + ".settled"][1] == 9);
    CHECK(o.table[a.name + ".x"][1] == doctest::Approx(50.0).epsilon(1e-13));
    if (!a.integrator.empty()) CHECK(o.summary["subsystems"][a.name]["statistics"]["time_events"] == 9);
  }
  // Every row of a run with 0.3-s steps: the counter steps at the event, x bends there.
  for (const std::string integrator : {"rk4", ""}) {
    CAPTURE(integrator);
    Scratch r;
    Outcome one = stride(r, "run", write_manifest(r, "stair.json", alone(kBroken + "/stair3.fmu", 0.3, 9.5, never_ends, integrator)), {});
    REQUIRE(one.code == 0);
    const StairError e = stair_error(one.table, "s", 1.0);
    CHECK(e.counter == 0);
    CHECK(e.x < 1e-11);
  }
}

TEST_CASE("fmu: no time event is lost with random step sizes and event periods") {
  std::mt19937 random(20240611);
  std::uniform_real_distribution<double> step(0.005, 0.8), period(0.05, 1.5);
  std::vector<Alone> subs;
  std::vector<double> periods;
  for (int k = 0; k < 36; ++k) {
    const double h = step(random), p = period(random);
    periods.push_back(p);
    subs.push_back({"s" + std::to_string(k), kBroken + (k % 2 ? "/stair3.fmu" : "/stair.fmu"), k % 3 == 2 ? "" : "rk4", h,
                    {{"last", 1000}, {"period", p}}});
  }
  for (int k = 36; k < 48; ++k) {  // FMI 3 co-simulation with event mode: every event handled by Stride
    const double h = step(random), p = period(random);
    periods.push_back(p);
    subs.push_back({"s" + std::to_string(k), kBroken + "/stair3_events.fmu", "", h, {{"last", 1000}, {"period", p}}});
  }
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "stairs.json", side_by_side(subs, 9.5)), {});
  REQUIRE(o.code == 0);
  for (std::size_t k = 0; k < subs.size(); ++k) {
    const auto& a = subs[k];
    CAPTURE(a.h);
    CAPTURE(periods[k]);
    CAPTURE(a.fmu);
    CAPTURE(a.integrator);
    const double events = std::floor(9.5 / periods[k] + 1e-9);
    CHECK(o.table[a.name + ".counter"][1] == events + 1);
    CHECK(o.table[a.name + ".settled"][1] == events);
    CHECK(o.table[a.name + ".x"][1] == doctest::Approx(stair_x(9.5, periods[k])).epsilon(1e-11));  // 12 digits in results.csv
    if (!a.integrator.empty()) CHECK(o.summary["subsystems"][a.name]["statistics"]["time_events"] == events);
    if (contains(a.fmu, "events")) CHECK(o.summary["subsystems"][a.name]["statistics"]["events"] == events);
  }
}

TEST_CASE("fmu: state events located to 1e-10 s, and time events the FMU schedules only after them, with random steps") {
  // The ball's lamp lights at each bounce (state event) and goes out `flash` s later (a time
  // event scheduled in that event only): the FMU is asked for its next event after every event.
  const double g = 9.81, e = 0.8, h0 = 1.0, flash = 0.1, end = 3.0;
  std::vector<double> bounces;
  const double v1 = std::sqrt(2 * g * h0);
  for (double t = std::sqrt(2 * h0 / g), k = 1; t < end; t += 2 * std::pow(e, k) * v1 / g, ++k) bounces.push_back(t);
  std::size_t flashes = 0;
  for (double b : bounces) flashes += b + flash <= end;
  std::mt19937 random(7);
  std::uniform_real_distribution<double> step(0.003, 0.2);
  std::vector<Alone> subs;
  for (int k = 0; k < 16; ++k)
    subs.push_back({"b" + std::to_string(k), kBroken + (k % 2 ? "/ball3.fmu" : "/ball.fmu"), "rk4", k ? step(random) : 0.01,
                    json::object()});
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "balls.json", side_by_side(subs, end)), {});
  REQUIRE(o.code == 0);
  for (const auto& a : subs) {
    CAPTURE(a.h);
    CAPTURE(a.fmu);
    const json& report = o.summary["subsystems"][a.name]["report"];
    REQUIRE(report["state_event_times"].size() == bounces.size());
    double worst = 0.0;
    for (std::size_t i = 0; i < bounces.size(); ++i) worst = std::max(worst, std::abs(report["state_event_times"][i].get<double>() - bounces[i]));
    CHECK(worst < 1e-10);
    CHECK(o.summary["subsystems"][a.name]["statistics"]["time_events"] == flashes);
    CHECK(o.table[a.name + ".flashes"][1] == double(flashes));
    CHECK(o.table[a.name + ".bounces"][1] == double(bounces.size()));
  }
  // Every row of one run: the lamp is on from each bounce for `flash` seconds.
  Scratch r;
  Outcome one = stride(r, "run", write_manifest(r, "ball.json", alone(kBroken + "/ball3.fmu", 0.01, end, json::object(), "rk4")), {});
  REQUIRE(one.code == 0);
  int wrong = 0;
  for (std::size_t i = 0; i < one.table.rows(); ++i) {
    const double t = one.table["time"][i];
    bool on = false, near = false;
    double bounced = 0, flashed = 0;
    for (double b : bounces) {
      on = on || (t >= b && t < b + flash);
      near = near || std::abs(t - b) < 1e-9 || std::abs(t - b - flash) < 1e-9;
      bounced += t >= b, flashed += t >= b + flash;
    }
    if (!near)
      wrong += one.table["s.lamp"][i] != (on ? 1.0 : 0.0) || one.table["s.bounces"][i] != bounced || one.table["s.flashes"][i] != flashed;
  }
  CHECK(wrong == 0);
}

namespace {

// dx/dt = A x + B u for A = -diag(a), constant u: x_i(t) = b_i u / a_i + (x0_i - b_i u / a_i) exp(-a_i t).
double decay(double t, double a, double b, double u, double x0) { return b * u / a + (x0 - b * u / a) * std::exp(-a * t); }

// A state-space FMU fed by u = 1: the counter of a stair FMU whose first step comes after the end.
json state_space(const std::string& integrator, const json& parameters) {
  json ss = {{"fmu", kBroken + "/state_space3.fmu"}, {"parameters", parameters}, {"step", 0.01}};
  if (!integrator.empty()) ss["integrator"] = integrator;
  return {{"format", 1},
          {"subsystems", {{"stair", {{"fmu", kBroken + "/stair3.fmu"}, {"parameters", {{"period", 100}}}, {"step", 0.01}}}, {"ss", ss}}},
          {"connections", {{{"from", "stair.counter"}, {"to", "ss.u"}}}},
          {"coupling", {{"scheme", "gauss_seidel"}, {"order", {"stair", "ss"}}, {"macro_step", 0.01}, {"start", 0}, {"end", 2}}},
          {"record", {{"interval", 0.05}, {"variables", {"ss.y"}}}}};
}

}  // namespace

TEST_CASE("fmu: FMI 3 arrays: array states and derivatives sized by structural parameters, set in the manifest; ports resized") {
  // Default n = 3: A = -diag(1, 2, 3), B = C = 1, D = 0.5, x0 = (1, 0, -1), u = 1.
  for (const std::string integrator : {"rk4", "cvode", ""}) {
    CAPTURE(integrator);
    Scratch s;
    Outcome o = stride(s, "run", write_manifest(s, "ss.json", state_space(integrator, json::object())), {});
    REQUIRE(o.code == 0);
    double worst = 0.0;
    for (std::size_t i = 0; i < o.table.rows(); ++i) {
      const double t = o.table["time"][i];
      const double y = decay(t, 1, 1, 1, 1) + decay(t, 2, 1, 1, 0) + decay(t, 3, 1, 1, -1) + 0.5;
      worst = std::max(worst, std::abs(o.table["ss.y"][i] - y));
    }
    MESSAGE("state space n = 3, " << (integrator.empty() ? "co-simulation" : integrator) << ": largest |y - y_exact| = " << worst);
    CHECK(worst < (integrator == "cvode" ? 1e-4 : 1e-8));
    if (!integrator.empty()) CHECK(o.summary["subsystems"]["ss"]["report"]["continuous_states"] == 3);
  }
  // n = 5 states, r = 2 outputs (y_2 = x_5): the ports and the state vector follow.
  const json five = {{"n", 5}, {"r", 2},
                     {"A", {-1, 0, 0, 0, 0, 0, -2, 0, 0, 0, 0, 0, -3, 0, 0, 0, 0, 0, -4, 0, 0, 0, 0, 0, -5}},
                     {"B", {1, 1, 1, 1, 1}}, {"C", {1, 1, 1, 1, 1, 0, 0, 0, 0, 1}}, {"D", {0.5, 0}},
                     {"x0", {1, 0, -1, 2, 0.5}}};
  for (const std::string integrator : {"rk4", ""}) {
    CAPTURE(integrator);
    Scratch s;
    json m = state_space(integrator, five);
    m["record"]["variables"] = {"ss.y"};
    Outcome o = stride(s, "run", write_manifest(s, "ss5.json", m), {});
    REQUIRE(o.code == 0);
    double worst = 0.0;
    const std::vector<double> x0 = {1, 0, -1, 2, 0.5};
    for (std::size_t i = 0; i < o.table.rows(); ++i) {
      const double t = o.table["time"][i];
      double y1 = 0.5;
      for (int k = 0; k < 5; ++k) y1 += decay(t, k + 1, 1, 1, x0[std::size_t(k)]);
      worst = std::max({worst, std::abs(o.table["ss.y.0"][i] - y1), std::abs(o.table["ss.y.1"][i] - decay(t, 5, 1, 1, 0.5))});
    }
    CHECK(worst < 1e-7);
    if (!integrator.empty()) CHECK(o.summary["subsystems"]["ss"]["report"]["continuous_states"] == 5);
  }
  // An array value of the wrong length for the structural parameter is refused with its pointer;
  // so is a size beyond the declared maximum.
  Scratch s;
  Outcome bad = stride(s, "validate", write_manifest(s, "bad.json", state_space("rk4", {{"n", 4}, {"B", {1, 2, 3}}})), {});
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "/subsystems/ss/parameters/B: expected a list of 4 values (the FMU's array), found 3"));
  Outcome big = stride(s, "validate", write_manifest(s, "big.json", state_space("rk4", {{"n", 9}})), {});
  CHECK(big.code == 2);
  CHECK(contains(big.err, "/subsystems/ss/parameters/n: expected an integer in [1, 8]"));
}

TEST_CASE("fmu: every numeric type through an FMU and back exactly, FMI 3 (arrays of every type) and FMI 2") {
  // Two instances crosswise: a.q_T -> b.u_T and b.q_T -> a.u_T, so a.y_T = b.p_T, b.y_T = a.p_T.
  // results.csv holds each double in its shortest round-trip text: every value reads back as
  // the very double the manifest or the FMU gave (0.1, 1/3, 1e-300, a 15-digit UInt64).
  struct Type {
    std::string name;
    json a, b;  // a's parameter (the FMU's start values), b's
  };
  const std::vector<Type> types3 = {
      {"f64", {1.5, -2.25}, {1.0 / 3.0, 1e-300}},
      {"f32", {0.5, -0.25}, {0.125, -1024.5}},
      {"i8", {-100, 7}, {-128, 127}},
      {"u8", {200, 3}, {0, 255}},
      {"i16", {-30000, 5}, {-32768, 32767}},
      {"u16", {60000, 9}, {0, 65535}},
      {"i32", {-2000000000, 11}, {-2147483648LL, 2147483647}},
      {"u32", {4000000000LL, 13}, {0, 4294967295LL}},
      {"i64", {-9007199254740992LL, 15}, {9007199254740992LL, -1}},
      {"u64", {9007199254740992ULL, 17}, {123456789012345ULL, 4503599627370496ULL}},
      {"bool", {1, 0}, {0, 1}},
      {"enum", {2, 3}, {3, 1}},
  };
  const std::vector<Type> types2 = {{"f64", {1.5}, {0.1}}, {"i32", {-2000000000}, {2147483647}}, {"bool", {true}, {false}}, {"enum", {2}, {3}}};
  for (const int version : {3, 2}) {
    CAPTURE(version);
    const auto& types = version == 3 ? types3 : types2;
    const std::string fmu = kBroken + (version == 3 ? "/types3.fmu" : "/types.fmu");
    json m = {{"format", 1},
              {"subsystems", {{"a", {{"fmu", fmu}, {"step", 0.1}}}, {"b", {{"fmu", fmu}, {"step", 0.1}, {"parameters", json::object()}}}}},
              {"connections", json::array()},
              {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.1}, {"start", 0}, {"end", 0.3}}}};
    for (const auto& t : types) {
      m["subsystems"]["b"]["parameters"]["p_" + t.name] = version == 3 ? t.b : t.b[0];
      m["connections"].push_back({{"from", "a.q_" + t.name}, {"to", "b.u_" + t.name}});
      m["connections"].push_back({{"from", "b.q_" + t.name}, {"to", "a.u_" + t.name}});
    }
    Scratch s;
    Outcome o = stride(s, "run", write_manifest(s, "types.json", m), {});
    REQUIRE(o.code == 0);
    // Values read back from results.csv's text equal the manifest's doubles bit for bit.
    const std::size_t last = o.table.rows() - 1;
    for (const auto& t : types)
      for (std::size_t e = 0; e < t.a.size(); ++e) {
        CAPTURE(t.name);
        CAPTURE(e);
        const std::string at = version == 3 ? "." + std::to_string(e) : "";
        auto number = [](const json& x) { return x.is_boolean() ? double(x.get<bool>()) : x.get<double>(); };
        CHECK(o.table["a.y_" + t.name + at][last] == number(t.b[e]));
        CHECK(o.table["b.y_" + t.name + at][last] == number(t.a[e]));
        CHECK(o.table["a.q_" + t.name + at][last] == number(t.a[e]));
      }
    // ... and the text is the shortest that does so: no exponent for a 15-digit integer, no
    // noise digits after 0.1.
    const std::string text = slurp(s.dir / "out" / "results.csv");
    if (version == 2) CHECK(contains(text, ",0.1"));
    CHECK_FALSE(contains(text, "0.1000"));
    if (version == 3) CHECK(contains(text, ",0.3333333333333333,"));
    if (version == 3) CHECK(contains(text, ",123456789012345,"));
    if (version == 3) CHECK(contains(text, ",1e-300"));
  }
}

TEST_CASE("fmu: numbers that do not fit are a clear error: a 64-bit output beyond 2^53, an input outside its integer type") {
  // Two types3 instances crosswise, but a.q_f64 feeds b.u_i8 (and a.q_i8 b.u_f64).
  Scratch s;
  json two = {{"format", 1},
              {"subsystems", {{"a", {{"fmu", kBroken + "/types3.fmu"}, {"step", 0.1}, {"parameters", json::object()}}},
                              {"b", {{"fmu", kBroken + "/types3.fmu"}, {"step", 0.1}}}}},
              {"connections", json::array()},
              {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.1}, {"start", 0}, {"end", 0.3}}},
              {"record", {{"interval", 0.1}, {"variables", {"a.q_i64", "b.y_i8"}}}}};
  for (const std::string t : {"f64", "f32", "i8", "u8", "i16", "u16", "i32", "u32", "i64", "u64", "bool", "enum"}) {
    const std::string to = t == "f64" ? "i8" : t == "i8" ? "f64" : t;
    two["connections"].push_back({{"from", "a.q_" + t}, {"to", "b.u_" + to}});
    two["connections"].push_back({{"from", "b.q_" + t}, {"to", "a.u_" + t}});
  }
  // 2^53 + 1 has no double.
  Outcome big = stride(s, "run", write_manifest(s, "big.json", two), {"/subsystems/a/parameters/p_i64=[9007199254740993, 0]"});
  CHECK(big.code == 1);
  CHECK(big.status() == "failed");
  CHECK(contains(big.message(), "output \"q_i64\" = 9007199254740993 cannot be represented exactly as a number on a port"));
  // 300 is no Int8; 126.6 rounds to 127, which is.
  Outcome wide = stride(s, "run", write_manifest(s, "wide.json", two), {"/subsystems/a/parameters/p_f64=[300, 0]"});
  CHECK(wide.code == 1);
  CHECK(contains(wide.message(), "input \"u_i8\" = 300 is outside the range of its integer type [-128, 127]"));
  Outcome fits = stride(s, "run", write_manifest(s, "fits.json", two), {"/subsystems/a/parameters/p_f64=[126.6, -128.4]"});
  REQUIRE(fits.code == 0);
  CHECK(fits.table["b.y_i8.0"].back() == 127);
  CHECK(fits.table["b.y_i8.1"].back() == -128);
}

TEST_CASE("fmu: variables Stride does not exchange (String, Binary, Clock ports) do not refuse the FMU") {
  // types3 has String and Binary inputs and outputs and a Clock input: it loads, describes and
  // runs; those variables are no numeric ports.
  Scratch s;
  Outcome d = stride(s, "plugins describe --json", kBroken + "/types3.fmu", {});
  REQUIRE(d.code == 0);
  const json j = json::parse(d.out);
  std::vector<std::string> ports;
  for (const auto& p : j["ports"]) ports.push_back(p["name"]);
  CHECK(ports.size() == 36);  // 12 numeric types: inputs u, outputs q and y
  CHECK(std::find(ports.begin(), ports.end(), "tick") == ports.end());
  CHECK(std::find(ports.begin(), ports.end(), "s_y") == ports.end());
  CHECK(contains(j.dump(), "\"s_p\""));  // the String parameter
  CHECK(contains(j.dump(), "\"b_p\""));  // the Binary parameter, as hexadecimal text
}

TEST_CASE("fmu: plugins describe lists String and Binary variables with their type and size, arrays sized by structural parameters") {
  Scratch s;
  Outcome d = stride(s, "plugins describe --set n=5", kBroken + "/texts3.fmu", {});
  REQUIRE(d.code == 0);
  CHECK(contains(d.out, "ports (n = 5, defaults for the rest):\n  (none)\n"));
  CHECK(contains(d.out, "String and Binary variables (connected String to String, Binary to Binary; recorded by name):\n"));
  CHECK(contains(d.out, "  out s_a [5 x String]\n"));
  CHECK(contains(d.out, "  out b_a [5 x Binary]\n"));
  CHECK(contains(d.out, "  in  s_u [5 x String]\n"));
  CHECK(contains(d.out, "  in  b_u [5 x Binary]\n"));
  CHECK(contains(d.out, "  out s_y [5 x String] feedthrough\n"));
  CHECK(contains(d.out, "  in  s_v [1 x String]\n"));
  Outcome j = stride(s, "plugins describe --json", kBroken + "/texts3.fmu", {});
  REQUIRE(j.code == 0);
  const json vars = json::parse(j.out)["text_variables"];
  REQUIRE(vars.size() == 7);
  CHECK(vars[1] == json{{"name", "b_a"}, {"causality", "output"}, {"type", "Binary"}, {"size", 3}, {"feedthrough", false},
                        {"doc", vars[1]["doc"]}});
  CHECK(vars[5]["feedthrough"] == true);
  CHECK(vars[6]["size"] == 1);
  // Scalars of FMI 2 and FMI 3: parameters too; an FMU without any lists none.
  Outcome t2 = stride(s, "plugins describe", kBroken + "/types.fmu", {});
  REQUIRE(t2.code == 0);
  CHECK(contains(t2.out, "  parameter s_p [1 x String]\n      value reference 300; start \"start\"\n"));
  CHECK(contains(t2.out, "  out s_y [1 x String] feedthrough\n"));
  Outcome t3 = stride(s, "plugins describe", kBroken + "/types3.fmu", {});
  REQUIRE(t3.code == 0);
  CHECK(contains(t3.out, "  parameter b_p [1 x Binary]\n"));
  CHECK(contains(t3.out, "  out b_t [1 x Binary]\n"));
  Outcome o = stride(s, "plugins describe", kFmus + "/oscillator.fmu", {});
  REQUIRE(o.code == 0);
  CHECK(!contains(o.out, "String and Binary variables"));
}

TEST_CASE("fmu: start values of states and outputs are set like parameters") {
  // The ball dropped from h = 2 m with v = 1 m/s upwards: first bounce at (v + sqrt(v^2 + 2 g h)) / g.
  const double g = 9.81, h = 2.0, v = 1.0;
  for (const std::string fmu : {"ball.fmu", "ball3.fmu"}) {
    CAPTURE(fmu);
    Scratch s;
    Outcome o = stride(s, "run", write_manifest(s, "ball.json", alone(kBroken + "/" + fmu, 0.01, 1.0, {{"h", h}, {"v", v}}, "rk4")), {});
    REQUIRE(o.code == 0);
    CHECK(o.table["s.h"][0] == h);
    CHECK(o.table["s.v"][0] == v);
    const json times = o.summary["subsystems"]["s"]["report"]["state_event_times"];
    REQUIRE(times.size() >= 1);
    CHECK(times[0].get<double>() == doctest::Approx((v + std::sqrt(v * v + 2 * g * h)) / g).epsilon(1e-10));
  }
}

TEST_CASE("fmu: stride run model.fmu runs its default experiment; DefaultExperiment fills what a manifest leaves out") {
  // stair: DefaultExperiment 0..10 s, step 0.2 s: 51 rows of every output.
  Scratch s;
  Outcome o = stride(s, "run", kBroken + "/stair.fmu", {"/subsystems/stair/parameters/last=100"});
  REQUIRE(o.code == 0);
  REQUIRE(o.table.rows() == 51);
  CHECK(o.table.names == std::vector<std::string>{"time", "stair.counter", "stair.x", "stair.settled"});
  CHECK(o.table["time"].back() == 10);
  CHECK(o.table["stair.counter"].back() == 11);
  CHECK(o.table["stair.x"].back() == doctest::Approx(55));
  // A model-exchange-only FMU gets CVODE at the experiment's tolerance (ball: 0..3 s).
  Outcome b = stride(s, "run", kBroken + "/ball3.fmu", {});
  REQUIRE(b.code == 0);
  CHECK(contains(b.summary["subsystems"]["ball3"]["plugin"].get<std::string>(), "cvode"));
  CHECK(b.summary["subsystems"]["ball3"]["report"]["state_event_times"].size() == 6);
  // A manifest without /coupling/end, /coupling/macro_step and the subsystem's step: the FMU's
  // default experiment, listed by validate.
  json m = alone(kBroken + "/stair3.fmu", 0.1, 1.0, {{"last", 100}}, "rk4");
  m["coupling"].erase("end");
  m["coupling"].erase("macro_step");
  m["subsystems"]["s"].erase("step");
  m.erase("record");
  const std::string file = write_manifest(s, "partial.json", m);
  Outcome v = stride(s, "validate", file, {});
  REQUIRE(v.code == 0);
  CHECK(contains(v.out, "/coupling/end = 10 (from the default experiment of stair3.fmu)"));
  CHECK(contains(v.out, "/coupling/macro_step = 0.2 (from the default experiment of stair3.fmu)"));
  CHECK(contains(v.out, "/subsystems/s/step = 0.2 (from the default experiment of stair3.fmu)"));
  Outcome r = stride(s, "run", file, {});
  REQUIRE(r.code == 0);
  CHECK(r.table.rows() == 51);
}

TEST_CASE("fmu: --set creates a missing parameters object") {
  Scratch s;
  json m = alone(kBroken + "/ball.fmu", 0.01, 0.5, json::object(), "rk4");
  m["subsystems"]["s"].erase("parameters");
  Outcome o = stride(s, "run", write_manifest(s, "ball.json", m), {"/subsystems/s/parameters/h=2"});
  REQUIRE(o.code == 0);
  CHECK(o.table["s.h"][0] == 2);
  // Elsewhere a missing parent stays an error.
  Outcome bad = stride(s, "validate", write_manifest(s, "ball2.json", m), {"/subsystems/t/parameters/h=2"});
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "--set: the parent /subsystems/t/parameters does not exist in the manifest"));
}

TEST_CASE("fmu: an unconnected FMU input keeps its start value, or the manifest's; validate lists it") {
  // state_space3 alone: u keeps its start value 2 (modelDescription.xml), or 3 from "parameters".
  for (const double u : {2.0, 3.0}) {
    CAPTURE(u);
    Scratch s;
    json m = alone(kBroken + "/state_space3.fmu", 0.01, 2.0, u == 2.0 ? json::object() : json{{"u", {u}}}, "rk4");
    const std::string file = write_manifest(s, "ss.json", m);
    Outcome v = stride(s, "validate", file, {});
    REQUIRE(v.code == 0);
    CHECK(contains(v.out, "unconnected FMU input, kept at its start value: s.u = [" + std::string(u == 2.0 ? "2.0" : "3.0") + "]"));
    Outcome o = stride(s, "run", file, {});
    REQUIRE(o.code == 0);
    double worst = 0.0;
    for (std::size_t i = 0; i < o.table.rows(); ++i) {
      const double t = o.table["time"][i];
      const double y = decay(t, 1, 1, u, 1) + decay(t, 2, 1, u, 0) + decay(t, 3, 1, u, -1) + 0.5 * u;
      worst = std::max(worst, std::abs(o.table["s.y"][i] - y));
    }
    CHECK(worst < 1e-8);
  }
  // Plugins' inputs still need a partner.
  Scratch s;
  Outcome bad = stride(s, "validate", STRIDE_SOURCE_DIR "/manifests/two_mass.json", {"/connections=[]"});
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "is not connected"));
}

TEST_CASE("fmu: a model-exchange FMU without continuous states runs without an integrator") {
  // types3_me has no states: y_T = u_T (their start values), q_T = p_T.
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "me.json", alone(kBroken + "/types3_me.fmu", 0.1, 0.5, {{"u_i16", {-7, 8}}}, "")), {});
  REQUIRE(o.code == 0);
  CHECK(o.summary["subsystems"]["s"]["report"]["interface"] == "model exchange");
  CHECK(o.table["s.y_i16.0"].back() == -7);
  CHECK(o.table["s.y_i16.1"].back() == 8);
  CHECK(o.table["s.q_u32.0"].back() == 4000000000.0);
  // stride run on it: no integrator either.
  Outcome r = stride(s, "run", kBroken + "/types3_me.fmu", {});
  REQUIRE(r.code == 0);
  CHECK(!contains(r.summary["subsystems"]["types3_me"]["plugin"].get<std::string>(), "+"));
}

// The stair FMU asks to end the simulation when its counter reaches `last` (period 1 s, last 10:
// at t = 9 s, its normal end in fmusim and FMPy).
TEST_CASE("fmu: a model's request to end the simulation ends the run as completed, the row at that time kept") {
  for (const std::string fmu : {"stair", "stair3"})
    for (const std::string integrator : {"rk4", ""})
      for (const double h : {0.25, 0.3}) {
        CAPTURE(fmu);
        CAPTURE(integrator);
        CAPTURE(h);
        Scratch s;
        Outcome o = stride(s, "run", write_manifest(s, "stair.json", alone(kBroken + "/" + fmu + ".fmu", h, 10.0, json::object(), integrator)), {});
        CHECK(o.code == 0);
        CHECK(o.status() == "completed");
        CHECK(contains(o.message(), "subsystem \"s\" ended the simulation at t = 9 s"));
        CHECK(o.summary["end_time_reached"].get<double>() == doctest::Approx(9.0).epsilon(1e-12));
        REQUIRE(o.table.rows() > 0);
        CHECK(o.table["time"].back() == doctest::Approx(9.0).epsilon(1e-12));
        CHECK(o.table["s.counter"].back() == 10);
        CHECK(o.table["s.x"].back() == doctest::Approx(45.0).epsilon(1e-12));  // sum of 1..9
        const StairError e = stair_error(o.table, "s", 1.0);
        CHECK(e.counter == 0);
        CHECK(e.x < 1e-11);
      }
}

TEST_CASE("fmu: an FMU that asks to end the simulation at its start time: completed at t = 0, one row") {
  // counter starts at 1 >= last = 1: the initialization's event update asks to terminate.
  for (const std::string fmu : {"stair_at_start", "stair3_at_start"})
  for (const std::string integrator : {"rk4", ""}) {
    CAPTURE(fmu);
    CAPTURE(integrator);
    Scratch s;
    Outcome o = stride(s, "run",
                       write_manifest(s, "stair.json", alone(kBroken + "/" + fmu + ".fmu", 0.1, 1.0, {{"last", 1}}, integrator)), {});
    CHECK(o.code == 0);
    CHECK(o.status() == "completed");
    CHECK(contains(o.message(), "ended the simulation at t = 0 s"));
    REQUIRE(o.table.rows() == 1);
    CHECK(o.table["time"][0] == 0.0);
    CHECK(o.table["s.counter"][0] == 1);
  }
}

TEST_CASE("fmu: recorded values between steps are never interpolated across an event") {
  // Bouncing ball recorded every 1 ms with 10-ms steps: v is linear in t between bounces, so
  // every row must equal the closed form (before the fix, v(0.451) = +0.518 m/s while falling).
  const double g = 9.81, e = 0.8, h0 = 1.0, v1 = std::sqrt(2 * g * h0);
  auto v_exact = [&](double t) {
    double tk = std::sqrt(2 * h0 / g), up = 0.0;  // the last bounce before t and the speed after it
    if (t < tk) return -g * t;
    for (int k = 1;; ++k) {
      up = std::pow(e, k) * v1;
      const double next = tk + 2 * up / g;
      if (t < next) return up - g * (t - tk);
      tk = next;
    }
  };
  auto h_exact = [&](double t) {
    double tk = std::sqrt(2 * h0 / g);
    if (t < tk) return h0 - g * t * t / 2;
    for (int k = 1;; ++k) {
      const double up = std::pow(e, k) * v1, next = tk + 2 * up / g;
      if (t < next) return up * (t - tk) - g * (t - tk) * (t - tk) / 2;
      tk = next;
    }
  };
  for (const std::string file : {"bouncing_ball.fmu", "bouncing_ball3.fmu"}) {
    CAPTURE(file);
    Scratch s;
    json m = alone(kFmus + "/" + file, 0.01, 1.2, {{"g", g}, {"e", e}, {"h0", h0}}, "rk4");
    m["record"]["interval"] = 0.001;
    Outcome o = stride(s, "run", write_manifest(s, "ball.json", m), {});
    REQUIRE(o.code == 0);
    REQUIRE(o.table.rows() == 1201);
    double worst = 0.0, worst_h = 0.0;
    for (std::size_t i = 0; i < o.table.rows(); ++i) {
      const double t = o.table["time"][i];
      worst = std::max(worst, std::abs(o.table["s.v"][i] - v_exact(t)));
      worst_h = std::max(worst_h, std::abs(o.table["s.h"][i] - h_exact(t)));
    }
    MESSAGE(file << ": largest |v - v_exact| over 1201 rows = " << worst << " m/s, |h - h_exact| = " << worst_h << " m");
    CHECK(worst < 1e-8);
    // h is quadratic in t: linear interpolation inside a 10-ms step would be off by up to
    // g h^2 / 8 = 1.2e-4 m; the integrator's states at the record time are exact.
    CHECK(worst_h < 1e-9);
    CHECK(o.table["s.v"][451] == doctest::Approx(-g * 0.451).epsilon(1e-9));  // still falling
  }
}

TEST_CASE("fmu: a co-simulation FMU recorded inside its steps keeps its own steps; rows inside from a copy or linear") {
  // The stair (co-simulation, FMI 2 and 3, no FMU states) with 0.3-s and 0.35-s steps,
  // recorded every 0.1 s and 0.05 s: its events at t = 1, 2, ... fall inside doSteps that do
  // not report them. Its steps must stay whole (one doStep per step, the step ends those of the
  // run recorded at its steps: counter and x of the closed form) and each row inside a step
  // is linear between the step's ends, the values at the step's end weighted by (t - t_a)/h.
  // Under the sanitizers (CI time) the 0.35-s steps only: rows inside take the same path.
  const std::vector<double> steps = STRIDE_TEST_SANITIZED ? std::vector<double>{0.35} : std::vector<double>{0.3, 0.35};
  for (const std::string fmu : {"stair", "stair3"})
    for (const double h : steps)
      for (const double dt : {0.1, 0.05}) {
        CAPTURE(fmu);
        CAPTURE(h);
        CAPTURE(dt);
        Scratch s;
        json m = alone(kBroken + "/" + fmu + ".fmu", h, 4.2, {{"last", 1000}}, "");
        m["record"]["interval"] = dt;
        Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
        REQUIRE(o.code == 0);
        REQUIRE(o.table.rows() == static_cast<std::size_t>(std::lround(4.2 / dt)) + 1);
        CHECK(o.summary["subsystems"]["s"]["statistics"]["steps"] == std::lround(std::ceil(4.2 / h - 1e-9)));
        long off_ends = 0, off_lines = 0;
        for (std::size_t i = 0; i < o.table.rows(); ++i) {
          const double t = o.table["time"][i];
          const double ka = std::floor(t / h + 1e-9), ta = ka * h, tb = std::min(4.2, ta + h);
          if (std::abs(t - ta) < 1e-9) {  // a step end: the FMU's own values
            off_ends += o.table["s.counter"][i] != std::floor(t + 1e-9) + 1 ||
                        std::abs(o.table["s.x"][i] - stair_x(t, 1.0)) > 1e-11 * std::max(1.0, t);
            continue;
          }
          const double w = (t - ta) / (tb - ta);
          for (const std::string col : {"s.counter", "s.x"}) {
            const double line = (1 - w) * (col == "s.x" ? stair_x(ta, 1.0) : std::floor(ta + 1e-9) + 1) +
                                w * (col == "s.x" ? stair_x(tb, 1.0) : std::floor(tb + 1e-9) + 1);
            off_lines += std::abs(o.table[col][i] - line) > 1e-9 * std::max(1.0, std::abs(line));
          }
        }
        CHECK(off_ends == 0);
        CHECK(off_lines == 0);
      }
  // The damped oscillator (RK4 at 1 ms inside the FMU; it saves and restores its state), 0.1-s
  // steps recorded every 10 ms: the rows inside the steps come from a copy stepped there and
  // equal the closed form to the FMU's own error (linear interpolation would be off by up to
  // x ω² h² / 8 = 0.05 m), and the rows at the step ends equal those of the run recorded at
  // its steps exactly: its own doSteps are the same 20.
  for (const std::string file : {"oscillator.fmu", "oscillator3.fmu"}) {
    CAPTURE(file);
    const double k = 39.47841760435743, d = 0.4;
    json m = alone(kFmus + "/" + file, 0.1, 2.0, {{"m", 1}, {"k", k}, {"d", d}, {"x0", 1}}, "");
    Scratch coarse, fine;
    Outcome a = stride(coarse, "run", write_manifest(coarse, "osc.json", m), {});
    m["record"]["interval"] = 0.01;
    Outcome b = stride(fine, "run", write_manifest(fine, "osc.json", m), {});
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    REQUIRE(a.table.rows() == 21);
    REQUIRE(b.table.rows() == 201);
    double worst = 0.0;
    long ends_differ = 0;
    for (std::size_t i = 0; i < b.table.rows(); ++i)
      worst = std::max(worst, std::abs(b.table["s.x"][i] - damped(b.table["time"][i], 1.0, k, d, 1.0)));
    for (std::size_t i = 0; i < a.table.rows(); ++i) ends_differ += a.table["s.x"][i] != b.table["s.x"][10 * i];
    MESSAGE(file << ": largest |x - x_exact| over 201 rows = " << worst << " m; step ends differing from the coarse "
                 << "record: " << ends_differ);
    CHECK(worst < 1e-8);
    CHECK(ends_differ == 0);
    CHECK(b.summary["subsystems"]["s"]["statistics"]["steps"] == 20);           // its own doSteps
    CHECK(b.summary["subsystems"]["s"]["statistics"]["steps_for_rows"] == 180);  // a copy's, one per row inside
  }
}

TEST_CASE("fmu: a time event the FMU schedules at the start time is handled there, not a step later") {
  // The stair's first event at t = 1e-13 s, within round-off of t0 = 0 (first = 1e-13): the
  // row at t = 0 holds the counter after it, 2; then k + 2 on [k, k + 1) (events 1e-13 after
  // each whole second, within round-off of the rows there) and x = 2 t + k t - k (k + 1) / 2.
  for (const std::string fmu : {"stair", "stair3"}) {
    CAPTURE(fmu);
    Scratch s;
    json m = alone(kBroken + "/" + fmu + ".fmu", 0.3, 3.0, {{"last", 100}, {"first", 1e-13}}, "rk4");
    m["record"]["interval"] = 0.1;
    Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
    REQUIRE(o.code == 0);
    REQUIRE(o.table.rows() == 31);
    CHECK(o.table["s.counter"][0] == 2);
    int wrong = 0;
    for (std::size_t i = 0; i < o.table.rows(); ++i) {
      const double t = o.table["time"][i], k = std::floor(t + 1e-9);
      wrong += o.table["s.counter"][i] != k + 2;
      wrong += std::abs(o.table["s.x"][i] - (2 * t + k * t - k * (k + 1) / 2)) > 1e-9;
    }
    CHECK(wrong == 0);
    CHECK(o.summary["subsystems"]["s"]["statistics"]["time_events"] == 4);  // 1e-13 s after 0, 1, 2 and 3 s
  }
}

TEST_CASE("fmu: event rows: at each event a row before and a row after it, at its time, as fmusim and FMPy write them") {
  // The bouncing ball (10-ms rk4 steps, rows every 50 ms): bounces at t1 = sqrt(2 h0 / g) and
  // t(k+1) = t(k) + 2 e^k v1 / g, v = -e^(k-1) v1 just before the k-th and e^k v1 just after.
  const double g = 9.81, e = 0.8, h0 = 1.0, v1 = std::sqrt(2 * g * h0);
  const std::vector<double> bounces = {std::sqrt(2 * h0 / g), std::sqrt(2 * h0 / g) + 2 * e * v1 / g};  // up to 1.2 s
  for (const std::string file : {"bouncing_ball.fmu", "bouncing_ball3.fmu"}) {
    CAPTURE(file);
    Scratch s;
    json m = alone(kFmus + "/" + file, 0.01, 1.2, {{"g", g}, {"e", e}, {"h0", h0}}, "rk4");
    m["record"] = {{"interval", 0.05}, {"variables", {"s.h", "s.v"}}, {"event_rows", true}};
    Outcome o = stride(s, "run", write_manifest(s, "ball.json", m), {});
    REQUIRE(o.code == 0);
    REQUIRE(o.table.rows() == 25 + 2 * bounces.size());
    const auto& t = o.table["time"];
    const auto& v = o.table["s.v"];
    std::vector<std::size_t> pairs;  // the first of two rows at one time
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      CHECK(t[i + 1] >= t[i]);
      if (t[i + 1] == t[i]) pairs.push_back(i);
    }
    REQUIRE(pairs.size() == bounces.size());
    double worst_t = 0.0, worst_v = 0.0;
    for (std::size_t k = 0; k < bounces.size(); ++k) {
      const std::size_t i = pairs[k];
      worst_t = std::max(worst_t, std::abs(t[i] - bounces[k]));
      worst_v = std::max({worst_v, std::abs(v[i] + std::pow(e, double(k)) * v1), std::abs(v[i + 1] - std::pow(e, double(k + 1)) * v1)});
    }
    MESSAGE(file << ": event rows at " << bounces.size() << " bounces, largest |t - t_exact| = " << worst_t
                  << " s, largest |v - v_exact| before and after = " << worst_v << " m/s");
    CHECK(worst_t < 1e-9);
    CHECK(worst_v < 1e-8);
  }
  // The stair (model exchange, 0.3-s steps and rows): time events at t = 1, ..., 9, three of them
  // on rows of the grid (3, 6, 9: the grid's row is the row after, the row before is added), the
  // last one ending the run. Before the event at k the counter is k, after it k + 1; x = k (k + 1) / 2.
  for (const std::string fmu : {"stair", "stair3"}) {
    CAPTURE(fmu);
    Scratch s;
    json m = alone(kBroken + "/" + fmu + ".fmu", 0.3, 10.0, json::object(), "rk4");
    m["record"] = {{"interval", 0.3}, {"variables", {"s.counter", "s.x"}}, {"event_rows", true}};
    Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
    REQUIRE(o.code == 0);
    REQUIRE(o.table.rows() == 31 + 6 * 2 + 3);
    const auto& t = o.table["time"];
    int events = 0, wrong = 0;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      if (t[i + 1] != t[i]) continue;
      ++events;
      const double k = std::round(t[i]);
      wrong += std::abs(t[i] - k) > 1e-12 || o.table["s.counter"][i] != k || o.table["s.counter"][i + 1] != k + 1;
      wrong += std::abs(o.table["s.x"][i] - k * (k + 1) / 2) > 1e-9 || o.table["s.x"][i + 1] != o.table["s.x"][i];
    }
    CHECK(events == 9);
    CHECK(wrong == 0);
    // As co-simulation the events happen inside doStep, out of Stride's sight: the grid's rows only.
    m["subsystems"]["s"].erase("integrator");
    Outcome cs = stride(s, "run", write_manifest(s, "stair_cs.json", m), {});
    REQUIRE(cs.code == 0);
    CHECK(cs.table.rows() == 31);
  }
  // FMI 3 co-simulation with event mode (stair3_events declares hasEventMode): each doStep
  // returns at the next event, which Stride handles in event mode, so the same event rows as
  // model exchange, with 0.3-s and 0.35-s steps; the last event ends the run at t = 9.
  for (const double h : {0.3, 0.35}) {
    CAPTURE(h);
    Scratch s;
    json m = alone(kBroken + "/stair3_events.fmu", h, 10.0, json::object(), "");
    m["record"] = {{"interval", 0.3}, {"variables", {"s.counter", "s.x"}}, {"event_rows", true}};
    Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
    REQUIRE(o.code == 0);
    CHECK(o.status() == "completed");
    REQUIRE(o.table.rows() == 31 + 6 * 2 + 3);
    const auto& t = o.table["time"];
    int events = 0, wrong = 0;
    std::ostringstream wrong_rows;
    for (std::size_t i = 0; i + 1 < t.size(); ++i) {
      const double k = std::floor(t[i] + 1e-9);
      const int before = wrong;
      if (t[i + 1] != t[i]) {  // a grid row: counter k + 1 on [k, k + 1), x of the closed form
        wrong += o.table["s.counter"][i] != k + 1 || std::abs(o.table["s.x"][i] - stair_x(t[i], 1.0)) > 1e-9;
      } else {
        ++events;
        wrong += std::abs(t[i] - k) > 1e-12 || o.table["s.counter"][i] != k || o.table["s.counter"][i + 1] != k + 1;
        wrong += std::abs(o.table["s.x"][i] - k * (k + 1) / 2) > 1e-9 || o.table["s.x"][i + 1] != o.table["s.x"][i];
      }
      if (wrong != before)
        wrong_rows << std::setprecision(17) << "row " << i << ": t " << t[i] << ", counter " << o.table["s.counter"][i] << ", x "
                   << o.table["s.x"][i] << " (closed form " << stair_x(t[i], 1.0) << ")\n";
    }
    INFO(wrong_rows.str());
    CHECK(events == 9);
    CHECK(wrong == 0);
    CHECK(t.back() == doctest::Approx(9.0).epsilon(1e-12));
    CHECK(o.summary["subsystems"]["s"]["statistics"]["events"] == 9);
  }
  // The same stair refusing eventModeUsed (as the Reference FMU Roberts does) runs without event
  // mode: its events inside fmi3DoStep, the grid's rows on the closed form, and the log says why.
  {
    Scratch s;
    json m = alone(kBroken + "/stair3_no_event_mode.fmu", 0.3, 8.7, json::object(), "");
    m["record"] = {{"interval", 0.3}, {"variables", {"s.counter", "s.x"}}};
    Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
    REQUIRE(o.code == 0);
    CHECK(o.status() == "completed");
    REQUIRE(o.table.rows() == 30);
    const auto& t = o.table["time"];
    int wrong = 0;
    for (std::size_t i = 0; i < t.size(); ++i)
      wrong += o.table["s.counter"][i] != std::floor(t[i] + 1e-9) + 1 ||
               std::abs(o.table["s.x"][i] - stair_x(t[i], 1.0)) > 1e-9;
    CHECK(wrong == 0);
    CHECK(contains(o.err, "refused eventModeUsed = true at instantiation"));
  }
  // An FMU run alone, as fmusim runs it: --set creates the record section; one bounce in 1 s.
  Scratch a;
  Outcome alone_fmu = stride(a, "run", kFmus + "/bouncing_ball.fmu",
                             {"/record/event_rows=true", "/subsystems/bouncing_ball/integrator=rk4"});
  REQUIRE(alone_fmu.code == 0);
  const auto& ta = alone_fmu.table["time"];
  std::vector<std::size_t> at;
  for (std::size_t i = 0; i + 1 < ta.size(); ++i)
    if (ta[i + 1] == ta[i]) at.push_back(i);
  REQUIRE(at.size() == 1);
  CHECK(std::abs(ta[at[0]] - std::sqrt(2 * h0 / g)) < 1e-9);
  CHECK(alone_fmu.table["bouncing_ball.v"][at[0]] < 0);
  CHECK(alone_fmu.table["bouncing_ball.v"][at[0] + 1] > 0);
  // Refused by validate: columns of two subsystems, repeated macro steps, not a boolean.
  Scratch s;
  const std::string two = STRIDE_SOURCE_DIR "/manifests/fmu_two_mass.json";
  const std::string fmu = "/subsystems/slow/fmu=" + kFmus + "/oscillator.fmu";
  Outcome both = stride(s, "validate", two, {fmu, "/record/event_rows=true"});
  CHECK(both.code == 2);
  CHECK(contains(both.err, "/record/event_rows: event rows need every recorded column from one subsystem, found columns of fast, slow"));
  CHECK(stride(s, "validate", two, {fmu, "/record/event_rows=true", R"(/record/variables=["slow.*"])"}).code == 0);
  Outcome iterated = stride(s, "validate", two, {fmu, "/record/event_rows=true", R"(/coupling/iteration={"tolerance": 1e-6})"});
  CHECK(iterated.code == 2);
  CHECK(contains(iterated.err, "/record/event_rows: event rows cannot be taken back when a macro step is repeated"));
  Outcome text = stride(s, "validate", two, {fmu, "/record/event_rows=\"yes\""});
  CHECK(text.code == 2);
  CHECK(contains(text.err, "/record/event_rows: expected true or false, found string \"yes\""));
}

TEST_CASE("fmu: stride run on a missing, truncated or damaged FMU: exit 2 with the file and the reason") {
  Scratch s;
  Outcome missing = stride(s, "run", (s.dir / "missing.fmu").string(), {});
  CHECK(missing.code == 2);
  CHECK(contains(missing.err, "missing.fmu: no such file"));
  // The first 3000 bytes of an FMU: no zip directory.
  const std::string whole = slurp(kFmus + "/oscillator.fmu");
  const fs::path cut = s.dir / "cut.fmu";
  std::ofstream(cut, std::ios::binary) << whole.substr(0, 3000);
  Outcome truncated = stride(s, "run", cut.string(), {});
  CHECK(truncated.code == 2);
  CHECK(contains(truncated.err, "cut.fmu: not an FMU archive (a zip file expected)"));
  // Four bytes overwritten inside the compressed binary: the entry does not unpack.
  std::string damaged = whole;
  for (std::size_t i = 2000; i < 2004; ++i) damaged[i] = char(0xff);
  const fs::path bad = s.dir / "damaged.fmu";
  std::ofstream(bad, std::ios::binary) << damaged;
  Outcome d = stride(s, "run", bad.string(), {});
  CHECK(d.code == 2);
  CHECK(contains(d.err, "damaged.fmu"));
  CHECK(contains(d.err, "is damaged"));
  CHECK(!fs::exists(s.dir / "out" / "results.csv"));
}

TEST_CASE("fmu: String and Binary values: a NUL in a String and text that is not hexadecimal are refused; empty and long values run") {
  // types3: String parameter s_p, Binary parameter b_p (hexadecimal text).
  struct Bad {
    json value;
    std::string name, why;
  };
  const std::vector<Bad> bad = {
      {std::string("ab\0cd", 5), "s_p", "expected a String without NUL characters (the FMU reads a C string, which would end at the first one), found one at offset 2"},
      {"0xZZ", "b_p", "expected a Binary as hexadecimal text: \"0xZZ\" is not hexadecimal"},
      {"123", "b_p", "expected a Binary as hexadecimal text: \"123\" has an odd number of hexadecimal digits"},
      {42, "s_p", "expected"}};
  for (const auto& b : bad) {
    CAPTURE(b.value.dump());
    Scratch s;
    const std::string file = write_manifest(s, "t.json", alone(kBroken + "/types3.fmu", 0.1, 0.2, {{b.name, b.value}}, ""));
    for (const std::string verb : {"validate", "run"}) {
      Outcome o = stride(s, verb, file, {});
      CHECK(o.code == 2);
      CHECK(contains(o.err, "/subsystems/s/parameters/" + b.name));
      CHECK(contains(o.err, b.why));
    }
  }
  // Empty values, a 0x prefix and a 1 MB String (FMI 3), and the FMI 2 String, reach the FMU.
  for (const json& p : {json{{"s_p", ""}, {"b_p", ""}}, json{{"s_p", std::string(1 << 20, 'x')}, {"b_p", "0x00ff"}}}) {
    Scratch s;
    Outcome o = stride(s, "run", write_manifest(s, "t.json", alone(kBroken + "/types3.fmu", 0.1, 0.2, p, "")), {});
    CHECK(o.code == 0);
    CHECK(o.status() == "completed");
  }
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "t.json", alone(kBroken + "/types.fmu", 0.1, 0.2, {{"s_p", ""}}, "")), {});
  CHECK(o.code == 0);
}

TEST_CASE("fmu: any variable can be recorded: locals, derivatives, parameters and FMI 3 aliases beside the outputs") {
  // The stair: der(x) (a local, FMI 3 also by its alias "rate") equals the counter, k + 1 on
  // [k, k + 1); period and last are parameters. 0.3-s steps put events on and between them.
  for (const std::string fmu : {"stair", "stair3"})
    for (const std::string integrator : {"rk4", ""}) {
      CAPTURE(fmu);
      CAPTURE(integrator);
      Scratch s;
      json m = alone(kBroken + "/" + fmu + ".fmu", 0.3, 5.0, {{"last", 100}}, integrator);
      m["record"] = {{"interval", 0.1}, {"variables", {"s.counter", "s.der(x)", "s.period", "s.last"}}};
      if (fmu == "stair3") m["record"]["variables"].push_back("s.rate");
      Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
      REQUIRE(o.code == 0);
      REQUIRE(o.table.rows() == 51);
      int wrong = 0;
      for (std::size_t i = 0; i < o.table.rows(); ++i) {
        const double k = std::floor(o.table["time"][i] + 1e-9);
        // Co-simulation rows between communication points are linear between the FMU's values.
        if (integrator.empty() && std::abs(o.table["time"][i] / 0.3 - std::round(o.table["time"][i] / 0.3)) > 1e-9) continue;
        wrong += o.table["s.der(x)"][i] != k + 1 || o.table["s.counter"][i] != k + 1;
        if (fmu == "stair3") wrong += o.table["s.rate"][i] != k + 1;
        wrong += o.table["s.period"][i] != 1.0 || o.table["s.last"][i] != 100;
      }
      CHECK(wrong == 0);
    }
  // A name that is no variable Stride records (a Clock) is refused by validate, naming it.
  Scratch s;
  json m = alone(kBroken + "/types3.fmu", 0.1, 0.2, json::object(), "");
  m["record"] = {{"variables", {"s.s_y", "s.tick"}}};
  Outcome v = stride(s, "validate", write_manifest(s, "t.json", m), {});
  CHECK(v.code == 2);
  CHECK(contains(v.err, "/record/variables/1"));
  CHECK(contains(v.err, "subsystem \"s\" has no port \"tick\""));
  CHECK(!contains(v.err, "/record/variables/0"));  // String variables are recorded (as text)
}

TEST_CASE("fmu: a start value or parameter the FMU refuses at initialization is a manifest error of validate") {
  // The stair's counter is declared settable (initial="exact") but read-only in the FMU: the
  // probe sets it in its child process as the run would at t = 0, and the FMU refuses it.
  for (const std::string fmu : {"stair", "stair3"})
    for (const std::string integrator : {"", "rk4"})
      for (const std::string& verb : kVerbs) {
        CAPTURE(fmu);
        CAPTURE(integrator);
        CAPTURE(verb);
        Scratch s;
        json m = alone(kBroken + "/" + fmu + ".fmu", 0.25, 2.0, {{"counter", 5}}, integrator);
        Outcome o = stride(s, verb, write_manifest(s, "stair.json", m), {});
        CHECK(o.code == 2);
        CHECK(contains(o.err, "/subsystems/s/parameters/counter: the FMU refused this value when it was set before initialization"));
        CHECK(contains(o.err, fmu == "stair" ? "fmi2SetInteger returned fmi2Error at t = 0" : "fmi3SetInt32 returned fmi3Error at t = 0"));
        CHECK(contains(o.err, "cannot be set"));  // the FMU's own message
        CHECK(!fs::exists(s.dir / "out" / "results.csv"));
        CHECK(s.leftovers() == 0);
        // The values it takes pass: the period and the last step.
        m["subsystems"]["s"]["parameters"] = {{"period", 0.5}, {"last", 4}};
        CHECK(stride(s, "validate", write_manifest(s, "stair.json", m), {}).code == 0);
      }
  // An oscillator that checks its start in ExitInitializationMode (x above 1.5 m refused): the
  // failure is the FMU's own message at the subsystem; x0 = 1 m runs to the closed form. As
  // co-simulation with an input it leaves initialization mode only once its input holds the
  // other subsystems' initial outputs, in the run: there the run fails at t = 0 with the
  // FMU's message (validate passes).
  for (const std::string fmu : {"init_error", "init_error3"})
    for (const std::string integrator : {"", "rk4"}) {
      CAPTURE(fmu);
      CAPTURE(integrator);
      const std::string v = fmu == "init_error" ? "fmi2" : "fmi3";
      std::vector<std::string> sets = {"/subsystems/osc/fmu=" + kBroken + "/" + fmu + ".fmu"};
      if (!integrator.empty()) sets.push_back("/subsystems/osc/integrator=" + integrator);
      Scratch s;
      Outcome good = stride(s, "run", kManifests + "fmu_oscillator.json", sets);
      CHECK(good.code == 0);
      CHECK(oscillator_error(good.table) < 2e-5);
      sets.push_back("/subsystems/osc/parameters/x0=2");
      if (integrator.empty()) {
        CHECK(stride(s, "validate", kManifests + "fmu_oscillator.json", sets).code == 0);
        Outcome run = stride(s, "run", kManifests + "fmu_oscillator.json", sets);
        CHECK(run.code == 1);
        CHECK(run.status() == "failed");
        CHECK(contains(run.message(), v + "ExitInitializationMode returned " + v + "Error at t = 0"));
        CHECK(contains(run.message(), "the initial value of the first variable (2) is beyond the model's limit"));
        continue;
      }
      Outcome bad = stride(s, "validate", kManifests + "fmu_oscillator.json", sets);
      CHECK(bad.code == 2);
      CHECK(contains(bad.err, "/subsystems/osc/fmu: could not create: plugin '" + kBroken + "/" + fmu + ".fmu': the FMU failed its "
                              "initialization at t = 0 (parameters and start values set, " + v + "EnterInitializationMode, " + v +
                              "ExitInitializationMode): " + v + "ExitInitializationMode returned " + v + "Error at t = 0"));
      CHECK(contains(bad.err, "the initial value of the first variable (2) is beyond the model's limit"));
      CHECK(s.leftovers() == 0);
    }
  // One that crashes or never returns in ExitInitializationMode: the probe's child dies or is
  // ended, validate reports it (exit 2) and leaves no unpacked folder behind.
  ::setenv("STRIDE_FMU_PROBE_TIMEOUT", "1", 1);
  const std::vector<std::pair<std::string, std::string>> faults = {
      {"init_crash", "crashed with SIGSEGV (tried in a separate process before the run)"},
      {"init_hang", "did not return within 1 s (tried in a separate process before the run)"}};
  for (const auto& fault : faults) {
    const std::string& fmu = fault.first;  // not a structured binding: clang 14 cannot capture one
    const std::string& what = fault.second;
    CAPTURE(fmu);
    Scratch s;
    Outcome o = stride(s, "validate", kManifests + "fmu_oscillator.json",
                       {"/subsystems/osc/fmu=" + kBroken + "/" + fmu + ".fmu", "/subsystems/osc/integrator=rk4",
                        "/subsystems/osc/parameters/x0=2"});
    CHECK(o.code == 2);
    CHECK(contains(o.err, "/subsystems/osc/fmu: could not create: plugin '" + kBroken + "/" + fmu +
                              ".fmu': initialization at t = 0 (parameters and start values set, fmi2EnterInitializationMode, "
                              "fmi2ExitInitializationMode) " + what));
    CHECK(s.leftovers() == 0);
  }
}

TEST_CASE("fmu: recorded variables chosen by pattern: \"*\" and \"?\" over FMU variables, aliases and plugin outputs") {
  // "s.*" is every output, then every other numeric variable in modelDescription.xml's order,
  // each once (FMI 3: der(x) by its own name, not again as its alias "rate"; never "time").
  const std::vector<std::string> all = {"time", "s.counter", "s.x", "s.settled", "s.der(x)", "s.period", "s.last", "s.first", "s.label"};
  for (const std::string fmu : {"stair", "stair3"})
    for (const std::string integrator : {"rk4", ""}) {
      CAPTURE(fmu);
      CAPTURE(integrator);
      Scratch s;
      json m = alone(kBroken + "/" + fmu + ".fmu", 0.25, 5.0, {{"last", 100}}, integrator);
      m["record"]["variables"] = {"s.*", "s.counter"};  // the second names a column recorded already
      Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
      REQUIRE(o.code == 0);
      CHECK(o.table.names == all);
      REQUIRE(o.table.rows() == 21);
      int wrong = 0;
      for (std::size_t i = 0; i < o.table.rows(); ++i) {
        // counter = k + 1 on [k, k + 1), x its integral: k (k + 1) / 2 + (k + 1) (t - k); k
        // events settled.
        const double t = o.table["time"][i], k = std::floor(t + 1e-9);
        wrong += o.table["s.counter"][i] != k + 1 || o.table["s.der(x)"][i] != k + 1;
        wrong += std::abs(o.table["s.x"][i] - (k * (k + 1) / 2 + (k + 1) * (t - k))) > 1e-9;
        wrong += o.table["s.period"][i] != 1.0 || o.table["s.last"][i] != 100 || o.table["s.settled"][i] != k;
        wrong += o.table["s.first"][i] != -1.0;
      }
      CHECK(wrong == 0);
    }
  // "?" is one character, "*" any run; an FMI 3 alias is chosen by a pattern only it matches.
  Scratch s;
  json m = alone(kBroken + "/stair3.fmu", 0.5, 1.0, json::object(), "");
  m["record"]["variables"] = {"s.der(?)", "s.ra*", "s.?ast", "s.counte?"};
  Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
  REQUIRE(o.code == 0);
  CHECK(o.table.names == std::vector<std::string>{"time", "s.der(x)", "s.rate", "s.last", "s.counter"});
  CHECK(o.table["s.rate"] == o.table["s.der(x)"]);
  // Patterns over subsystems and plugin output ports: the two-mass test's fast mass is a
  // plugin, the slow one an FMU; "*.?" is x and v of both, the plugin's a and the FMU's
  // one-letter parameters.
  Scratch t;
  Outcome two = stride(t, "run", STRIDE_SOURCE_DIR "/manifests/fmu_two_mass.json",
                       {"/subsystems/slow/fmu=" + kFmus + "/oscillator.fmu", "/coupling/end=0.2", R"(/record/variables=["*.?"])"});
  REQUIRE(two.code == 0);
  CHECK(two.table.names ==
        std::vector<std::string>{"time", "fast.x", "fast.v", "fast.a", "slow.x", "slow.v", "slow.m", "slow.k", "slow.d"});
  CHECK(two.table["slow.m"].front() == 100);
  CHECK(std::abs(two.table["slow.x"].front() - 9.99) < 1e-12);
  // A pattern that matches nothing is a manifest error at its pointer, listing what there is.
  const std::vector<std::array<std::string, 3>> bad = {
      {"s.nothing*", "the pattern \"s.nothing*\" matches no output or recordable variable",
       "there are: s.counter, s.x, s.settled, s.der(x), s.period, s.last, s.first, s.label"},
      {"x*.counter", "the pattern \"x*\" matches no subsystem", "subsystems: s"}};
  for (const auto& row : bad) {
    const std::string &entry = row[0], &what = row[1], &there = row[2];  // clang 14 cannot capture bindings
    CAPTURE(entry);
    Scratch u;
    json b = alone(kBroken + "/stair3.fmu", 0.5, 1.0, json::object(), "");
    b["record"]["variables"] = {"s.x", entry};
    Outcome v = stride(u, "validate", write_manifest(u, "t.json", b), {});
    CHECK(v.code == 2);
    CHECK(contains(v.err, "/record/variables/1"));
    CHECK(contains(v.err, what));
    CHECK(contains(v.err, there));
  }
}

namespace {

// results.csv as text fields (RFC 4180: quoted fields may hold commas, quotes doubled and line
// breaks), by column name; also checks that every row has as many fields as the header.
struct TextTable {
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> rows;
  bool ragged = false;
  std::vector<std::string> operator[](const std::string& name) const {
    const auto it = std::find(names.begin(), names.end(), name);
    std::vector<std::string> out;
    if (it == names.end()) return out;
    for (const auto& r : rows) out.push_back(r[std::size_t(it - names.begin())]);
    return out;
  }
};
TextTable read_text_csv(const fs::path& file) {
  const std::string text = slurp(file);
  std::vector<std::vector<std::string>> lines(1);
  std::string field;
  bool quoted = false, was_quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = was_quoted = true;
    } else if (c == ',' || c == '\n') {
      lines.back().push_back(field);
      field.clear();
      was_quoted = false;
      if (c == '\n') lines.emplace_back();
    } else {
      field += c;
    }
  }
  (void)was_quoted;
  if (lines.back().empty()) lines.pop_back();
  TextTable t;
  if (lines.empty()) return t;
  t.names = lines.front();
  t.rows.assign(lines.begin() + 1, lines.end());
  for (const auto& r : t.rows) t.ragged = t.ragged || r.size() != t.names.size();
  return t;
}

// The types FMUs' s_t and b_t at time t: k = floor(4 t).
std::string tick_text(double t) { return "tick " + std::to_string(int(4 * t + 1e-9)) + ", \"q\"\nend"; }
std::string tick_hex(double t) {
  static const char* const d = "0123456789abcdef";
  const int k = int(4 * t + 1e-9);
  return std::string{d[k >> 4], d[k & 15]} + "00220a2cff";
}

// Two types FMUs, a feeding b's String (and Binary) input from its time-varying output.
json text_pair(int version, double h, double record, double end) {
  const std::string fmu = kBroken + (version == 3 ? "/types3.fmu" : "/types.fmu");
  json m = {{"format", 1},
            {"subsystems", {{"a", {{"fmu", fmu}, {"step", h}}}, {"b", {{"fmu", fmu}, {"step", h}}}}},
            {"connections", {{{"from", "a.s_t"}, {"to", "b.s_u"}}}},
            {"coupling", {{"scheme", "jacobi"}, {"macro_step", h}, {"start", 0}, {"end", end}}},
            {"record", {{"interval", record}, {"variables", {"a.s_t", "b.s_y", "a.q_f64", "a.s_q", "a.s_y"}}}}};
  if (version == 3) {
    m["connections"].push_back({{"from", "a.b_t"}, {"to", "b.b_u"}});
    m["record"]["variables"].push_back("b.b_y");
    m["record"]["variables"].push_back("a.b_q");
  }
  return m;
}

// The coupling schemes a text connection is checked under (a steps ha, b the macro step h):
// the value b holds must not depend on which subsystem steps first.
struct TextScheme {
  std::string scheme;
  json order;
  double ha;
  std::string synchronization;
  bool me = false;  // both as model exchange (an integrator chooses the interface)
  void apply(json& m) const {
    m["coupling"]["scheme"] = scheme;
    if (!order.is_null()) m["coupling"]["order"] = order;
    if (!synchronization.empty()) m["coupling"]["synchronization"] = synchronization;
    m["subsystems"]["a"]["step"] = ha;
    if (me)
      for (const char* sub : {"a", "b"}) m["subsystems"][sub]["integrator"] = {{"plugin", "rk4"}};
  }
};
// Under the sanitizers (CI time) one Gauss-Seidel order and one multirate synchronization: the
// text path is the same code for the others.
std::vector<TextScheme> text_schemes(double h) {
  if (STRIDE_TEST_SANITIZED)
    return {{"gauss_seidel", {"b", "a"}, h, ""}, {"multirate", json(), h / 2, "fastest_first"}};
  return {{"jacobi", json(), h, ""},
          {"gauss_seidel", json(), h, ""},
          {"gauss_seidel", {"b", "a"}, h, ""},
          {"multirate", json(), h / 2, "slowest_first"},
          {"multirate", json(), h / 2, "fastest_first"}};
}

}  // namespace

TEST_CASE("fmu: String and Binary variables connected between two FMUs and recorded as quoted CSV text") {
  // a.s_t = "tick k, \"q\"<newline>end" (k = floor(4 t), bytes k 0 '"' '\n' ',' 255 as b_t)
  // feeds b.s_u; b.s_y = b.s_u. Rows every 0.05 s, steps of 0.1 s: a row holds the value of the
  // latest communication point at or before it; b holds over each step what a had at its
  // start, so b.s_y at b's point p > 0 is a.s_t at p - h (at 0: the value at 0), whichever
  // steps first (Jacobi, Gauss-Seidel either way, multirate with a stepping 0.05 s either way).
  const double h = 0.1;
  for (int version : {2, 3})
    for (const TextScheme& sc : text_schemes(h)) {
      CAPTURE(version);
      CAPTURE(sc.scheme);
      CAPTURE(sc.order.dump());
      CAPTURE(sc.synchronization);
      Scratch s;
      json m = text_pair(version, h, 0.05, 1.0);
      sc.apply(m);
      const std::string hostile = "he said \"hi\", then\nleft,\r\n\"\"";
      m["subsystems"]["a"]["parameters"] = {{"s_p", hostile}};
      if (version == 3) m["subsystems"]["a"]["parameters"]["b_p"] = "00ff220a2c";
      Outcome o = stride(s, "run", write_manifest(s, "text.json", m), {});
      REQUIRE(o.code == 0);
      CHECK(o.status() == "completed");
      const TextTable t = read_text_csv(s.dir / "out" / "results.csv");
      CHECK(!t.ragged);
      std::vector<std::string> names = {"time", "a.s_t", "b.s_y", "a.q_f64", "a.s_q", "a.s_y"};
      if (version == 3) names = {"time", "a.s_t", "b.s_y", "a.q_f64.0", "a.q_f64.1", "a.s_q", "a.s_y", "b.b_y", "a.b_q"};
      CHECK(t.names == names);
      REQUIRE(t.rows.size() == 21);
      int wrong = 0;
      for (std::size_t i = 0; i < t.rows.size(); ++i) {
        const double r = std::stod(t["time"][i]), p = std::floor(r / h + 1e-9) * h, fed = p > 0 ? p - h : 0.0;
        wrong += t["a.s_t"][i] != tick_text(std::floor(r / sc.ha + 1e-9) * sc.ha);
        wrong += t["b.s_y"][i] != tick_text(fed);
        wrong += t["a.s_q"][i] != hostile;  // a parameter's copy: quotes, commas, CR LF
        wrong += t["a.s_y"][i] != "";       // an unconnected input's start value, empty
        if (version == 3) wrong += t["b.b_y"][i] != tick_hex(fed) || t["a.b_q"][i] != "00ff220a2c";
      }
      CHECK(wrong == 0);
      CHECK(std::stod(t[names[3]].back()) == 1.5);  // numbers beside the text as before
      // The text is quoted in the file itself.
      CHECK(contains(slurp(s.dir / "out" / "results.csv"), "\"tick 0, \"\"q\"\"\nend\""));
    }
}

namespace {

// The texts3 FMU's arrays at time t, element j (k = floor(4 t)): s_a empty when (k + j) mod 3 =
// 0, else "k<k>, \"e<j>\"\n"; b_a the first (k + j) mod 4 of the bytes k, 0, j, '"', ',', '\n'.
std::string array_text(double t, int j) {
  const int k = int(4 * t + 1e-9);
  return (k + j) % 3 ? "k" + std::to_string(k) + ", \"e" + std::to_string(j) + "\"\n" : std::string();
}
std::string array_hex(double t, int j) {
  static const char* const d = "0123456789abcdef";
  const int k = int(4 * t + 1e-9);
  const int bytes[6] = {k, 0, j, '"', ',', '\n'};
  std::string out;
  for (int i = 0; i < (k + j) % 4; ++i) out += d[bytes[i] >> 4], out += d[bytes[i] & 15];
  return out;
}

}  // namespace

TEST_CASE("fmu: FMI 3 arrays of String and Binary values recorded one column per element and connected element by element") {
  // Two texts3 FMUs with n = 4 (a structural parameter): a.s_a feeds b.s_u whole, a.b_a[1:4]
  // feeds b.b_u[0:3]; b.b_u[3] keeps its start value (empty). b holds over each step what a
  // had at its start: b's element j at its point p > 0 is a's at p - h (at 0: the value at 0),
  // whichever steps first.
  const double h = 0.1;
  std::vector<TextScheme> schemes = text_schemes(h);
  schemes.push_back({"jacobi", json(), h, "", true});
  for (const TextScheme& sc : schemes) {
    CAPTURE(sc.scheme);
    CAPTURE(sc.order.dump());
    CAPTURE(sc.synchronization);
    CAPTURE(sc.me);
    Scratch s;
    const std::string fmu = kBroken + "/texts3.fmu";
    json m = {{"format", 1},
              {"subsystems",
               {{"a", {{"fmu", fmu}, {"step", h}, {"parameters", {{"n", 4}}}}},
                {"b", {{"fmu", fmu}, {"step", h}, {"parameters", {{"n", 4}}}}}}},
              {"connections", {{{"from", "a.s_a"}, {"to", "b.s_u"}}, {{"from", "a.b_a[1:4]"}, {"to", "b.b_u[0:3]"}}}},
              {"coupling", {{"scheme", "jacobi"}, {"macro_step", h}, {"start", 0}, {"end", 1.0}}},
              {"record", {{"interval", 0.05}, {"variables", {"a.s_a", "b.s_y", "b.b_y", "a.b_a"}}}}};
    sc.apply(m);
    const fs::path file = write_manifest(s, "arrays.json", m);
    Outcome v = stride(s, "validate", file, {});
    REQUIRE(v.code == 0);
    CHECK(contains(v.out, "valid (2 subsystems, 2 connections, 16 recorded columns)"));
    CHECK(contains(v.out, "unconnected FMU input, kept at its start value: b.b_u = [\"\",\"\",\"\",\"\"] where no connection feeds it"));
    CHECK(!contains(v.out, "b.s_u ="));
    Outcome o = stride(s, "run", file, {});
    REQUIRE(o.code == 0);
    CHECK(o.status() == "completed");
    if (sc.me) CHECK(contains(o.summary["subsystems"]["b"]["report"]["interface"].get<std::string>(), "model exchange"));
    const TextTable t = read_text_csv(s.dir / "out" / "results.csv");
    CHECK(!t.ragged);
    std::vector<std::string> names = {"time"};
    for (const char* var : {"a.s_a", "b.s_y", "b.b_y", "a.b_a"})
      for (int j = 0; j < 4; ++j) names.push_back(std::string(var) + "." + std::to_string(j));
    CHECK(t.names == names);
    REQUIRE(t.rows.size() == 21);
    int wrong = 0;
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      const double r = std::stod(t["time"][i]), p = std::floor(r / h + 1e-9) * h, fed = p > 0 ? p - h : 0.0;
      const double own = std::floor(r / sc.ha + 1e-9) * sc.ha;
      for (int j = 0; j < 4; ++j) {
        const std::string e = "." + std::to_string(j);
        wrong += t["a.s_a" + e][i] != array_text(own, j);
        wrong += t["a.b_a" + e][i] != array_hex(own, j);
        wrong += t["b.s_y" + e][i] != array_text(fed, j);
        wrong += t["b.b_y" + e][i] != (j < 3 ? array_hex(fed, j + 1) : std::string());
      }
    }
    CHECK(wrong == 0);
    // Every kind of element is there: empty, quotes, a comma, a line break, a NUL byte.
    const std::string csv = slurp(s.dir / "out" / "results.csv");
    CHECK(contains(csv, ",\"\","));
    CHECK(contains(csv, "\"k1, \"\"e0\"\"\n\""));
    CHECK(contains(csv, "\"010002\""));
  }
  // Chosen by pattern, as many columns as the structural parameter gives.
  Scratch s;
  json m = {{"format", 1},
            {"subsystems", {{"a", {{"fmu", kBroken + "/texts3.fmu"}, {"step", 0.1}, {"parameters", {{"n", 2}}}}}}},
            {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.1}, {"start", 0}, {"end", 0.3}}},
            {"record", {{"interval", 0.1}, {"variables", {"a.?_a", "a.n"}}}}};
  Outcome o = stride(s, "run", write_manifest(s, "pattern.json", m), {});
  REQUIRE(o.code == 0);
  const TextTable t = read_text_csv(s.dir / "out" / "results.csv");
  CHECK(t.names == std::vector<std::string>{"time", "a.s_a.0", "a.s_a.1", "a.b_a.0", "a.b_a.1", "a.n"});
  REQUIRE(t.rows.size() == 4);
  CHECK(t["a.b_a.1"][3] == array_hex(0.3, 1));
  CHECK(t["a.s_a.1"][0] == array_text(0.0, 1));
}

TEST_CASE("fmu: String and Binary arrays set as start values in the manifest, element by element; bad elements refused at their pointer") {
  // texts3 with n = 3: the unconnected array inputs s_u, b_u keep the manifest's values, which
  // the feedthrough outputs s_y, b_y copy at every row.
  const json strings = {"a, \"b\"", "", "line\nbreak"}, binaries = {"00ff", "", "0x0a00"};
  json m = alone(kBroken + "/texts3.fmu", 0.1, 0.3, {{"n", 3}, {"s_u", strings}, {"b_u", binaries}}, "");
  m["record"]["variables"] = {"s.s_y", "s.b_y"};
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "t.json", m), {});
  REQUIRE(o.code == 0);
  const TextTable t = read_text_csv(s.dir / "out" / "results.csv");
  REQUIRE(t.rows.size() == 4);
  for (std::size_t r = 0; r < t.rows.size(); ++r) {
    for (std::size_t j = 0; j < 3; ++j) CHECK(t["s.s_y." + std::to_string(j)][r] == strings[j].get<std::string>());
    CHECK(t["s.b_y.0"][r] == "00ff");
    CHECK(t["s.b_y.1"][r] == "");
    CHECK(t["s.b_y.2"][r] == "0a00");
  }
  Outcome v = stride(s, "validate", write_manifest(s, "t.json", m), {});
  CHECK(v.code == 0);
  CHECK(contains(v.out, "s.s_u = [\"a, \\\"b\\\"\",\"\",\"line\\nbreak\"]"));
  // Each bad element at its own pointer; a list of another length than the array's.
  struct Bad {
    std::string name;
    json value;
    std::string where, why;
  };
  const std::vector<Bad> bad = {
      {"s_u", {"x", 1, "z"}, "/s_u/1", "expected a string, found integer 1"},
      {"s_u", "x", "/s_u", "expected a list of strings, found string"},
      {"s_u", {"x", "y"}, "/s_u", "expected a list of 3 values (the FMU's array), found 2"},
      {"s_u", {"x", std::string("a\0b", 3), "z"}, "/s_u/1", "expected a String without NUL characters"},
      {"b_u", {"00", "0xZZ", ""}, "/b_u/1", "expected a Binary as hexadecimal text: \"0xZZ\" is not hexadecimal"}};
  for (const auto& b : bad) {
    CAPTURE(b.value.dump());
    Scratch e;
    const std::string file = write_manifest(e, "t.json", alone(kBroken + "/texts3.fmu", 0.1, 0.2, {{"n", 3}, {b.name, b.value}}, ""));
    for (const std::string verb : {"validate", "run"}) {
      Outcome r = stride(e, verb, file, {});
      CHECK(r.code == 2);
      CHECK(contains(r.err, "/subsystems/s/parameters" + b.where));
      CHECK(contains(r.err, b.why));
    }
  }
}

TEST_CASE("fmu: huge and empty String and Binary values pass a connection and the record whole") {
  // A 1 MB String parameter with quotes and line breaks, copied to a.s_q, recorded and fed to b;
  // an empty one the same. FMI 3 also a 256 KiB Binary with every byte value.
  std::string big;
  for (int i = 0; big.size() < (1u << 20); ++i) big += i % 7 == 0 ? "\"" : i % 11 == 0 ? "\n" : i % 13 == 0 ? "," : "x";
  std::string hex;
  for (int i = 0; i < (1 << 17); ++i) {
    char b[3];
    std::snprintf(b, sizeof b, "%02x", i & 255);
    hex += b;
  }
  for (const std::string& value : {big, std::string()}) {
    Scratch s;
    json m = text_pair(3, 0.1, 0.1, 0.3);
    m["connections"] = {{{"from", "a.s_q"}, {"to", "b.s_u"}}, {{"from", "a.b_q"}, {"to", "b.b_u"}}};
    m["subsystems"]["a"]["parameters"] = {{"s_p", value}, {"b_p", value.empty() ? "" : hex}};
    m["record"]["variables"] = {"a.s_q", "b.s_y", "b.b_y"};
    Outcome o = stride(s, "run", write_manifest(s, "big.json", m), {});
    REQUIRE(o.code == 0);
    const TextTable t = read_text_csv(s.dir / "out" / "results.csv");
    REQUIRE(t.rows.size() == 4);
    CHECK(!t.ragged);
    for (std::size_t i = 0; i < t.rows.size(); ++i) {
      CHECK(t["a.s_q"][i] == value);
      CHECK(t["b.s_y"][i] == value);  // a.s_q is a parameter's copy: the same from t = 0
      CHECK(t["b.b_y"][i] == (value.empty() ? "" : hex));
    }
  }
}

TEST_CASE("fmu: String and Binary variables chosen by pattern, after the numbers; model exchange connects them too") {
  Scratch s;
  json m = text_pair(3, 0.1, 0.1, 0.5);
  m["record"]["variables"] = {"a.s_*", "a.?_t"};  // s_u is an input: not recorded
  Outcome o = stride(s, "run", write_manifest(s, "p.json", m), {});
  REQUIRE(o.code == 0);
  const TextTable t = read_text_csv(s.dir / "out" / "results.csv");
  CHECK(t.names == std::vector<std::string>{"time", "a.s_p", "a.s_q", "a.s_y", "a.s_t", "a.b_t"});
  CHECK(t["a.s_p"].front() == "start");
  CHECK(t["a.b_t"].back() == tick_hex(0.5));
  // types3_me (model exchange without states): b holds over its step what a had at its start.
  Scratch u;
  json me = text_pair(3, 0.1, 0.1, 0.5);
  for (const char* sub : {"a", "b"}) me["subsystems"][sub]["fmu"] = kBroken + "/types3_me.fmu";
  Outcome r = stride(u, "run", write_manifest(u, "me.json", me), {});
  REQUIRE(r.code == 0);
  const TextTable v = read_text_csv(u.dir / "out" / "results.csv");
  REQUIRE(v.rows.size() == 6);
  int wrong = 0;
  for (std::size_t i = 0; i < v.rows.size(); ++i) {
    const double p = 0.1 * double(i), fed = p > 0 ? p - 0.1 : 0.0;
    wrong += v["a.s_t"][i] != tick_text(p) || v["b.s_y"][i] != tick_text(fed) || v["b.b_y"][i] != tick_hex(fed);
  }
  CHECK(wrong == 0);
  // FMI 2 as model exchange (an integrator chooses the interface): the String the same way.
  Scratch w;
  json me2 = text_pair(2, 0.1, 0.1, 0.5);
  for (const char* sub : {"a", "b"}) me2["subsystems"][sub]["integrator"] = {{"plugin", "rk4"}};
  Outcome r2 = stride(w, "run", write_manifest(w, "me2.json", me2), {});
  REQUIRE(r2.code == 0);
  CHECK(contains(r2.summary["subsystems"]["b"]["report"]["interface"].get<std::string>(), "model exchange"));
  const TextTable v2 = read_text_csv(w.dir / "out" / "results.csv");
  REQUIRE(v2.rows.size() == 6);
  int wrong2 = 0;
  for (std::size_t i = 0; i < v2.rows.size(); ++i) {
    const double p = 0.1 * double(i), fed = p > 0 ? p - 0.1 : 0.0;
    wrong2 += v2["a.s_t"][i] != tick_text(p) || v2["b.s_y"][i] != tick_text(fed);
  }
  CHECK(wrong2 == 0);
}

TEST_CASE("fmu: a String or Binary connection or record Stride cannot make is a manifest error naming it") {
  struct Bad {
    json connection;
    std::string record, pointer, why;
  };
  const std::vector<Bad> bad = {
      {{{"from", "a.s_t"}, {"to", "b.u_f64"}},
       "",
       "/connections/0/to",
       "\"a.s_t\" is a String variable of an FMU: it connects only to a String input of an FMU, and \"b.u_f64\" is a "
       "numeric port of an FMU"},
      {{{"from", "a.q_f64"}, {"to", "b.s_u"}},
       "",
       "/connections/0/from",
       "\"b.s_u\" is a String variable of an FMU: it connects only to a String variable of an FMU, and \"a.q_f64\" is "
       "a numeric port"},
      {{{"from", "a.s_t"}, {"to", "b.b_u"}}, "", "/connections/0/to", "and \"b.b_u\" is a Binary variable"},
      {{{"from", "a.s_t"}, {"to", "p.x2"}}, "", "/connections/0/to", "and \"p.x2\" is a port of plugin two_mass_fast"},
      {{{"from", "p.x"}, {"to", "b.s_u"}}, "", "/connections/0/from", "and \"p.x\" is a port of plugin two_mass_fast"},
      {{{"from", "a.s_t"}, {"to", "b.s_u"}, {"transformation", {{"factor", 2}}}},
       "",
       "/connections/0/transformation",
       "a String value takes no transformation"},
      {{{"from", "a.b_t"}, {"to", "b.b_u"}, {"extrapolator", "linear"}},
       "",
       "/connections/0/extrapolator",
       "a Binary connection passes the value held at each communication point and takes no extrapolator"},
      {{{"from", "a.s_u"}, {"to", "b.s_u"}}, "", "/connections/0/from", "\"a.s_u\" is an input"},
      {{{"from", "a.s_t"}, {"to", "b.s_y"}}, "", "/connections/0/to", "\"b.s_y\" is no input (causality \"output\")"},
      {{{"from", "a.s_t[0]"}, {"to", "b.s_u"}},
       "",
       "/connections/0/from",
       "a String connection takes the whole variable"},
      {{{"from", "a.nothing"}, {"to", "b.s_u"}},
       "",
       "/connections/0/from",
       "and \"a.nothing\" is no port or variable of subsystem \"a\""},
      {json(), "a.s_u", "/record/variables/0",
       "\"a.s_u\" is a String input: results.csv records outputs and other variables, not inputs"},
      {{{"from", "a.q_f64"}, {"to", "b.tick"}},
       "",
       "/connections/0/to",
       "subsystem \"b\" has no port \"tick\""},  // a Clock
      {json(), "a.tick", "/record/variables/0", "subsystem \"a\" has no port \"tick\""},
      {json(), "a.nothing", "/record/variables/0", "subsystem \"a\" has no port \"nothing\""},
      // A misspelt String or Binary name: the ports listed and the closest offered include them.
      {json(), "a.s_yy", "/record/variables/0", "subsystem \"a\" has no port \"s_yy\" (did you mean \"s_y\"?)"},
      {json(), "a.s_yy", "/record/variables/0", "s_y (output, 1 x String)"},
      {{{"from", "a.q_f64"}, {"to", "b.b_uu"}}, "", "/connections/0/to", "(did you mean \"b_u\"?); its inputs: "},
      {{{"from", "a.q_f64"}, {"to", "b.b_uu"}}, "", "/connections/0/to", "b_u (input, 1 x Binary)"},
      // FMI 3 arrays (texts3: t with n = 3, w with n = 2).
      {{{"from", "t.s_a"}, {"to", "w.s_u"}},
       "",
       "/connections/0/to",
       "size mismatch: t.s_a gives 3 element(s), w.s_u expects 2"},
      {{{"from", "t.s_a"}, {"to", "w.s_v"}},
       "",
       "/connections/0/to",
       "size mismatch: t.s_a gives 3 element(s), w.s_v expects 1"},
      {{{"from", "t.s_a"}, {"to", "w.b_u"}},
       "",
       "/connections/0/to",
       "\"t.s_a\" is a String variable of an FMU: it connects only to a String input of an FMU, and \"w.b_u\" is a "
       "Binary variable"},
      {{{"from", "t.b_a[1:3]"}, {"to", "w.s_u"}}, "", "/connections/0/to", "and \"w.s_u\" is a String variable"},
      {{{"from", "t.s_a[2:4]"}, {"to", "w.s_u"}},
       "",
       "/connections/0/from",
       "elements [2, 4) out of range: t.s_a has 3 elements"},
      {{{"from", "t.s_a"}, {"to", "w.s_u[1:4]"}},
       "",
       "/connections/0/to",
       "elements [1, 4) out of range: w.s_u has 2 elements"},
      {{{"from", "t.s_a"}, {"to", "w.q_f64"}},
       "",
       "/connections/0/to",
       "and \"w.q_f64\" is no port or variable of subsystem \"w\""},
      {{{"from", "a.q_f64"}, {"to", "w.s_u"}},
       "",
       "/connections/0/from",
       "\"w.s_u\" is a String variable of an FMU: it connects only to a String variable of an FMU, and \"a.q_f64\" is "
       "a numeric port"},
      {json(), "w.s_u", "/record/variables/0", "\"w.s_u\" is a String input: results.csv records outputs"}};
  for (const auto& b : bad) {
    CAPTURE(b.connection.dump());
    CAPTURE(b.record);
    Scratch s;
    json m = text_pair(3, 0.1, 0.1, 0.2);
    m["subsystems"]["p"] = {{"plugin", "two_mass_fast"}, {"step", 0.1}, {"integrator", "rk4"}};
    m["subsystems"]["t"] = {{"fmu", kBroken + "/texts3.fmu"}, {"step", 0.1}};
    m["subsystems"]["w"] = {{"fmu", kBroken + "/texts3.fmu"}, {"step", 0.1}, {"parameters", {{"n", 2}}}};
    m["connections"] = json::array();
    if (!b.connection.is_null()) m["connections"].push_back(b.connection);
    if (!b.record.empty()) m["record"]["variables"] = {b.record};
    for (const std::string& verb : kVerbs) {
      Outcome o = stride(s, verb, write_manifest(s, "bad.json", m), {});
      CHECK(o.code == 2);
      CHECK(contains(o.err, b.pointer));
      CHECK(contains(o.err, b.why));
    }
  }
  // validate lists the String and Binary inputs no connection feeds, at their start values.
  {
    Scratch s;
    json m = text_pair(3, 0.1, 0.1, 0.2);
    m["subsystems"]["a"]["parameters"] = {{"s_u", std::string(1000, 'x')}};
    Outcome o = stride(s, "validate", write_manifest(s, "valid.json", m), {});
    CHECK(o.code == 0);
    CHECK(contains(o.out, "unconnected FMU input, kept at its start value: a.s_u = \"xxxxx"));
    CHECK(contains(o.out, "xxx...\"\n"));
    CHECK(contains(o.out, "unconnected FMU input, kept at its start value: a.b_u = \"\"\n"));
    CHECK(!contains(o.out, "b.s_u ="));  // fed by a.s_t
    CHECK(!contains(o.out, "b.b_u ="));
  }
  // Two connections into one String input.
  Scratch s;
  json m = text_pair(2, 0.1, 0.1, 0.2);
  m["connections"].push_back({{"from", "a.s_q"}, {"to", "b.s_u"}});
  Outcome o = stride(s, "validate", write_manifest(s, "twice.json", m), {});
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/connections/1/to"));
  CHECK(contains(o.err, "input \"b.s_u\" is already fed by /connections/0"));
  // Two connections into one element of a String array input.
  Scratch u;
  json a = text_pair(3, 0.1, 0.1, 0.2);
  a["subsystems"]["t"] = {{"fmu", kBroken + "/texts3.fmu"}, {"step", 0.1}};
  a["connections"] = {{{"from", "t.s_a[0:2]"}, {"to", "t.s_u[0:2]"}}, {{"from", "a.s_t"}, {"to", "t.s_u[1]"}}};
  Outcome p = stride(u, "validate", write_manifest(u, "twice.json", a), {});
  CHECK(p.code == 2);
  CHECK(contains(p.err, "/connections/1/to"));
  CHECK(contains(p.err, "input \"t.s_u[1]\" is already fed by /connections/0"));
}

TEST_CASE("fmu: a String that changes at events is recorded at its events: event rows hold the text before and after") {
  // stair: label = "step <counter>", both changed by each time event (every second); as model
  // exchange with event rows, every row (grid, before and after an event) has the label of its
  // counter; as co-simulation, every row at a communication point.
  for (const std::string fmu : {"stair", "stair3"})
    for (const std::string integrator : {"rk4", ""}) {
      CAPTURE(fmu);
      CAPTURE(integrator);
      Scratch s;
      json m = alone(kBroken + "/" + fmu + ".fmu", 0.3, 5.0, {{"last", 100}}, integrator);
      m["record"] = {{"interval", 0.1}, {"variables", {"s.counter", "s.label"}}};
      if (!integrator.empty()) m["record"]["event_rows"] = true;
      Outcome o = stride(s, "run", write_manifest(s, "stair.json", m), {});
      REQUIRE(o.code == 0);
      const TextTable t = read_text_csv(s.dir / "out" / "results.csv");
      CHECK(!t.ragged);
      // Events at t = 1..5 s, on the 0.1-s grid: the grid's row is the one after, a row before is added.
      REQUIRE(t.rows.size() == (integrator.empty() ? 51u : 56u));
      int wrong = 0, pairs = 0;
      for (std::size_t i = 0; i < t.rows.size(); ++i) {
        const double time = std::stod(t["time"][i]);
        if (integrator.empty() && std::abs(time / 0.3 - std::round(time / 0.3)) > 1e-9) continue;
        wrong += t["s.label"][i] != "step " + t["s.counter"][i];
        if (i > 0 && t["time"][i] == t["time"][i - 1]) {
          ++pairs;
          wrong += std::stoi(t["s.counter"][i]) != std::stoi(t["s.counter"][i - 1]) + 1;
        }
      }
      CHECK(wrong == 0);
      CHECK(pairs == (integrator.empty() ? 0 : 5));
    }
}

// FMI 2 structured array elements named from 1 (element_gain: u[1]..u[3], y[k] = k u[k], as
// Modelica tools write them) and from 0 (element_gain0: u[0]..u[2]): a connection, an SSP
// connector or a start value naming an element as the FMU names it reaches exactly that
// variable (the gains differ, so a value at the wrong element shows); a name the manifest's
// element syntax (from 0) reads as another element is refused with both readings.
TEST_CASE("fmu: FMI 2 array elements named as the FMU names them, counted from 1 or from 0") {
  for (const std::string fmu : {"element_gain", "element_gain0"}) {
    CAPTURE(fmu);
    const int base = fmu == "element_gain" ? 1 : 0;
    const auto el = [&](const std::string& v, int k) { return v + "[" + std::to_string(base + k) + "]"; };
    const std::string file = kBroken + "/" + fmu + ".fmu";
    Scratch s;
    json m = {{"format", 1},
              {"subsystems",
               {{"a",
                 {{"fmu", file},
                  {"step", 0.1},
                  {"parameters", {{el("u", 0), 1.0}, {el("u", 1), 10.0}, {el("u", 2), 100.0}}}}},
                {"b", {{"fmu", file}, {"step", 0.1}}}}},
              {"connections", {{{"from", "a." + el("y", 2)}, {"to", "b.u[0:1]"}}}},
              {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.1}, {"start", 0}, {"end", 0.2}}},
              {"record", {{"interval", 0.1}, {"variables", {"a.y", "b.y"}}}}};
    Outcome o = stride(s, "run", write_manifest(s, "elements.json", m), {});
    REQUIRE(o.code == 0);
    // a: its start values by element name; b: u[first] = a's third output, the others their start 0.5.
    CHECK(o.table["a.y.0"].back() == 1.0);
    CHECK(o.table["a.y.1"].back() == 20.0);
    CHECK(o.table["a.y.2"].back() == 300.0);
    CHECK(o.table["b.y.0"].back() == 300.0);
    CHECK(o.table["b.y.1"].back() == 1.0);
    CHECK(o.table["b.y.2"].back() == 1.5);
    // The same system as an SSP whose connectors are the FMU's variables: y of a's last element
    // into b's first input by their FMI names.
    fs::create_directories(s.dir / "ssp" / "resources");
    fs::copy_file(file, s.dir / "ssp" / "resources" / "g.fmu");
    std::string component;
    for (const std::string name : {"a", "b"}) {
      component += "      <ssd:Component name=\"" + name + "\" source=\"resources/g.fmu\"><ssd:Connectors>\n";
      for (int k = 0; k < 3; ++k)
        component += "        <ssd:Connector name=\"" + el("u", k) +
                     "\" kind=\"input\"><ssc:Real/></ssd:Connector>\n"
                     "        <ssd:Connector name=\"" +
                     el("y", k) + "\" kind=\"output\"><ssc:Real/></ssd:Connector>\n";
      component += "      </ssd:Connectors></ssd:Component>\n";
    }
    std::ofstream(s.dir / "ssp" / "SystemStructure.ssd")
        << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ssd:SystemStructureDescription version=\"1.0\" name=\"e\" "
           "xmlns:ssd=\"http://ssp-standard.org/SSP1/SystemStructureDescription\" "
           "xmlns:ssc=\"http://ssp-standard.org/SSP1/SystemStructureCommon\">\n  <ssd:System name=\"root\">\n"
           "    <ssd:Elements>\n" +
               component +
               "    </ssd:Elements>\n    <ssd:Connections>\n"
               "      <ssd:Connection startElement=\"a\" startConnector=\"" +
               el("y", 2) + "\" endElement=\"b\" endConnector=\"" + el("u", 0) +
               "\"/>\n    </ssd:Connections>\n  </ssd:System>\n"
               "  <ssd:DefaultExperiment startTime=\"0\" stopTime=\"0.2\"/>\n</ssd:SystemStructureDescription>\n";
    Outcome p = stride(s, "run", (s.dir / "ssp" / "SystemStructure.ssd").string(),
                       {"/coupling/macro_step=0.1", "/subsystems/a/step=0.1", "/subsystems/b/step=0.1"});
    REQUIRE(p.code == 0);
    CHECK(p.table["b.y.0"].back() == 3 * 0.5 * 1.0);  // a's inputs at their start 0.5: y[last] = 1.5, times 1
    CHECK(p.table["b.y.1"].back() == 1.0);
    CHECK(p.table["b.y.2"].back() == 1.5);
    if (base == 0) continue;
    // Counted from 1, "a.y[1]" is the FMU's y[1] (element 0) or element 1 (the FMU's y[2]).
    m["connections"][0]["from"] = "a.y[1]";
    Outcome q = stride(s, "validate", write_manifest(s, "ambiguous.json", m), {});
    CHECK(q.code == 2);
    CHECK(contains(q.err, "/connections/0/from"));
    CHECK(contains(q.err,
                   "\"a.y[1]\" can be read two ways: the FMU's variable \"y[1]\", element 0 of port \"y\" (write "
                   "\"a.y[0:1]\"), or element 1 of port \"y\" counted from 0, the FMU's variable \"y[2]\" (write "
                   "\"a.y[1:2]\")"));
    m["connections"][0]["from"] = "a.y[1,2]";  // no such variable: the ports are listed
    Outcome r = stride(s, "validate", write_manifest(s, "unknown.json", m), {});
    CHECK(r.code == 2);
    CHECK(contains(r.err, "/connections/0/from"));
    CHECK(contains(r.err, "has no port \"y[1,2]\""));
  }
}

// Model exchange across communication points where no input changes: the integrator keeps its
// history (the host's grid time k·H and the solver's own sum of steps are one time), so CVODE
// at rtol 1e-10 follows x' = x, y = x = [1, 2, 3] e^t (state_space3 with A = I, B = 0, C = I)
// to 1e-8 relative at t = 10 s over 1000 communication points, with few rejected steps.
TEST_CASE("fmu: model exchange continues across communication points where no input changed") {
  Scratch s;
  json m = alone(kBroken + "/state_space3.fmu", 0.01, 10.0,
                 {{"r", 3},
                  {"A", {1, 0, 0, 0, 1, 0, 0, 0, 1}},
                  {"B", {0, 0, 0}},
                  {"C", {1, 0, 0, 0, 1, 0, 0, 0, 1}},
                  {"D", {0, 0, 0}},
                  {"x0", {1, 2, 3}}},
                 "");
  m["subsystems"]["s"]["integrator"] = {{"plugin", "cvode"}, {"parameters", {{"rtol", 1e-10}, {"atol", 1e-12}}}};
  m["record"] = {{"interval", 1.0}, {"variables", {"s.y"}}};
  Outcome o = stride(s, "run", write_manifest(s, "state_space.json", m), {});
  REQUIRE(o.code == 0);
  REQUIRE(o.table["time"].back() == 10.0);
  for (int k = 0; k < 3; ++k) {
    const double exact = (k + 1) * std::exp(10.0), y = o.table["s.y." + std::to_string(k)].back();
    CAPTURE(k);
    CHECK(std::abs(y / exact - 1) < 1e-8);
  }
  const json& cvode = o.summary["subsystems"]["s"]["statistics"]["integrator"];
  INFO(cvode.dump());
  CHECK(cvode["rejected_steps"].get<int>() < 20);  // 477 when every communication point restarted it
  CHECK(cvode["steps"].get<int>() < 1500);         // 7167 then
}

// Start-up: a follower FMU (tests/fmus/follower.c) keeps over the run the value its input had
// when it left initialization mode, so its output shows what the importer passed it before.
TEST_CASE("initialization exchange: outputs passed in initialization mode until they settle, then all leave") {
  Scratch s;
  const std::string follower = kBroken + "/follower.fmu";
  // A chain src -> f1 -> f2 written downstream first (the order sequential start-up takes):
  // src's output is 2 m (b = 2, u = 0).
  const std::string file = (s.dir / "chain.json").string();
  std::ofstream(file) << R"({"format": 1, "subsystems": {
    "f2": {"fmu": ")" << follower
                      << R"(", "step": 0.1},
    "f1": {"fmu": ")" << follower
                      << R"(", "step": 0.1},
    "src": {"fmu": ")" << follower
                      << R"(", "step": 0.1, "parameters": {"b": 2}}},
  "connections": [{"from": "src.y", "to": "f1.u"}, {"from": "f1.y", "to": "f2.u"}],
  "coupling": {"scheme": "jacobi", "macro_step": 0.1, "end": 0.5}})";
  // Sequential (the default): f2 leaves first, with the input it had before src's value came.
  Outcome seq = stride(s, "run", file);
  REQUIRE(seq.status() == "completed");
  CHECK(seq.table["f2.y"].back() == 0.0);
  // Exchange: every follower starts from the source's value, whatever the order.
  for (const char* scheme : {"jacobi", "gauss_seidel"}) {
    CAPTURE(scheme);
    Outcome ex =
        stride(s, "run", file, {"/coupling/initialization=exchange", std::string("/coupling/scheme=") + scheme});
    REQUIRE(ex.status() == "completed");
    for (const char* col : {"f1.y", "f2.y", "src.y"}) {
      CAPTURE(col);
      CHECK(ex.table[col].front() == 2.0);
      CHECK(ex.table[col].back() == 2.0);
    }
  }
  // A loop f -> gain k -> f: the fixed point y = b / (1 - k) for |k| < 1 (b = 1, k = 0.5: 2 m);
  // with k = 2 the exchange diverges, and the run says so instead of starting from a value.
  const json loop = {
      {"format", 1},
      {"subsystems",
       {{"f", {{"fmu", follower}, {"step", 0.1}, {"parameters", {{"b", 1}}}}},
        {"g", {{"fmu", kFmus + "/gain.fmu"}, {"step", 0.1}, {"parameters", {{"k", 0.5}}}}}}},
      {"connections", {{{"from", "f.y"}, {"to", "g.u"}}, {{"from", "g.y"}, {"to", "f.u"}}}},
      {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.1}, {"end", 0.5}, {"initialization", "exchange"}}}};
  const std::string loop_file = write_manifest(s, "loop.json", loop);
  Outcome settled = stride(s, "run", loop_file);
  REQUIRE(settled.status() == "completed");
  CHECK(std::abs(settled.table["f.y"].back() - 2.0) < 1e-11);
  Outcome diverged = stride(s, "run", loop_file, {"/subsystems/g/parameters/k=2"});
  CHECK(diverged.status() == "failed");
  CHECK(contains(diverged.message(), "initialization exchange: the outputs did not settle in 100 sweeps"));
  // A mistake in the option is named with what is allowed.
  Outcome typo = stride(s, "validate", loop_file, {"/coupling/initialization=exchanged"});
  CHECK(typo.code == 2);
  CHECK(contains(typo.err, "/coupling/initialization"));
  CHECK(contains(typo.err, "sequential"));
}
