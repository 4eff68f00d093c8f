// Nonsmooth impulse–momentum formulation (BENCHMARKS.md §6, Peiret's nonsmooth interface
// models). One step from (t, q, v) with step h:
//   M v⁺ − Aᵀ λ̂ = p,  p = M v + h (f_a + D_iᵀ λ_i − c)       (everything at t, λ_i at t)
//   w = A v⁺ + C λ̂ + φ,  λ̂_k ∈ [lo_k, hi_k] complementary to w_k
//   q⁺ = q + h v⁺
// A stacks the bilateral rows Φ_q (bounds (−∞, ∞), velocity term Φ_t) and, for a
// NonsmoothModel, its contact rows (normal [0, ∞), friction [−μ λ̂_n, μ λ̂_n]). C and φ are the
// spring–damper regularization documented in stride/nonsmooth.hpp; bilateral rows use the
// parameters stiffness and relaxation. The MLCP is condensed to H λ̂ + b with H = A M⁻¹ Aᵀ + C,
// b = A M⁻¹ p + φ and solved by the chosen solver, then by the other one when the residual
// check fails. The residual check recomputes v⁺ and w from the physics and measures the
// natural-map residual (bounds and complementarity) in velocity units; a step whose every solver
// misses the tolerance is counted and throws StepFailure.
//
// Interface model (effective): over the active set α of the last step (bilateral rows, and
// contact rows strictly inside their bounds) with G = M⁻¹ − M⁻¹ A_αᵀ (A_α M⁻¹ A_αᵀ + C_α)⁻¹ A_α M⁻¹,
//   M̃ = (D G Dᵀ)⁻¹,   f̃ = M̃ (D G (f − c + A_τᵀ λ̂_τ / h) + Ḋ v + D M⁻¹ A_αᵀ (…)⁻¹ a_α),
// where the rows τ at a bound (detaching contact, kinetic friction) act as applied forces
// λ̂_τ / h and a_α is the exact constraint acceleration of the bilateral rows (−bias) and 0 for
// contacts. acceleration() is the same model's v̇, so D v̇ + Ḋ v = M̃⁻¹ (f̃ + λ_i). Without
// contacts and with C_α → 0 this is Eq. 17-19 of the smooth formulations.
// C_α uses the step size of the last step (the parameter initial_step before the first one).
//
// linear_algebra = condensed: the same step and interface model with the bilateral rows
// eliminated and M factorized by blocks (condensed_mlcp.hpp), for mechanisms of many bodies.
// solver = bpp_coupled: the friction bounds inside the pivoting (mlcp_solvers.hpp), and as
// fallback PGS with subspace steps instead of plain PGS.
#include <cstdio>
#include <stdexcept>
#include <string>

#include <stride/nonsmooth.hpp>

#include "../../common/mlcp_solvers.hpp"
#include "../common/constrained_dynamics.hpp"
#include "condensed_mlcp.hpp"
#include "mlcp_step.hpp"

namespace {

using namespace stride;

class Mlcp final : public Formulation {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "mlcp";
    i.kind = Kind::formulation;
    i.version = "1.0";
    i.description =
        "Nonsmooth impulse-momentum step as a box MLCP (bilateral, contact, Coulomb friction rows), PGS or "
        "block-pivoting solver with residual check; nonsmooth interface model over the active set";
    i.parameters = {
        choice_param("solver", "pgs", {"pgs", "bpp", "bpp_coupled"},
                     "pgs: projected Gauss-Seidel with warm start, then bpp if the residual check fails; bpp: block "
                     "principal pivoting (direct), then pgs; bpp_coupled: block principal pivoting with the friction "
                     "bounds inside the pivoting (no fixed-point loop on them), then pgs"),
        integer_param("iterations", 500, "projected Gauss-Seidel sweeps per step", 1, 1e7),
        integer_param("max_pivots", 200, "block principal pivoting linear solves per step", 1, 1e6),
        real_param("tolerance", 1e-10, "m/s",
                   "residual check: largest natural-map residual (bounds and complementarity) in velocity units", 1e-16,
                   1.0),
        real_param("stiffness", 1e12, "N/m",
                   "regularization stiffness k of the bilateral rows (C = 1/(h^2 k (1 + tau/h)))", 1e-3, 1e30),
        real_param("relaxation", 0.0, "s",
                   "relaxation time tau of the bilateral rows (damping k tau; phi = Phi/(h + tau))", 0.0, 1e3),
        real_param("initial_step", 1e-3, "s",
                   "step size of the regularization C used by the interface model before the first step", 1e-9, 10.0),
        choice_param(
            "linear_algebra", "dense", {"dense", "condensed"},
            "dense: the MLCP over every row with dense M^-1 A^T and A M^-1 A^T; condensed: the bilateral rows "
            "eliminated (Schur complement), M factorized by blocks, A by its nonzeros, the MLCP on the contact "
            "rows only (condensed_mlcp.hpp; same step, for mechanisms of many bodies)"),
    };
    formulations::ConstraintResiduals::declare(i.parameters);
    return i;
  }

