// What a subsystem may tell the recorder about its outputs within a step, beyond their values
// at the step's ends. Host-internal (the model-exchange FMU implements both).
//
// EventOutputs: outputs may jump at the time a step reaches (an FMU's time, state or step
// event, handled at the step's end); the subsystem hands over the outputs just before the
// jump, so that values recorded between two steps are never interpolated across it. The
// master asks after every step of a subsystem that does.
//
// DenseOutputs: the subsystem computes its outputs at the record times strictly inside each
// step itself (from its integrator's states), instead of the recorder interpolating linearly
// between the step's ends. The recorder hands it the grid once, before the run.
#pragma once

#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

namespace stride::host {

// The record times t0 + k dt. An interval written in decimal (0.1, 0.025) gives the times as
// k m / 10^j with m / 10^j = dt: the double nearest each decimal time (0.3, not the
// 0.30000000000000004 of 3 * 0.1), so results.csv's time column reads as the grid it is.
class RecordGrid {
 public:
  RecordGrid() = default;
  RecordGrid(double t0, double dt) : t0_(t0), dt_(dt) {
    double scale = 1;
    for (int j = 0; j <= 15 && dt > 0; ++j, scale *= 10) {
      const double m = std::round(dt * scale);
      if (m >= 1 && m < 1e6 && std::abs(m - dt * scale) <= 1e-9 * m) {
        m_ = m;
        scale_ = scale;
        break;
      }
    }
  }
  double t0() const { return t0_; }
  double dt() const { return dt_; }
  double time(std::size_t k) const {
    const double kd = static_cast<double>(k);
    // k m is exact below 2^53 (m < 10^6: k below 9e9 rows), and one division rounds it once.
    return scale_ > 0 && kd < 9e9 ? t0_ + kd * m_ / scale_ : t0_ + kd * dt_;
  }

 private:
  double t0_ = 0.0, dt_ = 0.0, m_ = 0.0, scale_ = 0.0;
};

class EventOutputs {
 public:
  virtual ~EventOutputs() = default;
  // After a step: true when it ended at an event, with the outputs just before the event
  // (the left limit at the time reached) in y; outputs() gives those after it.
  virtual bool outputs_before_event(std::span<double> y) const = 0;
  // Whether this subsystem's steps can end at events at all (a co-simulation FMU only when it
  // uses event mode): the master asks only those.
  virtual bool has_events() const { return true; }
};

class DenseOutputs {
 public:
  virtual ~DenseOutputs() = default;
  // Record times t0 + k dt (k >= 0); from the next step on, every step keeps its outputs at
  // those strictly inside it (by more than 1e-9 dt).
  virtual void record_grid(double t0, double dt) = 0;
  // The outputs at record time k when the last step kept them, else null.
  virtual const double* outputs_at_row(std::size_t k) const = 0;
};

// The outputs a DenseOutputs subsystem keeps for the record times inside its last step, in the
// order of the times (a step split at its events adds them segment by segment).
class DenseRows {
 public:
  void grid(double t0, double dt, std::size_t width) {
    grid_ = RecordGrid(t0, dt);
    t0_ = t0;
    dt_ = dt;
    width_ = width;
    rows_.assign(8 * width, 0.0);  // before the run: steps with up to 8 rows allocate nothing
    restart();
  }
  bool on() const { return dt_ > 0; }
  void begin_step() { count_ = 0; }
  // A step from ta to tb < horizon() has no record time inside (+inf without a grid): the
  // subsystem's step path tests only this, and calls any() about once per record time.
  double horizon() const { return horizon_; }
  // The subsystem went back in time (a repeated macro step) or starts again.
  void restart() {
    count_ = 0;
    after_ = std::numeric_limits<double>::quiet_NaN();
    horizon_ = on() ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  // Whether a record time lies in (ta, tb), both ends excluded by 1e-9 dt. Steps go forward:
  // the first record time after the last ta is kept (a division only when ta went back).
  bool any(double ta, double tb) {
    if (!on()) return false;
    if (!(ta >= after_)) next_ = first_after(ta);
    while (time(next_) <= ta + near()) ++next_;
    after_ = ta;
    const double next_time = time(next_);
    horizon_ = next_time - near();
    return next_time < tb - near();
  }
  // Adds the outputs at the record times in (ta, tb) (at_end: also one within 1e-9 dt of tb),
  // out(t, row) writing each.
  template <class Out>
  void add(double ta, double tb, bool at_end, Out&& out) {
    if (!on()) return;
    std::size_t k = first_after(ta);
    if (count_ == 0) first_ = k;
    for (; time(k) < tb - near() || (at_end && time(k) <= tb + near()); ++k) out(time(k), next_row());
  }
  // Adds the outputs at a record time within 1e-9 dt of t, if there is one (after an event at t).
  template <class Out>
  void add_at(double t, Out&& out) {
    if (!on() || t < t0_ - near()) return;
    const double k = std::round((t - t0_) / dt_);
    if (std::abs(time(static_cast<std::size_t>(k)) - t) > near()) return;
    if (count_ == 0) first_ = static_cast<std::size_t>(k);
    out(t, next_row());
  }
  const double* row(std::size_t k) const {
    if (k < first_ || k - first_ >= count_) return nullptr;
    return rows_.data() + (k - first_) * width_;
  }

 private:
  double near() const { return 1e-9 * dt_; }
  // Room for one more row (grows only past the rows reserved by grid()).
  std::span<double> next_row() {
    if (rows_.size() < (count_ + 1) * width_) rows_.resize(2 * (count_ + 1) * width_);
    return {rows_.data() + (count_++) * width_, width_};
  }
  double time(std::size_t k) const { return grid_.time(k); }
  std::size_t first_after(double t) const {
    const double k0 = std::ceil((t - t0_) / dt_);
    std::size_t k = k0 > 0 ? static_cast<std::size_t>(k0) : 0;
    while (time(k) <= t + near()) ++k;
    return k;
  }
  RecordGrid grid_;
  double t0_ = 0.0, dt_ = 0.0;
  std::size_t width_ = 0, first_ = 0, count_ = 0;
  double after_ = std::numeric_limits<double>::quiet_NaN();  // any(): the last ta, and
  std::size_t next_ = 0;                                     // the first record time after it
  double horizon_ = std::numeric_limits<double>::infinity();
  std::vector<double> rows_;
};

// x at t0 + s h on the cubic Hermite interpolant through x0, dx/dt = f0 at t0 and x1, f1 at
// t0 + h: exact for cubics, of the order of a 4th-order step's error otherwise.
inline void hermite_state(double s, double h, std::span<const double> x0, std::span<const double> f0,
                          std::span<const double> x1, std::span<const double> f1, std::span<double> x) {
  const double s2 = s * s, s3 = s2 * s;
  const double a0 = 2 * s3 - 3 * s2 + 1, b0 = (s3 - 2 * s2 + s) * h, a1 = 3 * s2 - 2 * s3, b1 = (s3 - s2) * h;
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = a0 * x0[i] + b0 * f0[i] + a1 * x1[i] + b1 * f1[i];
}

}  // namespace stride::host
