// Solvers for the box-bounded mixed linear complementarity problem of the nonsmooth multibody
// step (BENCHMARKS.md §6), shared by the "mlcp" formulation and the tests:
//   w = H λ + b,  lo_k ≤ λ_k ≤ hi_k,  λ_k = lo_k ⇒ w_k ≥ 0,  λ_k = hi_k ⇒ w_k ≤ 0,
//   lo_k < λ_k < hi_k ⇒ w_k = 0,
// where a row k with coupled[k] = j ≥ 0 (friction) has lo_k = −mu_k λ_j, hi_k = mu_k λ_j (the
// bounds follow the normal impulse λ_j). H is symmetric positive definite (A M⁻¹ Aᵀ + C, C > 0).
//
// Call order: Problem::resize(r) and Solver::reset(r) once (they allocate), then solve() any
// number of times on problems of that size (no allocation).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <Eigen/Dense>

namespace stride::mlcp {

inline constexpr double inf = std::numeric_limits<double>::infinity();

struct Problem {
  Eigen::MatrixXd H;
  Eigen::VectorXd b, lo, hi, mu;  // lo, hi: bounds of the uncoupled rows; mu: coupled rows
  std::vector<int> coupled;       // −1, or the row whose λ bounds this one

  void resize(Eigen::Index r) {
    H.setZero(r, r);
    b.setZero(r);
    lo.setConstant(r, -inf);
    hi.setConstant(r, inf);
    mu.setZero(r);
    coupled.assign(std::size_t(r), -1);
  }
  Eigen::Index rows() const { return b.size(); }
  // The bounds of row k for the impulses λ.
  double lower(Eigen::Index k, const Eigen::VectorXd& lambda) const {
    const int j = coupled[std::size_t(k)];
    return j < 0 ? lo[k] : -mu[k] * std::max(0.0, lambda[j]);
  }
  double upper(Eigen::Index k, const Eigen::VectorXd& lambda) const {
    const int j = coupled[std::size_t(k)];
    return j < 0 ? hi[k] : mu[k] * std::max(0.0, lambda[j]);
  }
};

// Natural-map residual in the units of w: max_k H_kk |λ_k − clamp(λ_k − w_k / H_kk, lo_k, hi_k)|.
// It is zero exactly at a solution and measures bound violations and complementarity violations
// alike. w and the diagonal are passed in so that callers can compute w from the physics
// (w = A v⁺ + C λ̂ + φ) rather than from the solver's own H and b.
inline double natural_residual(const Problem& P, const Eigen::VectorXd& lambda, const Eigen::VectorXd& w,
                               const Eigen::VectorXd& diag) {
  double r = 0.0;
  for (Eigen::Index k = 0; k < lambda.size(); ++k) {
    const double d = diag[k];
    const double proj =
        std::clamp(lambda[k] - w[k] / d, P.lower(k, lambda), std::max(P.lower(k, lambda), P.upper(k, lambda)));
    r = std::max(r, d * std::abs(lambda[k] - proj));
  }
  return std::isfinite(r) ? r : inf;
}

// Residual of λ for the problem itself (w = H λ + b).
class Residual {
 public:
  void reset(Eigen::Index r) {
    w_.setZero(r);
    d_.setZero(r);
  }
  double operator()(const Problem& P, const Eigen::VectorXd& lambda) {
    w_.noalias() = P.H * lambda;
    w_ += P.b;
    d_ = P.H.diagonal();
    return natural_residual(P, lambda, w_, d_);
  }

 private:
  Eigen::VectorXd w_, d_;
};

// Projected Gauss–Seidel: λ_k ← clamp(λ_k − w_k / H_kk, lo_k(λ), hi_k(λ)) row by row, with the
// friction bounds taken from the current normal impulses. λ holds the warm start on entry.
// Stops when the largest change of a row's velocity, H_kk |Δλ_k|, is below tol in one sweep.
class Pgs {
 public:
  void reset(Eigen::Index) {}
  // Returns the number of sweeps done; converged() tells whether the last call met tol.
  long solve(const Problem& P, Eigen::VectorXd& lambda, long max_sweeps, double tol) {
    const Eigen::Index r = P.rows();
    converged_ = false;
    long sweeps = 0;
    while (sweeps < max_sweeps) {
      ++sweeps;
      double change = 0.0;
      for (Eigen::Index k = 0; k < r; ++k) {
        const double d = P.H(k, k);
        const double w = P.H.row(k).dot(lambda) + P.b[k];
        const double lo = P.lower(k, lambda), hi = std::max(lo, P.upper(k, lambda));
        const double next = std::clamp(lambda[k] - w / d, lo, hi);
        change = std::max(change, d * std::abs(next - lambda[k]));
        lambda[k] = next;
      }
      if (!std::isfinite(change)) return sweeps;
      if (change <= tol) {
        converged_ = true;
        break;
      }
    }
    return sweeps;
  }
  bool converged() const { return converged_; }

