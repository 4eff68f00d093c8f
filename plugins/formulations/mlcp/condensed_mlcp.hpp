// The nonsmooth impulse–momentum step of the `mlcp` formulation (mlcp.cpp) with the bilateral
// rows eliminated and the structure of a mechanism used (parameter linear_algebra = condensed):
// the same MLCP and the same interface model, solved on the contact rows only.
//
// With L_M L_Mᵀ = M (block by block: a mechanism's M has one block per body and coordinate
// kind), W = L_M⁻¹ Aᵀ (each row of A touches few blocks) and the rows split into bilateral (b,
// m of them) and contact (c) rows:
//   H = Wᵀ W + C = [H_bb H_bc; H_cb H_cc],   L Lᵀ = H_bb,   Y = L⁻¹ H_bc,
//   S = H_cc − Yᵀ Y                                         (Schur complement, nc × nc)
//   b = A v_free + φ,  v_free = v + h M⁻¹ Q
//   reduced MLCP:  w_c = S λ_c + b_c − Yᵀ L⁻¹ b_b,  λ_c in its box (friction coupled)
//   λ_b = −H_bb⁻¹ (b_b + H_bc λ_c),   v⁺ = v_free + M⁻¹ Aᵀ λ
// and the residual check recomputes w = A v⁺ + C λ + φ from v⁺ (every row), so an error in
// the elimination cannot pass as a solution.
//
// Interface model over the active set α (bilateral rows, contact rows inside their bounds) of
// the last step, with u = Q_τ (+ D_iᵀ λ_i), E = A_α M⁻¹ D_iᵀ, g = A_α M⁻¹ u, a_α as in mlcp.cpp:
//   M̃⁻¹ = D M⁻¹ Dᵀ − Eᵀ H_α⁻¹ E,   f̃ = M̃ (D M⁻¹ Q_τ + Ḋ v + Eᵀ H_α⁻¹ (a_α − g)),
//   v̇ = M⁻¹ (u + A_αᵀ H_α⁻¹ (a_α − g)),
// H_α⁻¹ applied by blocks: y = L⁻¹ x_b, x_c ← S_α⁻¹ (x_c − Y_αᵀ y), x_b ← L⁻ᵀ (y − Y_α x_c).
//
// Cost per step: one evaluation of the configuration terms (the interface model after a step
// and the next step share the point, and with it M, A, H and every factor), a dense Cholesky
// of H_bb (m³/3) and the contact-sized MLCP, instead of n × n and r × r dense products.
//
// Call order: reset() -> { step() | effective() | acceleration() }*; only reset() allocates.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include <Eigen/Dense>

#include <stride/nonsmooth.hpp>

#include "../../common/mlcp_solvers.hpp"
#include "../common/constrained_dynamics.hpp"
#include "mlcp_step.hpp"

namespace stride::formulations {

class CondensedMlcp {
 public:
  // Regularization of the bilateral rows (k, τ) and the step size of C before the first step.
  struct Bilateral {
    double stiffness = 1e12, relaxation = 0.0, initial_step = 1e-3;
  };

