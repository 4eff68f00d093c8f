/* A minimal FMI 2.0 implementation (model exchange and co-simulation) for models whose
 * variables are all Reals, included by one model file after it defines:
 *   N_REALS, N_STATES, N_INDICATORS       sizes; every variable is r[valueReference]
 *   state_vr[N_STATES], der_vr[N_STATES]  value references of the states and their derivatives
 *   model_start(double* r)                start values (parameters included)
 *   model_initialize(double* r)           initial states from the parameters (end of initialization)
 *   model_derivatives(double* r, double t) sets r[der_vr[i]] from states, inputs, parameters
 *   model_indicators(const double* r, double* z)
 *   model_event(double* r)                 event update at an indicator's zero; 1 when states changed
 *   model_time_event(double* r, double t, double* next)   with MODEL_TIME_EVENTS: update at time
 *                                         events, set the next event time, 1 when there is one
 *   CS_SUBSTEP_VR                          value reference of the internal RK4 step (co-simulation)
 * Co-simulation integrates with fixed RK4 substeps of at most r[CS_SUBSTEP_VR], the inputs held.
 * Faults for tests, chosen at compile time: FMU_FAULT_NULL_INSTANCE, FMU_FAULT_CRASH_INSTANCE,
 * FMU_FAULT_HANG_INSTANCE (fmi2Instantiate returns NULL, crashes, never returns), FMU_FAULT_NO_DOSTEP,
 * FMU_FAULT_ERROR_AT / _CRASH_AT / _HANG_AT=<t> (doStep returns fmi2Error, crashes, never
 * returns past t), FMU_DISCARD_ABOVE=<h> (longer steps are cut there with fmi2Discard),
 * FMU_FAULT_INIT_ERROR_ABOVE=<x> (fmi2ExitInitializationMode returns fmi2Error when the first
 * variable, r[0], starts above x, as a model that checks its start values does; _CRASH_ABOVE /
 * _HANG_ABOVE: crashes, never returns),
 * FMU_FAULT_CRASH_SECOND_INSTANCE (a second instance in one process crashes, as a model with
 * global state may) and FMU_FAULT_DISCARD_NO_PROGRESS (fmi2Discard without integrating, while
 * fmi2LastSuccessfulTime claims the whole step). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stride/fmi/fmi2.h"

#define EXPORT __attribute__((visibility("default")))

typedef struct {
  double r[N_REALS];
  double time;
  fmi2CallbackFunctions cb;
  char name[128];
  int event_pending;
} Instance;

static void say(Instance* m, fmi2Status s, const char* fmt, double value) {
  if (m->cb.logger) m->cb.logger(m->cb.componentEnvironment, m->name, s, "model", fmt, value);
}

EXPORT const char* fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char* fmi2GetVersion(void) { return "2.0"; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
  (void)c, (void)on, (void)n, (void)cat;
  return fmi2OK;
}

EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                     const fmi2CallbackFunctions* cb, fmi2Boolean visible, fmi2Boolean logging) {
  (void)type, (void)resources, (void)visible, (void)logging;
#ifdef FMU_FAULT_CRASH_INSTANCE
  {
    volatile int* volatile p = NULL;
    *p = 1; /* a crash while instantiating */
  }
#endif
#ifdef FMU_FAULT_HANG_INSTANCE
  for (;;) pause(); /* never returns */
#endif
#ifdef FMU_FAULT_CRASH_SECOND_INSTANCE
  {
    static int instances = 0;
    if (++instances > 1) {
      volatile int* volatile p = NULL;
      *p = 1; /* the model's globals are taken */
    }
  }
#endif
#ifdef FMU_FAULT_NULL_INSTANCE
  if (cb && cb->logger) cb->logger(cb->componentEnvironment, name, fmi2Error, "model", "no licence for this model");
  return NULL;
