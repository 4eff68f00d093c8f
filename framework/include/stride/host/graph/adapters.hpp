// Subsystems the host composes from two plugins chosen separately in the manifest.
#pragma once

#include <memory>

#include <stride/stride.hpp>

namespace stride::host {

// An OdeSystem stepped by an Integrator (manifest: "integrator").
std::unique_ptr<Subsystem> make_ode_subsystem(std::shared_ptr<OdeSystem> system,
                                              std::shared_ptr<Integrator> integrator);

#if __has_include(<stride/multibody.hpp>)
// A MultibodyModel stepped by a Formulation (manifest: "formulation").
std::unique_ptr<Subsystem> make_multibody_subsystem(std::shared_ptr<MultibodyModel> model,
                                                    std::shared_ptr<Formulation> formulation);
#endif

}  // namespace stride::host
