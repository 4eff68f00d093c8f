// Work memory and linear algebra shared by the formulation plugins: one evaluation of a
// MultibodyModel at (t, q, v), the constrained acceleration for a given constraint
// acceleration Φ_q v̇ = a_c, and the reduced interface model of Peiret 2018 Eq. 12-13 / 17-19.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Dense>

#include <stride/stride.hpp>

#include "sparse_cholesky.hpp"

namespace stride::formulations {

// Cholesky factor of a symmetric positive definite matrix that is block diagonal, the blocks
// found from its nonzeros at every compute(): a mechanism's mass matrix has one 3×3 (diagonal)
// and one 4×4 block per body. compute() returns false when a block is not positive definite.
// Only reset() allocates.
class BlockCholesky {
 public:
  void reset(Eigen::Index n) {
    L_.setZero(n, n);
    start_.assign(std::size_t(n) + 1, 0);
    block_of_.assign(std::size_t(n), 0);
    blocks_ = 0;
  }
  std::size_t blocks() const { return blocks_; }
  Eigen::Index start(std::size_t b) const { return start_[b]; }  // block b is [start(b), start(b + 1))
  std::size_t block_of(Eigen::Index i) const { return block_of_[std::size_t(i)]; }

  bool compute(const Eigen::MatrixXd& M) {
    const auto n = M.rows();
    blocks_ = 0;
    Eigen::Index reach = 0;  // last row coupled to the columns of the open block
    for (Eigen::Index j = 0; j < n; ++j) {
      Eigen::Index last = n - 1;
      while (last > j && M(last, j) == 0.0) --last;
      reach = std::max(reach, last);
      block_of_[std::size_t(j)] = blocks_;
      if (reach == j) start_[++blocks_] = j + 1;
    }
    for (std::size_t b = 0; b < blocks_; ++b) {
      const Eigen::Index s = start_[b], e = start_[b + 1];
      for (Eigen::Index j = s; j < e; ++j) {
        double d = M(j, j);
        for (Eigen::Index k = s; k < j; ++k) d -= L_(j, k) * L_(j, k);
        if (!(d > 0.0)) return false;
        L_(j, j) = std::sqrt(d);
        for (Eigen::Index i = j + 1; i < e; ++i) {
          double x = M(i, j);
          for (Eigen::Index k = s; k < j; ++k) x -= L_(i, k) * L_(j, k);
          L_(i, j) = x / L_(j, j);
        }
      }
    }
    return true;
  }

  // x_s ← L_b⁻¹ x_s on block b's rows s of column c of X.
  template <class Derived>
  void forward_block(std::size_t b, Eigen::MatrixBase<Derived>& X, Eigen::Index c) const {
    const Eigen::Index s = start_[b], e = start_[b + 1];
    for (Eigen::Index i = s; i < e; ++i) {
      double x = X(i, c);
      for (Eigen::Index k = s; k < i; ++k) x -= L_(i, k) * X(k, c);
      X(i, c) = x / L_(i, i);
    }
  }

  // X ← M⁻¹ X, or L⁻¹ X with `forward_only` (blocks where a column of X is zero stay zero).
  template <class Derived>
  void solveInPlace(Eigen::MatrixBase<Derived>& X, bool forward_only = false) const {
    for (std::size_t b = 0; b < blocks_; ++b) {
      const Eigen::Index s = start_[b], e = start_[b + 1];
      for (Eigen::Index c = 0; c < X.cols(); ++c) {
        if ((X.col(c).segment(s, e - s).array() == 0.0).all()) continue;
        for (Eigen::Index i = s; i < e; ++i) {  // L y = x
          double x = X(i, c);
          for (Eigen::Index k = s; k < i; ++k) x -= L_(i, k) * X(k, c);
          X(i, c) = x / L_(i, i);
        }
        if (forward_only) continue;
        for (Eigen::Index i = e - 1; i >= s; --i) {  // Lᵀ z = y
          double x = X(i, c);
          for (Eigen::Index k = i + 1; k < e; ++k) x -= L_(k, i) * X(k, c);
          X(i, c) = x / L_(i, i);
        }
      }
    }
  }