#endif
  if (!guid || strcmp(guid, MODEL_GUID) != 0) return NULL;
  Instance* m = (Instance*)calloc(1, sizeof(Instance));
  if (!m) return NULL;
  if (cb) m->cb = *cb;
  snprintf(m->name, sizeof m->name, "%s", name ? name : "");
  model_start(m->r);
  return m;
}
EXPORT void fmi2FreeInstance(fmi2Component c) { free(c); }
/* FMU states (canGetAndSetFMUstate): a copy of the whole instance. */
EXPORT fmi2Status fmi2GetFMUstate(fmi2Component c, fmi2FMUstate* s) {
  if (!s) return fmi2Error;
  if (!*s && !(*s = malloc(sizeof(Instance)))) return fmi2Error;
  memcpy(*s, c, sizeof(Instance));
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetFMUstate(fmi2Component c, fmi2FMUstate s) {
  if (!s) return fmi2Error;
  memcpy(c, s, sizeof(Instance));
  return fmi2OK;
}
EXPORT fmi2Status fmi2FreeFMUstate(fmi2Component c, fmi2FMUstate* s) {
  (void)c;
  if (s) free(*s), *s = NULL;
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean td, fmi2Real tol, fmi2Real t0, fmi2Boolean sd,
                                      fmi2Real stop) {
  (void)td, (void)tol, (void)sd, (void)stop;
  ((Instance*)c)->time = t0;
  return fmi2OK;
}
EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  Instance* m = (Instance*)c;
  model_initialize(m->r);
#ifdef FMU_FAULT_INIT_ERROR_ABOVE
  if (m->r[0] > FMU_FAULT_INIT_ERROR_ABOVE) {
    say(m, fmi2Error, "the initial value of the first variable (%g) is beyond the model's limit", m->r[0]);
    return fmi2Error;
  }
#endif
#ifdef FMU_FAULT_INIT_CRASH_ABOVE
  if (m->r[0] > FMU_FAULT_INIT_CRASH_ABOVE) {
    volatile int* volatile p = NULL;
    *p = 1; /* a crash while initializing */
  }
#endif
#ifdef FMU_FAULT_INIT_HANG_ABOVE
  if (m->r[0] > FMU_FAULT_INIT_HANG_ABOVE)
    for (;;) pause(); /* never returns */
#endif
  model_derivatives(m->r, m->time);
  return fmi2OK;
}
EXPORT fmi2Status fmi2Terminate(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2Reset(fmi2Component c) {
  model_start(((Instance*)c)->r);
  return fmi2OK;
}

static fmi2Status check_vr(Instance* m, const fmi2ValueReference vr[], size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (vr[i] >= N_REALS) {
      say(m, fmi2Error, "value reference %g does not exist", (double)vr[i]);
      return fmi2Error;
    }
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
  Instance* m = (Instance*)c;
  if (check_vr(m, vr, n) != fmi2OK) return fmi2Error;
  model_derivatives(m->r, m->time);
  for (size_t i = 0; i < n; ++i) v[i] = m->r[vr[i]];
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
  Instance* m = (Instance*)c;
  if (check_vr(m, vr, n) != fmi2OK) return fmi2Error;
  for (size_t i = 0; i < n; ++i) m->r[vr[i]] = v[i];
  return fmi2OK;
}
/* Integer and Boolean variables live in r[] too (a model lists them in is_integer[] and
 * is_boolean[] when it has any: MODEL_HAS_DISCRETE); any other reference is an error. */
#ifdef MODEL_HAS_DISCRETE
static int discrete_ok(Instance* m, const fmi2ValueReference vr[], size_t n, const int* kind, const char* what) {
  for (size_t i = 0; i < n; ++i)
    if (vr[i] >= N_REALS || !kind[vr[i]]) {
      say(m, fmi2Error, what, (double)vr[i]);
      return 0;
    }
  return 1;
}
EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
  Instance* m = (Instance*)c;
  if (!discrete_ok(m, vr, n, is_integer, "no Integer variable %g")) return fmi2Error;
  model_derivatives(m->r, m->time);
  for (size_t i = 0; i < n; ++i) v[i] = (fmi2Integer)m->r[vr[i]];
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
  Instance* m = (Instance*)c;
  if (!discrete_ok(m, vr, n, is_integer, "no Integer variable %g")) return fmi2Error;
  for (size_t i = 0; i < n; ++i) m->r[vr[i]] = v[i];
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
  Instance* m = (Instance*)c;
  if (!discrete_ok(m, vr, n, is_boolean, "no Boolean variable %g")) return fmi2Error;
  model_derivatives(m->r, m->time);
  for (size_t i = 0; i < n; ++i) v[i] = m->r[vr[i]] != 0 ? fmi2True : fmi2False;
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
  Instance* m = (Instance*)c;
  if (!discrete_ok(m, vr, n, is_boolean, "no Boolean variable %g")) return fmi2Error;
  for (size_t i = 0; i < n; ++i) m->r[vr[i]] = v[i] ? 1.0 : 0.0;
  return fmi2OK;
}
#else
EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
  (void)vr, (void)v;
  return n ? (say((Instance*)c, fmi2Error, "no Integer variables (%g asked)", (double)n), fmi2Error) : fmi2OK;
}
EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
  (void)vr, (void)v;
  return n ? (say((Instance*)c, fmi2Error, "no Integer variables (%g asked)", (double)n), fmi2Error) : fmi2OK;
}
EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
  (void)vr, (void)v;
  return n ? (say((Instance*)c, fmi2Error, "no Boolean variables (%g asked)", (double)n), fmi2Error) : fmi2OK;
}
EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
  (void)vr, (void)v;
  return n ? (say((Instance*)c, fmi2Error, "no Boolean variables (%g asked)", (double)n), fmi2Error) : fmi2OK;
}
#endif
EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
  (void)vr, (void)v;
  return n ? (say((Instance*)c, fmi2Error, "no String variables (%g asked)", (double)n), fmi2Error) : fmi2OK;
}

