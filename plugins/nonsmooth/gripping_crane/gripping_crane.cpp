// Reduced gripping crane (BENCHMARKS.md §6): the planar double-actuated crane of Peiret 2018
// Sect. 4.1.1 in dependent coordinates [x_P, y_P, θ1, x_R, y_R] (revolute joints at O, Q, the
// actuators B–P and P–midpoint of link 2 as interface velocities s1, s2; 3 bilateral
// constraints Eq. 21b) plus a load of mass m_L, q = [.., x_L, y_L], held at the tip R by a
// two-jaw gripper through unilateral contacts with Coulomb friction. The jaws stay horizontal (a
// rotator keeps the gripper level), so the load hangs from R by friction alone: it slips when
// the vertical acceleration asks for more than 2 μ times the grip force. Two gripper variants
// (parameter jaw_joint):
//  - prismatic (default): the left jaw is fixed to R, the right jaw is a body of mass m_J,
//    q = [.., x_L, y_L, x_J, y_J], sliding on the gripper through a prismatic joint along the
//    jaw-closing direction x: one more bilateral row y_J − y_R = 0. A gripper cylinder between R
//    and the jaw pushes it shut with the closing force F (−F on x_J, +F on x_R):
//      left jaw:  gap x_L − x_R,  right jaw: gap x_J − x_L   (normal rows),
//      friction:  slips ẏ_L − ẏ_R and ẏ_L − ẏ_J, each bounded by μ times its normal impulse.
//    The state starts at the static grip: each contact compressed by F / k. The interface
//    model (mlcp effective M̃, f̃) cancels F on R only up to the contact compliance, an O(F/k)
//    error in f̃; stiff jaws (k ≥ 1e10 N/m in the manifests) keep it negligible for the coupling.
//  - rigid: both jaws fixed to R, q = [.., x_L, y_L], squeezing the load by the interference δ:
//      left jaw:  gap x_L − x_R − δ, right jaw: gap x_R − x_L − δ  (grip force k δ per jaw).
// Interface and ports as the crane models with force coupling (input f_h, outputs s, s_dot,
// s_ddot, M_eff, f_eff, energy, x_R, y_R, x_R_dot) plus y_L, the jaw slip ẏ_L − ẏ_R, the jaw
// opening (distance between the jaw faces) and the prismatic joint drift y_J − y_R.
// Needs the mlcp formulation; its interface model includes the load (and the sliding jaw)
// while the jaws stick.
#include <cmath>

#include <stride/nonsmooth.hpp>

#include "../../common/crane.hpp"

