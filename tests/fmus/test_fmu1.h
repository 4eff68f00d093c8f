/* The FMI 1.0 functions of the test frame (test_fmu.h), on the Modelica Association's combined
 * header fmi1Functions.h: every function named <MODEL_IDENTIFIER>_fmi<Function>, model exchange
 * and co-simulation from one binary (an FMI 1.0 FMU declares one of them; the other is unused).
 *
 * Model exchange: fmiInstantiateModel, fmiSetTime, fmiInitialize (the initial event iteration
 * inside, its outcome in the event information), fmiEventUpdate (intermediateResults: one round,
 * else every round until converged), fmiCompletedIntegratorStep, fmiTerminate. Co-simulation:
 * fmiInstantiateSlave, fmiInitializeSlave, fmiDoStep (time events handled inside the step; when
 * the model asks to terminate, fmiDiscard with fmiLastSuccessfulTime: FMI 1.0 has no other way
 * to say so), fmiTerminateSlave. Parameters and start values only before initialization.
 *
 * Faults for tests, chosen at compile time: FMU_FAULT_NULL_INSTANCE (both instantiate functions
 * log an error and return NULL), FMU_FAULT_ERROR_AT=<t> (fmiDoStep and fmiGetDerivatives return
 * fmiError from time t on, with a message), FMU_FAULT_INIT_ERROR_ABOVE=<x> (fmiInitialize and
 * fmiInitializeSlave return fmiError when the first state starts above x). */

#define FMI1_PASTE2(a, b) a##_##b
#define FMI1_PASTE(a, b) FMI1_PASTE2(a, b)
#define FMI1(name) FMI1_PASTE(MODEL_IDENTIFIER, name)

EXPORT const char* FMI1(fmiGetVersion)(void) { return "1.0"; }
EXPORT const char* FMI1(fmiGetModelTypesPlatform)(void) { return "standard32"; }
EXPORT const char* FMI1(fmiGetTypesPlatform)(void) { return "standard32"; }
EXPORT fmi1Status FMI1(fmiSetDebugLogging)(fmi1Component c, fmi1Boolean on) {
  (void)c, (void)on;
  return fmi1OK;
}

static Instance* instantiate1(fmi1String name, fmi1String guid, fmi1CallbackFunctions cb, int me) {
#ifdef FMU_FAULT_NULL_INSTANCE
  (void)guid, (void)me;
  if (cb.logger)
    cb.logger(NULL, name, fmi1Error, "model", "this FMU refuses every instance (%s)", "FMU_FAULT_NULL_INSTANCE");
  return NULL;
#else
  Instance* s = instantiate(name, guid, me);
  if (s) s->cb = cb;
  if (!s && cb.logger) cb.logger(NULL, name, fmi1Error, "model", "wrong GUID \"%s\"", guid ? guid : "(null)");
  return s;
#endif
}

/* Initialization fails when the first state starts above the limit (a model that checks its
 * start values). */
static int init_fault(Instance* s) {
#ifdef FMU_FAULT_INIT_ERROR_ABOVE
  if (model_nx(&s->m) > 0 && model_states(&s->m)[0] > FMU_FAULT_INIT_ERROR_ABOVE) {
    say(s, ERROR, "the start value %g is above %g", model_states(&s->m)[0], (double)FMU_FAULT_INIT_ERROR_ABOVE);
    return 1;
  }
#else
  (void)s;
#endif
  return 0;
}
static int time_fault(Instance* s, double t, const char* fn) {
#ifdef FMU_FAULT_ERROR_AT
  if (t >= FMU_FAULT_ERROR_AT) {
    say(s, ERROR, "%s: the model fails from t = %g on", fn, (double)FMU_FAULT_ERROR_AT);
    return 1;
  }
#else
  (void)s, (void)t, (void)fn;
#endif
  return 0;
}

