// A plugin built with a different nlohmann::json layout option (JSON_DIAGNOSTICS=0 while the
// host uses 1): json objects would differ in size across the boundary. The fingerprint
// records it and the host must refuse the library, naming the key json_diagnostics.
#undef JSON_DIAGNOSTICS
#define JSON_DIAGNOSTICS 0
#include <stride/stride.hpp>

namespace {

class OtherLayout final : public stride::Extrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "broken_fingerprint";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0";
    i.description = "Test library built with another JSON_DIAGNOSTICS";
    return i;
  }
  explicit OtherLayout(const stride::Params&) {}
  void reset(std::size_t) override {}
  void push(double, std::span<const double>) override {}
  void evaluate(double, std::span<double> u) const override {
    for (double& v : u) v = 0.0;
  }
};

}  // namespace

STRIDE_PLUGIN(OtherLayout)