 private:
  Eigen::MatrixXd L_;
  std::vector<Eigen::Index> start_;
  std::vector<std::size_t> block_of_;
  std::size_t blocks_ = 0;
};

// Call order: reset(model) -> { evaluate(model, t, q, v) -> factorize() ->
// acceleration(a_c, v_dot) | effective(a_c, M_eff, f_eff) }*. Only reset() allocates.
//
// Redundant constraints (rows of Φ_q that depend on the others: a planar mechanism described
// with spatial joints, a joint given twice) make S = Φ_q M⁻¹ Φ_qᵀ singular. The solution uses the
// independent rows then, as Adams and Chrono do: when the Cholesky of S fails, the rows are
// taken in order and a row whose Schur complement in S is below 1e-12 of its diagonal (its
// M⁻¹-weighted part outside the span of the rows before it) is left out; its multiplier is
// zero. The set found first is kept while S over it stays factorizable, and chosen again when
// it does not; a choice with fewer rows than before is a configuration where the mechanism
// loses rank (a lock-up or bifurcation), and is an error naming the rows' sources.
class ConstrainedDynamics {
 public:
  MultibodySizes size;
  Eigen::MatrixXd M, Phi_q, D_i;
  Eigen::VectorXd c, f, lambda_i, b_i, phi, phi_t, bias, Q;

  // `formulation` and `own_square`: the caller's name and how many dense n × n matrices it
  // holds besides these, for refusing a model too large for this machine before allocating.
  void reset(MultibodyModel& model, std::string_view formulation, int own_square) {
    size = model.sizes();
    check_memory(size, formulation, own_square);
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
    chol_M_.reset(n);
    blocked_ = false;
    chol_S_.reset(m);
    labels_ = m > 0 ? model.constraint_labels() : std::vector<ConstraintLabel>{};
    dependent_.assign(std::size_t(m), 0);
    redundant_ = 0;
    rank_ = -1;
    L_.setZero(m, m);
    ldlt_Me_ = Eigen::LDLT<Eigen::MatrixXd>(p);
    Y_.setZero(n, m);
    S_.setZero(m, m);
    Z_.setZero(m, p);
    T_.setZero(n, p);
    Minv_eff_.setZero(p, p);
    x_.setZero(n);
    mu_.setZero(m);
    r_.setZero(p);
    w_.setZero(n);
    Tw_.setZero(n, p);
    mark_.assign(std::size_t(n), 0);
    block_rows_start_.assign(std::size_t(n) + 1, 0);
    block_fill_.assign(std::size_t(n), 0);
    block_rows_.assign(std::size_t(m * n), 0);
    row_start_.assign(std::size_t(m) + 1, 0);
    col_.assign(std::size_t(m * n), 0);
    val_.assign(std::size_t(m * n), 0.0);
    mask_.reset(m, n);
  }

  // The dense work of a formulation over this model: n × n matrices (M, its two factors, and the
  // caller's), n × m (Y, Φ_q's pattern) and m × m (S, its factors), 8 bytes a number. More than the machine's
  // memory (or more numbers than an index holds) is refused with the sizes, instead of a
  // std::bad_alloc, or an out-of-memory kill while the matrices are cleared.
  static void check_memory(const MultibodySizes& s, std::string_view formulation, int own_square) {
    const double n = double(s.n), m = double(s.m);
    const double bytes = 8.0 * ((3.0 + own_square) * n * n + 2.0 * n * m + 3.0 * m * m);
    const double pages = double(::sysconf(_SC_PHYS_PAGES)), page = double(::sysconf(_SC_PAGE_SIZE));
    const double memory = pages > 0 && page > 0 ? pages * page : 0.0;
    if ((memory > 0.0 && bytes > memory) || n * n > 9e18)
      throw std::invalid_argument(format_text("the model has n = {} coordinates and m = {} constraints: {} holds dense "
                                              "n x n and m x m matrices, {} GB here, more than this machine's {} GB of "
                                              "memory; a mechanism this large needs a sparse formulation",
                                              s.n, s.m, formulation, bytes / 1e9, memory / 1e9));
  }

