// Hydraulic plugins against published and independent results:
//  - the static-equilibrium initialization (Peiret 2018 Eq. 41) of the cylinder plugin
//    reproduces Table 3, with the required force taken from the crane geometry alone;
//  - at that equilibrium the pressures stay constant under an integrator plugin;
//  - the monolithic crane + hydraulics reference stays at rest until the valve moves and then
//    follows the motion of BENCHMARKS.md §1 ("Shape of the motion", an independent stiff
//    solution of the same equations);
//  - the monolithic reference integrated adaptively by CVODE BDF and by the trapezoidal rule at
//    0.5 ms (two independent integrations of Eq. 42) give the same s1 (and s2), and CVODE's s
//    converges to it as rtol shrinks;
//  - the three-volume circuit holds its closed-centre equilibrium, and at a constant actuator
//    rate with an open spool reaches the analytic steady state of its orifice flows;
//  - the cylinder's force, pressure (volume-rate inputs) and pressure_rate couplings integrate
//    the same equations.
#include <doctest/doctest.h>

#include "shipped_plugins.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <stride/host/graph/adapters.hpp>
#include <stride/host/load/registry.hpp>

#include "../../plugins/common/crane.hpp"
#include "../../plugins/common/hydraulics.hpp"

using stride::json;
using stride::host::PluginRegistry;

namespace {

// Constant input values per port index.
class ConstantInputs final : public stride::Inputs {
 public:
  explicit ConstantInputs(std::vector<double> values) : v_(std::move(values)) {}
  std::span<const double> evaluate(std::size_t port, double) override { return {&v_.at(port), 1}; }
  void set(std::size_t port, double value) { v_.at(port) = value; }

 private:
  std::vector<double> v_;
};

using stride_test::registry;

// Index of a port by name among the ports of one direction.
std::size_t port_index(const std::vector<stride::PortSpec>& ports, const std::string& name, stride::Direction d) {
  std::size_t k = 0;
  for (const auto& p : ports) {
    if (p.direction != d) continue;
    if (p.name == name) return k;
    ++k;
  }
  throw std::out_of_range("no port " + name);
}

// Required actuator forces at the crane's initial configuration, from the geometry only.
Eigen::Vector2d crane_equilibrium_forces(int actuators) {
  const stride::crane::Geometry g;
  return stride::crane::equilibrium_forces(g, Eigen::Vector2d(g.theta1_0, g.theta2_0), actuators);
}

struct EquilibriumResult {
  double kappa, p1, p2, dp1, dp2, f_h;
};

// Cylinder at s = s0, ṡ = 0; f_eq = −f_required (the multibody effective force, λ = −f̃).
EquilibriumResult cylinder_equilibrium(double s0, double f_required) {
  auto ode = registry().create_ode("cylinder", json::object());
  REQUIRE(ode);
  const auto ports = ode->ports();
  ConstantInputs in({0.0, 0.0, 0.0});
  in.set(port_index(ports, "s", stride::Direction::input), s0);
  in.set(port_index(ports, "s_dot", stride::Direction::input), 0.0);
  in.set(port_index(ports, "f_eq", stride::Direction::input), -f_required);
  ode->bind(in);
  std::vector<double> x(ode->state_size()), f(ode->state_size()), y(8);
  ode->initial_state(0.0, x);
  ode->equilibrate(0.0, x);
  ode->derivatives(0.0, x, f);
  ode->outputs(0.0, x, y);
  const json r = ode->report();
  return {r.at("kappa0").get<double>(), x[0], x[1], f[0], f[1], y[0]};
}

}  // namespace

