// A co-simulation subsystem that advances itself (libcosim's "slave").
#pragma once

#include "stride/plugin.hpp"

namespace stride {

// Call order, by the host's master algorithm:
//   bind(inputs) -> initialize(t0) -> outputs() -> [equilibrate(t0) -> outputs()]
//   -> { [input_discontinuity(t)] -> step(t, h) -> outputs() }*
// Inputs may be read through inputs().at() at any time inside the step being taken.
// The host calls every method from one thread at a time; different subsystems of one run may
// be called from different threads, and a sweep runs many instances of a plugin at once, so a
// plugin keeps no mutable state outside its objects (no static caches without a lock).
class Subsystem : public Component {
 public:
  // Sets the initial state at t0. Inputs at t0 may be read only by outputs with feedthrough.
  virtual void initialize(double t0) = 0;
  // Consistent initialization after every subsystem has produced its initial outputs:
  // a subsystem may adjust its state to its inputs at t0 (e.g. static equilibrium, Eq. 41).
  // Runs in the manifest's order of subsystems (list sources first). Default: nothing to do.
  virtual void equilibrate(double /*t0*/) {}
  // Advances from t (the time reached so far) by at most h; returns the time reached,
  // t < t_new <= t + h. Fixed-step subsystems return t + h. Throws StepFailure on failure.
  virtual double step(double t, double h) = 0;
  // Called before step(t, ...) when a new sample arrived on at least one input since the last
  // step: the inputs from t on no longer continue what the previous step read (a hold jumps,
  // an extrapolation is replaced by data). Values computed from earlier inputs (a derivative
  // reused as the next stage, a multistep history) must not be carried across t. Not called
  // while no new sample arrives (the fast steps between communication points of a multirate
  // run), so caching across those steps is safe. Must not allocate.
  virtual void input_discontinuity(double /*t*/) {}
  // Writes all outputs at the time reached, concatenated in port declaration order.
  virtual void outputs(std::span<double> y) = 0;
  // Extra summary entries (initialization results, constraint violations, ...).
  virtual json report() const { return json::object(); }

  // Optional capability: snapshots of the state, so that the host can repeat a macro step
  // (iterative coupling). Only called when can_save_state() is true, after initialization and
  // at communication points:
  //   save_state(slot) -> { step()* -> outputs() -> restore_state(*slot) }* -> step()* ...
  // save_state() stores everything later steps and outputs depend on (the time reached
  // included); `slot` is empty or holds this subsystem's previous snapshot, whose memory may
  // be reused. After restore_state(), the same steps with the same inputs give the same
  // outputs as after the save. Inputs are not part of the state. Both may allocate; the host
  // calls them from one thread. An exception ends the run like one from step().
  virtual bool can_save_state() const { return false; }
  virtual void save_state(std::unique_ptr<SavedState>& /*slot*/) {
    throw std::logic_error("save_state() called on a subsystem that cannot save its state");
  }
  virtual void restore_state(const SavedState& /*state*/) {
    throw std::logic_error("restore_state() called on a subsystem that cannot save its state");
  }
};

}  // namespace stride
