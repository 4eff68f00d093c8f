// A second library registering the name "zoh" of a shipped plugin. Whichever library is
// loaded second must be refused as a duplicate; the first one stays usable.
#include <stride/stride.hpp>

namespace {

class ImpostorZoh final : public stride::Extrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "zoh";
    i.kind = stride::Kind::extrapolator;
    i.version = "0.0";
    i.description = "Test library that reuses the name of the shipped zoh plugin";
    return i;
  }
  explicit ImpostorZoh(const stride::Params&) {}
  void reset(std::size_t) override {}
  void push(double, std::span<const double>) override {}
  void evaluate(double, std::span<double> u) const override {
    for (double& v : u) v = -1.0;
  }
};

}  // namespace

STRIDE_PLUGIN(ImpostorZoh)