  // Everything the dynamics needs at (t, q, v); Q = f + D_iᵀ λ_i − c. Without `biases`, b_i
  // and the constraint bias are left as they were (an iteration that does not use them); with
  // `phi_current`, Φ is the caller's, already evaluated at (t, q).
  void evaluate(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, bool biases = true,
                bool phi_current = false) {
    model.mass_matrix(q, M);
    model.interface_jacobian(q, D_i);
    if (size.m > 0) {
      if (!phi_current) model.constraints(t, q, phi);
      model.constraint_jacobian(t, q, Phi_q);
      model.constraint_rate(t, q, phi_t);
      sparsify();
    }
    evaluate_motion(model, t, q, v, biases);
  }

  // The configuration terms only: M, D_i, Φ_q, Φ_t (Φ as the caller last set it).
  void evaluate_configuration(MultibodyModel& model, double t, ConstVectorRef q) {
    model.mass_matrix(q, M);
    model.interface_jacobian(q, D_i);
    if (size.m > 0) {
      model.constraint_jacobian(t, q, Phi_q);
      model.constraint_rate(t, q, phi_t);
      sparsify();
    }
  }

  // The rest of evaluate() for a caller whose configuration terms are those of (t, q).
  void evaluate_motion(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, bool biases = true) {
    model.coriolis(q, v, c);
    model.applied_forces(t, q, v, f);
    model.interface_forces(t, q, v, lambda_i);
    if (biases) model.interface_bias(q, v, b_i);
    Q = f - c;
    Q.noalias() += D_i.transpose() * lambda_i;
    if (size.m > 0 && biases) model.constraint_bias(t, q, v, bias);
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

  // T += s Φ_qᵀ Φ_q, row by row over the row's nonzeros (a joint row touches two bodies).
  // Valid after evaluate().
  void add_constraint_gram(MatrixRef T, double s) const {
    for (std::size_t r = 0; r + 1 < row_start_.size(); ++r)
      for (std::size_t b = row_start_[r]; b < row_start_[r + 1]; ++b) {
        const double g = s * val_[b];
        for (std::size_t a = row_start_[r]; a < row_start_[r + 1]; ++a) T(col_[a], col_[b]) += val_[a] * g;
      }
  }

  // out += s Φ_qᵀ u and out = Φ_q x over Φ_q's nonzeros; valid after evaluate() or
  // evaluate_configuration().
  template <class U, class Out>
  void add_Phi_q_transpose_times(double s, const U& u, Out&& out) const {
    for (std::size_t r = 0; r + 1 < row_start_.size(); ++r) {
      const double x = s * u[Eigen::Index(r)];
      for (std::size_t a = row_start_[r]; a < row_start_[r + 1]; ++a) out[col_[a]] += val_[a] * x;
    }
  }
  template <class X, class Out>
  void Phi_q_times(const X& x, Out&& out) const {
    for (std::size_t r = 0; r + 1 < row_start_.size(); ++r) {
      double y = 0.0;
      for (std::size_t a = row_start_[r]; a < row_start_[r + 1]; ++a) y += val_[a] * x[col_[a]];
      out[Eigen::Index(r)] = y;
    }
  }

  // Factorizes M (block by block when it is block diagonal and positive definite, else dense
  // LDLᵀ) and, with constraints, S = Φ_q M⁻¹ Φ_qᵀ (Y = M⁻¹ Φ_qᵀ; lower triangle, over the
  // nonzeros of Φ_q).
  // `sparse_current`: Φ_q has not been written since evaluate() or evaluate_configuration()
  // (which keep its nonzeros), so they need not be collected again.
  void factorize(bool sparse_current = false) {
    blocked_ = chol_M_.compute(M) && chol_M_.blocks() > 1;
    if (!blocked_) {
      ldlt_M_.compute(M);
      if (ldlt_M_.info() != Eigen::Success) throw StepFailure("multibody: mass matrix is singular");
    }
    if (size.m > 0) {
      if (!sparse_current) sparsify();  // Φ_q may have been re-read since evaluate()
      form_S();
      if (redundant_ > 0) leave_out_dependent(S_);
      if (factorize_S()) {
        if (rank_ < 0) rank_ = size_m() - redundant_;  // the rank every later configuration must keep
        return;
      }
      form_S();  // the whole S again, to choose the independent rows from
      choose_independent();
      leave_out_dependent(S_);
      if (!factorize_S())
        throw StepFailure(
            "multibody: the constraint Jacobian is nearly rank deficient (a near-singular configuration); "
            "the equation closest to depending on the others: " +
            weakest_row());
    }
  }

  // Rows of Φ_q left out as dependent on the others (0 when Φ_q has full rank).
  Eigen::Index redundant_rows() const { return redundant_; }

  // v̇ = M⁻¹ Q − Y S⁻¹ (Φ_q M⁻¹ Q − a_c): the acceleration with Φ_q v̇ = a_c.
  void acceleration(ConstVectorRef a_c, VectorRef v_dot) {
    x_ = Q;
    solve_M(x_);
    if (size.m > 0) {
      Phi_q_times(x_, mu_);
      mu_ -= a_c;
      if (redundant_ > 0) zero_dependent(mu_);
      chol_S_.solveInPlace(mu_);
      subtract_Y(mu_, x_, w_);
    }
    v_dot = x_;
  }

  // Constraint reactions λ of M v̇ + Φ_qᵀ λ = Q; valid right after acceleration().
  const Eigen::VectorXd& multipliers() const { return mu_; }

  // Eq. 17-19 with G = (I − P_c) M⁻¹ = M⁻¹ − Y S⁻¹ Yᵀ and P_c v̇ = Y S⁻¹ a_c;
  // with m = 0, G = M⁻¹ and this is Eq. 12-13. Only G D_iᵀ (p columns) is formed.
  void effective(ConstVectorRef a_c, MatrixRef M_eff, VectorRef f_eff) {
    T_ = D_i.transpose();
    solve_M(T_);
    if (size.m > 0) {
      for (Eigen::Index c = 0; c < T_.cols(); ++c) Phi_q_times(T_.col(c), Z_.col(c));  // Yᵀ D_iᵀ
      if (redundant_ > 0) zero_dependent(Z_);
      chol_S_.solveInPlace(Z_);
      subtract_Y(Z_, T_, Tw_);
    }
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
      if (redundant_ > 0) zero_dependent(mu_);
      chol_S_.solveInPlace(mu_);
      x_.setZero();
      subtract_Y(mu_, x_, w_);
      r_.noalias() -= D_i * x_;
    }
    f_eff.noalias() = M_eff * r_;
  }

