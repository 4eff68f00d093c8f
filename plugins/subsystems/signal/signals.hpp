// The signals of the `signal` source plugin: a function of time for each output, read from the
// plugin's parameters or from a CSV file in the input format of fmusim and FMPy.
//
// A Tabulated signal holds rows (t_i, v_i) with t non-decreasing; two rows of one time are a jump there,
// the value at that time being the one after it (as an input applied after an event). Between
// rows the value is linear or the previous row's; before the first and after the last row it is
// held, extended linearly, or the table repeats (period t_n - t_0). Constant, ramp and sine are
// closed forms. breaks_after(t) is the first time after t where a signal jumps or kinks, where the
// source ends a step so that its outputs are exact there. Nothing allocates after construction.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <span>
#include <string>
#include <vector>

namespace stride::signals {

enum class Interpolation { linear, previous };
enum class Extrapolation { hold, linear, periodic };

class Signal {
 public:
  virtual ~Signal() = default;
  virtual std::size_t size() const = 0;
  virtual void value(double t, std::span<double> out) const = 0;
  // The first time after t where the signal jumps or kinks (infinity: none).
  virtual double breaks_after(double /*t*/) const { return std::numeric_limits<double>::infinity(); }
};

class Constant final : public Signal {
 public:
  explicit Constant(std::vector<double> v) : v_(std::move(v)) {}
  std::size_t size() const override { return v_.size(); }
  void value(double, std::span<double> out) const override { std::copy(v_.begin(), v_.end(), out.begin()); }

 private:
  std::vector<double> v_;
};

// offset + height (t - start) / duration between start and start + duration, held after
// (Modelica.Blocks.Sources.Ramp); duration 0 is a step of `height` at `start`.
class Ramp final : public Signal {
 public:
  Ramp(double height, double duration, double offset, double start)
      : height_(height), duration_(duration), offset_(offset), start_(start) {}
  std::size_t size() const override { return 1; }
  void value(double t, std::span<double> out) const override {
    const double s = t < start_ ? 0.0 : t >= start_ + duration_ ? 1.0 : (t - start_) / duration_;
    out[0] = offset_ + height_ * s;
  }
  double breaks_after(double t) const override {
    if (t < start_) return start_;
    if (t < start_ + duration_) return start_ + duration_;
    return Signal::breaks_after(t);
  }

 private:
  double height_, duration_, offset_, start_;
};

// offset + amplitude sin(2 pi frequency (t - start) + phase) from start on, offset before.
class Sine final : public Signal {
 public:
  Sine(double amplitude, double frequency, double phase, double offset, double start)
      : amplitude_(amplitude), frequency_(frequency), phase_(phase), offset_(offset), start_(start) {}
  std::size_t size() const override { return 1; }
  void value(double t, std::span<double> out) const override {
    out[0] =
        offset_ + (t < start_ ? 0.0 : amplitude_ * std::sin(2 * std::numbers::pi * frequency_ * (t - start_) + phase_));
  }
  double breaks_after(double t) const override { return t < start_ ? start_ : Signal::breaks_after(t); }

 private:
  double amplitude_, frequency_, phase_, offset_, start_;
};

class Tabulated final : public Signal {
 public:
  // rows: [t, v_1, ..., v_k]; checked by the caller (at least one row, t non-decreasing, no
  // three rows of one time).
  Tabulated(std::vector<std::vector<double>> rows, Interpolation interpolation, Extrapolation extrapolation)
      : interpolation_(interpolation), extrapolation_(extrapolation), width_(rows.at(0).size() - 1) {
    for (const auto& r : rows) {
      t_.push_back(r[0]);
      v_.insert(v_.end(), r.begin() + 1, r.end());
    }
    period_ = t_.back() - t_.front();
    if (!(period_ > 0))
      extrapolation_ = extrapolation_ == Extrapolation::periodic ? Extrapolation::hold : extrapolation_;
  }
  std::size_t size() const override { return width_; }

  void value(double t, std::span<double> out) const override {
    const std::size_t n = t_.size();
    if (extrapolation_ == Extrapolation::periodic) t = periodic_time(t);
    if (n == 1 || (t < t_.front() && extrapolation_ != Extrapolation::linear)) return row(0, out);
    if (t >= t_.back() && extrapolation_ != Extrapolation::linear) return row(n - 1, out);
    // The last row at or before t (the later of two rows of one time); the first row before t_0.
    std::size_t i = std::size_t(std::upper_bound(t_.begin(), t_.end(), t) - t_.begin());
    i = i == 0 ? 0 : i - 1;
    if (interpolation_ == Interpolation::previous && t >= t_.front()) return row(i, out);
    // The segment [i, i + 1] of positive length for t (the first or last one beyond the ends).
    if (i + 1 >= n) i = n - 2;
    while (i + 1 < n - 1 && !(t_[i + 1] > t_[i])) ++i;
    while (i > 0 && !(t_[i + 1] > t_[i])) --i;
    const double w = t_[i + 1] > t_[i] ? (t - t_[i]) / (t_[i + 1] - t_[i]) : 1.0;
    for (std::size_t k = 0; k < width_; ++k) out[k] = (1 - w) * v_[i * width_ + k] + w * v_[(i + 1) * width_ + k];
  }

  double breaks_after(double t) const override {
    if (extrapolation_ != Extrapolation::periodic) {
      auto it = std::upper_bound(t_.begin(), t_.end(), t);
      return it == t_.end() ? Signal::breaks_after(t) : *it;
    }
    const double base = t - wrap(t - t_.front());  // start of the period holding t
    auto it = std::upper_bound(t_.begin(), t_.end(), t_.front() + (t - base));
    return base + (it == t_.end() ? t_.back() : *it) - t_.front();
  }

 private:
  double wrap(double dt) const { return dt - std::floor(dt / period_) * period_; }
  // t in the first period; a row's time when within round-off of it (a jump one period on is
  // a jump, not the instant before it).
  double periodic_time(double t) const {
    const double local = t_.front() + wrap(t - t_.front()), tol = 1e-12 * std::max(1.0, std::abs(t));
    auto it = std::lower_bound(t_.begin(), t_.end(), local);
    return it != t_.end() && *it - local <= tol ? *it : local;
  }
  void row(std::size_t i, std::span<double> out) const {
    std::copy_n(v_.begin() + std::ptrdiff_t(i * width_), width_, out.begin());
  }

  Interpolation interpolation_;
  Extrapolation extrapolation_;
  std::size_t width_;
  std::vector<double> t_, v_;
  double period_ = 0.0;
};

}  // namespace stride::signals
