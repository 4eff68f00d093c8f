// The constraint Jacobian Φ_q of a mechanism as a sparse matrix, factorized to reveal which rows
// depend on the others and to solve for minimum-norm corrections, for the initial assembly
// (mechanism.cpp). A joint row touches two bodies, so Φ_q of a chain of N bodies has about
// 70 N nonzeros and G = Φ_q Φ_qᵀ is banded; the dense Φ_q (about 42 N² numbers) and its dense
// orthogonal factorization (O(N³)) are what made a 1000-body description take more than a
// minute and 680 MB to validate. (Eigen's SparseQR of Φ_qᵀ takes minutes too: its Householder
// vectors fill in.)
//
// Algorithm (LDLᵀ of G in the rows' order, the order the description gives them):
//   G = Φ_q Φ_qᵀ + δ diag(G), δ = 1e-14 (so that a dependent row's zero pivot stays positive);
//   G = L D Lᵀ without reordering: D_k is what row k adds to the rows before it,
//     D_k = |row k − its projection on the rows before it|² (+ δ G_kk);
//   row k depends on the rows before it when D_k ≤ 1e-12 G_kk (its part outside their span is
//     below 1e-6 of its length): the later of each dependent set, a loop's closing joint or
//     the second copy of a joint given twice;
//   G_I: G with each dependent row and column replaced by the unit one, factorized again.
// Minimum-norm solution of the independent rows I, Φ_I dx = b_I:  G_I y = b (b_k = 0 for k ∉ I),
// dx = Φ_qᵀ y. It solves every row when the dependent ones are consistent with the others.
#pragma once

#include <algorithm>
#include <vector>

#include <Eigen/Sparse>
#include <Eigen/SparseCholesky>

namespace stride::mechanism {

class ConstraintRank {
 public:
  using Sparse = Eigen::SparseMatrix<double>;

  // Factorizes Φ_q (m × n, from triplets; duplicates are summed). False when G has a number
  // that is not finite (then nothing else is valid).
  bool compute(Eigen::Index m, Eigen::Index n, const std::vector<Eigen::Triplet<double>>& phi_q) {
    J_.resize(m, n);
    J_.setFromTriplets(phi_q.begin(), phi_q.end());
    Sparse G = J_ * J_.transpose();
    Eigen::VectorXd diagonal = G.diagonal();
    if (!diagonal.allFinite()) return false;
    for (Eigen::Index k = 0; k < m; ++k) G.coeffRef(k, k) += 1e-14 * diagonal[k];
    Eigen::SimplicialLDLT<Sparse, Eigen::Lower, Eigen::NaturalOrdering<int>> ordered(G);
    if (ordered.info() != Eigen::Success) return false;
    const Eigen::VectorXd D = ordered.vectorD();
    dependent_.assign(std::size_t(m), 0);
    rank_ = m;
    for (Eigen::Index k = 0; k < m; ++k)
      if (!(D[k] > 1e-12 * diagonal[k])) dependent_[std::size_t(k)] = 1, --rank_;
    for (Eigen::Index k = 0; k < m; ++k) G.coeffRef(k, k) -= 1e-14 * diagonal[k];
    if (rank_ < m) {
      // G_I: the dependent rows and columns cleared, a unit diagonal (their y then solves to 0).
      for (Eigen::Index c = 0; c < G.outerSize(); ++c)
        for (Sparse::InnerIterator it(G, c); it; ++it)
          if (dependent_[std::size_t(it.row())] || dependent_[std::size_t(it.col())]) it.valueRef() = 0.0;
      for (Eigen::Index k = 0; k < m; ++k)
        if (dependent_[std::size_t(k)]) G.coeffRef(k, k) = 1.0;
    }
    independent_.compute(G);
    return independent_.info() == Eigen::Success;
  }

  const Sparse& jacobian() const { return J_; }  // Φ_q
  Eigen::Index rank() const { return rank_; }
  // Rows of Φ_q that depend on the rows before them, ascending.
  std::vector<Eigen::Index> dependent() const {
    std::vector<Eigen::Index> d;
    for (std::size_t k = 0; k < dependent_.size(); ++k)
      if (dependent_[k]) d.push_back(Eigen::Index(k));
    return d;
  }

  // dx of minimum norm with Φ_I dx = b_I over the independent rows I (b: m values).
  Eigen::VectorXd solve(const Eigen::VectorXd& b) const {
    Eigen::VectorXd y = b;
    for (std::size_t k = 0; k < dependent_.size(); ++k)
      if (dependent_[k]) y[Eigen::Index(k)] = 0.0;
    y = independent_.solve(y);
    return J_.transpose() * y;
  }

 private:
  Sparse J_;
  Eigen::SimplicialLDLT<Sparse, Eigen::Lower, Eigen::AMDOrdering<int>> independent_;
  std::vector<char> dependent_;
  Eigen::Index rank_ = 0;
};

}  // namespace stride::mechanism
