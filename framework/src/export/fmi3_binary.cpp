// The FMI 3.0 co-simulation entry points of an exported experiment (the binary `stride export
// --fmi 3` packs as binaries/x86_64-linux/<modelIdentifier>.so): the state machine of
// fmi_component.hpp, as in fmi2_binary.cpp.
//
//   fmi3InstantiateCoSimulation   resources -> ExportedInstance (NULL and a logged reason)
//   fmi3EnterInitializationMode   start time (the experiment's), stop time (<= its end)
//   fmi3ExitInitializationMode    Simulation::initialize
//   fmi3DoStep(t, h)              Simulation::advance_to(t + h); never returns early
//   fmi3SetFloat64                input ports (those no connection of the experiment feeds),
//                                 held from the time reached on
//   fmi3GetFloat64                output ports, each an array of its elements
//   fmi3Get/Set/FreeFMUState      in step mode, where canGetAndSetFMUState is declared
//   fmi3GetFloat64 of "time"      the independent variable (value reference 0): the time reached
// Every other function of the interface (FMI 3.0 requires the binary to define them all, see
// STRIDE_FMI3_*_FUNCTIONS): fmi3Error with the reason through the logger, or, for a call with
// no instance to log through, fmi3Error alone.
#include <algorithm>
#include <cmath>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "export/fmi_component.hpp"
#include "stride/fmi/fmi3.h"

#define STRIDE_FMI_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

using Component = stride::host::fmu_export::Component<fmi3Status, fmi3OK, fmi3Error>;
using stride::host::fmu_export::Phase;

Component* as_component(fmi3Instance c) { return static_cast<Component*>(c); }

fmi3Status unsupported(fmi3Instance c, const char* call, const char* why) {
  if (!c) return fmi3Error;
  return as_component(c)->error(call, why);
}

// The independent variable "time" (model_description.hpp): read as the time reached, never set.
bool is_time(fmi3ValueReference vr) { return vr == stride::host::fmu_export::kTimeValueReference; }
double time_reached(const Component& m) { return m.x ? m.x->time() : m.start; }

}  // namespace

STRIDE_FMI_EXPORT const char* fmi3GetVersion(void) { return "3.0"; }

STRIDE_FMI_EXPORT fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t, const fmi3String[]) {
  if (!c) return fmi3Error;
  as_component(c)->logging = on;
  return fmi3OK;
}

STRIDE_FMI_EXPORT fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,
                                                           fmi3Boolean, fmi3Boolean logging, fmi3Boolean event_mode,
                                                           fmi3Boolean, const fmi3ValueReference[],
                                                           size_t n_intermediate, fmi3InstanceEnvironment env,
                                                           fmi3LogMessageCallback log, fmi3IntermediateUpdateCallback) {
  try {
    auto c = std::make_unique<Component>();
    c->name = name ? name : "";
    if (log)
      c->sink = [env, log](bool is_error, const char* category, const std::string& message) {
        log(env, is_error ? fmi3Error : fmi3OK, category, message.c_str());
      };
    c->logging = logging;
    if (event_mode || n_intermediate > 0) {
      c->error("fmi3InstantiateCoSimulation", "event mode and intermediate variables are not supported");
      return nullptr;
    }
    if (!token || !resources) {
      c->error("fmi3InstantiateCoSimulation", "no instantiation token or no resource path given");
      return nullptr;
    }
    c->token = token;
    c->resources = resources;
    if (!c->make("fmi3InstantiateCoSimulation")) return nullptr;
    return c.release();
  } catch (...) {
    return nullptr;
  }
}

STRIDE_FMI_EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String, fmi3String, fmi3String, fmi3Boolean,
                                                            fmi3Boolean, fmi3InstanceEnvironment env,
                                                            fmi3LogMessageCallback log) {
  if (log) log(env, fmi3Error, "logStatusError", "fmi3InstantiateModelExchange: this FMU is for co-simulation only");
  return nullptr;
}

STRIDE_FMI_EXPORT void fmi3FreeInstance(fmi3Instance c) {
  try {
    delete as_component(c);
  } catch (...) {
  }
}

