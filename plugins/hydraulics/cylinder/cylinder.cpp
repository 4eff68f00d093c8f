// Valve-controlled hydraulic cylinder of Peiret et al. 2018, Sect. 4.1 (Eq. 24-30, Table 2),
// as an OdeSystem with state x = [p1, p2] stepped by the integrator named in the manifest.
// The equations live in plugins/common/hydraulics.hpp, shared with the monolithic reference.
//
// Sign convention: s is the actuator length; chamber 1 shrinks as s grows (Eq. 28), and the
// actuator force f_h = (p2 − p1) a_p − c ṡ (Eq. 24) is positive when it extends the actuator.
//
// Initialization (initialize = "equilibrium", Eq. 41): in equilibrate(t0) the cylinder reads
// the input f_eq and solves for [κ, p1, p2] with ṡ = 0, f_h = f_required, ṗ1 = ṗ2 = 0. f_eq is
// meant to be connected to the multibody model's effective force f̃ along s (Eq. 13): at rest
// Eq. 11 gives λ = −f̃, so f_required = −f_eq. For the crane of BENCHMARKS §1, f̃ = −8829 N and
// the solve gives Table 3: κ = 0.45435, p1 = 3.17 MPa, p2 = 4.53 MPa.
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "common/hydraulics.hpp"

