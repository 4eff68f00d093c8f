// Slow subsystem of the González 2011 two-mass test problem: mass m2 between the wall spring
// k3 (damper c3) and the coupling spring k2; input x1, the fast mass's position. Physics and
// parameter derivation: plugins/common/two_mass.hpp.
#include "two_mass.hpp"

namespace {

class TwoMassSlow final : public stride::two_mass::MassOnSprings {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "two_mass_slow";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::ode;
    i.version = "1.0.0";
    i.description = "Slow mass m2 of the two-mass triple-spring test (Gonzalez 2011, Eq. 2-9)";
    i.parameters = stride::two_mass::parameter_specs();
    return i;
  }
  explicit TwoMassSlow(const stride::Params& p) : MassOnSprings(p, stride::two_mass::Side::slow) {}
};

}  // namespace

STRIDE_PLUGIN(TwoMassSlow)
