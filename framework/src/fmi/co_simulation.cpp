// Co-simulation FMUs, FMI 2 and FMI 3, as one Subsystem over the version adapter (see
// co_simulation.hpp).
#include "fmi/co_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fmi/instance.hpp"
#include "core/event_outputs.hpp"
#include "core/text_signal.hpp"

namespace stride::host::fmi {

namespace {

// Snapshots: the FMU state and the time reached.
struct CsSnapshot final : SavedState {
  FmuState fmu;
  double t = 0.0, first_h = 0.0;
  std::string end;
};

class CoSimulation final : public Subsystem, public EventOutputs, public DenseOutputs, public TextPorts {
 public:
  CoSimulation(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports, const Params& p, const std::string& name)
      : inst_(make_instance(std::move(fmu), false, p, name)), ports_(std::move(ports)) {
    inst_->observe(ports_);
    y_before_event_.assign(inst_->output_width(), 0.0);
  }

  void bind_logger(Logger& logger) override {
    Subsystem::bind_logger(logger);
    inst_->log().logger = &logger;
  }
  std::vector<PortSpec> ports() const override { return ports_; }
  // An FMU with inputs stays in initialization mode through the host's first outputs, with the
  // inputs set before each, and leaves it in equilibrate(), when its inputs at t0 are the other
  // subsystems' initial outputs: its initial state may depend on them (an exported subsystem
  // in static equilibrium, Eq. 41).
  void initialize(double t0) override {
    initializing_ = inst_->has_inputs();
    end_.clear();
    inst_->start(t0, !initializing_);
    if (!initializing_) initial_events(t0);
    inst_->rewound(t0);
    inst_->snapshot_at(std::numeric_limits<double>::infinity());  // none yet in this run
    inst_->hold_texts_from(t0);
    t_ = t0;
    first_h_ = 0.0;
    dense_.restart();
    inst_->publish_texts(t0, t0);
  }
  void equilibrate(double t0) override {
    if (!initializing_) return;
    end_initialization(t0);
    inst_->publish_texts(t0, t0);
  }
  std::shared_ptr<TextSignal> text_output(const std::string& name, std::size_t element) override {
    return inst_->text_output(name, element);
  }
  void text_input(const std::string& name, std::size_t element, std::shared_ptr<TextSignal> source) override {
    inst_->text_input(name, element, std::move(source));
  }
  double step(double t, double h) override {
    end_initialization(t);
    if (!end_.empty()) throw EndOfSimulation(end_);
    // An FMU that cannot change its step is given the first step throughout.
    if (first_h_ == 0.0) first_h_ = h;
    else if (!inst_->fmu().md.can_variable_step && std::abs(h - first_h_) > 1e-9 * first_h_)
      throw StepFailure(
          "the FMU cannot handle a variable communication step size (canHandleVariableCommunicationStepSize"
          " is false), but a step of " +
          fmt_time(h) + " s follows steps of " + fmt_time(first_h_) +
          " s; make the macro step a multiple of the subsystem's step");
    inst_->hold_texts_from(t);
    inst_->set_inputs(inputs(), input_time(t, h));
    event_at_end_ = false;
    dense_.begin_step();
    if (t + h >= dense_.horizon() && dense_.any(t, t + h)) rows_inside(t, h);
    const double reached = do_step(t, t + h);
    if (!(reached > t)) throw EndOfSimulation(end_);  // the model's end, at t
    t_ = reached;
    inst_->publish_texts(t_, t);
    return t_;
  }
  void outputs(std::span<double> y) override {
    if (inst_->io().any_feedthrough || initializing_) inst_->set_inputs(inputs(), t_);
    inst_->get_outputs(y, t_);
  }
  // Rows inside a step come from a copy of the FMU (rows_inside): it must take other steps and
  // come back. Without both, rows inside are linear between the step's ends.
  void record_grid(double t0, double dt) override {
    if (inst_->fmu().md.can_variable_step && inst_->can_save_state()) dense_.grid(t0, dt, inst_->output_width());
  }
  const double* outputs_at_row(std::size_t k) const override { return dense_.row(k); }
  bool has_events() const override { return inst_->cs_event_mode(); }
  bool outputs_before_event(std::span<double> y) const override {
    if (event_at_end_) std::copy(y_before_event_.begin(), y_before_event_.end(), y.begin());
    return event_at_end_;
  }
  json statistics() const override {
    json s = {{"steps", steps_}, {"discarded_steps", discarded_}};
    if (row_steps_) s["steps_for_rows"] = row_steps_;
    if (inst_->cs_event_mode()) s["events"] = events_;
    return s;
  }
  json report() const override {
    return {{"fmu", inst_->fmu().file.string()},
            {"fmi_version", inst_->fmu().md.fmi_version},
            {"interface", "co-simulation"}};
  }
  bool can_save_state() const override { return inst_->can_save_state(); }
  void save_state(std::unique_ptr<SavedState>& slot) override {
    auto* s = dynamic_cast<CsSnapshot*>(slot.get());
    if (!s) slot.reset(s = new CsSnapshot);
    inst_->save(s->fmu, t_);
    inst_->snapshot_at(t_);
    s->t = t_;
    s->first_h = first_h_;
    s->end = end_;
  }
  void restore_state(const SavedState& state) override {
    const auto& s = dynamic_cast<const CsSnapshot&>(state);
    inst_->restore(s.fmu, s.t);
    inst_->rewound(s.t);
    t_ = s.t;
    first_h_ = s.first_h;
    end_ = s.end;
    dense_.restart();
  }

