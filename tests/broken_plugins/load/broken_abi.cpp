// A plugin built against a future SDK: the handshake, written by hand, declares ABI version
// 999. The host must refuse it before calling anything else in the library.
#include <stride/stride.hpp>

namespace {

class FutureZoh final : public stride::Extrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "broken_abi";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0";
    i.description = "Test library with a wrong ABI version";
    return i;
  }
  explicit FutureZoh(const stride::Params&) {}
  void reset(std::size_t) override {}
  void push(double, std::span<const double>) override {}
  void evaluate(double, std::span<double> u) const override {
    for (double& v : u) v = 0.0;
  }
};

}  // namespace

// Its handshake section says the same; the host refuses it from the file, before loading it.
STRIDE_HANDSHAKE_SECTION(999)

extern "C" STRIDE_EXPORT const StrideHandshake* stride_plugin() {
  static const StrideHandshake handshake{999u, static_cast<std::uint32_t>(sizeof(StrideHandshake)),
                                         STRIDE_FINGERPRINT, []() -> const stride::Plugin* {
                                           static const stride::PluginFor<FutureZoh> instance;
                                           return &instance;
                                         }};
  return &handshake;
}
