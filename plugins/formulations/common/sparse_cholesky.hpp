// Cholesky factor S = L Lᵀ of a symmetric positive definite matrix held in dense storage whose
// factor is sparse: S = Φ_q M⁻¹ Φ_qᵀ couples only constraint rows that share a body, so most of
// its entries, and of L's, are zero. Right-looking elimination in the given order that skips
// the zeros of each column of L:
//   for k = 0 … m−1:  L_kk = √S_kk;  rows R_k = {i > k : S_ik ≠ 0};  L_ik = S_ik / L_kk (i ∈ R_k);
//                     S_ij −= L_ik L_jk  (i, j ∈ R_k, i ≥ j)
// The cost follows the factor's nonzeros (a dense blocked factorization of the 50 × 50 S of a
// rover costs several times more). No pivoting: compute() returns false at a pivot that is not
// positive (S not positive definite), as Eigen::LLT does. The solves run over R_k only.
// Only reset() allocates.
#pragma once

#include <cmath>
#include <vector>

#include <Eigen/Dense>

namespace stride::formulations {

class SparseCholesky {
 public:
  void reset(Eigen::Index m) {
    L_.setZero(m, m);
    start_.assign(std::size_t(m) + 1, 0);
    rows_.assign(std::size_t(m * m), 0);
  }

  // Factorizes the lower triangle of S.
  bool compute(const Eigen::MatrixXd& S) {
    const Eigen::Index m = S.rows();
    L_.triangularView<Eigen::Lower>() = S;
    double* const L = L_.data();
    Eigen::Index* const rows = rows_.data();
    std::size_t nz = 0;
    for (Eigen::Index k = 0; k < m; ++k) {
      double* const Lk = L + k * m;  // column k
      if (!(Lk[k] > 0.0)) return false;
      Lk[k] = std::sqrt(Lk[k]);
      const double inv = 1.0 / Lk[k];
      const std::size_t first = nz;
      start_[std::size_t(k)] = first;
      for (Eigen::Index i = k + 1; i < m; ++i)
        if (Lk[i] != 0.0) Lk[i] *= inv, rows[nz++] = i;
      for (std::size_t b = first; b < nz; ++b) {
        double* const Lj = L + rows[b] * m;
        const double ljk = Lk[rows[b]];
        for (std::size_t a = b; a < nz; ++a) Lj[rows[a]] -= Lk[rows[a]] * ljk;
      }
    }
    start_[std::size_t(m)] = nz;
    return true;
  }

  double diagonal(Eigen::Index k) const { return L_(k, k); }

  // X ← S⁻¹ X, column by column.
  template <class Derived>
  void solveInPlace(Eigen::MatrixBase<Derived>& X) const {
    const Eigen::Index m = L_.rows();
    for (Eigen::Index c = 0; c < X.cols(); ++c) {
      for (Eigen::Index k = 0; k < m; ++k) {  // L y = x
        const double y = X(k, c) / L_(k, k);
        X(k, c) = y;
        if (y != 0.0)
          for (std::size_t a = start_[std::size_t(k)]; a < start_[std::size_t(k) + 1]; ++a) X(rows_[a], c) -= L_(rows_[a], k) * y;
      }
      for (Eigen::Index k = m - 1; k >= 0; --k) {  // Lᵀ z = y
        double z = X(k, c);
        for (std::size_t a = start_[std::size_t(k)]; a < start_[std::size_t(k) + 1]; ++a) z -= L_(rows_[a], k) * X(rows_[a], c);
        X(k, c) = z / L_(k, k);
      }
    }
  }

 private:
  Eigen::MatrixXd L_;                // lower triangle: L; above it, whatever S had
  std::vector<std::size_t> start_;   // column k's nonzeros below the diagonal: rows_[start_[k] … start_[k+1])
  std::vector<Eigen::Index> rows_;
};

}  // namespace stride::formulations