TEST_CASE("cylinder plugin: static equilibrium of Eq. 41 reproduces Table 3") {
  const Eigen::Vector2d f1 = crane_equilibrium_forces(1);
  CHECK(f1[0] == doctest::Approx(8829.0).epsilon(1e-4));  // BENCHMARKS §1
  const stride::crane::Geometry g;
  const auto a = stride::crane::actuators(g, Eigen::Vector2d(g.theta1_0, g.theta2_0), Eigen::Vector2d::Zero());

  const EquilibriumResult e1 = cylinder_equilibrium(a.s[0], f1[0]);
  std::printf("actuator 1: f = %.3f N, kappa = %.6f, p1 = %.4f MPa, p2 = %.4f MPa, dp = %.2e %.2e Pa/s\n",
              f1[0], e1.kappa, e1.p1 / 1e6, e1.p2 / 1e6, e1.dp1, e1.dp2);
  CHECK(std::abs(e1.kappa - 0.45435) < 1e-4);
  CHECK(std::abs(e1.p1 - 3.17e6) < 0.01e6);
  CHECK(std::abs(e1.p2 - 4.53e6) < 0.01e6);
  CHECK(e1.f_h == doctest::Approx(f1[0]).epsilon(1e-10));  // positive: extends the actuator

  // Double-actuated crane: link 2 hangs vertically, so actuator 2 carries no force at rest.
  const Eigen::Vector2d f2 = crane_equilibrium_forces(2);
  CHECK(f2[0] == doctest::Approx(f1[0]).epsilon(1e-12));
  CHECK(std::abs(f2[1]) < 1e-9);
  const EquilibriumResult e2 = cylinder_equilibrium(a.s[1], f2[1]);
  std::printf("actuator 2: f = %.3e N, kappa = %.6f, p1 = %.4f MPa, p2 = %.4f MPa\n", f2[1], e2.kappa,
              e2.p1 / 1e6, e2.p2 / 1e6);
  CHECK(std::abs(e2.kappa - 0.5) < 1e-4);
  CHECK(std::abs(e2.p1 - 3.85e6) < 0.01e6);
  CHECK(std::abs(e2.p2 - 3.85e6) < 0.01e6);
}

TEST_CASE("cylinder plugin: at equilibrium the pressures stay at rest under an integrator") {
  const double f = crane_equilibrium_forces(1)[0];
  const EquilibriumResult e = cylinder_equilibrium(0.5, f);
  // Rates vanish up to round-off of flows ~1.5e-2 m^3/s times beta/V ~ 1e12 1/m^3*Pa.
  CHECK(std::abs(e.dp1) < 1e-3);
  CHECK(std::abs(e.dp2) < 1e-3);

  auto ode = registry().create_ode("cylinder", json::object());
  auto integ = registry().create_integrator("trapezoidal", json::object());
  REQUIRE(ode);
  REQUIRE(integ);
  auto sub = stride::host::make_ode_subsystem(ode, integ);
  ConstantInputs in({0.5, 0.0, -f});
  sub->bind(in);
  sub->initialize(0.0);
  sub->equilibrate(0.0);
  std::vector<double> y(8);
  double t = 0.0;
  for (int i = 0; i < 1000; ++i) t = sub->step(t, 1e-4);
  sub->outputs(y);
  CHECK(std::abs(y[1] - e.p1) < 1e-3);  // Pa, after 0.1 s
  CHECK(std::abs(y[2] - e.p2) < 1e-3);
  CHECK(y[0] == doctest::Approx(f).epsilon(1e-10));

  // The same cylinder away from equilibrium does move: the check above can fail.
  in.set(2, -0.5 * f);
  auto sub2 = stride::host::make_ode_subsystem(registry().create_ode("cylinder", json::object()),
                                               registry().create_integrator("trapezoidal", json::object()));
  sub2->bind(in);
  sub2->initialize(0.0);
  sub2->equilibrate(0.0);
  std::vector<double> y2(8);
  sub2->outputs(y2);
  CHECK(y2[0] == doctest::Approx(0.5 * f).epsilon(1e-10));
  in.set(1, 0.01);  // extending at 1 cm/s compresses chamber 1
  t = 0.0;
  for (int i = 0; i < 100; ++i) t = sub2->step(t, 1e-4);
  sub2->outputs(y2);
  CHECK(y2[1] > e.p1);
}

