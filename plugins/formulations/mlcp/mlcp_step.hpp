// What one step of the `mlcp` formulation does the same way whatever its linear algebra (dense
// in mlcp.cpp, condensed in condensed_mlcp.hpp): the rows' regularization, the solve with its
// residual check and fallback, the active set of the interface model and the counters the
// formulation reports.
#pragma once

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include <stride/nonsmooth.hpp>

#include "../../common/mlcp_solvers.hpp"

namespace stride::formulations {

// Regularization of one row (stride/nonsmooth.hpp): compliance C = 1/(h² k (1 + τ/h)).
inline double row_compliance(double h, double stiffness, double relaxation) {
  return 1.0 / (h * h * stiffness * (1.0 + relaxation / h));
}

// C and φ of the contact rows for step h, at [offset, offset + rows) of C and phi: normal rows
// φ = g/h while open (speculative contact), g/(h + τ) while closed; friction rows φ = 0.
inline void contact_regularization(const std::vector<ContactRow>& rows, const Eigen::VectorXd& gap, double h,
                                   Eigen::Index offset, Eigen::VectorXd& C, Eigen::VectorXd& phi) {
  for (Eigen::Index k = 0; k < Eigen::Index(rows.size()); ++k) {
    const ContactRow& row = rows[std::size_t(k)];
    C[offset + k] = row_compliance(h, row.stiffness, row.relaxation);
    if (row.kind == ContactKind::normal) phi[offset + k] = gap[k] > 0.0 ? gap[k] / h : gap[k] / (h + row.relaxation);
    else phi[offset + k] = 0.0;
  }
}

// A model's contact rows as the formulation needs them: friction rows name a normal row,
// regularization positive.
inline void check_contact_rows(const std::vector<ContactRow>& rows) {
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const ContactRow& row = rows[k];
    if (row.kind == ContactKind::friction &&
        (row.normal >= rows.size() || rows[row.normal].kind != ContactKind::normal))
      throw std::invalid_argument("mlcp: friction row " + std::to_string(k) + " refers to row " +
                                  std::to_string(row.normal) + ", which is not a normal contact row");
    if (!(row.stiffness > 0.0) || !(row.relaxation >= 0.0))
      throw std::invalid_argument("mlcp: contact row " + std::to_string(k) +
                                  " needs stiffness > 0 and relaxation >= 0");
  }
}

// Row status for the interface model: strictly inside its bounds (active), or at one — when
// moving λ there changes the row's velocity (diagonal d) by less than tol.
enum class RowStatus : signed char { free, lower, upper };
inline RowStatus row_status(double lambda, double lo, double hi, double d, double tol) {
  if (d * (lambda - lo) <= tol) return RowStatus::lower;
  if (d * (hi - lambda) <= tol) return RowStatus::upper;
  return RowStatus::free;
}

// The solve of each step and its counters over the run.
struct MlcpSolve {
  bool direct_first = false, coupled = false;
  long sweeps = 500, pivots = 200;
  double tol = 1e-10;
  long sweeps_total = 0, pivots_total = 0, fallbacks = 0, failed = 0;
  double max_residual = 0.0, last_residual = 0.0, max_penetration = 0.0;

  void reset_counters() {
    sweeps_total = pivots_total = fallbacks = failed = 0;
    max_residual = last_residual = max_penetration = 0.0;
  }

  // λ for P from the warm start, `check()` the residual of λ from the physics: the direct
  // solver (block pivoting, coupled or with the fixed-point loop on the friction bounds) and
  // PGS (with subspace steps when coupled) in the order of the settings, the second when the
  // first misses tol. Both missing is counted and throws StepFailure naming both residuals.
  // Returns the first solver's iterations (pivots or sweeps) of this step.
  template <class Check>
  long solve(const mlcp::Problem& P, Eigen::VectorXd& lambda, const Eigen::VectorXd& warm, Eigen::VectorXd& iterate,
             mlcp::Pgs& pgs, mlcp::Bpp& bpp, double t, Check&& check) {
    double residual = mlcp::inf, residuals[2] = {mlcp::inf, mlcp::inf};
    long swept = 0, pivoted = 0;
    bool solved = false;
    for (int attempt = 0; attempt < 2 && !solved; ++attempt) {
      if (attempt > 0) ++fallbacks;
      lambda = warm;
      const bool direct = (attempt == 0) == direct_first;
      if (direct) {
        long pv = 0;
        if (coupled) bpp.solve_coupled(P, lambda, pivots, 0.1 * tol, pv);
        else bpp.solve(P, lambda, pivots, 0.1 * tol, pv);
        pivoted += pv;
        residual = residuals[0] = check();
      } else if (coupled) {
        mlcp::pgs_with_subspace_steps(P, lambda, iterate, pgs, bpp, sweeps, tol, swept, pivoted, residuals[1], check);
        residual = residuals[1];
      } else {
        swept += pgs.solve(P, lambda, sweeps, 0.1 * tol);
        residual = residuals[1] = check();
      }
      solved = residual <= tol;
    }
    sweeps_total += swept;
    pivots_total += pivoted;
    if (!solved) {
      ++failed;
      max_residual = std::max(max_residual, std::min(residuals[0], residuals[1]));
      char msg[320];
      std::snprintf(
          msg, sizeof msg,
          "mlcp: no solver met the residual tolerance %.3g m/s at t = %.9g s (bpp: residual %.3g m/s after %ld "
          "pivots; pgs: %.3g m/s after %ld sweeps)",
          tol, t, residuals[0], pivoted, residuals[1], swept);
      throw StepFailure(msg);
    }
    last_residual = residual;
    max_residual = std::max(max_residual, residual);
    return direct_first ? pivoted : swept;
  }

  void to_json(json& s, Eigen::Index contact_rows, Eigen::Index active_contact_rows) const {
    s["solver"] = coupled ? "bpp_coupled" : direct_first ? "bpp" : "pgs";
    s["pgs_sweeps"] = sweeps_total;
    s["bpp_pivots"] = pivots_total;
    s["fallbacks"] = fallbacks;
    s["failed_solves"] = failed;
    s["max_residual"] = max_residual;
    s["last_residual"] = last_residual;
    s["contact_rows"] = contact_rows;
    s["active_contact_rows"] = active_contact_rows;
    s["max_penetration"] = max_penetration;
  }
};

}  // namespace stride::formulations
