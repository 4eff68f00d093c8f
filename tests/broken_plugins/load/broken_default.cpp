// A library whose declaration contradicts itself: the default of `order` lies outside its own
// bounds. The host must refuse it at load, naming the parameter, and a manifest that names
// the plugin must hear why it is unknown.
#include <stride/stride.hpp>

namespace {

class SelfContradicting final : public stride::Extrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "broken_default";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0";
    i.description = "Test library with a default outside its bounds";
    i.parameters = {stride::integer_param("order", 7, "polynomial order", 0, 4)};
    return i;
  }
  explicit SelfContradicting(const stride::Params&) {}
  void reset(std::size_t) override {}
  void push(double, std::span<const double>) override {}
  void evaluate(double, std::span<double> u) const override {
    for (double& v : u) v = 0.0;
  }
};

}  // namespace

STRIDE_PLUGIN(SelfContradicting)
