// STRIDE_PLUGIN on a class that leaves outputs() unimplemented: one static_assert message.
#include <stride/stride.hpp>

class Gain final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() { return {}; }
  explicit Gain(const stride::Params&) {}
  std::vector<stride::PortSpec> ports() const override { return {}; }
  void initialize(double) override {}
  double step(double t, double h) override { return t + h; }
};

STRIDE_PLUGIN(Gain)
