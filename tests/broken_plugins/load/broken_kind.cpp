// A library that registers a subsystem class but declares it an integrator. The host must
// refuse it at load, naming both, instead of listing it and failing when a manifest uses it.
#include <stride/stride.hpp>

namespace {

class ConstantSource final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "broken_kind";
    i.kind = stride::Kind::integrator;
    i.version = "1.0";
    i.description = "Test library: a subsystem class declared as an integrator";
    return i;
  }
  explicit ConstantSource(const stride::Params&) {}
  std::vector<stride::PortSpec> ports() const override { return {stride::output("y", 1, "1")}; }
  void initialize(double) override {}
  double step(double t, double h) override { return t + h; }
  void outputs(std::span<double> y) override { y[0] = 1.0; }
};

}  // namespace

STRIDE_PLUGIN(ConstantSource)
