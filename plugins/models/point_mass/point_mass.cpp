// A single rigid mass on a line: the smallest multibody model with an interface.
//
//   m v̇ = f0 + λ_i,   q = [s], v = [ṡ], interface velocity w_i = ṡ (D_i = [1], Ḋ_i v = 0)
//
// Its reduced interface model (Peiret 2018 Eq. 12-13) is exact and constant, M̃ = m and
// f̃ = f0, so a RIM built from it reproduces the mass itself: the test problem for the RIM
// co-simulation of Algorithm 2. The ports carry the names of the crane models
// (plugins/models/common/crane_model.hpp), so manifests written for the crane plug into it:
//   coupling "force":    input f_h (N), paired with output s_dot in the power bond "actuator";
//   coupling "pressure": inputs p1, p2 (Pa) and λ_i = (p2 − p1) a_p − c ṡ (Eq. 24) on this
//                        side, outputs flow1 = −a_p ṡ, flow2 = a_p ṡ (bonds "chamber1/2").
// Outputs: s, s_dot, s_ddot (feedthrough of the input), M_eff, f_eff, energy [, flow1, flow2].
// Energy: ½ m ṡ² − f0 (s − s0), the kinetic energy plus the potential of the constant force.
#include <stride/stride.hpp>

namespace {

using namespace stride;

class PointMass final : public MultibodyModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "point_mass";
    i.kind = Kind::subsystem;
    i.form = Form::multibody;
    i.version = "1.0";
    i.description = "Rigid mass on a line driven by a constant force and an actuator (exact reduced interface model)";
    i.parameters = {
        real_param("m", 100.0, "kg", "mass", 1e-12),
        real_param("f0", 0.0, "N", "constant applied force along s (e.g. -m g for a hoisted load)"),
        real_param("s0", 0.5, "m", "initial position (actuator length)"),
        real_param("v0", 0.0, "m/s", "initial velocity"),
        choice_param("coupling", "force", {"force", "pressure"},
                     "force: input actuator force f_h; pressure: input chamber pressures p1, p2 (Eq. 24 on this side)"),
        real_param("a_p", 65e-4, "m^2", "piston area (pressure coupling only)", 0.0),
        real_param("c", 1e5, "N*s/m", "cylinder viscous friction (pressure coupling only)", 0.0),
    };
    return i;
  }

  explicit PointMass(const Params& p)
      : m_(p.real("m")), f0_(p.real("f0")), s0_(p.real("s0")), v0_(p.real("v0")),
        pressure_(p.string("coupling") == "pressure"), a_p_(p.real("a_p")), c_(p.real("c")) {}

  std::vector<PortSpec> ports() const override {
    std::vector<PortSpec> ps;
    if (pressure_) {
      ps.push_back(
          bonded(input("p1", 1, "Pa", "pressure of chamber 1 (shrinks as s grows)"), BondRole::effort, "chamber1"));
      ps.push_back(bonded(input("p2", 1, "Pa", "pressure of chamber 2 (grows with s)"), BondRole::effort, "chamber2"));
    } else {
      ps.push_back(
          bonded(input("f_h", 1, "N", "actuator force, positive along increasing s"), BondRole::effort, "actuator"));
    }
    PortSpec s_dot = output("s_dot", 1, "m/s", "velocity (interface velocity)");
    ps.push_back(output("s", 1, "m", "position (actuator length)"));
    ps.push_back(pressure_ ? s_dot : bonded(s_dot, BondRole::flow, "actuator"));
    ps.push_back(output("s_ddot", 1, "m/s^2", "acceleration with the current input", true));
    ps.push_back(output("M_eff", 1, "kg", "effective mass of the reduced interface model: m"));
    ps.push_back(output("f_eff", 1, "N", "effective force of the reduced interface model: f0"));
    ps.push_back(output("energy", 1, "J", "kinetic energy plus the potential of f0"));
    if (pressure_) {
      ps.push_back(bonded(output("flow1", 1, "m^3/s", "-a_p s_dot: volume rate the piston pushes out of chamber 1"),
                          BondRole::flow, "chamber1"));
      ps.push_back(bonded(output("flow2", 1, "m^3/s", "a_p s_dot: volume rate the piston sweeps into chamber 2"),
                          BondRole::flow, "chamber2"));
    }
    return ps;
  }

  MultibodySizes sizes() const override { return {1, 0, 1}; }
  void initial_state(double, VectorRef q, VectorRef v) override {
    q[0] = s0_;
    v[0] = v0_;
  }
  void mass_matrix(ConstVectorRef, MatrixRef M) override { M(0, 0) = m_; }
  void coriolis(ConstVectorRef, ConstVectorRef, VectorRef c) override { c[0] = 0.0; }
  void applied_forces(double, ConstVectorRef, ConstVectorRef, VectorRef f) override { f[0] = f0_; }
  void interface_forces(double t, ConstVectorRef, ConstVectorRef v, VectorRef lambda_i) override {
    if (pressure_) lambda_i[0] = (inputs().at(1, t)[0] - inputs().at(0, t)[0]) * a_p_ - c_ * v[0];
    else lambda_i[0] = inputs().at(0, t)[0];
  }
  void interface_jacobian(ConstVectorRef, MatrixRef D_i) override { D_i(0, 0) = 1.0; }
  void interface_bias(ConstVectorRef, ConstVectorRef, VectorRef b_i) override { b_i[0] = 0.0; }

  void outputs(const MultibodyState& st, std::span<double> y) override {
    std::size_t k = 0;
    y[k++] = st.q[0];
    y[k++] = st.v[0];
    y[k++] = st.v_dot[0];
    y[k++] = st.M_eff(0, 0);
    y[k++] = st.f_eff[0];
    y[k++] = energy_at(st.t, st.q, st.v);
    if (pressure_) {
      y[k++] = -a_p_ * st.v[0];
      y[k++] = a_p_ * st.v[0];
    }
  }

  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    return 0.5 * m_ * v[0] * v[0] - f0_ * (q[0] - s0_);
  }

 private:
  double m_, f0_, s0_, v0_;
  bool pressure_;
  double a_p_, c_;
};

}  // namespace

STRIDE_PLUGIN(PointMass)
