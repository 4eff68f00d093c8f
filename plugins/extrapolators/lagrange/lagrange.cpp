// Lagrange polynomial interpolation/extrapolation of order 0..4 through the source's latest
// samples, with the sample selection rule of González 2011 Sect. 2.1 (see
// ../common/sample_history.hpp, SampleHistory::lagrange).
#include "../common/polynomial.hpp"

namespace {

class Lagrange final : public stride_extrapolation::PolynomialExtrapolator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "lagrange";
    i.kind = stride::Kind::extrapolator;
    i.version = "1.0";
    i.description = "Lagrange polynomial of order 0-4 through the samples around t (Gonzalez 2011)";
    i.parameters = {
        stride::integer_param("order", 1, "polynomial order P (P+1 samples)", 0, 4),
        stride_extrapolation::history_param(),
    };
    return i;
  }
  explicit Lagrange(const stride::Params& p)
      : PolynomialExtrapolator(static_cast<std::size_t>(p.integer("order")),
                               static_cast<std::size_t>(p.integer("history"))) {}
};

}  // namespace

STRIDE_PLUGIN(Lagrange)
