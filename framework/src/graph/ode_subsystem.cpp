#include <vector>

#include "core/event_outputs.hpp"
#include "core/state_events.hpp"
#include "stride/host/graph/adapters.hpp"

namespace stride::host {
namespace {

// An OdeSystem stepped by an Integrator. A system with event indicators (OdeSystem::
// event_indicators) has each step split at its events:
//   x0 = x; integrate [t, t_end]; if an indicator changed domain:
//     bisection on the event time (core/state_events.hpp), re-integrating from (t, x0) with a
//     restarted integrator; x = x at the first time found on the far side;
//     handle_event(t_e, x); reset the integrator at t_e; read the indicators again;
//     continue from t_e to t_end.
// The step still ends at t + h, so the subsystem's grid is kept. Recorded, it keeps its
// outputs at the record times inside each integrator step (DenseOutputs: at the interpolated
// states, hermite_state, with the discrete state of that step; at an event's time, after it).
class OdeSubsystem final : public Subsystem, public DenseOutputs {
 public:
  OdeSubsystem(std::shared_ptr<OdeSystem> sys, std::shared_ptr<Integrator> integ)
      : sys_(std::move(sys)), integ_(std::move(integ)), x_(sys_->state_size()) {
    const std::size_t m = sys_->event_indicator_count();
    z_.assign(m, 0.0);
    zt_.assign(m, 0.0);
    x0_.assign(x_.size(), 0.0);
    xt_.assign(x_.size(), 0.0);
    f0_.assign(x_.size(), 0.0);
    f1_.assign(x_.size(), 0.0);
    event_times_.reserve(kKeptEventTimes);  // step() does not allocate
  }

  std::vector<PortSpec> ports() const override { return sys_->ports(); }
  void bind(Inputs& in) override {
    Subsystem::bind(in);
    sys_->bind(in);
  }
  void initialize(double t0) override {
    t_ = t0;
    started_ = false;
    dense_.restart();
    sys_->initial_state(t0, x_);
  }
  // The integrator starts here, not in initialize(): it may evaluate the system, and inputs
  // exist only once every subsystem has produced its initial outputs.
  void equilibrate(double t0) override {
    sys_->equilibrate(t0, x_);
    restart(t0);
  }
  double step(double t, double h) override {
    if (!started_) restart(t);
    if (z_.empty() && t + h < dense_.horizon()) return t_ = integ_->step(*sys_, t, h, x_);  // no row inside
    return t_ = step_in_pieces(t, h);
  }
  // Out of line, so that the common step above stays small.
  [[gnu::noinline]] double step_in_pieces(double t, double h) {
    dense_.begin_step();
    if (z_.empty() && !dense_.any(t, t + h)) return integ_->step(*sys_, t, h, x_);
    const double t_end = t + h;
    double tc = t;
    while (tc < t_end) {
      std::copy(x_.begin(), x_.end(), x0_.begin());
      // Without events, h itself, as the path above ((t + h) - t may differ from h by round-off).
      const double reached = integ_->step(*sys_, tc, z_.empty() ? h : t_end - tc, x_);
      if (!z_.empty()) sys_->event_indicators(reached, x_, zt_);
      if (z_.empty() || !indicators_crossed(z_, zt_)) {
        z_ = zt_;
        dense_outputs(tc, reached);
        tc = reached;
        if (reached < t_end) break;  // an adaptive integrator stopped short: the host steps on
        continue;
      }
      const double from = tc;
      tc = locate(tc, reached);
      dense_outputs(from, tc);
      sys_->handle_event(tc, x_);
      ++events_;
      if (event_times_.size() < kKeptEventTimes) event_times_.push_back(tc);
      restart(tc);
      dense_.add_at(tc, [&](double te, std::span<double> y) { sys_->outputs(te, x_, y); });
    }
    return tc;
  }
  void record_grid(double t0, double dt) override {
    std::size_t width = 0;
    for (const PortSpec& p : sys_->ports())
      if (p.direction == Direction::output) width += p.size;
    dense_.grid(t0, dt, width);
  }
  const double* outputs_at_row(std::size_t k) const override { return dense_.row(k); }
  // A reset() just before restarts the integrator anyway.
  void input_discontinuity(double t) override {
    if (started_) integ_->input_discontinuity(t);
  }
  void outputs(std::span<double> y) override { sys_->outputs(t_, x_, y); }
  json statistics() const override {
    json s = sys_->statistics();
    s["integrator"] = integ_->statistics();
    if (!z_.empty())
      s["events"] = {{"count", events_}, {"bisection_steps", bisections_}, {"first_times", event_times_}};
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
    dense_.restart();
  }

 private:
  static constexpr std::size_t kKeptEventTimes = 20;

  void restart(double t) {
    integ_->reset(*sys_, t, x_);
    if (!z_.empty()) sys_->event_indicators(t, x_, z_);
    started_ = true;
  }
  // The outputs at the record times in (t0, t1) of one integrator step from x0_ to x_, before
  // any event at t1.
  void dense_outputs(double t0, double t1) {
    if (!dense_.any(t0, t1)) return;
    sys_->derivatives(t0, x0_, f0_);
    sys_->derivatives(t1, x_, f1_);
    dense_.add(t0, t1, false, [&](double tk, std::span<double> y) {
      hermite_state((tk - t0) / (t1 - t0), t1 - t0, x0_, f0_, x_, f1_, xt_);
      sys_->outputs(tk, xt_, y);
    });
  }
  // The first event in (t0, t1], x0_ holding x(t0) and x_ x(t1): re-integrating from t0 with a
  // restarted integrator; leaves x_ at the time returned.
  double locate(double t0, double t1) {
    return locate_state_event(t0, t1, z_, zt_, x_, x0_, xt_, bisections_, [&](double t) {
      integ_->reset(*sys_, t0, x_);
      const double reached = integ_->step(*sys_, t0, t - t0, x_);
      sys_->event_indicators(reached, x_, zt_);
      return reached;
    });
  }

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
  std::vector<double> z_, zt_, x0_,
      xt_;  // event indicators at t_ and at a trial time; x at the step start and past the event
  std::vector<double> f0_, f1_;           // dx/dt at an integrator step's ends (dense outputs)
  DenseRows dense_;                       // the outputs at the record times inside the last step
  long events_ = 0, bisections_ = 0;
  std::vector<double> event_times_;
};

}  // namespace

std::unique_ptr<Subsystem> make_ode_subsystem(std::shared_ptr<OdeSystem> system,
                                              std::shared_ptr<Integrator> integrator) {
  return std::make_unique<OdeSubsystem>(std::move(system), std::move(integrator));
}

}  // namespace stride::host
