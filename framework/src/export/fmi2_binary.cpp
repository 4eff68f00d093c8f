// The FMI 2.0 co-simulation entry points of an exported experiment (the binary `stride export`
// packs as binaries/linux64/<modelIdentifier>.so): a state machine around ExportedInstance.
//
//   fmi2Instantiate          resources -> ExportedInstance (NULL and a logged reason on failure)
//   fmi2SetupExperiment      start time (must be the experiment's), stop time (<= its end)
//   fmi2ExitInitializationMode   Simulation::initialize
//   fmi2DoStep(t, h)         Simulation::advance_to(t + h); any h (the experiment sub-steps)
//   fmi2SetReal              input elements (inputs no connection of the experiment feeds),
//                            held from the time reached on; in initialization mode before
//                            the experiment is initialized (again) with them
//   fmi2GetReal              output elements at the time reached
//   fmi2Terminate            no more steps; values stay readable until fmi2FreeInstance
//   fmi2Get/Set/FreeFMUstate in step mode, where the model description declares
//                            canGetAndSetFMUstate (ExportedInstance::save)
// Every failure is fmi2Error with the reason through the importer's logger (category
// logStatusError), never an exception or an abort across the C interface; after a failed step
// the instance only answers fmi2GetReal, fmi2Terminate, fmi2Reset and fmi2FreeInstance.
#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstring>
#include <exception>
#include <memory>
#include <span>
#include <string>

#include "export/fmi_component.hpp"
#include "stride/fmi/fmi2.h"

#define STRIDE_FMI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using Component = stride::host::fmu_export::Component<fmi2Status, fmi2OK, fmi2Error>;
using stride::host::fmu_export::Phase;

Component* as_component(fmi2Component c) { return static_cast<Component*>(c); }

fmi2Status unsupported(fmi2Component c, const char* call, const char* why) {
  if (!c) return fmi2Error;
  return as_component(c)->error(call, why);
}

}  // namespace

STRIDE_FMI_EXPORT const char* fmi2GetTypesPlatform(void) { return "default"; }
STRIDE_FMI_EXPORT const char* fmi2GetVersion(void) { return "2.0"; }

STRIDE_FMI_EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t, const fmi2String[]) {
  if (!c) return fmi2Error;
  as_component(c)->logging = on;
  return fmi2OK;
}

STRIDE_FMI_EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                                const fmi2CallbackFunctions* cb, fmi2Boolean, fmi2Boolean logging) {
  try {
    auto c = std::make_unique<Component>();
    c->name = name ? name : "";
    if (cb && cb->logger) {
      const fmi2CallbackFunctions f = *cb;
      const std::string instance = c->name;
      c->sink = [f, instance](bool is_error, const char* category, const std::string& message) {
        f.logger(f.componentEnvironment, instance.c_str(), is_error ? fmi2Error : fmi2OK, category, "%s",
                 message.c_str());
      };
    }
    c->logging = logging;
    if (type != fmi2CoSimulation) {
      c->error("fmi2Instantiate", "this FMU is for co-simulation only");
      return nullptr;
    }
    if (!guid || !resources) {
      c->error("fmi2Instantiate", "no GUID or no resource location given");
      return nullptr;
    }
    c->token = guid;
    c->resources = resources;
    if (!c->make("fmi2Instantiate")) return nullptr;
    if (c->logging) c->log(false, "logAll", "instantiated from " + c->resources);
    return c.release();
  } catch (...) {
    return nullptr;  // out of memory before a logger was known
  }
}

STRIDE_FMI_EXPORT void fmi2FreeInstance(fmi2Component c) {
  try {
    delete as_component(c);
  } catch (...) {
  }
}

STRIDE_FMI_EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean, fmi2Real, fmi2Real start,
                                                 fmi2Boolean stop_defined, fmi2Real stop) {
  if (!c) return fmi2Error;
  Component& m = *as_component(c);
  if (!m.in("fmi2SetupExperiment", {Phase::instantiated})) return fmi2Error;
  return m.setup("fmi2SetupExperiment", start, stop_defined, stop);
}

STRIDE_FMI_EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
  if (!c) return fmi2Error;
  Component& m = *as_component(c);
  if (!m.in("fmi2EnterInitializationMode", {Phase::instantiated})) return fmi2Error;
  m.phase = Phase::initializing;
  return fmi2OK;
}

STRIDE_FMI_EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  return c ? as_component(c)->exit_initialization("fmi2ExitInitializationMode") : fmi2Error;
}

STRIDE_FMI_EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean) {
  return c ? as_component(c)->do_step("fmi2DoStep", t, h) : fmi2Error;
}

STRIDE_FMI_EXPORT fmi2Status fmi2Terminate(fmi2Component c) {
  return c ? as_component(c)->terminate("fmi2Terminate") : fmi2Error;
}

STRIDE_FMI_EXPORT fmi2Status fmi2Reset(fmi2Component c) { return c ? as_component(c)->reset("fmi2Reset") : fmi2Error; }

STRIDE_FMI_EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real value[]) {
  if (!c) return fmi2Error;
  Component& m = *as_component(c);
  if (n > 0 && (!vr || !value)) return m.error("fmi2GetReal", "null array");
  if (!m.x) return m.error("fmi2GetReal", "the instance could not be reset");
  return m.guarded("fmi2GetReal", [&] {
    for (size_t i = 0; i < n; ++i) value[i] = m.x->get(vr[i]);
    return fmi2OK;
  });
}

