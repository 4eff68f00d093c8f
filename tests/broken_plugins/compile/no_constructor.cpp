// STRIDE_PLUGIN on a class without a constructor from Params: one static_assert message.
#include <stride/stride.hpp>

class Gain final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() { return {}; }
  Gain() = default;
  std::vector<stride::PortSpec> ports() const override { return {}; }
  void initialize(double) override {}
  double step(double t, double h) override { return t + h; }
  void outputs(std::span<double>) override {}
};

STRIDE_PLUGIN(Gain)