  explicit Mlcp(const Params& p)
      : k_bil_(p.real("stiffness")),
        tau_bil_(p.real("relaxation")),
        h0_(p.real("initial_step")),
        condensed_(p.string("linear_algebra") == "condensed"),
        residuals_(p) {
    solve_.direct_first = p.string("solver") != "pgs";
    solve_.coupled = p.string("solver") == "bpp_coupled";
    solve_.sweeps = p.integer("iterations");
    solve_.pivots = p.integer("max_pivots");
    solve_.tol = p.real("tolerance");
  }

  void reset(MultibodyModel& model, double t0, VectorRef q, VectorRef v) override {
    ns_ = dynamic_cast<NonsmoothModel*>(&model);
    residuals_.reset(model);
    if (condensed_) {
      rows_.clear();
      if (ns_) rows_ = ns_->contact_rows();
      formulations::check_contact_rows(rows_);
      condensed_step_.reset(model, ns_, rows_, solve_, {k_bil_, tau_bil_, h0_}, t0, q, v);
      return;
    }
    dyn_.reset(model, "mlcp", 2);
    const MultibodySizes s = dyn_.size;
    n_ = Eigen::Index(s.n), m_ = Eigen::Index(s.m), np_ = Eigen::Index(s.p);
    rows_.clear();
    if (ns_) rows_ = ns_->contact_rows();
    nc_ = Eigen::Index(rows_.size());
    r_ = m_ + nc_;
    formulations::check_contact_rows(rows_);
    J_.setZero(nc_, n_);
    gap_.setZero(nc_);
    mu_.setZero(nc_);
    A_.setZero(r_, n_);
    Aa_.setZero(r_, n_);
    C_.setZero(r_);
    phi_.setZero(r_);
    Y_.setZero(n_, r_);
    Ya_.setZero(n_, r_);
    X_.setZero(r_, n_);
    Ha_.setZero(r_, r_);
    G_.setZero(n_, n_);
    T_.setZero(n_, np_);
    Me_inv_.setZero(np_, np_);
    pv_.setZero(n_);
    vfree_.setZero(n_);
    vplus_.setZero(n_);
    vn_.setZero(n_);
    e_.setZero(m_);
    Qt_.setZero(n_);
    ac_.setZero(r_);
    z_.setZero(r_);
    rp_.setZero(np_);
    w_.setZero(r_);
    diag_.setZero(r_);
    lambda_.setZero(r_);
    warm_.setZero(r_);
    iterate_.setZero(r_);
    // Active set before the first step: contacts closed at t0 (gap ≤ 0) are taken as sticking,
    // so that the interface model at t0 (used for the initial equilibrium of the coupled
    // subsystems) carries what the contacts hold; open contacts are inactive.
    status_.assign(std::size_t(r_), RowStatus::free);
    if (nc_ > 0) {
      ns_->contacts(t0, q, v, J_, gap_, mu_);
      for (Eigen::Index k = 0; k < nc_; ++k) {
        const ContactRow& row = rows_[std::size_t(k)];
        const double g = gap_[row.kind == ContactKind::normal ? k : Eigen::Index(row.normal)];
        status_[std::size_t(m_ + k)] = g <= 0.0 ? RowStatus::free : RowStatus::lower;
      }
    }
    ldlt_M_ = Eigen::LDLT<Eigen::MatrixXd>(n_);
    ldlt_H_ = Eigen::LDLT<Eigen::MatrixXd>(r_);
    ldlt_Me_ = Eigen::LDLT<Eigen::MatrixXd>(np_);
    prob_.resize(r_);
    for (Eigen::Index k = 0; k < nc_; ++k) {
      const ContactRow& row = rows_[std::size_t(k)];
      if (row.kind == ContactKind::normal) {
        prob_.lo[m_ + k] = 0.0;
      } else {
        prob_.coupled[std::size_t(m_ + k)] = int(m_ + Eigen::Index(row.normal));
      }
    }
    pgs_.reset(r_);
    bpp_.reset(r_);
    h_last_ = 0.0;
    stats_ = {};
    solve_.reset_counters();
  }

