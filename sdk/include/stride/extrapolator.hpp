// Produces a connection's input values between the source's communication points.
#pragma once

#include "stride/plugin.hpp"

namespace stride {

// Call order: reset(width) -> { push(t, y) | evaluate(t, u) }*.
// push() receives each new output sample of the source with strictly increasing t;
// evaluate() returns the value at any t: interpolated where samples newer than t exist,
// extrapolated beyond the newest one. reset() allocates; push and evaluate must not.
// evaluate() must depend only on the samples pushed and on t: the host reuses its value for
// repeated reads at the same time.
class Extrapolator : public LogSource {
 public:
  virtual void reset(std::size_t width) = 0;
  virtual void push(double t, std::span<const double> y) = 0;
  virtual void evaluate(double t, std::span<double> u) const = 0;
  // The time from which evaluate() returns the newest sample unchanged, for every later t,
  // until the next push (a hold); +infinity when it never does. The host then evaluates
  // once per push instead of once per read.
  virtual double holds_from() const { return std::numeric_limits<double>::infinity(); }
};

}  // namespace stride
