// Co-simulation FMUs, FMI 2 and FMI 3, as one Subsystem over the version adapter (see
// co_simulation.hpp).
#include "fmi/co_simulation.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fmi/instance.hpp"
#include "run/text_signal.hpp"

namespace stride::host::fmi {

namespace {

// Snapshots: the FMU state and the time reached.
struct CsSnapshot final : SavedState {
  FmuState fmu;
  double t = 0.0, first_h = 0.0;
  std::string end;
};

class CoSimulation final : public Subsystem, public TextPorts {
 public:
  CoSimulation(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports, const Params& p, const std::string& name)
      : inst_(make_instance(std::move(fmu), false, p, name)), ports_(std::move(ports)) {
    inst_->observe(ports_);
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
    inst_->start(t0, !initializing_);
    inst_->rewound(t0);
    inst_->snapshot_at(std::numeric_limits<double>::infinity());  // none yet in this run
    inst_->hold_texts_from(t0);
    t_ = t0;
    first_h_ = 0.0;
    end_.clear();
    inst_->publish_texts(t0, t0);
  }
  void equilibrate(double t0) override {
    if (!initializing_) return;
    end_initialization(t0);
    inst_->publish_texts(t0, t0);
  }
  std::size_t text_size(const std::string& name) const override { return inst_->text_size(name); }
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
      throw StepFailure("the FMU cannot handle a variable communication step size (canHandleVariableCommunicationStepSize"
                        " is false), but a step of " + fmt_time(h) + " s follows steps of " + fmt_time(first_h_) +
                        " s; make the macro step a multiple of the subsystem's step");
    inst_->hold_texts_from(t);
    inst_->set_inputs(inputs(), input_time(t, h));
    const CsStep s = inst_->do_step(t, h);
    ++steps_;
    if (s.terminate) {
      // The model's own end: the step ends where the FMU stopped, the next call ends the run.
      end_ = std::string("the FMU asked to end the simulation at t = ") + fmt_time(std::max(s.reached, t)) + " (" +
             inst_->do_step_name() + (inst_->fmu().md.version == 2 ? " with fmi2Terminated)" : ": terminateSimulation)") +
             inst_->log().tail();
      if (!(s.reached > t)) throw EndOfSimulation(end_);
      t_ = std::min(s.reached, t + h);
      inst_->publish_texts(t_, t);
      return t_;
    }
    if (s.discarded) {
      // A step cut short ends inside it: a time at or before t is no progress, one at or after
      // t + h contradicts the discard.
      ++discarded_;
      if (!(s.reached > t && s.reached < t + h))
        throw PluginError(inst_->fmu().label, std::string(inst_->do_step_name()) + " discarded the step from t = " + fmt_time(t) + " to " +
                          fmt_time(t + h) + " and reports " + inst_->last_time_name() + " = " + fmt_time(s.reached) +
                          (s.reached > t ? ", not inside the step" : ": no progress") + inst_->log().tail());
      t_ = s.reached;
      inst_->publish_texts(t_, t);
      return t_;
    }
    t_ = t + h;
    inst_->publish_texts(t_, t);
    return t_;
  }
  void outputs(std::span<double> y) override {
    if (inst_->io().any_feedthrough || initializing_) inst_->set_inputs(inputs(), t_);
    inst_->get_outputs(y, t_);
  }
  json statistics() const override { return {{"steps", steps_}, {"discarded_steps", discarded_}}; }
  json report() const override {
    return {{"fmu", inst_->fmu().file.string()}, {"fmi_version", inst_->fmu().md.fmi_version}, {"interface", "co-simulation"}};
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
  }

 private:
  // A co-simulation FMU holds its inputs over a step. Stepping on, it gets their values at the
  // step's start (causal: nothing later is known). When the host repeats macro steps (iterative
  // coupling, after the first save), inputs inside a repeated step are straight lines between
  // known values, and the value at the step's midpoint, their mean over the step, is held: the
  // held input then errs by O(h²) in its integral instead of O(h).
  double input_time(double t, double h) const { return inst_->no_earlier_state() ? t : t + 0.5 * h; }
  void end_initialization(double t0) {
    if (!initializing_) return;
    inst_->set_inputs(inputs(), t0);
    inst_->end_initialization(t0);
    initializing_ = false;
  }

  std::unique_ptr<Instance> inst_;
  std::vector<PortSpec> ports_;
  double t_ = 0.0, first_h_ = 0.0;
  long steps_ = 0, discarded_ = 0;
  std::string end_;  // the FMU asked to terminate: why (thrown by the next step)
  bool initializing_ = false;  // in initialization mode (initialize() to equilibrate())
};

}  // namespace

std::unique_ptr<Subsystem> make_co_simulation(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports, const Params& p,
                                              const std::string& name) {
  return std::make_unique<CoSimulation>(std::move(fmu), std::move(ports), p, name);
}

}  // namespace stride::host::fmi