 private:
  // S = Φ_q M⁻¹ Φ_qᵀ (lower triangle at least), with Y = M⁻¹ Φ_qᵀ in the dense path.
  void form_S() {
    if (blocked_) {
      constraint_gram_by_blocks();
    } else {
      Y_ = Phi_q.transpose();
      solve_M(Y_);
      S_.noalias() = Phi_q * Y_;
    }
  }

  // S is symmetric positive definite when Φ_q has full rank: Cholesky (over its nonzeros, no
  // pivoting). Rank deficiency shows as a failed or vanishing pivot: κ₂(S) ≥ (max L_ii / min
  // L_ii)², a bound that costs nothing, in place of an iterative condition estimate.
  bool factorize_S() {
    if (!chol_S_.compute(S_)) return false;
    double lo = std::numeric_limits<double>::infinity(), hi = 0.0;
    for (Eigen::Index k = 0; k < S_.rows(); ++k)
      lo = std::min(lo, std::abs(chol_S_.diagonal(k))), hi = std::max(hi, std::abs(chol_S_.diagonal(k)));
    return lo > 0.0 && (lo / hi) * (lo / hi) >= 1e-14;
  }

  // Marks the rows of Φ_q that depend on the rows before them (in S's lower triangle: an
  // ordered Cholesky that skips a row whose pivot falls below 1e-12 of its diagonal). Throws
  // when fewer rows are independent than at the first choice.
  void choose_independent() {
    const Eigen::Index m = S_.rows();
    Eigen::Index kept = 0;
    for (Eigen::Index k = 0; k < m; ++k) {
      double d = S_(k, k);
      for (Eigen::Index j = 0; j < k; ++j)
        if (!dependent_[std::size_t(j)]) d -= L_(k, j) * L_(k, j);
      dependent_[std::size_t(k)] = !(d > 1e-12 * S_(k, k));
      if (dependent_[std::size_t(k)]) continue;
      ++kept;
      L_(k, k) = std::sqrt(d);
      for (Eigen::Index i = k + 1; i < m; ++i) {
        double x = S_(i, k);
        for (Eigen::Index j = 0; j < k; ++j)
          if (!dependent_[std::size_t(j)]) x -= L_(i, j) * L_(k, j);
        L_(i, k) = x / L_(k, k);
      }
    }
    if (rank_ >= 0 && kept < rank_) {
      std::string which;
      for (Eigen::Index k = 0; k < m; ++k)
        if (dependent_[std::size_t(k)] && std::size_t(k) < labels_.size() &&
            which.find(labels_[std::size_t(k)].source) == std::string::npos)
          which += (which.empty() ? "" : ", ") + labels_[std::size_t(k)].source;
      throw StepFailure(format_text("multibody: the constraint Jacobian lost rank ({} independent equations of {}, {} "
                                    "before): a singular configuration (a lock-up or a bifurcation); dependent now: ",
                                    kept, m, rank_) +
                        which);
    }
    if (rank_ < 0) rank_ = kept;
    redundant_ = m - kept;
  }

