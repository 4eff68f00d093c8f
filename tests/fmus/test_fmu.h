/* The frame of the conformance test FMUs (tests/fmus): FMI 1.0, 2.0 or 3.0 (FMI_VERSION, default
 * 2; FMI 1.0 in test_fmu1.h, its functions named <MODEL_IDENTIFIER>_fmi...), model exchange and
 * co-simulation from one binary, variables of every type of the version (arrays included) by
 * value reference, time and state events with event iteration, and the model's request to end
 * the simulation. Written for Stride's tests from the text of the standard.
 * Included at the end of one model file, which defines first:
 *
 *   MODEL_TOKEN                       guid (FMI 2) / instantiationToken (FMI 3)
 *   Model                             a struct with the model's variables
 *   model_vars[], N_VARS              {value reference, type, offsetof(Model, field), elements (0:
 *                                     model_count()), access}: what fmi*Get/Set may touch
 *   size_t model_count(const Model*, unsigned vr)   elements of an array sized by a structural
 *                                     parameter
 *   void model_start(Model*)          start values (strings: fmu_strdup)
 *   void model_initialize(Model*, double t0)       end of initialization mode
 *   size_t model_nx(const Model*); double* model_states(Model*);
 *   void model_derivatives(Model*, double t, double* dx)
 *   size_t model_nz(const Model*); void model_indicators(Model*, double t, double* z)
 *   void model_event(Model*, double t, Event*)    one round of event iteration
 *   void model_outputs(Model*, double t)          outputs and locals from states and inputs
 *   MODEL_CS_SUBSTEP                  the largest RK4 substep of co-simulation (s)
 *
 * The frame checks what a correct importer does: structural parameters only in configuration
 * mode (FMI 3), parameters and start values only before initialization ends, continuous-time
 * mode only after the discrete states settled (every round of event iteration asked for), no
 * call after the FMU asked to terminate, the state vector of the right length. A violation
 * returns an error with a message. Co-simulation handles time events exactly (the step is cut
 * at them) and ends early when the model asks to terminate: FMI 2 returns fmi2Discard with
 * fmi2Terminated, FMI 3 terminateSimulation, both with the last successful time. */
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef FMI_VERSION
#define FMI_VERSION 2
#endif
#if FMI_VERSION == 1
#include "stride/fmi/fmi1Functions.h"
#elif FMI_VERSION == 2
#include "stride/fmi/fmi2.h"
#else
#include "stride/fmi/fmi3.h"
#endif

#define EXPORT __attribute__((visibility("default")))

enum Mode { INSTANTIATED, CONFIGURATION, INITIALIZATION, EVENT, CONTINUOUS, STEPPING, TERMINATED };

typedef struct {
#if FMI_VERSION == 1
  fmi1CallbackFunctions cb;
#elif FMI_VERSION == 2
  fmi2CallbackFunctions cb;
#else
  fmi3InstanceEnvironment env;
  fmi3LogMessageCallback log;
#endif
  char name[128];
  int me;
  enum Mode mode;
  double time, stop;
  bool next_defined, unsettled, terminated;
  bool stepped; /* co-simulation: a step was taken */
  bool event_mode; /* co-simulation (FMI 3): eventModeUsed, the importer handles the events */
  double next;
  Model m;
  /* what fmi*GetString / GetBinary last returned (valid until the next call) */
  const char* strings[64];
  const unsigned char* binaries[64];
  size_t binary_sizes[64];
} Instance;

