// LU factorization of a sparse square matrix held in dense storage, for the iteration
// matrices of multibody formulations: M + h/2 C + h²/4 (K + Φ_qᵀ α Φ_q) couples only bodies
// joined by a joint or a force, so with a fill-reducing order (minimum degree on the pattern
// of A + Aᵀ) elimination touches a few small blocks per body instead of the whole matrix.
// Pivots are taken on the diagonal in that order (the matrices are dominated by a symmetric
// positive definite part); a pivot that has lost more than 10 digits to cancellation hands the
// factorization to dense partial pivoting instead. The pattern grows to cover every nonzero
// seen (a new one redoes the analysis, minimum_degree.hpp). Only reset() allocates.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

#include <Eigen/Dense>

#include "minimum_degree.hpp"

namespace stride::formulations {

class SparseLU {
 public:
  void reset(Eigen::Index n) {
    n_ = n;
    F_.setZero(n, n);
    mask_.reset(n, n);
    order_.reset(n);
    dense_lu_ = Eigen::PartialPivLU<Eigen::MatrixXd>(n);
    dense_ = false;
  }

  // Factorizes A; false when A is singular (a zero or non-finite pivot under dense pivoting).
  bool compute(const Eigen::MatrixXd& A) {
    if (!mask_.covers(A)) {  // find the new nonzeros
      const std::size_t words = order_.words();
      for (Eigen::Index j = 0; j < n_; ++j)  // column j's nonzeros against row j of the symmetric pattern
        for (std::size_t w = 0; w < words; ++w) {
          const Eigen::Index i0 = Eigen::Index(64 * w), i1 = std::min(n_, i0 + 64);
          std::uint64_t nz = 0;
          for (Eigen::Index i = i0; i < i1; ++i) nz |= std::uint64_t(A(i, j) != 0.0) << (i - i0);
          for (std::uint64_t missing = nz & ~order_.pattern_word(j, w); missing; missing &= missing - 1) {
            const Eigen::Index i = i0 + __builtin_ctzll(missing);
            order_.add(i, j);
            mask_.add(i, j), mask_.add(j, i);
          }
        }
    }
    if (!order_.analyzed()) order_.analyze();
    load(A);
    dense_ = !eliminate(A);
    if (dense_) {
      dense_lu_.compute(A);
      const auto& U = dense_lu_.matrixLU();
      for (Eigen::Index k = 0; k < n_; ++k)
        if (!std::isfinite(U(k, k)) || U(k, k) == 0.0) return false;
    }
    return true;
  }

  // x ← A⁻¹ x.
  void solveInPlace(Eigen::VectorXd& x) const {
    if (dense_) {
      x = dense_lu_.solve(x);
      return;
    }
    const double* const F = F_.data();
    for (Eigen::Index k = 0; k < n_; ++k) {  // L y = x (unit diagonal)
      const Eigen::Index p = order_.pivot(k);
      const double xp = x[p];
      if (xp != 0.0)
        for (const Eigen::Index i : order_.later(k)) x[i] -= F[p * n_ + i] * xp;
    }
    for (Eigen::Index k = n_ - 1; k >= 0; --k) {  // U z = y
      const Eigen::Index p = order_.pivot(k);
      double xp = x[p];
      for (const Eigen::Index j : order_.later(k)) xp -= F[j * n_ + p] * x[j];
      x[p] = xp / F[p * n_ + p];
    }
  }

 private:
  // F_ = A on the filled pattern (the only entries elimination and the solves read; A is zero
  // on the fill).
  void load(const Eigen::MatrixXd& A) {
    for (Eigen::Index k = 0; k < n_; ++k) {
      const Eigen::Index p = order_.pivot(k);
      F_(p, p) = A(p, p);
      for (const Eigen::Index i : order_.later(k)) F_(i, p) = A(i, p), F_(p, i) = A(p, i);
    }
  }

  // In-place elimination of F_ = A in the order; false when a pivot lost more than 10 digits
  // against A's diagonal entry or is that small against the rest of its row.
  bool eliminate(const Eigen::MatrixXd& A) {
    double* const F = F_.data();
    for (Eigen::Index k = 0; k < n_; ++k) {
      const Eigen::Index p = order_.pivot(k);
      const auto later = order_.later(k);
      double* const Fp = F + p * n_;  // column p: L below the pivot
      const double piv = Fp[p];
      double scale = std::abs(A(p, p));
      for (const Eigen::Index j : later) scale = std::max(scale, std::abs(F[j * n_ + p]));
      if (!(std::abs(piv) > 1e-10 * scale) || !std::isfinite(piv)) return false;
      const double inv = 1.0 / piv;
      for (const Eigen::Index i : later) Fp[i] *= inv;
      for (const Eigen::Index j : later) {
        double* const Fj = F + j * n_;
        const double u = Fj[p];
        if (u == 0.0) continue;
        for (const Eigen::Index i : later) Fj[i] -= Fp[i] * u;
      }
    }
    return true;
  }

  Eigen::Index n_ = 0;
  Eigen::MatrixXd F_;        // L (below the diagonal in order) and U
  PatternMask mask_;  // the pattern, for the check on each factorization
  MinimumDegreeOrder order_;
  Eigen::PartialPivLU<Eigen::MatrixXd> dense_lu_;
  bool dense_ = false;
};

}  // namespace stride::formulations