EXPORT fmi1Status FMI1(fmiGetReal)(fmi1Component c, const fmi1ValueReference vr[], size_t n, fmi1Real v[]) {
  return (fmi1Status)access_values((Instance*)c, vr, n, v, n, FLOAT64, 0, "fmiGetReal");
}
EXPORT fmi1Status FMI1(fmiSetReal)(fmi1Component c, const fmi1ValueReference vr[], size_t n, const fmi1Real v[]) {
  return (fmi1Status)access_values((Instance*)c, vr, n, (void*)v, n, FLOAT64, 1, "fmiSetReal");
}
/* Integer and Enumeration variables are Int32 in the model. */
EXPORT fmi1Status FMI1(fmiGetInteger)(fmi1Component c, const fmi1ValueReference vr[], size_t n, fmi1Integer v[]) {
  return (fmi1Status)access_values((Instance*)c, vr, n, v, n, INT32, 0, "fmiGetInteger");
}
EXPORT fmi1Status FMI1(fmiSetInteger)(fmi1Component c, const fmi1ValueReference vr[], size_t n, const fmi1Integer v[]) {
  return (fmi1Status)access_values((Instance*)c, vr, n, (void*)v, n, INT32, 1, "fmiSetInteger");
}
EXPORT fmi1Status FMI1(fmiGetBoolean)(fmi1Component c, const fmi1ValueReference vr[], size_t n, fmi1Boolean v[]) {
  bool b[64];
  if (n > 64) return fmi1Error;
  const int r = access_values((Instance*)c, vr, n, b, n, BOOLEAN, 0, "fmiGetBoolean");
  for (size_t i = 0; i < n && r == OK; ++i) v[i] = b[i] ? fmi1True : fmi1False;
  return (fmi1Status)r;
}
EXPORT fmi1Status FMI1(fmiSetBoolean)(fmi1Component c, const fmi1ValueReference vr[], size_t n, const fmi1Boolean v[]) {
  bool b[64];
  if (n > 64) return fmi1Error;
  for (size_t i = 0; i < n; ++i) b[i] = v[i] != fmi1False;
  return (fmi1Status)access_values((Instance*)c, vr, n, b, n, BOOLEAN, 1, "fmiSetBoolean");
}
EXPORT fmi1Status FMI1(fmiGetString)(fmi1Component c, const fmi1ValueReference vr[], size_t n, fmi1String v[]) {
  return (fmi1Status)access_values((Instance*)c, vr, n, (void*)v, n, STRING, 0, "fmiGetString");
}
EXPORT fmi1Status FMI1(fmiSetString)(fmi1Component c, const fmi1ValueReference vr[], size_t n, const fmi1String v[]) {
  return (fmi1Status)access_values((Instance*)c, vr, n, (void*)v, n, STRING, 1, "fmiSetString");
}

