// Explicit (forward) Euler: x+ = x + h f(t, x). First order, one RHS evaluation per step.
#include <vector>

#include <stride/stride.hpp>

namespace {

// Call order: reset(sys, t0, x0) -> { step(sys, t, h, x) }*. Fixed step: returns t + h.
class ForwardEuler final : public stride::Integrator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "forward_euler";
    i.kind = stride::Kind::integrator;
    i.version = "1.0";
    i.description = "Explicit Euler, fixed step, first order";
    return i;
  }
  explicit ForwardEuler(const stride::Params&) {}

  void reset(stride::OdeSystem& sys, double, std::span<const double>) override {
    f_.assign(sys.state_size(), 0.0);
  }

  double step(stride::OdeSystem& sys, double t, double h, std::span<double> x) override {
    sys.derivatives(t, x, f_);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] += h * f_[i];
    ++steps_;
    ++rhs_;
    return t + h;
  }

  stride::json statistics() const override {
    return {{"steps", steps_}, {"rhs_evaluations", rhs_}};
  }

 private:
  std::vector<double> f_;
  long steps_ = 0, rhs_ = 0;
};

}  // namespace

STRIDE_PLUGIN(ForwardEuler)
