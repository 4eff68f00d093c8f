// A numerical failure inside step(): stride::StepFailure once t reaches fail_at. The host must
// end the run with status "diverged".
#include "../common/ramp.hpp"

namespace {

class TestStepFailure final : public stride_test::Ramp {
 public:
  static stride::PluginInfo describe() {
    return stride_test::ramp_info("test_step_failure", "Test plugin whose step() throws StepFailure", true);
  }
  using Ramp::Ramp;
  double step(double t, double h) override {
    if (t + h >= fail_at_) throw stride::StepFailure("Newton iteration did not converge");
    return Ramp::step(t, h);
  }
};

}  // namespace

STRIDE_PLUGIN(TestStepFailure)
