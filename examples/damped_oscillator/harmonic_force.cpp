// A harmonic force source F(t) = amplitude·sin(omega·t + phase), as a Stride subsystem that
// steps itself. It has no inputs; its output drives damped_oscillator in the example manifest.
#include <cmath>

#include <stride/stride.hpp>

namespace {

// Call order (stride::Subsystem, driven by the host's master algorithm):
//   bind(inputs) -> initialize(t0) -> outputs(y) -> { step(t, h) -> outputs(y) }*
// step() takes exactly the step it is given; outputs() evaluates the force at the time reached.
class HarmonicForce final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "harmonic_force";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::stepper;
    i.version = "1.0.0";
    i.description = "Harmonic force F = amplitude sin(omega t + phase)";
    i.parameters = {
        stride::real_param("amplitude", 5.0, "N", "force amplitude"),
        stride::real_param("omega", 4.0, "rad/s", "angular frequency", 0.0),
        stride::real_param("phase", 0.0, "rad", "phase at t = 0"),
    };
    return i;
  }

  explicit HarmonicForce(const stride::Params& p)
      : amplitude_(p.real("amplitude")), omega_(p.real("omega")), phase_(p.real("phase")) {}

  std::vector<stride::PortSpec> ports() const override {
    return {stride::output("force", 1, "N", "amplitude·sin(omega·t + phase)")};
  }

  void initialize(double t0) override { t_ = t0; }

  double step(double t, double h) override {
    t_ = t + h;
    ++steps_;
    return t_;
  }

  void outputs(std::span<double> y) override { y[0] = amplitude_ * std::sin(omega_ * t_ + phase_); }

  stride::json statistics() const override { return {{"steps", steps_}}; }

  // The time reached is the whole state (iterative coupling may repeat a macro step).
  bool can_save_state() const override { return true; }
  void save_state(std::unique_ptr<stride::SavedState>& slot) override { stride::save_value(slot, t_); }
  void restore_state(const stride::SavedState& state) override { t_ = stride::saved_value<double>(state); }

 private:
  double amplitude_, omega_, phase_;
  double t_ = 0.0;
  long steps_ = 0;
};

}  // namespace

STRIDE_PLUGIN(HarmonicForce)
