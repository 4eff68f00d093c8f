// Force element `magic_formula_tyre`: a pneumatic tyre on flat ground, Pacejka's Magic
// Formula for the horizontal forces (Bakker, Nyborg & Pacejka 1987; Pacejka, Tire and Vehicle
// Dynamics), attached at the wheel centre.
//
// Geometry. The ground is the plane through `ground_point` with upward normal n = `up`; the
// wheel spins about a = R `axis`. The contact point is the rim point nearest the ground:
// w = −(n − (n·a) a)/|...| (down in the wheel plane), loaded radius r_l = h/(−w·n) with
// h = (c − ground_point)·n, P = c + r_l w, deflection δ = r0 − r_l (no contact for δ <= 0).
// Directions: forward e_x = (a × n)/|a × n| (positive spin rolls the wheel forward), left
// e_y = n × e_x.
//
// Forces, with V the centre's velocity, ω_s = ω·a, r_e = r0 − δ/3 (effective rolling radius),
// V_ref = sqrt((V·e_x)² + v_min²) (a smooth floor: slips stay finite at standstill):
//   F_z = max(0, k_z δ + c_z δ'),  δ' = (V·n)/(w·n)
//   κ = (ω_s r_e − V·e_x)/V_ref,   α = atan((V·e_y)/V_ref)
//   pure slip: F_x0(κ) = μ_x F_z sin(C_x atan(B_x κ − E_x (B_x κ − atan(B_x κ)))),
//              F_y0(α) = μ_y F_z sin(C_y atan(B_y α − E_y (B_y α − atan(B_y α))))
//   combined slip, normalized slips (Bakker, Nyborg & Pacejka 1987): each slip over the slip
//   of its curve's peak, λ_x = κ/κ_m, λ_y = α/α_m, λ = |(λ_x, λ_y)|; both curves at the
//   common λ, shared in the slips' ratio:
//     F_x = (λ_x/λ) F_x0(λ κ_m),  F_y = −(λ_y/λ) F_y0(λ α_m)
//   so pure slip is the Magic Formula itself and (F_x/D_x)² + (F_y/D_y)² <= 1 always.
//   rolling resistance: a moment −f_r F_z r_l tanh(ω_s r_e / v_rr) about a.
// Wrench at the centre: F = F_x e_x + F_y e_y + F_z n, torque (P − c) × F + the rolling
// resistance moment. No aligning or overturning moment, no camber force, no relaxation length
// (the forces follow the slips at once; see README, kart).
#include <stride/force_element.hpp>
#include <stride/stride.hpp>

namespace {

using namespace stride;

struct MagicFormula {
  double B = 10, C = 1.6, E = 0;
  // D sin(C atan(B s − E (B s − atan(B s)))) with D = 1.
  double operator()(double s) const {
    const double Bs = B * s;
    return std::sin(C * std::atan(Bs - E * (Bs - std::atan(Bs))));
  }
  // The slip of the peak, where C atan(B s − E (B s − atan(B s))) = π/2 (bisection; the
  // argument grows with s for E <= 1); without a peak (C <= 1), 1/B.
  double peak_slip() const {
    if (!(C > 1.0) || !(B > 0.0)) return B > 0.0 ? 1.0 / B : 1.0;
    const double target = std::tan(M_PI / (2.0 * C));
    double lo = 0.0, hi = 1.0;
    auto arg = [&](double s) { const double Bs = B * s; return Bs - E * (Bs - std::atan(Bs)); };
    while (arg(hi) < target && hi < 1e6) hi *= 2.0;
    for (int i = 0; i < 200; ++i) (arg(0.5 * (lo + hi)) < target ? lo : hi) = 0.5 * (lo + hi);
    return 0.5 * (lo + hi);
  }
};

class MagicFormulaTyre final : public ForceElement {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "magic_formula_tyre";
    i.version = "1.0";
    i.description =
        "Pneumatic tyre on flat ground: Magic Formula longitudinal and lateral forces, normalized-slip combination, "
        "vertical spring-damper, rolling resistance";
    i.parameters = {
        real_param("radius", 0.14, "m", "unloaded radius r0", 1e-3),
        real_param("vertical_stiffness", 8e4, "N/m", "k_z", 1.0),
        real_param("vertical_damping", 200.0, "N*s/m", "c_z", 0.0),
        real_param("mu_x", 1.3, "1", "longitudinal friction coefficient (peak D_x = mu_x F_z)", 0.0, 5.0),
        real_param("B_x", 12.0, "1", "longitudinal stiffness factor", 0.0),
        real_param("C_x", 1.65, "1", "longitudinal shape factor", 0.0, 2.0),
        real_param("E_x", 0.0, "1", "longitudinal curvature factor", -10.0, 1.0),
        real_param("mu_y", 1.3, "1", "lateral friction coefficient (peak D_y = mu_y F_z)", 0.0, 5.0),
        real_param("B_y", 10.0, "1", "lateral stiffness factor (per rad)", 0.0),
        real_param("C_y", 1.3, "1", "lateral shape factor", 0.0, 2.0),
        real_param("E_y", 0.0, "1", "lateral curvature factor", -10.0, 1.0),
        real_param("rolling_resistance", 0.015, "1", "rolling resistance coefficient f_r (moment f_r F_z r_l)", 0.0,
                   1.0),
        real_param("rolling_speed", 0.1, "m/s", "rolling resistance reaches its value above this rim speed (tanh)",
                   1e-6),
        real_param("slip_speed", 0.5, "m/s", "v_min of the slip denominator sqrt(V_x^2 + v_min^2)", 1e-6),
        real_list_param("axis", {0.0, 0.0, -1.0}, "1",
                        "spin axis in body coordinates (positive spin rolls forward along axis x up)"),
        real_list_param("up", {0.0, 1.0, 0.0}, "1", "ground normal (global), pointing out of the ground"),
        real_list_param("ground_point", {0.0, 0.0, 0.0}, "m", "a point of the ground plane (global)"),
    };
    return i;
  }

