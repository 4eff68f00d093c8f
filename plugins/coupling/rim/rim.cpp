// Reduced interface model (RIM) of a multibody system, Peiret et al. 2018 Sect. 2-3:
//   M̃ ẇ_i = f̃ + λ_i   (Eq. 11)
// integrated with the semi-implicit Euler of Eq. 39 at the fast subsystem's step, between the
// full multibody model and the fast subsystem (hydraulics). Every `sync_interval` (H1 of
// Algorithm 2) it takes the multibody model's interface position and velocity and its
// effective mass and force, and holds M̃ and f̃ constant until the next synchronization; in
// between it exchanges with the hydraulics at its own step (H2). All interface velocities are
// integrated together, so actuators stay coupled through the off-diagonal terms of M̃.
//
// Manifest: connect the multibody outputs s, s_dot, M_eff, f_eff to the inputs s_M, s_dot_M,
// M_eff, f_eff through "zoh" (the RIM must see the multibody state of the last
// synchronization, never a newer one), the hydraulics force (or pressures) to f_h (p1, p2),
// and s, s_dot to the hydraulics. Run Jacobi with macro_step = the RIM step and align = false,
// so the multibody subsystem takes its long steps across several macro steps.
#include <Eigen/Dense>

#include "common/hydraulics.hpp"

namespace {

using namespace stride;

class ReducedInterfaceModel final : public Subsystem {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "rim";
    i.kind = Kind::subsystem;
    i.form = Form::stepper;
    i.version = "1.0.0";
    i.description = "reduced interface model of a multibody system (Peiret 2018 Eq. 11, 39), resynchronized every H1";
    i.parameters = {
        integer_param("actuators", 1, "number of interface velocities p", 1, 16),
        real_param("sync_interval", 0.01, "s",
                   "H1: interval at which the RIM takes the multibody state, M_eff and f_eff", 1e-9),
        choice_param(
            "coupling", "force", {"force", "pressure"},
            "force: input f_h from the hydraulics; pressure: inputs p1, p2 and f = (p2 - p1) a_p - c s_dot (Eq. 24)"),
        real_param("a_p", hydraulics::Cylinder{}.a_p, "m^2", "piston area for pressure coupling (Table 2)", 0.0),
        real_param("c", hydraulics::Cylinder{}.c, "N*s/m", "viscous friction for pressure coupling (Table 2)", 0.0),
    };
    return i;
  }

  explicit ReducedInterfaceModel(const Params& prm)
      : p_(static_cast<std::size_t>(prm.integer("actuators"))),
        H1_(prm.real("sync_interval")),
        pressure_(prm.string("coupling") == "pressure"),
        a_p_(prm.real("a_p")),
        c_(prm.real("c")),
        s_(Eigen::VectorXd::Zero(p_)), s_dot_(Eigen::VectorXd::Zero(p_)), s_ddot_(Eigen::VectorXd::Zero(p_)),
        f_eff_(Eigen::VectorXd::Zero(p_)), rhs_(Eigen::VectorXd::Zero(p_)),
        M_eff_(Eigen::MatrixXd::Identity(p_, p_)), M_inv_(Eigen::MatrixXd::Identity(p_, p_)), ldlt_(p_) {}

  std::vector<PortSpec> ports() const override {
    std::vector<PortSpec> ps = {
        input("s_M", p_, "m", "multibody actuator lengths"),
        input("s_dot_M", p_, "m/s", "multibody actuator rates"),
        input("M_eff", p_ * p_, "kg", "effective mass M̃ (Eq. 12/17), row-major"),
        input("f_eff", p_, "N", "effective force f̃ (Eq. 13/18)"),
    };
    if (pressure_) {
      ps.push_back(input("p1", p_, "Pa", "chamber 1 pressures"));
      ps.push_back(input("p2", p_, "Pa", "chamber 2 pressures"));
    } else {
      ps.push_back(bonded(input("f_h", p_, "N", "actuator forces λ_i, positive along increasing s"), BondRole::effort,
                          "actuator"));
    }
    ps.push_back(output("s", p_, "m", "predicted actuator lengths"));
    PortSpec sd = output("s_dot", p_, "m/s", "predicted actuator rates (interface velocities)");
    ps.push_back(pressure_ ? sd : bonded(sd, BondRole::flow, "actuator"));
    ps.push_back(output("s_ddot", p_, "m/s^2", "interface accelerations M̃⁻¹(f̃ + λ_i)", true));
    return ps;
  }

  void initialize(double t0) override {
    t_ = t0;
    next_sync_ = t0;
    synced_ = false;
  }
  void equilibrate(double t0) override { synchronize(t0); }

  double step(double t, double h) override {
    if (!synced_) synchronize(t);
    accelerations(t);
    for (std::size_t i = 0; i < p_; ++i) s_dot_[i] += h * s_ddot_[i];  // Eq. 39
    for (std::size_t i = 0; i < p_; ++i) s_[i] += h * s_dot_[i];
    t_ = t + h;
    ++steps_;
    // Algorithm 2: at a synchronization point the RIM takes the multibody state before it
    // publishes, so the fast subsystem never sees a stale prediction there.
    if (t_ >= next_sync_ - 1e-9 * H1_) synchronize(next_sync_);
    return t_;
  }

