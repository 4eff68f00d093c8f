// Index-3 augmented Lagrangian with mass-damping-stiffness orthogonal projections
// (Cuadrado, Dopico et al.; Rahikainen 2020 Sect. 2.1, ALI3P), trapezoidal rule:
//   q̇_{n+1} = (2/h) q_{n+1} − q̂̇_n,   q̂̇_n = (2/h) q_n + q̇_n,
//   q̈_{n+1} = (4/h²) q_{n+1} − q̂̈_n,  q̂̈_n = (4/h²) q_n + (4/h) q̇_n + q̈_n.
// Newton–Raphson on the dynamic equilibrium at t_{n+1}, scaled by h²/4,
//   r(q) = h²/4 (M q̈ + Φ_qᵀ (λ* + α Φ) − Q) = 0,   Q = f + D_iᵀ λ_i − c,
// tangent T = M + h/2 C + h²/4 (K + Φ_qᵀ α Φ_q), C = −∂Q/∂q̇, K = −∂Q/∂q (from the model, or
// by forward differences), formed and factorized at the predictor and kept for the next
// iteration while the steps shrink tenfold per iteration (modified Newton); after every
// iteration λ* ← λ* + α Φ(q).
// Then the projections, with W = M + h/2 C + h²/4 K (so T = W + h²/4 Φ_qᵀ α Φ_q):
//   T q̇ = W q̇* − h²/4 Φ_qᵀ α Φ_t,     T q̈ = W q̈* − h²/4 Φ_qᵀ α (Φ̇_q q̇ + Φ̇_t).
// Interface forces are read at t_{n+1}. Without constraints it is the implicit trapezoidal rule.
#include <limits>
#include <stdexcept>
#include <string>

#include "../common/constrained_dynamics.hpp"
#include "../common/sparse_lu.hpp"

namespace {

using namespace stride;

class Ali3p final : public Formulation {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "ali3p";
    i.kind = Kind::formulation;
    i.version = "1.0";
    i.description =
        "Index-3 augmented Lagrangian, trapezoidal rule, Newton-Raphson, velocity and acceleration projections";
    i.parameters = {
        real_param("alpha", 1e12, "1",
                   "penalty factor alpha; Newton converges fast when alpha h^2/4 is well above the masses", 1e-3, 1e18),
        real_param("tolerance", 1e-10, "1", "Newton tolerance on max|dq| relative to max(1, max|q|)", 1e-16, 1.0),
        integer_param("max_iterations", 30, "Newton iterations per step before the step fails", 1, 10000),
    };
    formulations::ConstraintResiduals::declare(i.parameters);
    return i;
  }
  explicit Ali3p(const Params& p)
      : alpha_(p.real("alpha")), tol_(p.real("tolerance")), max_it_(p.integer("max_iterations")), residuals_(p) {}

  void reset(MultibodyModel& model, double, VectorRef, VectorRef) override {
    dyn_.reset(model, "ali3p", 5);
    const auto n = Eigen::Index(dyn_.size.n), m = Eigen::Index(dyn_.size.m), p = Eigen::Index(dyn_.size.p);
    K_.setZero(n, n);
    C_.setZero(n, n);
    T_.setZero(n, n);
    lu_.reset(n);
    a_.setZero(n);
    qhat_d_.setZero(n);
    qhat_dd_.setZero(n);
    vt_.setZero(n);
    at_.setZero(n);
    r_.setZero(n);
    dq_.setZero(n);
    Q0_.setZero(n);
    Qp_.setZero(n);
    xp_.setZero(n);
    fw_.setZero(n);
    cw_.setZero(n);
    lw_.setZero(p);
    Dw_.setZero(p, n);
    lambda_.setZero(m);
    e_.setZero(m);
    a_c_.setZero(m);
    at_q_.setZero(n);
    at_v_.setZero(n);
    at_valid_ = configured_ = false;
    started_ = false;
    residuals_.reset(model);
  }