STRIDE_FMI_EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n,
                                         const fmi2Real value[]) {
  if (!c) return fmi2Error;
  Component& m = *as_component(c);
  if (n > 0 && (!vr || !value)) return m.error("fmi2SetReal", "null array");
  if (!m.in("fmi2SetReal", {Phase::instantiated, Phase::initializing, Phase::stepping})) return fmi2Error;
  return m.guarded("fmi2SetReal", [&] {
    for (size_t i = 0; i < n; ++i) m.x->set(vr[i], std::span<const double>(&value[i], 1));
    return fmi2OK;
  });
}

STRIDE_FMI_EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference[], size_t n, fmi2Integer[]) {
  return n == 0 ? fmi2OK : unsupported(c, "fmi2GetInteger", "the FMU has no Integer variables");
}
STRIDE_FMI_EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference[], size_t n, fmi2Boolean[]) {
  return n == 0 ? fmi2OK : unsupported(c, "fmi2GetBoolean", "the FMU has no Boolean variables");
}
STRIDE_FMI_EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference[], size_t n, fmi2String[]) {
  return n == 0 ? fmi2OK : unsupported(c, "fmi2GetString", "the FMU has no String variables");
}
STRIDE_FMI_EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference[], size_t n,
                                            const fmi2Integer[]) {
  return n == 0 ? fmi2OK : unsupported(c, "fmi2SetInteger", "the FMU has no Integer variables");
}
STRIDE_FMI_EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference[], size_t n,
                                            const fmi2Boolean[]) {
  return n == 0 ? fmi2OK : unsupported(c, "fmi2SetBoolean", "the FMU has no Boolean variables");
}
STRIDE_FMI_EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference[], size_t n, const fmi2String[]) {
  return n == 0 ? fmi2OK : unsupported(c, "fmi2SetString", "the FMU has no String variables");
}

STRIDE_FMI_EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate* state) {
  return c ? as_component(c)->get_state("fmi2GetFMUstate", state) : fmi2Error;
}
STRIDE_FMI_EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate state) {
  return c ? as_component(c)->set_state("fmi2SetFMUstate", state) : fmi2Error;
}
STRIDE_FMI_EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate* state) {
  return c ? Component::free_state(state) : fmi2Error;
}
STRIDE_FMI_EXPORT fmi2Status fmi2SerializedFMUstateSize(fmi2Component c, fmi2FMUstate, size_t*) {
  return unsupported(c, "fmi2SerializedFMUstateSize", "not supported (canSerializeFMUstate=\"false\")");
}
STRIDE_FMI_EXPORT fmi2Status fmi2SerializeFMUstate(fmi2Component c, fmi2FMUstate, fmi2Byte[], size_t) {
  return unsupported(c, "fmi2SerializeFMUstate", "not supported (canSerializeFMUstate=\"false\")");
}
STRIDE_FMI_EXPORT fmi2Status fmi2DeSerializeFMUstate(fmi2Component c, const fmi2Byte[], size_t, fmi2FMUstate*) {
  return unsupported(c, "fmi2DeSerializeFMUstate", "not supported (canSerializeFMUstate=\"false\")");
}
STRIDE_FMI_EXPORT fmi2Status fmi2GetDirectionalDerivative(fmi2Component c, const fmi2ValueReference[], size_t,
                                                          const fmi2ValueReference[], size_t, const fmi2Real[],
                                                          fmi2Real[]) {
  return unsupported(c, "fmi2GetDirectionalDerivative",
                     "not supported (providesDirectionalDerivative is not declared)");
}
STRIDE_FMI_EXPORT fmi2Status fmi2SetRealInputDerivatives(fmi2Component c, const fmi2ValueReference[], size_t,
                                                         const fmi2Integer[], const fmi2Real[]) {
  return unsupported(c, "fmi2SetRealInputDerivatives", "not supported (canInterpolateInputs=\"false\")");
}
STRIDE_FMI_EXPORT fmi2Status fmi2GetRealOutputDerivatives(fmi2Component c, const fmi2ValueReference[], size_t,
                                                          const fmi2Integer[], fmi2Real[]) {
  return unsupported(c, "fmi2GetRealOutputDerivatives", "not supported (maxOutputDerivativeOrder=\"0\")");
}
STRIDE_FMI_EXPORT fmi2Status fmi2CancelStep(fmi2Component c) {
  return unsupported(c, "fmi2CancelStep", "steps are not asynchronous");
}

STRIDE_FMI_EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind, fmi2Status*) {
  return unsupported(c, "fmi2GetStatus", "steps are not asynchronous");
}
STRIDE_FMI_EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real* value) {
  if (!c || !value) return fmi2Error;
  Component& m = *as_component(c);
  if (k != fmi2LastSuccessfulTime || !m.x) return m.error("fmi2GetRealStatus", "only fmi2LastSuccessfulTime is known");
  *value = m.x->time();
  return fmi2OK;
}
STRIDE_FMI_EXPORT fmi2Status fmi2GetIntegerStatus(fmi2Component c, const fmi2StatusKind, fmi2Integer*) {
  return unsupported(c, "fmi2GetIntegerStatus", "no integer status");
}
STRIDE_FMI_EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean* value) {
  if (!c || !value) return fmi2Error;
  Component& m = *as_component(c);
  if (k != fmi2Terminated) return m.error("fmi2GetBooleanStatus", "only fmi2Terminated is known");
  *value = m.phase == Phase::failed || m.phase == Phase::terminated;
  return fmi2OK;
}
STRIDE_FMI_EXPORT fmi2Status fmi2GetStringStatus(fmi2Component c, const fmi2StatusKind, fmi2String*) {
  return unsupported(c, "fmi2GetStringStatus", "no string status");
}
