// Multibody formulations (independent, ali1, ali3p) on the planar hydraulic crane models
// (crane_independent, crane_dependent) of Peiret 2018 Sect. 4.1-4.1.1:
//  - energy conservation of the unactuated crane and constraint satisfaction (ALI1, ALI3P);
//  - the static equilibrium actuator force (2 g (m/2 + m_p + m_h) = 8829 N) holds the crane at rest;
//  - independent and dependent coordinates give the same actuator motion;
//  - the reduced interface model M̃, f̃ of Eq. 17-19 (dependent) equals Eq. 12-13 (independent).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <numbers>
#include <string>
#include <vector>

#include <stride/host/adapters.hpp>
#include <stride/host/registry.hpp>

#include "../../plugins/common/crane.hpp"

using stride::json;
using stride::host::PluginRegistry;

namespace {

PluginRegistry& registry() {
  static PluginRegistry r = [] {
    PluginRegistry reg;
    reg.scan(PluginRegistry::default_search_path());
    return reg;
  }();
  return r;
}

// Actuator forces f_h(t) chosen by the test (force coupling: input port 0 of size p).
class ForceLaw final : public stride::Inputs {
 public:
  ForceLaw(std::size_t p, std::function<void(double, std::vector<double>&)> law) : buf_(p), law_(std::move(law)) {}
  std::span<const double> at(std::size_t port, double t) override {
    REQUIRE(port == 0);
    law_(t, buf_);
    return buf_;
  }

 private:
  std::vector<double> buf_;
  std::function<void(double, std::vector<double>&)> law_;
};

ForceLaw constant(std::size_t p, std::vector<double> f) {
  return ForceLaw(p, [f](double, std::vector<double>& out) { out = f; });
}

// A crane subsystem run through the host adapter, with named access to its outputs.
struct CraneRun {
  std::shared_ptr<stride::MultibodyModel> model;
  std::unique_ptr<stride::Subsystem> sub;
  std::vector<stride::PortSpec> ports;
  std::vector<double> y;
  double t = 0.0;

  CraneRun(const std::string& model_name, int actuators, const std::string& formulation, json fparams,
           stride::Inputs& in) {
    model = registry().create_model(model_name, {{"actuators", actuators}});
    sub = stride::host::make_multibody_subsystem(model, registry().create_formulation(formulation, fparams));
    ports = sub->ports();
    std::size_t size = 0;
    for (const auto& p : ports)
      if (p.direction == stride::Direction::output) size += p.size;
    y.assign(size, 0.0);
    sub->bind(in);
    sub->initialize(0.0);
    sub->outputs(y);
  }
  double out(const std::string& port, std::size_t element = 0) const {
    std::size_t o = 0;
    for (const auto& p : ports) {
      if (p.direction != stride::Direction::output) continue;
      if (p.name == port) return y[o + element];
      o += p.size;
    }
    FAIL("no output port " << port);
    return 0.0;
  }
  void step(double h) {
    t = sub->step(t, h);
    sub->outputs(y);
  }
  json formulation_stats() const { return sub->statistics()["formulation"]; }
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
      CAPTURE(name);
      CAPTURE(form);
      CAPTURE(p);
      CraneRun run(name, p, form, json::object(), in);
      CHECK(run.out("s", 0) == doctest::Approx(0.5).epsilon(1e-12));
      CHECK(std::abs(run.out("s_ddot", 0)) < 1e-9);
      double max_dev = 0.0;
      for (int k = 0; k < 1000; ++k) {
        run.step(1e-3);
        max_dev = std::max({max_dev, std::abs(run.out("s", 0) - 0.5), std::abs(run.out("s_dot", 0))});
      }
      MESSAGE(name << "+" << form << " p=" << p << ": max |s1 - 0.5|, |s1_dot| over 1 s at rest: " << max_dev);
      CHECK(max_dev < 1e-9);
    }
  }
  // 1 % less force and the crane must move: the check above can fail.
  auto weak = constant(1, {0.99 * f_eq});
  CraneRun run("crane_independent", 1, "independent", json::object(), weak);
  for (int k = 0; k < 200; ++k) run.step(1e-3);
  CHECK(run.out("s", 0) < 0.5 - 1e-3);
}

TEST_CASE("unactuated crane: ALI3P conserves energy, ALI1 and ALI3P keep the constraints") {
  auto in = constant(2, {0.0, 0.0});
  const double h = 1e-3;
  for (const char* name : {"crane_dependent", "crane_independent"}) {
    CraneRun run(name, 1, "ali3p", json::object(), in);
    const double e0 = run.out("energy");
    double drift = 0.0, s_min = 1.0;
    for (int k = 0; k < 2000; ++k) {
      run.step(h);
      drift = std::max(drift, std::abs(run.out("energy") - e0) / std::abs(e0));
      s_min = std::min(s_min, run.out("s", 0));
    }
    const json st = run.formulation_stats();
    MESSAGE(name << "+ali3p h=1ms, 2 s: E0 = " << e0 << " J, max relative energy drift " << drift << ", min s1 "
                  << s_min << ", max |Phi| " << st["max_constraint_violation"] << ", max |Phi_q v| "
                  << st["max_velocity_constraint_violation"] << ", iterations/step max "
                  << st["max_iterations_per_step"]);
    CHECK(s_min < 0.45);  // the crane really fell
    CHECK(drift < 1e-4);
    CHECK(st["max_constraint_violation"].get<double>() < 1e-9);
    CHECK(st["max_velocity_constraint_violation"].get<double>() < 1e-8);
  }
  {
    CraneRun run("crane_dependent", 2, "ali1", json::object(), in);
    for (int k = 0; k < 2000; ++k) run.step(h);
    const json st = run.formulation_stats();
    MESSAGE("crane_dependent+ali1 h=1ms, 2 s: max |Phi| " << st["max_constraint_violation"] << ", max |Phi_q v| "
                                                          << st["max_velocity_constraint_violation"]
                                                          << ", iterations/step max " << st["max_iterations_per_step"]);
    CHECK(st["max_constraint_violation"].get<double>() < 1e-4);
    CHECK(st["max_velocity_constraint_violation"].get<double>() < 1e-3);
    CHECK(st["steps"].get<long>() == 2000);
  }
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
      MESSAGE("p=" << p << " " << form << ": M_eff rel diff " << em << ", f_eff rel diff " << ef << ", theta1'' rel diff "
                   << ea << "; M_eff(0,0) = " << Mi(0, 0) << " kg, f_eff(0) = " << f_i[0] << " N");
      CHECK(em < 1e-8);
      CHECK(ef < 1e-8);
      CHECK(ea < 1e-8);
    }
  }
}