  double step(MultibodyModel& model, double t, double h, VectorRef q, VectorRef v) override {
    if (condensed_) {
      const double t1 = condensed_step_.step(model, t, h, q, v);
      if (condensed_step_.phi().size() > 0) residuals_.record(t1, condensed_step_.phi(), condensed_step_.phi_rate());
      return t1;
    }
    evaluate(model, t, q, v, h);
    // Condensed MLCP: v⁺ = v_free + Y λ̂, Y = M⁻¹ Aᵀ.
    pv_.noalias() = dyn_.M * v;
    pv_ += h * dyn_.Q;
    vfree_ = ldlt_M_.solve(pv_);
    Y_ = A_.transpose();
    ldlt_M_.solveInPlace(Y_);
    prob_.H.noalias() = A_ * Y_;
    prob_.H.diagonal() += C_;
    prob_.b.noalias() = A_ * vfree_;
    prob_.b += phi_;
    for (Eigen::Index k = m_; k < r_; ++k) prob_.mu[k] = mu_[k - m_];

    const long iterations = solve_.solve(prob_, lambda_, warm_, iterate_, pgs_, bpp_, t, [this] { return check(); });
    classify();
    warm_ = lambda_;
    h_last_ = h;
    v = vplus_;
    q += h * v;
    double phi_norm = 0.0, phi_dot = 0.0;
    if (m_ > 0) {
      model.constraints(t + h, q, dyn_.phi);
      model.constraint_jacobian(t + h, q, dyn_.Phi_q);
      model.constraint_rate(t + h, q, dyn_.phi_t);
      phi_norm = dyn_.phi.norm();
      e_.noalias() = dyn_.Phi_q * v;
      e_ += dyn_.phi_t;
      phi_dot = e_.norm();
      residuals_.record(t + h, dyn_.phi, e_);
    }
    for (Eigen::Index k = 0; k < nc_; ++k)
      if (rows_[std::size_t(k)].kind == ContactKind::normal)
        solve_.max_penetration = std::max(solve_.max_penetration, -gap_[k]);
    stats_.record(iterations, phi_norm, phi_dot);
    return t + h;
  }

  void acceleration(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, VectorRef v_dot) override {
    if (condensed_) return condensed_step_.acceleration(model, t, q, v, v_dot);
    interface_model(model, t, q, v);
    // v̇ = G (Q_τ + D_iᵀ λ_i) + M⁻¹ A_αᵀ H_α⁻¹ a_α
    pv_ = Qt_;
    pv_.noalias() += dyn_.D_i.transpose() * dyn_.lambda_i;
    v_dot.noalias() = G_ * pv_;
    v_dot.noalias() += Ya_ * z_;
  }

  void effective(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, MatrixRef M_eff,
                 VectorRef f_eff) override {
    if (condensed_) return condensed_step_.effective(model, t, q, v, M_eff, f_eff);
    if (np_ == 0) return;
    interface_model(model, t, q, v);
    T_.noalias() = G_ * dyn_.D_i.transpose();
    Me_inv_.noalias() = dyn_.D_i * T_;
    ldlt_Me_.compute(Me_inv_);
    if (ldlt_Me_.info() != Eigen::Success)
      throw StepFailure("mlcp: interface velocities are not independent over the active set (D G D^T singular)");
    M_eff.setIdentity();
    ldlt_Me_.solveInPlace(M_eff);
    rp_.noalias() = T_.transpose() * Qt_;
    rp_ += dyn_.b_i;
    vn_.noalias() = Ya_ * z_;
    rp_.noalias() += dyn_.D_i * vn_;
    f_eff.noalias() = M_eff * rp_;
  }

  json statistics() const override {
    if (condensed_) {
      json s = condensed_step_.statistics();
      s["constraint_residuals"] = residuals_.to_json();
      return s;
    }
    json s = stats_.to_json();
    Eigen::Index active = 0;
    for (Eigen::Index k = m_; k < r_; ++k) active += status_[std::size_t(k)] == RowStatus::free;
    solve_.to_json(s, nc_, active);
    s["constraint_residuals"] = residuals_.to_json();
    return s;
  }
  Accuracy accuracy() const override {
    return residuals_.accuracy(
        "the bilateral rows are springs of the parameter stiffness (and the step is first order); raise stiffness or "
        "reduce the step");
  }

 private:
  using RowStatus = formulations::RowStatus;

  // Model quantities at (t, q, v), M factorized, the rows A and their regularization C and φ
  // for the step size h > 0.
  void evaluate(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, double h) {
    dyn_.evaluate(model, t, q, v);
    ldlt_M_.compute(dyn_.M);
    if (ldlt_M_.info() != Eigen::Success) throw StepFailure("mlcp: mass matrix is singular");
    if (m_ > 0) A_.topRows(m_) = dyn_.Phi_q;
    if (nc_ > 0) {
      ns_->contacts(t, q, v, J_, gap_, mu_);
      A_.bottomRows(nc_) = J_;
    }
    for (Eigen::Index k = 0; k < m_; ++k) {
      C_[k] = formulations::row_compliance(h, k_bil_, tau_bil_);
      phi_[k] = dyn_.phi_t[k] + dyn_.phi[k] / (h + tau_bil_);
    }
    formulations::contact_regularization(rows_, gap_, h, m_, C_, phi_);
  }