  void reset(MultibodyModel& model, NonsmoothModel* ns, const std::vector<ContactRow>& rows, const MlcpSolve& solve,
             const Bilateral& b, double t0, ConstVectorRef q, ConstVectorRef v) {
    solve_ = solve;
    bil_ = b;
    ns_ = ns;
    rows_ = rows;
    dyn_.reset(model, "mlcp", 0);
    n_ = Eigen::Index(dyn_.size.n), m_ = Eigen::Index(dyn_.size.m), p_ = Eigen::Index(dyn_.size.p);
    nc_ = Eigen::Index(rows_.size());
    r_ = m_ + nc_;
    chol_M_.reset(n_);
    J_.setZero(nc_, n_);
    gap_.setZero(nc_);
    mu_.setZero(nc_);
    C_.setZero(r_);
    phi_.setZero(r_);
    W_.setZero(n_, r_);
    H_.setZero(r_, r_);
    llt_bb_ = Eigen::LLT<Eigen::MatrixXd>(m_);
    Y_.setZero(m_, nc_);
    Ya_.setZero(m_, nc_);
    S_.setZero(nc_, nc_);
    Sa_.setZero(nc_, nc_);
    llt_S_ = Eigen::LLT<Eigen::MatrixXd>(nc_);
    row_start_.assign(std::size_t(r_) + 1, 0);
    col_.assign(std::size_t(r_ * n_), 0);
    val_.assign(std::size_t(r_ * n_), 0.0);
    block_rows_start_.assign(std::size_t(n_) + 1, 0);
    block_rows_.assign(std::size_t(r_ * n_), 0);
    mark_.assign(std::size_t(n_), 0);
    for (auto* x : {&vfree_, &vplus_, &x_n_, &y_n_, &Qt_}) x->setZero(n_);
    for (auto* x : {&b_, &lambda_, &w_, &diag_, &ac_, &g_, &xr_}) x->setZero(r_);
    for (auto* x : {&yb_, &xb_}) x->setZero(m_);
    for (auto* x : {&xc_, &lambda_c_, &warm_c_, &wc_, &dc_}) x->setZero(nc_);
    fill_.assign(std::size_t(n_), 0);
    WD_.setZero(n_, p_);
    MD_.setZero(n_, p_);
    E_.setZero(r_, p_);
    Er_.setZero(r_, p_);
    Minv_eff_.setZero(p_, p_);
    ldlt_Me_ = Eigen::LDLT<Eigen::MatrixXd>(p_);
    rp_.setZero(p_);
    prob_.resize(nc_);
    for (Eigen::Index k = 0; k < nc_; ++k) {
      const ContactRow& row = rows_[std::size_t(k)];
      if (row.kind == ContactKind::normal) prob_.lo[k] = 0.0;
      else prob_.coupled[std::size_t(k)] = int(row.normal);
    }
    pgs_.reset(nc_);
    bpp_.reset(nc_);
    // Active set before the first step: closed contacts stick (as mlcp.cpp).
    status_.assign(std::size_t(nc_), RowStatus::free);
    if (nc_ > 0) {
      ns_->contacts(t0, q, v, J_, gap_, mu_);
      for (Eigen::Index k = 0; k < nc_; ++k) {
        const ContactRow& row = rows_[std::size_t(k)];
        status_[std::size_t(k)] = gap_[row.kind == ContactKind::normal ? k : Eigen::Index(row.normal)] <= 0.0
                                      ? RowStatus::free
                                      : RowStatus::lower;
      }
    }
    h_last_ = 0.0;
    assembled_ = false;
    prepared_config_ = prepared_status_ = -1;
    key_q_ = q;
    stats_ = {};
    solve_.reset_counters();
    min_normal_ = mlcp::inf;
    max_friction_ratio_ = 0.0;
  }

  double step(MultibodyModel& model, double t, double h, VectorRef q, VectorRef v) {
    assemble(model, t, q, v, h);
    dyn_.evaluate_motion(model, t, q, v);
    // v_free = v + h M⁻¹ Q, b = A v_free + φ, reduced right-hand side b_c − Yᵀ L⁻¹ b_b.
    x_n_ = dyn_.Q;
    chol_M_.solveInPlace(x_n_);
    vfree_ = v + h * x_n_;
    times_A(vfree_, b_);
    b_ += phi_;
    yb_ = b_.head(m_);
    if (m_ > 0) llt_bb_.matrixL().solveInPlace(yb_);
    prob_.H = S_;
    prob_.b = b_.tail(nc_);
    prob_.b.noalias() -= Y_.transpose() * yb_;
    for (Eigen::Index k = 0; k < nc_; ++k) prob_.mu[k] = mu_[k];

    long iterations = 0;
    if (nc_ > 0) {
      iterations = solve_.solve(prob_, lambda_c_, warm_c_, xc_, pgs_, bpp_, t, [this] { return recover(); });
    } else if (const double res = recover(); !(res <= solve_.tol)) {  // bilateral rows only: nothing to iterate
      ++solve_.failed;
      throw StepFailure(
          format_text("mlcp: the bilateral rows miss the residual tolerance at t = {} s (residual {} m/s)", t, res));
    }
    classify();
    warm_c_ = lambda_c_;
    h_last_ = h;
    v = vplus_;
    q += h * v;
    for (Eigen::Index k = 0; k < nc_; ++k)
      if (rows_[std::size_t(k)].kind == ContactKind::normal)
        solve_.max_penetration = std::max(solve_.max_penetration, -gap_[k]);
    double phi_norm = 0.0, phi_dot = 0.0;
    if (m_ > 0) {
      // Violations at the point reached, from the configuration terms the next evaluation
      // there (interface model, next step) takes from here.
      assemble(model, t + h, q, v, h);
      phi_norm = dyn_.phi.norm();
      times_A(v, xr_);
      e_ = xr_.head(m_) + dyn_.phi_t;
      phi_dot = e_.norm();
    }
    stats_.record(iterations, phi_norm, phi_dot);
    return t + h;
  }

