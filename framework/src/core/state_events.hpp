// Locating state events, for every subsystem that integrates its own states with event
// indicators (an ODE subsystem's OdeSystem, a model-exchange FMU): one rule for when an
// indicator has crossed, one tolerance, one bisection (Drake's IsolateWitnessTriggers).
// Allocates nothing: the caller owns every vector.
#pragma once

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

namespace stride::host {

// Event times are located to this fraction of max(1, |t|) seconds.
constexpr double kEventTimeTolerance = 1e-12;
inline double event_time_tolerance(double t) { return kEventTimeTolerance * std::max(1.0, std::abs(t)); }

// An indicator changed domain between z > 0 and z <= 0 (FMI 2 §3.1) from `before` to `after`.
inline bool indicators_crossed(std::span<const double> before, std::span<const double> after) {
  for (std::size_t i = 0; i < before.size(); ++i)
    if ((before[i] > 0) != (after[i] > 0)) return true;
  return false;
}

// The first state event in (t0, t1] by bisection on its time. On entry `x` holds the state at
// t1, where the indicators `z0` (those at t0) have crossed, and `x0` the state at t0.
// `trial(t)` integrates `x` (set to `x0` before each call) from t0 towards t, writes the
// indicators at the time it reached into `z` and returns that time. Returns the earliest time
// found past the event and leaves `x` there; `far` is scratch of x's size; `trials` counts the
// calls. Stops early when the integrator cannot land closer than it did.
template <class Trial>
double locate_state_event(double t0, double t1, std::span<const double> z0, std::span<double> z, std::vector<double>& x,
                          const std::vector<double>& x0, std::vector<double>& far, long& trials, Trial&& trial) {
  double lo = t0, hi = t1;
  std::copy(x.begin(), x.end(), far.begin());
  const double tol = event_time_tolerance(t0);
  while (hi - lo > tol) {
    const double mid = 0.5 * (lo + hi);
    std::copy(x0.begin(), x0.end(), x.begin());
    const double reached = trial(mid);
    ++trials;
    if (indicators_crossed(z0, z)) {
      hi = reached;
      std::copy(x.begin(), x.end(), far.begin());
    } else {
      lo = reached;
    }
    if (reached <= lo && reached < mid) break;  // the integrator cannot reach closer
  }
  std::copy(far.begin(), far.end(), x.begin());
  return hi;
}

}  // namespace stride::host
