// Convenience name for the first-order Lagrange extrapolator (lagrange with order = 1): the
// straight line through the two samples around t, or through the two newest beyond them.
#include "../common/polynomial.hpp"

namespace {

class Linear final : public stride_extrapolation::PolynomialExtrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "linear";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0";
    i.description = "Linear interpolation/extrapolation (lagrange with order 1)";
    i.parameters = {stride_extrapolation::history_param()};
    return i;
  }
  explicit Linear(const stride::Params& p)
      : PolynomialExtrapolator(1, static_cast<std::size_t>(p.integer("history"))) {}
};

}  // namespace

STRIDE_PLUGIN(Linear)
