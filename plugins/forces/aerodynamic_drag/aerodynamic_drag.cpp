// Force element `aerodynamic_drag`: quadratic air drag at a body point (its centre of
// pressure), F = −½ ρ C_d A |u| u with u = v − wind, the point's velocity relative to the air.
// No torque about the point and no lift.
#include <stride/force_element.hpp>
#include <stride/stride.hpp>

namespace {

using namespace stride;

class AerodynamicDrag final : public ForceElement {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "aerodynamic_drag";
    i.version = "1.0";
    i.description = "Quadratic air drag -1/2 rho Cd A |u| u at a body point";
    i.parameters = {
        real_param("drag_area", 0.5, "m^2", "C_d A: drag coefficient times frontal area", 0.0, 1e3),
        real_param("air_density", 1.2, "kg/m^3", "rho", 0.0, 100.0),
        real_list_param("wind", {0.0, 0.0, 0.0}, "m/s", "air velocity (global)"),
    };
    return i;
  }
  explicit AerodynamicDrag(const Params& p) : k_(0.5 * p.real("air_density") * p.real("drag_area")) {
    const auto w = p.reals("wind");
    if (w.size() != 3) throw ParameterError("/wind", "expected 3 numbers, found " + std::to_string(w.size()));
    wind_ = Eigen::Vector3d(w[0], w[1], w[2]);
    if (!wind_.allFinite()) throw ParameterError("/wind", "expected finite numbers");
  }
  void evaluate(const ForceState& st, Wrench& out) const override {
    const Eigen::Vector3d u = st.velocity - wind_;
    out.force = -k_ * u.norm() * u;
    out.torque.setZero();
  }

 private:
  double k_;
  Eigen::Vector3d wind_;
};

}  // namespace

STRIDE_FORCE_ELEMENT(AerodynamicDrag)