 private:
  // A co-simulation FMU holds its inputs over a step. Stepping on, it gets their values at the
  // step's start (causal: nothing later is known). When the host repeats macro steps (iterative
  // coupling, after the first save), inputs inside a repeated step are straight lines between
  // known values, and the value at the step's midpoint, their mean over the step, is held: the
  // held input then errs by O(h²) in its integral instead of O(h).
  double input_time(double t, double h) const { return inst_->no_earlier_state() ? t : t + 0.5 * h; }
  // The rows at the record times inside the step from t by h: the FMU's state saved, stepped
  // from record time to record time (the inputs held), its outputs there kept, and the state
  // put back, so that its own step from t to t + h is the one it takes when nothing is
  // recorded inside. A copy stopped by an event, a discard or the model's end keeps no rows
  // for the step: the recorder then interpolates between the step's ends (up to the values
  // before an event the step itself ends at).
  void rows_inside(double t, double h) {
    inst_->peek(true);
    inst_->save(row_state_, t);
    double reached = t;
    bool whole = true;
    dense_.add(t, t + h, false, [&](double tk, std::span<double> y) {
      if (!whole) return;
      const CsStep s = inst_->do_step(reached, tk - reached);
      ++row_steps_;
      whole = !s.event && !s.discarded && !s.terminate;
      reached = tk;
      if (whole) inst_->get_outputs(y, tk);
    });
    inst_->restore(row_state_, t);
    inst_->peek(false);
    if (!whole) dense_.begin_step();
  }
  // One doStep from ta to tb: the time reached, tb unless the FMU stopped inside (discard,
  // early return, an event: event_at_end_) or asked to end the simulation (end_ set; ta when
  // it made no progress). An event at ta itself is handled there and the step taken again.
  double do_step(double ta, double tb) {
    CsStep s = inst_->do_step(ta, tb - ta);
    ++steps_;
    // An event within round-off of ta (an FMU scheduling one for "now") is at ta: Stride's
    // step must not end a round-off after its start.
    const double at_start = ta + 1e-12 * std::max(1.0, std::abs(ta));
    for (int again = 0; s.event && !s.terminate && !(s.reached > at_start) && end_.empty(); ++again) {
      if (again == 1000)
        throw StepFailure("the FMU returned for an event at t = " + fmt_time(ta) + " 1000 times without progress");
      event_mode(ta, true);
      if (!end_.empty()) return ta;
      s = inst_->do_step(ta, tb - ta);
      ++steps_;
    }
    if (s.terminate) {
      end_ = std::string("the FMU asked to end the simulation at t = ") + fmt_time(std::max(s.reached, ta)) + " (" +
             inst_->do_step_name() +
             (inst_->fmu().md.version == 2 ? " with fmi2Terminated)" : ": terminateSimulation)") + inst_->log().tail();
      return s.reached > ta ? std::min(s.reached, tb) : ta;
    }
    if (s.event) {
      const double at = std::min(s.reached, tb);
      inst_->get_outputs(y_before_event_, at);  // the left limit: the event is not handled yet
      event_mode(at, true);
      event_at_end_ = true;
      return at;
    }
    if (!s.discarded) return tb;
    // A step cut short ends inside it: a time at or before ta is no progress, one at or after
    // tb contradicts the discard.
    ++discarded_;
    if (!(s.reached > ta && s.reached < tb))
      throw PluginError(inst_->fmu().label,
                        std::string(inst_->do_step_name()) + " discarded the step from t = " + fmt_time(ta) + " to " +
                            fmt_time(tb) + " and reports " + inst_->last_time_name() + " = " + fmt_time(s.reached) +
                            (s.reached > ta ? ", not inside the step" : ": no progress") + inst_->log().tail());
    return s.reached;
  }
  void end_initialization(double t0) {
    if (!initializing_) return;
    inst_->set_inputs(inputs(), t0);
    inst_->end_initialization(t0);
    initializing_ = false;
    initial_events(t0);
  }
  // Event mode used: the FMU leaves initialization in event mode.
  void initial_events(double t0) {
    if (inst_->cs_event_mode()) event_mode(t0, false);
  }
  // Event iteration at t (entering event mode first unless the FMU is in it), then step mode;
  // an FMU that asks to terminate stays in event mode and the next step ends the run.
  void event_mode(double t, bool enter) {
    if (enter) inst_->enter_event_mode(t), ++events_;
    if (!inst_->settle_events(t, end_).terminate) inst_->enter_step_mode(t);
  }

  std::unique_ptr<Instance> inst_;
  std::vector<PortSpec> ports_;
  double t_ = 0.0, first_h_ = 0.0;
  long steps_ = 0, discarded_ = 0;
  long row_steps_ = 0;  // steps of the copies stepped for rows inside steps (rows_inside)
  FmuState row_state_;  // the state those copies start from
  std::string end_;  // the FMU asked to terminate: why (thrown by the next step)
  DenseRows dense_;  // the outputs at the record times inside the last step
  // Event mode: the last step ended at an event; the outputs just before it.
  bool event_at_end_ = false;
  std::vector<double> y_before_event_;
  long events_ = 0;
  bool initializing_ = false;  // in initialization mode (initialize() to equilibrate())
};

}  // namespace

std::unique_ptr<Subsystem> make_co_simulation(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports,
                                              const Params& p, const std::string& name) {
  return std::make_unique<CoSimulation>(std::move(fmu), std::move(ports), p, name);
}

}  // namespace stride::host::fmi