/* Model exchange. */
EXPORT fmi1Component FMI1(fmiInstantiateModel)(fmi1String name, fmi1String guid, fmi1CallbackFunctions cb,
                                               fmi1Boolean logging) {
  (void)logging;
  return instantiate1(name, guid, cb, 1);
}
EXPORT void FMI1(fmiFreeModelInstance)(fmi1Component c) {
  if (!c) return;
  free_strings((Instance*)c);
  free(c);
}
EXPORT fmi1Status FMI1(fmiSetTime)(fmi1Component c, fmi1Real t) {
  ((Instance*)c)->time = t;
  return fmi1OK;
}
EXPORT fmi1Status FMI1(fmiSetContinuousStates)(fmi1Component c, const fmi1Real x[], size_t n) {
  return (fmi1Status)set_continuous_states((Instance*)c, x, n);
}
EXPORT fmi1Status FMI1(fmiGetContinuousStates)(fmi1Component c, fmi1Real x[], size_t n) {
  return (fmi1Status)get_continuous_states((Instance*)c, x, n);
}
EXPORT fmi1Status FMI1(fmiGetNominalContinuousStates)(fmi1Component c, fmi1Real x[], size_t n) {
  (void)c;
  for (size_t i = 0; i < n; ++i) x[i] = 1.0;
  return fmi1OK;
}
EXPORT fmi1Status FMI1(fmiGetStateValueReferences)(fmi1Component c, fmi1ValueReference vrx[], size_t n) {
  (void)c;
  for (size_t i = 0; i < n; ++i) vrx[i] = fmi1UndefinedValueReference;
  return fmi1OK;
}
EXPORT fmi1Status FMI1(fmiGetDerivatives)(fmi1Component c, fmi1Real dx[], size_t n) {
  Instance* s = (Instance*)c;
  if (time_fault(s, s->time, "fmiGetDerivatives")) return fmi1Error;
  return (fmi1Status)get_derivatives(s, dx, n);
}
EXPORT fmi1Status FMI1(fmiGetEventIndicators)(fmi1Component c, fmi1Real z[], size_t n) {
  return (fmi1Status)get_indicators((Instance*)c, z, n);
}
/* Rounds of event iteration: one (intermediate results), else until the model settles. */
static fmi1Status event_rounds(Instance* s, int one, fmi1EventInfo* info) {
  Event e = {0};
  for (int round = 0; round < 100; ++round) {
    e = me_update(s);
    if (one || !e.again || e.terminate) break;
  }
  info->iterationConverged = e.again && !e.terminate ? fmi1False : fmi1True;
  info->stateValueReferencesChanged = fmi1False;
  info->stateValuesChanged = e.states_changed ? fmi1True : fmi1False;
  info->terminateSimulation = e.terminate ? fmi1True : fmi1False;
  info->upcomingTimeEvent = e.next_defined ? fmi1True : fmi1False;
  info->nextEventTime = e.next;
  s->mode = s->unsettled ? EVENT : CONTINUOUS;
  return fmi1OK;
}
EXPORT fmi1Status FMI1(fmiInitialize)(fmi1Component c, fmi1Boolean tolerance_controlled, fmi1Real rtol,
                                      fmi1EventInfo* info) {
  (void)tolerance_controlled, (void)rtol;
  Instance* s = (Instance*)c;
  if (s->mode != INSTANTIATED) {
    say(s, ERROR, "fmiInitialize called twice");
    return fmi1Error;
  }
  if (init_fault(s)) return fmi1Error;
  s->stop = INFINITY;
  exit_initialization(s); /* model exchange: in event mode, the event iteration due */
  return event_rounds(s, 0, info);
}
EXPORT fmi1Status FMI1(fmiEventUpdate)(fmi1Component c, fmi1Boolean intermediate, fmi1EventInfo* info) {
  Instance* s = (Instance*)c;
  if (s->terminated) {
    say(s, ERROR, "fmiEventUpdate at t = %.17g after the model asked to terminate", s->time);
    return fmi1Error;
  }
  return event_rounds(s, intermediate != fmi1False, info);
}
EXPORT fmi1Status FMI1(fmiCompletedIntegratorStep)(fmi1Component c, fmi1Boolean* call_event_update) {
  *call_event_update = fmi1False;
  return ((Instance*)c)->mode == CONTINUOUS ? fmi1OK : fmi1Error;
}
EXPORT fmi1Status FMI1(fmiTerminate)(fmi1Component c) {
  ((Instance*)c)->mode = TERMINATED;
  return fmi1OK;
}

