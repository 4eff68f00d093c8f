// Smoothing (González 2011 Sect. 2.2): the value for time t is the mean of the source samples
// with time in (t - window, t], window = the consumer's step, so a slow consumer sees the
// average of the fast source over its last step instead of a point value of a fast
// oscillation. When that interval holds no sample, the newest sample at or before t (zero-order
// hold). Meant for a fast source feeding the slow subsystem under a fastest-first scheme, where
// the fast subsystem has already advanced over the slow step being taken; the reverse direction
// (slow feeding fast) still needs a polynomial extrapolator. With window_end = "newest" the
// mean is over the window ending at the newest sample, the same for every t until the next
// sample: the paper's variant, one mean of the last slow step held over the step.
#include "../common/polynomial.hpp"

namespace {

// Call order: reset(width) -> { push(t, y) | evaluate(t, u) }*.
class Smoothing final : public stride::Extrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "smoothing";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0";
    i.description = "Mean of the source samples over the consumer's last step (Gonzalez 2011)";
    stride::ParamSpec window;
    window.name = "window";
    window.type = stride::ParamType::real;
    window.unit = "s";
    window.min = 0.0;
    window.doc = "averaging interval (t - window, t]; set it to the consumer's (slow) step";
    i.parameters = {
        window,
        stride::choice_param("window_end", "t", {"t", "newest"},
                             "t: the mean over (t - window, t] for each time asked; newest: the mean over "
                             "the window ending at the newest sample, held for every t until the next "
                             "sample (González 2011: one mean of the last slow step, constant over the step)"),
        stride_extrapolation::history_param()};
    return i;
  }
  explicit Smoothing(const stride::Params& p)
      : window_(p.real("window")),
        held_(p.string("window_end") == "newest"),
        capacity_(static_cast<std::size_t>(p.integer("history"))) {}

  void reset(std::size_t width) override { history_.reset(width, capacity_); }
  void push(double t, std::span<const double> y) override { history_.push(t, y); }
  void evaluate(double t, std::span<double> u) const override {
    history_.window_mean(held_ ? history_.newest_time() : t, window_, u);
  }

 private:
  double window_;
  bool held_;
  std::size_t capacity_;
  stride_extrapolation::SampleHistory history_;
};

}  // namespace

STRIDE_PLUGIN(Smoothing)
