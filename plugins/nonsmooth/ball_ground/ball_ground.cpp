// A ball (solid sphere, mass m, radius r, moment of inertia 2/5 m r²) moving in a vertical
// plane over the ground Y = 0, q = [x, y, θ] (θ counter-clockwise). One normal row (gap
// g = y − r, J = [0, 1, 0]) and one friction row (slip of the contact point ẋ + r θ̇,
// J = [1, 0, r], bounds ±μ λ̂_n). Impacts are inelastic (Newton restitution 0: the MLCP drives
// the normal velocity to zero at the step that closes the gap), so a dropped ball lands and
// stays; with friction a sliding or spinning ball ends up rolling (ẋ = −r θ̇, the rolling speed
// 5/7 (ẋ₀ − 2/5 r θ̇₀) of a sphere). With height = 0 the ball starts resting on the ground,
// pressed in by the static penetration m g / k.
#include <cmath>

#include "../common/closed_model.hpp"

namespace {

using namespace stride;

class BallGround final : public nonsmooth::Closed<NonsmoothModel> {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "ball_ground";
    i.kind = Kind::subsystem;
    i.form = Form::multibody;
    i.version = "1.0";
    i.description =
        "Ball dropped on the ground: inelastic impact, resting contact, Coulomb friction and rolling (needs mlcp)";
    i.parameters = {
        real_param("mass", 1.0, "kg", "mass of the ball", 1e-9),
        real_param("radius", 0.1, "m", "radius of the ball", 1e-6),
        real_param("mu", 0.5, "1", "Coulomb friction coefficient", 0.0, 10.0),
        real_param("height", 0.5, "m", "initial height of the lowest point above the ground (0: resting)", 0.0),
        real_param("vx0", 0.0, "m/s", "initial horizontal velocity"),
        real_param("omega0", 0.0, "rad/s", "initial angular velocity (counter-clockwise)"),
        real_param("stiffness", 1e9, "N/m", "contact stiffness k of the normal row", 1e-3),
        real_param("relaxation", 0.0, "s", "relaxation time tau of the normal row (damping k tau)", 0.0),
        real_param("friction_stiffness", 1e12, "N/m", "regularization stiffness of the friction row", 1e-3),
    };
    return i;
  }
  explicit BallGround(const Params& p)
      : m_(p.real("mass")), r_(p.real("radius")), mu_(p.real("mu")), h0_(p.real("height")), vx0_(p.real("vx0")),
        w0_(p.real("omega0")), k_(p.real("stiffness")), tau_(p.real("relaxation")), kt_(p.real("friction_stiffness")),
        I_(0.4 * m_ * r_ * r_) {}

  std::vector<PortSpec> ports() const override {
    return {output("x", 1, "m", "horizontal position of the centre"),
            output("y", 1, "m", "height of the centre"),
            output("gap", 1, "m", "y - r (negative: penetration)"),
            output("vx", 1, "m/s", "horizontal velocity"),
            output("vy", 1, "m/s", "vertical velocity"),
            output("omega", 1, "rad/s", "angular velocity (counter-clockwise)"),
            output("slip", 1, "m/s", "slip velocity of the contact point, vx + r omega"),
            output("energy", 1, "J", "kinetic + gravitational energy (datum y = 0)")};
  }
  MultibodySizes sizes() const override { return {3, 0, 0}; }
  void initial_state(double, VectorRef q, VectorRef v) override {
    const double g0 = h0_ > 0.0 ? h0_ : -m_ * nonsmooth::gravity / k_;
    q << 0.0, r_ + g0, 0.0;
    v << vx0_, 0.0, w0_;
  }
  void mass_matrix(ConstVectorRef, MatrixRef M) override {
    M.setZero();
    M(0, 0) = M(1, 1) = m_;
    M(2, 2) = I_;
  }
  void coriolis(ConstVectorRef, ConstVectorRef, VectorRef c) override { c.setZero(); }
  void applied_forces(double, ConstVectorRef, ConstVectorRef, VectorRef f) override {
    f << 0.0, -m_ * nonsmooth::gravity, 0.0;
  }
  std::vector<ContactRow> contact_rows() const override {
    return {{ContactKind::normal, 0, k_, tau_}, {ContactKind::friction, 0, kt_, 0.0}};
  }
  void contacts(double, ConstVectorRef q, ConstVectorRef, MatrixRef J, VectorRef gap, VectorRef mu) override {
    J.row(0) << 0.0, 1.0, 0.0;
    J.row(1) << 1.0, 0.0, r_;
    gap << q[1] - r_, 0.0;
    mu << 0.0, mu_;
  }
  void outputs(const MultibodyState& st, std::span<double> y) override {
    y[0] = st.q[0];
    y[1] = st.q[1];
    y[2] = st.q[1] - r_;
    y[3] = st.v[0];
    y[4] = st.v[1];
    y[5] = st.v[2];
    y[6] = st.v[0] + r_ * st.v[2];
    y[7] = energy_at(st.t, st.q, st.v);
  }
  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    return 0.5 * m_ * (v[0] * v[0] + v[1] * v[1]) + 0.5 * I_ * v[2] * v[2] + m_ * nonsmooth::gravity * q[1];
  }

 private:
  double m_, r_, mu_, h0_, vx0_, w0_, k_, tau_, kt_, I_;
};

}  // namespace

STRIDE_PLUGIN(BallGround)
