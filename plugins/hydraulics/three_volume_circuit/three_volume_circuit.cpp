// Three-volume hydraulic actuator circuit of Rahikainen et al. 2020, §3.2 (lumped fluid
// theory, §2.2), as an OdeSystem with state x = [p1, p2, p3, U]:
//
//   pump p_P, tank p_T --[4/3 directional valve, spool U]--+-- V3 --[throttle]-- V1 (piston side)
//                                                          +------------------- V2 (rod side)
//
//   ṗ1 = B_e1/V1 (Q31 − A1 ṡ)      V1 = A1 l1 + V_h1,  l1 = l1_0 + (s − s0)
//   ṗ2 = B_e2/V2 (A2 ṡ − Q2V)      V2 = A2 l2 + V_h2,  l2 = l − l1
//   ṗ3 = B_e3/V3 (QV3 − Q31)       V3 = V_h3
//   U̇  = (U_ref − U)/τ,            τ = 1/(2π f45)   (first-order spool dynamics)
//
// Flows are semi-empirical orifice flows Q = C sgn(Δp) sqrt|Δp| (Handroos & Vilenius) with a
// laminar region |Δp| < dp_lin: the throttle Q31 = C_t(p3 − p1), C_t = C_d A_t sqrt(2/ρ); the
// directional valve (closed centre, zero lap) with C_v = Q_N/sqrt(dp_N):
//   U >= 0: QV3 = C_v U (p_P − p3),  Q2V = C_v U (p2 − p_T)   (extends: P→V3→V1, V2→T)
//   U <  0: QV3 = C_v U (p3 − p_T),  Q2V = C_v U (p_P − p2)   (retracts: P→V2, V1→V3→T)
// Effective bulk modulus of each volume: 1/B_e = 1/B_oil + (V_cyl/V)/B_cyl + (V_h/V)/B_hose.
// Actuator force, positive along increasing s (extends):
//   f_h = p1 A1 − p2 A2 − c ṡ + F_d,
// F_d the end dampers (spring k_damper, damper c_damper, depth l_damper, at both ends, pushing
// away from the end and never pulling towards it).
// Rahikainen's parameter table is missing from our copy; every default below is chosen to fit
// the crane of BENCHMARKS.md §1 and is justified in docs/three_volume_circuit.md.
//
// Initialization (initialize = "equilibrium"): with the spool closed (U_ref(t0) = 0) the circuit
// is at rest for any pressures with p3 = p1 and p1 A1 − p2 A2 = f_required; the rod-side
// pressure is then fixed by parameter p2_0. f_required = −f_eq (f_eq: the multibody effective
// force along s, as for the cylinder plugin).
#include <algorithm>
#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "common/hydraulics.hpp"

