// Fast subsystem of the González 2011 two-mass test problem: mass m1 between the wall spring
// k1 (damper c1) and the coupling spring k2; input x2, the slow mass's position. Physics and
// parameter derivation: plugins/common/two_mass.hpp.
#include "two_mass.hpp"

namespace {

class TwoMassFast final : public stride::two_mass::MassOnSprings {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "two_mass_fast";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::ode;
    i.version = "1.0.0";
    i.description = "Fast mass m1 of the two-mass triple-spring test (Gonzalez 2011, Eq. 2-9)";
    i.parameters = stride::two_mass::parameter_specs();
    return i;
  }
  explicit TwoMassFast(const stride::Params& p) : MassOnSprings(p, stride::two_mass::Side::fast) {}
};

}  // namespace

STRIDE_PLUGIN(TwoMassFast)
