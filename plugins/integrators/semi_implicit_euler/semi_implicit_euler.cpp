// Symplectic (semi-implicit) Euler, Peiret 2018 Eq. 38-40, for x = [q (n), v (n), rest]
// with dq/dt = v (n = OdeSystem::second_order_size()):
//   v+    = v    + h a(t, x)          (velocity with the old accelerations)
//   rest+ = rest + h f_rest(t, x)     (first-order states: explicit Euler, Eq. 40)
//   q+    = q    + h v+               (positions with the NEW velocities)
// One RHS evaluation per step; first order, but the energy error of an undamped oscillator
// stays bounded instead of growing. With n = 0 it is forward Euler.
#include <vector>

#include <stride/stride.hpp>

namespace {

// Call order: reset(sys, t0, x0) -> { step(sys, t, h, x) }*. Fixed step: returns t + h.
class SemiImplicitEuler final : public stride::Integrator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "semi_implicit_euler";
    i.kind = stride::Kind::integrator;
    i.version = "1.0";
    i.description = "Symplectic Euler on x = [q, v, rest] (Peiret 2018 Eq. 38-40), fixed step";
    return i;
  }
  explicit SemiImplicitEuler(const stride::Params&) {}

  void reset(stride::OdeSystem& sys, double, std::span<const double>) override {
    const std::size_t size = sys.state_size();
    n_ = sys.second_order_size();
    if (2 * n_ > size)
      throw std::invalid_argument("semi_implicit_euler: second_order_size exceeds half the state");
    f_.assign(size, 0.0);
  }

  double step(stride::OdeSystem& sys, double t, double h, std::span<double> x) override {
    sys.derivatives(t, x, f_);
    // v and rest first (explicit, with f at the old state), then q with the new v.
    for (std::size_t i = n_; i < x.size(); ++i) x[i] += h * f_[i];
    for (std::size_t i = 0; i < n_; ++i) x[i] += h * x[n_ + i];
    ++steps_;
    ++rhs_;
    return t + h;
  }

  stride::json statistics() const override {
    return {{"steps", steps_}, {"rhs_evaluations", rhs_}};
  }

 private:
  std::size_t n_ = 0;
  std::vector<double> f_;
  long steps_ = 0, rhs_ = 0;
};

}  // namespace

STRIDE_PLUGIN(SemiImplicitEuler)
