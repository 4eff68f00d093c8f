// Fixed-capacity history of a connection's output samples, and the evaluation rules shared by
// the extrapolator plugins (zoh, lagrange, linear, smoothing). Header-only; this folder has no
// CMakeLists.txt and is not a plugin.
//
// Call order: reset(width, capacity) -> { push(t, y) | queries }*. reset() allocates; push()
// and every query work in the preallocated ring and never allocate. When full, push()
// overwrites the oldest sample. A query that needs a sample older than those kept once some
// were overwritten (a reader stepping further behind the writer than the history reaches)
// throws: its answer would not be the rule the extrapolator promises. Before any is
// overwritten (the run's first samples) a query before them extrapolates backwards.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include <stride/log.hpp>

namespace stride_extrapolation {

class SampleHistory {
 public:
  void reset(std::size_t width, std::size_t capacity) {
    if (capacity == 0) throw std::invalid_argument("sample history needs a capacity of at least 1");
    width_ = width;
    capacity_ = capacity;
    stride_ = 1 + width;
    slots_.assign(capacity * stride_, 0.0);
    head_ = tail_ = 0;
    count_ = 0;
    overwritten_ = false;
  }

  // Sample times must increase strictly.
  void push(double t, std::span<const double> y) {
    if (y.size() != width_ || (count_ > 0 && !(t > slot_time(tail_)))) [[unlikely]]
      refuse(t, y.size());
    const std::size_t slot = count_ == 0 ? head_ : wrap(tail_ + 1);
    double* v = slots_.data() + slot * stride_;
    *v++ = t;
    if (width_ == 1) v[0] = y[0];  // most connections carry one scalar
    else std::copy(y.begin(), y.end(), v);
    tail_ = slot;
    if (count_ < capacity_) ++count_;
    else head_ = wrap(head_ + 1), overwritten_ = true;
  }

  std::size_t size() const { return count_; }
  std::size_t width() const { return width_; }
  // Sample i, 0 = oldest kept, size()-1 = newest.
  double time(std::size_t i) const { return slot_time(wrap(head_ + i)); }
  std::span<const double> value(std::size_t i) const { return {slots_.data() + wrap(head_ + i) * stride_ + 1, width_}; }
  double newest_time() const { return slot_time(tail_); }

  // Times from which hold() returns the newest sample: within the tolerance below of it or
  // later. +infinity while empty.
  double newest_held_from() const {
    if (count_ == 0) return std::numeric_limits<double>::infinity();
    const double t = newest_time();
    return t - 0.5e-9 * std::max(1.0, std::abs(t));
  }

  // Index of the first sample with time > t; size() when there is none. Times within
  // 1e-9·max(1, |t|) of t count as t: subsystems on different grids reach "the same" time by
  // different sums of steps, and a sample at a communication point must be seen there.
  // Queries are nearly always at or just before the newest sample, so those are tried first.
  std::size_t first_after(double t) const {
    const double tt = t + 1e-9 * std::max(1.0, std::abs(t));
    std::size_t hi = count_;
    for (int k = 0; k < 4 && hi > 0; ++k, --hi)
      if (time(hi - 1) <= tt) return hi;
    std::size_t lo = 0;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      if (time(mid) > tt) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  // Zero order hold: the newest sample with time <= t; the oldest kept one when t precedes all.
  void hold(double t, std::span<double> u) const {
    require_samples();
    const std::size_t k = first_after(t);
    if (k == 0 && overwritten_) [[unlikely]]
      too_short(t);
    const auto v = value(k == 0 ? 0 : k - 1);
    std::copy(v.begin(), v.end(), u.begin());
  }

  // Polynomial of order P through P+1 consecutive samples t_P..t_0 (González 2011 Sect. 2.1):
  // t_P is the sample closest to t with t_P > t when one exists (interpolation), else the
  // newest sample (extrapolation); t_{P-1}..t_0 are the samples before it. With fewer than
  // P+1 samples kept, the order drops to size()-1. Where fewer than P samples precede t_P
  // (t early in the history) the window slides forward to keep the order. Evaluated with the
  // Lagrange basis.
  void lagrange(std::size_t order, double t, std::span<double> u) const {
    require_samples();
    const std::size_t m = std::min(order + 1, count_);
    const std::size_t ahead = first_after(t);
    const std::size_t last = ahead < count_ ? ahead : count_ - 1;
    if (overwritten_ && (ahead == 0 || last + 1 < m)) [[unlikely]]  // t_P or those before it overwritten
      too_short(t);
    const std::size_t first = last + 1 >= m ? last + 1 - m : 0;
    std::fill(u.begin(), u.end(), 0.0);
    for (std::size_t j = first; j < first + m; ++j) {
      const double tj = time(j);
      double basis = 1.0;
      for (std::size_t k = first; k < first + m; ++k)
        if (k != j) basis *= (t - time(k)) / (tj - time(k));
      const auto v = value(j);
      for (std::size_t i = 0; i < width_; ++i) u[i] += basis * v[i];
    }
  }

  // Mean of the samples with time in (t - window, t] (González 2011 Sect. 2.2); hold(t) when
  // that interval holds no sample.
  void window_mean(double t, double window, std::span<double> u) const {
    require_samples();
    const std::size_t end = first_after(t);
    const std::size_t begin = first_after(t - window);
    if (begin == 0 && overwritten_) [[unlikely]]
      too_short(t);
    if (begin >= end) {
      hold(t, u);
      return;
    }
    std::fill(u.begin(), u.end(), 0.0);
    for (std::size_t j = begin; j < end; ++j) {
      const auto v = value(j);
      for (std::size_t i = 0; i < width_; ++i) u[i] += v[i];
    }
    const double inv = 1.0 / static_cast<double>(end - begin);
    for (std::size_t i = 0; i < width_; ++i) u[i] *= inv;
  }

 private:
  // Out of line, so that push() itself stays a few instructions.
  [[noreturn, gnu::cold, gnu::noinline]] void refuse(double t, std::size_t width) const {
    if (width != width_)
      throw std::invalid_argument("sample of width " + std::to_string(width) + ", expected " + std::to_string(width_));
    throw std::invalid_argument(
        stride::format_text("sample times must increase strictly ({} after {})", t, slot_time(tail_)));
  }
  [[noreturn, gnu::cold, gnu::noinline]] void too_short(double t) const {
    throw std::runtime_error(stride::format_text(
        "asked for t = {} s, which needs samples older than the {} kept (the oldest at {} s, newer ones "
        "overwrote the rest): the reader is further behind the writer than the history reaches; raise the "
        "extrapolator's \"history\" (at least the reader's step over the writer's, plus the order and 2)",
        t, count_, time(0)));
  }
  // i < 2 capacity: a comparison instead of a division.
  std::size_t wrap(std::size_t i) const { return i >= capacity_ ? i - capacity_ : i; }
  double slot_time(std::size_t slot) const { return slots_[slot * stride_]; }
  void require_samples() const {
    if (count_ == 0) throw std::logic_error("extrapolator evaluated before any sample was pushed");
  }

  std::size_t width_ = 0, capacity_ = 0, head_ = 0, tail_ = 0, count_ = 0;  // tail_: newest sample
  bool overwritten_ = false;  // a push overwrote the oldest sample
  // Slot k holds its time and then its values: a push or a read of the newest sample touches
  // one piece of memory (with thousands of connections pushed in turn, each piece is a miss).
  std::size_t stride_ = 1;  // 1 + width_
  std::vector<double> slots_;
};

}  // namespace stride_extrapolation
