// Cholesky factor P S Pᵀ = L Lᵀ of a symmetric positive definite matrix held in dense storage
// (its lower triangle) whose factor is sparse: S = Φ_q M⁻¹ Φ_qᵀ couples only constraint rows
// that share a body. The pivot order P is minimum degree on S's pattern (minimum_degree.hpp,
// found again when a nonzero appears outside it); with it the rover's 50 × 50 S costs about
// 2 100 multiply-adds instead of 6 100 in the given order, and 21 000 dense.
//   for k = 0 … m−1, p = P_k, R = its neighbours eliminated later:
//     L_pp = √S_pp;  L_ip = S_ip / L_pp (i ∈ R);  S_ij −= L_ip L_jp (i, j ∈ R, i ≥ j)
// compute() returns false at a pivot that is not positive: S is not positive definite (in any
// order, as Eigen::LLT reports in the given one). Only reset() allocates.
#pragma once

#include <cmath>
#include <vector>

#include <Eigen/Dense>

#include "minimum_degree.hpp"

namespace stride::formulations {

class SparseCholesky {
 public:
  void reset(Eigen::Index m) {
    m_ = m;
    F_.setZero(m, m);
    diagonal_.setZero(m);
    order_.reset(m);
    l_.assign(std::size_t(m * m), 0.0);
  }

  // Factorizes the lower triangle of S.
  bool compute(const Eigen::MatrixXd& S) {
    for (Eigen::Index j = 0; j < m_; ++j)
      for (Eigen::Index i = j + 1; i < m_; ++i)
        if (S(i, j) != 0.0 && !order_.contains(i, j)) order_.add(i, j);
    if (!order_.analyzed()) order_.analyze();
    for (Eigen::Index k = 0; k < m_; ++k) {  // F = S on the filled pattern, lower triangle
      const Eigen::Index p = order_.pivot(k);
      F_(p, p) = S(p, p);
      for (const Eigen::Index i : order_.later(k))
        F_(std::max(i, p), std::min(i, p)) = S(std::max(i, p), std::min(i, p));
    }
    double* const F = F_.data();
    for (Eigen::Index k = 0; k < m_; ++k) {
      const Eigen::Index p = order_.pivot(k);
      const double d = F[p * m_ + p];
      if (!(d > 0.0)) return false;
      const double l = std::sqrt(d), inv = 1.0 / l;
      diagonal_[p] = l;
      const auto later = order_.later(k);
      double* const lp = l_.data() + order_.later_start(k);  // L_ip, i ∈ later (ascending)
      for (std::size_t a = 0; a < later.size(); ++a) {
        const Eigen::Index i = later[a];
        lp[a] = (i > p ? F[p * m_ + i] : F[i * m_ + p]) * inv;
      }
      for (std::size_t c = 0; c < later.size(); ++c) {
        double* const Fj = F + later[c] * m_;  // column j = later[c], rows i ≥ j
        const double ljp = lp[c];
        for (std::size_t a = c; a < later.size(); ++a) Fj[later[a]] -= lp[a] * ljp;
      }
    }
    return true;
  }

  // L's diagonal entry of S's row k.
  double diagonal(Eigen::Index k) const { return diagonal_[k]; }

  // X ← S⁻¹ X, column by column.
  template <class Derived>
  void solveInPlace(Eigen::MatrixBase<Derived>& X) const {
    for (Eigen::Index c = 0; c < X.cols(); ++c) {
      for (Eigen::Index k = 0; k < m_; ++k) {  // L y = P x
        const Eigen::Index p = order_.pivot(k);
        const double y = X(p, c) / diagonal_[p];
        X(p, c) = y;
        if (y == 0.0) continue;
        const auto later = order_.later(k);
        const double* const lp = l_.data() + order_.later_start(k);
        for (std::size_t a = 0; a < later.size(); ++a) X(later[a], c) -= lp[a] * y;
      }
      for (Eigen::Index k = m_ - 1; k >= 0; --k) {  // Lᵀ z = y
        const Eigen::Index p = order_.pivot(k);
        const auto later = order_.later(k);
        const double* const lp = l_.data() + order_.later_start(k);
        double z = X(p, c);
        for (std::size_t a = 0; a < later.size(); ++a) z -= lp[a] * X(later[a], c);
        X(p, c) = z / diagonal_[p];
      }
    }
  }

 private:
  Eigen::Index m_ = 0;
  Eigen::MatrixXd F_;              // S's lower triangle, then its Schur complements
  Eigen::VectorXd diagonal_;       // L_pp by row p of S
  MinimumDegreeOrder order_;
  std::vector<double> l_;          // L below the diagonal, pivot by pivot as order_.later()
};

}  // namespace stride::formulations