  // The source of the kept row whose pivot in choose_independent() is smallest against its
  // diagonal: the equation nearest to depending on the rows before it.
  std::string weakest_row() const {
    Eigen::Index worst = -1;
    double lowest = std::numeric_limits<double>::infinity();
    for (Eigen::Index k = 0; k < S_.rows(); ++k)
      if (!dependent_[std::size_t(k)] && S_(k, k) > 0.0 && L_(k, k) * L_(k, k) / S_(k, k) < lowest)
        lowest = L_(k, k) * L_(k, k) / S_(k, k), worst = k;
    if (worst < 0) return "none found";
    const std::string source = std::size_t(worst) < labels_.size() ? labels_[std::size_t(worst)].source
                                                                   : "constraint row " + std::to_string(worst);
    return format_text("{} (row {}, pivot {} of its diagonal)", source, worst, lowest);
  }

  // S restricted to the independent rows: each dependent row and column zero, its diagonal 1
  // (its multiplier then solves to the zero its right-hand side is given).
  void leave_out_dependent(Eigen::MatrixXd& S) const {
    double diagonal = 0.0;  // the largest kept one: the unit rows must not spoil the pivot-ratio test
    for (Eigen::Index k = 0; k < S.rows(); ++k)
      if (!dependent_[std::size_t(k)]) diagonal = std::max(diagonal, S(k, k));
    for (Eigen::Index k = 0; k < S.rows(); ++k)
      if (dependent_[std::size_t(k)]) {
        S.row(k).setZero();
        S.col(k).setZero();
        S(k, k) = diagonal > 0.0 ? diagonal : 1.0;
      }
  }
  Eigen::Index size_m() const { return Eigen::Index(size.m); }
  template <class X>
  void zero_dependent(X& x) const {
    for (Eigen::Index k = 0; k < x.rows(); ++k)
      if (dependent_[std::size_t(k)]) x.row(k).setZero();
  }

  // X −= Y U with Y = M⁻¹ Φ_qᵀ: Y itself in the dense path, M⁻¹ (Φ_qᵀ U) in the block path
  // (Φ_qᵀ U over Φ_q's nonzeros).
  template <class A, class B, class C>
  void subtract_Y(const A& U, B& X, C& work) const {
    if (!blocked_) {
      X.noalias() -= Y_ * U;
      return;
    }
    work.setZero();
    for (Eigen::Index c = 0; c < U.cols(); ++c) add_Phi_q_transpose_times(1.0, U.col(c), work.col(c));
    chol_M_.solveInPlace(work);
    X -= work;
  }

