// STRIDE_PLUGIN on a class without `static PluginInfo describe()`: one static_assert message.
#include <stride/stride.hpp>

class Gain final : public stride::Subsystem {
 public:
  explicit Gain(const stride::Params&) {}
  std::vector<stride::PortSpec> ports() const override { return {}; }
  void initialize(double) override {}
  double step(double t, double h) override { return t + h; }
  void outputs(std::span<double>) override {}
};

STRIDE_PLUGIN(Gain)