  void acceleration(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, VectorRef v_dot) {
    interface_model(model, t, q, v);
    x_n_ = Qt_;
    x_n_.noalias() += dyn_.D_i.transpose() * dyn_.lambda_i;  // u
    y_n_ = x_n_;
    chol_M_.solveInPlace(y_n_);  // M⁻¹ u
    times_A(y_n_, g_);
    xr_ = ac_ - g_;
    solve_active(xr_);
    times_A_transpose(xr_, y_n_);
    x_n_ += y_n_;
    chol_M_.solveInPlace(x_n_);
    v_dot = x_n_;
  }

  void effective(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, MatrixRef M_eff,
                 VectorRef f_eff) {
    if (p_ == 0) return;
    interface_model(model, t, q, v);
    Minv_eff_.noalias() = WD_.transpose() * WD_;
    Er_ = E_;
    for (Eigen::Index j = 0; j < p_; ++j) {
      xr_ = Er_.col(j);
      solve_active(xr_);
      Er_.col(j) = xr_;
    }
    Minv_eff_.noalias() -= E_.transpose() * Er_;
    ldlt_Me_.compute(Minv_eff_);
    if (ldlt_Me_.info() != Eigen::Success)
      throw StepFailure("mlcp: interface velocities are not independent over the active set (D G D^T singular)");
    M_eff.setIdentity();
    ldlt_Me_.solveInPlace(M_eff);
    // r = D M⁻¹ Q_τ + Ḋ v + Eᵀ H_α⁻¹ (a_α − A_α M⁻¹ Q_τ)
    x_n_ = Qt_;
    chol_M_.solveInPlace(x_n_, true);  // L_M⁻¹ Q_τ
    rp_.noalias() = WD_.transpose() * x_n_;
    rp_ += dyn_.b_i;
    y_n_ = Qt_;
    chol_M_.solveInPlace(y_n_);
    times_A(y_n_, g_);
    xr_ = ac_ - g_;
    solve_active(xr_);
    rp_.noalias() += E_.transpose() * xr_;
    f_eff.noalias() = M_eff * rp_;
  }

  // Φ and Φ_q v + Φ_t at the point the last step reached (bilateral rows; valid after step()).
  const Eigen::VectorXd& phi() const { return dyn_.phi; }
  const Eigen::VectorXd& phi_rate() const { return e_; }

  json statistics() const {
    json s = stats_.to_json();
    Eigen::Index active = 0;
    for (const RowStatus st : status_) active += st == RowStatus::free;
    solve_.to_json(s, nc_, active);
    s["linear_algebra"] = "condensed";
    // From the impulses of every step: normal impulses are never negative and friction stays
    // inside its cone (|λ_t| ≤ μ λ_n, ratio ≤ 1) in a solution; the residual check enforces
    // both to its tolerance, these say by how much.
    s["min_normal_impulse"] = nc_ > 0 ? min_normal_ : 0.0;
    s["max_friction_ratio"] = max_friction_ratio_;
    return s;
  }

