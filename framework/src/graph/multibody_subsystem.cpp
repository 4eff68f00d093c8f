#include <vector>

#include "stride/host/graph/adapters.hpp"

namespace stride::host {
namespace {

// A MultibodyModel stepped by a Formulation. The state (q, v) lives here; outputs are
// evaluated at the time reached with the reduced interface model (M̃, f̃) and the
// acceleration v̇ the formulation gives for the current interface forces.
class MultibodySubsystem final : public Subsystem {
 public:
  MultibodySubsystem(std::shared_ptr<MultibodyModel> model, std::shared_ptr<Formulation> formulation)
      : model_(std::move(model)), form_(std::move(formulation)) {
    const MultibodySizes s = model_->sizes();
    const auto n = Eigen::Index(s.n), p = Eigen::Index(s.p);
    q_.setZero(n);
    v_.setZero(n);
    v_dot_.setZero(n);
    M_eff_.setZero(p, p);
    f_eff_.setZero(p);
    lambda_i_.setZero(p);
    needs_dynamics_ = model_->outputs_need_dynamics();
  }

  std::vector<PortSpec> ports() const override { return model_->ports(); }
  void bind(Inputs& in) override {
    Subsystem::bind(in);
    model_->bind(in);
  }
  void initialize(double t0) override {
    t_ = t0;
    model_->initial_state(t0, q_, v_);
    form_->reset(*model_, t0, q_, v_);
  }
  // Inputs at t0 are final now: formulations that carry accelerations restart from them.
  void equilibrate(double t0) override { form_->reset(*model_, t0, q_, v_); }
  double step(double t, double h) override {
    if (restart_) {
      form_->reset(*model_, t, q_, v_);
      restart_ = false;
    }
    t_ = form_->step(*model_, t, h, q_, v_);
    return t_;
  }
  void input_discontinuity(double t) override {
    if (!restart_) form_->input_discontinuity(t);
  }
  void outputs(std::span<double> y) override {
    if (needs_dynamics_) {
      form_->effective(*model_, t_, q_, v_, M_eff_, f_eff_);
      form_->acceleration(*model_, t_, q_, v_, v_dot_);
    }
    model_->interface_forces(t_, q_, v_, lambda_i_);
    model_->outputs(MultibodyState{t_, q_, v_, v_dot_, M_eff_, f_eff_, lambda_i_}, y);
  }
  json statistics() const override {
    json s = model_->statistics();
    s["formulation"] = form_->statistics();
    return s;
  }
  json report() const override {
    json r = model_->report();
    json f = form_->report();
    if (!f.empty()) r["formulation"] = std::move(f);
    return r;
  }
  double energy() const override { return model_->energy_at(t_, q_, v_); }
  Accuracy accuracy() const override {
    Accuracy a = model_->accuracy();
    return a.within ? form_->accuracy() : a;
  }

  // A model keeps no state between evaluations (MultibodyModel's contract): (t, q, v) is the
  // state. The formulation restarts from the saved point in every repetition of the macro
  // step, the first one included, so that every repetition takes the same path.
  bool can_save_state() const override { return true; }
  void save_state(std::unique_ptr<SavedState>& slot) override {
    save_value(slot, Snapshot{q_, v_, t_});
    restart_ = true;
  }
  void restore_state(const SavedState& state) override {
    const auto& s = saved_value<Snapshot>(state);
    q_ = s.q, v_ = s.v, t_ = s.t;
    restart_ = true;
  }

 private:
  std::shared_ptr<MultibodyModel> model_;
  std::shared_ptr<Formulation> form_;
  Eigen::VectorXd q_, v_, v_dot_, f_eff_, lambda_i_;
  Eigen::MatrixXd M_eff_;
  double t_ = 0.0;
  bool restart_ = false;
  bool needs_dynamics_ = true;  // the model's outputs read v_dot, M_eff or f_eff
  struct Snapshot {
    Eigen::VectorXd q, v;
    double t;
  };
};

}  // namespace

std::unique_ptr<Subsystem> make_multibody_subsystem(std::shared_ptr<MultibodyModel> model,
                                                    std::shared_ptr<Formulation> formulation) {
  return std::make_unique<MultibodySubsystem>(std::move(model), std::move(formulation));
}

}  // namespace stride::host
