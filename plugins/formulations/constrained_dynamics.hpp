// Work memory and linear algebra shared by the formulation plugins: one evaluation of a
// MultibodyModel at (t, q, v), the constrained acceleration for a given constraint
// acceleration Φ_q v̇ = a_c, and the reduced interface model of Peiret 2018 Eq. 12-13 / 17-19.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include <Eigen/Dense>

#include <stride/stride.hpp>

namespace stride::formulations {

// Call order: reset(model) -> { evaluate(model, t, q, v) -> factorize() ->
// acceleration(a_c, v_dot) | effective(a_c, M_eff, f_eff) }*. Only reset() allocates.
class ConstrainedDynamics {
 public:
  MultibodySizes size;
  Eigen::MatrixXd M, Phi_q, D_i;
  Eigen::VectorXd c, f, lambda_i, b_i, phi, phi_t, bias, Q;

  void reset(MultibodyModel& model) {
    size = model.sizes();
    const auto n = Eigen::Index(size.n), m = Eigen::Index(size.m), p = Eigen::Index(size.p);
    M.setZero(n, n);
    Phi_q.setZero(m, n);
    D_i.setZero(p, n);
    c.setZero(n);
    f.setZero(n);
    lambda_i.setZero(p);
    b_i.setZero(p);
    phi.setZero(m);
    phi_t.setZero(m);
    bias.setZero(m);
    Q.setZero(n);
    ldlt_M_ = Eigen::LDLT<Eigen::MatrixXd>(n);
    ldlt_S_ = Eigen::LDLT<Eigen::MatrixXd>(m);
    ldlt_Me_ = Eigen::LDLT<Eigen::MatrixXd>(p);
    Y_.setZero(n, m);
    S_.setZero(m, m);
    G_.setZero(n, n);
    T_.setZero(n, p);
    Minv_eff_.setZero(p, p);
    x_.setZero(n);
    mu_.setZero(m);
    r_.setZero(p);
  }

  // Everything the dynamics needs at (t, q, v); Q = f + D_iᵀ λ_i − c.
  void evaluate(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v) {
    model.mass_matrix(q, M);
    model.coriolis(q, v, c);
    model.applied_forces(t, q, v, f);
    model.interface_forces(t, q, v, lambda_i);
    model.interface_jacobian(q, D_i);
    model.interface_bias(q, v, b_i);
    Q = f - c;
    Q.noalias() += D_i.transpose() * lambda_i;
    if (size.m > 0) {
      model.constraints(t, q, phi);
      model.constraint_jacobian(t, q, Phi_q);
      model.constraint_rate(t, q, phi_t);
      model.constraint_bias(t, q, v, bias);
    }
  }

  // The forces of evaluate() again at the same (t, q, v): applied and interface forces (which
  // may come from inputs) and Q; the configuration-dependent terms and any factorization are
  // kept. For a caller that evaluated at exactly this point and changed nothing since.
  void update_forces(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v) {
    model.applied_forces(t, q, v, f);
    model.interface_forces(t, q, v, lambda_i);
    Q = f - c;
    Q.noalias() += D_i.transpose() * lambda_i;
  }

  // Factorizes M and, with constraints, S = Φ_q M⁻¹ Φ_qᵀ (Y = M⁻¹ Φ_qᵀ).
  void factorize() {
    ldlt_M_.compute(M);
    if (ldlt_M_.info() != Eigen::Success) throw StepFailure("multibody: mass matrix is singular");
    if (size.m > 0) {
      Y_ = Phi_q.transpose();
      ldlt_M_.solveInPlace(Y_);
      S_.noalias() = Phi_q * Y_;
      ldlt_S_.compute(S_);
      if (ldlt_S_.info() != Eigen::Success || ldlt_S_.rcond() < 1e-14)
        throw StepFailure("multibody: constraint Jacobian is rank deficient (singular configuration)");
    }
  }