 private:
  // Configuration terms at (t, q) for step size h, kept while the point and h stay the same
  // (the interface model after a step and the next step share them): M and its blocks, A by
  // rows, C, φ, W, H, the Cholesky factor of H_bb, Y and S.
  // The contacts' J and gap are taken as configuration terms (evaluated with the v given).
  void assemble(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, double h) {
    if (assembled_ && t == key_t_ && h == key_h_ && q == key_q_) return;
    model.mass_matrix(q, dyn_.M);
    model.interface_jacobian(q, dyn_.D_i);
    if (m_ > 0) {
      model.constraints(t, q, dyn_.phi);
      model.constraint_jacobian(t, q, dyn_.Phi_q);
      model.constraint_rate(t, q, dyn_.phi_t);
    }
    if (!chol_M_.compute(dyn_.M)) throw StepFailure("mlcp: mass matrix is not positive definite");
    if (nc_ > 0) ns_->contacts(t, q, v, J_, gap_, mu_);
    for (Eigen::Index k = 0; k < m_; ++k) {
      C_[k] = row_compliance(h, bil_.stiffness, bil_.relaxation);
      phi_[k] = dyn_.phi_t[k] + dyn_.phi[k] / (h + bil_.relaxation);
    }
    contact_regularization(rows_, gap_, h, m_, C_, phi_);
    sparsify();
    gram();
    if (m_ > 0) {
      llt_bb_.compute(H_.topLeftCorner(m_, m_));
      if (llt_bb_.info() != Eigen::Success) throw StepFailure("mlcp: bilateral rows A_b M^-1 A_b^T + C are singular");
      Y_ = H_.topRightCorner(m_, nc_);
      llt_bb_.matrixL().solveInPlace(Y_);
    }
    S_ = H_.bottomRightCorner(nc_, nc_);
    S_.noalias() -= Y_.transpose() * Y_;
    for (Eigen::Index k = 0; k < r_; ++k) diag_[k] = H_(k, k);
    key_t_ = t, key_h_ = h, key_q_ = q;
    assembled_ = true;
    ++config_version_;
  }

  // A = [Φ_q; J] by rows (columns and values of row k at [row_start_[k], row_start_[k + 1])), the rows
  // touching each block of M, and W = L_M⁻¹ Aᵀ on those blocks.
  void sparsify() {
    std::size_t z = 0;
    for (Eigen::Index k = 0; k < r_; ++k) {
      row_start_[std::size_t(k)] = z;
      const auto row = k < m_ ? dyn_.Phi_q.row(k) : J_.row(k - m_);
      for (Eigen::Index j = 0; j < n_; ++j)
        if (row[j] != 0.0) col_[z] = j, val_[z++] = row[j];
    }
    row_start_.back() = z;
    const std::size_t nb = chol_M_.blocks();
    std::fill(block_rows_start_.begin(), block_rows_start_.begin() + long(nb) + 1, 0);
    std::fill(mark_.begin(), mark_.begin() + long(nb), 0);
    W_.setZero();
    for (Eigen::Index k = 0; k < r_; ++k)
      for (std::size_t a = row_start_[std::size_t(k)]; a < row_start_[std::size_t(k) + 1]; ++a) {
        W_(col_[a], k) = val_[a];
        const std::size_t b = chol_M_.block_of(col_[a]);
        if (mark_[b] != std::size_t(k) + 1) mark_[b] = std::size_t(k) + 1, ++block_rows_start_[b + 1];
      }
    for (std::size_t b = 0; b < nb; ++b) block_rows_start_[b + 1] += block_rows_start_[b];
    std::vector<std::size_t>& fill = fill_;
    std::copy(block_rows_start_.begin(), block_rows_start_.begin() + long(nb), fill.begin());
    std::fill(mark_.begin(), mark_.begin() + long(nb), 0);
    for (Eigen::Index k = 0; k < r_; ++k)
      for (std::size_t a = row_start_[std::size_t(k)]; a < row_start_[std::size_t(k) + 1]; ++a) {
        const std::size_t b = chol_M_.block_of(col_[a]);
        if (mark_[b] == std::size_t(k) + 1) continue;
        mark_[b] = std::size_t(k) + 1;
        block_rows_[fill[b]++] = std::size_t(k);
        chol_M_.forward_block(b, W_, k);
      }
  }

  // H = Wᵀ W + C over the blocks each pair of rows shares (both triangles).
  void gram() {
    H_.setZero();
    for (std::size_t b = 0; b < chol_M_.blocks(); ++b) {
      const Eigen::Index s = chol_M_.start(b), len = chol_M_.start(b + 1) - s;
      for (std::size_t x = block_rows_start_[b]; x < block_rows_start_[b + 1]; ++x) {
        const auto i = Eigen::Index(block_rows_[x]);
        for (std::size_t y = block_rows_start_[b]; y <= x; ++y) {
          const auto j = Eigen::Index(block_rows_[y]);
          H_(i, j) += W_.col(i).segment(s, len).dot(W_.col(j).segment(s, len));
        }
      }
    }
    H_.diagonal() += C_;
    H_.triangularView<Eigen::StrictlyUpper>() = H_.transpose();
  }

