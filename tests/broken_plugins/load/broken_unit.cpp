// A library that declares a parameter in a unit no units library reads ("newton_meter" for N*m).
// The host must refuse it at load, naming the plugin, the parameter and the unit.
#include <stride/stride.hpp>

namespace {

class BadUnit final : public stride::Extrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "broken_unit";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0";
    i.description = "Test library with a parameter in a unit that is not one";
    stride::ParamSpec torque;
    torque.name = "torque";
    torque.type = stride::ParamType::real;
    torque.default_value = 1.0;
    torque.unit = "newton_meter";
    torque.doc = "a torque in a misspelled unit";
    i.parameters = {torque};
    return i;
  }
  explicit BadUnit(const stride::Params&) {}
  void reset(std::size_t) override {}
  void push(double, std::span<const double>) override {}
  void evaluate(double, std::span<double> u) const override {
    for (double& v : u) v = 0.0;
  }
};

}  // namespace

STRIDE_PLUGIN(BadUnit)
