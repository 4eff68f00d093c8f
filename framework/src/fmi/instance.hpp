// One FMU instance, FMI 1, FMI 2 or FMI 3, behind the calls Stride's co-simulation and model-exchange
// algorithms make (co_simulation.hpp, model_exchange.hpp): the version adapter. Internal to the
// host.
//
// Call order (either interface):
//   make_instance() -> start(t0) -> { set_inputs(), get_outputs(), [save(), restore()] and
//   co-simulation: do_step()* ; model exchange: set_time(), set_states(), derivatives(),
//   indicators(), completed_step(), enter_event_mode(), update_discrete()*,
//   enter_continuous_time_mode(), states() }
// start() instantiates afresh when called again: FMI 3 structural parameters in configuration
// mode, then the parameters and start values the manifest gives, then initialization at t0.
// Every call checks the FMU's status: fmi*Error and fmi*Fatal throw PluginError with the FMU's
// last messages (after fmi*Fatal nothing more is called, not even fmi*FreeInstance). One thread
// at a time; the instance owns its FMU instance and frees it when destroyed. The port calls
// (set_inputs, get_outputs) do not allocate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fmi/binary.hpp"
#include "core/text_signal.hpp"
#include "stride/host/core/plugin_error.hpp"

namespace stride::host::fmi {

// Log messages of an instance: into the run's log (log.txt, and stderr from the manifest's
// stderr_level) once the host has bound a logger, to stderr with the subsystem's name before
// (instantiation); the recent warnings and errors are kept for the failure message.
struct LogSink {
  std::string instance;
  std::vector<std::string> recent;
  stride::Logger* logger = nullptr;
  // status: the FMI status (the values of fmi2Status and fmi3Status coincide up to Fatal).
  void log(int status, const char* category, const char* message);
  // "; the FMU said: ..." with the recent warnings and errors, "" when none.
  std::string tail() const;
};

// Where a port's (or a recorded variable's) values live in the FMU.
struct Io {
  const Variable* var = nullptr;
  unsigned vr = 0;
  VarType type = VarType::float64;
  std::size_t size = 1;    // elements
  std::size_t offset = 0;  // outputs: first element in the subsystem's outputs
  double factor = 1.0, shift = 0.0;  // port value = FMU value * factor + shift (unit conversion)
  std::string label;        // the name it is read by when not var->name (an FMI 3 alias)
  bool feedthrough = false;  // outputs: depends on inputs at the same time
  std::vector<unsigned> vrs;  // FMI 2 structured arrays: one value reference per element
  bool converted() const { return factor != 1.0 || shift != 0.0; }
  const std::string& name() const { return label.empty() ? var->name : label; }
};
Io io_of(const Variable& v, std::size_t size);

// A variable a record or connection can read like an output beside the outputs: numeric, no
// input or output (those are ports already).
inline bool observable(const Variable& v) {
  return is_numeric(v.type) && v.causality != "input" && v.causality != "output";
}

// A String or Binary variable a record may name (text columns, one per element): no input.
inline bool text_recordable(const Variable& v) {
  return (v.type == VarType::string || v.type == VarType::binary) && v.causality != "input";
}

// The FMU's ports for one subsystem's shape: numeric inputs and outputs of at least one element,
// in the order of the model description.
struct Interface {
  std::vector<Io> in, out;
  bool any_feedthrough = false;
  std::size_t scratch_size = 1;  // the widest port (converted or retyped values are written there)
  Interface(const ModelDescription& md, const Shape& shape);
  // Variables read like outputs after them (recorded or connected): numeric variables that are
  // no input or output, by name or FMI 3 alias; the others named are left out.
  void observe(const ModelDescription& md, const Shape& shape, const std::vector<std::string>& names);
};
// The ports: inputs, outputs, then the observed variables (Interface::observe) as outputs.
std::vector<PortSpec> port_specs(const ModelDescription& md, const Shape& shape,
                                 const std::vector<std::string>& observed = {});

// A time in messages (12 significant digits).
std::string fmt_time(double t);

// FMU states (canGetAndSetFMUstate) inside the host's snapshots. A state belongs to the
// instance that made it and is freed through it; the instance's release function ends with the
// instance (fmi2FreeInstance / fmi3FreeInstance free its states), so a snapshot that outlives
// its instance frees nothing and cannot be restored.
using StateRelease = std::function<void(void*)>;

struct FmuState {
  void* handle = nullptr;
  std::weak_ptr<const StateRelease> owner;
  FmuState() = default;
  FmuState(const FmuState&) = delete;
  FmuState& operator=(const FmuState&) = delete;
  ~FmuState() { drop(); }
  void drop() {
    if (auto r = owner.lock(); r && handle) (*r)(handle);
    handle = nullptr;
  }
  // Ready for fmi*GetFMUstate of the instance `release` belongs to: a handle of another
  // instance is freed first (a handle of this one is updated in place).
  void adopt(const std::shared_ptr<const StateRelease>& release) {
    if (owner.lock() == release) return;
    drop();
    owner = release;
  }
  bool of(const std::shared_ptr<const StateRelease>& release) const {
    return handle && release && owner.lock() == release;
  }
};

// The outcome of one doStep.
struct CsStep {
  double reached = 0.0;    // the time the FMU reached (t + h unless discarded)
  bool discarded = false;  // fmi2Discard, or FMI 3 discard / early return
  bool terminate = false;  // FMI 2 fmi2Terminated after a discard, FMI 3 terminateSimulation
  bool event = false;      // FMI 3 eventHandlingNeeded (event mode used): an event at `reached`
};

// The outcome of one round of event iteration (fmi2NewDiscreteStates / fmi3UpdateDiscreteStates).
struct Discrete {
  bool again = false, terminate = false, values_changed = false, next_defined = false;
  double next = 0.0;
};

class Instance {
 public:
  virtual ~Instance() { fmu_->instances.remove(log_.instance); }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  // A fresh instance with the structural parameters, parameters and start values set, through
  // initialization mode at t0 (a model-exchange instance is then in event mode). With
  // leave_initialization false it stays in initialization mode, where inputs can be set and
  // outputs read, until end_initialization(t0).
  virtual void start(double t0, bool leave_initialization = true) = 0;
  virtual void end_initialization(double t0) = 0;
  void set_inputs(Inputs& inputs, double t);
  void get_outputs(std::span<double> y, double t);