TEST_CASE("crane_monolithic: rest until t = 2 s, then the motion of BENCHMARKS §1") {
  auto sub = registry().create_subsystem("crane_monolithic", json::object());
  REQUIRE(sub);
  ConstantInputs none({});
  sub->bind(none);
  sub->initialize(0.0);
  const json rep = sub->report();
  const json& eq = rep.at("equilibrium").at(0);
  CHECK(std::abs(eq.at("kappa0").get<double>() - 0.45435) < 1e-4);
  CHECK(std::abs(eq.at("p1_0").get<double>() - 3.17e6) < 0.01e6);
  CHECK(std::abs(eq.at("p2_0").get<double>() - 4.53e6) < 0.01e6);

  // Outputs: s, s_dot, p1, p2, f_h, kappa, x_R, y_R, x_R_dot, energy (one actuator).
  std::vector<double> y(10);
  const double h = 5e-4;
  double t = 0.0, rest_dev = 0.0, p1_mid = 0.0, p1_late = 0.0, p1_peak = 0.0, s6 = 0.0, s10 = 0.0;
  const auto wall0 = std::chrono::steady_clock::now();
  for (long i = 1; i <= 20000; ++i) {
    t = sub->step(t, h);
    sub->outputs(y);
    if (i <= 4000) rest_dev = std::max(rest_dev, std::abs(y[0] - 0.5));
    if (i == 8000) p1_mid = y[2];    // t = 4 s
    if (i == 12000) s6 = y[0];       // t = 6 s
    if (i == 14000) p1_late = y[2];  // t = 7 s
    if (i > 12000) p1_peak = std::max(p1_peak, y[2]);
  }
  s10 = y[0];
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  std::printf("monolithic h = 0.5 ms: max|s1-0.5| (t<=2) = %.2e m, s1(6) = %.5f m, s1(10) = %.5f m, "
              "p1(4) = %.4f MPa, p1(7) = %.4f MPa, peak p1 after 6 s = %.4f MPa, wall %.3f s\n",
              rest_dev, s6, s10, p1_mid / 1e6, p1_late / 1e6, p1_peak / 1e6, wall);
  CHECK(rest_dev < 1e-6);
  CHECK(std::abs(s6 - 0.596) < 2e-3);
  CHECK(std::abs(s10 - 0.515) < 2e-3);
  CHECK(std::abs(p1_mid - 3.05e6) < 0.03e6);
  CHECK(std::abs(p1_late - 3.44e6) < 0.03e6);
  CHECK(std::abs(p1_peak - 3.5e6) < 0.05e6);
}

TEST_CASE("crane_monolithic: double-actuated crane starts at Table 3 and Newton failure is reported") {
  auto sub = registry().create_subsystem("crane_monolithic", json{{"actuators", 2}});
  REQUIRE(sub);
  ConstantInputs none({});
  sub->bind(none);
  sub->initialize(0.0);
  const json rep = sub->report();
  const json& eq2 = rep.at("equilibrium").at(1);
  CHECK(std::abs(eq2.at("kappa0").get<double>() - 0.5) < 1e-4);
  CHECK(std::abs(eq2.at("p1_0").get<double>() - 3.85e6) < 0.01e6);
  CHECK(std::abs(eq2.at("p2_0").get<double>() - 3.85e6) < 0.01e6);
  CHECK(rep.at("rest_acceleration_residual").get<double>() < 1e-10);

  // One Newton iteration cannot reach 1e-14 on a step that opens the valve.
  auto strict = registry().create_subsystem("crane_monolithic",
                                            json{{"max_iterations", 1}, {"tolerance", 1e-14}});
  strict->bind(none);
  strict->initialize(0.0);
  CHECK_THROWS_AS(strict->step(2.0, 5e-4), stride::StepFailure);
}

