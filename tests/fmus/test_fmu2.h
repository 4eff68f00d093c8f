/* The FMI 2.0 functions of the test frame (test_fmu.h). */

EXPORT const char* fmi2GetTypesPlatform(void) { return "default"; }
EXPORT const char* fmi2GetVersion(void) { return "2.0"; }
EXPORT fmi2Status fmi2SetDebugLogging(fmi2Component c, fmi2Boolean on, size_t n, const fmi2String cat[]) {
  (void)c, (void)on, (void)n, (void)cat;
  return fmi2OK;
}
EXPORT fmi2Component fmi2Instantiate(fmi2String name, fmi2Type type, fmi2String guid, fmi2String resources,
                                     const fmi2CallbackFunctions* cb, fmi2Boolean visible, fmi2Boolean logging) {
  (void)resources, (void)visible, (void)logging;
  Instance* s = instantiate(name, guid, type == fmi2ModelExchange);
  if (s && cb) s->cb = *cb;
  return s;
}
EXPORT void fmi2FreeInstance(fmi2Component c) {
  if (!c) return;
  free_strings((Instance*)c);
  free(c);
}
EXPORT fmi2Status fmi2SetupExperiment(fmi2Component c, fmi2Boolean td, fmi2Real tol, fmi2Real t0, fmi2Boolean sd,
                                      fmi2Real stop) {
  (void)td, (void)tol;
  Instance* s = (Instance*)c;
  s->time = t0;
  s->stop = sd ? stop : INFINITY;
  return fmi2OK;
}
EXPORT fmi2Status fmi2EnterInitializationMode(fmi2Component c) {
  ((Instance*)c)->mode = INITIALIZATION;
  return fmi2OK;
}
EXPORT fmi2Status fmi2ExitInitializationMode(fmi2Component c) {
  exit_initialization((Instance*)c);
  return fmi2OK;
}
EXPORT fmi2Status fmi2Terminate(fmi2Component c) {
  ((Instance*)c)->mode = TERMINATED;
  return fmi2OK;
}
EXPORT fmi2Status fmi2Reset(fmi2Component c) {
  Instance* s = (Instance*)c;
  free_strings(s);
  model_start(&s->m);
  s->mode = INSTANTIATED;
  s->terminated = false;
  return fmi2OK;
}

EXPORT fmi2Status fmi2GetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Real v[]) {
  return (fmi2Status)access_values((Instance*)c, vr, n, v, n, FLOAT64, 0, "fmi2GetReal");
}
EXPORT fmi2Status fmi2SetReal(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Real v[]) {
  return (fmi2Status)access_values((Instance*)c, vr, n, (void*)v, n, FLOAT64, 1, "fmi2SetReal");
}
/* Integer and Enumeration variables are Int32 in the model. */
EXPORT fmi2Status fmi2GetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Integer v[]) {
  return (fmi2Status)access_values((Instance*)c, vr, n, v, n, INT32, 0, "fmi2GetInteger");
}
EXPORT fmi2Status fmi2SetInteger(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Integer v[]) {
  return (fmi2Status)access_values((Instance*)c, vr, n, (void*)v, n, INT32, 1, "fmi2SetInteger");
}
EXPORT fmi2Status fmi2GetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2Boolean v[]) {
  bool b[64];
  if (n > 64) return fmi2Error;
  const int r = access_values((Instance*)c, vr, n, b, n, BOOLEAN, 0, "fmi2GetBoolean");
  for (size_t i = 0; i < n && r == OK; ++i) v[i] = b[i] ? fmi2True : fmi2False;
  return (fmi2Status)r;
}
EXPORT fmi2Status fmi2SetBoolean(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2Boolean v[]) {
  bool b[64];
  if (n > 64) return fmi2Error;
  for (size_t i = 0; i < n; ++i) b[i] = v[i] != fmi2False;
  return (fmi2Status)access_values((Instance*)c, vr, n, b, n, BOOLEAN, 1, "fmi2SetBoolean");
}
EXPORT fmi2Status fmi2GetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, fmi2String v[]) {
  return (fmi2Status)access_values((Instance*)c, vr, n, (void*)v, n, STRING, 0, "fmi2GetString");
}
EXPORT fmi2Status fmi2SetString(fmi2Component c, const fmi2ValueReference vr[], size_t n, const fmi2String v[]) {
  return (fmi2Status)access_values((Instance*)c, vr, n, (void*)v, n, STRING, 1, "fmi2SetString");
}

