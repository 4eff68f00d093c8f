// Sampled PD controller with feed-forward and saturation, holding its output between samples
// (the valve spool driven from a desired actuator velocity in the log crane of Peiret's
// nonsmooth interface model abstract, Sect. 4). Inputs: the measured signal y and its rate
// y_dot. Per sample t_k = t0 + k h (h: the subsystem's step), with r(t) the reference (a
// piecewise-linear table or the input port r):
//
//   reference "value":  x_k = r(t_k),                       rate error ė_k = −y_dot(t_k)
//   reference "rate":   x_k = y(t0) + h Σ_{i<k} r(t_i),      rate error ė_k = r(t_k) − y_dot(t_k)
//   e_k = x_k − y(t_k)
//   u_k = clamp(u0 + k_ff r(t_k) + k_p e_k + k_d ė_k, u_min, u_max)
//
// With a rate reference (a desired actuator velocity), k_d acts on the velocity error and k_p
// on the position error the integrated reference defines, so a load change is held with a
// position error u/k_p instead of a lasting velocity error. u_k is the output from t_{k+1} on,
// held until the next sample: the output never depends on the input of the same instant (no
// direct feedthrough), at the cost of one sample of delay. Before the first sample the
// output is clamp(u0 + k_ff r(t0)).
#include <algorithm>
#include <memory>

#include <stride/stride.hpp>

#include "common/hydraulics.hpp"

namespace {

using namespace stride;

class PdController final : public Subsystem {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "pd_controller";
    i.kind = Kind::subsystem;
    i.form = Form::stepper;
    i.version = "1.0.0";
    i.description =
        "Sampled PD controller with feed-forward and saturation: u = clamp(u0 + kff r + kp e + kd de/dt), from a "
        "reference value or rate, held between samples";
    i.parameters = {
        real_param("kp", 1.0, "1", "gain on the error e = x - y (output units per input unit)"),
        real_param("kd", 0.0, "1", "gain on the rate error (output units per rate unit of the input)"),
        real_param("kff", 0.0, "1", "feed-forward gain on the reference (output units per reference unit)"),
        real_param("u0", 0.0, "1", "output bias (in the output unit)"),
        real_param("u_min", -1e300, "1", "lower saturation of the output (in the output unit)"),
        real_param("u_max", 1e300, "1", "upper saturation of the output (in the output unit)"),
        choice_param(
            "reference_is", "value", {"value", "rate"},
            "value: r is the setpoint of y; rate: r is the desired rate of y, the setpoint its integral from y(t0)"),
        choice_param("reference", "table", {"table", "input"},
                     "table: r(t) from reference_times / reference_values; input: the input port r"),
        real_list_param("reference_times", {0.0}, "s", "nodes of the reference table (non-decreasing)"),
        real_list_param("reference_values", {0.0}, "1",
                        "reference at the nodes (input unit, or input unit per second for a rate), constant outside"),
        // Free text (a choice without choices): the units of the connected ports.
        choice_param("input_unit", "1", {},
                     "unit of y (the connected port's unit); y_dot and a rate reference are in it per second"),
        choice_param("output_unit", "1", {}, "unit of u"),
    };
    return i;
  }

  explicit PdController(const Params& p)
      : kp_(p.real("kp")),
        kd_(p.real("kd")),
        kff_(p.real("kff")),
        u0_(p.real("u0")),
        lo_(p.real("u_min")),
        hi_(p.real("u_max")),
        rate_(p.string("reference_is") == "rate"),
        from_input_(p.string("reference") == "input"),
        in_unit_(p.string("input_unit")),
        out_unit_(p.string("output_unit")) {
    if (!(lo_ <= hi_))
      throw ParameterError("/u_min", "expected u_min <= u_max, found u_min = " + std::to_string(lo_) +
                                         " > u_max = " + std::to_string(hi_));
    try {
      table_ = hydraulics::PiecewiseLinear(p.reals("reference_times"), p.reals("reference_values"), "reference table");
    } catch (const std::invalid_argument& e) {
      throw ParameterError("/reference_times", e.what());
    }
  }

  std::vector<PortSpec> ports() const override {
    const std::string rate_unit = in_unit_ == "1" ? "1/s" : "(" + in_unit_ + ")/s";
    std::vector<PortSpec> ps{input("y", 1, in_unit_, "measured signal"),
                             input("y_dot", 1, rate_unit, "measured rate of y")};
    if (from_input_) ps.push_back(input("r", 1, rate_ ? rate_unit : in_unit_, "reference (a value of y, or its rate)"));
    ps.push_back(
        output("u", 1, out_unit_, "controller output, held between samples (computed from the previous sample)"));
    ps.push_back(output("error", 1, in_unit_, "e = x - y at the last sample"));
    return ps;
  }

  void initialize(double t0) override {
    t_ = t0;
    started_ = false;
    e_ = x_ = 0.0;
    u_ = clamp(u0_ + kff_ * reference(t0));
    saturated_steps_ = steps_ = 0;
    was_saturated_ = false;
  }

  double step(double t, double h) override {
    const double r = reference(t), y = inputs().at(0, t)[0], y_dot = inputs().at(1, t)[0];
    if (!started_) x_ = y, started_ = true;
    if (!rate_) x_ = r;
    e_ = x_ - y;
    const double rate_error = (rate_ ? r : 0.0) - y_dot;
    const double command = u0_ + kff_ * r + kp_ * e_ + kd_ * rate_error;
    if (rate_) x_ += h * r;  // the setpoint at the next sample
    u_ = clamp(command);
    const bool saturated = u_ != command;
    if (saturated && !was_saturated_)
      log_warning("command {} saturated at {} from t = {} s (limits [{}, {}])", command, u_, t, lo_, hi_);
    was_saturated_ = saturated;
    saturated_steps_ += saturated;
    ++steps_;
    t_ = t + h;
    return t_;
  }

  void outputs(std::span<double> y) override {
    y[0] = u_;
    y[1] = e_;
  }

  json statistics() const override { return {{"steps", steps_}, {"saturated_steps", saturated_steps_}}; }

  bool can_save_state() const override { return true; }
  void save_state(std::unique_ptr<SavedState>& slot) override {
    save_value(slot, State{t_, e_, x_, u_, started_, was_saturated_});
  }
  void restore_state(const SavedState& state) override {
    const auto& s = saved_value<State>(state);
    t_ = s.t, e_ = s.e, x_ = s.x, u_ = s.u, started_ = s.started, was_saturated_ = s.was_saturated;
  }

 private:
  struct State {
    double t, e, x, u;
    bool started, was_saturated;
  };
  double reference(double t) const { return from_input_ ? inputs().at(2, t)[0] : table_(t); }
  double clamp(double u) const { return std::clamp(u, lo_, hi_); }

  double kp_, kd_, kff_, u0_, lo_, hi_;
  bool rate_, from_input_;
  std::string in_unit_, out_unit_;
  hydraulics::PiecewiseLinear table_;
  double t_ = 0.0, e_ = 0.0, x_ = 0.0, u_ = 0.0;
  bool started_ = false, was_saturated_ = false;
  long saturated_steps_ = 0, steps_ = 0;
};

}  // namespace

STRIDE_PLUGIN(PdController)
