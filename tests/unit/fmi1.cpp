// FMI 1.0 FMUs as subsystems, co-simulation and model exchange, with FMUs built by this project
// from C sources against the FMI 1.0 header (tests/fmus: spring.c, stair.c, ball.c, types.c on
// the frame test_fmu.h / test_fmu1.h), the cases the FMI 2 tests cover: values against closed
// forms (a damped oscillator, a ramp under a stair of time events, bounce times of a ball),
// parameters and start values from the manifest, direct feedthrough and every FMI 1.0 type,
// negated aliases, time and state events, the model's request to end the simulation, errors
// (a failing step or derivative, a refused instance or initialization), `plugins describe`, and
// the descriptions against the FMI 1.0 schema.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "stride_run.hpp"
#include "files.hpp"
#include "fmu_commands.hpp"

namespace {

namespace fs = std::filesystem;
using stride_test::json;
using stride_test::Table;

const std::string kTestFmus = STRIDE_TEST_FMU_DIR;

using stride_test::contains;
using stride_test::slurp;

using stride_test::fmu_commands::Outcome;
using stride_test::fmu_commands::Scratch;
using stride_test::fmu_commands::stride;
using stride_test::fmu_commands::write_manifest;

// One FMU alone as subsystem "s", stepped with h (macro step and record interval h too).
json alone(const std::string& fmu, double h, double end, const json& parameters, const std::string& integrator = "") {
  json sub = {{"fmu", kTestFmus + "/" + fmu}, {"parameters", parameters}, {"step", h}};
  if (!integrator.empty()) sub["integrator"] = integrator;
  return {{"format", 1},
          {"subsystems", {{"s", sub}}},
          {"connections", json::array()},
          {"coupling", {{"scheme", "jacobi"}, {"macro_step", h}, {"start", 0}, {"end", end}}},
          {"record", {{"interval", h}}}};
}

// x(t) of m x'' + d x' + k x = 0 from x(0) = x0, x'(0) = 0 (underdamped).
double damped(double t, double m, double k, double d, double x0) {
  const double w = std::sqrt(k / m), z = d / (2 * std::sqrt(k * m)), wd = w * std::sqrt(1 - z * z);
  return x0 * std::exp(-z * w * t) * (std::cos(wd * t) + z * w / wd * std::sin(wd * t));
}

// The stair's ramp (period 1 s): for t in [k, k + 1), x = k (k + 1) / 2 + (k + 1)(t - k).
double stair_x(double t) {
  const double k = std::floor(t + 1e-9);
  return k * (k + 1) / 2 + (k + 1) * (t - k);
}

}  // namespace

TEST_CASE("fmi1: the damped oscillator as co-simulation and model exchange against its closed form") {
  // omega = 2 pi, zeta = 0.032; m, k, d and the start position x set in the manifest.
  const double m = 2, k = 2 * 4 * std::numbers::pi * std::numbers::pi, d = 0.8, x0 = 0.5;
  const json params = {{"m", m}, {"k", k}, {"d", d}, {"x", x0}};
  struct Case {
    std::string fmu, integrator;
    double tolerance;
  };
  for (const Case& c : {Case{"spring1_cs.fmu", "", 1e-9}, Case{"spring1_me.fmu", "rk4", 1e-6}}) {
    CAPTURE(c.fmu);
    Scratch s;
    Outcome o = stride(s, "run", write_manifest(s, "spring.json", alone(c.fmu, 0.01, 2.0, params, c.integrator)));
    REQUIRE(o.code == 0);
    CHECK(o.status() == "completed");
    CHECK(o.summary["subsystems"]["s"]["report"]["fmi_version"] == "1.0");
    const Table& t = o.table;
    REQUIRE(t.rows() == 201);
    double worst = 0.0, accel = 0.0;
    bool negated = true;
    for (std::size_t i = 0; i < t.rows(); ++i) {
      worst = std::max(worst, std::abs(t["s.x"][i] - damped(t["time"][i], m, k, d, x0)));
      accel = std::max(accel, std::abs(t["s.a"][i] + (k * t["s.x"][i] + d * t["s.v"][i]) / m));
      negated = negated && t["s.minus_x"][i] == -t["s.x"][i];  // the negated alias
    }
    MESSAGE(c.fmu << ": largest error " << worst << " m");
    CHECK(worst < c.tolerance);
    CHECK(accel < 1e-9);
    CHECK(negated);
    CHECK(t["s.x"][0] == x0);
    CHECK(s.leftovers() == 0);
  }
}

