// A programming error inside step(): std::runtime_error (not StepFailure) once t reaches
// fail_at. The host must end the run with status "failed" and name the plugin.
#include "../common/ramp.hpp"

namespace {

class TestStepThrows final : public stride_test::Ramp {
 public:
  static stride::PluginInfo describe() {
    return stride_test::ramp_info("test_step_throws", "Test plugin whose step() throws std::runtime_error", true);
  }
  using Ramp::Ramp;
  double step(double t, double h) override {
    if (t + h >= fail_at_) throw std::runtime_error("table index out of range");
    return Ramp::step(t, h);
  }
};

}  // namespace

STRIDE_PLUGIN(TestStepThrows)