  // out = A x and out = Aᵀ x over A's nonzeros.
  void times_A(const Eigen::VectorXd& x, Eigen::VectorXd& out) const {
    for (Eigen::Index k = 0; k < r_; ++k) {
      double y = 0.0;
      for (std::size_t a = row_start_[std::size_t(k)]; a < row_start_[std::size_t(k) + 1]; ++a)
        y += val_[a] * x[col_[a]];
      out[k] = y;
    }
  }
  void times_A_transpose(const Eigen::VectorXd& x, Eigen::VectorXd& out) const {
    out.setZero();
    for (Eigen::Index k = 0; k < r_; ++k)
      for (std::size_t a = row_start_[std::size_t(k)]; a < row_start_[std::size_t(k) + 1]; ++a)
        out[col_[a]] += val_[a] * x[k];
  }

  // λ_b from λ_c, v⁺, and the natural-map residual of w = A v⁺ + C λ + φ over every row
  // (bilateral rows: |w|; contact rows: the box with the friction bounds of λ_c).
  double recover() {
    if (!lambda_c_.allFinite()) return mlcp::inf;
    if (m_ > 0) {
      xb_ = b_.head(m_);
      xb_.noalias() += H_.topRightCorner(m_, nc_) * lambda_c_;
      llt_bb_.solveInPlace(xb_);
      lambda_.head(m_) = -xb_;
    }
    lambda_.tail(nc_) = lambda_c_;
    times_A_transpose(lambda_, x_n_);
    chol_M_.solveInPlace(x_n_);
    vplus_ = vfree_ + x_n_;
    if (!vplus_.allFinite()) return mlcp::inf;
    times_A(vplus_, w_);
    w_ += C_.cwiseProduct(lambda_);
    w_ += phi_;
    double res = m_ > 0 ? w_.head(m_).cwiseAbs().maxCoeff() : 0.0;
    if (nc_ > 0) {
      wc_ = w_.tail(nc_);
      dc_ = diag_.tail(nc_);
      res = std::max(res, mlcp::natural_residual(prob_, lambda_c_, wc_, dc_));
    }
    return std::isfinite(res) ? res : mlcp::inf;
  }

  // Contact rows at a bound (within the tolerance) leave the active set; impulse checks.
  void classify() {
    ++status_version_;
    for (Eigen::Index k = 0; k < nc_; ++k) {
      status_[std::size_t(k)] =
          row_status(lambda_c_[k], prob_.lower(k, lambda_c_), prob_.upper(k, lambda_c_), diag_[m_ + k], solve_.tol);
      const ContactRow& row = rows_[std::size_t(k)];
      if (row.kind == ContactKind::normal) {
        min_normal_ = std::min(min_normal_, lambda_c_[k]);
      } else if (const double cap = mu_[k] * lambda_c_[Eigen::Index(row.normal)]; cap > 0.0) {
        max_friction_ratio_ = std::max(max_friction_ratio_, std::abs(lambda_c_[k]) / cap);
      }
    }
  }

