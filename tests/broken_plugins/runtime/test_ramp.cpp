// A healthy source: y = slope·t.
#include "../common/ramp.hpp"

namespace {

class TestRamp final : public stride_test::Ramp {
 public:
  static stride::PluginInfo describe() { return stride_test::ramp_info("test_ramp", "Test source y = slope·t", false); }
  using Ramp::Ramp;
};

}  // namespace

STRIDE_PLUGIN(TestRamp)