  explicit MagicFormulaTyre(const Params& p)
      : r0_(p.real("radius")),
        kz_(p.real("vertical_stiffness")),
        cz_(p.real("vertical_damping")),
        mu_x_(p.real("mu_x")),
        mu_y_(p.real("mu_y")),
        fx_{p.real("B_x"), p.real("C_x"), p.real("E_x")},
        fy_{p.real("B_y"), p.real("C_y"), p.real("E_y")},
        kappa_m_(fx_.peak_slip()),
        alpha_m_(fy_.peak_slip()),
        fr_(p.real("rolling_resistance")),
        v_rr_(p.real("rolling_speed")),
        v_min_(p.real("slip_speed")),
        axis_(vec(p, "axis")),
        up_(vec(p, "up")),
        ground_(vec(p, "ground_point", false)) {}

  void evaluate(const ForceState& st, Wrench& out) const override {
    out.force.setZero();
    out.torque.setZero();
    const Eigen::Vector3d a = (st.rotation * axis_).normalized();
    Eigen::Vector3d w = -(up_ - up_.dot(a) * a);
    const double wn = w.norm();
    if (!(wn > 1e-6)) return;  // the wheel lies flat (or a trial state is not finite): no rolling contact
    w /= wn;
    const double h = (st.position - ground_).dot(up_), cos_w = -w.dot(up_);
    const double r_l = h / cos_w, delta = r0_ - r_l;
    if (!(delta > 0.0)) return;
    const Eigen::Vector3d e_x = a.cross(up_).normalized(), e_y = up_.cross(e_x);
    const double Fz = std::max(0.0, kz_ * delta - cz_ * st.velocity.dot(up_) / cos_w);
    const double vx = st.velocity.dot(e_x), vy = st.velocity.dot(e_y), spin = st.angular_velocity.dot(a);
    const double r_e = r0_ - delta / 3.0, v_ref = std::sqrt(vx * vx + v_min_ * v_min_);
    const double kappa = (spin * r_e - vx) / v_ref, alpha = std::atan(vy / v_ref);
    const double lx = kappa / kappa_m_, ly = alpha / alpha_m_, l = std::hypot(lx, ly);
    double Fx = 0.0, Fy = 0.0;
    if (l > 0.0) {
      Fx = lx / l * mu_x_ * Fz * fx_(l * kappa_m_);
      Fy = -ly / l * mu_y_ * Fz * fy_(l * alpha_m_);
    }
    out.force = Fx * e_x + Fy * e_y + Fz * up_;
    out.torque = (r_l * w).cross(out.force) - fr_ * Fz * r_l * std::tanh(spin * r_e / v_rr_) * a;
  }

 private:
  static Eigen::Vector3d vec(const Params& p, const char* name, bool unit = true) {
    const auto v = p.reals(name);
    if (v.size() != 3)
      throw ParameterError(std::string("/") + name, "expected 3 numbers, found " + std::to_string(v.size()));
    Eigen::Vector3d x(v[0], v[1], v[2]);
    if (!x.allFinite()) throw ParameterError(std::string("/") + name, "expected finite numbers");
    if (!unit) return x;
    if (x.norm() < 1e-12)
      throw ParameterError(std::string("/") + name, "expected a direction of non-zero length, found [0, 0, 0]");
    return x.normalized();
  }

  double r0_, kz_, cz_, mu_x_, mu_y_;
  MagicFormula fx_, fy_;
  double kappa_m_, alpha_m_, fr_, v_rr_, v_min_;  // slips of the peaks
  Eigen::Vector3d axis_, up_, ground_;
};

}  // namespace

STRIDE_FORCE_ELEMENT(MagicFormulaTyre)
