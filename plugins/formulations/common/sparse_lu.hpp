// LU factorization of a sparse square matrix held in dense storage, for the iteration
// matrices of multibody formulations: M + h/2 C + h²/4 (K + Φ_qᵀ α Φ_q) couples only bodies
// joined by a joint or a force, so with a fill-reducing order (minimum degree on the pattern
// of A + Aᵀ) elimination touches a few small blocks per body instead of the whole matrix.
// Pivots are taken on the diagonal in that order (the matrices are dominated by a symmetric
// positive definite part); a pivot that has lost more than 10 digits to cancellation hands the
// factorization to dense partial pivoting instead. The pattern grows to cover every nonzero
// seen (a new one redoes the analysis). Only reset() allocates.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <Eigen/Dense>

namespace stride::formulations {

class SparseLU {
 public:
  void reset(Eigen::Index n) {
    n_ = n;
    words_ = std::size_t((n + 63) / 64);
    F_.setZero(n, n);
    outside_.setOnes(n, n);
    pattern_.assign(std::size_t(n) * words_, 0);
    graph_.assign(std::size_t(n) * words_, 0);
    order_.assign(std::size_t(n), 0);
    adj_start_.assign(std::size_t(n) + 1, 0);
    adj_.assign(std::size_t(n * n), 0);
    done_.assign(words_, 0);
    dense_lu_ = Eigen::PartialPivLU<Eigen::MatrixXd>(n);
    analyzed_ = false;
    dense_ = false;
  }

  // Factorizes A; false when A is singular (a zero or non-finite pivot under dense pivoting).
  bool compute(const Eigen::MatrixXd& A) {
    bool grown = !analyzed_;
    // A nonzero outside the pattern (or a NaN) makes this sum nonzero; then find it.
    if (!(A.cwiseProduct(outside_).cwiseAbs().sum() == 0.0)) {
      for (Eigen::Index j = 0; j < n_; ++j)  // column j's nonzeros against row j of the symmetric pattern
        for (std::size_t w = 0; w < words_; ++w) {
          const Eigen::Index i0 = Eigen::Index(64 * w), i1 = std::min(n_, i0 + 64);
          std::uint64_t nz = 0;
          for (Eigen::Index i = i0; i < i1; ++i) nz |= std::uint64_t(A(i, j) != 0.0) << (i - i0);
          std::uint64_t missing = nz & ~pattern_[std::size_t(j) * words_ + w];
          for (; missing; missing &= missing - 1) {
            const Eigen::Index i = i0 + __builtin_ctzll(missing);
            set(pattern_, i, j), set(pattern_, j, i);
            outside_(i, j) = outside_(j, i) = 0.0;
            grown = true;
          }
        }
    }
    if (grown) analyze();
    F_ = A;
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
    for (Eigen::Index k = 0; k < n_; ++k) {  // L y = x (unit diagonal)
      const Eigen::Index p = order_[std::size_t(k)];
      const double xp = x[p];
      if (xp != 0.0)
        for (std::size_t a = adj_start_[std::size_t(k)]; a < adj_start_[std::size_t(k) + 1]; ++a) x[adj_[a]] -= F_(adj_[a], p) * xp;
    }
    for (Eigen::Index k = n_ - 1; k >= 0; --k) {  // U z = y
      const Eigen::Index p = order_[std::size_t(k)];
      double xp = x[p];
      for (std::size_t a = adj_start_[std::size_t(k)]; a < adj_start_[std::size_t(k) + 1]; ++a) xp -= F_(p, adj_[a]) * x[adj_[a]];
      x[p] = xp / F_(p, p);
    }
  }

 private:
  bool test(const std::vector<std::uint64_t>& g, Eigen::Index i, Eigen::Index j) const {
    return (g[std::size_t(i) * words_ + std::size_t(j / 64)] >> (j % 64)) & 1u;
  }
  void set(std::vector<std::uint64_t>& g, Eigen::Index i, Eigen::Index j) {
    g[std::size_t(i) * words_ + std::size_t(j / 64)] |= std::uint64_t(1) << (j % 64);
  }

  // Minimum-degree order on the symmetric pattern and the filled pattern: adj_ of step k lists
  // the nodes not yet eliminated that are joined to order_[k] (its L column and U row).
  void analyze() {
    graph_ = pattern_;
    std::fill(done_.begin(), done_.end(), 0);
    std::size_t a = 0;
    for (Eigen::Index k = 0; k < n_; ++k) {
      Eigen::Index best = -1;
      long best_degree = 0;
      for (Eigen::Index i = 0; i < n_; ++i) {
        if ((done_[std::size_t(i / 64)] >> (i % 64)) & 1u) continue;
        long d = 0;
        for (std::size_t w = 0; w < words_; ++w) d += __builtin_popcountll(graph_[std::size_t(i) * words_ + w] & ~done_[w]);
        if (best < 0 || d < best_degree) best = i, best_degree = d;
      }
      order_[std::size_t(k)] = best;
      done_[std::size_t(best / 64)] |= std::uint64_t(1) << (best % 64);
      adj_start_[std::size_t(k)] = a;
      const std::size_t first = a;
      for (Eigen::Index i = 0; i < n_; ++i)
        if (i != best && test(graph_, best, i) && !((done_[std::size_t(i / 64)] >> (i % 64)) & 1u)) adj_[a++] = i;
      for (std::size_t x = first; x < a; ++x)  // the neighbours become a clique
        for (std::size_t w = 0; w < words_; ++w) graph_[std::size_t(adj_[x]) * words_ + w] |= graph_[std::size_t(best) * words_ + w];
    }
    adj_start_[std::size_t(n_)] = a;
    analyzed_ = true;
  }

  // In-place elimination of F_ = A in order_; false when a pivot lost more than 10 digits
  // against A's diagonal entry or is that small against the rest of its row.
  bool eliminate(const Eigen::MatrixXd& A) {
    for (Eigen::Index k = 0; k < n_; ++k) {
      const Eigen::Index p = order_[std::size_t(k)];
      const std::size_t b = adj_start_[std::size_t(k)], e = adj_start_[std::size_t(k) + 1];
      const double piv = F_(p, p);
      double scale = std::abs(A(p, p));
      for (std::size_t a = b; a < e; ++a) scale = std::max(scale, std::abs(F_(p, adj_[a])));
      if (!(std::abs(piv) > 1e-10 * scale) || !std::isfinite(piv)) return false;
      const double inv = 1.0 / piv;
      for (std::size_t a = b; a < e; ++a) F_(adj_[a], p) *= inv;
      for (std::size_t c = b; c < e; ++c) {
        const Eigen::Index j = adj_[c];
        const double u = F_(p, j);
        if (u == 0.0) continue;
        for (std::size_t a = b; a < e; ++a) F_(adj_[a], j) -= F_(adj_[a], p) * u;
      }
    }
    return true;
  }

  Eigen::Index n_ = 0;
  std::size_t words_ = 0;
  Eigen::MatrixXd F_;                          // L (below the diagonal in order) and U
  Eigen::MatrixXd outside_;                    // 1 where the pattern has no entry, else 0
  std::vector<std::uint64_t> pattern_, graph_, done_;  // bit rows
  std::vector<Eigen::Index> order_, adj_;
  std::vector<std::size_t> adj_start_;
  Eigen::PartialPivLU<Eigen::MatrixXd> dense_lu_;
  bool analyzed_ = false, dense_ = false;
};

}  // namespace stride::formulations
