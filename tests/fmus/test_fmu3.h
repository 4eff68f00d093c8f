/* The FMI 3.0 functions of the test frame (test_fmu.h). */

EXPORT const char* fmi3GetVersion(void) { return "3.0"; }
EXPORT fmi3Status fmi3SetDebugLogging(fmi3Instance c, fmi3Boolean on, size_t n, const fmi3String cat[]) {
  (void)c, (void)on, (void)n, (void)cat;
  return fmi3OK;
}
static Instance* instantiate3(fmi3String name, fmi3String token, int me, fmi3InstanceEnvironment env,
                              fmi3LogMessageCallback log) {
  Instance* s = instantiate(name, token, me);
  if (!s && log) log(env, fmi3Error, "model", "wrong instantiation token");
  if (s) s->env = env, s->log = log;
  return s;
}
EXPORT fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,
                                                fmi3Boolean visible, fmi3Boolean logging, fmi3Boolean eventMode,
                                                fmi3Boolean earlyReturn, const fmi3ValueReference req[], size_t nreq,
                                                fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
                                                fmi3IntermediateUpdateCallback update) {
  (void)resources, (void)visible, (void)logging, (void)req, (void)nreq, (void)update;
  if (eventMode && !earlyReturn) return NULL; /* events inside a step need the early return */
#ifdef FMU_REFUSE_EVENT_MODE
  if (eventMode) { /* as the Reference FMUs without events do: hasEventMode declared, eventModeUsed refused */
    if (log) log(env, fmi3Error, "model", "Event Mode is not supported.");
    return NULL;
  }
#endif
  Instance* s = instantiate3(name, token, 0, env, log);
  if (s) s->event_mode = eventMode;
  return s;
}
EXPORT fmi3Instance fmi3InstantiateModelExchange(fmi3String name, fmi3String token, fmi3String resources,
                                                 fmi3Boolean visible, fmi3Boolean logging,
                                                 fmi3InstanceEnvironment env, fmi3LogMessageCallback log) {
  (void)resources, (void)visible, (void)logging;
  return instantiate3(name, token, 1, env, log);
}
EXPORT void fmi3FreeInstance(fmi3Instance c) {
  if (!c) return;
  free_strings((Instance*)c);
  free(c);
}
EXPORT fmi3Status fmi3EnterConfigurationMode(fmi3Instance c) {
  Instance* s = (Instance*)c;
  if (s->mode != INSTANTIATED) return fmi3Error;
  s->mode = CONFIGURATION;
  return fmi3OK;
}
EXPORT fmi3Status fmi3ExitConfigurationMode(fmi3Instance c) {
  ((Instance*)c)->mode = INSTANTIATED;
  return fmi3OK;
}
EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean td, fmi3Float64 tol, fmi3Float64 t0,
                                              fmi3Boolean sd, fmi3Float64 stop) {
  (void)td, (void)tol;
  Instance* s = (Instance*)c;
  s->time = t0;
  s->stop = sd ? stop : INFINITY;
  s->mode = INITIALIZATION;
  return fmi3OK;
}
EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance c) {
  exit_initialization((Instance*)c);
  return fmi3OK;
}
EXPORT fmi3Status fmi3Terminate(fmi3Instance c) {
  ((Instance*)c)->mode = TERMINATED;
  return fmi3OK;
}
EXPORT fmi3Status fmi3Reset(fmi3Instance c) {
  Instance* s = (Instance*)c;
  free_strings(s);
  model_start(&s->m);
  s->mode = INSTANTIATED;
  s->terminated = false;
  return fmi3OK;
}

#define ACCESSORS(T, CT, TYPE)                                                                                       \
  EXPORT fmi3Status fmi3Get##T(fmi3Instance c, const fmi3ValueReference vr[], size_t n, CT v[], size_t nv) {         \
    return (fmi3Status)access_values((Instance*)c, vr, n, v, nv, TYPE, 0, "fmi3Get" #T);                             \
  }                                                                                                                  \
  EXPORT fmi3Status fmi3Set##T(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const CT v[], size_t nv) {   \
    return (fmi3Status)access_values((Instance*)c, vr, n, (void*)v, nv, TYPE, 1, "fmi3Set" #T);                      \
  }