TEST_CASE("fmi1: a force input reaches the acceleration at once (DirectDependency), through a unit conversion") {
  // f = 2 N, given as 0.002 kN by a signal source (converted at the connection): the FMU's
  // a = (f - k x - d v) / m with k = d = 0.
  const json m = {
      {"format", 1},
      {"subsystems",
       {{"src",
         {{"plugin", "signal"},
          {"step", 0.01},
          {"parameters", {{"outputs", {{"f", {{"constant", 0.002}, {"unit", "kN"}}}}}}}}},
        {"s",
         {{"fmu", kTestFmus + "/spring1_cs.fmu"}, {"step", 0.01}, {"parameters", {{"m", 2}, {"k", 0}, {"x", 0}}}}}}},
      {"connections", {{{"from", "src.f"}, {"to", "s.f"}}}},
      {"coupling",
       {{"scheme", "gauss_seidel"}, {"order", {"src", "s"}}, {"macro_step", 0.01}, {"start", 0}, {"end", 0.5}}},
      {"record", {{"interval", 0.01}}}};
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "force.json", m));
  REQUIRE(o.code == 0);
  const Table& t = o.table;
  // Free motion under a constant force: a = f / m = 1, v = t, x = t^2 / 2 (RK4: exact).
  for (std::size_t i = 0; i < t.rows(); ++i) {
    CHECK(t["s.a"][i] == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(t["s.x"][i] == doctest::Approx(t["time"][i] * t["time"][i] / 2).epsilon(1e-9));
  }
  // describe lists the feedthrough of a (DirectDependency f) and none for x.
  Outcome d = stride(s, "plugins describe", kTestFmus + "/spring1_cs.fmu");
  REQUIRE(d.code == 0);
  CHECK(contains(d.out, "FMI 1.0"));
  CHECK(contains(d.out, "  out a [1 x m/s2] feedthrough\n"));
  CHECK(contains(d.out, "  out x [1 x m]\n"));
  CHECK(contains(d.out, "  in  f [1 x N]\n"));
}

