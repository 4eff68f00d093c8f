// Lagrange-polynomial extrapolator of a fixed order over a SampleHistory; the body of the
// lagrange and linear plugins (which differ only in how the order is chosen).
// Call order (stride::Extrapolator): reset(width) -> { push(t, y) | evaluate(t, u) }*.
#pragma once

#include <algorithm>

#include <stride/stride.hpp>

#include "sample_history.hpp"

namespace stride_extrapolation {

// Samples kept by default. The consumer may evaluate far behind the newest sample (a slow
// subsystem under a fastest-first scheme sees the fast source up to one slow step ahead), and
// the interpolation rule needs the samples around t, so the history covers many source steps.
inline constexpr long default_history = 256;
// At most a million samples per element: the memory a manifest can ask for stays bounded and
// is refused by `validate`, not by an allocation failure at run time.
inline constexpr double max_history = 1e6;

inline stride::ParamSpec history_param() {
  return stride::integer_param("history", default_history,
                               "samples kept; a reader that needs a sample newer ones overwrote stops the "
                               "run with an error (before the first samples: extrapolated backwards)",
                               1, max_history);
}

class PolynomialExtrapolator : public stride::Extrapolator {
 public:
  PolynomialExtrapolator(std::size_t order, std::size_t history)
      : order_(order), capacity_(std::max(history, order + 2)) {}

  void reset(std::size_t width) override { history_.reset(width, capacity_); }
  void push(double t, std::span<const double> y) override { history_.push(t, y); }
  void evaluate(double t, std::span<double> u) const override { history_.lagrange(order_, t, u); }
  // Order 0 beyond the newest sample is its hold.
  double holds_from() const override {
    return order_ == 0 ? history_.newest_held_from() : std::numeric_limits<double>::infinity();
  }

 private:
  std::size_t order_, capacity_;
  SampleHistory history_;
};

}  // namespace stride_extrapolation
