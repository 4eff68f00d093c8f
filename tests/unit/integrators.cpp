// Integrator plugins against exact solutions: observed convergence orders, energy behaviour of
// the symplectic Euler, agreement of the adaptive SUNDIALS solvers with a fine RK4 solution,
// stiff stability, Newton failure reporting and statistics.
#include <doctest/doctest.h>

#include "allocation_counter.hpp"
#include "shipped_plugins.hpp"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <stride/host/load/registry.hpp>

using stride::json;
using stride::host::PluginRegistry;


namespace {

// Nothing in these systems reads inputs; binding one still follows the host's call order.
class NoInputs final : public stride::Inputs {
 public:
  std::span<const double> evaluate(std::size_t, double) override {
    throw std::logic_error("test systems have no inputs");
  }
};

class TestSystem : public stride::OdeSystem {
 public:
  std::vector<stride::PortSpec> ports() const override { return {}; }
  void outputs(double, std::span<const double>, std::span<double>) override {}
};

// q'' = -q as x = [q, v]; exact q = cos t, v = -sin t from [1, 0]. Energy (q^2 + v^2)/2.
class Oscillator final : public TestSystem {
 public:
  std::size_t state_size() const override { return 2; }
  std::size_t second_order_size() const override { return 1; }
  void initial_state(double, std::span<double> x) override { x[0] = 1.0, x[1] = 0.0; }
  void derivatives(double, std::span<const double> x, std::span<double> f) override {
    f[0] = x[1];
    f[1] = -x[0];
  }
  bool jacobian(double, std::span<const double>, Eigen::Ref<Eigen::MatrixXd> J) override {
    J << 0.0, 1.0, -1.0, 0.0;
    return true;
  }
  static double energy(std::span<const double> x) { return 0.5 * (x[0] * x[0] + x[1] * x[1]); }
};

// y' = -y, exact e^-t; no analytic Jacobian (implicit methods use differences).
class Decay final : public TestSystem {
 public:
  std::size_t state_size() const override { return 1; }
  void initial_state(double, std::span<double> x) override { x[0] = 1.0; }
  void derivatives(double, std::span<const double> x, std::span<double> f) override { f[0] = -x[0]; }
};

// y1' = -lambda y1 + y2, y2' = -y2 with lambda = 1e4 and y(0) = [b, 1], b = 1/(lambda - 1):
// exact y = [b e^-t, e^-t], a smooth solution of a stiff system (explicit methods need
// h < ~2.8/lambda throughout). Analytic Jacobian.
class Stiff final : public TestSystem {
 public:
  static constexpr double lambda = 1e4;
  static constexpr double b = 1.0 / (lambda - 1.0);
  std::size_t state_size() const override { return 2; }
  void initial_state(double, std::span<double> x) override { x[0] = b, x[1] = 1.0; }
  void derivatives(double, std::span<const double> x, std::span<double> f) override {
    f[0] = -lambda * x[0] + x[1];
    f[1] = -x[1];
  }
  bool jacobian(double, std::span<const double>, Eigen::Ref<Eigen::MatrixXd> J) override {
    J << -lambda, 1.0, 0.0, -1.0;
    return true;
  }
  // Error relative to each component's scale.
  static double error(std::span<const double> x, double t) {
    return std::max(std::abs(x[0] - b * std::exp(-t)) / b, std::abs(x[1] - std::exp(-t)));
  }
};

// y' = y^2: for h y0 large enough the trapezoidal equation has no real solution.
class Blowup final : public TestSystem {
 public:
  std::size_t state_size() const override { return 1; }
  void initial_state(double, std::span<double> x) override { x[0] = 1.0; }
  void derivatives(double, std::span<const double> x, std::span<double> f) override { f[0] = x[0] * x[0]; }
};

using stride_test::registry;

std::shared_ptr<stride::Integrator> make(const std::string& name, const json& params = json::object()) {
  auto integ = registry().create_integrator(name, params);
  REQUIRE(integ);
  return integ;
}

// Integrates sys from x(0) over [0, T] with host steps h; returns the final state.
std::vector<double> run(stride::Integrator& integ, stride::OdeSystem& sys, double T, double h) {
  static NoInputs inputs;
  sys.bind(inputs);
  std::vector<double> x(sys.state_size());
  sys.initial_state(0.0, x);
  integ.reset(sys, 0.0, x);
  const long n = std::lround(T / h);
  double t = 0.0;
  for (long k = 0; k < n; ++k) {
    const double t_new = integ.step(sys, t, h, x);
    REQUIRE(t_new == doctest::Approx(t + h).epsilon(1e-14));
    t = t_new;
  }
  return x;
}

double oscillator_error(const std::string& name, double h, double T = 1.0) {
  Oscillator sys;
  auto x = run(*make(name), sys, T, h);
  return std::hypot(x[0] - std::cos(T), x[1] + std::sin(T));
}

// log2 of successive error ratios when halving h (the last, finest pair).
double observed_order(const std::string& name, double h0, int levels) {
  double previous = oscillator_error(name, h0), order = 0.0;
  for (int k = 1; k < levels; ++k) {
    const double e = oscillator_error(name, h0 / std::pow(2.0, k));
    order = std::log2(previous / e);
    std::printf("  %-20s h = %-10.6g error = %.3e  order = %.3f\n", name.c_str(), h0 / std::pow(2.0, k), e, order);
    previous = e;
  }
  return order;
}

}  // namespace

