// Force element `terramechanics_wheel`: the wheel–soil forces of Peiret 2018 Appendix B
// (terramechanics.hpp) on a wheel body of a mechanism, attached at the wheel centre.
// Terrain: the plane through `ground_point` with upward normal `up`. The wheel spins about
// `axis` (body coordinates). With a = the spin axis projected on the terrain plane (unit),
// the rolling direction is e_t = a × up, the forward speed v = ċ·e_t, the spin ω = ω·a,
// the sinkage z = r − (c − ground_point)·up and its rate ż = −ċ·up; travelling backwards the law
// is mirrored (a and e_t reversed), blended smoothly through standstill. Wrench at the centre:
// force F_n up + (F_t − R_c) e_t (lateral force zero, as in the paper), torque −T_r a.
#include <stride/force_element.hpp>
#include <stride/stride.hpp>

#include "terramechanics.hpp"

namespace {

using namespace stride;
namespace tm = stride::terramechanics;

class TerramechanicsWheel final : public ForceElement, public ForceElementDerivatives {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "terramechanics_wheel";
    i.version = "1.0";
    i.description = "Wheel-soil forces of Peiret 2018 Eq. 56-61 (Wong), Table 8 dry sand, Gauss-Legendre quadrature";
    const tm::Soil s;
    const tm::Wheel w;
    i.parameters = {
        real_param("radius", w.r, "m", "wheel radius r (Table 6)", 1e-3),
        real_param("width", w.b, "m", "wheel width b (Table 6)", 1e-3),
        real_param("n", s.n, "1", "sinkage exponent (Table 8)", 0.1, 3.0),
        real_param("cohesion", s.c, "Pa", "cohesion c (Table 8)", 0.0),
        real_param("friction_angle", 33.1, "deg", "friction angle phi (Table 8)", 0.0, 89.0),
        // Their units depend on the exponent n, which no unit text can say: given in the doc.
        real_param("k_c", s.k_c, "", "cohesive pressure-sinkage modulus in N/m^(n+1) (Table 8)", 0.0),
        real_param("k_phi", s.k_phi, "", "frictional pressure-sinkage modulus in N/m^(n+2) (Table 8)", 0.0),
        real_param("K", s.K, "m", "shear deformation modulus (Table 8)", 1e-6),
        real_param("damping_fraction", 0.1, "s",
                   "c_z = damping_fraction * (k_c/b + k_phi): the paper's 10 % of the terrain stiffness (Eq. 58)", 0.0),
        real_param("slip_speed", 0.01, "m/s", "speed below which the slip denominator max(|r w|, |v|) is held", 1e-6),
        integer_param("quadrature_points", 16, "Gauss-Legendre points on [theta2, theta1]", 1, 256),
        real_list_param("axis", {0.0, 0.0, 1.0}, "1", "spin axis in body coordinates"),
        real_list_param("up", {0.0, 1.0, 0.0}, "1", "terrain normal (global), pointing out of the soil"),
        real_list_param("ground_point", {0.0, 0.0, 0.0}, "m", "a point of the terrain surface (global)"),
    };
    return i;
  }

