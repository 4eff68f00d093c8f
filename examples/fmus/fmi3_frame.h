/* A minimal FMI 3.0 implementation (co-simulation and model exchange) for models whose variables
 * are all Float64, included by one model file after it defines what fmi2_frame.h asks for.
 * Co-simulation steps with fixed RK4 substeps of at most r[CS_SUBSTEP_VR], the inputs held.
 * Faults for tests: FMU_FAULT_ERROR_AT=<t> (fmi3DoStep returns fmi3Error past t),
 * FMU_FAULT_INIT_ERROR_ABOVE=<x> (fmi3ExitInitializationMode returns fmi3Error when r[0]
 * starts above x) and
 * FMU_DISCARD_ABOVE=<h> (longer steps return early there), FMU_LOG_FLOOD (the first fmi3DoStep
 * logs a warning of 10 MB). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stride/fmi/fmi3.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  double r[N_REALS];
  double time;
  fmi3InstanceEnvironment env;
  fmi3LogMessageCallback log;
  int event_pending;
} Instance;

EXPORT const char* fmi3GetVersion(void) { return "3.0"; }

EXPORT fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,
                                                fmi3Boolean visible, fmi3Boolean logging, fmi3Boolean eventMode,
                                                fmi3Boolean earlyReturn, const fmi3ValueReference req[], size_t nreq,
                                                fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
                                                fmi3IntermediateUpdateCallback update) {
  (void)name, (void)resources, (void)visible, (void)logging, (void)eventMode, (void)earlyReturn, (void)req, (void)nreq,
      (void)update;
  if (!token || strcmp(token, MODEL_TOKEN) != 0) {
    if (log) log(env, fmi3Error, "model", "wrong instantiation token");
    return NULL;
  }
  Instance* m = (Instance*)calloc(1, sizeof(Instance));
  if (!m) return NULL;
  m->env = env;
  m->log = log;
  model_start(m->r);
  return m;
}
EXPORT void fmi3FreeInstance(fmi3Instance c) { free(c); }
#include "fmi3_state.h"
EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean td, fmi3Float64 tol, fmi3Float64 t0,
                                              fmi3Boolean sd, fmi3Float64 stop) {
  (void)td, (void)tol, (void)sd, (void)stop;
  ((Instance*)c)->time = t0;
  return fmi3OK;
}
EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
  Instance* m = (Instance*)c;
  model_initialize(m->r);
#ifdef FMU_FAULT_INIT_ERROR_ABOVE
  if (m->r[0] > FMU_FAULT_INIT_ERROR_ABOVE) {
    char text[160];
    snprintf(text, sizeof text, "the initial value of the first variable (%g) is beyond the model's limit", m->r[0]);
    if (m->log) m->log(m->env, fmi3Error, "model", text);
    return fmi3Error;
  }
#endif
  model_derivatives(m->r, m->time);
  return fmi3OK;
}
EXPORT fmi3Status fmi3Terminate(fmi3Instance c) { (void)c; return fmi3OK; }
/* Arrays: a model defines MODEL_ARRAYS and variable_size(vr); an array occupies
 * r[vr] .. r[vr + size - 1]. */
#ifndef MODEL_ARRAYS
static size_t variable_size(unsigned vr) { (void)vr; return 1; }
#endif
EXPORT fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3Float64 v[], size_t nv) {
  Instance* m = (Instance*)c;
  model_derivatives(m->r, m->time);
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] + variable_size(vr[i]) > N_REALS) return fmi3Error;
    for (size_t j = 0; j < variable_size(vr[i]); ++j) {
      if (k >= nv) return fmi3Error;
      v[k++] = m->r[vr[i] + j];
    }
  }
  return k == nv ? fmi3OK : fmi3Error;
}
EXPORT fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const fmi3Float64 v[], size_t nv) {
  Instance* m = (Instance*)c;
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    if (vr[i] + variable_size(vr[i]) > N_REALS) return fmi3Error;
    for (size_t j = 0; j < variable_size(vr[i]); ++j) {
      if (k >= nv) return fmi3Error;
      m->r[vr[i] + j] = v[k++];
    }
  }
  return k == nv ? fmi3OK : fmi3Error;
}
EXPORT fmi3Status fmi3GetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3Int32 v[], size_t nv) {
  (void)c, (void)vr, (void)v, (void)nv;
  return n ? fmi3Error : fmi3OK;
}
EXPORT fmi3Status fmi3SetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const fmi3Int32 v[], size_t nv) {
  (void)c, (void)vr, (void)v, (void)nv;
  return n ? fmi3Error : fmi3OK;
}
EXPORT fmi3Status fmi3GetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3Boolean v[], size_t nv) {
  (void)c, (void)vr, (void)v, (void)nv;
  return n ? fmi3Error : fmi3OK;
}
EXPORT fmi3Status fmi3SetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const fmi3Boolean v[], size_t nv) {
  (void)c, (void)vr, (void)v, (void)nv;
  return n ? fmi3Error : fmi3OK;
}

