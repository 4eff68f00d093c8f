// Index-1 augmented Lagrangian (Bayo, García de Jalón; Rahikainen 2020 Sect. 2.1, ALI1):
//   M q̈ + Φ_qᵀ α (Φ̈ + 2ξω Φ̇ + ω² Φ) + Φ_qᵀ λ* = Q,   Q = f + D_iᵀ λ_i − c,
//   λ*_{j+1} = λ*_j + α (Φ̈ + 2ξω Φ̇ + ω² Φ),
// a fixed-point iteration on q̈ and λ* with (M + α Φ_qᵀ Φ_q) factorized once per step and λ*
// warm-started from the previous step. It converges to the acceleration that satisfies the
// Baumgarte-stabilized constraint Φ̈ + 2ξωΦ̇ + ω²Φ = 0 exactly. Integrated with the
// semi-implicit Euler of Peiret 2018 Eq. 38 at (t_n, q_n, v_n).
//
// Where it is first order, and why: the semi-implicit Euler step is first order, and nothing
// projects q or v back onto the constraints. A step of h rotates a body by ω h along a straight
// line in its Euler parameters, so pᵀp − 1 and the joint residuals grow by O((ω h)²) per step and
// only the Baumgarte terms pull them back, with time constant 1/ω_B (0.1 s by default). On a
// mechanism that turns fast against that (Andrews' squeezer: the crank at 1000 rad/s within
// 0.03 s) the drift is the error; the constraint residuals are bounded (ConstraintResiduals)
// and a run past the bounds ends inaccurate.
//
// Convergence: the iteration contracts λ* by about 1/(1 + α s_min) per pass (s_min the smallest
// eigenvalue of Φ_q M⁻¹ Φ_qᵀ), so a small α converges slowly. Its residual e = Φ_q q̈ + stab
// cannot fall below the round-off of its terms, about ε |stab| (|stab| reaches 1e5 m/s² on fast
// mechanisms, where the absolute tolerance alone would never be met): a step is converged at
// |e| ≤ max(tolerance, 1024 ε |stab|). A residual that stops shrinking above that is the
// round-off of an ill-conditioned M + α Φ_qᵀ Φ_q: α is too large for the masses.
#include <limits>
#include <stdexcept>

#include "../common/constrained_dynamics.hpp"

namespace {

using namespace stride;

class Ali1 final : public Formulation {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "ali1";
    i.kind = Kind::formulation;
    i.version = "1.0";
    i.description = "Index-1 augmented Lagrangian with Baumgarte terms, fixed-point iteration, semi-implicit Euler";
    i.parameters = {
        real_param("alpha", 1e7, "1", "penalty factor alpha (compare with the masses, 1e2..1e3 kg for the crane)", 1e-3,
                   1e15),
        real_param("omega", 10.0, "1/s", "Baumgarte natural frequency omega", 0.0, 1e6),
        real_param("xi", 1.0, "1", "Baumgarte damping ratio xi", 0.0, 1e3),
        real_param("tolerance", 1e-9, "1",
                   "fixed-point tolerance on |Phi'' + 2 xi omega Phi' + omega^2 Phi| (constraint units/s^2); never "
                   "below the round-off of its terms, 1024 eps |Phi'' + ...|",
                   1e-16, 1.0),
        integer_param("max_iterations", 50, "fixed-point iterations per step before the step fails", 1, 10000),
    };
    formulations::ConstraintResiduals::declare(i.parameters);
    return i;
  }
  explicit Ali1(const Params& p)
      : alpha_(p.real("alpha")), omega_(p.real("omega")), xi_(p.real("xi")), tol_(p.real("tolerance")),
        max_it_(p.integer("max_iterations")), residuals_(p) {}

  void reset(MultibodyModel& model, double, VectorRef, VectorRef) override {
    dyn_.reset(model, "ali1", 2);
    const auto n = Eigen::Index(dyn_.size.n), m = Eigen::Index(dyn_.size.m);
    Mbar_.setZero(n, n);
    ldlt_ = Eigen::LDLT<Eigen::MatrixXd>(n);
    a_.setZero(n);
    rhs_.setZero(n);
    lambda_.setZero(m);
    e_.setZero(m);
    stab_.setZero(m);
    a_c_.setZero(m);
    residuals_.reset(model);
  }

