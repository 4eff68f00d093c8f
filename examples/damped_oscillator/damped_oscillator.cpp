// A driven, damped mass–spring oscillator as a Stride ODE subsystem:
//
//   m·x'' + c·x' + k·x = F(t)
//
// F is an input port (N), supplied through a connection; the outputs are the position x (m)
// and the velocity v (m/s). The host steps the system with the integrator plugin named in
// the manifest, so this file only states the physics.
#include <stride/stride.hpp>

namespace {

// Call order (stride::OdeSystem, driven by the integrator):
//   bind(inputs) -> initial_state(t0, x) -> { derivatives(t, x, dxdt) }* and outputs(t, x, y)
// State x = [position, velocity]; the first half is the mechanical structure dq/dt = v
// (second_order_size() = 1), which semi-implicit integrators exploit.
class DampedOscillator final : public stride::OdeSystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "damped_oscillator";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::ode;
    i.version = "1.0.0";
    i.description = "Driven damped mass-spring oscillator m x'' + c x' + k x = F";
    i.parameters = {
        stride::real_param("mass", 1.0, "kg", "oscillating mass m", 1e-9),
        stride::real_param("stiffness", 40.0, "N/m", "spring stiffness k", 0.0),
        stride::real_param("damping", 0.8, "N*s/m", "viscous damping coefficient c", 0.0),
        stride::real_param("x0", 0.0, "m", "initial position"),
        stride::real_param("v0", 0.0, "m/s", "initial velocity"),
    };
    return i;
  }

  explicit DampedOscillator(const stride::Params& p)
      : m_(p.real("mass")), k_(p.real("stiffness")), c_(p.real("damping")), x0_(p.real("x0")), v0_(p.real("v0")) {}

  std::vector<stride::PortSpec> ports() const override {
    return {
        stride::input("force", 1, "N", "external force F acting on the mass"),
        stride::output("x", 1, "m", "position of the mass"),
        stride::output("v", 1, "m/s", "velocity of the mass"),
    };
  }

  std::size_t state_size() const override { return 2; }
  std::size_t second_order_size() const override { return 1; }

  void initial_state(double, std::span<double> x) override {
    x[0] = x0_;
    x[1] = v0_;
  }

  void derivatives(double t, std::span<const double> x, std::span<double> dxdt) override {
    // The force at time t, produced by the connection's extrapolator.
    const double force = inputs().at(0, t)[0];
    dxdt[0] = x[1];
    dxdt[1] = (force - c_ * x[1] - k_ * x[0]) / m_;
  }

  bool jacobian(double, std::span<const double>, Eigen::Ref<Eigen::MatrixXd> J) override {
    J << 0.0, 1.0, -k_ / m_, -c_ / m_;
    return true;
  }

  // Neither output depends on the input at the same instant: no feedthrough.
  void outputs(double, std::span<const double> x, std::span<double> y) override {
    y[0] = x[0];
    y[1] = x[1];
  }

  // Derivatives and outputs depend on (t, x, force) alone: the host's copy of x is the whole
  // state, so iterative coupling can repeat a macro step.
  bool can_save_state() const override { return true; }

  // Kinetic plus spring energy.
  double energy_at(double, std::span<const double> x) const override {
    return 0.5 * m_ * x[1] * x[1] + 0.5 * k_ * x[0] * x[0];
  }

 private:
  double m_, k_, c_, x0_, v0_;
};

}  // namespace

STRIDE_PLUGIN(DampedOscillator)
