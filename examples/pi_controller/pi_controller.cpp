// A sampled PI controller with a zero-order hold, as a Stride subsystem that steps itself:
//
//   e_k = r − y(t_k),   u_k = Kp e_k + I_k,   I_{k+1} = I_k + Ki h e_k,
//   u(t) = u_k for t_k ≤ t < t_{k+1}   (h: the subsystem's step, its sample time)
//
// y is the measured plant output (an input port), u the actuator force (an output port). A
// controller is the typical subsystem that steps itself: its state changes only at its own
// samples, which no ODE integrator should smooth over.
#include <stride/stride.hpp>

namespace {

// Call order (stride::Subsystem): bind(inputs) -> initialize(t0) -> outputs(u) ->
// { step(t, h) -> outputs(u) }*. outputs() at the time reached t_k reads y(t_k), so u_k depends
// on the input at the same instant: the output declares feedthrough, and the host orders the
// loop so that the plant's sample at t_k exists when the controller's output is read.
class PiController final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "pi_controller";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::stepper;
    i.version = "1.0.0";
    i.description = "Sampled PI controller with zero-order hold: u = Kp e + Ki sum(h e), e = setpoint - y";
    i.parameters = {
        stride::real_param("setpoint", 0.05, "m", "reference r for the measured position y"),
        stride::real_param("kp", 20.0, "N/m", "proportional gain Kp"),
        stride::real_param("ki", 100.0, "N/(m*s)", "integral gain Ki"),
    };
    return i;
  }

  explicit PiController(const stride::Params& p) : r_(p.real("setpoint")), kp_(p.real("kp")), ki_(p.real("ki")) {}

  std::vector<stride::PortSpec> ports() const override {
    return {
        stride::input("y", 1, "m", "measured position"),
        stride::output("u", 1, "N", "actuator force Kp e + integral, held between samples", true),
    };
  }

  void initialize(double t0) override {
    t_ = t0;
    integral_ = 0.0;
  }

  // The sample at the start of the step drives the integral over the step (forward Euler
  // in the sample time, the usual discrete PI). The input is read at t, inside the step.
  double step(double t, double h) override {
    const double e = r_ - inputs().at(0, t)[0];
    integral_ += ki_ * h * e;
    t_ = t + h;
    ++steps_;
    return t_;
  }

  // u_k at the time reached: depends on the state and on y(t_k), never changes the state.
  void outputs(std::span<double> u) override { u[0] = kp_ * (r_ - inputs().at(0, t_)[0]) + integral_; }

  stride::json statistics() const override { return {{"steps", steps_}}; }

  // The integral and the time reached are the whole state.
  bool can_save_state() const override { return true; }
  void save_state(std::unique_ptr<stride::SavedState>& slot) override {
    stride::save_value(slot, std::pair<double, double>{t_, integral_});
  }
  void restore_state(const stride::SavedState& state) override {
    const auto& s = stride::saved_value<std::pair<double, double>>(state);
    t_ = s.first;
    integral_ = s.second;
  }

 private:
  double r_, kp_, ki_;
  double t_ = 0.0, integral_ = 0.0;
  long steps_ = 0;
};

}  // namespace

STRIDE_PLUGIN(PiController)