  // S = Φ_q M⁻¹ Φ_qᵀ = Wᵀ W with W = L⁻¹ Φ_qᵀ (in Y_, on the blocks each row touches only:
  // the rest of Y_ is not read), summed block by block over the constraint rows that touch the
  // block (lower triangle).
  void constraint_gram_by_blocks() {
    const std::size_t nb = chol_M_.blocks(), m = std::size_t(size.m);
    // Rows touching each block, ascending: block_rows_[block_rows_start_[b] ...); column r of
    // W is nonzero on those blocks only.
    std::fill(block_rows_start_.begin(), block_rows_start_.begin() + long(nb) + 1, 0);
    std::fill(mark_.begin(), mark_.begin() + long(nb), 0);
    for (std::size_t r = 0; r < m; ++r)
      for (std::size_t a = row_start_[r]; a < row_start_[r + 1]; ++a) {
        const std::size_t b = chol_M_.block_of(col_[a]);
        if (mark_[b] != r + 1) {
          mark_[b] = r + 1, ++block_rows_start_[b + 1];
          const Eigen::Index s = chol_M_.start(b), k = chol_M_.start(b + 1) - s;
          Y_.col(Eigen::Index(r)).segment(s, k) = Phi_q.row(Eigen::Index(r)).segment(s, k).transpose();
          chol_M_.forward_block(b, Y_, Eigen::Index(r));
        }
      }
    for (std::size_t b = 0; b < nb; ++b) block_rows_start_[b + 1] += block_rows_start_[b];
    std::copy(block_rows_start_.begin(), block_rows_start_.begin() + long(nb), block_fill_.begin());
    std::fill(mark_.begin(), mark_.begin() + long(nb), 0);
    for (std::size_t r = 0; r < m; ++r)
      for (std::size_t a = row_start_[r]; a < row_start_[r + 1]; ++a) {
        const std::size_t b = chol_M_.block_of(col_[a]);
        if (mark_[b] != r + 1) mark_[b] = r + 1, block_rows_[block_fill_[b]++] = r;
      }
    S_.setZero();
    for (std::size_t b = 0; b < nb; ++b) {
      const Eigen::Index s = chol_M_.start(b), k = chol_M_.start(b + 1) - s;
      for (std::size_t x = block_rows_start_[b]; x < block_rows_start_[b + 1]; ++x) {
        const auto i = Eigen::Index(block_rows_[x]);
        for (std::size_t y = block_rows_start_[b]; y <= x; ++y) {
          const auto j = Eigen::Index(block_rows_[y]);
          S_(i, j) += Y_.col(i).segment(s, k).dot(Y_.col(j).segment(s, k));
        }
      }
    }
  }

  template <class Derived>
  void solve_M(Eigen::MatrixBase<Derived>& X) const {
    if (blocked_) chol_M_.solveInPlace(X);
    else ldlt_M_.solveInPlace(X);
  }
  // Φ_q by rows: the columns and values of row r's entries are at [row_start_[r], row_start_[r + 1]),
  // over a pattern that covers every nonzero seen so far (a joint row's entries on its bodies;
  // those that are zero now add exact zeros to the products); a nonzero (or NaN) outside it
  // grows it.
  void sparsify() {
    if (!mask_.covers(Phi_q)) {
      std::size_t k = 0;
      for (Eigen::Index r = 0; r < Phi_q.rows(); ++r) {
        row_start_[std::size_t(r)] = k;
        for (Eigen::Index j = 0; j < Phi_q.cols(); ++j) {
          if (Phi_q(r, j) != 0.0) mask_.add(r, j);
          if (mask_.contains(r, j)) col_[k++] = j;
        }
      }
      row_start_.back() = k;
    }
    for (std::size_t r = 0; r + 1 < row_start_.size(); ++r)
      for (std::size_t a = row_start_[r]; a < row_start_[r + 1]; ++a) val_[a] = Phi_q(Eigen::Index(r), col_[a]);
  }

