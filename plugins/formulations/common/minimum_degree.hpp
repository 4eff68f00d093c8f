// Fill-reducing elimination order of a symmetric sparsity pattern (minimum degree) and the
// filled pattern it leads to, for the sparse factorizations of the formulations (SparseLU,
// SparseCholesky): the pattern grows as nonzeros are seen (add()), analyze() orders it again.
//   repeat n times: take the node not yet eliminated with the fewest neighbours not yet
//   eliminated; those neighbours (its L column and U row) become a clique.
// Only reset() allocates.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <vector>

#include <Eigen/Dense>

namespace stride::formulations {

// The entries a sparsity pattern leaves out, as a 0/1 mask: a matrix has a nonzero (or a NaN)
// outside the pattern exactly when its masked sum is not zero, so the check on every
// factorization is one vectorized pass; the pattern only grows.
class PatternMask {
 public:
  void reset(Eigen::Index rows, Eigen::Index cols) { outside_.setOnes(rows, cols); }
  bool covers(const Eigen::MatrixXd& A) const { return A.cwiseProduct(outside_).cwiseAbs().sum() == 0.0; }
  bool contains(Eigen::Index i, Eigen::Index j) const { return outside_(i, j) == 0.0; }
  void add(Eigen::Index i, Eigen::Index j) { outside_(i, j) = 0.0; }

 private:
  Eigen::MatrixXd outside_;
};

class MinimumDegreeOrder {
 public:
  void reset(Eigen::Index n) {
    n_ = n;
    words_ = std::size_t((n + 63) / 64);
    pattern_.assign(std::size_t(n) * words_, 0);
    graph_.assign(std::size_t(n) * words_, 0);
    done_.assign(words_, 0);
    order_.assign(std::size_t(n), 0);
    adj_start_.assign(std::size_t(n) + 1, 0);
    adj_.assign(std::size_t(n * n), 0);
    analyzed_ = false;
  }

  Eigen::Index size() const { return n_; }
  std::size_t words() const { return words_; }
  bool analyzed() const { return analyzed_; }
  // Bits i0 … i0 + 63 of row j of the pattern (word w: i0 = 64 w).
  std::uint64_t pattern_word(Eigen::Index j, std::size_t w) const { return pattern_[std::size_t(j) * words_ + w]; }
  bool contains(Eigen::Index i, Eigen::Index j) const { return test(pattern_, i, j); }
  // Adds (i, j) and (j, i) to the pattern; the order is stale until analyze().
  void add(Eigen::Index i, Eigen::Index j) {
    set(pattern_, i, j), set(pattern_, j, i);
    analyzed_ = false;
  }

  // The k-th pivot, and its neighbours in the filled pattern eliminated after it (ascending).
  Eigen::Index pivot(Eigen::Index k) const { return order_[std::size_t(k)]; }
  std::span<const Eigen::Index> later(Eigen::Index k) const {
    return {adj_.data() + adj_start_[std::size_t(k)], adj_start_[std::size_t(k) + 1] - adj_start_[std::size_t(k)]};
  }
  std::size_t later_start(Eigen::Index k) const {
    return adj_start_[std::size_t(k)];
  }  // into a list of all later() in order

  void analyze() {
    graph_ = pattern_;
    std::fill(done_.begin(), done_.end(), 0);
    std::size_t a = 0;
    for (Eigen::Index k = 0; k < n_; ++k) {
      Eigen::Index best = -1;
      long best_degree = 0;
      for (Eigen::Index i = 0; i < n_; ++i) {
        if (eliminated(i)) continue;
        long d = 0;
        for (std::size_t w = 0; w < words_; ++w)
          d += __builtin_popcountll(graph_[std::size_t(i) * words_ + w] & ~done_[w]);
        if (best < 0 || d < best_degree) best = i, best_degree = d;
      }
      order_[std::size_t(k)] = best;
      done_[std::size_t(best / 64)] |= std::uint64_t(1) << (best % 64);
      adj_start_[std::size_t(k)] = a;
      const std::size_t first = a;
      for (Eigen::Index i = 0; i < n_; ++i)
        if (i != best && test(graph_, best, i) && !eliminated(i)) adj_[a++] = i;
      for (std::size_t x = first; x < a; ++x)  // the neighbours become a clique
        for (std::size_t w = 0; w < words_; ++w)
          graph_[std::size_t(adj_[x]) * words_ + w] |= graph_[std::size_t(best) * words_ + w];
    }
    adj_start_[std::size_t(n_)] = a;
    analyzed_ = true;
  }

 private:
  bool eliminated(Eigen::Index i) const { return (done_[std::size_t(i / 64)] >> (i % 64)) & 1u; }
  bool test(const std::vector<std::uint64_t>& g, Eigen::Index i, Eigen::Index j) const {
    return (g[std::size_t(i) * words_ + std::size_t(j / 64)] >> (j % 64)) & 1u;
  }
  void set(std::vector<std::uint64_t>& g, Eigen::Index i, Eigen::Index j) {
    g[std::size_t(i) * words_ + std::size_t(j / 64)] |= std::uint64_t(1) << (j % 64);
  }

  Eigen::Index n_ = 0;
  std::size_t words_ = 0;
  std::vector<std::uint64_t> pattern_, graph_, done_;  // bit rows
  std::vector<Eigen::Index> order_, adj_;
  std::vector<std::size_t> adj_start_;
  bool analyzed_ = false;
};

}  // namespace stride::formulations