  // v̇ = M⁻¹ Q − Y S⁻¹ (Φ_q M⁻¹ Q − a_c): the acceleration with Φ_q v̇ = a_c.
  void acceleration(ConstVectorRef a_c, VectorRef v_dot) {
    x_ = Q;
    ldlt_M_.solveInPlace(x_);
    if (size.m > 0) {
      mu_.noalias() = Phi_q * x_;
      mu_ -= a_c;
      ldlt_S_.solveInPlace(mu_);
      x_.noalias() -= Y_ * mu_;
    }
    v_dot = x_;
  }

  // Constraint reactions λ of M v̇ + Φ_qᵀ λ = Q; valid right after acceleration().
  const Eigen::VectorXd& multipliers() const { return mu_; }

  // Eq. 17-19 with G = (I − P_c) M⁻¹ = M⁻¹ − Y S⁻¹ Yᵀ and P_c v̇ = Y S⁻¹ a_c;
  // with m = 0, G = M⁻¹ and this is Eq. 12-13.
  void effective(ConstVectorRef a_c, MatrixRef M_eff, VectorRef f_eff) {
    const auto n = Eigen::Index(size.n);
    G_.setIdentity(n, n);
    ldlt_M_.solveInPlace(G_);
    if (size.m > 0) {
      // G -= Y S⁻¹ Yᵀ, one column at a time so that the only work vector is mu_.
      for (Eigen::Index j = 0; j < n; ++j) {
        mu_ = Y_.row(j).transpose();
        ldlt_S_.solveInPlace(mu_);
        G_.col(j).noalias() -= Y_ * mu_;
      }
    }
    T_.noalias() = G_ * D_i.transpose();
    Minv_eff_.noalias() = D_i * T_;
    ldlt_Me_.compute(Minv_eff_);
    if (ldlt_Me_.info() != Eigen::Success)
      throw StepFailure("multibody: interface velocities are not independent (D_i (I-P_c) M^-1 D_iᵀ singular)");
    M_eff.setIdentity();
    ldlt_Me_.solveInPlace(M_eff);
    // r = D_i G (f − c) + Ḋ_i v + D_i P_c v̇
    x_ = f - c;
    r_.noalias() = T_.transpose() * x_;
    r_ += b_i;
    if (size.m > 0) {
      mu_ = a_c;
      ldlt_S_.solveInPlace(mu_);
      x_.noalias() = Y_ * mu_;
      r_.noalias() += D_i * x_;
    }
    f_eff.noalias() = M_eff * r_;
  }

 private:
  Eigen::LDLT<Eigen::MatrixXd> ldlt_M_, ldlt_S_, ldlt_Me_;
  Eigen::MatrixXd Y_, S_, G_, T_, Minv_eff_;
  Eigen::VectorXd x_, mu_, r_;
};

// Constraint violations and iteration counters every formulation reports.
struct FormulationStats {
  long steps = 0, iterations = 0, max_iterations_per_step = 0;
  double last_phi = 0.0, max_phi = 0.0, last_phi_dot = 0.0, max_phi_dot = 0.0;

  void record(long iterations_this_step, double phi_norm, double phi_dot_norm) {
    ++steps;
    iterations += iterations_this_step;
    max_iterations_per_step = std::max(max_iterations_per_step, iterations_this_step);
    last_phi = phi_norm;
    last_phi_dot = phi_dot_norm;
    max_phi = std::max(max_phi, phi_norm);
    max_phi_dot = std::max(max_phi_dot, phi_dot_norm);
  }
  json to_json() const {
    return {{"steps", steps},
            {"iterations", iterations},
            {"max_iterations_per_step", max_iterations_per_step},
            {"last_constraint_violation", last_phi},
            {"max_constraint_violation", max_phi},
            {"last_velocity_constraint_violation", last_phi_dot},
            {"max_velocity_constraint_violation", max_phi_dot}};
  }
};

}  // namespace stride::formulations
