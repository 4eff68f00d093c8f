// A planar pendulum in Cartesian (dependent) coordinates, as a Stride multibody model:
//
//   q = [x, y] (bob position, pivot at the origin, y up),  M = m I,  c = 0,  f = [0, −m g],
//   Φ(q) = x² + y² − L² = 0,  Φ_q = [2x, 2y],  Φ̈ − Φ_q v̇ = 2 (ẋ² + ẏ²).
//
// A horizontal force F on the bob is the interface: w_i = ẋ, so D_i = [1, 0] and Ḋ_i v = 0.
// The formulation named in the manifest turns these terms into accelerations and steps; the
// model only evaluates them. Along the circle the interface sees the effective mass
// M̃ = m / cos²θ, which the test reads back from the M_eff output.
#include <cmath>

#include <stride/stride.hpp>

namespace {

using stride::ConstVectorRef;
using stride::MatrixRef;
using stride::VectorRef;

// Call order (stride::MultibodyModel, driven by a stride::Formulation):
//   bind(inputs) -> sizes() -> initial_state(t0, q, v) -> any evaluation, in any order.
// Evaluations keep no state: formulations call them at trial points.
class Pendulum final : public stride::MultibodyModel {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "pendulum";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::multibody;
    i.version = "1.0.0";
    i.description = "Planar pendulum in Cartesian coordinates with a length constraint; horizontal force on the bob";
    i.parameters = {
        stride::real_param("mass", 1.0, "kg", "bob mass m", 1e-9),
        stride::real_param("length", 1.0, "m", "rod length L", 1e-6),
        stride::real_param("gravity", 9.81, "m/s^2", "gravitational acceleration g", 0.0),
        // Released below the horizontal: at θ = ±π/2 a horizontal force does no work and
        // M̃ = m / cos²θ is infinite, so no formulation can give the interface model there.
        stride::real_param("theta0", 0.5, "rad", "initial angle from the downward vertical", -1.5, 1.5),
        stride::real_param("omega0", 0.0, "rad/s", "initial angular velocity"),
    };
    return i;
  }

  explicit Pendulum(const stride::Params& p)
      : m_(p.real("mass")), L_(p.real("length")), g_(p.real("gravity")), theta0_(p.real("theta0")), omega0_(p.real("omega0")) {}

  std::vector<stride::PortSpec> ports() const override {
    return {
        // Coupled to a subsystem that takes x_dot back (an actuator), the force and x_dot would
        // form a power bond (stride::bonded, see the shipped point_mass); from a force source
        // they do not, and `validate` would warn about a bond without a partner.
        stride::input("force", 1, "N", "horizontal force on the bob"),
        stride::output("x", 1, "m", "bob position, horizontal"),
        stride::output("y", 1, "m", "bob position, vertical (pivot at 0)"),
        stride::output("x_dot", 1, "m/s", "horizontal bob velocity (interface velocity)"),
        stride::output("theta", 1, "rad", "angle from the downward vertical"),
        stride::output("M_eff", 1, "kg", "effective mass seen by the horizontal force"),
        stride::output("f_eff", 1, "N", "effective force of the reduced interface model"),
        stride::output("energy", 1, "J", "kinetic plus potential energy, zero at rest at the bottom"),
    };
  }

  stride::MultibodySizes sizes() const override { return {2, 1, 1}; }

  // A consistent state: on the circle (Φ = 0) and moving along it (Φ_q v = 0).
  void initial_state(double, VectorRef q, VectorRef v) override {
    q << L_ * std::sin(theta0_), -L_ * std::cos(theta0_);
    v << L_ * std::cos(theta0_) * omega0_, L_ * std::sin(theta0_) * omega0_;
  }

  void mass_matrix(ConstVectorRef, MatrixRef M) override { M << m_, 0.0, 0.0, m_; }
  void coriolis(ConstVectorRef, ConstVectorRef, VectorRef c) override { c.setZero(); }
  void applied_forces(double, ConstVectorRef, ConstVectorRef, VectorRef f) override { f << 0.0, -m_ * g_; }

  // The force comes through the input port; the formulation asks for it at every time it
  // evaluates (Runge–Kutta stages included), and the connection's extrapolator answers.
  void interface_forces(double t, ConstVectorRef, ConstVectorRef, VectorRef lambda_i) override {
    lambda_i[0] = inputs().at(0, t)[0];
  }
  void interface_jacobian(ConstVectorRef, MatrixRef D_i) override { D_i << 1.0, 0.0; }
  void interface_bias(ConstVectorRef, ConstVectorRef, VectorRef b_i) override { b_i[0] = 0.0; }

  void constraints(double, ConstVectorRef q, VectorRef phi) override { phi[0] = q[0] * q[0] + q[1] * q[1] - L_ * L_; }
  void constraint_jacobian(double, ConstVectorRef q, MatrixRef phi_q) override { phi_q << 2.0 * q[0], 2.0 * q[1]; }
  // Φ does not depend on t: the default constraint_rate() (Φ_t = 0) is right.
  void constraint_bias(double, ConstVectorRef, ConstVectorRef v, VectorRef b) override {
    b[0] = 2.0 * (v[0] * v[0] + v[1] * v[1]);
  }

  void outputs(const stride::MultibodyState& s, std::span<double> y) override {
    y[0] = s.q[0];
    y[1] = s.q[1];
    y[2] = s.v[0];
    y[3] = std::atan2(s.q[0], -s.q[1]);
    y[4] = s.M_eff(0, 0);
    y[5] = s.f_eff[0];
    y[6] = energy_at(s.t, s.q, s.v);
  }

  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    return 0.5 * m_ * v.squaredNorm() + m_ * g_ * (q[1] + L_);
  }

 private:
  double m_, L_, g_, theta0_, omega0_;
};

}  // namespace

STRIDE_PLUGIN(Pendulum)