namespace {

namespace hy = stride::hydraulics;

using stride::real_list_param;

// Call order (through the host's OdeSystem adapter): bind -> initial_state(t0) -> outputs ->
// equilibrate(t0) -> { derivatives / outputs }*.
// Inputs (port order): s, s_dot, [f_eq when initialize = "equilibrium"],
// [U_ref when reference = "input"]. Outputs: [f_h when coupling = "force"], p1, p2, p3, U.
class ThreeVolumeCircuit final : public stride::OdeSystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "three_volume_circuit";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::ode;
    i.version = "1.0";
    i.description = "Cylinder with 4/3 valve, throttle and three volumes (Rahikainen 2020 Sect. 3.2)";
    using stride::real_param;
    i.parameters = {
        real_param("A1", 65e-4, "m^2", "piston-side area (piston diameter 91 mm: a_p of Peiret Table 2)", 1e-8),
        real_param("A2", 45.4e-4, "m^2", "rod-side annulus area (rod diameter 50 mm)", 1e-8),
        real_param("l", 0.442, "m", "cylinder length l1 + l2, including the dampers (Peiret Table 2)", 1e-6),
        real_param("l1_0", 0.221, "m", "piston-side length l1 at s = s0 (mid-stroke)", 0.0),
        stride::bool_param("s0_from_input", true, "take s0 from the input s at t0; false: use parameter s0"),
        real_param("s0", 0.5, "m", "actuator length at which l1 = l1_0 (when s0_from_input is false)", 0.0),
        real_param("c", 1e5, "N*s/m", "viscous friction coefficient (Rahikainen 2020: 1e5 Ns/m)", 0.0),
        real_param("p_P", 7.6e6, "Pa", "pump pressure (Peiret Table 2)", 0.0),
        real_param("p_T", 0.1e6, "Pa", "tank pressure (Peiret Table 2)", 0.0),
        real_param("rho", 850.0, "kg/m^3", "oil density (Peiret Table 2)", 1e-6),
        real_param("B_oil", 1.5e9, "Pa", "oil bulk modulus (about 1/a of Peiret Table 2)", 1e3),
        real_param("B_cyl", 31.5e9, "Pa", "bulk modulus of the steel cylinder chambers", 1e3),
        real_param("B_hose", 0.55e9, "Pa", "bulk modulus of the hydraulic hoses", 1e3),
        real_param("V_h1", 5e-5, "m^3", "hose volume of V1 (piston side)", 0.0),
        real_param("V_h2", 5e-5, "m^3", "hose volume of V2 (rod side)", 0.0),
        real_param("V_h3", 1e-4, "m^3", "hose volume of V3 (between directional valve and throttle)", 1e-9),
        real_param("Q_N", 1e-3, "m^3/s", "directional valve rated flow per edge at U = 1 (60 l/min)", 1e-12),
        real_param("dp_N", 3.5e6, "Pa", "pressure drop per edge at the rated flow (C_v = Q_N/sqrt(dp_N))", 1.0),
        real_param("f45", 20.0, "Hz", "-45 degree phase frequency of the spool; tau = 1/(2 pi f45)", 1e-6),
        real_param("C_d", 0.67, "1", "throttle discharge coefficient (Peiret Table 2 c_d)", 1e-6, 1.0),
        real_param("A_t", 7.07e-6, "m^2", "throttle area (3 mm orifice)", 1e-12),
        real_param("dp_lin", 5e4, "Pa", "laminar region of the orifice flows (|dp| below it: linear)", 1e-6),
        real_param("k_damper", 1e7, "N/m", "end damper spring coefficient", 0.0),
        real_param("c_damper", 1e5, "N*s/m", "end damper damping coefficient", 0.0),
        real_param("l_damper", 0.01, "m", "end damper length at each end of the stroke", 0.0),
        stride::choice_param("initialize", "equilibrium", {"equilibrium", "given"},
                             "equilibrium: closed spool, p2 = p2_0, p1 = p3 from the input f_eq at t0; "
                             "given: p1_0, p2_0, p3 = p1_0"),
        real_param("p1_0", 2.755e6, "Pa", "initial piston-side pressure when initialize = given", 0.0),
        real_param("p2_0", 2e6, "Pa", "initial rod-side pressure (both initializations)", 0.0),
        stride::choice_param("reference", "table", {"table", "input"},
                             "table: U_ref piecewise linear in {U_times, U_values}; input: port U_ref"),
        real_list_param("U_times", {1.0, 1.1, 5.0, 5.1, 6.0, 6.1, 8.5, 8.6}, "s",
                        "nodes of the U_ref table (default: extend into the end damper, hold, retract)"),
        real_list_param("U_values", {0.0, 0.5, 0.5, 0.0, 0.0, -0.5, -0.5, 0.0}, "1",
                        "U_ref at U_times (normalized spool command, +1 = fully open to extend)"),
        stride::choice_param("coupling", "force", {"force", "pressure"},
                             "force: output f_h (effort of bond 'actuator', feedthrough of s, s_dot); "
                             "pressure: only p1, p2, p3 (the multibody side computes the force)"),
    };
    return i;
  }

  explicit ThreeVolumeCircuit(const stride::Params& p)
      : A1_(p.real("A1")), A2_(p.real("A2")), l_(p.real("l")), l1_0_(p.real("l1_0")),
        s0_(p.real("s0")), c_(p.real("c")), pP_(p.real("p_P")), pT_(p.real("p_T")),
        Boil_(p.real("B_oil")), Bcyl_(p.real("B_cyl")), Bhose_(p.real("B_hose")),
        Vh_{p.real("V_h1"), p.real("V_h2"), p.real("V_h3")},
        Cv_(p.real("Q_N") / std::sqrt(p.real("dp_N"))),
        tau_(1.0 / (2.0 * std::numbers::pi * p.real("f45"))),
        Ct_(p.real("C_d") * p.real("A_t") * std::sqrt(2.0 / p.real("rho"))),
        dp_lin_(p.real("dp_lin")),
        kd_(p.real("k_damper")), cd_(p.real("c_damper")), ld_(p.real("l_damper")),
        s0_from_input_(p.boolean("s0_from_input")),
        equilibrium_(p.string("initialize") == "equilibrium"),
        ref_input_(p.string("reference") == "input"),
        force_coupling_(p.string("coupling") == "force"),
        p1_0_(p.real("p1_0")), p2_0_(p.real("p2_0")),
        Uref_(p.reals("U_times"), p.reals("U_values"), "three_volume_circuit U_ref table") {
    if (!(pP_ > pT_)) throw std::invalid_argument("pump pressure p_P must exceed tank pressure p_T");
    if (!(A2_ < A1_)) throw std::invalid_argument("rod-side area A2 must be below the piston-side area A1");
    if (!(l1_0_ < l_)) throw std::invalid_argument("l1_0 must lie inside the cylinder length l");
    std::size_t k = 2;
    if (equilibrium_) f_eq_port_ = k++;
    if (ref_input_) uref_port_ = k++;
  }

  std::vector<stride::PortSpec> ports() const override {
    using stride::BondRole;
    std::vector<stride::PortSpec> p;
    p.push_back(stride::input("s", 1, "m", "actuator length"));
    auto sd = stride::input("s_dot", 1, "m/s", "actuator rate");
    p.push_back(force_coupling_ ? stride::bonded(sd, BondRole::flow, "actuator") : sd);
    if (equilibrium_)
      p.push_back(stride::input("f_eq", 1, "N",
                                "effective force f~ of the multibody model along s at t0; the equilibrium "
                                "actuator force is -f_eq; read only in equilibrate"));
    if (ref_input_) p.push_back(stride::input("U_ref", 1, "1", "directional valve reference (joystick)"));
    if (force_coupling_)
      p.push_back(stride::bonded(
          stride::output("f_h", 1, "N", "actuator force p1 A1 - p2 A2 - c s_dot + F_d, positive extends", true),
          BondRole::effort, "actuator"));
    p.push_back(stride::output("p1", 1, "Pa", "piston-side pressure (V1)"));
    p.push_back(stride::output("p2", 1, "Pa", "rod-side pressure (V2)"));
    p.push_back(stride::output("p3", 1, "Pa", "pressure between directional valve and throttle (V3)"));
    p.push_back(stride::output("U", 1, "1", "directional valve spool position"));
    return p;
  }

  std::size_t state_size() const override { return 4; }

  void initial_state(double t0, std::span<double> x) override {
    x[0] = p1_0_;
    x[1] = p2_0_;
    x[2] = p1_0_;
    x[3] = ref_input_ ? 0.0 : Uref_(t0);
  }

  void equilibrate(double t0, std::span<double> x) override {
    if (s0_from_input_) s0_ = inputs().at(0, t0)[0];
    x[3] = uref(t0);
    if (!equilibrium_) return;
    if (x[3] != 0.0)
      throw stride::StepFailure("three_volume_circuit: static equilibrium needs a closed spool, U_ref(t0) = 0");
    f_required_ = -inputs().at(f_eq_port_, t0)[0];
    const double s = inputs().at(0, t0)[0];
    // At rest: p1 A1 − p2 A2 + F_d(s, 0) = f_required.
    p1_0_ = (f_required_ + p2_0_ * A2_ - damper(s, 0.0)) / A1_;
    if (!(p1_0_ > 0.0 && p1_0_ < pP_))
      throw stride::StepFailure(
          stride::format_text("three_volume_circuit: no static equilibrium with p2 = p2_0 (p1 would be {} Pa)", p1_0_));
    x[0] = x[2] = p1_0_;
    x[1] = p2_0_;
  }

  void derivatives(double t, std::span<const double> x, std::span<double> dxdt) override {
    const double s = inputs().at(0, t)[0], sd = inputs().at(1, t)[0];
    const double p1 = x[0], p2 = x[1], p3 = x[2], U = x[3];
    const double l1 = l1_0_ + (s - s0_), l2 = l_ - l1;
    const double Vc1 = A1_ * std::max(l1, 0.0), Vc2 = A2_ * std::max(l2, 0.0);
    const double V1 = Vc1 + Vh_[0], V2 = Vc2 + Vh_[1], V3 = Vh_[2];
    const double B1 = hy::effective_bulk_modulus(Boil_, V1, Vc1, Bcyl_, Vh_[0], Bhose_);
    const double B2 = hy::effective_bulk_modulus(Boil_, V2, Vc2, Bcyl_, Vh_[1], Bhose_);
    const double B3 = hy::effective_bulk_modulus(Boil_, V3, 0.0, Bcyl_, Vh_[2], Bhose_);
    const double Q31 = hy::orifice_flow(Ct_, p3 - p1, dp_lin_);
    double QV3, Q2V;
    if (U >= 0.0) {
      QV3 = hy::orifice_flow(Cv_ * U, pP_ - p3, dp_lin_);
      Q2V = hy::orifice_flow(Cv_ * U, p2 - pT_, dp_lin_);
    } else {
      QV3 = hy::orifice_flow(Cv_ * U, p3 - pT_, dp_lin_);
      Q2V = hy::orifice_flow(Cv_ * U, pP_ - p2, dp_lin_);
    }
    dxdt[0] = B1 / V1 * (Q31 - A1_ * sd);
    dxdt[1] = B2 / V2 * (A2_ * sd - Q2V);
    dxdt[2] = B3 / V3 * (QV3 - Q31);
    dxdt[3] = (uref(t) - U) / tau_;
    ++rhs_;
  }

  void outputs(double t, std::span<const double> x, std::span<double> y) override {
    std::size_t k = 0;
    if (force_coupling_) {
      const double s = inputs().at(0, t)[0], sd = inputs().at(1, t)[0];
      y[k++] = x[0] * A1_ - x[1] * A2_ - c_ * sd + damper(s, sd);
    }
    y[k++] = x[0];
    y[k++] = x[1];
    y[k++] = x[2];
    y[k++] = x[3];
  }

  // Stored energy: Σ V_i p_i²/(2 B_e,i) of the three volumes plus the end-damper spring. The
  // linear-elastic form is exact for a constant B_e; here B_e,1 and B_e,2 vary with the
  // chamber volumes, which leaves an error of order p/B_e (below 1 %) in the balance.
  double energy_at(double t, std::span<const double> x) const override {
    const double s = inputs().at(0, t)[0];
    const double l1 = l1_0_ + (s - s0_), l2 = l_ - l1;
    const double Vc1 = A1_ * std::max(l1, 0.0), Vc2 = A2_ * std::max(l2, 0.0);
    const double V[3] = {Vc1 + Vh_[0], Vc2 + Vh_[1], Vh_[2]};
    const double B[3] = {hy::effective_bulk_modulus(Boil_, V[0], Vc1, Bcyl_, Vh_[0], Bhose_),
                         hy::effective_bulk_modulus(Boil_, V[1], Vc2, Bcyl_, Vh_[1], Bhose_),
                         hy::effective_bulk_modulus(Boil_, V[2], 0.0, Bcyl_, Vh_[2], Bhose_)};
    double e = 0.0;
    for (int i = 0; i < 3; ++i) e += V[i] * x[i] * x[i] / (2.0 * B[i]);
    const double d = std::max({0.0, ld_ - l1, ld_ - l2});
    return e + 0.5 * kd_ * d * d;
  }
  std::vector<stride::StateSpec> states() const override {
    return {{"p1", "Pa", 1e6}, {"p2", "Pa", 1e6}, {"p3", "Pa", 1e6}, {"U", "1", 1.0}};
  }

  stride::json statistics() const override { return {{"rhs_evaluations", rhs_}}; }
  // Beyond x only what equilibrate() fixed: nothing else to save.
  bool can_save_state() const override { return true; }

  stride::json report() const override {
    stride::json r = {{"initialize", equilibrium_ ? "equilibrium" : "given"},
                      {"p1_0", p1_0_},
                      {"p2_0", p2_0_},
                      {"s0", s0_},
                      {"C_v", Cv_},
                      {"C_t", Ct_},
                      {"tau", tau_}};
    if (equilibrium_) r["f_required"] = f_required_;
    return r;
  }

 private:
  double uref(double t) const { return ref_input_ ? inputs().at(uref_port_, t)[0] : Uref_(t); }

  // End damper force F_d(s, ṡ): pushes away from the end it touches, never pulls.
  double damper(double s, double sd) const {
    const double l1 = l1_0_ + (s - s0_), l2 = l_ - l1;
    if (l1 < ld_) return std::max(0.0, kd_ * (ld_ - l1) - cd_ * sd);
    if (l2 < ld_) return std::min(0.0, -kd_ * (ld_ - l2) - cd_ * sd);
    return 0.0;
  }

  double A1_, A2_, l_, l1_0_, s0_, c_, pP_, pT_, Boil_, Bcyl_, Bhose_;
  double Vh_[3];
  double Cv_, tau_, Ct_, dp_lin_, kd_, cd_, ld_;
  bool s0_from_input_, equilibrium_, ref_input_, force_coupling_;
  double p1_0_, p2_0_;
  hy::PiecewiseLinear Uref_;
  std::size_t f_eq_port_ = 0, uref_port_ = 0;
  double f_required_ = 0.0;
  long rhs_ = 0;
};

}  // namespace

STRIDE_PLUGIN(ThreeVolumeCircuit)
