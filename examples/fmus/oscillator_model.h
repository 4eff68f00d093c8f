/* Mass-spring-damper with a coupling spring to another body, shared by the FMI 2 (oscillator.c)
 * and FMI 3 (oscillator3.c) FMUs:  m dv/dt = -k x - d v + k2 (x_other - x),  dx/dt = v.
 * With k2 = 0 it is the free damped oscillator; with the two-mass parameters of
 * plugins/common/two_mass.hpp it is the mass m2 (or m1) of González 2011, Sect. 3.
 * Every variable is r[valueReference]; see oscillator.xml / oscillator3.xml. */
#define N_REALS 14
#define N_STATES 2
#define N_INDICATORS 0
#define CS_SUBSTEP_VR 11
enum { X, V, DER_X, DER_V, M, K, D, K2, X0, V0, X_OTHER, H_INTERNAL, STATE /* [x, v]: FMI 3 array */ };
static const unsigned state_vr[N_STATES] = {X, V};
static const unsigned der_vr[N_STATES] = {DER_X, DER_V};

static void model_start(double* r) {
  r[M] = 1.0, r[K] = 1.0, r[D] = 0.0, r[K2] = 0.0, r[X0] = 1.0, r[V0] = 0.0, r[X_OTHER] = 0.0, r[H_INTERNAL] = 1e-3;
  r[X] = r[X0], r[V] = r[V0];
}
static void model_initialize(double* r) { r[X] = r[X0], r[V] = r[V0]; }
static void model_derivatives(double* r, double t) {
  (void)t;
  r[DER_X] = r[V];
  r[DER_V] = (-r[K] * r[X] - r[D] * r[V] + r[K2] * (r[X_OTHER] - r[X])) / r[M];
  r[STATE] = r[X], r[STATE + 1] = r[V];
}
/* No events. */
static void model_indicators(const double* r, double* z) { (void)r, (void)z; }
static int model_event(double* r) { (void)r; return 0; }