TEST_CASE("fmi1: every FMI 1.0 type through two FMUs crosswise, parameters and Strings from the manifest") {
  struct Type {
    std::string name;
    json a, b;  // a's parameter (the FMU's start value), b's
  };
  const std::vector<Type> types = {
      {"f64", 1.5, 0.1}, {"i32", -2000000000, 2147483647}, {"bool", true, false}, {"enum", 2, 3}};
  json m = {
      {"format", 1},
      {"subsystems",
       {{"a", {{"fmu", kTestFmus + "/types1.fmu"}, {"step", 0.1}}},
        {"b", {{"fmu", kTestFmus + "/types1.fmu"}, {"step", 0.1}, {"parameters", {{"s_p", "from b's manifest"}}}}}}},
      {"connections", {{{"from", "b.s_q"}, {"to", "a.s_u"}}}},
      {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.1}, {"start", 0}, {"end", 0.3}}},
      {"record", {{"variables", {"a.s_y"}}}}};
  for (const auto& t : types) {
    for (const std::string v : {"a.y_", "b.y_", "a.q_"}) m["record"]["variables"].push_back(v + t.name);
    m["subsystems"]["b"]["parameters"]["p_" + t.name] = t.b;
    m["connections"].push_back({{"from", "a.q_" + t.name}, {"to", "b.u_" + t.name}});
    m["connections"].push_back({{"from", "b.q_" + t.name}, {"to", "a.u_" + t.name}});
  }
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "types.json", m));
  REQUIRE(o.code == 0);
  const std::size_t last = o.table.rows() - 1;
  auto number = [](const json& x) { return x.is_boolean() ? double(x.get<bool>()) : x.get<double>(); };
  for (const auto& t : types) {
    CAPTURE(t.name);
    CHECK(o.table["a.y_" + t.name][last] == number(t.b));
    CHECK(o.table["b.y_" + t.name][last] == number(t.a));
    CHECK(o.table["a.q_" + t.name][last] == number(t.a));
  }
  // b's String parameter, copied to its output s_q, fed into a's String input, out of a's s_y.
  CHECK(contains(slurp(s.dir / "out" / "results.csv"), "from b's manifest"));
  // describe: the enumeration's items counted from 1, the String variables listed.
  Outcome d = stride(s, "plugins describe", kTestFmus + "/types1.fmu");
  REQUIRE(d.code == 0);
  CHECK(contains(d.out, "1 = low, 2 = middle, 3 = high"));
  CHECK(contains(d.out, "  out s_y [1 x String] feedthrough\n"));
  CHECK(contains(d.out, "  out s_q [1 x String]\n"));
}

TEST_CASE("fmi1: time events as co-simulation and model exchange, the ramp exact, the model's end of the run") {
  for (const double h : {0.25, 0.3}) {
    for (const std::string fmu : {"stair1_cs.fmu", "stair1_me.fmu"}) {
      CAPTURE(h);
      CAPTURE(fmu);
      Scratch s;
      const std::string integrator = contains(fmu, "_me") ? "rk4" : "";
      Outcome o = stride(s, "run", write_manifest(s, "stair.json", alone(fmu, h, 6.0, {{"last", 100}}, integrator)));
      REQUIRE(o.code == 0);
      const Table& t = o.table;
      int wrong = 0;
      for (std::size_t i = 0; i < t.rows(); ++i) {
        const double time = t["time"][i];
        wrong += t["s.counter"][i] != std::floor(time + 1e-9) + 1;
        wrong += std::abs(t["s.x"][i] - stair_x(time)) > 1e-10 * std::max(1.0, stair_x(time));
        wrong += t["s.settled"][i] != t["s.counter"][i] - 1;  // three rounds of event iteration each
      }
      CHECK(wrong == 0);
      CHECK(t["time"].back() == doctest::Approx(6.0));
      CHECK(t["s.counter"].back() == 7);
    }
  }
  // Model exchange: the model asks to end the simulation at counter = last = 10 (t = 9 s).
  Scratch s;
  Outcome o =
      stride(s, "run", write_manifest(s, "stair.json", alone("stair1_me.fmu", 0.3, 12.0, json::object(), "rk4")));
  REQUIRE(o.code == 0);
  CHECK(o.status() == "completed");
  CHECK(contains(o.message(), "ended the simulation at t = 9"));
  CHECK(o.table["time"].back() == doctest::Approx(9.0));
  CHECK(o.table["s.x"].back() == doctest::Approx(45.0).epsilon(1e-11));
  // Co-simulation: FMI 1.0 has no way to ask for the end; the stair's fmiDiscard at t = 9 s
  // shortens the step to fmiLastSuccessfulTime, and its next fmiDoStep fails.
  Scratch c;
  Outcome cs = stride(c, "run", write_manifest(c, "stair.json", alone("stair1_cs.fmu", 0.4, 12.0, json::object())));
  CHECK(cs.code == 1);
  CHECK(cs.status() == "failed");
  CHECK(contains(cs.message(), "fmiDoStep returned fmiError at t = 9;"));
  CHECK(contains(cs.message(), "after the model asked to terminate"));
  CHECK(cs.table["time"].back() >= 8.8);
  CHECK(cs.table["s.x"].back() == doctest::Approx(stair_x(cs.table["time"].back())).epsilon(1e-11));
}