ACCESSORS(Float64, fmi3Float64, FLOAT64)
ACCESSORS(Float32, fmi3Float32, FLOAT32)
ACCESSORS(Int8, fmi3Int8, INT8)
ACCESSORS(UInt8, fmi3UInt8, UINT8)
ACCESSORS(Int16, fmi3Int16, INT16)
ACCESSORS(UInt16, fmi3UInt16, UINT16)
ACCESSORS(Int32, fmi3Int32, INT32)
ACCESSORS(UInt32, fmi3UInt32, UINT32)
ACCESSORS(Int64, fmi3Int64, INT64)
ACCESSORS(UInt64, fmi3UInt64, UINT64)
ACCESSORS(Boolean, fmi3Boolean, BOOLEAN)
#undef ACCESSORS
EXPORT fmi3Status fmi3GetString(fmi3Instance c, const fmi3ValueReference vr[], size_t n, fmi3String v[], size_t nv) {
  return (fmi3Status)access_values((Instance*)c, vr, n, (void*)v, nv, STRING, 0, "fmi3GetString");
}
EXPORT fmi3Status fmi3SetString(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const fmi3String v[], size_t nv) {
  return (fmi3Status)access_values((Instance*)c, vr, n, (void*)v, nv, STRING, 1, "fmi3SetString");
}
/* Binary values: the model's bytes (get), copies of the importer's (set). */
EXPORT fmi3Status fmi3GetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n, size_t sizes[], fmi3Binary v[],
                                size_t nv) {
  Instance* s = (Instance*)c;
  model_outputs(&s->m, s->time);
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    const Var* var = find_var(vr[i]);
    if (!var || var->type != BINARY) {
      say(s, ERROR, "fmi3GetBinary: value reference %u is not a Binary variable", vr[i]);
      return fmi3Error;
    }
    const Bin* b = (const Bin*)var_data(s, var);
    for (size_t j = 0; j < var_count(s, var); ++j, ++k) {
      if (k >= nv) return fmi3Error;
      v[k] = b[j].data, sizes[k] = b[j].size;
    }
  }
  return k == nv ? fmi3OK : fmi3Error;
}
EXPORT fmi3Status fmi3SetBinary(fmi3Instance c, const fmi3ValueReference vr[], size_t n, const size_t sizes[],
                                const fmi3Binary v[], size_t nv) {
  Instance* s = (Instance*)c;
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    const Var* var = find_var(vr[i]);
    if (!var || var->type != BINARY || !settable(s, var)) {
      say(s, ERROR, "fmi3SetBinary: value reference %u is not a Binary variable that can be set now", vr[i]);
      return fmi3Error;
    }
    Bin* b = (Bin*)var_data(s, var);
    for (size_t j = 0; j < var_count(s, var); ++j, ++k) {
      if (k >= nv) return fmi3Error;
      free(b[j].data);
      b[j].data = (unsigned char*)malloc(sizes[k] ? sizes[k] : 1);
      if (sizes[k]) memcpy(b[j].data, v[k], sizes[k]);
      b[j].size = sizes[k];
    }
  }
  return k == nv ? fmi3OK : fmi3Error;
}