STRIDE_FMI_EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean, fmi3Float64, fmi3Float64 start,
                                                         fmi3Boolean stop_defined, fmi3Float64 stop) {
  if (!c) return fmi3Error;
  Component& m = *as_component(c);
  if (!m.in("fmi3EnterInitializationMode", {Phase::instantiated})) return fmi3Error;
  const fmi3Status s = m.setup("fmi3EnterInitializationMode", start, stop_defined, stop);
  if (s == fmi3OK) m.phase = Phase::initializing;
  return s;
}

STRIDE_FMI_EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
  return c ? as_component(c)->exit_initialization("fmi3ExitInitializationMode") : fmi3Error;
}

STRIDE_FMI_EXPORT fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean, fmi3Boolean* event,
                                        fmi3Boolean* terminate, fmi3Boolean* early, fmi3Float64* last) {
  if (!c) return fmi3Error;
  Component& m = *as_component(c);
  const fmi3Status s = m.do_step("fmi3DoStep", t, h);
  if (event) *event = false;
  if (terminate) *terminate = s != fmi3OK;
  if (early) *early = false;
  if (last && m.x) *last = m.x->time();
  return s;
}

STRIDE_FMI_EXPORT fmi3Status fmi3Terminate(fmi3Instance c) {
  return c ? as_component(c)->terminate("fmi3Terminate") : fmi3Error;
}

STRIDE_FMI_EXPORT fmi3Status fmi3Reset(fmi3Instance c) { return c ? as_component(c)->reset("fmi3Reset") : fmi3Error; }

STRIDE_FMI_EXPORT fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                            fmi3Float64 value[], size_t n_values) {
  if (!c) return fmi3Error;
  Component& m = *as_component(c);
  if (n > 0 && (!vr || !value)) return m.error("fmi3GetFloat64", "null array");
  if (!m.x) return m.error("fmi3GetFloat64", "the instance could not be reset");
  return m.guarded("fmi3GetFloat64", [&] {
    std::vector<double> all;
    for (size_t i = 0; i < n; ++i) {
      if (is_time(vr[i])) all.push_back(time_reached(m));
      else m.x->get_all(vr[i], all);
    }
    if (all.size() != n_values)
      return m.error("fmi3GetFloat64", "nValues is " + std::to_string(n_values) + ", the variables hold " +
                                           std::to_string(all.size()) + " values");
    std::copy(all.begin(), all.end(), value);
    return fmi3OK;
  });
}

STRIDE_FMI_EXPORT fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n,
                                            const fmi3Float64 value[], size_t n_values) {
  if (!c) return fmi3Error;
  Component& m = *as_component(c);
  if (n > 0 && (!vr || !value)) return m.error("fmi3SetFloat64", "null array");
  if (!m.in("fmi3SetFloat64", {Phase::instantiated, Phase::initializing, Phase::stepping})) return fmi3Error;
  return m.guarded("fmi3SetFloat64", [&] {
    std::size_t needed = 0;
    for (size_t i = 0; i < n; ++i) {
      if (is_time(vr[i])) return m.error("fmi3SetFloat64", "value reference 0 is the independent variable time");
      needed += m.x->size(vr[i]);
    }
    if (needed != n_values)
      return m.error("fmi3SetFloat64", "nValues is " + std::to_string(n_values) + ", the variables hold " +
                                           std::to_string(needed) + " values");
    std::size_t at = 0;
    for (size_t i = 0; i < n; ++i) {
      const std::size_t k = m.x->size(vr[i]);
      m.x->set(vr[i], std::span<const double>(value + at, k));
      at += k;
    }
    return fmi3OK;
  });
}

