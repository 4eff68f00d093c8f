// What a subsystem may tell the recorder about its outputs within a step, beyond their values
// at the step's ends. Host-internal (the model-exchange FMU implements both).
//
// EventOutputs: outputs may jump at the time a step reaches (an FMU's time, state or step
// event, handled at the step's end); the subsystem hands over the outputs just before the
// jump, so that values recorded between two steps are never interpolated across it. The
// master asks after every step of a subsystem that does.
//
// DenseOutputs: the subsystem computes its outputs at the record times strictly inside each
// step itself (from its integrator's states), instead of the recorder interpolating linearly
// between the step's ends. The recorder hands it the grid once, before the run.
#pragma once

#include <cstddef>
#include <span>

namespace stride::host {

class EventOutputs {
 public:
  virtual ~EventOutputs() = default;
  // After a step: true when it ended at an event, with the outputs just before the event
  // (the left limit at the time reached) in y; outputs() gives those after it.
  virtual bool outputs_before_event(std::span<double> y) const = 0;
};

class DenseOutputs {
 public:
  virtual ~DenseOutputs() = default;
  // Record times t0 + k dt (k >= 0); from the next step on, every step keeps its outputs at
  // those strictly inside it (by more than 1e-9 dt).
  virtual void record_grid(double t0, double dt) = 0;
  // The outputs at record time k when the last step kept them, else null.
  virtual const double* outputs_at_row(std::size_t k) const = 0;
};

}  // namespace stride::host
