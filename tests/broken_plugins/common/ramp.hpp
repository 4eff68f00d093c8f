// A source subsystem y(t) = slope·t, fixed step, for host tests. The runtime-broken test
// plugins derive from it and fail on purpose once their time reaches `fail_at`.
// Call order (stride::Subsystem): bind -> initialize(t0) -> outputs -> { step -> outputs }*.
#pragma once

#include <stride/stride.hpp>

namespace stride_test {

inline stride::ParamSpec slope_param() {
  return stride::real_param("slope", 1.0, "m/s", "rate of the ramp y = slope·t", -1e3, 1e3);
}
inline stride::ParamSpec fail_at_param() {
  return stride::real_param("fail_at", 0.5, "s", "time from which the plugin fails on purpose", 0.0);
}

inline stride::PluginInfo ramp_info(std::string name, std::string description, bool failing) {
  stride::PluginInfo i;
  i.name = std::move(name);
  i.kind = stride::Kind::subsystem;
  i.form = stride::Form::stepper;
  i.version = "1.0";
  i.description = std::move(description);
  i.parameters = {slope_param()};
  if (failing) i.parameters.push_back(fail_at_param());
  return i;
}

class Ramp : public stride::Subsystem {
 public:
  explicit Ramp(const stride::Params& p)
      : slope_(p.real("slope")),
        fail_at_(p.values().contains("fail_at") ? p.real("fail_at") : std::numeric_limits<double>::infinity()) {}

  std::vector<stride::PortSpec> ports() const override { return {stride::output("y", 1, "m", "slope·t")}; }
  void initialize(double t0) override { t_ = t0; }
  double step(double t, double h) override {
    t_ = t + h;
    ++steps_;
    return t_;
  }
  void outputs(std::span<double> y) override { y[0] = slope_ * t_; }
  stride::json statistics() const override { return {{"steps", steps_}}; }

 protected:
  double slope_, fail_at_;
  double t_ = 0.0;
  long steps_ = 0;
};

}  // namespace stride_test