  explicit TerramechanicsWheel(const Params& p) {
    wheel_.r = p.real("radius");
    wheel_.b = p.real("width");
    soil_.n = p.real("n");
    soil_.c = p.real("cohesion");
    soil_.phi = p.real("friction_angle") * M_PI / 180.0;
    soil_.k_c = p.real("k_c");
    soil_.k_phi = p.real("k_phi");
    soil_.K = p.real("K");
    c_z_ = p.real("damping_fraction") * (soil_.k_c / wheel_.b + soil_.k_phi);
    v_eps_ = p.real("slip_speed");
    n_ = int(p.integer("quadrature_points"));
    tm::gauss_legendre(n_, x_, w_);
    auto vec = [&](const char* name) {
      const auto v = p.reals(name);
      if (v.size() != 3)
        throw ParameterError(std::string("/") + name,
                             std::string("expected 3 numbers, found ") + std::to_string(v.size()));
      return Eigen::Vector3d(v[0], v[1], v[2]);
    };
    axis_ = vec("axis");
    up_ = vec("up");
    ground_ = vec("ground_point");
    if (axis_.norm() < 1e-12) throw ParameterError("/axis", "expected a direction of non-zero length, found [0, 0, 0]");
    if (up_.norm() < 1e-12) throw ParameterError("/up", "expected a direction of non-zero length, found [0, 0, 0]");
    axis_.normalize();
    up_.normalize();
    // Quadrature error at a representative state (half-radius... a 3 cm sinkage, 20 % slip):
    // N points against 4N points.
    std::vector<double> x4, w4;
    tm::gauss_legendre(4 * n_, x4, w4);
    const tm::Contact a = tm::contact(soil_, wheel_, 0, v_eps_, 0.03, 0, 0.4, 0.5 / wheel_.r, x_, w_);
    const tm::Contact b = tm::contact(soil_, wheel_, 0, v_eps_, 0.03, 0, 0.4, 0.5 / wheel_.r, x4, w4);
    quad_err_ = std::max({std::abs(a.Fn - b.Fn) / std::abs(b.Fn), std::abs(a.Ft - b.Ft) / std::abs(b.Ft),
                          std::abs(a.Rc - b.Rc) / std::abs(b.Rc), std::abs(a.Tr - b.Tr) / std::abs(b.Tr)});
  }

  void evaluate(const ForceState& st, Wrench& out) const override {
    out.force.setZero();
    out.torque.setZero();
    Rolling k;
    if (!rolling(st, k)) return;
    double Fn = 0, Fx = 0, Tr = 0;
    auto c = contact(k.z, k.v, k.omega, k.forward, k.mirrored);
    c[0].Fn += c_z_ * k.z_dot, c[1].Fn += c_z_ * k.z_dot;
    if (k.forward) Fn += k.wf * c[0].Fn, Fx += k.wf * (c[0].Ft - c[0].Rc), Tr += k.wf * c[0].Tr;
    if (k.mirrored) Fn += (1 - k.wf) * c[1].Fn, Fx -= (1 - k.wf) * (c[1].Ft - c[1].Rc), Tr -= (1 - k.wf) * c[1].Tr;
    out.force = Fn * up_ + Fx * k.e_t;
    out.torque = -Tr * k.a;
  }

