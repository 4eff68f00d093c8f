/* A ball dropped from h0 under gravity g, bouncing with restitution e (shared by the FMI 2.0 and FMI 3.0 model-exchange FMUs):
 *   dh/dt = v, dv/dt = -g; event indicator z = h; at h <= 0 with v < 0: v := -e v.
 * Bounce times: t1 = sqrt(2 h0/g), t_{k+1} = t_k + 2 e^k v1/g with v1 = sqrt(2 g h0). */
#include <float.h>
#define N_REALS 8
#define N_STATES 2
#define N_INDICATORS 1
#define CS_SUBSTEP_VR 7
enum { H, V, DER_H, DER_V, G, E, H0, UNUSED };
static const unsigned state_vr[N_STATES] = {H, V};
static const unsigned der_vr[N_STATES] = {DER_H, DER_V};

static void model_start(double* r) {
  r[G] = 9.81, r[E] = 0.8, r[H0] = 1.0, r[UNUSED] = 0.0;
  r[H] = r[H0], r[V] = 0.0;
}
static void model_initialize(double* r) { r[H] = r[H0], r[V] = 0.0; }
static void model_derivatives(double* r, double t) {
  (void)t;
  r[DER_H] = r[V];
  r[DER_V] = -r[G];
}
/* The ball lying at rest on the ground (h = 0 after a bounce) is kept above zero so that the
 * indicator's next change is the next impact. */
static void model_indicators(const double* r, double* z) { z[0] = r[H]; }
static int model_event(double* r) {
  if (r[H] <= 0 && r[V] < 0) {
    r[H] = DBL_MIN;
    r[V] = -r[E] * r[V];
    return 1;
  }
  return 0;
}

