// STRIDE_PLUGIN on a class that derives from no plugin interface: one static_assert message.
#include <stride/stride.hpp>

class Gain {
 public:
  static stride::PluginInfo describe() { return {}; }
  explicit Gain(const stride::Params&) {}
};

STRIDE_PLUGIN(Gain)