namespace {

using namespace stride;

class GrippingCrane final : public NonsmoothModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "gripping_crane";
    i.kind = Kind::subsystem;
    i.form = Form::multibody;
    i.version = "1.1";
    i.description =
        "Double-actuated planar crane with a friction gripper holding a load, sliding jaw on a prismatic joint "
        "(nonsmooth; needs mlcp)";
    i.parameters = crane::geometry_params();
    i.parameters.push_back(real_param("load_mass", 100.0, "kg", "mass m_L of the gripped load", 1e-6));
    i.parameters.push_back(real_param("mu", 0.5, "1", "jaw-load friction coefficient", 0.0, 10.0));
    i.parameters.push_back(real_param("grip_stiffness", 1e7, "N/m", "contact stiffness k of each jaw", 1e-3));
    i.parameters.push_back(choice_param(
        "jaw_joint", "prismatic", {"prismatic", "rigid"},
        "right jaw on a prismatic joint pushed shut by closing_force, or both jaws fixed to R squeezing by preload"));
    i.parameters.push_back(real_param("jaw_mass", 10.0, "kg", "mass m_J of the sliding jaw (prismatic)", 1e-6));
    i.parameters.push_back(real_param("closing_force", 1e4, "N",
                                      "gripper cylinder force F pushing the sliding jaw shut (prismatic)", 0.0));
    i.parameters.push_back(real_param(
        "preload", 1e-3, "m",
        "jaw interference delta (rigid: grip force k delta per jaw); negative: open jaws with clearance -delta"));
    i.parameters.push_back(real_param("grip_relaxation", 0.0, "s", "relaxation time of the jaw contacts", 0.0));
    i.parameters.push_back(
        real_param("friction_stiffness", 1e12, "N/m", "regularization stiffness of the friction rows", 1e-3));
    return i;
  }
  explicit GrippingCrane(const Params& p)
      : geo_(crane::geometry_from(p)), mL_(p.real("load_mass")), mu_(p.real("mu")), k_(p.real("grip_stiffness")),
        prismatic_(p.string("jaw_joint") == "prismatic"), mJ_(p.real("jaw_mass")), F_(p.real("closing_force")),
        delta_(p.real("preload")), tau_(p.real("grip_relaxation")), kt_(p.real("friction_stiffness")),
        H_(crane::dependent_mass_matrix(geo_)), g_(crane::dependent_gravity_forces(geo_)) {}

  std::vector<PortSpec> ports() const override {
    const auto with = [](PortSpec s, std::vector<std::string> e) {
      s.elements = std::move(e);
      return s;
    };
    return {
        with(bonded(input("f_h", 2, "N", "actuator forces, positive along increasing s"), BondRole::effort, "actuator"),
             {"f1", "f2"}),
        with(output("s", 2, "m", "actuator lengths"), {"s1", "s2"}),
        with(bonded(output("s_dot", 2, "m/s", "actuator elongation rates"), BondRole::flow, "actuator"),
             {"s1_dot", "s2_dot"}),
        with(output("s_ddot", 2, "m/s^2", "actuator accelerations of the interface model with the current input", true),
             {"s1_ddot", "s2_ddot"}),
        with(output("M_eff", 4, "kg", "effective mass of the nonsmooth interface model, row-major"),
             {"M11", "M12", "M21", "M22"}),
        with(output("f_eff", 2, "N", "effective force of the nonsmooth interface model"), {"f1", "f2"}),
        output("energy", 1, "J", "kinetic + gravitational energy of crane, load and jaw (+ closing-force potential)"),
        output("x_R", 1, "m", "x of the tip R (gripper)"),
        output("y_R", 1, "m", "y of the tip R (gripper)"),
        output("x_R_dot", 1, "m/s", "x velocity of the tip R"),
        output("y_L", 1, "m", "y of the load"),
        output("slip", 1, "m/s", "vertical slip of the load in the jaws, y_L_dot - y_R_dot"),
        output("jaw_opening", 1, "m", "distance between the jaw faces (prismatic: x_J - x_R; rigid: -2 delta)"),
        output("joint_drift", 1, "m", "prismatic joint violation y_J - y_R (0 for rigid jaws)")};
  }
  MultibodySizes sizes() const override { return prismatic_ ? MultibodySizes{9, 4, 2} : MultibodySizes{7, 3, 2}; }
  void initial_state(double, VectorRef q, VectorRef v) override {
    crane::Vector5d x, u;
    crane::dependent_from_independent(geo_, {geo_.theta1_0, geo_.theta2_0}, Eigen::Vector2d::Zero(), x, u);
    q.head<5>() = x;
    // Prismatic: start at the static grip, both contacts compressed by F / k.
    const double c = prismatic_ ? F_ / k_ : 0.0;
    q[5] = x[3] - c;
    q[6] = x[4];
    if (prismatic_) q[7] = x[3] - 2.0 * c, q[8] = x[4];
    v.setZero();
  }
  void mass_matrix(ConstVectorRef, MatrixRef M) override {
    M.setZero();
    M.topLeftCorner<5, 5>() = H_;
    M(5, 5) = M(6, 6) = mL_;
    if (prismatic_) M(7, 7) = M(8, 8) = mJ_;
  }
  void coriolis(ConstVectorRef, ConstVectorRef, VectorRef c) override { c.setZero(); }
  void applied_forces(double, ConstVectorRef, ConstVectorRef, VectorRef f) override {
    f.head<5>() = g_;
    f[5] = 0.0;
    f[6] = -mL_ * geo_.g;
    if (prismatic_) {
      f[3] += F_;  // reaction of the gripper cylinder on R
      f[7] = -F_;
      f[8] = -mJ_ * geo_.g;
    }
  }
  void interface_forces(double t, ConstVectorRef, ConstVectorRef, VectorRef lambda_i) override {
    const auto f = inputs().at(0, t);
    lambda_i[0] = f[0];
    lambda_i[1] = f[1];
  }
  void interface_jacobian(ConstVectorRef q, MatrixRef D_i) override {
    const crane::DependentActuators a = crane::dependent_actuators(geo_, q.head<5>(), crane::Vector5d::Zero());
    D_i.setZero();
    D_i.leftCols<5>() = a.D;
  }
  void interface_bias(ConstVectorRef q, ConstVectorRef v, VectorRef b_i) override {
    b_i = crane::dependent_actuators(geo_, q.head<5>(), v.head<5>()).D_dot_u;
  }
  // Rows 0-2: the crane's revolute loop (Eq. 21b); row 3 (prismatic): the jaw's guide y_J − y_R,
  // linear in q, so its Jacobian is constant and its bias zero.
  void constraints(double, ConstVectorRef q, VectorRef phi) override {
    phi.head<3>() = crane::constraints(geo_, q.head<5>());
    if (prismatic_) phi[3] = q[8] - q[4];
  }
  void constraint_jacobian(double, ConstVectorRef q, MatrixRef phi_q) override {
    phi_q.setZero();
    phi_q.topLeftCorner<3, 5>() = crane::constraint_jacobian(geo_, q.head<5>());
    if (prismatic_) phi_q(3, 8) = 1.0, phi_q(3, 4) = -1.0;
  }
  void constraint_bias(double, ConstVectorRef q, ConstVectorRef v, VectorRef b) override {
    b.head<3>() = crane::constraint_bias(geo_, q.head<5>(), v.head<5>());
    if (prismatic_) b[3] = 0.0;
  }
  std::vector<ContactRow> contact_rows() const override {
    return {{ContactKind::normal, 0, k_, tau_}, {ContactKind::normal, 0, k_, tau_},
            {ContactKind::friction, 0, kt_, 0.0}, {ContactKind::friction, 1, kt_, 0.0}};
  }
  void contacts(double, ConstVectorRef q, ConstVectorRef, MatrixRef J, VectorRef gap, VectorRef mu) override {
    J.setZero();
    J(0, 5) = 1.0, J(0, 3) = -1.0;
    J(2, 6) = 1.0, J(2, 4) = -1.0;
    if (prismatic_) {
      J(1, 7) = 1.0, J(1, 5) = -1.0;
      J(3, 6) = 1.0, J(3, 8) = -1.0;
      gap << q[5] - q[3], q[7] - q[5], 0.0, 0.0;
    } else {
      J(1, 3) = 1.0, J(1, 5) = -1.0;
      J(3, 6) = 1.0, J(3, 4) = -1.0;
      gap << q[5] - q[3] - delta_, q[3] - q[5] - delta_, 0.0, 0.0;
    }
    mu << 0.0, 0.0, mu_, mu_;
  }
  void outputs(const MultibodyState& st, std::span<double> y) override {
    const crane::DependentActuators a = crane::dependent_actuators(geo_, st.q.head<5>(), st.v.head<5>());
    std::size_t o = 0;
    y[o++] = a.s[0], y[o++] = a.s[1];
    y[o++] = a.s_dot[0], y[o++] = a.s_dot[1];
    for (int k = 0; k < 2; ++k) y[o++] = a.D.row(k).dot(st.v_dot.head<5>()) + a.D_dot_u[k];
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) y[o++] = st.M_eff(i, j);
    y[o++] = st.f_eff[0], y[o++] = st.f_eff[1];
    y[o++] = energy_at(st.t, st.q, st.v);
    y[o++] = st.q[3], y[o++] = st.q[4], y[o++] = st.v[3];
    y[o++] = st.q[6];
    y[o++] = st.v[6] - st.v[4];
    y[o++] = prismatic_ ? st.q[7] - st.q[3] : -2.0 * delta_;
    y[o++] = prismatic_ ? st.q[8] - st.q[4] : 0.0;
  }
  // The closing force is conservative (constant, between R and the jaw): potential F (x_J − x_R).
  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    double e = 0.5 * v.head<5>().dot(H_ * v.head<5>()) + crane::dependent_potential_energy(geo_, q.head<5>()) +
               0.5 * mL_ * v.segment<2>(5).squaredNorm() + mL_ * geo_.g * q[6];
    if (prismatic_) e += 0.5 * mJ_ * v.segment<2>(7).squaredNorm() + mJ_ * geo_.g * q[8] + F_ * (q[7] - q[3]);
    return e;
  }

 private:
  crane::Geometry geo_;
  double mL_, mu_, k_;
  bool prismatic_;
  double mJ_, F_, delta_, tau_, kt_;
  crane::Matrix5d H_;
  crane::Vector5d g_;
};

}  // namespace

STRIDE_PLUGIN(GrippingCrane)