#include "rk4_substeps.h"

EXPORT fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean noSet, fmi3Boolean* event,
                             fmi3Boolean* terminate, fmi3Boolean* early, fmi3Float64* last) {
  Instance* m = (Instance*)c;
  (void)noSet;
  *event = false;
  *terminate = false;
  *early = false;
#ifdef FMU_FAULT_ERROR_AT
  if (t + h > FMU_FAULT_ERROR_AT) {
    if (m->log) m->log(m->env, fmi3Error, "model", "solver failure: the spring broke");
    return fmi3Error;
  }
#endif
#ifdef FMU_LOG_FLOOD
  if (t == 0.0 && m->log) {
    const size_t n = (size_t)10 << 20;
    char* text = (char*)malloc(n + 1);
    if (text) {
      memset(text, 'w', n);
      text[n] = '\0';
      m->log(m->env, fmi3Warning, "model", text);
      free(text);
    }
  }
#endif
#ifdef FMU_DISCARD_ABOVE
  /* Steps longer than FMU_DISCARD_ABOVE return early there. */
  if (h > FMU_DISCARD_ABOVE * (1 + 1e-12)) {
    h = FMU_DISCARD_ABOVE;
    *early = true;
  }
#endif
  rk4_substeps(m->r, t, h);
  m->time = t + h;
  *last = m->time;
  return fmi3OK;
}

/* Model exchange. */
EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,
                                                 fmi3Boolean visible, fmi3Boolean logging,
                                                 fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
  return fmi3InstantiateCoSimulation(name, token, resources, visible, logging, false, false, NULL, 0, env, log, NULL);
}
EXPORT fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) {
  ((Instance*)c)->time = t;
  return fmi3OK;
}
EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t n) {
  Instance* m = (Instance*)c;
  if (n != N_STATES) return fmi3Error;
  for (size_t i = 0; i < n; ++i) m->r[state_vr[i]] = x[i];
  return fmi3OK;
}
EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
  Instance* m = (Instance*)c;
  if (n != N_STATES) return fmi3Error;
  for (size_t i = 0; i < n; ++i) x[i] = m->r[state_vr[i]];
  return fmi3OK;
}
EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t n) {
  Instance* m = (Instance*)c;
  if (n != N_STATES) return fmi3Error;
  model_derivatives(m->r, m->time);
  for (size_t i = 0; i < n; ++i) dx[i] = m->r[der_vr[i]];
  return fmi3OK;
}
EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t n) {
  if (n != N_INDICATORS) return fmi3Error;
  model_indicators(((Instance*)c)->r, z);
  return fmi3OK;
}
EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance c) {
  ((Instance*)c)->event_pending = 1;
  return fmi3OK;
}
EXPORT fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean* again, fmi3Boolean* terminate,
                                           fmi3Boolean* nominals, fmi3Boolean* values, fmi3Boolean* defined,
                                           fmi3Float64* next) {
  Instance* m = (Instance*)c;
  *values = m->event_pending ? model_event(m->r) != 0 : false;
  m->event_pending = 0;
  *again = false, *terminate = false, *nominals = false, *defined = false, *next = 0.0;
  return fmi3OK;
}
EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { (void)c; return fmi3OK; }
EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSet, fmi3Boolean* enter,
                                              fmi3Boolean* terminate) {
  (void)c, (void)noSet;
  *enter = false, *terminate = false;
  return fmi3OK;
}