 private:
  bool converged_ = false;
};

// Direct solver: block principal pivoting for the box LCP (Júdice and Pires 1994) with fixed
// bounds, falling back to Murty's single least-index pivot when the number of infeasible rows
// stops decreasing (finite for positive definite H); an outer fixed-point loop updates the
// friction bounds from the normal impulses until they stop changing. Each pivot solves the
// free block H_FF λ_F = −b_F − H_FB λ_B by LDLT of H with the bounded rows replaced by
// identity rows (same size every time, so nothing allocates).
class Bpp {
 public:
  void reset(Eigen::Index r) {
    state_.assign(std::size_t(r), State::free);
    lu_ = Eigen::PartialPivLU<Eigen::MatrixXd>(r);
    K_.setZero(r, r);
    rhs_.setZero(r);
    w_.setZero(r);
    lo_.setZero(r);
    hi_.setZero(r);
    x_.setZero(r);
    ldlt_ = Eigen::LDLT<Eigen::MatrixXd>(r);
  }

  // λ: warm start on entry (it chooses the initial index sets), solution on exit.
  // Returns true when both loops converged; pivots counts the linear solves.
  bool solve(const Problem& P, Eigen::VectorXd& lambda, long max_pivots, double tol, long& pivots) {
    const Eigen::Index r = P.rows();
    pivots = 0;
    for (int outer = 0; outer < 100; ++outer) {
      for (Eigen::Index k = 0; k < r; ++k) {
        lo_[k] = P.lower(k, lambda);
        hi_[k] = std::max(lo_[k], P.upper(k, lambda));
      }
      if (!solve_box(P, lambda, max_pivots, tol, pivots)) return false;
      bool steady = true;
      for (Eigen::Index k = 0; k < r && steady; ++k) {
        if (P.coupled[std::size_t(k)] < 0) continue;
        const double d = P.H(k, k);
        steady = d * std::abs(P.lower(k, lambda) - lo_[k]) <= tol && d * std::abs(P.upper(k, lambda) - hi_[k]) <= tol;
      }
      if (steady) return true;
    }
    return false;
  }

 private:
  enum class State : signed char { free, lower, upper };

  bool solve_box(const Problem& P, Eigen::VectorXd& lambda, long max_pivots, double tol, long& pivots) {
    const Eigen::Index r = P.rows();
    for (Eigen::Index k = 0; k < r; ++k) {
      auto& s = state_[std::size_t(k)];
      if (lo_[k] == hi_[k] || lambda[k] <= lo_[k]) s = State::lower;
      else if (lambda[k] >= hi_[k]) s = State::upper;
      else s = State::free;
    }
    Eigen::Index best = r + 1;
    int stalled = 0;
    while (pivots < max_pivots) {
      ++pivots;
      // λ_B at their bounds, then the free block.
      for (Eigen::Index k = 0; k < r; ++k) {
        const State s = state_[std::size_t(k)];
        x_[k] = s == State::lower ? lo_[k] : s == State::upper ? hi_[k] : 0.0;
      }
      rhs_.noalias() = P.H * x_;
      for (Eigen::Index k = 0; k < r; ++k) {
        if (state_[std::size_t(k)] == State::free) {
          rhs_[k] = -P.b[k] - rhs_[k];
          for (Eigen::Index l = 0; l < r; ++l)
            K_(k, l) = state_[std::size_t(l)] == State::free ? P.H(k, l) : 0.0;
        } else {
          rhs_[k] = x_[k];
          K_.row(k).setZero();
          K_.col(k).setZero();
          K_(k, k) = 1.0;
        }
      }
      ldlt_.compute(K_);
      if (ldlt_.info() != Eigen::Success) return false;
      lambda = ldlt_.solve(rhs_);
      if (!lambda.allFinite()) return false;
      w_.noalias() = P.H * lambda;
      w_ += P.b;
      if (exchange(P, lambda, tol, best, stalled)) return true;
    }
    return false;
  }

