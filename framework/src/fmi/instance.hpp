// One FMU instance, FMI 2 or FMI 3, behind the calls Stride's co-simulation and model-exchange
// algorithms make (co_simulation.hpp, model_exchange.hpp): the version adapter. Internal to the
// host.
//
// Call order (either interface):
//   make_instance() -> start(t0) -> { set_inputs(), get_outputs(), [save(), restore()] and
//   co-simulation: do_step()* ; model exchange: set_time(), set_states(), derivatives(),
//   indicators(), completed_step(), enter_event_mode(), update_discrete()*,
//   enter_continuous_time_mode(), states() }
// start() again instantiates afresh. Every call checks the FMU's status: fmi*Error and
// fmi*Fatal throw PluginError with the FMU's last messages (after fmi*Fatal nothing more is
// called, not even fmi*FreeInstance). One thread at a time; the instance owns its FMU instance
// and frees it when destroyed.
#pragma once

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "fmi/binary.hpp"
#include "stride/host/load/registry.hpp"  // PluginError

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

// Where each port's value lives in the FMU: inputs and outputs in port order.
struct Io {
  unsigned vr = 0;
  VarType type = VarType::real;
  std::size_t size = 1;    // elements (FMI 3 arrays)
  std::size_t offset = 0;  // outputs: first element in the subsystem's outputs
  double factor = 1.0, shift = 0.0;  // port value = FMU value * factor + shift (unit conversion)
  bool converted() const { return factor != 1.0 || shift != 0.0; }
};

// The FMU's ports, shared by every instance kind.
struct Interface {
  std::vector<Io> in, out;
  bool any_feedthrough = false;
  std::size_t scratch_size = 1;  // the widest port (converted or retyped values are written there)
  explicit Interface(const ModelDescription& md);
};

// An input in the FMU's unit: `u` itself when no conversion applies, else converted into `buf`.
std::span<const double> to_fmu(const Io& io, std::span<const double> u, std::vector<double>& buf);
// Outputs read in the FMU's unit, converted in place.
void from_fmu(const Io& io, std::span<double> y);

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
  bool of(const std::shared_ptr<const StateRelease>& release) const { return handle && release && owner.lock() == release; }
};

// The outcome of one doStep.
struct CsStep {
  double reached = 0.0;    // the time the FMU reached (t + h unless discarded)
  bool discarded = false;  // fmi2Discard, or FMI 3 discard / early return
  bool terminate = false;  // FMI 2 fmi2Terminated after a discard, FMI 3 terminateSimulation
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

  // A fresh instance with the parameters set, through initialization mode at t0 (a
  // model-exchange instance is then in event mode).
  virtual void start(double t0) = 0;
  virtual void set_inputs(Inputs& inputs, double t) = 0;
  virtual void get_outputs(std::span<double> y, double t) = 0;

  // Co-simulation: one doStep from t by h.
  virtual CsStep do_step(double t, double h) = 0;
  // The names of the doStep function and of its last-successful-time result, for messages.
  virtual const char* do_step_name() const = 0;
  virtual const char* last_time_name() const = 0;

  // Model exchange.
  virtual void set_time(double t) = 0;
  virtual void set_states(std::span<const double> x, double t) = 0;
  virtual void derivatives(std::span<double> dx, double t) = 0;
  virtual void indicators(std::span<double> z, double t) = 0;
  virtual void states(std::span<double> x, double t) = 0;
  virtual void completed_step(double t, bool& enter, bool& terminate) = 0;
  virtual void enter_event_mode(double t) = 0;
  virtual Discrete update_discrete(double t) = 0;
  virtual void enter_continuous_time_mode(double t) = 0;

  // FMU state save and restore (canGetAndSetFMUstate of the interface).
  bool can_save_state() const { return me_ ? fmu_->md.me_can_get_set_state : fmu_->md.cs_can_get_set_state; }
  virtual void save(FmuState& s, double t) = 0;
  virtual void restore(const FmuState& s, double t) = 0;
  // doStep / completedIntegratorStep may be told that no earlier state comes back.
  bool no_earlier_state() const { return !may_restore_; }

  const Fmu& fmu() const { return *fmu_; }
  const Interface& io() const { return io_; }
  LogSink& log() { return log_; }
  const LogSink& log() const { return log_; }

 protected:
  Instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p, const std::string& name)
      : fmu_(std::move(fmu)), me_(model_exchange), io_(fmu_->md), params_(p) {
    log_.instance = name;
    fmu_->instances.add(name);
  }

  std::shared_ptr<const Fmu> fmu_;
  bool me_;
  Interface io_;
  std::vector<double> scratch_ = std::vector<double>(io_.scratch_size);
  Params params_;
  LogSink log_;
  bool started_ = false, fatal_ = false, may_restore_ = false;
  std::shared_ptr<const StateRelease> release_state_;
};

// An instance of the FMU's version and interface (fmi2.cpp, fmi3.cpp); instantiates it.
std::unique_ptr<Instance> make_fmi2_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name);
std::unique_ptr<Instance> make_fmi3_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name);
std::unique_ptr<Instance> make_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                        const std::string& name);

}  // namespace stride::host::fmi