TEST_CASE("fixed-step integrators converge with their theoretical order on the oscillator") {
  CHECK(observed_order("forward_euler", 0.01, 4) == doctest::Approx(1.0).epsilon(0.05));
  CHECK(observed_order("semi_implicit_euler", 0.01, 4) == doctest::Approx(1.0).epsilon(0.05));
  CHECK(observed_order("rk4", 0.1, 4) == doctest::Approx(4.0).epsilon(0.05));
  CHECK(observed_order("trapezoidal", 0.1, 4) == doctest::Approx(2.0).epsilon(0.05));
}

TEST_CASE("trapezoidal rule with finite-difference Jacobian: second order on y' = -y") {
  double previous = 0.0;
  for (int k = 0; k < 4; ++k) {
    const double h = 0.1 / std::pow(2.0, k);
    Decay sys;
    auto x = run(*make("trapezoidal"), sys, 1.0, h);
    const double e = std::abs(x[0] - std::exp(-1.0));
    // Leading error term of the trapezoidal rule for y' = -y: T h^2 / 12 y(T).
    CHECK(e == doctest::Approx(h * h / 12.0 * std::exp(-1.0)).epsilon(0.02));
    if (k > 0) CHECK(std::log2(previous / e) == doctest::Approx(2.0).epsilon(0.02));
    previous = e;
  }
}

TEST_CASE("semi-implicit Euler keeps the oscillator energy bounded; forward Euler does not") {
  const double h = 0.05, periods = 100.0, T = periods * 2.0 * M_PI;
  const long steps = std::lround(T / h);
  auto energy_drift = [&](const std::string& name, double& early, double& late) {
    Oscillator sys;
    NoInputs inputs;
    sys.bind(inputs);
    auto integ = make(name);
    std::vector<double> x(2);
    sys.initial_state(0.0, x);
    integ->reset(sys, 0.0, x);
    const double e0 = Oscillator::energy(x);
    early = late = 0.0;
    double t = 0.0;
    for (long k = 0; k < steps; ++k) {
      t = integ->step(sys, t, h, x);
      const double err = std::abs(Oscillator::energy(x) - e0) / e0;
      if (k < steps / 10) early = std::max(early, err);
      if (k >= steps - steps / 10) late = std::max(late, err);
    }
  };
  double early = 0.0, late = 0.0;
  energy_drift("semi_implicit_euler", early, late);
  std::printf("  semi_implicit_euler energy error: first 10 periods %.3e, last 10 periods %.3e\n", early, late);
  // Symplectic: the modified energy is conserved, the error oscillates with amplitude ~h/2.
  CHECK(late < h);
  CHECK(late < 1.1 * early);
  energy_drift("forward_euler", early, late);
  std::printf("  forward_euler energy error: first 10 periods %.3e, last 10 periods %.3e\n", early, late);
  // Explicit Euler multiplies the energy by (1 + h^2) every step.
  CHECK(late == doctest::Approx(std::pow(1.0 + h * h, steps) - 1.0).epsilon(1e-6));
}

