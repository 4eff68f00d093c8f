// Implicit trapezoidal rule, fixed step, second order, A-stable:
//   G(z) = z - x - h/2 (f(t, x) + f(t + h, z)) = 0,   x+ = z,
// solved by Newton-Raphson with the iteration matrix I - h/2 J(t + h, z). J comes from the
// system's analytic jacobian() when it provides one, else from forward differences. The
// Jacobian is evaluated at the first iteration of every step and again whenever the residual
// has not halved since the previous iteration (otherwise it is reused: modified Newton).
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/LU>
#include <stride/stride.hpp>

namespace {

// Call order: reset(sys, t0, x0) -> { step(sys, t, h, x) }*. Fixed step: returns t + h, or
// throws stride::StepFailure when Newton does not converge within max_iterations (x is then
// left unchanged).
class Trapezoidal final : public stride::Integrator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "trapezoidal";
    i.kind = stride::Kind::integrator;
    i.version = "1.0";
    i.description = "Implicit trapezoidal rule with Newton-Raphson, fixed step, second order";
    i.parameters = {
        stride::real_param("tolerance", 1e-10, "1",
                           "Newton converges when every |dz_i| <= tolerance (1 + |z_i|)", 0.0),
        stride::integer_param("max_iterations", 20, "Newton iterations allowed per step", 1),
    };
    return i;
  }
  explicit Trapezoidal(const stride::Params& p)
      : tol_(p.real("tolerance")), max_iter_(p.integer("max_iterations")) {}

  void reset(stride::OdeSystem& sys, double t0, std::span<const double> x0) override {
    const std::size_t n = sys.state_size();
    for (auto* v : {&f0_, &fz_, &xp_, &fp_}) v->assign(n, 0.0);
    z_ = Eigen::VectorXd::Zero(n);
    r_ = Eigen::VectorXd::Zero(n);
    dz_ = Eigen::VectorXd::Zero(n);
    J_ = Eigen::MatrixXd::Zero(n, n);
    A_ = Eigen::MatrixXd::Zero(n, n);
    lu_ = Eigen::PartialPivLU<Eigen::MatrixXd>(n);
    // Probe once whether the system has an analytic Jacobian.
    analytic_ = sys.jacobian(t0, x0, J_);
  }

  double step(stride::OdeSystem& sys, double t, double h, std::span<double> x) override {
    const std::size_t n = x.size();
    const double t1 = t + h;
    sys.derivatives(t, x, f0_);
    ++rhs_;
    // Predictor: explicit Euler.
    for (std::size_t i = 0; i < n; ++i) z_[i] = x[i] + h * f0_[i];
    std::span<const double> z(z_.data(), n);

    bool factored = false;
    double last_norm = std::numeric_limits<double>::infinity();
    for (long it = 0; it < max_iter_; ++it) {
      sys.derivatives(t1, z, fz_);
      ++rhs_;
      for (std::size_t i = 0; i < n; ++i) r_[i] = z_[i] - x[i] - 0.5 * h * (f0_[i] + fz_[i]);
      const double norm = r_.lpNorm<Eigen::Infinity>();
      if (!std::isfinite(norm)) break;
      if (!factored || norm > 0.5 * last_norm) {
        factor(sys, t1, z, h);
        factored = true;
      }
      last_norm = norm;
      dz_ = lu_.solve(r_);
      z_ -= dz_;
      ++newton_;
      bool converged = true;
      for (std::size_t i = 0; i < n; ++i)
        if (!(std::abs(dz_[i]) <= tol_ * (1.0 + std::abs(z_[i])))) converged = false;
      if (converged) {
        for (std::size_t i = 0; i < n; ++i) x[i] = z_[i];
        ++steps_;
        return t1;
      }
    }
    ++failures_;
    throw stride::StepFailure(
        stride::format_text("trapezoidal: Newton did not converge at t = {} s with h = {} s", t, h));
  }

  stride::json statistics() const override {
    return {{"steps", steps_},           {"rhs_evaluations", rhs_},
            {"newton_iterations", newton_}, {"jacobian_evaluations", jac_},
            {"failed_steps", failures_}};
  }

 private:
  // Iteration matrix A = I - h/2 J(t1, z), factored in place.
  void factor(stride::OdeSystem& sys, double t1, std::span<const double> z, double h) {
    if (!analytic_ || !sys.jacobian(t1, z, J_)) {
      finite_difference_jacobian(sys, t1, z, fz_, xp_, fp_, J_);
      rhs_ += static_cast<long>(z.size());
    }
    ++jac_;
    A_.setIdentity();
    A_.noalias() -= (0.5 * h) * J_;
    lu_.compute(A_);
  }

  double tol_;
  long max_iter_;
  bool analytic_ = false;
  std::vector<double> f0_, fz_, xp_, fp_;
  Eigen::VectorXd z_, r_, dz_;
  Eigen::MatrixXd J_, A_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
  long steps_ = 0, rhs_ = 0, newton_ = 0, jac_ = 0, failures_ = 0;
};

}  // namespace

STRIDE_PLUGIN(Trapezoidal)