  // Q_τ, a_α, E = A_α M⁻¹ D_iᵀ, L_M⁻¹ D_iᵀ and the factor of S_α at (t, q, v), over the active
  // set of the last step; rows outside α are zeroed (S_α gets a unit diagonal there).
  void interface_model(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v) {
    const double h = h_last_ > 0.0 ? h_last_ : bil_.initial_step;
    assemble(model, t, q, v, h);
    dyn_.evaluate_motion(model, t, q, v);
    Qt_ = dyn_.f - dyn_.c;
    if (h_last_ > 0.0)
      for (Eigen::Index k = 0; k < nc_; ++k)
        if (status_[std::size_t(k)] != RowStatus::free && lambda_[m_ + k] != 0.0)
          for (std::size_t a = row_start_[std::size_t(m_ + k)]; a < row_start_[std::size_t(m_ + k) + 1]; ++a)
            Qt_[col_[a]] += val_[a] * (lambda_[m_ + k] / h_last_);
    times_A(v, xr_);
    for (Eigen::Index k = 0; k < m_; ++k) ac_[k] = -dyn_.bias[k];
    for (Eigen::Index k = 0; k < nc_; ++k)
      ac_[m_ + k] = status_[std::size_t(k)] == RowStatus::free ? -(xr_[m_ + k] + phi_[m_ + k]) / h : 0.0;
    // The rest depends on the configuration and the active set only: kept for the next call
    // at the same point (effective() and acceleration() follow each other).
    if (prepared_config_ == config_version_ && prepared_status_ == status_version_) return;
    prepared_config_ = config_version_, prepared_status_ = status_version_;
    WD_ = dyn_.D_i.transpose();
    chol_M_.solveInPlace(WD_, true);  // L_M⁻¹ D_iᵀ
    MD_ = dyn_.D_i.transpose();
    chol_M_.solveInPlace(MD_);               // M⁻¹ D_iᵀ
    for (Eigen::Index k = 0; k < r_; ++k) {  // E = A M⁻¹ D_iᵀ over A's nonzeros
      E_.row(k).setZero();
      if (k >= m_ && status_[std::size_t(k - m_)] != RowStatus::free) continue;
      for (std::size_t a = row_start_[std::size_t(k)]; a < row_start_[std::size_t(k) + 1]; ++a)
        E_.row(k) += val_[a] * MD_.row(col_[a]);
    }
    Ya_ = Y_;
    Sa_ = S_;
    for (Eigen::Index k = 0; k < nc_; ++k)
      if (status_[std::size_t(k)] != RowStatus::free) {
        Ya_.col(k).setZero();
        Sa_.row(k).setZero();
        Sa_.col(k).setZero();
        Sa_(k, k) = 1.0;
      }
    llt_S_.compute(Sa_);
    if (llt_S_.info() != Eigen::Success) throw StepFailure("mlcp: active-set matrix A M^-1 A^T + C is singular");
  }

  // x ← H_α⁻¹ x (entries of inactive contact rows in and out are zero).
  void solve_active(Eigen::VectorXd& x) {
    for (Eigen::Index k = 0; k < nc_; ++k)
      if (status_[std::size_t(k)] != RowStatus::free) x[m_ + k] = 0.0;
    if (m_ > 0) {
      yb_ = x.head(m_);
      llt_bb_.matrixL().solveInPlace(yb_);
    }
    xc_ = x.tail(nc_);
    xc_.noalias() -= Ya_.transpose() * yb_;
    llt_S_.solveInPlace(xc_);
    x.tail(nc_) = xc_;
    if (m_ > 0) {
      yb_.noalias() -= Ya_ * xc_;
      llt_bb_.matrixU().solveInPlace(yb_);
      x.head(m_) = yb_;
    }
  }

  MlcpSolve solve_;
  Bilateral bil_;
  NonsmoothModel* ns_ = nullptr;
  std::vector<ContactRow> rows_;
  Eigen::Index n_ = 0, m_ = 0, p_ = 0, nc_ = 0, r_ = 0;
  ConstrainedDynamics dyn_;
  BlockCholesky chol_M_;
  Eigen::MatrixXd J_, W_, H_, Y_, Ya_, S_, Sa_, WD_, MD_, E_, Er_, Minv_eff_;
  Eigen::VectorXd gap_, mu_, C_, phi_, vfree_, vplus_, x_n_, y_n_, Qt_, b_, lambda_, w_, diag_, ac_, g_, xr_, yb_, xb_,
      xc_, lambda_c_, warm_c_, wc_, dc_, rp_, e_;
  Eigen::LLT<Eigen::MatrixXd> llt_bb_, llt_S_;
  Eigen::LDLT<Eigen::MatrixXd> ldlt_Me_;
  std::vector<std::size_t> row_start_, block_rows_start_, block_rows_, mark_, fill_;
  std::vector<Eigen::Index> col_;
  std::vector<double> val_;
  std::vector<RowStatus> status_;
  mlcp::Problem prob_;
  mlcp::Pgs pgs_;
  mlcp::Bpp bpp_;
  double h_last_ = 0.0;
  bool assembled_ = false;
  long config_version_ = 0, status_version_ = 0, prepared_config_ = -1, prepared_status_ = -1;
  double key_t_ = 0.0, key_h_ = 0.0;
  Eigen::VectorXd key_q_;

  FormulationStats stats_;
  double min_normal_ = mlcp::inf, max_friction_ratio_ = 0.0;
};

}  // namespace stride::formulations
