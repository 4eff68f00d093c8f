// Stepping one experiment from outside run(): a fresh run state with its master and coupling
// scheme, and no output folder. run() (run/run.hpp) is this plus results.csv, the progress
// display and summary.json; an FMU wrapper or a test steps a Simulation directly. Internal to
// the host.
//
//   Simulation sim(experiment);   // a fresh RunState: the experiment's plugins read from it
//   sim.observe(observer);        // optional (run/observer.hpp), before initialize()
//   sim.log_macro_steps(file);    // optional: iterations.csv or steps.csv, before initialize()
//   sim.set_input("c.u", {..});  // optional, before initialize() and between advance_to()s: an
//                                 // input no connection feeds (Manifest::external_inputs)
//   sim.initialize();             // the coupling scheme; every subsystem at the start time
//   sim.advance_to(t1);           // start < t1 < t2 < ... <= end: communication points
//   sim.outputs("crane.s");       // what a subsystem's output port holds at time()
//   sim.advance_to(t2); ...
//
// Throws: the constructor std::logic_error when another Simulation of the experiment is alive
// (its plugin objects keep their state: one run drives them at a time; a Simulation made after
// the last one ended starts again from the beginning, initializing every plugin again);
// initialize() and advance_to() throw Stop for every way a run ends early, after which the
// Simulation may only be read and destroyed (advance_to() throws std::logic_error); also
// std::logic_error for calls out of order, std::invalid_argument for a time past the end or an
// unknown output. Ownership: the experiment must outlive the Simulation. One thread.
// Allocation: advance_to() allocates nothing under Jacobi, Gauss–Seidel and multirate coupling
// (iterative coupling and rejected macro steps save snapshots, which plugins may allocate
// for).
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "run/coupling.hpp"

namespace stride::host {

class Simulation {
 public:
  struct Options {
    const volatile int* stop = nullptr;  // set to a signal number to stop (Stop: interrupted)
    RunBeacon* beacon = nullptr;         // shared with a supervising process
    // Subsystems compute only the outputs the run itself reads (connections, bonds, bounds,
    // results.csv; RunState::read_only_what_the_run_reads): for run(), never for a caller
    // that reads outputs() of its own choice.
    bool outputs_read_by_run_only = false;
  };
  explicit Simulation(Experiment& experiment) : Simulation(experiment, Options{}) {}
  Simulation(Experiment& experiment, const Options& options);
  ~Simulation();
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  // Throws std::logic_error after initialize().
  void observe(Observer& o);
  // The rows of iterative coupling (iterations.csv) or of the adaptive macro step (steps.csv).
  void log_macro_steps(RowFile& file) { macro_log_ = &file; }
  void initialize();
  // Instead of initialize(): every subsystem initialized and its outputs read (feedthrough
  // chains settled), before any equilibrates; outputs() reads them. The Simulation can then
  // only be read and destroyed. An exported FMU's outputs in initialization mode.
  void initial_outputs();
  // Every subsystem to t (end included): the scheme's communication points up to t, and t.
  void advance_to(double t);
  // Sets input port "subsystem.port" (one no connection feeds, in its unit) from time() on: held
  // until the next set_input(). The subsystem's next step starts from a discontinuity
  // (input_discontinuity); its outputs at time() are read again by fresh_outputs(), once for
  // all the inputs set. Throws std::invalid_argument for an unknown or connected input or a
  // wrong number of values; allocates nothing.
  void set_input(const std::string& subsystem_port, std::span<const double> values);
  // Reads again the outputs at time() of the subsystems whose inputs were set since (an output
  // with feedthrough sees them); advance_to() does it itself. Throws Stop (not finite).
  void fresh_outputs();
  // A run's state between advance_to()s, for an exported FMU's get/set FMU state: every
  // subsystem's snapshot (Master::save), the inputs set from outside and where the scheme
  // stands. Only for runs can_save() allows: Jacobi or Gauss–Seidel without iteration or step
  // control, no connection (an extrapolator keeps a history it cannot save) and every
  // subsystem able to save its state. save() may allocate (the plugins' snapshots); restore()
  // puts everything back as it was at save(). Both throw std::logic_error when not allowed.
  struct Saved {
    CouplingScheme::Position position;
    std::vector<Master::Snapshot> nodes;
    std::vector<std::vector<std::vector<double>>> inputs;
    std::vector<char> renewed;
  };
  bool can_save() const;
  void save(Saved& s);
  void restore(const Saved& s);
  // The time every subsystem has reached.
  double time() const { return master_.time_reached(); }
  // Output port "subsystem.port" at time(), in its unit. The span stays valid until the
  // Simulation ends.
  std::span<const double> outputs(const std::string& subsystem_port) const;
  const RunState& state() const { return state_; }
  // The scheme's entries of summary.json (none before initialize()).
  void summarize(json& summary) const {
    if (scheme_) scheme_->summarize(summary);
  }

 private:
  const Experiment& experiment_;
  RunState state_;
  Master master_;
  RowFile* macro_log_ = nullptr;
  std::unique_ptr<CouplingScheme> scheme_;  // made by initialize()
  bool stopped_ = false;                    // initialize() or advance_to() threw
};

}  // namespace stride::host
