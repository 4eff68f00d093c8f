/* An FMI 3.0 co-simulation FMU with array variables (examples/fmus/vector_gain3.xml): arrays sized
 * by the structural parameter n (fixed at 3), Int32 and Boolean arrays, a Float64 array
 * parameter and a String parameter. Outputs are algebraic functions of the inputs. */
#include <stdlib.h>
#include <string.h>

#include "stride/fmi/fmi3.h"

#define EXPORT __attribute__((visibility("default")))
#define N 3
#define TOKEN "{5b0c1a52-stride-vector-gain-fmi3}"

typedef struct {
  double gains[N], u[N];
  fmi3Boolean flags[2];
  fmi3Int32 counts[2];
  char label[256];
  double time;
} Instance;

EXPORT const char* fmi3GetVersion(void) { return "3.0"; }

EXPORT fmi3Instance fmi3InstantiateCoSimulation(fmi3String name, fmi3String token, fmi3String resources,
                                                fmi3Boolean visible, fmi3Boolean logging, fmi3Boolean eventMode,
                                                fmi3Boolean earlyReturn, const fmi3ValueReference req[], size_t nreq,
                                                fmi3InstanceEnvironment env, fmi3LogMessageCallback log,
                                                fmi3IntermediateUpdateCallback update) {
  (void)name, (void)resources, (void)visible, (void)logging, (void)eventMode, (void)earlyReturn, (void)req, (void)nreq;
  (void)env, (void)log, (void)update;
  if (!token || strcmp(token, TOKEN) != 0) return NULL;
  Instance* m = (Instance*)calloc(1, sizeof(Instance));
  if (!m) return NULL;
  for (int i = 0; i < N; ++i) m->gains[i] = i + 1;
  strcpy(m->label, "none");
  return m;
}
EXPORT void fmi3FreeInstance(fmi3Instance c) { free(c); }
EXPORT fmi3Status fmi3EnterInitializationMode(fmi3Instance c, fmi3Boolean td, fmi3Float64 tol, fmi3Float64 t0,
                                              fmi3Boolean sd, fmi3Float64 stop) {
  (void)td, (void)tol, (void)sd, (void)stop;
  ((Instance*)c)->time = t0;
  return fmi3OK;
}
EXPORT fmi3Status fmi3ExitInitializationMode(fmi3Instance c) { (void)c; return fmi3OK; }
EXPORT fmi3Status fmi3Terminate(fmi3Instance c) { (void)c; return fmi3OK; }

/* Values of several references are concatenated; each call must supply exactly their sizes. */
EXPORT fmi3Status fmi3GetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Float64 v[], size_t nv) {
  Instance* m = (Instance*)c;
  size_t k = 0;
  for (size_t r = 0; r < nvr; ++r) {
    if ((vr[r] != 2 && vr[r] != 5) || k + N > nv) return fmi3Error;
    for (int i = 0; i < N; ++i) v[k++] = vr[r] == 2 ? m->gains[i] : m->gains[i] * m->u[i];
  }
  return k == nv ? fmi3OK : fmi3Error;
}
EXPORT fmi3Status fmi3SetFloat64(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Float64 v[], size_t nv) {
  Instance* m = (Instance*)c;
  size_t k = 0;
  for (size_t r = 0; r < nvr; ++r) {
    if ((vr[r] != 2 && vr[r] != 4) || k + N > nv) return fmi3Error;
    for (int i = 0; i < N; ++i) (vr[r] == 2 ? m->gains : m->u)[i] = v[k++];
  }
  return k == nv ? fmi3OK : fmi3Error;
}
EXPORT fmi3Status fmi3GetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Int32 v[], size_t nv) {
  Instance* m = (Instance*)c;
  size_t k = 0;
  for (size_t r = 0; r < nvr; ++r) {
    if (vr[r] == 8 && k < nv) v[k++] = (fmi3Int32)(m->flags[0] != 0) + (fmi3Int32)(m->flags[1] != 0);
    else if (vr[r] == 9 && k + 2 <= nv) v[k++] = 2 * m->counts[0], v[k++] = 2 * m->counts[1];
    else if (vr[r] == 7 && k + 2 <= nv) v[k++] = m->counts[0], v[k++] = m->counts[1];
    else if (vr[r] == 11 && k < nv) v[k++] = (fmi3Int32)strlen(m->label);
    else return fmi3Error;
  }
  return k == nv ? fmi3OK : fmi3Error;
}
EXPORT fmi3Status fmi3SetInt32(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Int32 v[], size_t nv) {
  Instance* m = (Instance*)c;
  if (nvr != 1 || vr[0] != 7 || nv != 2) return fmi3Error;
  m->counts[0] = v[0], m->counts[1] = v[1];
  return fmi3OK;
}
EXPORT fmi3Status fmi3GetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, fmi3Boolean v[], size_t nv) {
  Instance* m = (Instance*)c;
  if (nvr != 1 || nv != 2 || (vr[0] != 6 && vr[0] != 10)) return fmi3Error;
  for (int i = 0; i < 2; ++i) v[i] = vr[0] == 6 ? m->flags[i] : !m->flags[i];
  return fmi3OK;
}
EXPORT fmi3Status fmi3SetBoolean(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3Boolean v[], size_t nv) {
  Instance* m = (Instance*)c;
  if (nvr != 1 || vr[0] != 6 || nv != 2) return fmi3Error;
  m->flags[0] = v[0], m->flags[1] = v[1];
  return fmi3OK;
}
EXPORT fmi3Status fmi3SetString(fmi3Instance c, const fmi3ValueReference vr[], size_t nvr, const fmi3String v[], size_t nv) {
  Instance* m = (Instance*)c;
  if (nvr != 1 || vr[0] != 3 || nv != 1 || !v[0] || strlen(v[0]) >= sizeof m->label) return fmi3Error;
  strcpy(m->label, v[0]);
  return fmi3OK;
}
EXPORT fmi3Status fmi3DoStep(fmi3Instance c, fmi3Float64 t, fmi3Float64 h, fmi3Boolean noSetPrior, fmi3Boolean* event,
                             fmi3Boolean* terminate, fmi3Boolean* early, fmi3Float64* last) {
  (void)noSetPrior;
  Instance* m = (Instance*)c;
  m->time = t + h;
  *event = 0, *terminate = 0, *early = 0, *last = t + h;
  return fmi3OK;
}
#include "fmi3_state.h"
