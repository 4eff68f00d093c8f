// The model-exchange algorithm, one for FMI 2 and FMI 3, over the version adapter (see
// model_exchange.hpp).
#include "fmi/model_exchange.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "fmi/instance.hpp"
#include "core/event_outputs.hpp"
#include "core/state_events.hpp"
#include "core/text_signal.hpp"

namespace stride::host::fmi {

namespace {

// The FMU as dx/dt = f(t, x, u) for the integrator.
class MeOde final : public OdeSystem {
 public:
  MeOde(Instance& me, std::vector<PortSpec> ports) : me_(me), ports_(std::move(ports)) {}
  std::vector<PortSpec> ports() const override { return ports_; }
  std::size_t state_size() const override { return me_.shape().states; }
  void initial_state(double, std::span<double>) override {}  // the subsystem sets it
  void derivatives(double t, std::span<const double> x, std::span<double> dxdt) override {
    at(t, x);
    ++evaluations_;
    me_.derivatives(dxdt, t);
  }
  void outputs(double t, std::span<const double> x, std::span<double> y) override {
    at(t, x);
    me_.get_outputs(y, t);
  }
  void indicators(double t, std::span<const double> x, std::span<double> z) {
    at(t, x);
    if (!z.empty()) me_.indicators(z, t);
  }
  // Time, states and inputs of the FMU set to (t, x).
  void at(double t, std::span<const double> x) {
    me_.set_time(t);
    if (!x.empty()) me_.set_states(x, t);
    if (me_.has_inputs()) me_.set_inputs(inputs(), t);
  }
  long evaluations() const { return evaluations_; }

 private:
  Instance& me_;
  std::vector<PortSpec> ports_;
  long evaluations_ = 0;
};

class ModelExchange final : public Subsystem, public EventOutputs, public DenseOutputs, public TextPorts {
 public:
  ModelExchange(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports, const Params& p, const std::string& name,
                std::shared_ptr<Integrator> integrator)
      : me_(make_instance(fmu, true, p, name)),
        ode_(*me_, ports),
        integ_(std::move(integrator)),
        ports_(std::move(ports)) {
    me_->observe(ports_);
    const std::size_t n = me_->shape().states, m = me_->shape().indicators;
    x_.assign(n, 0.0);
    y_before_event_.assign(me_->output_width(), 0.0);
    x0_.assign(n, 0.0);
    xt_.assign(n, 0.0);
    f0_.assign(n, 0.0);
    f1_.assign(n, 0.0);
    z_.assign(m, 0.0);
    zt_.assign(m, 0.0);
  }

