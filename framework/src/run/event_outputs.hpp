// A subsystem whose outputs may jump at the time a step reaches (an FMU's time, state or step
// event, handled at the step's end): it hands the host the outputs just before the jump, so
// that values recorded between two steps are never interpolated across it. Host-internal (the
// FMU subsystems implement it); the master asks after every step of a subsystem that does.
#pragma once

#include <span>

namespace stride::host {

class EventOutputs {
 public:
  virtual ~EventOutputs() = default;
  // After a step: true when it ended at an event, with the outputs just before the event
  // (the left limit at the time reached) in y; outputs() gives those after it.
  virtual bool outputs_before_event(std::span<double> y) const = 0;
};

}  // namespace stride::host