/* Model exchange. */
EXPORT fmi3Status fmi3SetTime(fmi3Instance c, fmi3Float64 t) {
  ((Instance*)c)->time = t;
  return fmi3OK;
}
EXPORT fmi3Status fmi3SetContinuousStates(fmi3Instance c, const fmi3Float64 x[], size_t n) {
  return (fmi3Status)set_continuous_states((Instance*)c, x, n);
}
EXPORT fmi3Status fmi3GetContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
  return (fmi3Status)get_continuous_states((Instance*)c, x, n);
}
EXPORT fmi3Status fmi3GetNominalsOfContinuousStates(fmi3Instance c, fmi3Float64 x[], size_t n) {
  (void)c;
  for (size_t i = 0; i < n; ++i) x[i] = 1.0;
  return fmi3OK;
}
EXPORT fmi3Status fmi3GetContinuousStateDerivatives(fmi3Instance c, fmi3Float64 dx[], size_t n) {
  return (fmi3Status)get_derivatives((Instance*)c, dx, n);
}
EXPORT fmi3Status fmi3GetEventIndicators(fmi3Instance c, fmi3Float64 z[], size_t n) {
  return (fmi3Status)get_indicators((Instance*)c, z, n);
}
EXPORT fmi3Status fmi3GetNumberOfContinuousStates(fmi3Instance c, size_t* n) {
  *n = model_nx(&((Instance*)c)->m);
  return fmi3OK;
}
EXPORT fmi3Status fmi3GetNumberOfEventIndicators(fmi3Instance c, size_t* n) {
  *n = model_nz(&((Instance*)c)->m);
  return fmi3OK;
}
EXPORT fmi3Status fmi3EnterEventMode(fmi3Instance c) {
  ((Instance*)c)->mode = EVENT;
  return fmi3OK;
}
EXPORT fmi3Status fmi3UpdateDiscreteStates(fmi3Instance c, fmi3Boolean* again, fmi3Boolean* terminate,
                                           fmi3Boolean* nominals, fmi3Boolean* values, fmi3Boolean* defined,
                                           fmi3Float64* next) {
  Instance* s = (Instance*)c;
  if (s->mode != EVENT) {
    say(s, ERROR, "fmi3UpdateDiscreteStates outside event mode");
    return fmi3Error;
  }
  const Event e = me_update(s);
  *again = e.again, *terminate = e.terminate, *nominals = false, *values = e.states_changed;
  *defined = e.next_defined, *next = e.next;
  return fmi3OK;
}
EXPORT fmi3Status fmi3EnterContinuousTimeMode(fmi3Instance c) { return (fmi3Status)enter_continuous_time_mode((Instance*)c); }
EXPORT fmi3Status fmi3CompletedIntegratorStep(fmi3Instance c, fmi3Boolean noSet, fmi3Boolean* enter,
                                              fmi3Boolean* terminate) {
  (void)noSet;
  *enter = false;
  *terminate = ((Instance*)c)->terminated;
  return fmi3OK;
}

/* Co-simulation. */
EXPORT fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean noSet, fmi3Boolean* event,
                             fmi3Boolean* terminate, fmi3Boolean* early, fmi3Float64* last) {
  (void)noSet;
  Instance* s = (Instance*)c;
  if (s->terminated && !s->stepped) {
    /* Asked during initialization: the first step says so without progress. */
    s->stepped = true;
    *last = t, *event = false, *terminate = true, *early = true;
    return fmi3OK;
  }
  if (s->terminated) {
    say(s, ERROR, "fmi3DoStep at t = %g after the model asked to terminate", t);
    return fmi3Error;
  }
  s->stepped = true;
  if (s->mode != STEPPING) {
    say(s, ERROR, "fmi3DoStep at t = %g outside step mode", t);
    return fmi3Error;
  }
  if (s->event_mode) {
    int at_event = 0;
    *last = cs_step_to_event(s, t, h, &at_event);
    *event = at_event;
    *terminate = false;
    *early = *last < t + h;
    return fmi3OK;
  }
  *last = cs_step(s, t, h);
  *event = false;
  *terminate = s->terminated;
  *early = false;
  return fmi3OK;
}
EXPORT fmi3Status fmi3EnterStepMode(fmi3Instance c) {
  Instance* s = (Instance*)c;
  if (s->me || s->mode != EVENT || s->unsettled || s->terminated) {
    say(s, ERROR, "step mode entered at t = %.17g %s", s->time,
        s->terminated ? "after the model asked to terminate" : "before the discrete states settled");
    return fmi3Error;
  }
  s->mode = STEPPING;
  return fmi3OK;
}
