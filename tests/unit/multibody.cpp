// Multibody formulations (independent, ali1, ali3p) on the planar hydraulic crane models
// (crane_independent, crane_dependent) of Peiret 2018 Sect. 4.1-4.1.1:
//  - energy conservation of the unactuated crane and constraint satisfaction (ALI1, ALI3P);
//  - the static equilibrium actuator force (2 g (m/2 + m_p + m_h) = 8829 N) holds the crane at rest;
//  - independent and dependent coordinates give the same actuator motion;
//  - the reduced interface model M̃, f̃ of Eq. 17-19 (dependent) equals Eq. 12-13 (independent).
#include <doctest/doctest.h>

#include "multibody_run.hpp"
#include "shipped_plugins.hpp"

#include <cmath>
#include <cstdio>
#include <array>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include <stride/host/graph/adapters.hpp>
#include <stride/host/load/registry.hpp>

#include "../../plugins/common/crane.hpp"

using stride::json;
using stride::host::PluginRegistry;

namespace {

using stride_test::registry;

// Actuator forces f_h(t) chosen by the test (force coupling: input port 0 of size p).
class ForceLaw final : public stride::Inputs {
 public:
  ForceLaw(std::size_t p, std::function<void(double, std::vector<double>&)> law) : buf_(p), law_(std::move(law)) {}
  std::span<const double> evaluate(std::size_t port, double t) override {
    if (port != 0) throw std::logic_error("crane force coupling has one input port");
    law_(t, buf_);
    return buf_;
  }

 private:
  std::vector<double> buf_;
  std::function<void(double, std::vector<double>&)> law_;
};

// Constant chamber pressures p1, p2 (velocity-pressure coupling: input ports 0 and 1).
class Pressures final : public stride::Inputs {
 public:
  Pressures(std::vector<double> p1, std::vector<double> p2) : p_{std::move(p1), std::move(p2)} {}
  std::span<const double> evaluate(std::size_t port, double) override { return p_.at(port); }

 private:
  std::array<std::vector<double>, 2> p_;
};

ForceLaw constant(std::size_t p, std::vector<double> f) {
  return ForceLaw(p, [f](double, std::vector<double>& out) { out = f; });
}

// A crane with `actuators` actuators run through the host adapter.
struct CraneRun : stride_test::MultibodyRun {
  CraneRun(const std::string& model_name, int actuators, const std::string& formulation, json fparams,
           stride::Inputs& in, json mparams = json::object())
      : MultibodyRun(model_name, with_actuators(std::move(mparams), actuators), formulation, fparams, in) {}
  static json with_actuators(json m, int actuators) {
    m["actuators"] = actuators;
    return m;
  }
};

}  // namespace

TEST_CASE("crane plugins declare the multibody form and the expected ports") {
  for (const char* name : {"crane_independent", "crane_dependent"}) {
    const auto* p = registry().find(name);
    REQUIRE_MESSAGE(p != nullptr, name);
    CHECK(p->info().form == stride::Form::multibody);
    auto model = registry().create_model(name, {{"actuators", 2}});
    const auto ports = model->ports();
    REQUIRE(ports.size() == 10);
    CHECK(ports[0].name == "f_h");
    CHECK(ports[0].role == stride::BondRole::effort);
    CHECK(ports[2].name == "s_dot");
    CHECK(ports[2].role == stride::BondRole::flow);
    CHECK(ports[2].bond == ports[0].bond);
    CHECK(ports[3].name == "s_ddot");
    CHECK(ports[3].feedthrough);
    CHECK(ports[4].size == 4);  // M_eff 2x2
    for (const auto& port : ports)
      if (port.name != "s_ddot") CHECK_MESSAGE(!port.feedthrough, port.name);
  }
  for (const char* name : {"independent", "ali1", "ali3p"}) {
    const auto* p = registry().find(name);
    REQUIRE_MESSAGE(p != nullptr, name);
    CHECK(p->info().kind == stride::Kind::formulation);
  }
}