TEST_CASE("semi-implicit Euler without second-order structure is forward Euler") {
  Decay a, b;
  auto xa = run(*make("semi_implicit_euler"), a, 1.0, 0.01);
  auto xb = run(*make("forward_euler"), b, 1.0, 0.01);
  CHECK(xa[0] == xb[0]);
  CHECK(xa[0] == doctest::Approx(std::pow(0.99, 100)).epsilon(1e-12));
}

TEST_CASE("adaptive SUNDIALS integrators agree with a fine RK4 solution") {
  const double T = 10.0, h = 0.1;
  Oscillator ref_sys;
  const auto ref = run(*make("rk4"), ref_sys, T, 1e-3);
  // RK4 at h = 1e-3 is itself within ~1e-12 of the exact solution.
  CHECK(std::abs(ref[0] - std::cos(T)) < 1e-11);

  struct Case {
    std::string name;
    json params;
    double bound;
  };
  const std::vector<Case> cases = {
      {"cvode", {{"method", "bdf"}, {"rtol", 1e-10}, {"atol", 1e-10}}, 1e-7},
      {"cvode", {{"method", "adams"}, {"rtol", 1e-10}, {"atol", 1e-10}}, 1e-7},
      {"arkode", {{"method", "explicit"}, {"rtol", 1e-8}, {"atol", 1e-8}}, 1e-6},
      {"arkode", {{"method", "implicit"}, {"rtol", 1e-8}, {"atol", 1e-8}}, 1e-6},
      {"arkode", {{"method", "imex"}, {"rtol", 1e-8}, {"atol", 1e-8}}, 1e-6},
  };
  for (const auto& c : cases) {
    Oscillator sys;
    auto integ = make(c.name, c.params);
    auto x = run(*integ, sys, T, h);
    const double diff = std::hypot(x[0] - ref[0], x[1] - ref[1]);
    const json s = integ->statistics();
    std::printf("  %-7s %-9s |x - x_rk4| = %.3e  %s\n", c.name.c_str(),
                c.params["method"].get<std::string>().c_str(), diff, s.dump().c_str());
    INFO(c.name, " ", c.params.dump());
    CHECK(diff < c.bound);
    CHECK(s.at("steps").get<long>() >= 100);  // at least one internal step per host step
    CHECK(s.at("rhs_evaluations").get<long>() > s.at("steps").get<long>());
  }
}