  // The same wrench and its derivatives (chain rule through a, e_t, z, ż, v, ω and the slip;
  // the soil law's derivatives from one pass of the quadrature, terramechanics.hpp).
  void evaluate_derivatives(const ForceState& st, Wrench& out, WrenchJacobian& J) const override {
    out.force.setZero();
    out.torque.setZero();
    J.setZero();
    Rolling k;
    if (!rolling(st, k)) return;
    const double r = wheel_.r, v = k.v, wf_u = 2.0 * k.wf * (1.0 - k.wf) / v_eps_;  // ∂wf/∂u = ½ (1 − tanh²)/v_eps
    // Slip (r ω − v)/D with D = max(|r ω|, |v|, v_eps): its derivatives on D's active branch.
    const double rw = r * k.omega, D = std::max({std::abs(rw), std::abs(v), v_eps_}), slip = (rw - v) / D;
    double s_rw = 1.0 / D, s_v = -1.0 / D;
    if (std::abs(rw) >= std::abs(v) && std::abs(rw) > v_eps_) s_rw -= slip * (rw > 0 ? 1.0 : -1.0) / D;
    else if (std::abs(v) > v_eps_) s_v -= slip * (v > 0 ? 1.0 : -1.0) / D;
    const tm::Nodes& nd = tm::at_sinkage(soil_, wheel_, k.z, x_, w_, nodes_for(k.z));
    std::array<tm::ContactSlopes, 2> S{};
    if (k.forward && k.mirrored) S = tm::contact_slopes<2>(soil_, wheel_, k.z, nd, {slip, -slip});
    else if (k.forward) S[0] = tm::contact_slopes<1>(soil_, wheel_, k.z, nd, {slip})[0];
    else S[1] = tm::contact_slopes<1>(soil_, wheel_, k.z, nd, {-slip})[0];
    // (F_n, F_x, T_r) and their derivatives with respect to z, ż, the slip and u = r ω + v.
    std::array<double, 3> X{}, X_z{}, X_zd{}, X_s{}, X_u{};
    for (int m = 0; m < 2; ++m) {
      if (!(m == 0 ? k.forward : k.mirrored)) continue;
      const tm::ContactSlopes& c = S[std::size_t(m)];
      const double w = m == 0 ? k.wf : 1.0 - k.wf, w_u = m == 0 ? wf_u : -wf_u,
                   sg = m == 0 ? 1.0 : -1.0;  // mirrored: slip −s
      const std::array<double, 3> f{c.f[0] + c_z_ * k.z_dot, sg * (c.f[1] - c.f[2]), sg * c.f[3]};
      const std::array<double, 3> f_z{c.f_z[0], sg * (c.f_z[1] - c.f_z[2]), sg * c.f_z[3]};
      const std::array<double, 3> f_s{sg * c.f_s[0], c.f_s[1] - c.f_s[2], c.f_s[3]};
      for (std::size_t i = 0; i < 3; ++i)
        X[i] += w * f[i], X_z[i] += w * f_z[i], X_s[i] += w * f_s[i], X_u[i] += w_u * f[i];
      X_zd[0] += w * c_z_;
    }
    // Attitude: b = A axis turns by δθ × b; a = P b/|P b| (P the projection on the terrain plane).
    const Eigen::Matrix3d P = Eigen::Matrix3d::Identity() - up_ * up_.transpose();
    const Eigen::Matrix3d Da = -(P - k.a * k.a.transpose()) * skew(k.b) / k.an, De = -skew(up_) * Da;
    const Eigen::RowVector3d v_th = st.velocity.transpose() * De, w_th = st.angular_velocity.transpose() * Da;
    Eigen::Matrix<double, 3, 12> rows;  // ∂(F_n, F_x, T_r)/∂(x, ẋ, δθ, ω)
    for (Eigen::Index i = 0; i < 3; ++i) {
      const auto ii = std::size_t(i);
      const double X_v = X_s[ii] * s_v + X_u[ii], X_w = r * (X_s[ii] * s_rw + X_u[ii]);
      rows.block<1, 3>(i, 0) = -X_z[ii] * up_.transpose();
      rows.block<1, 3>(i, 3) = -X_zd[ii] * up_.transpose() + X_v * k.e_t.transpose();
      rows.block<1, 3>(i, 6) = X_v * v_th + X_w * w_th;
      rows.block<1, 3>(i, 9) = X_w * k.a.transpose();
    }
    out.force = X[0] * up_ + X[1] * k.e_t;
    out.torque = -X[2] * k.a;
    J.topRows<3>() = up_ * rows.row(0) + k.e_t * rows.row(1);
    J.block<3, 3>(0, 6) += X[1] * De;
    J.bottomRows<3>() = -k.a * rows.row(2);
    J.block<3, 3>(3, 6) -= X[2] * Da;
  }