TEST_CASE("the independent formulation refuses a constrained model; Newton failure is a StepFailure") {
  auto in = constant(1, {0.0});
  CHECK_THROWS_AS((CraneRun("crane_dependent", 1, "independent", json::object(), in)), std::invalid_argument);
  CraneRun run("crane_dependent", 1, "ali3p", {{"max_iterations", 1}}, in);
  CHECK_THROWS_AS(run.step(1e-2), stride::StepFailure);
}

TEST_CASE("the equilibrium actuator force holds both crane models at rest") {
  // A_1 = L x_B sin θ1 / (2 s1) with s1 = 0.5 m and θ1 = 30°: A_1 = 0.25 √3, gravity torque
  // g cos θ1 (m/2 + m_p + m_h) L = 450 g √3/2, so f = 2 · 450 · 9.81 = 8829 N.
  const double f_eq = 2.0 * 450.0 * 9.81;
  auto model = registry().create_model("crane_independent", json::object());
  CHECK(model->report()["equilibrium_actuator_forces"][0].get<double>() == doctest::Approx(f_eq).epsilon(1e-12));
  auto in = constant(2, {f_eq, 0.0});
  for (const auto& [name, form] : {std::pair{"crane_independent", "independent"}, {"crane_dependent", "ali3p"},
                                   {"crane_dependent", "ali1"}, {"crane_independent", "ali3p"}}) {
    for (int p : {1, 2}) {
      const std::string model_name = name, formulation = form;  // bindings cannot be captured (clang 14)
      CAPTURE(model_name);
      CAPTURE(formulation);
      CAPTURE(p);
      CraneRun run(name, p, form, json::object(), in);
      CHECK(run.out("s", 0) == doctest::Approx(0.5).epsilon(1e-12));
      CHECK(std::abs(run.out("s_ddot", 0)) < 1e-9);
      double max_dev = 0.0;
      for (int k = 0; k < 1000; ++k) {
        run.step(1e-3);
        max_dev = std::max({max_dev, std::abs(run.out("s", 0) - 0.5), std::abs(run.out("s_dot", 0))});
      }
      MESSAGE(std::string(name) << "+" << std::string(form) << " p=" << p << ": max |s1 - 0.5|, |s1_dot| over 1 s at rest: " << max_dev);
      CHECK(max_dev < 1e-9);
    }
  }
  // 1 % less force and the crane must move: the check above can fail.
  auto weak = constant(1, {0.99 * f_eq});
  CraneRun run("crane_independent", 1, "independent", json::object(), weak);
  for (int k = 0; k < 500; ++k) run.step(1e-3);
  CHECK(run.out("s", 0) < 0.5 - 1e-3);
}

TEST_CASE("unactuated crane: ALI3P conserves energy, ALI1 and ALI3P keep the constraints") {
  // With zero actuator force the crane falls (link 1 swings through s1 = 0.366 m, its
  // minimum); mechanical energy is conserved (potential datum at the pivot O).
  auto in = constant(2, {0.0, 0.0});
  struct Result {
    double drift, s_min, phi, phi_dot;
    long iterations;
  };
  const auto run_for = [&](const char* name, const char* form, double h) {
    CraneRun run(name, 2, form, json::object(), in);
    const double e0 = run.out("energy");
    Result r{0.0, 1.0, 0.0, 0.0, 0};
    const int n = int(std::lround(2.0 / h));
    for (int k = 0; k < n; ++k) {
      run.step(h);
      r.drift = std::max(r.drift, std::abs(run.out("energy") - e0) / std::abs(e0));
      r.s_min = std::min(r.s_min, run.out("s", 0));
    }
    const json st = run.stats();
    r.phi = st["max_constraint_violation"].get<double>();
    r.phi_dot = st["max_velocity_constraint_violation"].get<double>();
    r.iterations = st["max_iterations_per_step"].get<long>();
    MESSAGE(std::string(name) << "+" << std::string(form) << " h=" << h << ", 2 s: E0 = " << e0
                              << " J, max |E - E0|/|E0| = " << r.drift << ", min s1 = " << r.s_min << ", max |Phi| = "
                              << r.phi << ", max |Phi_q v| = " << r.phi_dot << ", max iterations/step " << r.iterations);
    return r;
  };
  for (const char* name : {"crane_dependent", "crane_independent"}) {
    const Result coarse = run_for(name, "ali3p", 5e-4), fine = run_for(name, "ali3p", 2.5e-4);
    CHECK(fine.s_min < 0.37);               // it really fell
    CHECK(fine.drift < 1e-4);               // measured 1.6e-5 (dependent), 0.9e-5 (independent)
    CHECK(coarse.drift / fine.drift > 3.0);  // trapezoidal rule: second order
    CHECK(fine.phi < 1e-9);
    CHECK(fine.phi_dot < 1e-6);
    CHECK(fine.iterations <= 5);
  }
  // ALI1 + semi-implicit Euler: Baumgarte-stabilized, first order, dissipative.
  const Result coarse = run_for("crane_dependent", "ali1", 1e-3), fine = run_for("crane_dependent", "ali1", 1e-4);
  CHECK(fine.phi < 1e-3);      // measured 7.9e-4
  CHECK(fine.phi_dot < 1e-2);  // measured 6.7e-3
  CHECK(coarse.phi / fine.phi > 5.0);
  CHECK(coarse.phi_dot / fine.phi_dot > 5.0);
}