  double step(MultibodyModel& model, double t, double h, VectorRef q, VectorRef v) override {
    dyn_.evaluate(model, t, q, v);
    long it = 0;
    if (dyn_.size.m == 0) {
      dyn_.factorize();
      dyn_.acceleration(a_c_, a_);
    } else {
      stabilization(v);
      Mbar_ = dyn_.M;
      Mbar_.noalias() += alpha_ * dyn_.Phi_q.transpose() * dyn_.Phi_q;
      ldlt_.compute(Mbar_);
      if (ldlt_.info() != Eigen::Success)
        throw StepFailure(format_text("ali1: M + alpha Phi_q^T Phi_q is singular at t = {} s", t));
      const double floor = 1024.0 * std::numeric_limits<double>::epsilon() * stab_.lpNorm<Eigen::Infinity>();
      double err = 0.0, previous = 0.0, ratio = 0.0;
      for (;;) {
        // q̈ from the current λ*, then the residual of the stabilized constraint at q̈.
        e_ = lambda_ + alpha_ * stab_;
        rhs_ = dyn_.Q;
        rhs_.noalias() -= dyn_.Phi_q.transpose() * e_;
        a_ = rhs_;
        ldlt_.solveInPlace(a_);
        ++it;
        e_.noalias() = dyn_.Phi_q * a_;
        e_ += stab_;
        lambda_ += alpha_ * e_;
        err = e_.lpNorm<Eigen::Infinity>();
        if (!std::isfinite(err))
          throw StepFailure(
              format_text("ali1: the fixed-point iteration produced a non-finite residual at t = {} s", t));
        if (err <= std::max(tol_, floor)) break;
        if (it > 1) ratio = err / previous;  // the last pass's contraction
        previous = err;
        if (it >= max_it_) throw StepFailure(unconverged(t, err, floor, ratio));
      }
    }
    v += h * a_;
    q += h * v;
    record(model, t + h, q, v, it);
    return t + h;
  }

  void acceleration(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, VectorRef v_dot) override {
    dyn_.evaluate(model, t, q, v);
    dyn_.factorize();
    if (dyn_.size.m > 0) stabilization(v);
    dyn_.acceleration(a_c_, v_dot);
  }

  void effective(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, MatrixRef M_eff,
                 VectorRef f_eff) override {
    dyn_.evaluate(model, t, q, v);
    dyn_.factorize();
    if (dyn_.size.m > 0) stabilization(v);
    dyn_.effective(a_c_, M_eff, f_eff);
  }

  json statistics() const override {
    json s = stats_.to_json();
    s["constraint_residuals"] = residuals_.to_json();
    return s;
  }
  Accuracy accuracy() const override {
    return residuals_.accuracy(
        "ali1 integrates with the first-order semi-implicit Euler and nothing but its Baumgarte terms (omega, xi) "
        "pulls the drift back; reduce the step, raise omega, or use ali3p, whose projections hold the constraints");
  }

 private:
  // Why the fixed-point iteration stopped short of max(tolerance, floor), and what helps.
  std::string unconverged(double t, double err, double floor, double ratio) const {
    const std::string head =
        format_text("ali1: the fixed-point iteration did not converge in {} iterations at t = {} s: ", max_it_, t);
    if (ratio < 0.9)
      return head +
             format_text(
                 "its residual {} still shrinks (by a factor {} in the last iteration) towards the tolerance {}; "
                 "raise alpha (each iteration contracts by about 1/(1 + alpha s), s the constraint compliance) "
                 "or max_iterations",
                 err, ratio, tol_);
    return head + format_text(
                      "its residual stagnates at {}, {} times the round-off of its terms, above the tolerance {}: "
                      "M + alpha Phi_q^T Phi_q is too ill-conditioned for these masses; lower alpha ({}) or raise "
                      "tolerance",
                      err, err / std::max(floor, 1e-300), tol_, alpha_);
  }

  // stab = Ḋu-bias + 2ξωΦ̇ + ω²Φ, and the constraint acceleration a_c = Φ_q q̈ = −stab.
  void stabilization(ConstVectorRef v) {
    e_.noalias() = dyn_.Phi_q * v;
    e_ += dyn_.phi_t;
    stab_ = dyn_.bias + 2.0 * xi_ * omega_ * e_ + omega_ * omega_ * dyn_.phi;
    a_c_ = -stab_;
  }

  void record(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, long it) {
    if (dyn_.size.m == 0) {
      stats_.record(it, 0.0, 0.0);
      return;
    }
    model.constraints(t, q, dyn_.phi);
    model.constraint_jacobian(t, q, dyn_.Phi_q);
    model.constraint_rate(t, q, dyn_.phi_t);
    e_.noalias() = dyn_.Phi_q * v;
    e_ += dyn_.phi_t;
    stats_.record(it, dyn_.phi.norm(), e_.norm());
    residuals_.record(t, dyn_.phi, e_);
  }

  double alpha_, omega_, xi_, tol_;
  long max_it_;
  formulations::ConstrainedDynamics dyn_;
  formulations::FormulationStats stats_;
  formulations::ConstraintResiduals residuals_;
  Eigen::MatrixXd Mbar_;
  Eigen::LDLT<Eigen::MatrixXd> ldlt_;
  Eigen::VectorXd a_, rhs_, lambda_, e_, stab_, a_c_;
};

}  // namespace

STRIDE_PLUGIN(Ali1)