TEST_CASE("implicit integrators are stable and accurate on a stiff problem") {
  const double T = 2.0, h = 0.01;  // h lambda = 100
  struct Case {
    std::string name;
    json params;
    double bound;
  };
  const std::vector<Case> cases = {
      // Global error of the trapezoidal rule on the smooth mode e^-t: h^2 T e^-T / 12.
      {"trapezoidal", json::object(), 1.05 * h * h * T * std::exp(-T) / 12.0},
      {"cvode", {{"method", "bdf"}, {"rtol", 1e-8}, {"atol", 1e-10}}, 1e-7},
      {"arkode", {{"method", "implicit"}, {"rtol", 1e-8}, {"atol", 1e-10}}, 1e-7},
      {"arkode", {{"method", "imex"}, {"rtol", 1e-8}, {"atol", 1e-10}}, 1e-7},
  };
  long implicit_rhs = 0;
  for (const auto& c : cases) {
    Stiff sys;
    auto integ = make(c.name, c.params);
    auto x = run(*integ, sys, T, h);
    const json s = integ->statistics();
    std::printf("  stiff %-11s %-9s error = %.3e  %s\n", c.name.c_str(),
                c.params.value("method", "").c_str(), Stiff::error(x, T), s.dump().c_str());
    INFO(c.name, " ", c.params.dump());
    CHECK(Stiff::error(x, T) < c.bound);
    CHECK(s.at("newton_iterations").get<long>() > 0);
    CHECK(s.at("jacobian_evaluations").get<long>() > 0);
    if (c.params.value("method", "") == "implicit") implicit_rhs = s.at("rhs_evaluations").get<long>();
  }
  // The explicit method is limited by stability, not accuracy: it needs far more evaluations.
  Stiff sys;
  auto erk = make("arkode", {{"method", "explicit"}, {"rtol", 1e-8}, {"atol", 1e-10}});
  auto x = run(*erk, sys, T, h);
  const long explicit_rhs = erk->statistics().at("rhs_evaluations").get<long>();
  std::printf("  stiff arkode explicit rhs = %ld, implicit rhs = %ld\n", explicit_rhs, implicit_rhs);
  CHECK(Stiff::error(x, T) < 1e-6);
  CHECK(explicit_rhs > 5 * implicit_rhs);
}

TEST_CASE("cvode and arkode step past the communication points of a system without inputs, to the same accuracy") {
  // The oscillator over 10 s at 10-ms steps: ending a CVODE step at every t + h costs at
  // least 1000 steps; stepping past them, CVODE's own step size sets the count.
  const std::pair<const char*, const char*> cases[] = {
      {"cvode", "bdf"}, {"cvode", "adams"}, {"arkode", "explicit"}, {"arkode", "implicit"}};
  for (const auto& c : cases) {
    const char* name = c.first;  // not a structured binding: CAPTURE's lambda takes it (clang 14)
    const char* method = c.second;
    CAPTURE(name);
    CAPTURE(method);
    long steps[2];
    double error[2];
    for (int past = 0; past < 2; ++past) {
      auto integ = make(name, {{"method", method}, {"rtol", 1e-8}, {"atol", 1e-10}, {"step_past_communication_points", past == 1}});
      Oscillator sys;
      const auto x = run(*integ, sys, 10.0, 0.01);
      steps[past] = integ->statistics().at("steps").get<long>();
      error[past] = std::max(std::abs(x[0] - std::cos(10.0)), std::abs(x[1] + std::sin(10.0)));
    }
    std::printf("  %s %s: %ld steps stopping at every 10 ms (error %.1e), %ld stepping past (error %.1e)\n", name,
                method, steps[0], error[0], steps[1], error[1]);
    CHECK(steps[0] >= 1000);
    CHECK(10 * steps[1] < 7 * steps[0]);  // ERK at rtol 1e-8: its own step is about 17 ms
    CHECK(error[1] < 1e-6);
  }
}

TEST_CASE("SUNDIALS integrators restart when the host changes the state between steps") {
  for (const std::string method : {"bdf", "adams"}) {
    Decay sys;
    NoInputs inputs;
    sys.bind(inputs);
    auto integ = make("cvode", {{"method", method}, {"rtol", 1e-10}, {"atol", 1e-12}});
    std::vector<double> x{1.0};
    integ->reset(sys, 0.0, x);
    double t = integ->step(sys, 0.0, 1.0, x);
    CHECK(x[0] == doctest::Approx(std::exp(-1.0)).epsilon(1e-8));
    x[0] = 2.0;  // e.g. an event handled by the host
    t = integ->step(sys, t, 1.0, x);
    CHECK(t == 2.0);
    CHECK(x[0] == doctest::Approx(2.0 * std::exp(-1.0)).epsilon(1e-8));
  }
  for (const std::string method : {"explicit", "implicit", "imex"}) {
    Decay sys;
    NoInputs inputs;
    sys.bind(inputs);
    auto integ = make("arkode", {{"method", method}, {"rtol", 1e-10}, {"atol", 1e-12}});
    std::vector<double> x{1.0};
    integ->reset(sys, 0.0, x);
    double t = integ->step(sys, 0.0, 1.0, x);
    x[0] = 2.0;
    t = integ->step(sys, t, 1.0, x);
    INFO(method);
    CHECK(t == 2.0);
    CHECK(x[0] == doctest::Approx(2.0 * std::exp(-1.0)).epsilon(1e-7));
  }
}

