// A co-simulation FMU (FMI 2 or FMI 3) as a Stride Subsystem. Internal to the host.
//
// Each Stride step is one doStep, whatever is recorded:
//   step(t, h):
//     refuse h != first h when the FMU cannot change its communication step
//     set inputs at t (at t + h/2 when the host may repeat the step, see co_simulation.cpp)
//     record times tk in (t, t + h) (recorded FMUs that can change their step and save their
//     state): state saved, doStep from record time to record time, the inputs held, the
//     outputs at each tk are its row (DenseOutputs); state restored. Otherwise (or when that
//     copy meets an event or a discard) rows inside are linear between the step's ends.
//     doStep to t + h
//     eventHandlingNeeded (FMI 3 event mode) -> outputs before the event kept, event mode:
//                                    update discrete states until done, step mode; the step
//                                    ends at the event (one at t: handled, then doStep again)
//     discarded / returned early -> the step ends where the FMU stopped (t < reached <= t + h)
//                                    (no progress: StepFailure)
//     terminateSimulation        -> the step ends there, the next one ends the run
//   An FMU with event mode leaves initialization in event mode: updated the same way first.
//   outputs(): inputs at the time reached first when an output has direct feedthrough.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fmi/binary.hpp"

namespace stride::host::fmi {

// Instantiates the FMU's co-simulation interface.
std::unique_ptr<Subsystem> make_co_simulation(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports,
                                              const Params& p, const std::string& name);

}  // namespace stride::host::fmi