STRIDE_FMI_EXPORT fmi3Status fmi3GetInt32(fmi3Instance c, const fmi3ValueReference[], size_t n, fmi3Int32[], size_t) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3GetInt32", "the FMU has no Int32 variables");
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetInt32(fmi3Instance c, const fmi3ValueReference[], size_t n, const fmi3Int32[],
                                          size_t) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3SetInt32", "the FMU has no Int32 variables");
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetBoolean(fmi3Instance c, const fmi3ValueReference[], size_t n, fmi3Boolean[],
                                            size_t) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3GetBoolean", "the FMU has no Boolean variables");
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetBoolean(fmi3Instance c, const fmi3ValueReference[], size_t n, const fmi3Boolean[],
                                            size_t) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3SetBoolean", "the FMU has no Boolean variables");
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetString(fmi3Instance c, const fmi3ValueReference[], size_t n, fmi3String[], size_t) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3GetString", "the FMU has no String variables");
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetString(fmi3Instance c, const fmi3ValueReference[], size_t n, const fmi3String[],
                                           size_t) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3SetString", "the FMU has no String variables");
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetFMUState(fmi3Instance c, fmi3FMUState* state) {
  return c ? as_component(c)->get_state("fmi3GetFMUState", state) : fmi3Error;
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetFMUState(fmi3Instance c, fmi3FMUState state) {
  return c ? as_component(c)->set_state("fmi3SetFMUState", state) : fmi3Error;
}
STRIDE_FMI_EXPORT fmi3Status fmi3FreeFMUState(fmi3Instance c, fmi3FMUState* state) {
  return c ? Component::free_state(state) : fmi3Error;
}
STRIDE_FMI_EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance c) {
  return unsupported(c, "fmi3EnterEventMode", "not supported (hasEventMode=\"false\")");
}
STRIDE_FMI_EXPORT fmi3Status fmi3EnterStepMode(fmi3Instance c) {
  return unsupported(c, "fmi3EnterStepMode", "not supported (hasEventMode=\"false\")");
}
STRIDE_FMI_EXPORT fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) {
  return unsupported(c, "fmi3EnterConfigurationMode", "the FMU has no structural parameters");
}
STRIDE_FMI_EXPORT fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) {
  return unsupported(c, "fmi3ExitConfigurationMode", "the FMU has no structural parameters");
}

// The rest of the FMI 3.0 interface: Stride's FMU declares none of these capabilities
// (modelDescription.xml), so each call is an error naming what the FMU lacks.
#define STRIDE_NO_VARIABLES_OF(T)                                                                                    \
  STRIDE_FMI_EXPORT fmi3Status fmi3Get##T(fmi3Instance c, const fmi3ValueReference[], size_t n, fmi3##T[], size_t) { \
    return n == 0 ? fmi3OK : unsupported(c, "fmi3Get" #T, "the FMU has no " #T " variables");                        \
  }                                                                                                                  \
  STRIDE_FMI_EXPORT fmi3Status fmi3Set##T(fmi3Instance c, const fmi3ValueReference[], size_t n, const fmi3##T[],     \
                                          size_t) {                                                                  \
    return n == 0 ? fmi3OK : unsupported(c, "fmi3Set" #T, "the FMU has no " #T " variables");                        \
  }
STRIDE_NO_VARIABLES_OF(Float32)
STRIDE_NO_VARIABLES_OF(Int8)
STRIDE_NO_VARIABLES_OF(UInt8)
STRIDE_NO_VARIABLES_OF(Int16)
STRIDE_NO_VARIABLES_OF(UInt16)
STRIDE_NO_VARIABLES_OF(UInt32)
STRIDE_NO_VARIABLES_OF(Int64)
STRIDE_NO_VARIABLES_OF(UInt64)
#undef STRIDE_NO_VARIABLES_OF

STRIDE_FMI_EXPORT fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference[], size_t n, size_t[], fmi3Binary[],
                                           size_t) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3GetBinary", "the FMU has no Binary variables");
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference[], size_t n, const size_t[],
                                           const fmi3Binary[], size_t) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3SetBinary", "the FMU has no Binary variables");
}

namespace {
const char* const kNoClocks = "the FMU has no clocks";
const char* const kNoEventMode = "the FMU has no event mode (hasEventMode=\"false\")";
const char* const kCoSimulationOnly = "this FMU is for co-simulation only";
}  // namespace

