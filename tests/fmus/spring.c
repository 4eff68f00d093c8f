/* A damped oscillator driven by a force: m x'' + d x' + k x = f, with the acceleration
 * a = (f - k x - d v) / m as an output that depends on the input f at once (direct
 * feedthrough). x and v are states whose start values may be set; m, k and d are parameters.
 * With f = 0, x(0) = x0 and v(0) = 0 (underdamped):
 * x(t) = x0 e^(-z w t) (cos(wd t) + z w / wd sin(wd t)), w = sqrt(k / m), z = d / (2 sqrt(k m)),
 * wd = w sqrt(1 - z^2). Written for the FMI 1.0 tests on the frame test_fmu.h. */
#include "test_model.h"

#define MODEL_TOKEN "{9d7e4c11-stride-spring}"
#define MODEL_CS_SUBSTEP 0.001

typedef struct {
  double x[2]; /* x, v */
  double a, m, k, d, f;
} Model;

enum { X = 1, V = 2, A = 3, M = 4, K = 5, D = 6, F = 7 };
static const Var model_vars[] = {
    {X, FLOAT64, offsetof(Model, x[0]), 1, START},  {V, FLOAT64, offsetof(Model, x[1]), 1, START},
    {A, FLOAT64, offsetof(Model, a), 1, READ_ONLY}, {M, FLOAT64, offsetof(Model, m), 1, START},
    {K, FLOAT64, offsetof(Model, k), 1, START},     {D, FLOAT64, offsetof(Model, d), 1, START},
    {F, FLOAT64, offsetof(Model, f), 1, INPUT},
};
#define N_VARS (sizeof model_vars / sizeof model_vars[0])

static size_t model_count(const Model* m, unsigned vr) {
  (void)m, (void)vr;
  return 1;
}
static void model_start(Model* m) {
  m->x[0] = 1.0, m->x[1] = 0.0;
  m->m = 1.0, m->k = 1.0, m->d = 0.0, m->f = 0.0;
}
static void model_initialize(Model* m, double t0) { (void)m, (void)t0; }
static size_t model_nx(const Model* m) {
  (void)m;
  return 2;
}
static double* model_states(Model* m) { return m->x; }
static void model_derivatives(Model* m, double t, double* dx) {
  (void)t;
  dx[0] = m->x[1];
  dx[1] = (m->f - m->k * m->x[0] - m->d * m->x[1]) / m->m;
}
static size_t model_nz(const Model* m) {
  (void)m;
  return 0;
}
static void model_indicators(Model* m, double t, double* z) { (void)m, (void)t, (void)z; }
static void model_outputs(Model* m, double t) {
  double dx[2];
  model_derivatives(m, t, dx);
  m->a = dx[1];
}
static void model_event(Model* m, double t, Event* e) { (void)m, (void)t, (void)e; }

#include "test_fmu.h"
