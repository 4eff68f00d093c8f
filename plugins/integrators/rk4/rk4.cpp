// Classic fourth-order Runge-Kutta, fixed step, four RHS evaluations per step.
#include <vector>

#include <stride/stride.hpp>

namespace {

// Call order: reset(sys, t0, x0) -> { step(sys, t, h, x) }*. Fixed step: returns t + h.
class Rk4 final : public stride::Integrator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "rk4";
    i.kind = stride::Kind::integrator;
    i.version = "1.0";
    i.description = "Classic Runge-Kutta, fixed step, fourth order";
    return i;
  }
  explicit Rk4(const stride::Params&) {}

  // The four stages and the stage state in one block: a step touches one piece of memory,
  // not five (with thousands of subsystems stepping in turn, each piece is a cache miss).
  void reset(stride::OdeSystem& sys, double, std::span<const double>) override {
    const std::size_t n = sys.state_size();
    work_.assign(5 * n, 0.0);
    k1_ = std::span<double>(work_).subspan(0, n);
    k2_ = std::span<double>(work_).subspan(n, n);
    k3_ = std::span<double>(work_).subspan(2 * n, n);
    k4_ = std::span<double>(work_).subspan(3 * n, n);
    xs_ = std::span<double>(work_).subspan(4 * n, n);
  }

  double step(stride::OdeSystem& sys, double t, double h, std::span<double> x) override {
    const std::size_t n = x.size();
    sys.derivatives(t, x, k1_);
    for (std::size_t i = 0; i < n; ++i) xs_[i] = x[i] + 0.5 * h * k1_[i];
    sys.derivatives(t + 0.5 * h, xs_, k2_);
    for (std::size_t i = 0; i < n; ++i) xs_[i] = x[i] + 0.5 * h * k2_[i];
    sys.derivatives(t + 0.5 * h, xs_, k3_);
    for (std::size_t i = 0; i < n; ++i) xs_[i] = x[i] + h * k3_[i];
    sys.derivatives(t + h, xs_, k4_);
    for (std::size_t i = 0; i < n; ++i)
      x[i] += h / 6.0 * (k1_[i] + 2.0 * k2_[i] + 2.0 * k3_[i] + k4_[i]);
    ++steps_;
    rhs_ += 4;
    return t + h;
  }

  stride::json statistics() const override {
    return {{"steps", steps_}, {"rhs_evaluations", rhs_}};
  }

 private:
  long steps_ = 0, rhs_ = 0;
  std::span<double> k1_, k2_, k3_, k4_, xs_;  // in work_
  std::vector<double> work_;
};

}  // namespace

STRIDE_PLUGIN(Rk4)
