// A model-exchange FMU (FMI 2 or FMI 3) as a Stride Subsystem: its continuous states stepped by
// a Stride integrator, with the FMU's events. Internal to the host.
//
//   initialize(t0): start (instantiate, parameters, initialization) -> event iteration at t0
//                   -> continuous states
//   step(t, h):
//     t_end = t + h, or the next time event when it falls in (t, t + h]
//     integrate from t towards t_end
//     an event indicator changed sign -> bisect on the time of the first change, re-integrating
//                                        from t (core/state_events.hpp)
//     record times strictly inside the step (DenseOutputs) -> outputs at the states of the
//                                  cubic Hermite interpolant of the step's ends
//     completedIntegratorStep at the time reached (may ask for an event or the end)
//     time, state or step event -> enter event mode, event iteration (new discrete states until
//                                  the FMU is done; next time event), continuous states,
//                                  restart the integrator; again while the next time event
//                                  is due at the time reached (also after initialization)
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "fmi/binary.hpp"

namespace stride::host::fmi {

// Instantiates the FMU's model-exchange interface, stepped by `integrator`.
std::unique_ptr<Subsystem> make_model_exchange(std::shared_ptr<const Fmu> fmu, std::vector<PortSpec> ports,
                                               const Params& p, const std::string& name,
                                               std::shared_ptr<Integrator> integrator);

}  // namespace stride::host::fmi
