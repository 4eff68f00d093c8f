// Instantiation and initialization tried in a child process before the host instantiates an
// FMU itself. Internal to the host.
//
// A binary that crashes or hangs while instantiating stops the child, and the host reports it
// instead of dying with it (instantiation happens while the experiment is built, before any
// supervised run). The child then takes its instance through initialization as the run will
// at its start (Instance::start: the manifest's parameters and start values set, enter and
// exit initialization mode, at t0; a co-simulation FMU with inputs is left in initialization
// mode, as the run leaves it until its inputs hold the other subsystems' initial outputs,
// which the probe does not have), so that a value the FMU refuses there, or an
// initialization that fails, crashes or hangs, is a manifest error of `validate` rather than a
// failed run at t0. STRIDE_FMU_PROBE_TIMEOUT (s, default 10) bounds the wait.
#pragma once

#include <memory>
#include <string>

#include "fmi/binary.hpp"

namespace stride::host::fmi {

// Throws PluginError for a crash or a hang, or an initialization the FMU fails with its own
// message; ParameterError (pointer "/<variable>", relative to the subsystem's parameters) when
// the FMU refuses a parameter or start value the manifest sets. A failed instantiation (NULL,
// an exception) is left for the real instantiation to report with the FMU's own messages.
void probe_instantiation(const std::shared_ptr<const Fmu>& fmu, bool model_exchange, const Params& p,
                         const std::string& name, double t0);

}  // namespace stride::host::fmi