  void bind_logger(Logger& logger) override {
    Subsystem::bind_logger(logger);
    me_->log().logger = &logger;
  }
  std::vector<PortSpec> ports() const override { return ports_; }
  void bind(Inputs& in) override {
    Subsystem::bind(in);
    ode_.bind(in);
  }
  void initialize(double t0) override {
    if (!integ_ && !x_.empty())
      throw std::logic_error("a model-exchange FMU with continuous states needs an integrator");
    me_->start(t0);  // the FMU is in event mode after initialization
    me_->rewound(t0);
    me_->snapshot_at(std::numeric_limits<double>::infinity());  // none yet in this run
    me_->hold_texts_from(t0);
    check_sizes();
    t_ = t0;
    end_.clear();
    event_iteration(t0);
    handle_due_time_events(t0, false);  // scheduled for t0: the outputs at t0 are those after it
    get_states(t0);
    started_ = false;
    me_->publish_texts(t0, t0);
  }
  std::shared_ptr<TextSignal> text_output(const std::string& name, std::size_t element) override {
    return me_->text_output(name, element);
  }
  void text_input(const std::string& name, std::size_t element, std::shared_ptr<TextSignal> source) override {
    me_->text_input(name, element, std::move(source));
  }
  void equilibrate(double t0) override {
    if (end_.empty()) restart(t0);
    if (me_->has_texts() && end_.empty()) {  // text inputs at t0 are the other FMUs' initial values
      ode_.at(t0, x_);
      me_->publish_texts(t0, t0);
    }
  }
  double step(double t, double h) override {
    if (!end_.empty()) throw EndOfSimulation(end_);
    me_->hold_texts_from(t);
    if (!started_) restart(t);
    handle_due_time_events(t);
    if (!end_.empty()) throw EndOfSimulation(end_);
    // The step ends at the next time event inside it, or at t + h; an event within round-off
    // of t + h is handled there, at its own time.
    double t_end = t + h;
    bool time_event = false;
    if (next_event_ && *next_event_ <= t_end + tolerance(t_end)) {
      time_event = true;
      if (*next_event_ < t_end - tolerance(t_end)) t_end = *next_event_;
    }
    std::copy(x_.begin(), x_.end(), x0_.begin());
    double t_new = advance(t, t_end);
    if (std::abs(t_new - t_end) <= tolerance(t_end)) t_new = t_end;
    bool state_event = false;
    if (!z_.empty()) {
      ode_.indicators(t_new, x_, zt_);
      if (indicators_crossed(z_, zt_)) t_new = locate_state_event(t, t_new), state_event = true;
    }
    time_event = time_event && t_new == t_end;
    dense_outputs(t, t_new);
    // Step completed: the FMU may ask for an event (step events) or the end.
    ode_.at(t_new, x_);
    bool enter = false, terminate = false;
    me_->completed_step(t_new, enter, terminate);
    t_ = t_new;
    event_at_end_ = false;
    if (terminate) {
      end_ = "the FMU asked to end the simulation at t = " + fmt_time(t_new) +
             " (completedIntegratorStep: terminateSimulation)" + me_->log().tail();
      me_->publish_texts(t_, t);
      return t_;
    }
    if (time_event || state_event || enter) {
      ode_.outputs(t_new, x_, y_before_event_);  // continuous-time mode: the values before the event
      event_at_end_ = true;
      time_events_ += time_event;
      step_events_ += enter;
      handle_event(time_event ? *next_event_ : t_new, t_new);
      handle_due_time_events(t_new);  // one the FMU scheduled for now: here, not a step late
    } else if (!z_.empty()) {
      ode_.indicators(t_new, x_, z_);
    }
    me_->publish_texts(t_, t);
    return t_;
  }
  void outputs(std::span<double> y) override {
    if (in_event_mode_) me_->get_outputs(y, t_);  // after the FMU asked to terminate: as it left them
    else ode_.outputs(t_, x_, y);
  }
  bool outputs_before_event(std::span<double> y) const override {
    if (event_at_end_) std::copy(y_before_event_.begin(), y_before_event_.end(), y.begin());
    return event_at_end_;
  }
  void record_grid(double t0, double dt) override { dense_.grid(t0, dt, y_before_event_.size()); }
  const double* outputs_at_row(std::size_t k) const override { return dense_.row(k); }
  json statistics() const override {
    return {{"rhs_evaluations", ode_.evaluations()}, {"state_events", state_events_},
            {"time_events", time_events_},           {"step_events", step_events_},
            {"bisection_steps", bisections_},        {"integrator", integ_ ? integ_->statistics() : json()}};
  }
  json report() const override {
    return {{"fmu", me_->fmu().file.string()}, {"fmi_version", me_->fmu().md.fmi_version},
            {"interface", "model exchange"},   {"continuous_states", x_.size()},
            {"event_indicators", z_.size()},   {"state_event_times", event_times_}};
  }

  // The FMU state with the host's copy of the continuous states, the event indicators and the
  // next time event; the integrator restarts from the saved point in every repetition.
  bool can_save_state() const override { return me_->can_save_state(); }
  void save_state(std::unique_ptr<SavedState>& slot) override {
    auto* s = dynamic_cast<Snapshot*>(slot.get());
    if (!s) slot.reset(s = new Snapshot);
    me_->save(s->fmu, t_);
    me_->snapshot_at(t_);
    s->x = x_;
    s->z = z_;
    s->next_event = next_event_;
    s->t = t_;
    s->end = end_;
    s->in_event_mode = in_event_mode_;
    started_ = false;
  }
  void restore_state(const SavedState& state) override {
    const auto& s = dynamic_cast<const Snapshot&>(state);
    me_->restore(s.fmu, s.t);
    me_->rewound(s.t);
    x_ = s.x;
    z_ = s.z;
    next_event_ = s.next_event;
    t_ = s.t;
    end_ = s.end;
    in_event_mode_ = s.in_event_mode;
    started_ = false;
    dense_.restart();
  }

 private:
  // The first state event in (t, t_new] (core/state_events.hpp), re-integrating from t (state
  // x0_) each time; leaves x_ at the located time and returns it.
  double locate_state_event(double t, double t_new) {
    const double hi = host::locate_state_event(t, t_new, z_, zt_, x_, x0_, xt_, bisections_, [&](double to) {
      if (integ_) integ_->reset(ode_, t, x_);
      const double reached = advance(t, to);
      ode_.indicators(reached, x_, zt_);
      return reached;
    });
    ++state_events_;
    if (event_times_.size() < kKeptEventTimes) event_times_.push_back(hi);
    return hi;
  }
  // The numbers of states and indicators the FMU reports (FMI 3) are those of its description.
  void check_sizes() {
    const std::size_t n = me_->reported_states(), m = me_->reported_indicators();
    if (n != x_.size() || m != z_.size())
      throw PluginError(me_->fmu().label, "the FMU reports " + std::to_string(n) + " continuous states and " +
                                              std::to_string(m) + " event indicators, its model description " +
                                              std::to_string(x_.size()) + " and " + std::to_string(z_.size()));
  }