  double step(MultibodyModel& model, double t, double h, VectorRef q, VectorRef v) override {
    if (!started_) {
      // Consistent initial acceleration and multipliers from the exact constrained dynamics,
      // with the inputs at the start time (not available yet in reset()).
      exact(model, t, q, v);
      dyn_.acceleration(a_c_, a_);
      if (dyn_.size.m > 0) lambda_ = dyn_.multipliers();
      started_ = true;
    }
    at_valid_ = configured_ = false;  // the iteration below overwrites the evaluations kept
    const double t1 = t + h, k2 = 0.25 * h * h;
    qhat_d_ = (2.0 / h) * q + v;
    qhat_dd_ = (4.0 / (h * h)) * q + (4.0 / h) * v + a_;
    q += h * v + 0.5 * h * h * a_;  // predictor
    const bool constrained = dyn_.size.m > 0;
    long it = 0;
    bool refresh = true;  // form and factorize the tangent in this iteration
    double last_norm = 0.0;
    smallest_step_ = std::numeric_limits<double>::infinity();
    for (;;) {
      vt_ = (2.0 / h) * q - qhat_d_;
      at_ = (4.0 / (h * h)) * q - qhat_dd_;
      dyn_.evaluate(model, t1, q, vt_, false, it > 0);  // Φ(q) of iterations after the first: from their update
      if (it == 0) force_derivatives(model, t1, q, vt_), note_masses();
      r_.noalias() = dyn_.M * at_;
      r_ -= dyn_.Q;
      if (constrained) {
        e_ = lambda_ + alpha_ * dyn_.phi;
        dyn_.add_Phi_q_transpose_times(1.0, e_, r_);
      }
      r_ *= k2;
      if (refresh) {
        T_ = dyn_.M + (0.5 * h) * C_ + k2 * K_;
        if (constrained) dyn_.add_constraint_gram(T_, k2 * alpha_);
        factorize(t1, h, it, last_norm);
      }
      dq_ = r_;
      lu_.solveInPlace(dq_);
      q -= dq_;
      ++it;
      if (constrained) {
        model.constraints(t1, q, dyn_.phi);
        lambda_ += alpha_ * dyn_.phi;
      }
      const double step_norm = dq_.lpNorm<Eigen::Infinity>();
      if (!std::isfinite(step_norm)) throw StepFailure(newton_failure(t1, h, it, last_norm, kNonFinite));
      if (step_norm <= tol_ * std::max(1.0, q.lpNorm<Eigen::Infinity>())) break;
      // The factorized tangent serves the next iteration while the steps shrink tenfold.
      refresh = it > 1 && step_norm > 0.1 * last_norm;
      last_norm = step_norm;
      smallest_step_ = std::min(smallest_step_, step_norm);
      if (it >= max_it_) throw StepFailure(newton_failure(t1, h, it, step_norm, kNoConvergence));
    }
    vt_ = (2.0 / h) * q - qhat_d_;
    at_ = (4.0 / (h * h)) * q - qhat_dd_;
    if (constrained) {
      // Projections with the tangent at the converged configuration (Φ(q) is the iteration's).
      dyn_.evaluate_configuration(model, t1, q);
      configured_ = true;  // exact() at (t1, q) reuses M, D_i, Φ, Φ_q, Φ_t (and at v, the bias)
      at_t_ = t1;
      at_q_ = q;
      T_ = dyn_.M + (0.5 * h) * C_ + k2 * K_;  // W, read before T = W + h²/4 Φ_qᵀ α Φ_q
      r_.noalias() = T_ * vt_;
      dq_.noalias() = T_ * at_;
      dyn_.add_constraint_gram(T_, k2 * alpha_);
      factorize(t1, h, -1, 0.0);
      dyn_.add_Phi_q_transpose_times(-k2 * alpha_, dyn_.phi_t, r_);
      lu_.solveInPlace(r_);
      v = r_;
      model.constraint_bias(t1, q, v, dyn_.bias);
      at_v_ = v;  // exact() at (t1, q, v) reuses the constraint bias too
      r_ = dq_;
      dyn_.add_Phi_q_transpose_times(-k2 * alpha_, dyn_.bias, r_);
      lu_.solveInPlace(r_);
      a_ = r_;
      dyn_.Phi_q_times(v, e_);
      e_ += dyn_.phi_t;
      stats_.record(it, dyn_.phi.norm(), e_.norm());
      residuals_.record(t1, dyn_.phi, e_);
    } else {
      v = vt_;
      a_ = at_;
      stats_.record(it, 0.0, 0.0);
    }
    return t1;
  }