  void outputs(std::span<double> y) override {
    // s_ddot is feedthrough: λ at the time reached (step() evaluates its own, so when no one
    // reads s_ddot it is not evaluated here).
    if (synced_ && s_ddot_read()) accelerations(t_);
    if (p_ == 1) {  // one actuator: no loops (this runs at every fast step)
      y[0] = s_[0];
      y[1] = s_dot_[0];
      y[2] = s_ddot_[0];
      return;
    }
    std::size_t k = 0;
    for (std::size_t i = 0; i < p_; ++i) y[k++] = s_[i];
    for (std::size_t i = 0; i < p_; ++i) y[k++] = s_dot_[i];
    for (std::size_t i = 0; i < p_; ++i) y[k++] = s_ddot_[i];
  }

  json statistics() const override { return {{"steps", steps_}, {"synchronizations", syncs_}}; }

  // The interface state, the held M̃⁻¹ and f̃ and the synchronization clock (iterative coupling).
  bool can_save_state() const override { return true; }
  void save_state(std::unique_ptr<SavedState>& slot) override {
    save_value(slot, Snapshot{s_, s_dot_, s_ddot_, f_eff_, M_eff_, M_inv_, t_, next_sync_, synced_});
  }
  void restore_state(const SavedState& state) override {
    const auto& v = saved_value<Snapshot>(state);
    s_ = v.s, s_dot_ = v.s_dot, s_ddot_ = v.s_ddot, f_eff_ = v.f_eff, M_eff_ = v.M_eff, M_inv_ = v.M_inv;
    t_ = v.t, next_sync_ = v.next_sync, synced_ = v.synced;
  }

 private:
  struct Snapshot {
    Eigen::VectorXd s, s_dot, s_ddot, f_eff;
    Eigen::MatrixXd M_eff, M_inv;
    double t, next_sync;
    bool synced;
  };

  // Algorithm 2, line 12: take the multibody interface state and M̃, f̃.
  void synchronize(double t) {
    auto s = inputs().at(0, t);
    auto sd = inputs().at(1, t);
    auto M = inputs().at(2, t);
    auto f = inputs().at(3, t);
    for (std::size_t i = 0; i < p_; ++i) {
      s_[i] = s[i];
      s_dot_[i] = sd[i];
      f_eff_[i] = f[i];
      for (std::size_t j = 0; j < p_; ++j) M_eff_(static_cast<long>(i), static_cast<long>(j)) = M[i * p_ + j];
    }
    ldlt_.compute(M_eff_);
    if (ldlt_.info() != Eigen::Success || !(ldlt_.vectorD().minCoeff() > 0))
      throw StepFailure(format_text("effective mass is not positive definite at t = {} s", t));
    // M̃ is held until the next synchronization: invert it once (p is the number of actuators).
    M_inv_.setIdentity();
    ldlt_.solveInPlace(M_inv_);
    synced_ = true;
    ++syncs_;
    while (next_sync_ <= t + 1e-9 * H1_) next_sync_ += H1_;
  }

  bool s_ddot_read() const {
    for (std::size_t i = 0; i < p_; ++i)
      if (output_read(2 * p_ + i)) return true;
    return false;
  }

  // Eq. 11: s̈ = M̃⁻¹ (f̃ + λ) with λ the interface forces at t. Plain loops: p is small and
  // this runs at every fast step.
  void accelerations(double t) {
    if (pressure_) {
      auto p1 = inputs().at(4, t);
      auto p2 = inputs().at(5, t);
      for (std::size_t i = 0; i < p_; ++i) rhs_[i] = f_eff_[i] + (p2[i] - p1[i]) * a_p_ - c_ * s_dot_[i];
    } else {
      auto f = inputs().at(4, t);
      for (std::size_t i = 0; i < p_; ++i) rhs_[i] = f_eff_[i] + f[i];
    }
    const double* Minv = M_inv_.data();  // column-major
    if (p_ == 1) {
      s_ddot_[0] = Minv[0] * rhs_[0];
      return;
    }
    for (std::size_t i = 0; i < p_; ++i) {
      double a = 0.0;
      for (std::size_t j = 0; j < p_; ++j) a += Minv[j * p_ + i] * rhs_[j];
      s_ddot_[i] = a;
    }
  }

  std::size_t p_;
  double H1_;
  bool pressure_;
  double a_p_, c_;
  Eigen::VectorXd s_, s_dot_, s_ddot_, f_eff_, rhs_;
  Eigen::MatrixXd M_eff_, M_inv_;
  Eigen::LDLT<Eigen::MatrixXd> ldlt_;
  double t_ = 0.0, next_sync_ = 0.0;
  bool synced_ = false;
  long steps_ = 0, syncs_ = 0;
};

}  // namespace

STRIDE_PLUGIN(ReducedInterfaceModel)