  // Time events are "at" a time up to this much (relative round-off of communication points).
  static double tolerance(double t) { return event_time_tolerance(t); }

  // A time event at or before t (scheduled in the past, or within round-off ahead) is handled
  // before stepping on, at its own time; the FMU may schedule the next at once.
  void handle_due_time_events(double t, bool restart_integrator = true) {
    for (int n = 0; end_.empty() && next_event_ && *next_event_ <= t + tolerance(t); ++n) {
      if (n == 1000) throw StepFailure("the FMU schedules time event after time event at t = " + fmt_time(t));
      ++time_events_;
      handle_event(std::max(t, *next_event_), t, restart_integrator);
    }
  }

  // An event at time `at` (the FMU's time: a time event's own), the states being those of t:
  // event mode, event iteration, the states after it, the integrator restarted (not before
  // the run's inputs exist, at initialization).
  void handle_event(double at, double t, bool restart_integrator = true) {
    me_->set_time(at);
    me_->enter_event_mode(at);
    event_iteration(at);
    get_states(at);
    if (end_.empty() && restart_integrator) restart(t);
  }

  // The outputs at the record times strictly inside (t, t_new), before any event at t_new:
  // the FMU's outputs at the interpolated states (hermite_state), with the inputs at those
  // times. Costs two derivative evaluations per step that has such a time, none otherwise.
  void dense_outputs(double t, double t_new) {
    dense_.begin_step();
    if (!dense_.any(t, t_new)) return;
    if (!x_.empty()) {
      ode_.derivatives(t, x0_, f0_);
      ode_.derivatives(t_new, x_, f1_);
    }
    dense_.add(t, t_new, false, [&](double tk, std::span<double> y) {
      hermite_state((tk - t) / (t_new - t), t_new - t, x0_, f0_, x_, f1_, xt_);
      ode_.outputs(tk, xt_, y);
    });
  }

  // Event mode: new discrete states until the FMU is done, then continuous-time mode; an FMU
  // that asks to terminate stays in event mode and the next step ends the run.
  void event_iteration(double t) {
    in_event_mode_ = true;
    const Discrete d = me_->settle_events(t, end_);
    if (d.terminate) return;
    next_event_.reset();
    if (d.next_defined) next_event_ = d.next;
    me_->enter_continuous_time_mode(t);
    in_event_mode_ = false;
  }
  // Integrates from t towards `to` (an FMU without continuous states has nothing to integrate).
  double advance(double t, double to) {
    if (x_.empty()) return to;
    return integ_->step(ode_, t, to - t, x_);
  }
  void get_states(double t) {
    if (!x_.empty()) me_->states(x_, t);
  }
  void restart(double t) {
    if (integ_) integ_->reset(ode_, t, x_);
    if (!z_.empty()) ode_.indicators(t, x_, z_);
    started_ = true;
  }

  struct Snapshot final : SavedState {
    FmuState fmu;
    std::vector<double> x, z;
    std::optional<double> next_event;
    double t = 0.0;
    std::string end;
    bool in_event_mode = false;
  };

  std::unique_ptr<Instance> me_;
  MeOde ode_;
  std::shared_ptr<Integrator> integ_;
  std::vector<PortSpec> ports_;
  std::vector<double> x_, x0_, xt_, z_, zt_, f0_, f1_;
  std::optional<double> next_event_;
  double t_ = 0.0;
  bool started_ = false, in_event_mode_ = false;
  bool event_at_end_ = false;            // the last step ended at an event
  std::vector<double> y_before_event_;  // the outputs just before it
  DenseRows dense_;  // the outputs at the record times inside the last step
  std::string end_;  // the FMU asked to terminate: why (thrown by the next step)
  long state_events_ = 0, time_events_ = 0, step_events_ = 0, bisections_ = 0;
  static constexpr std::size_t kKeptEventTimes = 1000;  // the first ones, in summary.json
  std::vector<double> event_times_;
};

}  // namespace

std::unique_ptr<Subsystem> make_model_exchange(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports,
                                               const Params& p, const std::string& name,
                                               std::shared_ptr<Integrator> integrator) {
  return std::make_unique<ModelExchange>(std::move(fmu), std::move(ports), p, name, std::move(integrator));
}

}  // namespace stride::host::fmi
