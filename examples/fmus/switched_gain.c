/* A gain with an Integer factor, a Boolean switch and an Integer sign output (FMI 2.0
 * co-simulation): y = enable ? n k u : 0, sign = sign(u), n_out = n (no feedthrough). For Integer/Boolean
 * ports and parameters. */
#define MODEL_GUID "{3c1d8e55-stride-switched-gain-fmi2}"
#define MODEL_HAS_DISCRETE
#define N_REALS 10
#define N_STATES 1
#define N_INDICATORS 0
#define CS_SUBSTEP_VR 5
enum { U, Y, K, S, DER_S, H_INTERNAL, N, ENABLE, SIGN, N_OUT };
static const unsigned state_vr[N_STATES] = {S};
static const unsigned der_vr[N_STATES] = {DER_S};
static const int is_integer[N_REALS] = {[N] = 1, [SIGN] = 1, [N_OUT] = 1};
static const int is_boolean[N_REALS] = {[ENABLE] = 1};

static void model_start(double* r) {
  r[U] = 0, r[Y] = 0, r[K] = 2.0, r[S] = 0, r[DER_S] = 0, r[H_INTERNAL] = 1.0, r[N] = 3, r[ENABLE] = 1, r[SIGN] = 0, r[N_OUT] = 3;
}
static void model_initialize(double* r) { (void)r; }
static void model_derivatives(double* r, double t) {
  (void)t;
  r[Y] = r[ENABLE] != 0 ? r[N] * r[K] * r[U] : 0.0;
  r[SIGN] = (r[U] > 0) - (r[U] < 0);
  r[N_OUT] = r[N];
  r[DER_S] = 0.0;
}
static void model_indicators(const double* r, double* z) { (void)r, (void)z; }
static int model_event(double* r) { (void)r; return 0; }

#include "fmi2_frame.h"