  void acceleration(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, VectorRef v_dot) override {
    exact(model, t, q, v);
    dyn_.acceleration(a_c_, v_dot);
  }

  void effective(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, MatrixRef M_eff,
                 VectorRef f_eff) override {
    exact(model, t, q, v);
    dyn_.effective(a_c_, M_eff, f_eff);
  }

  json statistics() const override {
    json s = stats_.to_json();
    s["constraint_residuals"] = residuals_.to_json();
    return s;
  }
  Accuracy accuracy() const override {
    return residuals_.accuracy(
        "the Newton iteration holds Phi to its tolerance and the projections hold Phi_q v to about the masses over "
        "alpha h^2/4; tighten tolerance, raise alpha or reduce the step");
  }

 private:
  // Constrained dynamics at (t, q, v) with the exact constraint acceleration Φ_q v̇ = −Ḋ v.
  // The host asks for M̃, f̃ and v̇ at the same point one after the other: the second call
  // keeps the factorization and re-reads only the forces.
  void exact(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v) {
    if (at_valid_ && t == at_t_ && q == at_q_ && v == at_v_) {
      dyn_.update_forces(model, t, q, v);
      return;
    }
    at_valid_ = false;
    if (configured_ && t == at_t_ && q == at_q_ && v == at_v_) {
      dyn_.evaluate_motion(model, t, q, v, false);
      model.interface_bias(q, v, dyn_.b_i);
    } else if (configured_ && t == at_t_ && q == at_q_) {
      dyn_.evaluate_motion(model, t, q, v);
    } else {
      dyn_.evaluate(model, t, q, v);
    }
    configured_ = false;
    dyn_.factorize(true);  // Φ_q only ever comes from dyn_.evaluate*() here
    if (dyn_.size.m > 0) a_c_ = -dyn_.bias;
    at_t_ = t;
    at_q_ = q;
    at_v_ = v;
    at_valid_ = true;
  }

  // Factorizes the tangent T_ after `it` Newton iterations of the step to t1 (0: at the
  // predictor; -1: for the projections, after convergence).
  void factorize(double t1, double h, long it, double last_step) {
    if (lu_.compute(T_)) return;
    if (it > 0) throw StepFailure(newton_failure(t1, h, it, last_step, kSingular));
    if (it < 0)
      throw StepFailure(
          format_text("ali3p: the projection matrix M + h/2 C + h^2/4 (K + alpha Phi_q^T Phi_q) is singular "
                      "at t = {} s, at the configuration the Newton iteration converged to",
                      t1));
    throw StepFailure(format_text(
        "ali3p: the iteration matrix M + h/2 C + h^2/4 (K + alpha Phi_q^T Phi_q) is singular at t = {} s before any "
        "Newton step (a mass matrix or stiffness that is singular where the constraints leave freedom)",
        t1));
  }

  // The range of M's diagonal at the predictor, for messages.
  void note_masses() {
    mass_lo_ = std::numeric_limits<double>::infinity(), mass_hi_ = 0.0;
    for (Eigen::Index k = 0; k < dyn_.M.rows(); ++k)
      mass_lo_ = std::min(mass_lo_, dyn_.M(k, k)), mass_hi_ = std::max(mass_hi_, dyn_.M(k, k));
  }

