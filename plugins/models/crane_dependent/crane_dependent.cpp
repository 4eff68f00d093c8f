// Planar hydraulic crane in dependent coordinates x = [x_P, y_P, θ1, x_R, y_R] with the three
// constraints of Peiret 2018 Eq. 21b; interface Jacobian D_i of Eq. 23 and, for the second
// actuator, of s2 = |R|/2 (the midpoint of link 2 minus P is R/2 because Q = 2P).
// Needs a formulation that handles constraints (ali1, ali3p).
#include "../common/crane_model.hpp"

namespace {

using namespace stride;

class CraneDependent final : public crane::CraneModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "crane_dependent";
    i.kind = Kind::subsystem;
    i.form = Form::multibody;
    i.version = "1.0";
    i.description =
        "Planar hydraulic crane (Peiret 2018 Sect. 4.1), dependent coordinates [x_P, y_P, theta1, x_R, y_R], Eq. 21b";
    i.parameters = common_params();
    return i;
  }
  explicit CraneDependent(const Params& p)
      : CraneModel(p), H_(crane::dependent_mass_matrix(geo_)), g_(crane::dependent_gravity_forces(geo_)) {
    D_.setZero(Eigen::Index(p_), 5);
  }

  MultibodySizes sizes() const override { return {5, 3, p_}; }
  void initial_state(double, VectorRef q, VectorRef v) override {
    crane::Vector5d x, u;
    crane::dependent_from_independent(geo_, {geo_.theta1_0, geo_.theta2_0}, Eigen::Vector2d::Zero(), x, u);
    q = x;
    v = u;
  }
  void mass_matrix(ConstVectorRef, MatrixRef M) override { M = H_; }
  void coriolis(ConstVectorRef, ConstVectorRef, VectorRef c) override { c.setZero(); }
  void applied_forces(double, ConstVectorRef, ConstVectorRef, VectorRef f) override { f = g_; }
  void interface_jacobian(ConstVectorRef q, MatrixRef D_i) override {
    const crane::DependentActuators a = crane::dependent_actuators(geo_, q.head<5>(), crane::Vector5d::Zero());
    D_i = a.D.topRows(Eigen::Index(p_));
  }
  void constraints(double, ConstVectorRef q, VectorRef phi) override { phi = crane::constraints(geo_, q.head<5>()); }
  void constraint_jacobian(double, ConstVectorRef q, MatrixRef phi_q) override {
    phi_q = crane::constraint_jacobian(geo_, q.head<5>());
  }
  void constraint_bias(double, ConstVectorRef q, ConstVectorRef v, VectorRef b) override {
    b = crane::constraint_bias(geo_, q.head<5>(), v.head<5>());
  }
  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    return 0.5 * v.head<5>().dot(H_ * v.head<5>()) + crane::dependent_potential_energy(geo_, q.head<5>());
  }

 protected:
  void kinematics(ConstVectorRef q, ConstVectorRef v, crane::Kinematics& k) const override {
    const crane::DependentActuators a = crane::dependent_actuators(geo_, q.head<5>(), v.head<5>());
    k.s = a.s;
    k.s_dot = a.s_dot;
    k.bias = a.D_dot_u;
    k.R = {q[3], q[4]};
    k.R_dot = {v[3], v[4]};
  }

 private:
  crane::Matrix5d H_;
  crane::Vector5d g_;
};

}  // namespace

STRIDE_PLUGIN(CraneDependent)
