// The Bogacki–Shampine 3(2) Runge–Kutta pair as a Stride integrator (Bogacki & Shampine 1989,
// the method of MATLAB's ode23):
//
//   k1 = f(t, x)
//   k2 = f(t + h/2,  x + h/2 k1)
//   k3 = f(t + 3h/4, x + 3h/4 k2)
//   x+ = x + h (2/9 k1 + 1/3 k2 + 4/9 k3)                      third order
//   k4 = f(t + h, x+)
//   e  = h (-5/72 k1 + 1/12 k2 + 1/9 k3 - 1/8 k4)              x+ minus the second-order solution
//
// With adaptive = true, each host step h is covered by as many internal steps as the error
// control needs; with adaptive = false, one third-order step of exactly h is taken (that mode
// exists to measure the order of the method). Adaptive steps reuse k4 as the next k1 (first
// same as last), across host steps too unless the host announces an input discontinuity.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <vector>

#include <stride/stride.hpp>

namespace {

// Call order (stride::Integrator): reset(sys, t0, x0) -> { [input_discontinuity(t)] -> step(sys, t, h, x) }*.
// step() always returns t + h: the internal steps end exactly at the host's step, so the
// subsystem stays on its grid and its outputs are evaluated where the host expects them.
class BogackiShampine final : public stride::Integrator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "bogacki_shampine";
    i.kind = stride::Kind::integrator;
    i.version = "1.0.0";
    i.description = "Bogacki-Shampine 3(2) Runge-Kutta pair, adaptive internal steps or fixed step";
    i.parameters = {
        stride::bool_param("adaptive", true, "true: error-controlled internal steps; false: one step of h"),
        stride::real_param("rtol", 1e-6, "1", "relative tolerance of the local error estimate", 1e-14, 1.0),
        stride::real_param("atol", 1e-9, "1", "absolute tolerance for a state of nominal value 1 (scaled by the "
                           "system's states())", 1e-300),
        stride::integer_param("max_steps", 100000, "internal steps allowed per host step", 1),
    };
    return i;
  }

  explicit BogackiShampine(const stride::Params& p)
      : adaptive_(p.boolean("adaptive")), rtol_(p.real("rtol")), atol_(p.real("atol")), max_steps_(p.integer("max_steps")) {}

  // All work memory here: step() must not allocate.
  void reset(stride::OdeSystem& sys, double, std::span<const double>) override {
    const std::size_t n = sys.state_size();
    for (auto* v : {&k1_, &k2_, &k3_, &k4_, &xs_, &xn_, &x_last_, &atol_i_}) v->assign(n, 0.0);
    stride::absolute_tolerances(sys, atol_, atol_i_);  // pressures in Pa and lengths in m alike
    h_next_ = 0.0;  // no step size known yet: the first internal step tries the host's h
    k1_current_ = false;
  }

  // The inputs may jump at t: f(t, x) from the end of the last call is stale.
  void input_discontinuity(double) override { k1_current_ = false; }

  double step(stride::OdeSystem& sys, double t, double h, std::span<double> x) override {
    const double t_end = t + h;
    if (!adaptive_) {
      sys.derivatives(t, x, k1_);
      ++rhs_;
      trial(sys, t, h, x);
      std::copy(xn_.begin(), xn_.end(), x.begin());
      ++steps_;
      return t_end;
    }
    // k1 = f(t, x) is carried over from the end of the previous call unless the inputs jumped
    // since (input_discontinuity) or the host restarted at another time or state.
    if (!k1_current_ || t != t_last_ || !std::equal(x.begin(), x.end(), x_last_.begin())) {
      sys.derivatives(t, x, k1_);
      ++rhs_;
    }
    k1_current_ = false;  // until this call completes
    double tc = t;
    double hc = h_next_ > 0.0 ? std::min(h_next_, h) : h;
    for (long taken = 0; tc < t_end;) {
      // The last internal step lands exactly on t_end (no sliver steps from round-off).
      const bool last = tc + hc >= t_end - 1e-12 * std::max(1.0, std::abs(t_end));
      if (last) hc = t_end - tc;
      double err = trial(sys, tc, hc, x);
      if (std::isnan(err)) err = std::numeric_limits<double>::infinity();  // a NaN state: retry smaller
      // Step size for an error of about 0.9³ ≈ 0.73 of the tolerance (local error ~ h³),
      // changed by at most a factor 5 either way.
      const double factor = std::clamp(0.9 * std::pow(std::max(err, 1e-10), -1.0 / 3.0), 0.2, 5.0);
      if (err <= 1.0) {
        tc = last ? t_end : tc + hc;
        std::copy(xn_.begin(), xn_.end(), x.begin());
        std::swap(k1_, k4_);  // first same as last inside this call: k4 = f(tc, x)
        ++steps_;
        if (!last) h_next_ = hc * factor;
        else h_next_ = std::max(h_next_, hc * factor);
      } else {
        ++rejected_;
      }
      hc *= factor;
      ++taken;
      if (tc < t_end && (taken >= max_steps_ || hc < 1e-14 * std::max(1.0, std::abs(tc)))) {
        char what[160];
        std::snprintf(what, sizeof what, "bogacki_shampine: cannot meet rtol = %g at t = %.9g s (step %g s after %ld internal steps)",
                      rtol_, tc, hc, taken);
        throw stride::StepFailure(what);
      }
    }
    std::copy(x.begin(), x.end(), x_last_.begin());
    t_last_ = t_end;
    k1_current_ = true;  // k1 = f(t_end, x) after the last accepted step
    return t_end;
  }

  stride::json statistics() const override {
    return {{"steps", steps_}, {"rejected_steps", rejected_}, {"rhs_evaluations", rhs_}};
  }

 private:
  // One step of hc from (tc, x) with k1 = f(tc, x) already in k1_: the third-order solution in
  // xn_, k4 = f(tc + hc, xn_), and the scaled error norm (<= 1 accepts). Leaves x unchanged.
  double trial(stride::OdeSystem& sys, double tc, double hc, std::span<const double> x) {
    const std::size_t n = x.size();
    for (std::size_t i = 0; i < n; ++i) xs_[i] = x[i] + 0.5 * hc * k1_[i];
    sys.derivatives(tc + 0.5 * hc, xs_, k2_);
    for (std::size_t i = 0; i < n; ++i) xs_[i] = x[i] + 0.75 * hc * k2_[i];
    sys.derivatives(tc + 0.75 * hc, xs_, k3_);
    for (std::size_t i = 0; i < n; ++i) xn_[i] = x[i] + hc * (2.0 / 9.0 * k1_[i] + 1.0 / 3.0 * k2_[i] + 4.0 / 9.0 * k3_[i]);
    rhs_ += 2;
    if (!adaptive_) return 0.0;
    sys.derivatives(tc + hc, xn_, k4_);
    ++rhs_;
    // Root mean square of the error, each state measured against its own tolerance.
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) {
      const double e = hc * (-5.0 / 72.0 * k1_[i] + 1.0 / 12.0 * k2_[i] + 1.0 / 9.0 * k3_[i] - 1.0 / 8.0 * k4_[i]);
      const double scale = atol_i_[i] + rtol_ * std::max(std::abs(x[i]), std::abs(xn_[i]));
      sum += (e / scale) * (e / scale);
    }
    return std::sqrt(sum / static_cast<double>(n));
  }

  bool adaptive_;
  double rtol_, atol_;
  long max_steps_;
  std::vector<double> k1_, k2_, k3_, k4_, xs_, xn_, x_last_, atol_i_;
  double h_next_ = 0.0, t_last_ = 0.0;
  bool k1_current_ = false;
  long steps_ = 0, rejected_ = 0, rhs_ = 0;
};

}  // namespace

STRIDE_PLUGIN(BogackiShampine)