namespace {

// s of every actuator every 10 ms over the 10-s manoeuvre of a crane_monolithic with these
// parameters, stepped at h (a divisor of 10 ms).
std::vector<double> monolithic_s(const json& params, double h, json* statistics = nullptr) {
  auto sub = registry().create_subsystem("crane_monolithic", params);
  REQUIRE(sub);
  ConstantInputs none({});
  sub->bind(none);
  sub->initialize(0.0);
  const int na = params.value("actuators", 1);
  std::vector<double> y(6 * static_cast<std::size_t>(na) + 4), s;
  const long per_sample = std::lround(0.01 / h);
  double t = 0.0;
  for (long i = 1; i <= 1000 * per_sample; ++i) {
    t = sub->step(t, h);
    if (i % per_sample) continue;
    sub->outputs(y);
    for (int k = 0; k < na; ++k) s.push_back(y[static_cast<std::size_t>(k)]);
  }
  CHECK(t == doctest::Approx(10.0).epsilon(1e-12));
  if (statistics) *statistics = sub->statistics();
  return s;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  REQUIRE(a.size() == b.size());
  double e = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

}  // namespace

TEST_CASE("crane_monolithic: adaptive CVODE BDF and the trapezoidal rule integrate Eq. 42 to the same s") {
  for (int na : {1, 2}) {
    CAPTURE(na);
    auto cvode = [&](double rtol, json* stats = nullptr) {
      return monolithic_s(json{{"actuators", na}, {"method", "cvode_bdf"}, {"rtol", rtol}, {"atol", rtol}}, 0.01, stats);
    };
    const auto trapezoidal = monolithic_s(json{{"actuators", na}}, 5e-4);
    const auto tightest = cvode(1e-12);
    // Two independent integrations: agreement to the trapezoidal rule's own O(h^2) error at
    // 0.5 ms (about 3e-8 m here).
    const double independent = max_difference(tightest, trapezoidal);
    std::printf("crane %d: max|s_cvode(rtol 1e-12) - s_trapezoidal(0.5 ms)| = %.3e m\n", na, independent);
    CHECK(independent < 1e-7);
    // CVODE converges to its tightest solution as rtol shrinks, its global error in s staying
    // proportional to the tolerance (not monotone from one rtol to the next: the step
    // sequences differ). Stepping freely past the 10-ms plugin steps, the double crane's global
    // error is up to 49 rtol (1 m) over the 10 s (at most 4.7 rtol when CVODE stopped every 10 ms).
    std::vector<double> errors;
    json stats;
    for (double rtol : {1e-7, 1e-8, 1e-9, 1e-10}) {
      errors.push_back(max_difference(cvode(rtol, &stats), tightest));
      CHECK(errors.back() < 100.0 * rtol * 1.0 /* m */);
      std::printf("crane %d: cvode_bdf rtol = atol = %.0e: %ld steps, %ld rhs, max|s - s(rtol 1e-12)| = %.3e m\n", na,
                  rtol, stats.at("steps").get<long>(), stats.at("rhs_evaluations").get<long>(), errors.back());
      // Stopped and restarted at 2 s, 2.001 s, 6 s, 6.002 s (actuator 2's node at 2 s is shared).
      CHECK(stats.at("restarts_at_valve_kinks").get<long>() == 4);
    }
    CHECK(errors.back() < 0.01 * errors.front());
  }
}

TEST_CASE("crane_monolithic: CVODE steps past the plugin's steps, so their length changes neither its steps nor s") {
  for (int na : {1, 2}) {
    CAPTURE(na);
    const json params{{"actuators", na}, {"method", "cvode_bdf"}, {"rtol", 1e-3}, {"atol", 1e-3}};
    // The whole manoeuvre as one plugin step: CVODE alone, stopping only at the valve kinks.
    auto whole = registry().create_subsystem("crane_monolithic", params);
    ConstantInputs none({});
    whole->bind(none);
    whole->initialize(0.0);
    CHECK(whole->step(0.0, 10.0) == 10.0);
    std::vector<double> y(6 * static_cast<std::size_t>(na) + 4);
    whole->outputs(y);
    const long alone = whole->statistics().at("steps").get<long>();
    json at_10ms, at_1ms;
    const auto s10 = monolithic_s(params, 0.01, &at_10ms);
    const auto s1 = monolithic_s(params, 0.001, &at_1ms);
    const long steps10 = at_10ms.at("steps").get<long>();
    std::printf("crane %d: cvode_bdf rtol 1e-3: %ld steps alone, %ld at 10-ms plugin steps, %ld at 1 ms\n", na, alone,
                steps10, at_1ms.at("steps").get<long>());
    // Stopping at every 10-ms step end took 1053 steps (single crane) instead of about 125.
    // Only the first step after the last valve kink is estimated from the distance to t + h,
    // so the step sequences differ at most slightly, and s within the tolerance.
    CHECK(std::abs(steps10 - alone) <= alone / 20);
    CHECK(std::abs(at_1ms.at("steps").get<long>() - alone) <= alone / 20);
    CHECK(max_difference(s10, s1) < 1e-3 * 1.0 /* m */);
    for (int k = 0; k < na; ++k)
      CHECK(std::abs(s10[s10.size() - static_cast<std::size_t>(na - k)] - y[static_cast<std::size_t>(k)]) < 1e-3);
  }
}

TEST_CASE("crane_monolithic: the method and its tolerances are checked") {
  CHECK_THROWS_WITH_AS(registry().create_subsystem("crane_monolithic", json{{"method", "bdf"}}),
                       doctest::Contains("method"), std::exception);
  CHECK_THROWS_WITH_AS(registry().create_subsystem("crane_monolithic", json{{"method", "cvode_bdf"}, {"rtol", -1e-6}}),
                       doctest::Contains("rtol"), std::exception);
  CHECK_THROWS_WITH_AS(
      registry().create_subsystem("crane_monolithic", json{{"method", "cvode_bdf"}, {"rtol", 0.0}, {"atol", 0.0}}),
      doctest::Contains("rtol > 0 or atol > 0"), std::exception);
}

TEST_CASE("three_volume_circuit: closed-centre equilibrium and steady extension flows") {
  const double f = crane_equilibrium_forces(1)[0];
  {
    auto ode = registry().create_ode("three_volume_circuit", json::object());
    REQUIRE(ode);
    ConstantInputs in({0.5, 0.0, -f});
    ode->bind(in);
    std::vector<double> x(4), dx(4), y(5);
    ode->initial_state(0.0, x);
    ode->equilibrate(0.0, x);
    ode->derivatives(0.0, x, dx);
    ode->outputs(0.0, x, y);
    CHECK(y[0] == doctest::Approx(f).epsilon(1e-12));
    CHECK(x[0] == doctest::Approx(x[2]).epsilon(1e-15));  // no flow over the throttle
    for (double d : dx) CHECK(std::abs(d) < 1e-6);
  }
  // Constant rate ṡ and open spool U: at steady state the chamber flows are A1 ṡ (through
  // P→V3→throttle→V1) and A2 ṡ (V2→T), so each orifice drop is (Q/C)² — an analytic solution.
  const double A1 = 65e-4, A2 = 45.4e-4, sd = 0.05, U = 0.5, pP = 7.6e6, pT = 0.1e6;
  const double Cv = 1e-3 / std::sqrt(3.5e6), Ct = 0.67 * 7.07e-6 * std::sqrt(2.0 / 850.0);
  const double p3 = pP - std::pow(A1 * sd / (Cv * U), 2), p1 = p3 - std::pow(A1 * sd / Ct, 2);
  const double p2 = pT + std::pow(A2 * sd / (Cv * U), 2);
  auto ode = registry().create_ode("three_volume_circuit", json{{"initialize", "given"},
                                                                {"reference", "input"},
                                                                {"coupling", "pressure"},
                                                                {"p1_0", 3e6},
                                                                {"p2_0", 2e6}});
  auto sub = stride::host::make_ode_subsystem(ode, registry().create_integrator("trapezoidal", json::object()));
  ConstantInputs in({0.5, sd, U});
  sub->bind(in);
  sub->initialize(0.0);
  sub->equilibrate(0.0);
  double t = 0.0;
  for (int i = 0; i < 5000; ++i) t = sub->step(t, 1e-4);
  std::vector<double> y(4);
  sub->outputs(y);
  std::printf("three-volume steady extension: p1 %.4f (%.4f) p2 %.4f (%.4f) p3 %.4f (%.4f) MPa\n", y[0] / 1e6,
              p1 / 1e6, y[1] / 1e6, p2 / 1e6, y[2] / 1e6, p3 / 1e6);
  CHECK(y[0] == doctest::Approx(p1).epsilon(1e-6));
  CHECK(y[1] == doctest::Approx(p2).epsilon(1e-6));
  CHECK(y[2] == doctest::Approx(p3).epsilon(1e-6));
  CHECK(y[3] == doctest::Approx(U).epsilon(1e-9));
}

TEST_CASE("cylinder plugin: the three coupling modes integrate the same equations") {
  const double a_p = 65e-4, sd = 0.02, s = 0.51;
  const json given = {{"initialize", "given"}, {"p1_0", 3.0e6}, {"p2_0", 4.6e6}, {"kappa0", 0.45},
                      {"s0_from_input", false}, {"s0", 0.5}};
  std::map<std::string, std::vector<double>> rates;
  for (const std::string mode : {"force", "pressure", "pressure_rate"}) {
    json p = given;
    p["coupling"] = mode;
    auto ode = registry().create_ode("cylinder", p);
    REQUIRE(ode);
    ConstantInputs in(mode == "pressure" ? std::vector<double>{s, -a_p * sd, a_p * sd} : std::vector<double>{s, sd});
    ode->bind(in);
    std::vector<double> x(2), f(2);
    ode->initial_state(0.0, x);
    ode->equilibrate(0.0, x);
    ode->derivatives(0.0, x, f);
    rates[mode] = f;
  }
  // Extending compresses chamber 1 and expands chamber 2 (Eq. 25-28).
  CHECK(rates["force"][0] > 0.0);
  for (const std::string mode : {"pressure", "pressure_rate"})
    for (int i = 0; i < 2; ++i) CHECK(rates[mode][i] == doctest::Approx(rates["force"][i]).epsilon(1e-12));
}

TEST_CASE("cylinder energy: the compression energy density in closed form (b = 0)") {
  // With b = 0, ρ = ρ0 (1 + a p) and ρu = D (ln D + 1/D − 1)/a, D = 1 + a p.
  stride::hydraulics::Cylinder c;
  c.b = 0.0;
  for (double p : {1e5, 3.17e6, 7.6e6, 2e7}) {
    const double D = 1.0 + c.a * p;
    const double x = c.a * p, closed = D * (std::log1p(x) - x / D) / c.a;
    CHECK(c.energy_density(p) == doctest::Approx(closed).epsilon(1e-9));
    // About p²/(2β) for a nearly incompressible fluid.
    CHECK(c.energy_density(p) == doctest::Approx(0.5 * c.a * p * p).epsilon(2.0 * c.a * p));
  }
}

TEST_CASE("cylinder energy: dU/dt = valve power - f_h s_dot - friction power along the model's own rates") {
  // U(s, p1, p2) differentiated along (ṡ, ṗ1, ṗ2) of Eq. 25-26 must equal the powers the
  // plugin reports: the balance behind the whole-system energy of hydraulic experiments.
  for (double kappa0 : {0.3, 0.45, 0.8}) {
    const json given = {{"initialize", "given"}, {"p1_0", 3.0e6}, {"p2_0", 4.6e6}, {"kappa0", kappa0},
                        {"s0_from_input", false}, {"s0", 0.5}};
    auto ode = registry().create_ode("cylinder", given);
    REQUIRE(ode);
    const double s = 0.51, sd = 0.02;
    ConstantInputs in({s, sd});
    ode->bind(in);
    std::vector<double> x(2), f(2), y(8);
    ode->initial_state(0.0, x);
    ode->equilibrate(0.0, x);
    ode->derivatives(0.0, x, f);
    ode->outputs(0.0, x, y);
    const double f_h = y[0], valve = y[4], friction = y[5];
    CHECK(friction == doctest::Approx(1e5 * sd * sd));
    const double dt = 1e-6;
    auto energy = [&](double sign) {
      in.set(0, s + sign * sd * dt);
      const std::vector<double> xs{x[0] + sign * f[0] * dt, x[1] + sign * f[1] * dt};
      return ode->energy_at(0.0, xs);
    };
    const double dU = (energy(1.0) - energy(-1.0)) / (2.0 * dt);
    const double expected = valve - f_h * sd - friction;
    INFO("kappa0 " << kappa0 << ": dU/dt " << dU << " W, valve " << valve << " W, f_h s_dot " << f_h * sd << " W");
    CHECK(std::abs(dU - expected) < 1e-6 * std::abs(valve));
    CHECK(ode->energy_at(0.0, x) > 0.0);
  }
}
