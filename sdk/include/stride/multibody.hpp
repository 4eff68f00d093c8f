// Multibody models and the formulations that integrate them (Peiret 2018 Sect. 2-2.1,
// Rahikainen 2020 Sect. 2.1). The host pairs one MultibodyModel plugin with one Formulation
// plugin into a Subsystem (stride::host::make_multibody_subsystem).
#pragma once

#include <Eigen/Dense>

#include "stride/plugin.hpp"

namespace stride {

using VectorRef = Eigen::Ref<Eigen::VectorXd>;
using ConstVectorRef = const Eigen::Ref<const Eigen::VectorXd>&;
using MatrixRef = Eigen::Ref<Eigen::MatrixXd>;

struct MultibodySizes {
  std::size_t n = 0;  // coordinates q and velocities v = dq/dt
  std::size_t m = 0;  // holonomic constraints Φ(q, t) = 0; 0 for independent coordinates
  std::size_t p = 0;  // interface velocities w_i = D_i(q) v
};

// What a model's outputs may depend on, evaluated by the host adapter at the time reached.
struct MultibodyState {
  double t;
  const Eigen::VectorXd& q;
  const Eigen::VectorXd& v;
  const Eigen::VectorXd& v_dot;     // constrained acceleration with the current λ_i
  const Eigen::MatrixXd& M_eff;     // effective mass M̃ (p x p), Eq. 12 / 17
  const Eigen::VectorXd& f_eff;     // effective force f̃ (p), Eq. 13 / 18
  const Eigen::VectorXd& lambda_i;  // interface forces at t
};

// What a row of Φ is, for messages and for the bounds a formulation checks
// (MultibodyModel::constraint_labels()).
enum class ConstraintKind {
  position,       // a geometric constraint between bodies (a joint, a coupler)
  normalization,  // the unit length of a body's Euler parameters, pᵀp − 1 = 0
};
struct ConstraintLabel {
  std::string source;  // where the row comes from, for messages: "joint \"O\"", "body \"boom\""
  ConstraintKind kind = ConstraintKind::position;
};

// Equations of motion  M(q) v̇ + c(q, v) = f(t, q, v) + D_iᵀ λ_i + Φ_qᵀ λ,  Φ(q, t) = 0,
// interface velocities w_i = D_i v, so ẇ_i = D_i v̇ + Ḋ_i v.
// Call order: bind(inputs) -> sizes() -> initial_state(t0) -> any evaluation, in any order.
// Evaluations must not allocate and must not keep state between calls: formulations call
// them at trial points (Newton iterates, finite differences).
class MultibodyModel : public Component {
 public:
  virtual MultibodySizes sizes() const = 0;
  // Consistent initial coordinates and velocities (Φ = 0, Φ_q v + Φ_t = 0).
  virtual void initial_state(double t0, VectorRef q, VectorRef v) = 0;
  virtual void mass_matrix(ConstVectorRef q, MatrixRef M) = 0;
  virtual void coriolis(ConstVectorRef q, ConstVectorRef v, VectorRef c) = 0;
  // All generalized forces except the interface forces (gravity, springs, ...).
  virtual void applied_forces(double t, ConstVectorRef q, ConstVectorRef v, VectorRef f) = 0;
  // λ_i (p values) at t: read from inputs().at() (velocity-force coupling) or computed from
  // input pressures and the interface velocities (velocity-pressure coupling).
  virtual void interface_forces(double t, ConstVectorRef q, ConstVectorRef v, VectorRef lambda_i) = 0;
  virtual void interface_jacobian(ConstVectorRef q, MatrixRef D_i) = 0;
  // Ḋ_i v.
  virtual void interface_bias(ConstVectorRef q, ConstVectorRef v, VectorRef b_i) = 0;
  // Constraints; never called when m = 0.
  virtual void constraints(double /*t*/, ConstVectorRef /*q*/, VectorRef /*phi*/) {}
  virtual void constraint_jacobian(double /*t*/, ConstVectorRef /*q*/, MatrixRef /*phi_q*/) {}
  // Φ_t; velocity constraints read Φ_q v + Φ_t = 0.
  virtual void constraint_rate(double /*t*/, ConstVectorRef /*q*/, VectorRef phi_t) { phi_t.setZero(); }
  // Φ̈ − Φ_q v̇ = (Φ_q v)_q v + 2 Φ_qt v + Φ_tt.
  virtual void constraint_bias(double /*t*/, ConstVectorRef /*q*/, ConstVectorRef /*v*/, VectorRef /*b*/) {}
  // K = −∂Q/∂q and C = −∂Q/∂v (n×n) of the generalized forces Q = f + D_iᵀ λ_i − c at (t, q, v),
  // for implicit formulations. false (the default): the formulation differentiates the calls
  // above itself.
  virtual bool force_derivatives(double /*t*/, ConstVectorRef /*q*/, ConstVectorRef /*v*/, MatrixRef /*K*/,
                                 MatrixRef /*C*/) {
    return false;
  }
  // One label per row of Φ (m of them), read once by a formulation's reset(); empty (the
  // default): every row is a position constraint without a name.
  virtual std::vector<ConstraintLabel> constraint_labels() const { return {}; }
  // All outputs, concatenated in port declaration order.
  virtual void outputs(const MultibodyState& state, std::span<double> y) = 0;
  // Whether outputs() reads the state's v_dot, M_eff or f_eff. When false the host skips the
  // formulation's effective() and acceleration() after each step (each costs a factorization
  // of the constrained dynamics) and passes zeros there.
  virtual bool outputs_need_dynamics() const { return true; }
  // Mechanical energy (kinetic + potential) in J.
  virtual double energy_at(double t, ConstVectorRef q, ConstVectorRef v) const = 0;
  virtual json report() const { return json::object(); }
};

// Integrates a MultibodyModel. Call order:
//   reset(model, t0, q, v) -> { [input_discontinuity(t)] -> step(model, t, h, q, v)
//                               | acceleration(...) | effective(...) }*.
// reset() allocates all work memory (and may refuse a model it cannot handle, throwing
// std::invalid_argument); it must not evaluate interface forces, whose inputs may not exist
// yet (state that depends on them, like initial accelerations, is set up in the first step).
// The other calls must not allocate. One formulation object serves one model; the host calls
// it from one thread at a time.
class Formulation : public LogSource {
 public:
  virtual void reset(MultibodyModel& model, double t0, VectorRef q, VectorRef v) = 0;
  // Advances (q, v) from t by h; returns the time reached. Throws StepFailure when the
  // iteration does not converge.
  virtual double step(MultibodyModel& model, double t, double h, VectorRef q, VectorRef v) = 0;
  // The interface forces may jump at t, the time of the next step (see
  // Subsystem::input_discontinuity); a method that carries accelerations between steps decides
  // whether to recompute them. Must not allocate.
  virtual void input_discontinuity(double /*t*/) {}
  // Acceleration v̇ at (t, q, v) with the interface forces at t, using the constraint
  // acceleration this formulation enforces.
  virtual void acceleration(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v,
                            VectorRef v_dot) = 0;
  // Reduced interface model M̃ ẇ_i = f̃ + λ_i at (t, q, v): Eq. 12-13 (m = 0) or 17-19.
  virtual void effective(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v,
                         MatrixRef M_eff, VectorRef f_eff) = 0;
  // steps, iterations, max_iterations_per_step, constraint violations (last/max ‖Φ‖, ‖Φ_q v + Φ_t‖)
  // and the constraint residuals over the run against their bounds.
  virtual json statistics() const { return json::object(); }
  virtual json report() const { return json::object(); }
  // Whether the answer so far is within the bounds this formulation checks (its constraint
  // residuals); see Component::accuracy(). Must not throw.
  virtual Accuracy accuracy() const { return {}; }
};

}  // namespace stride
