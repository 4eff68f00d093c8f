// Quadratic interpolation and extrapolation of a connection's samples, as a Stride extrapolator:
// the parabola through three consecutive samples (t0, y0), (t1, y1), (t2, y2), in Lagrange form
//
//   u(t) = Σ_j y_j Π_{k≠j} (t − t_k) / (t_j − t_k).
//
// Beyond the newest sample it extrapolates with the three newest samples: the error is
// y'''/6 · (t − t0)(t − t1)(t − t2), third order in the source's step. Where a sample later
// than t exists (the source is ahead of the reader), it interpolates through the sample just
// after t and the two before it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

#include <stride/stride.hpp>

namespace {

// Call order (stride::Extrapolator): reset(width) -> { push(t, y) | evaluate(t, u) }*.
// The samples live in a ring of `history` entries allocated by reset(); push() and evaluate()
// work in it and never allocate.
class Quadratic final : public stride::Extrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "quadratic";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0.0";
    i.description = "Parabola through three consecutive samples (interpolation, or extrapolation beyond the newest)";
    // A reader may evaluate behind the newest sample: a slow subsystem fed by a faster one that
    // has already advanced over the slow step reads back across (slow step / fast step) samples.
    // The ring must hold those plus two.
    i.parameters = {stride::integer_param("history", 64, "samples kept (at least slow step / fast step + 2)", 3, 1e6)};
    return i;
  }

  explicit Quadratic(const stride::Params& p) : capacity_(static_cast<std::size_t>(p.integer("history"))) {}

  void reset(std::size_t width) override {
    width_ = width;
    times_.assign(capacity_, 0.0);
    values_.assign(capacity_ * width, 0.0);
    oldest_ = count_ = 0;
  }

  // Sample times increase strictly (the host's promise); a full ring drops its oldest sample.
  void push(double t, std::span<const double> y) override {
    if (y.size() != width_ || (count_ > 0 && !(t > time(count_ - 1)))) {
      char what[160];
      std::snprintf(what, sizeof what, "quadratic: sample at t = %.9g s with %zu values; expected %zu values and a time after %.9g s",
                    t, y.size(), width_, count_ > 0 ? time(count_ - 1) : -HUGE_VAL);
      throw std::invalid_argument(what);
    }
    const std::size_t slot = (oldest_ + count_) % capacity_;
    times_[slot] = t;
    std::copy(y.begin(), y.end(), values_.begin() + static_cast<std::ptrdiff_t>(slot * width_));
    if (count_ < capacity_) ++count_;
    else oldest_ = (oldest_ + 1) % capacity_;
  }

  void evaluate(double t, std::span<double> u) const override {
    // The host pushes the source's initial output before any read; this guards a misuse.
    if (count_ == 0) throw std::logic_error("quadratic: evaluated before the first sample was pushed");
    // The first sample later than t. Times within 1e-9 relative of t count as t: subsystems on
    // different grids reach "the same" communication point by different sums of steps. Reads
    // are nearly always at or just behind the newest sample, so the search starts there.
    const double tt = t + 1e-9 * std::max(1.0, std::abs(t));
    std::size_t after = count_;
    while (after > 0 && time(after - 1) > tt) --after;
    // Window of (up to) three samples ending at that sample, or at the newest one. With fewer
    // samples (the first two reads) the order drops: a hold, then a line.
    const std::size_t m = std::min<std::size_t>(3, count_);
    const std::size_t last = after < count_ ? after : count_ - 1;
    const std::size_t first = last + 1 >= m ? last + 1 - m : 0;
    std::fill(u.begin(), u.end(), 0.0);
    for (std::size_t j = first; j < first + m; ++j) {
      double basis = 1.0;
      for (std::size_t k = first; k < first + m; ++k)
        if (k != j) basis *= (t - time(k)) / (time(j) - time(k));
      const double* y = value(j);
      for (std::size_t i = 0; i < width_; ++i) u[i] += basis * y[i];
    }
  }
  // holds_from() keeps its default (+infinity): a parabola never holds its newest sample.

 private:
  // Sample i, 0 = oldest kept.
  double time(std::size_t i) const { return times_[(oldest_ + i) % capacity_]; }
  const double* value(std::size_t i) const { return values_.data() + ((oldest_ + i) % capacity_) * width_; }

  std::size_t capacity_, width_ = 0, oldest_ = 0, count_ = 0;
  std::vector<double> times_, values_;
};

}  // namespace

STRIDE_PLUGIN(Quadratic)