STRIDE_FMI_EXPORT fmi3Status fmi3GetClock(fmi3Instance c, const fmi3ValueReference[], size_t n, fmi3Clock[]) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3GetClock", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetClock(fmi3Instance c, const fmi3ValueReference[], size_t n, const fmi3Clock[]) {
  return n == 0 ? fmi3OK : unsupported(c, "fmi3SetClock", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetIntervalDecimal(fmi3Instance c, const fmi3ValueReference[], size_t, fmi3Float64[],
                                                    fmi3IntervalQualifier[]) {
  return unsupported(c, "fmi3GetIntervalDecimal", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetIntervalFraction(fmi3Instance c, const fmi3ValueReference[], size_t, fmi3UInt64[],
                                                     fmi3UInt64[], fmi3IntervalQualifier[]) {
  return unsupported(c, "fmi3GetIntervalFraction", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetShiftDecimal(fmi3Instance c, const fmi3ValueReference[], size_t, fmi3Float64[]) {
  return unsupported(c, "fmi3GetShiftDecimal", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetShiftFraction(fmi3Instance c, const fmi3ValueReference[], size_t, fmi3UInt64[],
                                                  fmi3UInt64[]) {
  return unsupported(c, "fmi3GetShiftFraction", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetIntervalDecimal(fmi3Instance c, const fmi3ValueReference[], size_t,
                                                    const fmi3Float64[]) {
  return unsupported(c, "fmi3SetIntervalDecimal", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetIntervalFraction(fmi3Instance c, const fmi3ValueReference[], size_t,
                                                     const fmi3UInt64[], const fmi3UInt64[]) {
  return unsupported(c, "fmi3SetIntervalFraction", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetShiftDecimal(fmi3Instance c, const fmi3ValueReference[], size_t,
                                                 const fmi3Float64[]) {
  return unsupported(c, "fmi3SetShiftDecimal", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetShiftFraction(fmi3Instance c, const fmi3ValueReference[], size_t,
                                                  const fmi3UInt64[], const fmi3UInt64[]) {
  return unsupported(c, "fmi3SetShiftFraction", kNoClocks);
}
STRIDE_FMI_EXPORT fmi3Status fmi3EvaluateDiscreteStates(fmi3Instance c) {
  return unsupported(c, "fmi3EvaluateDiscreteStates", kNoEventMode);
}
STRIDE_FMI_EXPORT fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean*, fmi3Boolean*, fmi3Boolean*,
                                                      fmi3Boolean*, fmi3Boolean*, fmi3Float64*) {
  return unsupported(c, "fmi3UpdateDiscreteStates", kNoEventMode);
}

STRIDE_FMI_EXPORT fmi3Status fmi3GetNumberOfVariableDependencies(fmi3Instance c, fmi3ValueReference, size_t*) {
  return unsupported(c, "fmi3GetNumberOfVariableDependencies",
                     "providesPerElementDependencies=\"false\": the dependencies are in modelDescription.xml");
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetVariableDependencies(fmi3Instance c, fmi3ValueReference, size_t[],
                                                         fmi3ValueReference[], size_t[], fmi3DependencyKind[], size_t) {
  return unsupported(c, "fmi3GetVariableDependencies",
                     "providesPerElementDependencies=\"false\": the dependencies are in modelDescription.xml");
}

STRIDE_FMI_EXPORT fmi3Status fmi3SerializedFMUStateSize(fmi3Instance c, fmi3FMUState, size_t*) {
  return unsupported(c, "fmi3SerializedFMUStateSize",
                     "the FMU state is not serialized (canSerializeFMUState=\"false\")");
}
STRIDE_FMI_EXPORT fmi3Status fmi3SerializeFMUState(fmi3Instance c, fmi3FMUState, fmi3Byte[], size_t) {
  return unsupported(c, "fmi3SerializeFMUState", "the FMU state is not serialized (canSerializeFMUState=\"false\")");
}
STRIDE_FMI_EXPORT fmi3Status fmi3DeserializeFMUState(fmi3Instance c, const fmi3Byte[], size_t, fmi3FMUState*) {
  return unsupported(c, "fmi3DeserializeFMUState", "the FMU state is not serialized (canSerializeFMUState=\"false\")");
}

STRIDE_FMI_EXPORT fmi3Status fmi3GetDirectionalDerivative(fmi3Instance c, const fmi3ValueReference[], size_t,
                                                          const fmi3ValueReference[], size_t, const fmi3Float64[],
                                                          size_t, fmi3Float64[], size_t) {
  return unsupported(c, "fmi3GetDirectionalDerivative",
                     "the FMU provides no partial derivatives (providesDirectionalDerivatives=\"false\")");
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetAdjointDerivative(fmi3Instance c, const fmi3ValueReference[], size_t,
                                                      const fmi3ValueReference[], size_t, const fmi3Float64[], size_t,
                                                      fmi3Float64[], size_t) {
  return unsupported(c, "fmi3GetAdjointDerivative",
                     "the FMU provides no partial derivatives (providesAdjointDerivatives=\"false\")");
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetOutputDerivatives(fmi3Instance c, const fmi3ValueReference[], size_t,
                                                      const fmi3Int32[], fmi3Float64[], size_t) {
  return unsupported(c, "fmi3GetOutputDerivatives",
                     "the FMU provides no output derivatives (maxOutputDerivativeOrder=\"0\")");
}

// Model exchange and scheduled execution: no instance of either kind is ever made, so an
// instance passed here is a co-simulation one (or none).
STRIDE_FMI_EXPORT fmi3Instance fmi3InstantiateScheduledExecution(fmi3String, fmi3String, fmi3String, fmi3Boolean,
                                                                 fmi3Boolean, fmi3InstanceEnvironment env,
                                                                 fmi3LogMessageCallback log, fmi3ClockUpdateCallback,
                                                                 fmi3LockPreemptionCallback,
                                                                 fmi3UnlockPreemptionCallback) {
  if (log)
    log(env, fmi3Error, "logStatusError", "fmi3InstantiateScheduledExecution: this FMU is for co-simulation only");
  return nullptr;
}
STRIDE_FMI_EXPORT fmi3Status fmi3ActivateModelPartition(fmi3Instance c, fmi3ValueReference, fmi3Float64) {
  return unsupported(c, "fmi3ActivateModelPartition", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) {
  return unsupported(c, "fmi3EnterContinuousTimeMode", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean, fmi3Boolean*, fmi3Boolean*) {
  return unsupported(c, "fmi3CompletedIntegratorStep", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64) {
  return unsupported(c, "fmi3SetTime", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64[], size_t) {
  return unsupported(c, "fmi3SetContinuousStates", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64[], size_t) {
  return unsupported(c, "fmi3GetContinuousStateDerivatives", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64[], size_t) {
  return unsupported(c, "fmi3GetEventIndicators", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64[], size_t) {
  return unsupported(c, "fmi3GetContinuousStates", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64[], size_t) {
  return unsupported(c, "fmi3GetNominalsOfContinuousStates", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t*) {
  return unsupported(c, "fmi3GetNumberOfEventIndicators", kCoSimulationOnly);
}
STRIDE_FMI_EXPORT fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t*) {
  return unsupported(c, "fmi3GetNumberOfContinuousStates", kCoSimulationOnly);
}

// Every function of the interface is defined above with the standard's type: a missing one or
// a signature that differs from fmi3.h fails here, at compile time.
#define STRIDE_CHECK_TYPE(f) static_assert(std::is_same_v<decltype(&f), f##TYPE*>, #f " differs from " #f "TYPE");
STRIDE_FMI3_COMMON_FUNCTIONS(STRIDE_CHECK_TYPE)
STRIDE_FMI3_ME_FUNCTIONS(STRIDE_CHECK_TYPE)
STRIDE_FMI3_CS_FUNCTIONS(STRIDE_CHECK_TYPE)
STRIDE_FMI3_SE_FUNCTIONS(STRIDE_CHECK_TYPE)
#undef STRIDE_CHECK_TYPE