TEST_CASE("fmi1: state events of the bouncing ball located to 1e-10 s, the lamp's time events, a negated Boolean") {
  const double g = 9.81, e = 0.8, h0 = 1.0, flash = 0.1, end = 3.0;
  std::vector<double> bounces;
  const double v1 = std::sqrt(2 * g * h0);
  for (double t = std::sqrt(2 * h0 / g), k = 1; t < end; t += 2 * std::pow(e, k) * v1 / g, ++k) bounces.push_back(t);
  long flashes = 0;
  for (double b : bounces) flashes += b + flash <= end;
  Scratch s;
  Outcome o = stride(s, "run", write_manifest(s, "ball.json", alone("ball1.fmu", 0.01, end, json::object(), "rk4")));
  REQUIRE(o.code == 0);
  const json& report = o.summary["subsystems"]["s"]["report"];
  REQUIRE(report["state_event_times"].size() == bounces.size());
  double worst = 0.0;
  for (std::size_t i = 0; i < bounces.size(); ++i)
    worst = std::max(worst, std::abs(report["state_event_times"][i].get<double>() - bounces[i]));
  MESSAGE("bounce times within " << worst << " s of the closed form");
  CHECK(worst < 1e-10);
  CHECK(o.summary["subsystems"]["s"]["statistics"]["time_events"] == flashes);
  CHECK(o.table["s.bounces"].back() == double(bounces.size()));
  int wrong = 0;
  for (std::size_t i = 0; i < o.table.rows(); ++i) wrong += o.table["s.lamp_off"][i] != 1.0 - o.table["s.lamp"][i];
  CHECK(wrong == 0);
  // Start values of the states from the manifest: dropped from 2 m at 1 m/s upwards.
  Outcome up =
      stride(s, "run", write_manifest(s, "up.json", alone("ball1.fmu", 0.01, 1.0, {{"h", 2.0}, {"v", 1.0}}, "rk4")));
  REQUIRE(up.code == 0);
  const json times = up.summary["subsystems"]["s"]["report"]["state_event_times"];
  REQUIRE(times.size() >= 1);
  CHECK(times[0].get<double>() == doctest::Approx((1.0 + std::sqrt(1.0 + 2 * g * 2.0)) / g).epsilon(1e-10));
  // Alone, on its default experiment (model exchange only: CVODE at its tolerance).
  Outcome alone_run = stride(s, "run", kTestFmus + "/ball1.fmu");
  REQUIRE(alone_run.code == 0);
  CHECK(alone_run.summary["subsystems"]["ball1"]["report"]["state_event_times"].size() == bounces.size());
}