TEST_CASE("trapezoidal Newton failure is reported as StepFailure") {
  Blowup sys;
  NoInputs inputs;
  sys.bind(inputs);
  auto integ = make("trapezoidal", {{"max_iterations", 30}});
  std::vector<double> x{1.0};
  integ->reset(sys, 0.0, x);
  // z - 1 - (1 + z^2)/2 = 0 has no real root for h = 1.
  CHECK_THROWS_AS(integ->step(sys, 0.0, 1.0, x), stride::StepFailure);
  CHECK(x[0] == 1.0);
  // A small step is solvable: exact y = 1/(1 - t).
  double t = 0.0;
  for (int k = 0; k < 50; ++k) t = integ->step(sys, t, 0.01, x);
  CHECK(x[0] == doctest::Approx(1.0 / (1.0 - 0.5)).epsilon(1e-3));
}

TEST_CASE("fixed-step statistics count steps and evaluations") {
  struct Case {
    std::string name;
    long rhs_per_step;
  };
  for (const auto& c : std::vector<Case>{{"forward_euler", 1}, {"semi_implicit_euler", 1}, {"rk4", 4}}) {
    Oscillator sys;
    auto integ = make(c.name);
    run(*integ, sys, 1.0, 0.01);
    const json s = integ->statistics();
    CHECK(s.at("steps").get<long>() == 100);
    CHECK(s.at("rhs_evaluations").get<long>() == 100 * c.rhs_per_step);
  }
  Oscillator sys;
  auto trap = make("trapezoidal");
  run(*trap, sys, 1.0, 0.01);
  const json s = trap->statistics();
  CHECK(s.at("steps").get<long>() == 100);
  // Linear system: one Newton update solves it, a second confirms convergence.
  CHECK(s.at("newton_iterations").get<long>() <= 200);
  CHECK(s.at("newton_iterations").get<long>() >= 100);
  CHECK(s.at("rhs_evaluations").get<long>() >= 2 * 100);
}

TEST_CASE("step() neither allocates nor evaluates a system with inputs beyond t + h") {
  // Records the latest time at which derivatives() was called. It declares an input (unused):
  // a system without inputs may be stepped past t + h (see the test above).
  class Probe final : public TestSystem {
   public:
    double latest = -1.0;
    std::vector<stride::PortSpec> ports() const override { return {stride::input("u", 1, "1")}; }
    std::size_t state_size() const override { return 2; }
    std::size_t second_order_size() const override { return 1; }
    void initial_state(double, std::span<double> x) override { x[0] = 1.0, x[1] = 0.0; }
    void derivatives(double t, std::span<const double> x, std::span<double> f) override {
      latest = std::max(latest, t);
      f[0] = x[1];
      f[1] = -x[0] - 0.1 * x[1] * x[1] * x[1];
    }
  };
  const std::vector<std::pair<std::string, json>> cases = {
      {"forward_euler", json::object()}, {"semi_implicit_euler", json::object()},
      {"rk4", json::object()},           {"trapezoidal", json::object()},
      {"cvode", {{"method", "bdf"}}},    {"cvode", {{"method", "adams"}}},
      {"arkode", {{"method", "explicit"}}}, {"arkode", {{"method", "implicit"}}},
      {"arkode", {{"method", "imex"}}}};
  for (const auto& [name, params] : cases) {
    Probe sys;
    NoInputs inputs;
    sys.bind(inputs);
    auto integ = make(name, params);
    std::vector<double> x(2);
    sys.initial_state(0.0, x);
    const long at_reset = stride_test::allocations.load();
    integ->reset(sys, 0.0, x);
    CHECK(stride_test::allocations.load() > at_reset);  // the counter sees stride_test::allocations inside plugins
    double t = integ->step(sys, 0.0, 0.05, x);
    const long before = stride_test::allocations.load();
    bool beyond = false;
    for (int k = 0; k < 40; ++k) {
      const double end = t + 0.05;
      t = integ->step(sys, t, 0.05, x);
      beyond = beyond || sys.latest > end;
    }
    const long during = stride_test::allocations.load() - before;
    const std::string plugin = name + " " + params.dump();  // a structured binding cannot be captured (clang 14)
    INFO(plugin);
    CHECK(during == 0);
    CHECK_FALSE(beyond);
  }
}

