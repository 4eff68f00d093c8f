#include <vector>

#include "stride/host/graph/adapters.hpp"

namespace stride::host {
namespace {

class OdeSubsystem final : public Subsystem {
 public:
  OdeSubsystem(std::shared_ptr<OdeSystem> sys, std::shared_ptr<Integrator> integ)
      : sys_(std::move(sys)), integ_(std::move(integ)), x_(sys_->state_size()) {}

  std::vector<PortSpec> ports() const override { return sys_->ports(); }
  void bind(Inputs& in) override {
    Subsystem::bind(in);
    sys_->bind(in);
  }
  void initialize(double t0) override {
    t_ = t0;
    started_ = false;
    sys_->initial_state(t0, x_);
  }
  // The integrator starts here, not in initialize(): it may evaluate the system, and inputs
  // exist only once every subsystem has produced its initial outputs.
  void equilibrate(double t0) override {
    sys_->equilibrate(t0, x_);
    integ_->reset(*sys_, t0, x_);
    started_ = true;
  }
  double step(double t, double h) override {
    if (!started_) {
      integ_->reset(*sys_, t, x_);
      started_ = true;
    }
    t_ = integ_->step(*sys_, t, h, x_);
    return t_;
  }
  // A reset() just before restarts the integrator anyway.
  void input_discontinuity(double t) override {
    if (started_) integ_->input_discontinuity(t);
  }
  void outputs(std::span<double> y) override { sys_->outputs(t_, x_, y); }
  json statistics() const override {
    json s = sys_->statistics();
    s["integrator"] = integ_->statistics();
    return s;
  }
  json report() const override { return sys_->report(); }
  Accuracy accuracy() const override { return sys_->accuracy(); }
  double energy() const override { return sys_->energy_at(t_, x_); }

  // x, the time and the system's own state; the integrator restarts from the saved point in
  // every repetition of the macro step (its history beyond the point is not part of the state),
  // the first one included, so that every repetition takes the same path.
  bool can_save_state() const override { return sys_->can_save_state(); }
  void save_state(std::unique_ptr<SavedState>& slot) override {
    auto* s = dynamic_cast<Snapshot*>(slot.get());
    if (!s) slot.reset(s = new Snapshot);
    s->x = x_;
    s->t = t_;
    sys_->save_state(s->system);
    started_ = false;
  }
  void restore_state(const SavedState& state) override {
    const auto& s = dynamic_cast<const Snapshot&>(state);
    x_ = s.x;
    t_ = s.t;
    if (s.system) sys_->restore_state(*s.system);
    started_ = false;
  }

 private:
  struct Snapshot final : SavedState {
    std::vector<double> x;
    double t = 0.0;
    std::unique_ptr<SavedState> system;
  };
  std::shared_ptr<OdeSystem> sys_;
  std::shared_ptr<Integrator> integ_;
  std::vector<double> x_;
  double t_ = 0.0;
  bool started_ = false;
};

}  // namespace

std::unique_ptr<Subsystem> make_ode_subsystem(std::shared_ptr<OdeSystem> system,
                                              std::shared_ptr<Integrator> integrator) {
  return std::make_unique<OdeSubsystem>(std::move(system), std::move(integrator));
}

}  // namespace stride::host