  static constexpr std::string_view kNonFinite = "an update that is not finite", kNoConvergence = "no convergence",
                                    kSingular = "a singular iteration matrix";
  // Why the Newton iteration of the step to t1 stopped after `it` iterations (`what`: what the
  // last one produced), named as what it is: steps that grew are a divergence, from too large a
  // step or too stiff a penalty; steps that shrank too slowly are not.
  std::string newton_failure(double t1, double h, long it, double last_step, std::string_view what) const {
    const std::string scale =
        format_text(" (h = {} s; alpha h^2/4 = {} against mass-matrix diagonal entries from {} to {} at the predictor)",
                    h, alpha_ * h * h / 4, mass_lo_, mass_hi_);
    const bool non_finite = what == kNonFinite;
    const bool grew = std::isfinite(smallest_step_) && (non_finite || last_step > 2.0 * smallest_step_);
    if (grew)
      return format_text("ali3p: the Newton iteration diverges at t = {} s: its steps |dq| grew from {} to {} in {} "
                         "iterations{}{}; reduce the step or alpha",
                         t1, smallest_step_, last_step, it, what == kNoConvergence ? "" : ", then it produced ",
                         what == kNoConvergence ? "" : what) + scale;
    if (what != kNoConvergence)
      return format_text(
                 "ali3p: the Newton iteration produced {} at t = {} s in iteration {}; reduce the step or alpha", what,
                 t1, it) +
             scale;
    return format_text("ali3p: the Newton iteration did not converge in {} iterations at t = {} s (last |dq| = {}, "
                       "tolerance {} relative to max(1, |q|)); raise max_iterations or tolerance, or reduce the step",
                       it, t1, last_step, tol_) + scale;
  }

  // Q(q, v) = f + D_iᵀ λ_i − c into out (allocation-free work: fw_, cw_, lw_, Dw_).
  void generalized_force(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, VectorRef out) {
    model.applied_forces(t, q, v, fw_);
    model.coriolis(q, v, cw_);
    model.interface_forces(t, q, v, lw_);
    model.interface_jacobian(q, Dw_);
    out = fw_ - cw_;
    out.noalias() += Dw_.transpose() * lw_;
  }

  // K = −∂Q/∂q and C = −∂Q/∂q̇: from the model, or by forward differences.
  void force_derivatives(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v) {
    if (model.force_derivatives(t, q, v, K_, C_)) return;
    generalized_force(model, t, q, v, Q0_);
    const auto n = q.size();
    xp_ = q;
    for (Eigen::Index j = 0; j < n; ++j) {
      const double d = 1e-7 * std::max(1.0, std::abs(q[j]));
      xp_[j] = q[j] + d;
      generalized_force(model, t, xp_, v, Qp_);
      K_.col(j) = (Q0_ - Qp_) / d;
      xp_[j] = q[j];
    }
    xp_ = v;
    for (Eigen::Index j = 0; j < n; ++j) {
      const double d = 1e-7 * std::max(1.0, std::abs(v[j]));
      xp_[j] = v[j] + d;
      generalized_force(model, t, q, xp_, Qp_);
      C_.col(j) = (Q0_ - Qp_) / d;
      xp_[j] = v[j];
    }
  }

  double alpha_, tol_;
  long max_it_;
  bool started_ = false, at_valid_ = false, configured_ = false;
  double at_t_ = 0.0;
  formulations::ConstrainedDynamics dyn_;
  formulations::FormulationStats stats_;
  formulations::ConstraintResiduals residuals_;
  double smallest_step_ = 0.0;         // the smallest Newton step of the step under way
  double mass_lo_ = 0.0, mass_hi_ = 0.0;  // the range of M's diagonal at its predictor
  Eigen::MatrixXd K_, C_, T_, Dw_;
  formulations::SparseLU lu_;
  Eigen::VectorXd at_q_, at_v_, a_, qhat_d_, qhat_dd_, vt_, at_, r_, dq_, Q0_, Qp_, xp_, fw_, cw_, lw_, lambda_, e_,
      a_c_;
};

}  // namespace

STRIDE_PLUGIN(Ali3p)