namespace {

// A held input u_k on [T_k, T_k+1], as a zero-order hold gives it to the reader.
class HeldInput final : public stride::Inputs {
 public:
  double u = 0.0;
  std::span<const double> evaluate(std::size_t, double) override { return {&u, 1}; }
};

// τ y' = u − y with u held: exact y(T_k+1) = u_k + (y_k − u_k) e^(−H/τ).
class Filter final : public TestSystem {
 public:
  static constexpr double tau = 0.05;
  std::vector<stride::PortSpec> ports() const override { return {stride::input("u", 1, "1")}; }
  std::size_t state_size() const override { return 1; }
  void initial_state(double, std::span<double> x) override { x[0] = 0.0; }
  void derivatives(double t, std::span<const double> x, std::span<double> f) override {
    f[0] = (inputs().at(0, t)[0] - x[0]) / tau;
  }
};

struct JumpRun {
  double error = 0.0;
  long rhs = 0, rejected = 0;
  std::string failure;  // the StepFailure message, when a step failed
};

// 2 s of the filter under a staircase u_k = sin(3 T_k), H = 0.1 s, one step() per macro step;
// the integrator is told of every jump (as the host does after each new sample).
JumpRun staircase(const std::string& name, json params, bool restart) {
  params["restart_at_input_discontinuities"] = restart;
  auto integ = make(name, params);
  Filter sys;
  HeldInput in;
  sys.bind(in);
  std::vector<double> x(1, 0.0);
  const double H = 0.1;
  integ->reset(sys, 0.0, x);
  double y = 0.0;
  JumpRun r;
  for (int k = 0; k < 20; ++k) {
    const double T = k * H;
    in.u = std::sin(3.0 * T);
    if (k > 0) integ->input_discontinuity(T);
    double reached = T;
    try {
      reached = integ->step(sys, T, H, x);
    } catch (const stride::StepFailure& e) {
      r.failure = e.what();
      return r;
    }
    REQUIRE(reached == doctest::Approx(T + H).epsilon(1e-14));
    y = in.u + (y - in.u) * std::exp(-H / Filter::tau);
    r.error = std::max(r.error, std::abs(x[0] - y));
  }
  const json s = integ->statistics();
  r.rhs = s.at("rhs_evaluations").get<long>();
  r.rejected = s.at("rejected_steps").get<long>();
  CHECK(s.at("input_discontinuities").get<long>() == 19);
  return r;
}

// x = A cos t as [x, x'] with A = 1e6 (a pressure in Pa) or 1e-3 (a length in m), the states
// declared with their nominal value A, or not declared.
class Scaled final : public TestSystem {
 public:
  Scaled(double amplitude, bool declared) : A_(amplitude), declared_(declared) {}
  std::size_t state_size() const override { return 2; }
  void initial_state(double, std::span<double> x) override { x[0] = A_, x[1] = 0.0; }
  void derivatives(double, std::span<const double> x, std::span<double> f) override { f[0] = x[1], f[1] = -x[0]; }
  std::vector<stride::StateSpec> states() const override {
    if (!declared_) return {};
    return {{"x", "1", A_}, {"x_dot", "1/s", A_}};
  }

 private:
  double A_;
  bool declared_;
};

}  // namespace

