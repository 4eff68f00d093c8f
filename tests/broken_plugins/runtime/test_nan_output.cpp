// Divergence without an exception: the output is NaN from fail_at on (as a model would
// produce after, e.g., the square root of a negative pressure). The host must stop with
// status "diverged" and keep the rows computed before.
#include "../common/ramp.hpp"

namespace {

class TestNanOutput final : public stride_test::Ramp {
 public:
  static stride::PluginInfo describe() {
    return stride_test::ramp_info("test_nan_output", "Test plugin whose output becomes NaN", true);
  }
  using Ramp::Ramp;
  void outputs(std::span<double> y) override {
    y[0] = t_ >= fail_at_ ? std::numeric_limits<double>::quiet_NaN() : slope_ * t_;
  }
};

}  // namespace

STRIDE_PLUGIN(TestNanOutput)
