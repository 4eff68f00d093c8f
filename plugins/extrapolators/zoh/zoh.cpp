// Zero-order hold: the newest sample at or before t (the oldest kept sample if t precedes
// them all). Beyond the newest sample it holds the newest value.
#include "../common/polynomial.hpp"

namespace {

// Call order: reset(width) -> { push(t, y) | evaluate(t, u) }*.
class Zoh final : public stride::Extrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "zoh";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0";
    i.description = "Zero-order hold of the newest sample at or before t";
    i.parameters = {stride_extrapolation::history_param()};
    return i;
  }
  explicit Zoh(const stride::Params& p) : capacity_(static_cast<std::size_t>(p.integer("history"))) {}

  void reset(std::size_t width) override { history_.reset(width, capacity_); }
  void push(double t, std::span<const double> y) override { history_.push(t, y); }
  void evaluate(double t, std::span<double> u) const override { history_.hold(t, u); }
  double holds_from() const override { return history_.newest_held_from(); }

 private:
  std::size_t capacity_;
  stride_extrapolation::SampleHistory history_;
};

}  // namespace

STRIDE_PLUGIN(Zoh)