/* Model exchange. */
EXPORT fmi2Status fmi2SetTime(fmi2Component c, fmi2Real t) {
  ((Instance*)c)->time = t;
  return fmi2OK;
}
EXPORT fmi2Status fmi2SetContinuousStates(fmi2Component c, const fmi2Real x[], size_t n) {
  return (fmi2Status)set_continuous_states((Instance*)c, x, n);
}
EXPORT fmi2Status fmi2GetContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
  return (fmi2Status)get_continuous_states((Instance*)c, x, n);
}
EXPORT fmi2Status fmi2GetNominalsOfContinuousStates(fmi2Component c, fmi2Real x[], size_t n) {
  (void)c;
  for (size_t i = 0; i < n; ++i) x[i] = 1.0;
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetDerivatives(fmi2Component c, fmi2Real dx[], size_t n) {
  return (fmi2Status)get_derivatives((Instance*)c, dx, n);
}
EXPORT fmi2Status fmi2GetEventIndicators(fmi2Component c, fmi2Real z[], size_t n) {
  return (fmi2Status)get_indicators((Instance*)c, z, n);
}
EXPORT fmi2Status fmi2EnterEventMode(fmi2Component c) {
  ((Instance*)c)->mode = EVENT;
  return fmi2OK;
}
EXPORT fmi2Status fmi2NewDiscreteStates(fmi2Component c, fmi2EventInfo* info) {
  Instance* s = (Instance*)c;
  if (s->mode != EVENT) {
    say(s, ERROR, "fmi2NewDiscreteStates outside event mode");
    return fmi2Error;
  }
  const Event e = me_update(s);
  info->newDiscreteStatesNeeded = e.again;
  info->terminateSimulation = e.terminate;
  info->nominalsOfContinuousStatesChanged = fmi2False;
  info->valuesOfContinuousStatesChanged = e.states_changed;
  info->nextEventTimeDefined = e.next_defined;
  info->nextEventTime = e.next;
  return fmi2OK;
}
EXPORT fmi2Status fmi2EnterContinuousTimeMode(fmi2Component c) { return (fmi2Status)enter_continuous_time_mode((Instance*)c); }
EXPORT fmi2Status fmi2CompletedIntegratorStep(fmi2Component c, fmi2Boolean noSet, fmi2Boolean* enter,
                                              fmi2Boolean* terminate) {
  (void)noSet;
  *enter = fmi2False;
  *terminate = ((Instance*)c)->terminated;
  return fmi2OK;
}

/* Co-simulation. */
EXPORT fmi2Status fmi2DoStep(fmi2Component c, fmi2Real t, fmi2Real h, fmi2Boolean noSet) {
  (void)noSet;
  Instance* s = (Instance*)c;
  if (s->terminated && !s->stepped) {
    /* Asked during initialization: the first step says so without progress. */
    s->stepped = true;
    return fmi2Discard;
  }
  if (s->terminated) {
    say(s, ERROR, "fmi2DoStep at t = %g after the model asked to terminate", t);
    return fmi2Error;
  }
  s->stepped = true;
  cs_step(s, t, h);
  return s->terminated ? fmi2Discard : fmi2OK;
}
EXPORT fmi2Status fmi2CancelStep(fmi2Component c) { (void)c; return fmi2Error; }
EXPORT fmi2Status fmi2GetRealStatus(fmi2Component c, const fmi2StatusKind k, fmi2Real* v) {
  if (k != fmi2LastSuccessfulTime) return fmi2Discard;
  *v = ((Instance*)c)->time;
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetBooleanStatus(fmi2Component c, const fmi2StatusKind k, fmi2Boolean* v) {
  if (k != fmi2Terminated) return fmi2Discard;
  *v = ((Instance*)c)->terminated;
  return fmi2OK;
}
EXPORT fmi2Status fmi2GetStatus(fmi2Component c, const fmi2StatusKind k, fmi2Status* v) {
  (void)c, (void)k;
  *v = fmi2OK;
  return fmi2OK;
}