/* Co-simulation. */
EXPORT fmi1Component FMI1(fmiInstantiateSlave)(fmi1String name, fmi1String guid, fmi1String location, fmi1String mime,
                                               fmi1Real timeout, fmi1Boolean visible, fmi1Boolean interactive,
                                               fmi1CallbackFunctions cb, fmi1Boolean logging) {
  (void)timeout, (void)visible, (void)interactive, (void)logging;
  Instance* s = instantiate1(name, guid, cb, 0);
  if (s && (!location || strncmp(location, "file://", 7) != 0 || !mime ||
            strcmp(mime, "application/x-fmu-sharedlibrary") != 0)) {
    say(s, ERROR, "fmuLocation \"%s\" is no file URL or the MIME type is not the shared library's",
        location ? location : "");
    free_strings(s);
    free(s);
    return NULL;
  }
  return s;
}
EXPORT fmi1Status FMI1(fmiInitializeSlave)(fmi1Component c, fmi1Real t0, fmi1Boolean stop_defined, fmi1Real stop) {
  Instance* s = (Instance*)c;
  if (s->mode != INSTANTIATED) {
    say(s, ERROR, "fmiInitializeSlave called twice");
    return fmi1Error;
  }
  if (init_fault(s)) return fmi1Error;
  s->time = t0;
  s->stop = stop_defined ? stop : INFINITY;
  exit_initialization(s); /* co-simulation: stepping, the events at t0 settled */
  return fmi1OK;
}
EXPORT fmi1Status FMI1(fmiTerminateSlave)(fmi1Component c) {
  ((Instance*)c)->mode = TERMINATED;
  return fmi1OK;
}
EXPORT fmi1Status FMI1(fmiResetSlave)(fmi1Component c) {
  Instance* s = (Instance*)c;
  free_strings(s);
  model_start(&s->m);
  s->mode = INSTANTIATED;
  s->terminated = false;
  return fmi1OK;
}
EXPORT void FMI1(fmiFreeSlaveInstance)(fmi1Component c) {
  if (!c) return;
  free_strings((Instance*)c);
  free(c);
}
EXPORT fmi1Status FMI1(fmiSetRealInputDerivatives)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                                                   const fmi1Integer order[], const fmi1Real value[]) {
  (void)vr, (void)n, (void)order, (void)value;
  say((Instance*)c, ERROR, "fmiSetRealInputDerivatives: input derivatives are not supported%s", "");
  return fmi1Error;
}
EXPORT fmi1Status FMI1(fmiGetRealOutputDerivatives)(fmi1Component c, const fmi1ValueReference vr[], size_t n,
                                                    const fmi1Integer order[], fmi1Real value[]) {
  (void)vr, (void)n, (void)order, (void)value;
  say((Instance*)c, ERROR, "fmiGetRealOutputDerivatives: output derivatives are not supported%s", "");
  return fmi1Error;
}
EXPORT fmi1Status FMI1(fmiCancelStep)(fmi1Component c) {
  (void)c;
  return fmi1Error;
}
EXPORT fmi1Status FMI1(fmiDoStep)(fmi1Component c, fmi1Real t, fmi1Real h, fmi1Boolean new_step) {
  (void)new_step;
  Instance* s = (Instance*)c;
  if (s->mode != STEPPING) {
    say(s, ERROR, "fmiDoStep at t = %g before fmiInitializeSlave or after fmiTerminateSlave", t);
    return fmi1Error;
  }
  if (s->terminated && s->stepped) {
    say(s, ERROR, "fmiDoStep at t = %g after the model asked to terminate", t);
    return fmi1Error;
  }
  if (time_fault(s, t, "fmiDoStep")) return fmi1Error;
  s->stepped = true;
  if (!s->terminated) cs_step(s, t, h);
  return s->terminated ? fmi1Discard : fmi1OK;
}
EXPORT fmi1Status FMI1(fmiGetStatus)(fmi1Component c, const fmi1StatusKind k, fmi1Status* v) {
  (void)c, (void)k;
  *v = fmi1OK;
  return fmi1OK;
}
EXPORT fmi1Status FMI1(fmiGetRealStatus)(fmi1Component c, const fmi1StatusKind k, fmi1Real* v) {
  if (k != fmi1LastSuccessfulTime) return fmi1Discard;
  *v = ((Instance*)c)->time;
  return fmi1OK;
}
EXPORT fmi1Status FMI1(fmiGetIntegerStatus)(fmi1Component c, const fmi1StatusKind k, fmi1Integer* v) {
  (void)c, (void)k, (void)v;
  return fmi1Discard;
}
EXPORT fmi1Status FMI1(fmiGetBooleanStatus)(fmi1Component c, const fmi1StatusKind k, fmi1Boolean* v) {
  (void)c, (void)k, (void)v;
  return fmi1Discard;
}
EXPORT fmi1Status FMI1(fmiGetStringStatus)(fmi1Component c, const fmi1StatusKind k, fmi1String* v) {
  (void)c, (void)k, (void)v;
  return fmi1Discard;
}
