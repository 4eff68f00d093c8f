/* A static gain y = k u (FMI 2.0 co-simulation): an output with direct feedthrough, for
 * algebraic-loop checks. */
#define MODEL_GUID "{0e9b2c77-stride-gain-fmi2}"
#define N_REALS 6
#define N_STATES 1
#define N_INDICATORS 0
#define CS_SUBSTEP_VR 5
enum { U, Y, K, S, DER_S, H_INTERNAL };
static const unsigned state_vr[N_STATES] = {S};
static const unsigned der_vr[N_STATES] = {DER_S};

static void model_start(double* r) { r[U] = 0, r[Y] = 0, r[K] = 2.0, r[S] = 0, r[DER_S] = 0, r[H_INTERNAL] = 1.0; }
static void model_initialize(double* r) { (void)r; }
static void model_derivatives(double* r, double t) {
  (void)t;
  r[Y] = r[K] * r[U];
  r[DER_S] = 0.0;
}
static void model_indicators(const double* r, double* z) { (void)r, (void)z; }
static int model_event(double* r) { (void)r; return 0; }

#include "fmi2_frame.h"
