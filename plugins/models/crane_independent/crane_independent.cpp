// Planar hydraulic crane in independent coordinates q = [θ1, θ2] (Peiret 2018 Eq. 20, 22, 33):
// M v̇ + c = f + A_iᵀ λ_i with no constraints; step it with any formulation.
#include "../common/crane_model.hpp"

namespace {

using namespace stride;

class CraneIndependent final : public crane::CraneModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "crane_independent";
    i.kind = Kind::subsystem;
    i.form = Form::multibody;
    i.version = "1.0";
    i.description = "Planar hydraulic crane (Peiret 2018 Sect. 4.1), independent coordinates [theta1, theta2]";
    i.parameters = common_params();
    return i;
  }
  explicit CraneIndependent(const Params& p) : CraneModel(p) { D_.setZero(Eigen::Index(p_), 2); }

  MultibodySizes sizes() const override { return {2, 0, p_}; }
  void initial_state(double, VectorRef q, VectorRef v) override {
    q << geo_.theta1_0, geo_.theta2_0;
    v.setZero();
  }
  void mass_matrix(ConstVectorRef q, MatrixRef M) override { M = crane::mass_matrix(geo_, q.head<2>()); }
  void coriolis(ConstVectorRef q, ConstVectorRef v, VectorRef c) override {
    c = crane::coriolis(geo_, q.head<2>(), v.head<2>());
  }
  void applied_forces(double, ConstVectorRef q, ConstVectorRef, VectorRef f) override {
    f = crane::gravity_forces(geo_, q.head<2>());
  }
  void interface_jacobian(ConstVectorRef q, MatrixRef D_i) override {
    const crane::Actuators a = crane::actuators(geo_, q.head<2>(), Eigen::Vector2d::Zero());
    D_i = a.A.topRows(Eigen::Index(p_));
  }
  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    return crane::kinetic_energy(geo_, q.head<2>(), v.head<2>()) + crane::potential_energy(geo_, q.head<2>());
  }

 protected:
  void kinematics(ConstVectorRef q, ConstVectorRef v, crane::Kinematics& k) const override {
    const crane::Actuators a = crane::actuators(geo_, q.head<2>(), v.head<2>());
    k.s = a.s;
    k.s_dot = a.s_dot;
    k.bias = a.A_dot_v;
    k.R = crane::point_R(geo_, q.head<2>());
    k.R_dot = crane::velocity_R(geo_, q.head<2>(), v.head<2>());
  }
};

}  // namespace

STRIDE_PLUGIN(CraneIndependent)