  // The elements of one variable as numbers (see values.hpp), in the FMU's unit.
  virtual void set_numbers(const Io& io, std::span<const double> values, double t) = 0;
  virtual void get_numbers(const Io& io, std::span<double> values, double t) = 0;
  // Strings (FMI 2 and 3) and Binary values (FMI 3), element by element.
  virtual std::vector<std::string> get_strings(const Io& io, double t) = 0;
  virtual std::vector<std::vector<std::uint8_t>> get_binaries(const Io& io, double t) = 0;
  // Every element of a String or Binary variable (Binary: its raw bytes), each in a std::string.
  virtual void set_texts(const Io& io, const std::vector<std::string>& values, double t) = 0;
  std::vector<std::string> get_texts(const Io& io, double t);

  // String and Binary variables recorded or connected (core/text_signal.hpp), element by element
  // (an FMI 3 array has one signal per element): the signal of one element (published by
  // publish_texts), and an input's element fed by another FMU's signal (the whole variable set
  // with the numeric inputs in set_inputs when the value of one of its elements changed; the
  // elements no signal feeds keep the manifest's start value, else the FMU's).
  std::size_t text_size(const std::string& name) const;
  std::shared_ptr<TextSignal> text_output(const std::string& name, std::size_t element);
  void text_input(const std::string& name, std::size_t element, std::shared_ptr<TextSignal> source);
  bool has_inputs() const { return !io_.in.empty() || (texts_ && !text_in_.empty()); }
  bool has_texts() const { return texts_; }
  // The elements of the outputs get_outputs() writes (outputs and observed variables).
  std::size_t output_width() const {
    std::size_t w = 0;
    for (const Io& io : io_.out) w = std::max(w, io.offset + io.size);
    return w;
  }
  // After the owner reached t by a step from `from` (t0 at initialization): the values at t.
  // Free for an FMU whose text no one reads.
  void publish_texts(double t, double from) {
    if (texts_) publish_texts_now(t, from);
  }
  // A step starts at t: over it, text inputs hold their sources' values at t (the latest
  // communication point at or before it), whatever the source did since, so that the value
  // does not depend on the order in which subsystems step.
  void hold_texts_from(double t) { text_time_ = t; }
  // The host took a snapshot at t; the FMU went back to t (a snapshot, or a fresh start): what
  // it published after t is gone, its text inputs are set again at the next set_inputs.
  void snapshot_at(double t) { snapshot_t_ = t; }
  void rewound(double t) {
    for (TextIn& x : text_in_) {
      x.values = x.start;
      for (TextFeed& f : x.feeds) f.serial = 0, f.source->set_floor(f.reader, t);
    }
    for (TextOut& x : text_out_)
      for (auto& s : x.signals) s->forget_after(t);
  }

  // Co-simulation: one doStep from t by h.
  virtual CsStep do_step(double t, double h) = 0;
  // FMI 3 co-simulation with event mode (hasEventMode, then used): after initialization and
  // after a step that ends at an event the instance is in event mode (enter_event_mode,
  // update_discrete) until enter_step_mode.
  bool cs_event_mode() const { return !me_ && event_mode_used_; }
  virtual void enter_step_mode(double t) = 0;
  // The names of the doStep function and of its last-successful-time result, for messages.
  virtual const char* do_step_name() const = 0;
  virtual const char* last_time_name() const = 0;

