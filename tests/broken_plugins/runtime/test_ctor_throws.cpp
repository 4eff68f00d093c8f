// Loads fine, but its constructor rejects every parameter set: the host must report the
// exception as a PluginError naming this plugin.
#include "../common/ramp.hpp"

namespace {

class TestCtorThrows final : public stride_test::Ramp {
 public:
  static stride::PluginInfo describe() {
    return stride_test::ramp_info("test_ctor_throws", "Test plugin whose constructor throws", false);
  }
  explicit TestCtorThrows(const stride::Params& p) : Ramp(p) {
    throw std::invalid_argument("cannot open the lookup table 'missing_table.csv'");
  }
};

}  // namespace

STRIDE_PLUGIN(TestCtorThrows)