  BlockCholesky chol_M_;
  bool blocked_ = false;
  Eigen::VectorXd w_;
  Eigen::MatrixXd Tw_;
  std::vector<std::size_t> mark_, block_rows_start_, block_fill_, block_rows_;
  std::vector<std::size_t> row_start_;
  std::vector<Eigen::Index> col_;
  std::vector<double> val_;
  PatternMask mask_;  // Φ_q's pattern
  Eigen::LDLT<Eigen::MatrixXd> ldlt_M_, ldlt_Me_;
  SparseCholesky chol_S_;
  std::vector<ConstraintLabel> labels_;
  std::vector<char> dependent_;     // per row of Φ_q: left out as dependent on the others
  Eigen::Index redundant_ = 0;      // rows left out
  Eigen::Index rank_ = -1;          // independent rows at the first choice (-1: none made yet)
  Eigen::MatrixXd L_;               // choose_independent()'s factor
  Eigen::MatrixXd Y_, S_, Z_, T_, Minv_eff_;
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

// The constraint residuals of a run against their bounds: the accuracy a formulation vouches
// for (Formulation::accuracy()). Three residuals, each the largest row (∞-norm) over the steps
// with its time and source (MultibodyModel::constraint_labels()):
//   position       |Φ| over the geometric rows (m for points, 1 for directions, the rows' units),
//   normalization  |pᵀp − 1| over the Euler-parameter rows (a body scaled by 1 + that),
//   velocity       |Φ_q v + Φ_t| over every row.
// Call order: declare() in describe(), the constructor from the parameters, reset(model) ->
// record(t, Φ, Φ_q v + Φ_t) after every step. Only reset() allocates.
class ConstraintResiduals {
 public:
  static void declare(std::vector<ParamSpec>& params) {
    params.push_back(real_param("max_position_residual", 1e-4, "1",
                                "accuracy bound on |Phi| of the joint rows (in their units: m for points, 1 for "
                                "directions); a run past it ends inaccurate",
                                0.0, 1e300));
    params.push_back(real_param("max_velocity_residual", 0.1, "1",
                                "accuracy bound on |Phi_q v + Phi_t| (m/s for points, 1/s for directions)", 0.0,
                                1e300));
    params.push_back(real_param("max_normalization_residual", 1e-4, "1",
                                "accuracy bound on |p^T p - 1| of the Euler parameters", 0.0, 1e300));
  }
  explicit ConstraintResiduals(const Params& p)
      : bound_{p.real("max_position_residual"), p.real("max_normalization_residual"), p.real("max_velocity_residual")} {
  }

  void reset(const MultibodyModel& model) {
    const std::size_t m = model.sizes().m;
    labels_ = m > 0 ? model.constraint_labels() : std::vector<ConstraintLabel>{};
    if (labels_.size() != m) {
      labels_.assign(m, ConstraintLabel{});
      for (std::size_t r = 0; r < m; ++r) labels_[r].source = "constraint row " + std::to_string(r);
    }
    worst_ = {};
  }

  void record(double t, const Eigen::VectorXd& phi, const Eigen::VectorXd& phi_dot) {
    for (Eigen::Index r = 0; r < phi.size(); ++r) {
      const bool norm = labels_[std::size_t(r)].kind == ConstraintKind::normalization;
      worst_[norm ? 1 : 0].take(std::abs(phi[r]), t, r);
      worst_[2].take(std::abs(phi_dot[r]), t, r);
    }
  }

  json to_json() const {
    json j = json::object();
    for (std::size_t k = 0; k < 3; ++k) {
      const Worst& w = worst_[k];
      json e{{"max", w.value}, {"bound", bound_[k]}};
      if (w.row >= 0) e["at_time"] = w.t, e["source"] = labels_[std::size_t(w.row)].source;
      j[kName[k]] = e;
    }
    return j;
  }

  // Within when no residual passed its bound; else which did, where and when, then `advice`
  // (how this formulation's answer gets within them).
  Accuracy accuracy(std::string_view advice) const {
    Accuracy a;
    for (std::size_t k = 0; k < 3; ++k) {
      const Worst& w = worst_[k];
      if (!(w.value > bound_[k])) continue;  // NaN is caught by the step that made it
      a.within = false;
      a.reason += format_text("{}the {} constraint residual reached {} at t = {} s ({}), above its bound {} ({})",
                              a.reason.empty() ? "" : "; ", kName[k], w.value, w.t, labels_[std::size_t(w.row)].source,
                              bound_[k], kParam[k]);
    }
    if (!a.within) a.reason += ": " + std::string(advice);
    return a;
  }

 private:
  struct Worst {
    double value = 0.0, t = 0.0;
    Eigen::Index row = -1;
    void take(double x, double at, Eigen::Index r) {
      if (x > value) value = x, t = at, row = r;
    }
  };
  static constexpr const char* kName[3] = {"position", "normalization", "velocity"};
  static constexpr const char* kParam[3] = {"max_position_residual", "max_normalization_residual",
                                            "max_velocity_residual"};
  double bound_[3];
  std::array<Worst, 3> worst_{};
  std::vector<ConstraintLabel> labels_;
};

}  // namespace stride::formulations