namespace {

namespace hy = stride::hydraulics;

using stride::real_list_param;

// Call order (through the host's OdeSystem adapter): bind -> initial_state(t0) ->
// outputs -> equilibrate(t0) -> { derivatives / jacobian / outputs }*.
// Inputs (port order): s, s_dot (coupling "force", "pressure_rate") or flow1, flow2
// (coupling "pressure"), [f_eq when initialize = "equilibrium"], [kappa_offset when
// valve_law = "input"]. Outputs: [f_h when coupling = "force"], p1, p2, kappa, valve_power,
// [friction_power when coupling = "force"].
class CylinderOde final : public stride::OdeSystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "cylinder";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::ode;
    i.version = "1.0";
    i.description = "Valve-controlled hydraulic cylinder, pressures p1 p2 (Peiret 2018 Eq. 24-30)";
    i.parameters = hy::cylinder_params();
    const std::vector<stride::ParamSpec> more = {
        stride::bool_param("s0_from_input", true,
                           "take s0 of Eq. 28 (equal chamber lengths) from the input s at t0; false: use parameter s0"),
        stride::real_param("s0", 0.5, "m", "actuator length with equal chambers (Eq. 28) when s0_from_input is false",
                           0.0),
        stride::choice_param("initialize", "equilibrium", {"equilibrium", "given"},
                             "equilibrium: solve Eq. 41 for kappa0, p1, p2 from the input f_eq at t0; "
                             "given: use kappa0, p1_0, p2_0"),
        stride::real_param("kappa0", 0.5, "1", "initial spool displacement when initialize = given", 0.0, 1.0),
        stride::real_param("p1_0", 3.85e6, "Pa", "initial pressure of chamber 1 when initialize = given", 0.0),
        stride::real_param("p2_0", 3.85e6, "Pa", "initial pressure of chamber 2 when initialize = given", 0.0),
        stride::choice_param("valve_law", "offset_table", {"offset_table", "input"},
                             "offset_table: kappa(t) = kappa0 + piecewise-linear offset {valve_times, valve_offsets}; "
                             "input: kappa(t) = kappa0 + input port kappa_offset"),
        real_list_param("valve_times", {2.0, 2.001, 6.0, 6.002}, "s",
                        "nodes of the spool offset table (default: Eq. 30 with t_a = 2 s, t_b = 6 s, t_r = 1 ms)"),
        real_list_param("valve_offsets", {0.0, -0.01, -0.01, 0.02}, "1",
                        "spool offsets from kappa0 at valve_times, constant outside (default: Eq. 30; "
                        "Eq. 35 is times [0, 2], offsets [0, -0.005])"),
        stride::choice_param("coupling", "force", {"force", "pressure", "pressure_rate"},
                             "force: inputs s, s_dot, output f_h (bond 'actuator', feedthrough of s_dot); "
                             "pressure: inputs s, flow1, flow2 (chamber volume rates), outputs p1, p2 "
                             "(bonds 'chamber1', 'chamber2'); pressure_rate: inputs s, s_dot, outputs p1, p2 "
                             "without bonds. In both pressure modes the multibody side computes Eq. 24"),
    };
    i.parameters.insert(i.parameters.end(), more.begin(), more.end());
    return i;
  }

  explicit CylinderOde(const stride::Params& p)
      : cyl_(hy::cylinder_from(p)),
        s0_from_input_(p.boolean("s0_from_input")),
        equilibrium_(p.string("initialize") == "equilibrium"),
        valve_input_(p.string("valve_law") == "input"),
        force_coupling_(p.string("coupling") == "force"),
        flow_inputs_(p.string("coupling") == "pressure"),
        kappa0_(p.real("kappa0")),
        p1_0_(p.real("p1_0")),
        p2_0_(p.real("p2_0")),
        offsets_(p.reals("valve_times"), p.reals("valve_offsets"), "cylinder valve table") {
    cyl_.s0 = p.real("s0");
    std::size_t k = flow_inputs_ ? 3 : 2;
    if (equilibrium_) f_eq_port_ = k++;
    if (valve_input_) kappa_port_ = k++;
    if (equilibrium_) {
      // Until equilibrate() runs: the symmetric state of zero force.
      kappa0_ = 0.5;
      p1_0_ = p2_0_ = 0.5 * (cyl_.p_P + cyl_.p_T);
    }
  }

  std::vector<stride::PortSpec> ports() const override {
    using stride::BondRole;
    std::vector<stride::PortSpec> p;
    p.push_back(stride::input("s", 1, "m", "actuator length"));
    if (flow_inputs_) {
      p.push_back(
          stride::bonded(stride::input("flow1", 1, "m^3/s", "rate of change of the chamber 1 volume, -a_p s_dot"),
                         BondRole::flow, "chamber1"));
      p.push_back(
          stride::bonded(stride::input("flow2", 1, "m^3/s", "rate of change of the chamber 2 volume, a_p s_dot"),
                         BondRole::flow, "chamber2"));
    } else {
      auto sd = stride::input("s_dot", 1, "m/s", "actuator rate");
      p.push_back(force_coupling_ ? stride::bonded(sd, BondRole::flow, "actuator") : sd);
    }
    if (equilibrium_)
      p.push_back(stride::input("f_eq", 1, "N",
                                "effective force f~ of the multibody model along s at t0 (Eq. 13); the "
                                "equilibrium actuator force is -f_eq (Eq. 11 at rest); read only in equilibrate"));
    if (valve_input_) p.push_back(stride::input("kappa_offset", 1, "1", "spool displacement offset from kappa0"));
    if (force_coupling_)
      p.push_back(stride::bonded(
          stride::output("f_h", 1, "N", "actuator force (p2 - p1) a_p - c s_dot, positive extends (Eq. 24)", true),
          BondRole::effort, "actuator"));
    auto p1 = stride::output("p1", 1, "Pa", "pressure of chamber 1 (shrinks as s grows)");
    auto p2 = stride::output("p2", 1, "Pa", "pressure of chamber 2 (grows as s grows)");
    p.push_back(flow_inputs_ ? stride::bonded(p1, BondRole::effort, "chamber1") : p1);
    p.push_back(flow_inputs_ ? stride::bonded(p2, BondRole::effort, "chamber2") : p2);
    p.push_back(stride::output("kappa", 1, "1", "spool displacement (Eq. 29)", valve_input_));
    p.push_back(stride::output("valve_power", 1, "W",
                               "power the valve delivers into the chambers, sum of (p_i + rho u_i) Q_valve,i: "
                               "with the friction power, the cylinder's energy balance dU/dt = valve_power - "
                               "friction_power - f_h s_dot",
                               valve_input_));
    if (force_coupling_)
      p.push_back(stride::output("friction_power", 1, "W", "c s_dot^2, dissipated by the friction of Eq. 24", true));
    return p;
  }

  std::size_t state_size() const override { return 2; }

  void initial_state(double, std::span<double> x) override {
    x[0] = p1_0_;
    x[1] = p2_0_;
  }

  void equilibrate(double t0, std::span<double> x) override {
    if (s0_from_input_) cyl_.s0 = inputs().at(0, t0)[0];
    if (!equilibrium_) return;
    f_required_ = -inputs().at(f_eq_port_, t0)[0];
    hy::Equilibrium e;
    try {
      e = hy::solve_equilibrium(cyl_, f_required_);
    } catch (const std::runtime_error& err) {
      throw stride::StepFailure(std::string("cylinder initialization: ") + err.what());
    }
    // κ(t0) must equal the equilibrium spool position.
    kappa0_ = e.kappa - offset(t0);
    p1_0_ = x[0] = e.p1;
    p2_0_ = x[1] = e.p2;
    iterations_ = e.iterations;
  }

  void derivatives(double t, std::span<const double> x, std::span<double> dxdt) override {
    const double s = inputs().at(0, t)[0], k = kappa(t);
    // Eq. 28 has no meaning once a chamber length reaches zero (the rates become NaN): say why.
    if (!(cyl_.l1(s) > 0.0 && cyl_.l2(s) > 0.0))
      log_error("the piston is outside the cylinder: s = {} m gives chamber lengths l1 = {} m, l2 = {} m "
                "(Eq. 28 with l = {} m, s0 = {} m)", s, cyl_.l1(s), cyl_.l2(s), cyl_.l, cyl_.s0);
    if (flow_inputs_) {  // each chamber has its own volume rate
      dxdt[0] = cyl_.pressure_rates(s, chamber_rate(t, 0), k, x[0], x[1]).dp1;
      dxdt[1] = cyl_.pressure_rates(s, chamber_rate(t, 1), k, x[0], x[1]).dp2;
    } else {
      const auto r = cyl_.pressure_rates(s, chamber_rate(t, 0), k, x[0], x[1]);
      dxdt[0] = r.dp1;
      dxdt[1] = r.dp2;
    }
    ++rhs_;
  }

  bool jacobian(double t, std::span<const double> x, Eigen::Ref<Eigen::MatrixXd> J) override {
    const double s = inputs().at(0, t)[0], k = kappa(t);
    J(0, 0) = cyl_.rates(s, chamber_rate(t, 0), k, x[0], x[1]).dp1_dp1;
    J(0, 1) = 0.0;
    J(1, 0) = 0.0;
    J(1, 1) = cyl_.rates(s, chamber_rate(t, 1), k, x[0], x[1]).dp2_dp2;
    return true;
  }

  void outputs(double t, std::span<const double> x, std::span<double> y) override {
    std::size_t k = 0;
    const double s_dot = force_coupling_ ? inputs().at(1, t)[0] : 0.0;
    if (force_coupling_) y[k++] = cyl_.force(x[0], x[1], s_dot);
    y[k++] = x[0];
    y[k++] = x[1];
    const double kap = kappa(t);
    y[k++] = kap;
    // The energy-balance outputs only when something reads them (two quadratures each step).
    if (output_read(k)) y[k] = cyl_.valve_power(kap, x[0], x[1]);
    ++k;
    if (force_coupling_ && output_read(k)) y[k] = cyl_.c * s_dot * s_dot;
  }
  // Compression energy of the fluid in both chambers (see Cylinder::energy_density).
  double energy_at(double t, std::span<const double> x) const override {
    return cyl_.stored_energy(inputs().at(0, t)[0], x[0], x[1]);
  }
  std::vector<stride::StateSpec> states() const override {
    // Pressures of order 1e6 Pa: the integrator's absolute tolerance applies per MPa.
    return {{"p1", "Pa", 1e6}, {"p2", "Pa", 1e6}};
  }

  stride::json statistics() const override { return {{"rhs_evaluations", rhs_}}; }
  // Beyond x only what equilibrate() fixed: nothing else to save.
  bool can_save_state() const override { return true; }

  stride::json report() const override {
    stride::json r = {{"initialize", equilibrium_ ? "equilibrium" : "given"},
                      {"kappa0", kappa0_},
                      {"p1_0", p1_0_},
                      {"p2_0", p2_0_},
                      {"s0", cyl_.s0}};
    if (equilibrium_) {
      r["f_required"] = f_required_;
      r["newton_iterations"] = iterations_;
    }
    return r;
  }

 private:
  // Actuator rate seen by chamber c (0, 1): ṡ, or the piston volume rate of that chamber / ±a_p.
  double chamber_rate(double t, int c) const {
    if (!flow_inputs_) return inputs().at(1, t)[0];
    return c == 0 ? -inputs().at(1, t)[0] / cyl_.a_p : inputs().at(2, t)[0] / cyl_.a_p;
  }
  double offset(double t) const { return valve_input_ ? inputs().at(kappa_port_, t)[0] : offsets_(t); }
  // Eq. 29 holds for 0 <= κ <= 1; a command beyond is held at the end (the spool's stroke),
  // said once each time the command leaves the range.
  double kappa(double t) const {
    const double command = kappa0_ + offset(t);
    const bool beyond = command < 0.0 || command > 1.0;
    if (beyond && !saturated_)
      log_warning(
          "spool command kappa0 + offset = {} is outside [0, 1] from t = {} s: held at {} (valve fully open, {})",
          command, t, command < 0.0 ? 0.0 : 1.0,
          command < 0.0 ? "pump to chamber 2, chamber 1 to tank" : "pump to chamber 1, chamber 2 to tank");
    saturated_ = beyond;
    return std::clamp(command, 0.0, 1.0);
  }

  hy::Cylinder cyl_;
  bool s0_from_input_, equilibrium_, valve_input_, force_coupling_, flow_inputs_;
  double kappa0_, p1_0_, p2_0_;
  hy::PiecewiseLinear offsets_;
  std::size_t f_eq_port_ = 0, kappa_port_ = 0;
  double f_required_ = 0.0;
  int iterations_ = 0;
  long rhs_ = 0;
  mutable bool saturated_ = false;  // the spool command was outside [0, 1] at the last evaluation
};

}  // namespace

STRIDE_PLUGIN(CylinderOde)
