/* A square wave level (+A for half a period, then -A) integrated into a triangle wave
 * (FMI 2.0, model exchange, time events):  dx/dt = level, level toggled at t = k T/2.
 * x(t) = A (t mod T) in the first half of each period, A (T - t mod T) in the second. */
#define MODEL_GUID "{9a4e2f31-stride-square-wave-fmi2}"
#define MODEL_TIME_EVENTS
#define N_REALS 7
#define N_STATES 1
#define N_INDICATORS 0
#define CS_SUBSTEP_VR 6
enum { X, DER_X, LEVEL, PERIOD, AMPLITUDE, NEXT, UNUSED };
static const unsigned state_vr[N_STATES] = {X};
static const unsigned der_vr[N_STATES] = {DER_X};

static void model_start(double* r) {
  r[X] = 0, r[DER_X] = 0, r[PERIOD] = 0.25, r[AMPLITUDE] = 1.0, r[UNUSED] = 0;
  r[LEVEL] = r[AMPLITUDE], r[NEXT] = 0.5 * r[PERIOD];
}
static void model_initialize(double* r) { r[X] = 0, r[LEVEL] = r[AMPLITUDE], r[NEXT] = 0.5 * r[PERIOD]; }
static void model_derivatives(double* r, double t) {
  (void)t;
  r[DER_X] = r[LEVEL];
}
static void model_indicators(const double* r, double* z) { (void)r, (void)z; }
static int model_event(double* r) { (void)r; return 0; }
static int model_time_event(double* r, double t, double* next) {
  while (t >= r[NEXT] - 1e-12 * r[PERIOD]) {
    r[LEVEL] = -r[LEVEL];
    r[NEXT] += 0.5 * r[PERIOD];
  }
  *next = r[NEXT];
  return 1;
}

#include "fmi2_frame.h"