TEST_CASE("fmi1: errors end the run as failed naming the FMU and the function; refused instances before the run") {
  struct Failing {
    std::string fmu, integrator, function;
  };
  for (const Failing& f :
       {Failing{"step_error1_cs.fmu", "", "fmiDoStep"}, Failing{"step_error1_me.fmu", "rk4", "fmiGetDerivatives"}}) {
    CAPTURE(f.fmu);
    Scratch s;
    Outcome o = stride(s, "run", write_manifest(s, "fail.json", alone(f.fmu, 0.01, 1.0, json::object(), f.integrator)));
    CHECK(o.code == 1);
    CHECK(o.status() == "failed");
    CHECK(contains(o.message(), f.fmu));
    CHECK(contains(o.message(), f.function + " returned fmiError at t = 0.5"));
    CHECK(contains(o.message(), "the model fails from t = 0.5 on"));  // the FMU's own message, through its logger
    CHECK(contains(slurp(s.dir / "out" / "log.txt"), "error [model]: " + f.function));
    CHECK(o.table.rows() >= 50);  // the rows up to the failure are kept
    CHECK(o.table.rows() <= 51);
    CHECK(s.leftovers() == 0);
  }
  // Refused before anything runs: exit 2 with the subsystem's pointer and the FMU's message.
  Scratch s;
  Outcome n =
      stride(s, "validate", write_manifest(s, "null.json", alone("null_instance1.fmu", 0.01, 1.0, json::object())));
  CHECK(n.code == 2);
  CHECK(contains(n.err, "/subsystems/s/fmu"));
  CHECK(contains(n.err, "fmiInstantiateSlave returned NULL"));
  CHECK(contains(n.err, "this FMU refuses every instance"));
  Outcome i = stride(s, "validate", write_manifest(s, "init.json", alone("init_error1.fmu", 0.01, 1.0, {{"x", 2.0}})));
  CHECK(i.code == 2);
  CHECK(contains(i.err, "fmiInitializeSlave returned fmiError"));
  CHECK(contains(i.err, "the start value 2 is above 1.5"));
  Outcome ok =
      stride(s, "validate", write_manifest(s, "init_ok.json", alone("init_error1.fmu", 0.01, 1.0, {{"x", 1.0}})));
  CHECK(ok.code == 0);
  CHECK(s.leftovers() == 0);
}

TEST_CASE("fmi1: plugins describe says FMI 1.0, the interface, states and event indicators") {
  struct Case {
    std::string fmu, interface;
    int states, indicators;
  };
  for (const Case& c : {Case{"spring1_cs.fmu", "co-simulation", 2, 0}, Case{"spring1_me.fmu", "model exchange", 2, 0},
                        Case{"ball1.fmu", "model exchange", 2, 1}}) {
    CAPTURE(c.fmu);
    Scratch s;
    Outcome o = stride(s, "plugins describe", kTestFmus + "/" + c.fmu);
    REQUIRE(o.code == 0);
    CHECK(contains(o.out, "FMI 1.0, " + c.interface + "; generated by Stride tests (hand-written)\n"));
    CHECK(contains(o.out, std::to_string(c.states) + " continuous states, " + std::to_string(c.indicators) +
                              " event indicators\n"));
    const auto j = stride_test::run_command("{ '" + std::string(STRIDE_EXE) + "' plugins describe '" + kTestFmus + "/" +
                                            c.fmu + "' --json 2>/dev/null; }");
    REQUIRE(j.exit_code == 0);
    const json f = json::parse(j.output)["fmu"];
    CHECK(f["fmi_version"] == "1.0");
    CHECK(f["interfaces"] == json::array({c.interface}));
    CHECK(f["states"] == c.states);
    CHECK(f["event_indicators"] == c.indicators);
  }
}

TEST_CASE("fmi1: the test FMUs' modelDescription.xml validate against the FMI 1.0 schema") {
  const auto lint = stride_test::run_command("xmllint --version");
  INFO("xmllint (Debian package libxml2-utils) is needed: " << lint.output);
  REQUIRE(lint.exit_code == 0);
  const fs::path schema = fs::path(STRIDE_SOURCE_DIR) / "tests" / "standards" / "fmi1" / "fmiModelDescription.xsd";
  int n = 0;
  for (const std::string name : {"spring1_cs", "spring1_me", "stair1_cs", "stair1_me", "ball1", "types1",
                                 "step_error1_cs", "step_error1_me", "null_instance1", "init_error1"}) {
    CAPTURE(name);
    const fs::path xml = fs::path(kTestFmus) / (name + ".xml");  // what is packed as modelDescription.xml
    const auto r =
        stride_test::run_command("xmllint --noout --schema '" + schema.string() + "' '" + xml.string() + "'");
    INFO(r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "validates"));
    CHECK(contains(slurp(xml), "fmiVersion=\"1.0\""));
    ++n;
  }
  CHECK(n == 10);
}