/* Model exchange. */
EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) {
  ((Instance*)c)->time = t;
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
  Instance* m = (Instance*)c;
  if (n != N_STATES) return fmi2Error;
  for (size_t i = 0; i < n; ++i) m->r[state_vr[i]] = x[i];
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
  Instance* m = (Instance*)c;
  if (n != N_STATES) return fmi2Error;
  for (size_t i = 0; i < n; ++i) x[i] = m->r[state_vr[i]];
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
  (void)c;
  for (size_t i = 0; i < n; ++i) x[i] = 1.0;
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t n) {
  Instance* m = (Instance*)c;
  if (n != N_STATES) return fmi2Error;
  model_derivatives(m->r, m->time);
  for (size_t i = 0; i < n; ++i) dx[i] = m->r[der_vr[i]];
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) {
  Instance* m = (Instance*)c;
  if (n != N_INDICATORS) return fmi2Error;
  model_indicators(m->r, z);
  return fmi2OK;
}
EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) {
  ((Instance*)c)->event_pending = 1;
  return fmi2OK;
}
EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo* info) {
  Instance* m = (Instance*)c;
  memset(info, 0, sizeof *info);
  if (m->event_pending) info->valuesOfContinuousStatesChanged = model_event(m->r) ? fmi2True : fmi2False;
  m->event_pending = 0;
#ifdef MODEL_TIME_EVENTS
  /* Time events: the model updates its discrete states at or after its next event time and
   * says when the next one is. */
  double next = 0.0;
  info->nextEventTimeDefined = model_time_event(m->r, m->time, &next) ? fmi2True : fmi2False;
  info->nextEventTime = next;
#endif
  return fmi2OK;
}
EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { (void)c; return fmi2OK; }
EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSet, fmi2Boolean* enter,
                                              fmi2Boolean* terminate) {
  (void)c, (void)noSet;
  *enter = fmi2False;
  *terminate = fmi2False;
  return fmi2OK;
}

/* Co-simulation. */
#include "rk4_substeps.h"

#ifndef FMU_FAULT_NO_DOSTEP
EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSet) {
  Instance* m = (Instance*)c;
  (void)noSet;
#ifdef FMU_FAULT_ERROR_AT
  if (t + h > FMU_FAULT_ERROR_AT) {
    say(m, fmi2Error, "solver failure: the spring broke at t = %g s", t + h);
    return fmi2Error;
  }
#endif
#ifdef FMU_FAULT_CRASH_AT
  if (t + h > FMU_FAULT_CRASH_AT) {
    volatile int* volatile p = NULL;
    *p = 1; /* a crash inside the FMU */
  }
#endif
#ifdef FMU_FAULT_HANG_AT
  if (t + h > FMU_FAULT_HANG_AT) {
    /* Tell the test that the hang has begun: $TMPDIR/hanging. */
    char marker[4096];
    snprintf(marker, sizeof marker, "%s/hanging", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    FILE* f = fopen(marker, "w");
    if (f) fclose(f);
    volatile int spin = 1;
    while (spin) {
    } /* a doStep that never returns */
  }
#endif
#ifdef FMU_FAULT_DISCARD_NO_PROGRESS
  m->time = t + h; /* claimed, not integrated */
  return fmi2Discard;
#endif
  double end = t + h;
  fmi2Status status = fmi2OK;
#ifdef FMU_DISCARD_ABOVE
  /* Steps longer than FMU_DISCARD_ABOVE are cut there (fmi2Discard). */
  if (h > FMU_DISCARD_ABOVE * (1 + 1e-12)) {
    end = t + FMU_DISCARD_ABOVE;
    status = fmi2Discard;
  }
#endif
  rk4_substeps(m->r, t, end - t);
  m->time = end;
  return status;
}
#endif
EXPORT fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }
EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real* v) {
  if (k != fmi2LastSuccessfulTime) return fmi2Discard;
  *v = ((Instance*)c)->time;
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status* v) {
  (void)c, (void)k;
  *v = fmi2OK;
  return fmi2OK;
}
