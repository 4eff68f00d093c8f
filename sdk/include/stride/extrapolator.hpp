// Produces a connection's input values between the source's communication points.
#pragma once

#include "stride/plugin.hpp"

namespace stride {

// The steps of the two subsystems a connection joins, in s (ExtrapolatorTiming::macro_step is
// the manifest's communication step).
struct ExtrapolatorTiming {
  double source_step = 0;  // the source pushes a sample after each of its steps
  double reader_step = 0;  // the reader evaluates inside each of its steps
  double macro_step = 0;
};

// Call order: timing(steps) -> { reset(width) -> push(t0, y0) -> { push(t, y) | evaluate(t, u) }* }+
//  - timing() once, before anything else; reset() again whenever the host restarts the
//    connection (consistent initialization may restart it at t0 with new initial outputs).
//  - width: the number of values per sample, the same for y and u; every span has this size.
//  - The host pushes the source's initial outputs right after every reset(), so evaluate()
//    never comes before a push.
//  - push(): each new output sample of the source, t strictly increasing; y is the source's
//    output (units converted already). The span is valid only during the call: copy it.
//  - evaluate(t): the value at t, interpolated where samples newer than t exist, extrapolated
//    beyond the newest one. The host asks only for t >= the time of the second-newest sample
//    (within round-off of a step), with one exception: under multirate fastest-first a
//    reader slower than the source steps after the source went through its whole step, so
//    it asks back to its step's start, up to reader_step / source_step samples before the
//    newest (timing()). An extrapolator of order k keeps k + 1 samples more than that, one
//    that interpolates one more; the shipped ones keep a "history" of samples and stop the
//    run with an error when asked for a time whose samples they no longer have. Times may
//    repeat and go backwards between those bounds (several readers' stages, a repeated step).
//  - evaluate() must depend only on the samples pushed and on t: the host reuses its value for
//    repeated reads at the same time.
//  - reset() and timing() may allocate; push and evaluate must not (they run at every step).
//  - One extrapolator object serves one connection; the host calls it from one thread at a time.
class Extrapolator : public LogSource {
 public:
  virtual void timing(const ExtrapolatorTiming& /*steps*/) {}
  virtual void reset(std::size_t width) = 0;
  virtual void push(double t, std::span<const double> y) = 0;
  virtual void evaluate(double t, std::span<double> u) const = 0;
  // The time from which evaluate() returns the newest sample unchanged, for every later t,
  // until the next push (a hold); +infinity when it never does. The host then evaluates
  // once per push instead of once per read.
  virtual double holds_from() const { return std::numeric_limits<double>::infinity(); }
};

}  // namespace stride