TEST_CASE("independent and dependent coordinates give the same actuator motion") {
  const double f_eq = 2.0 * 450.0 * 9.81;
  // 9500 N on actuator 1 (and 300 N on actuator 2 of the double crane) for 1 s, from rest.
  for (int p : {1, 2}) {
    auto law = constant(2, {9500.0, p == 2 ? 300.0 : 0.0});
    const double h = 1e-4;
    CraneRun ind("crane_independent", p, "independent", json::object(), law);
    CraneRun dep("crane_dependent", p, "ali3p", json::object(), law);
    CraneRun dep1("crane_dependent", p, "ali1", json::object(), law);
    double diff = 0.0, diff1 = 0.0, diff2 = 0.0;
    for (int k = 0; k < 10000; ++k) {
      ind.step(h), dep.step(h), dep1.step(h);
      diff = std::max(diff, std::abs(ind.out("s", 0) - dep.out("s", 0)));
      diff1 = std::max(diff1, std::abs(ind.out("s", 0) - dep1.out("s", 0)));
      if (p == 2) diff2 = std::max(diff2, std::abs(ind.out("s", 1) - dep.out("s", 1)));
    }
    MESSAGE("p=" << p << ": s1(1 s) = " << ind.out("s", 0) << " m; max |s1 ind - s1 dep+ali3p| = " << diff
                 << ", dep+ali1: " << diff1 << (p == 2 ? ", max |s2 diff| = " + std::to_string(diff2) : ""));
    CHECK(ind.out("s", 0) > 0.5 + 0.02);  // it moved
    CHECK(diff < 1e-4);
    CHECK(diff1 < 1e-4);
    CHECK(diff2 < 1e-4);
    CHECK(ind.out("x_R") == doctest::Approx(dep.out("x_R")).epsilon(1e-3));
  }
  (void)f_eq;
}