  // The contact forces without damping (c_z ż added by the caller). The force derivatives
  // evaluate the wheel at a state and its perturbations: a perturbation that moves the centre
  // along the terrain or changes only ż leaves (z, v, ω) as at a state just evaluated, so the
  // last few results are kept (enough for the ~12 perturbations of one wheel body to find the
  // unperturbed state again), and the quadrature nodes of the last two sinkages (the state's
  // and the one perturbed in height).
  // An element instance belongs to one model, evaluated from one thread.
  std::array<tm::Contact, 2> contact(double z, double v, double omega, bool forward, bool mirrored) const {
    for (const Kept& k : kept_)
      if (k.valid && k.z == z && k.v == v && k.omega == omega && k.forward == forward && k.mirrored == mirrored)
        return k.c;
    Kept& k = kept_[next_];
    next_ = (next_ + 1) % kept_.size();
    k.c = tm::contact_both_ways(soil_, wheel_, c_z_, v_eps_, z, 0.0, v, omega, x_, w_, nodes_for(z), forward, mirrored);
    k.z = z, k.v = v, k.omega = omega, k.forward = forward, k.mirrored = mirrored, k.valid = true;
    return k.c;
  }

  // What the wheel's contact reads of the state: b = A axis, a its projection on the terrain
  // plane (unit; |P b| = an), the rolling direction e_t = a × up, the sinkage z, the speed v
  // along e_t, the spin ω about a and ż. Eq. 57 is written for travel along e_t (entry angle
  // ahead); travelling the other way the law is mirrored (axis −a, rolling direction −e_t). Near
  // standstill the two are blended with weight wf = ½ (1 + tanh(u / v_eps)), u = r ω + v, so the
  // force stays continuous: Newton iterations in implicit formulations cross u = 0 at every step
  // of a vehicle at rest. False without contact (the wheel lying flat, or above the terrain).
  struct Rolling {
    Eigen::Vector3d b, a, e_t;
    double an = 0, z = 0, v = 0, omega = 0, z_dot = 0, wf = 0;
    bool forward = false, mirrored = false;
  };
  bool rolling(const ForceState& st, Rolling& k) const {
    k.b = st.rotation * axis_;
    k.a = k.b - k.b.dot(up_) * up_;
    k.an = k.a.norm();
    if (k.an < 1e-9) return false;
    k.a /= k.an;
    k.z = wheel_.r - (st.position - ground_).dot(up_);
    if (k.z <= 0) return false;
    k.e_t = k.a.cross(up_);
    k.v = st.velocity.dot(k.e_t), k.omega = st.angular_velocity.dot(k.a), k.z_dot = -st.velocity.dot(up_);
    k.wf = 0.5 * (1.0 + std::tanh((wheel_.r * k.omega + k.v) / v_eps_));
    k.forward = k.wf > 1e-12, k.mirrored = k.wf < 1.0 - 1e-12;
    return true;
  }

  // One of the last two node sets (the state's sinkage and the one perturbed in height): the one
  // prepared for z, else the one used less recently.
  tm::Nodes& nodes_for(double z) const {
    const std::size_t use = nodes_[0].z == z ? 0 : nodes_[1].z == z ? 1 : older_nodes_;
    older_nodes_ = 1 - use;
    return nodes_[use];
  }
  static Eigen::Matrix3d skew(const Eigen::Vector3d& x) {
    Eigen::Matrix3d S;
    S << 0, -x.z(), x.y(), x.z(), 0, -x.x(), -x.y(), x.x(), 0;
    return S;
  }

  json report() const override {
    return {{"damping_c_z", c_z_}, {"quadrature_points", n_},
            {"quadrature_relative_error_at_3cm_sinkage_20pct_slip", quad_err_}};
  }

 private:
  tm::Soil soil_;
  tm::Wheel wheel_;
  double c_z_ = 0, v_eps_ = 0.01, quad_err_ = 0;
  int n_ = 16;
  std::vector<double> x_, w_;
  struct Kept {
    bool valid = false, forward = false, mirrored = false;
    double z = 0, v = 0, omega = 0;
    std::array<tm::Contact, 2> c{};
  };
  mutable std::array<Kept, 8> kept_{};
  mutable std::size_t next_ = 0;
  mutable std::array<tm::Nodes, 2> nodes_;
  mutable std::size_t older_nodes_ = 0;  // the set used less recently
  Eigen::Vector3d axis_, up_, ground_;
};

}  // namespace

STRIDE_FORCE_ELEMENT(TerramechanicsWheel)
