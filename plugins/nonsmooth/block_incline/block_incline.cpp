// A block (point mass m) on a plane inclined by θ, with Coulomb friction μ, in world
// coordinates q = [X, Y]. The plane passes through the origin; its downhill direction is
// t = (cos θ, −sin θ) and its normal n = (sin θ, cos θ). One normal row (gap g = n·q, J = nᵀ)
// and two friction rows (slip t·v and −t·v, J = ±tᵀ; each bounded by μ λ̂_n: a two-facet
// Coulomb cone, exact in the plane). The block starts at s0 along the incline with speed v0,
// pressed into the plane by the static penetration m g cos θ / k so that the contact spring
// starts in equilibrium. Analytic: it sticks when tan θ ≤ μ (and v0 = 0); otherwise it slides
// with s̈ = g (sin θ − μ cos θ).
// With actuated = true it has one interface velocity w_i = s_dot (D_i = tᵀ) driven by the input
// force f along the incline (power bond "drive"), and outputs the nonsmooth interface model
// M_eff, f_eff of the formulation: M̃ = m, f̃ = m g (sin θ − μ cos θ) while sliding downhill,
// M̃ → ∞ (only the friction regularization) while sticking.
#include <cmath>

#include "../common/closed_model.hpp"

namespace {

using namespace stride;

class BlockIncline final : public nonsmooth::Closed<NonsmoothModel> {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "block_incline";
    i.kind = Kind::subsystem;
    i.form = Form::multibody;
    i.version = "1.0";
    i.description = "Block on an incline with Coulomb friction (nonsmooth contact test; needs the mlcp formulation)";
    i.parameters = {
        real_param("angle", 0.5235987755982988, "rad", "inclination theta of the plane", 0.0, 1.5),
        real_param("mu", 0.3, "1", "Coulomb friction coefficient", 0.0, 10.0),
        real_param("mass", 1.0, "kg", "mass of the block", 1e-9),
        real_param("s0", 0.0, "m", "initial position along the incline (downhill positive)"),
        real_param("v0", 0.0, "m/s", "initial velocity along the incline (downhill positive)"),
        real_param("stiffness", 1e9, "N/m", "contact stiffness k of the normal row", 1e-3),
        real_param("relaxation", 0.0, "s", "relaxation time tau of the normal row (damping k tau)", 0.0),
        real_param("friction_stiffness", 1e12, "N/m",
                   "regularization stiffness of the friction rows (sticking creep C lambda)", 1e-3),
        bool_param("actuated", false,
                   "input force f along the incline; outputs M_eff and f_eff of the interface model"),
    };
    return i;
  }
  explicit BlockIncline(const Params& p)
      : theta_(p.real("angle")), mu_(p.real("mu")), m_(p.real("mass")), s0_(p.real("s0")), v0_(p.real("v0")),
        k_(p.real("stiffness")), tau_(p.real("relaxation")), kt_(p.real("friction_stiffness")),
        actuated_(p.boolean("actuated")),
        t_(std::cos(theta_), -std::sin(theta_)), n_(std::sin(theta_), std::cos(theta_)) {}

  std::vector<PortSpec> ports() const override {
    std::vector<PortSpec> ps;
    if (actuated_)
      ps.push_back(
          bonded(input("f", 1, "N", "force along the incline (downhill positive)"), BondRole::effort, "drive"));
    PortSpec s_dot = output("s_dot", 1, "m/s", "velocity along the incline");
    if (actuated_) s_dot = bonded(std::move(s_dot), BondRole::flow, "drive");
    ps.push_back(output("s", 1, "m", "position along the incline (downhill positive)"));
    ps.push_back(std::move(s_dot));
    ps.push_back(output("gap", 1, "m", "normal gap (negative: penetration)"));
    ps.push_back(output("energy", 1, "J", "kinetic + gravitational energy (datum Y = 0)"));
    if (actuated_) {
      ps.push_back(output("M_eff", 1, "kg", "effective mass of the nonsmooth interface model"));
      ps.push_back(output("f_eff", 1, "N", "effective force of the nonsmooth interface model"));
    }
    return ps;
  }
  MultibodySizes sizes() const override { return {2, 0, actuated_ ? 1u : 0u}; }
  void interface_forces(double t, ConstVectorRef, ConstVectorRef, VectorRef lambda_i) override {
    if (actuated_) lambda_i[0] = inputs().at(0, t)[0];
  }
  void interface_jacobian(ConstVectorRef, MatrixRef D_i) override {
    if (actuated_) D_i.row(0) = t_.transpose();
  }
  void initial_state(double, VectorRef q, VectorRef v) override {
    const double g0 = -m_ * nonsmooth::gravity * std::cos(theta_) / k_;
    q = s0_ * t_ + g0 * n_;
    v = v0_ * t_;
  }
  void mass_matrix(ConstVectorRef, MatrixRef M) override { M = m_ * Eigen::Matrix2d::Identity(); }
  void coriolis(ConstVectorRef, ConstVectorRef, VectorRef c) override { c.setZero(); }
  void applied_forces(double, ConstVectorRef, ConstVectorRef, VectorRef f) override {
    f[0] = 0.0;
    f[1] = -m_ * nonsmooth::gravity;
  }
  std::vector<ContactRow> contact_rows() const override {
    return {{ContactKind::normal, 0, k_, tau_}, {ContactKind::friction, 0, kt_, 0.0}};
  }
  void contacts(double, ConstVectorRef q, ConstVectorRef, MatrixRef J, VectorRef gap, VectorRef mu) override {
    J.row(0) = n_.transpose();
    J.row(1) = t_.transpose();
    gap << n_.dot(q.head<2>()), 0.0;
    mu << 0.0, mu_;
  }
  void outputs(const MultibodyState& st, std::span<double> y) override {
    y[0] = t_.dot(st.q.head<2>());
    y[1] = t_.dot(st.v.head<2>());
    y[2] = n_.dot(st.q.head<2>());
    y[3] = energy_at(st.t, st.q, st.v);
    if (actuated_) {
      y[4] = st.M_eff(0, 0);
      y[5] = st.f_eff[0];
    }
  }
  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    return 0.5 * m_ * v.squaredNorm() + m_ * nonsmooth::gravity * q[1];
  }

 private:
  double theta_, mu_, m_, s0_, v0_, k_, tau_, kt_;
  bool actuated_;
  Eigen::Vector2d t_, n_;
};

}  // namespace

STRIDE_PLUGIN(BlockIncline)