TEST_CASE("effective mass and force: Eq. 17-19 with dependent coordinates equal Eq. 12-13") {
  // An arbitrary configuration and velocity, expressed in both coordinate sets.
  const stride::crane::Geometry geo;
  const Eigen::Vector2d q(0.7, 4.2), v(0.3, -1.1);
  stride::crane::Vector5d x, u;
  stride::crane::dependent_from_independent(geo, q, v, x, u);
  for (int p : {1, 2}) {
    auto in = constant(2, {1234.0, -567.0});
    auto mi = registry().create_model("crane_independent", {{"actuators", p}});
    auto md = registry().create_model("crane_dependent", {{"actuators", p}});
    mi->bind(in);
    md->bind(in);
    auto fi = registry().create_formulation("independent", json::object());
    Eigen::VectorXd qi = q, vi = v, xd = x, ud = u;
    fi->reset(*mi, 0.0, qi, vi);
    Eigen::MatrixXd Mi(p, p), Md(p, p);
    Eigen::VectorXd f_i(p), f_d(p), ai(2), ad(5);
    fi->effective(*mi, 0.0, qi, vi, Mi, f_i);
    fi->acceleration(*mi, 0.0, qi, vi, ai);
    for (const char* form : {"ali3p", "ali1"}) {
      auto fd = registry().create_formulation(form, json::object());
      fd->reset(*md, 0.0, xd, ud);
      fd->effective(*md, 0.0, xd, ud, Md, f_d);
      fd->acceleration(*md, 0.0, xd, ud, ad);
      const double em = (Mi - Md).norm() / Mi.norm(), ef = (f_i - f_d).norm() / f_i.norm();
      // θ̈1 is a coordinate of both sets.
      const double ea = std::abs(ai[0] - ad[2]) / std::abs(ai[0]);
      MESSAGE("p=" << p << " " << std::string(form) << ": M_eff rel diff " << em << ", f_eff rel diff " << ef << ", theta1'' rel diff "
                   << ea << "; M_eff(0,0) = " << Mi(0, 0) << " kg, f_eff(0) = " << f_i[0] << " N");
      CHECK(em < 1e-8);
      CHECK(ef < 1e-8);
      CHECK(ea < 1e-8);
    }
  }
}

TEST_CASE("velocity-pressure coupling: f = (p2 - p1) a_p - c s_dot on the multibody side") {
  const double a_p = 65e-4, f_eq = 2.0 * 450.0 * 9.81;
  // Table 3: p2 - p1 = 4.53 - 3.17 MPa holds the single crane (to the table's rounding).
  CHECK((4.53e6 - 3.17e6) * a_p == doctest::Approx(f_eq).epsilon(2e-3));
  Pressures eq({3.17e6, 3.85e6}, {3.17e6 + f_eq / a_p, 3.85e6});
  for (int p : {1, 2}) {
    CraneRun run("crane_dependent", p, "ali3p", json::object(), eq, {{"coupling", "pressure"}});
    CHECK(run.ports[0].name == "p1");
    CHECK(run.ports[1].name == "p2");
    for (int k = 0; k < 500; ++k) run.step(1e-3);
    CHECK(std::abs(run.out("s", 0) - 0.5) < 1e-9);
  }
  // Without friction a pressure difference acts exactly like the force (p2 - p1) a_p; the
  // friction c slows the extension down and dissipates energy.
  Pressures push({1e6, 1e6}, {1e6 + 9500.0 / a_p, 1e6});
  auto force = constant(1, {9500.0});
  CraneRun by_force("crane_independent", 1, "independent", json::object(), force);
  CraneRun frictionless("crane_independent", 1, "independent", json::object(), push, {{"coupling", "pressure"}, {"c", 0.0}});
  CraneRun damped("crane_independent", 1, "independent", json::object(), push, {{"coupling", "pressure"}});
  const double e0 = damped.out("energy");
  double work = 0.0, dissipated = 0.0;
  for (int k = 0; k < 5000; ++k) {
    const double h = 1e-4, sd0 = damped.out("s_dot");
    by_force.step(h), frictionless.step(h), damped.step(h);
    const double sd = 0.5 * (sd0 + damped.out("s_dot"));
    work += 9500.0 * sd * h;
    dissipated += 1e5 * sd * sd * h;
  }
  CHECK(frictionless.out("s", 0) == doctest::Approx(by_force.out("s", 0)).epsilon(1e-12));
  CHECK(damped.out("s", 0) < by_force.out("s", 0));
  // Energy balance of the damped run: E - E0 = work of the pressures - friction losses.
  const double balance = damped.out("energy") - e0 - (work - dissipated);
  MESSAGE("pressure coupling, 0.5 s: s1 force " << by_force.out("s", 0) << ", damped " << damped.out("s", 0)
                                                << " m; E - E0 = " << damped.out("energy") - e0 << " J, work "
                                                << work << " J, friction " << dissipated << " J, residual " << balance);
  CHECK(std::abs(balance) < 1e-2 * work);
  CHECK(damped.out("flow2") == doctest::Approx(a_p * damped.out("s_dot")));
}