  // Model exchange. The numbers of states and indicators the FMU reports (FMI 3, after
  // initialization; FMI 2: the description's).
  virtual void set_time(double t) = 0;
  virtual void set_states(std::span<const double> x, double t) = 0;
  virtual void derivatives(std::span<double> dx, double t) = 0;
  virtual void indicators(std::span<double> z, double t) = 0;
  virtual void states(std::span<double> x, double t) = 0;
  virtual void completed_step(double t, bool& enter, bool& terminate) = 0;
  virtual void enter_event_mode(double t) = 0;
  virtual Discrete update_discrete(double t) = 0;
  // Event iteration at t in event mode: update_discrete until the FMU needs no further round
  // (at most 1000). The last round's outcome; when the FMU asks to terminate, `end` says so
  // and the iteration stops there.
  Discrete settle_events(double t, std::string& end);
  virtual void enter_continuous_time_mode(double t) = 0;
  virtual std::size_t reported_states() = 0;
  virtual std::size_t reported_indicators() = 0;

  // FMU state save and restore (canGetAndSetFMUstate of the interface).
  bool can_save_state() const { return me_ ? fmu_->md.me_can_get_set_state : fmu_->md.cs_can_get_set_state; }
  virtual void save(FmuState& s, double t) = 0;
  virtual void restore(const FmuState& s, double t) = 0;
  // doStep / completedIntegratorStep may be told that no earlier state comes back.
  bool no_earlier_state() const { return !may_restore_ && !peeking_; }
  // While on, a state is saved only to step a copy of the FMU ahead and come back to it (the
  // rows of results.csv inside a step): the steps meanwhile are told that an earlier state
  // comes back, and the save is not the host's (the FMU's own steps stay as they were).
  void peek(bool on) { peeking_ = on; }

  const Fmu& fmu() const { return *fmu_; }
  const Shape& shape() const { return shape_; }
  const Interface& io() const { return io_; }
  // Reads the output ports beyond the FMU's outputs (port_specs' observed variables) too.
  void observe(const std::vector<PortSpec>& ports);
  LogSink& log() { return log_; }
  const LogSink& log() const { return log_; }
  // The parameter or start value being set when start() threw, "" when none was.
  const std::string& setting() const { return setting_; }

 protected:
  Instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p, const std::string& name);

  // The manifest's value of a parameter or start value (set when it differs from the start).
  virtual void set_value(const Variable& v, std::size_t size, const json& value, double t) = 0;
  // Sets what the manifest gives: structural parameters (true) or the others (false).
  void set_parameters(bool structural, double t);

  std::shared_ptr<const Fmu> fmu_;
  bool me_;
  bool event_mode_used_ = false;  // FMI 3 co-simulation: asked for at instantiation and accepted
  Shape shape_;
  Interface io_;
  std::vector<double> scratch_ = std::vector<double>(io_.scratch_size);
  // Retyped values of one port (the widest element is 8 bytes).
  std::vector<std::uint64_t> bytes_ = std::vector<std::uint64_t>(io_.scratch_size);
  Params params_;
  LogSink log_;
  std::string setting_;
  bool started_ = false, fatal_ = false, may_restore_ = false, peeking_ = false;
  struct TextOut {
    Io io;
    std::vector<std::shared_ptr<TextSignal>> signals;  // per element
    std::vector<std::size_t> readers;  // the owner's own (results.csv reads from its step's start on)
  };
  struct TextFeed {
    std::size_t element = 0;
    std::shared_ptr<TextSignal> source;
    std::size_t reader = 0;
    std::uint64_t serial = 0;  // of the value last set; 0: none
  };
  struct TextIn {
    Io io;
    std::vector<std::string> start, values;  // per element: the start value, the value set
    std::vector<TextFeed> feeds;
  };
  std::vector<TextOut> text_out_;
  std::vector<TextIn> text_in_;
  bool texts_ = false;  // any of them: one test on the numeric path
  double snapshot_t_ = std::numeric_limits<double>::infinity();
  double text_time_ = 0.0;
  void publish_texts_now(double t, double from);
  const Variable& text_variable(const std::string& name, bool input) const;
  std::vector<std::string> text_start(const Variable& v, std::size_t size) const;
  void set_text_inputs(double t);
  std::shared_ptr<const StateRelease> release_state_;
};

// An instance of the FMU's version and interface (fmi1.cpp, fmi2.cpp, fmi3.cpp); instantiates it.
std::unique_ptr<Instance> make_fmi1_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name);
std::unique_ptr<Instance> make_fmi2_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name);
std::unique_ptr<Instance> make_fmi3_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name);
std::unique_ptr<Instance> make_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                        const std::string& name);

}  // namespace stride::host::fmi