  // Residual check from the physics: v⁺ = M⁻¹ (p + Aᵀ λ̂), w = A v⁺ + C λ̂ + φ.
  double check() {
    pv_.noalias() = dyn_.M * vfree_;
    pv_.noalias() += A_.transpose() * lambda_;
    vplus_ = ldlt_M_.solve(pv_);
    w_.noalias() = A_ * vplus_;
    w_ += C_.cwiseProduct(lambda_);
    w_ += phi_;
    for (Eigen::Index k = 0; k < r_; ++k) diag_[k] = A_.row(k).dot(Y_.col(k)) + C_[k];
    if (!lambda_.allFinite() || !vplus_.allFinite()) return mlcp::inf;
    return mlcp::natural_residual(prob_, lambda_, w_, diag_);
  }

  // Active set of the interface model: rows strictly inside their bounds; a row counts as at a
  // bound when moving it there changes its velocity by less than the tolerance.
  void classify() {
    for (Eigen::Index k = 0; k < r_; ++k)
      status_[std::size_t(k)] =
          formulations::row_status(lambda_[k], prob_.lower(k, lambda_), prob_.upper(k, lambda_), diag_[k], solve_.tol);
  }

  // G, Ya = M⁻¹ A_αᵀ, z = H_α⁻¹ a_α and Q_τ = f − c + A_τᵀ λ̂_τ / h at (t, q, v) over the active
  // set of the last step. Rows outside α are zeroed in A_α and given a unit diagonal in H_α so
  // that every matrix keeps its size.
  void interface_model(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v) {
    const double h = h_last_ > 0.0 ? h_last_ : h0_;
    evaluate(model, t, q, v, h);
    Qt_ = dyn_.f - dyn_.c;
    for (Eigen::Index k = 0; k < r_; ++k) {
      const bool active = status_[std::size_t(k)] == RowStatus::free;
      if (active) {
        Aa_.row(k) = A_.row(k);
      } else {
        Aa_.row(k).setZero();
        if (h_last_ > 0.0 && lambda_[k] != 0.0) Qt_.noalias() += A_.row(k).transpose() * (lambda_[k] / h_last_);
      }
      // Bilateral rows: the acceleration constraint. Active contact rows: the compliant row of
      // the step, A v+ + C λ̂ + φ = 0, per unit of time, so that the model carries the force
      // the contact's compression and approach speed already hold (a squeezed jaw's preload).
      if (k < m_) ac_[k] = active ? -dyn_.bias[k] : 0.0;
      else ac_[k] = active ? -(A_.row(k).dot(v) + phi_[k]) / h : 0.0;
    }
    Ya_ = Aa_.transpose();
    ldlt_M_.solveInPlace(Ya_);
    Ha_.noalias() = Aa_ * Ya_;
    for (Eigen::Index k = 0; k < r_; ++k) Ha_(k, k) += status_[std::size_t(k)] == RowStatus::free ? C_[k] : 1.0;
    ldlt_H_.compute(Ha_);
    if (ldlt_H_.info() != Eigen::Success) throw StepFailure("mlcp: active-set matrix A M^-1 A^T + C is singular");
    X_ = Ya_.transpose();
    ldlt_H_.solveInPlace(X_);
    G_.setIdentity();
    ldlt_M_.solveInPlace(G_);
    G_.noalias() -= Ya_ * X_;
    z_ = ac_;
    ldlt_H_.solveInPlace(z_);
  }

  formulations::MlcpSolve solve_;
  double k_bil_, tau_bil_, h0_;
  bool condensed_;
  formulations::CondensedMlcp condensed_step_;

  NonsmoothModel* ns_ = nullptr;
  std::vector<ContactRow> rows_;
  Eigen::Index n_ = 0, m_ = 0, np_ = 0, nc_ = 0, r_ = 0;
  formulations::ConstrainedDynamics dyn_;
  Eigen::MatrixXd J_, A_, Aa_, Y_, Ya_, X_, Ha_, G_, T_, Me_inv_;
  Eigen::VectorXd gap_, mu_, C_, phi_, pv_, vfree_, vplus_, vn_, e_, Qt_, ac_, z_, rp_, w_, diag_, lambda_, warm_,
      iterate_;
  std::vector<RowStatus> status_;
  Eigen::LDLT<Eigen::MatrixXd> ldlt_M_, ldlt_H_, ldlt_Me_;
  mlcp::Problem prob_;
  mlcp::Pgs pgs_;
  mlcp::Bpp bpp_;
  double h_last_ = 0.0;

  formulations::FormulationStats stats_;
  formulations::ConstraintResiduals residuals_;
};

}  // namespace

STRIDE_PLUGIN(Mlcp)