TEST_CASE("adaptive integrators told of input jumps restart at them and stay accurate") {
  const json tight = {{"rtol", 1e-8}, {"atol", 1e-10}};
  struct Case {
    std::string name;
    json params;
  };
  for (const Case& c : {Case{"cvode", {{"method", "bdf"}}}, Case{"cvode", {{"method", "adams"}}},
                        Case{"arkode", {{"method", "explicit"}}}, Case{"arkode", {{"method", "implicit"}}}}) {
    json p = tight;
    p.update(c.params);
    const JumpRun with = staircase(c.name, p, true), without = staircase(c.name, p, false);
    std::printf("  %-7s %-9s restart: error %.2e, %ld rhs, %ld rejected | carried over: %s\n", c.name.c_str(),
                p.at("method").get<std::string>().c_str(), with.error, with.rhs, with.rejected,
                without.failure.empty() ? ("error " + std::to_string(without.error) + ", " + std::to_string(without.rhs) +
                                           " rhs, " + std::to_string(without.rejected) + " rejected")
                                              .c_str()
                                        : without.failure.c_str());
    CHECK(with.failure.empty());
    CHECK(with.error < 1e-6);
    if (without.failure.empty()) CHECK(with.rejected <= without.rejected);
  }
}

TEST_CASE("per-state absolute tolerances: nominal values scale the error test") {
  // stride::absolute_tolerances: atol × nominal, or the state's own tolerance.
  class Declared final : public TestSystem {
   public:
    std::size_t state_size() const override { return 3; }
    void initial_state(double, std::span<double>) override {}
    void derivatives(double, std::span<const double>, std::span<double>) override {}
    std::vector<stride::StateSpec> states() const override {
      return {{"p", "Pa", 1e6}, {"s", "m", 1.0, 1e-9}, {"n", "1"}};
    }
  } d;
  std::vector<double> atol(3);
  stride::absolute_tolerances(d, 1e-8, atol);
  CHECK(atol[0] == doctest::Approx(1e-2));
  CHECK(atol[1] == 1e-9);
  CHECK(atol[2] == 1e-8);
  Decay none;
  std::vector<double> one(1);
  stride::absolute_tolerances(none, 1e-8, one);
  CHECK(one[0] == 1e-8);

  // One absolute tolerance for Pa and m forces needless steps on the pressure as it crosses
  // zero, and no control on the 1e-3 m length; nominal values give each its own scale.
  // The same oscillation as a 1e-3 m length and as a 1e6 Pa pressure: with nominal values the
  // error test is the same after scaling, so both take the same steps to the same relative
  // error; with one atol meant for magnitude 1, the length is controlled loosely and the
  // pressure needlessly tightly at its zero crossings.
  for (const std::string& name : {std::string("cvode"), std::string("arkode")}) {
    long steps[2][2];
    double error[2][2];
    for (int declared = 0; declared < 2; ++declared)
      for (int big = 0; big < 2; ++big) {
        const double A = big ? 1e6 : 1e-3;
        auto integ = make(name, {{"rtol", 1e-6}, {"atol", 1e-6}});
        Scaled sys(A, declared == 1);
        auto x = run(*integ, sys, 10.0, 10.0);
        steps[declared][big] = integ->statistics().at("steps").get<long>();
        error[declared][big] = std::abs(x[0] - A * std::cos(10.0)) / A;
      }
    std::printf("  %-7s one atol: %ld / %ld steps (1e-3 m / 1e6 Pa), relative errors %.1e / %.1e | nominal values: "
                "%ld / %ld steps, %.1e / %.1e\n",
                name.c_str(), steps[0][0], steps[0][1], error[0][0], error[0][1], steps[1][0], steps[1][1], error[1][0],
                error[1][1]);
    CHECK(steps[1][0] == steps[1][1]);
    CHECK(error[1][0] == doctest::Approx(error[1][1]).epsilon(1e-6));
    CHECK(error[1][0] < 1e-4);
    CHECK(steps[0][0] != steps[0][1]);
    CHECK(steps[1][1] < steps[0][1]);
  }
}