 public:
  // Variant with the friction bounds inside the pivoting (no outer loop): a friction row at a
  // bound is the linear relation λ_k = ∓μ_k λ_j to its normal row j in each linear solve, so
  // the bounds move with the normal impulses they follow. The free rows are H_k λ = −b_k, the
  // other bounded rows λ_k = bound; the system is not symmetric (LU). Block pivoting on the
  // infeasible rows, Murty's single least-index pivot when their number stops decreasing.
  // Where friction and normal impulses interact strongly (a log squeezed by many sticking jaw
  // contacts) the fixed-point loop of solve() converges slowly; this one has no such loop.
  bool solve_coupled(const Problem& P, Eigen::VectorXd& lambda, long max_pivots, double tol, long& pivots) {
    const Eigen::Index r = P.rows();
    pivots = 0;
    for (Eigen::Index k = 0; k < r; ++k) {
      const double lo = P.lower(k, lambda), hi = std::max(lo, P.upper(k, lambda));
      auto& s = state_[std::size_t(k)];
      s = lo == hi || lambda[k] <= lo ? State::lower : lambda[k] >= hi ? State::upper : State::free;
    }
    Eigen::Index best = r + 1;
    int stalled = 0;
    while (pivots < max_pivots) {
      ++pivots;
      K_.setZero();
      for (Eigen::Index k = 0; k < r; ++k) {
        const State s = state_[std::size_t(k)];
        const int j = P.coupled[std::size_t(k)];
        if (s == State::free) {
          K_.row(k) = P.H.row(k);
          rhs_[k] = -P.b[k];
        } else if (j < 0) {
          K_(k, k) = 1.0;
          rhs_[k] = s == State::lower ? P.lo[k] : P.hi[k];
        } else {  // λ_k ∓ μ λ_j = 0
          K_(k, k) = 1.0;
          K_(k, j) = s == State::lower ? P.mu[k] : -P.mu[k];
          rhs_[k] = 0.0;
        }
      }
      lu_.compute(K_);
      lambda = lu_.solve(rhs_);
      if (!lambda.allFinite()) return false;
      w_.noalias() = P.H * lambda;
      w_ += P.b;
      for (Eigen::Index k = 0; k < r; ++k) {
        lo_[k] = P.lower(k, lambda);
        hi_[k] = std::max(lo_[k], P.upper(k, lambda));
      }
      if (exchange(P, lambda, tol, best, stalled)) return true;
    }
    return false;
  }

 private:
  // One exchange of the index sets after a linear solve (w_ current): none infeasible (rows
  // free outside their bounds, bounded ones with w of the wrong sign) is a solution; else flip
  // them all while their number decreases, then only the largest index (Murty).
  bool exchange(const Problem& P, const Eigen::VectorXd& lambda, double tol, Eigen::Index& best, int& stalled) {
    Eigen::Index count = 0, last = -1;
    for (Eigen::Index k = 0; k < P.rows(); ++k)
      if (infeasible(k, lambda, P.H(k, k), tol)) ++count, last = k;
    if (count == 0) return true;
    if (count < best) {
      best = count;
      stalled = 0;
    } else {
      ++stalled;
    }
    if (stalled < 3) {
      for (Eigen::Index k = 0; k < P.rows(); ++k)
        if (infeasible(k, lambda, P.H(k, k), tol)) flip(k, lambda);
    } else {
      flip(last, lambda);
    }
    return false;
  }

  bool infeasible(Eigen::Index k, const Eigen::VectorXd& lambda, double d, double tol) const {
    switch (state_[std::size_t(k)]) {
      case State::free: return d * (lo_[k] - lambda[k]) > tol || d * (lambda[k] - hi_[k]) > tol;
      case State::lower: return lo_[k] < hi_[k] && w_[k] < -tol;
      case State::upper: return w_[k] > tol;
    }
    return false;
  }

  void flip(Eigen::Index k, const Eigen::VectorXd& lambda) {
    auto& s = state_[std::size_t(k)];
    if (s == State::free) s = lambda[k] < lo_[k] ? State::lower : State::upper;
    else s = State::free;
  }

  std::vector<State> state_;
  Eigen::MatrixXd K_;
  Eigen::VectorXd rhs_, w_, lo_, hi_, x_;
  Eigen::LDLT<Eigen::MatrixXd> ldlt_;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu_;
};

// Projected Gauss–Seidel with subspace steps (Silcowitz, Niebe and Erleben 2010): rounds of a
// few PGS sweeps, each followed by the coupled pivoting started from the PGS iterate, whose
// index sets are then nearly right, so a few linear solves finish exactly; a round whose
// pivoting fails continues PGS from its own iterate. `residual()` checks the current λ (the
// caller's residual from the physics); `iterate` is work memory of λ's size. At most
// max_sweeps sweeps in all. Returns whether residual() met tol.
template <class Residual>
bool pgs_with_subspace_steps(const Problem& P, Eigen::VectorXd& lambda, Eigen::VectorXd& iterate, Pgs& pgs, Bpp& bpp,
                             long max_sweeps, double tol, long& sweeps, long& pivots, double& residual_out,
                             Residual&& residual) {
  constexpr long kSweepsPerRound = 25, kPivotsPerRound = 10;
  double res = inf;
  long done = 0;
  while (done < max_sweeps) {
    done += pgs.solve(P, lambda, std::min(kSweepsPerRound, max_sweeps - done), 0.1 * tol);
    iterate = lambda;
    if (pgs.converged() && (res = residual()) <= tol) break;
    long pv = 0;
    bpp.solve_coupled(P, lambda, kPivotsPerRound, 0.1 * tol, pv);
    pivots += pv;
    if ((res = residual()) <= tol) break;
    lambda = iterate;
    res = inf;
  }
  sweeps += done;
  if (!(res <= tol)) res = residual();
  residual_out = res;
  return res <= tol;
}

}  // namespace stride::mlcp
