/* Three gains y[k] = k u[k] (FMI 2.0 co-simulation) whose inputs and outputs are FMI 2
 * structured array elements, for the element naming tests: each element's gain differs, so a
 * value arriving at the wrong element shows. element_gain.xml names them u[1]..u[3] (counted from
 * 1, as Modelica tools write them), element_gain0.xml u[0]..u[2]. */
#define MODEL_GUID "{4f1d0c2a-stride-element-gain}"
#define N_REALS 9
#define N_STATES 1
#define N_INDICATORS 0
#define CS_SUBSTEP_VR 8
enum { U1, U2, U3, Y1, Y2, Y3, S, DER_S, H_INTERNAL };
static const unsigned state_vr[N_STATES] = {S};
static const unsigned der_vr[N_STATES] = {DER_S};

static void model_start(double* r) {
  for (int i = 0; i < N_REALS; ++i) r[i] = 0;
  r[H_INTERNAL] = 1.0;
}
static void model_initialize(double* r) { (void)r; }
static void model_derivatives(double* r, double t) {
  (void)t;
  r[Y1] = 1 * r[U1], r[Y2] = 2 * r[U2], r[Y3] = 3 * r[U3];
  r[DER_S] = 0.0;
}
static void model_indicators(const double* r, double* z) { (void)r, (void)z; }
static int model_event(double* r) {
  (void)r;
  return 0;
}

#include "fmi2_frame.h"