static void say(Instance* s, int status, const char* fmt, ...) {
  char text[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(text, sizeof text, fmt, ap);
  va_end(ap);
#if FMI_VERSION == 1
  if (s->cb.logger) s->cb.logger(s, s->name, (fmi1Status)status, "model", "%s", text);
#elif FMI_VERSION == 2
  if (s->cb.logger) s->cb.logger(s->cb.componentEnvironment, s->name, (fmi2Status)status, "model", "%s", text);
#else
  if (s->log) s->log(s->env, (fmi3Status)status, "model", text);
#endif
}
enum { OK = 0, WARNING = 1, DISCARD = 2, ERROR = 3 };

char* fmu_strdup(const char* text) {
  char* copy = (char*)malloc(strlen(text) + 1);
  if (copy) strcpy(copy, text);
  return copy;
}
void fmu_set_text(char** to, const char* from) {
  if (*to && strcmp(*to, from) == 0) return;
  free(*to);
  *to = fmu_strdup(from);
}

static const size_t type_size[] = {sizeof(double),  sizeof(float),   sizeof(int8_t),  sizeof(uint8_t), sizeof(int16_t),
                                   sizeof(uint16_t), sizeof(int32_t), sizeof(uint32_t), sizeof(int64_t), sizeof(uint64_t),
                                   sizeof(bool),    sizeof(char*),   sizeof(Bin)};
static const char* const type_name[] = {"Float64", "Float32", "Int8",    "UInt8",   "Int16",  "UInt16", "Int32",
                                        "UInt32",  "Int64",   "UInt64", "Boolean", "String", "Binary"};

static const Var* find_var(unsigned vr) {
  for (size_t i = 0; i < N_VARS; ++i)
    if (model_vars[i].vr == vr) return &model_vars[i];
  return NULL;
}
static size_t var_count(Instance* s, const Var* v) { return v->count ? v->count : model_count(&s->m, v->vr); }
static char* var_data(Instance* s, const Var* v) { return (char*)&s->m + v->offset; }

/* May `v` be set now? Inputs always; starts before initialization ends; structural
 * parameters in configuration mode only (FMI 3), or before initialization (FMI 2). */
static int settable(Instance* s, const Var* v) {
  switch (v->access) {
    case INPUT: return s->mode != TERMINATED;
    case START: return s->mode == INSTANTIATED || s->mode == INITIALIZATION || s->mode == CONFIGURATION;
    case STRUCTURAL: return FMI_VERSION <= 2 ? s->mode == INSTANTIATED : s->mode == CONFIGURATION;
    default: return 0;
  }
}

/* Copies elements of the variables `vr` from (get) or into (set) `values` of type `type`. */
static int access_values(Instance* s, const unsigned vr[], size_t n, void* values, size_t nv, int type, int set,
                         const char* fn) {
  if (s->terminated && set) {
    say(s, ERROR, "%s after the model asked to terminate", fn);
    return ERROR;
  }
  if (!set) model_outputs(&s->m, s->time);
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    const Var* v = find_var(vr[i]);
    if (!v || (int)v->type != type) {
      say(s, ERROR, "%s: value reference %u is not a %s variable", fn, vr[i], type_name[type]);
      return ERROR;
    }
    if (set && !settable(s, v)) {
      say(s, ERROR, "%s: variable %u cannot be set in mode %d", fn, vr[i], (int)s->mode);
      return ERROR;
    }
    const size_t count = var_count(s, v), size = type_size[type];
    if (k + count > nv) {
      say(s, ERROR, "%s: %zu values for more elements", fn, nv);
      return ERROR;
    }
    char* data = var_data(s, v);
    for (size_t j = 0; j < count; ++j, ++k) {
      char* slot = data + j * size;
      if (type == STRING && set) {
        free(*(char**)slot);
        *(char**)slot = fmu_strdup(((const char* const*)values)[k]);
      } else if (type == STRING) {
        ((const char**)values)[k] = *(char**)slot;
      } else if (set) {
        memcpy(slot, (const char*)values + k * size, size);
      } else {
        memcpy((char*)values + k * size, slot, size);
      }
    }
  }
  if (k != nv) {
    say(s, ERROR, "%s: %zu values for %zu elements", fn, nv, k);
    return ERROR;
  }
  return OK;
}

static void free_strings(Instance* s) {
  for (size_t i = 0; i < N_VARS; ++i) {
    const Var* v = &model_vars[i];
    if (v->type != STRING && v->type != BINARY) continue;
    for (size_t j = 0; j < var_count(s, v); ++j) {
      char* slot = var_data(s, v) + j * type_size[v->type];
      if (v->type == STRING) free(*(char**)slot), *(char**)slot = NULL;
      else free(((Bin*)slot)->data), ((Bin*)slot)->data = NULL;
    }
  }
}

static Instance* instantiate(const char* name, const char* token, int me) {
  if (!token || strcmp(token, MODEL_TOKEN) != 0) return NULL;
  Instance* s = (Instance*)calloc(1, sizeof(Instance));
  if (!s) return NULL;
  snprintf(s->name, sizeof s->name, "%s", name ? name : "");
  s->me = me;
  s->mode = INSTANTIATED;
  model_start(&s->m);
  return s;
}

/* One event instant: rounds of model_event until the model settles (co-simulation, and the end
 * of initialization in co-simulation). */
static void settle(Instance* s) {
  for (int round = 0; round < 100; ++round) {
    Event e = {0};
    model_event(&s->m, s->time, &e);
    s->next_defined = e.next_defined, s->next = e.next;
    if (e.terminate) s->terminated = true;
    if (!e.again || s->terminated) return;
  }
}

static void exit_initialization(Instance* s) {
  model_initialize(&s->m, s->time);
  if (s->me || s->event_mode) {
    s->mode = EVENT;
    s->unsettled = true; /* the importer must call the event update at least once */
  } else {
    s->mode = STEPPING;
    settle(s);
  }
}

