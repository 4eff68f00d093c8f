// The run's own estimate of its coupling error, without a reference: the accuracy block of
// summary.json and the accuracy columns of the sweep tables. Internal to the host.
//
// Local coupling error of a connection at a communication point t (a push of the source's new
// sample y(t), when the reader has already stepped to t on the extrapolator's prediction û):
//
//   e(t) = max_i |y_i(t) - û_i(t)|        û from the samples before t, in the reader's units
//
// the error of the input the reader was given at the end of its macro step, i.e. the
// extrapolation error O(H^(P+1)) of a Lagrange predictor of order P. Over the run, per
// connection: the number of points, max e (and when), RMS e, and the signal's scale max |y|;
// relative values are against that scale. A push the reader has not reached yet (it will read
// the new sample, interpolated: Gauss–Seidel forward connections, the slow side of multirate
// slowest-first) is no prediction it used and is not counted. Iterative coupling: the
// prediction is pass 1's input, so e bounds what the converged passes left.
// Per paired power bond: the generalized energy residual (RunState::pairs) and its scale, the
// largest energy that crossed either side of the bond at a communication point.
//
// Cost: one evaluation of the extrapolator per push (none when the reader's last read was at t:
// the cached value), a few flops per element; nothing allocates after size_for().
//
// Call order: size_for(state) (RunState's constructor) -> { before_push(l, t) |
// reached(state) }* -> summary(state).
#pragma once

#include <cstddef>
#include <limits>
#include <vector>

#include "stride/plugin.hpp"

namespace stride::host {

struct LinkState;
struct RunState;

class CouplingErrors {
 public:
  struct Connection {
    long points = 0;
    double max = 0.0, sum_sq = 0.0, scale = 0.0;
    double max_at = std::numeric_limits<double>::quiet_NaN();
  };

  // Allocates for every connection and bond pair of the run.
  void size_for(const RunState& state);
  // Whether connections' errors are estimated (manifest /monitor/coupling_error); set before
  // the run. Off, before_push returns at once and the summary says they were not estimated.
  bool estimate = true;
  // Before l pushes the source's sample at t (the reader was given the prediction until now).
  // Calls the extrapolator: run it guarded. Defined inline in run_state.hpp (it reads
  // LinkState; every push runs it).
  void before_push(LinkState& l, double t, double eps);
  // At a communication point: the scale of each bond pair's residual.
  void reached(const RunState& state);

  const std::vector<Connection>& connections() const { return links_; }
  // summary.json's "accuracy": per connection and per paired bond, and the worst of each.
  json summary(const RunState& state) const;
  // The block as written (OutputFolder): its verdict and the RMS first.
  static nlohmann::ordered_json in_reading_order(const json& accuracy);

  // The estimate says the coupling error is of the order of the signal (status
  // "coupling_error_large" and a warning) when the RMS local error of a connection reaches
  // this fraction of its signal's largest magnitude. The estimate is 0.32-0.47 of the true
  // error for zero-order holds (README, Coupling accuracy without a reference), so 5 % stands
  // for a true error of 10-15 %: the two-mass test at O0, H = 0.1 s (RMS 0.060, true error 32 %
  // of its amplitude) is over it, the single crane's ZOH at its largest usable step of 10 ms
  // (RMS 0.0455, 0.81 mm off the monolithic s1) under it.
  static constexpr double kLargeRmsRelative = 0.05;

 private:
  std::vector<Connection> links_;
  std::vector<double> pair_scale_;
  std::vector<double> predicted_;  // the widest connection's prediction
};

}  // namespace stride::host
