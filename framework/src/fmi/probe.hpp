// Instantiation tried in a child process before the host instantiates an FMU itself. Internal
// to the host.
//
// A binary that crashes or hangs while instantiating stops the child, and the host reports it
// instead of dying with it (instantiation happens while the experiment is built, before any
// supervised run). The child instantiates and frees one instance with default parameters;
// STRIDE_FMU_PROBE_TIMEOUT (s, default 10) bounds the wait.
#pragma once

#include <memory>

#include "fmi/binary.hpp"

namespace stride::host::fmi {

// Throws PluginError for a crash or a hang; anything else (NULL, an exception) is left for the
// real instantiation to report with the FMU's own messages.
void probe_instantiation(const std::shared_ptr<const Fmu>& fmu, bool model_exchange);

}  // namespace stride::host::fmi