/* RK4 from s->time to `end` in equal substeps of at most MODEL_CS_SUBSTEP, the inputs held. */
static void rk4(Instance* s, double end) {
  const size_t nx = model_nx(&s->m);
  if (nx == 0 || !(end > s->time)) {
    s->time = end > s->time ? end : s->time;
    return;
  }
  const int steps = (int)ceil((end - s->time) / MODEL_CS_SUBSTEP - 1e-9);
  const double dt = (end - s->time) / steps, t0 = s->time;
  double* x = model_states(&s->m);
  double x0[64], k[4][64];
  static const double a[4] = {0.0, 0.5, 0.5, 1.0};
  for (int step = 0; step < steps; ++step) {
    const double t = t0 + step * dt;
    memcpy(x0, x, nx * sizeof(double));
    for (int stage = 0; stage < 4; ++stage) {
      for (size_t i = 0; i < nx; ++i) x[i] = x0[i] + (stage ? a[stage] * dt * k[stage - 1][i] : 0.0);
      model_derivatives(&s->m, t + a[stage] * dt, k[stage]);
    }
    for (size_t i = 0; i < nx; ++i) x[i] = x0[i] + dt / 6.0 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
  }
  s->time = end;
}

/* Co-simulation: from t by h, cut at time events (handled exactly); stops early when the
 * model asks to terminate. Returns the time reached. */
static double cs_step(Instance* s, double t, double h) {
  const double end = t + h, eps = 1e-12 * fmax(1.0, fabs(end));
  s->time = t;
  while (s->time < end - eps && !s->terminated) {
    const int event = s->next_defined && s->next <= end + eps;
    rk4(s, event ? fmax(s->next, s->time) : end);
    if (event) settle(s);
  }
  if (!s->terminated) s->time = end;
  return s->time;
}

#if FMI_VERSION >= 2 /* FMI 1.0 has neither event mode in co-simulation nor continuous-time mode */
/* Co-simulation with event mode (FMI 3 eventModeUsed): from t by h, to the next time event
 * at most; the event is left for the importer (event mode, fmi3UpdateDiscreteStates). An
 * event within round-off of t is due at t: no progress. Returns the time reached; *event
 * when it is an event's. */
static double cs_step_to_event(Instance* s, double t, double h, int* event) {
  const double end = t + h, eps = 1e-12 * fmax(1.0, fabs(end));
  s->time = t;
  *event = s->next_defined && s->next <= end + eps;
  if (*event && s->next <= t + eps) {
    s->time = fmax(s->next, t);
    return t;
  }
  rk4(s, *event ? s->next : end);
  return *event && s->next < end ? s->next : end;
}
#endif

/* Model exchange: one round of event iteration. */
static Event me_update(Instance* s) {
  Event e = {0};
  model_event(&s->m, s->time, &e);
  s->unsettled = e.again;
  s->next_defined = e.next_defined, s->next = e.next;
  if (e.terminate) s->terminated = true;
  return e;
}

static int set_continuous_states(Instance* s, const double x[], size_t n) {
  if (n != model_nx(&s->m)) {
    say(s, ERROR, "%zu continuous states given, the model has %zu", n, model_nx(&s->m));
    return ERROR;
  }
  memcpy(model_states(&s->m), x, n * sizeof(double));
  return OK;
}
static int get_continuous_states(Instance* s, double x[], size_t n) {
  if (n != model_nx(&s->m)) {
    say(s, ERROR, "%zu continuous states asked, the model has %zu", n, model_nx(&s->m));
    return ERROR;
  }
  memcpy(x, model_states(&s->m), n * sizeof(double));
  return OK;
}
static int get_derivatives(Instance* s, double dx[], size_t n) {
  if (n != model_nx(&s->m)) {
    say(s, ERROR, "%zu derivatives asked, the model has %zu states", n, model_nx(&s->m));
    return ERROR;
  }
  model_derivatives(&s->m, s->time, dx);
  return OK;
}
static int get_indicators(Instance* s, double z[], size_t n) {
  if (n != model_nz(&s->m)) {
    say(s, ERROR, "%zu event indicators asked, the model has %zu", n, model_nz(&s->m));
    return ERROR;
  }
  model_indicators(&s->m, s->time, z);
  return OK;
}
#if FMI_VERSION >= 2
static int enter_continuous_time_mode(Instance* s) {
  if (s->unsettled) {
    say(s, ERROR, "continuous-time mode entered at t = %.17g before the discrete states settled", s->time);
    return ERROR;
  }
  if (s->terminated) {
    say(s, ERROR, "continuous-time mode entered after the model asked to terminate");
    return ERROR;
  }
  s->mode = CONTINUOUS;
  return OK;
}
#endif

#if FMI_VERSION == 1
#include "test_fmu1.h"
#elif FMI_VERSION == 2
#include "test_fmu2.h"
#else
#include "test_fmu3.h"
#endif
