/* dx/dt = A x + B u, y = C x + D u, with n states, m inputs and r outputs set by structural
 * parameters (at most 8 each): array states and derivatives, array inputs, outputs and
 * parameters whose sizes follow the structural parameters. x(0) = x0. For a diagonal A = -diag(a)
 * and a constant u: x_i(t) = (B u)_i / a_i + (x0_i - (B u)_i / a_i) exp(-a_i t). */
#include <math.h>

#include "test_model.h"

#define MODEL_TOKEN "{9d7e4c11-stride-state-space}"
#define MODEL_CS_SUBSTEP 0.001
#define MAX 8

typedef struct {
  uint64_t n, m, r;
  double A[MAX * MAX], B[MAX * MAX], C[MAX * MAX], D[MAX * MAX], x0[MAX];
  double u[MAX], y[MAX], x[MAX], dx[MAX];
} Model;

enum { N = 1, M = 2, R = 3, A_ = 4, B_ = 5, C_ = 6, D_ = 7, X0 = 8, U = 9, Y = 10, X = 11, DX = 12 };
static const Var model_vars[] = {
    {N, UINT64, offsetof(Model, n), 1, STRUCTURAL}, {M, UINT64, offsetof(Model, m), 1, STRUCTURAL},
    {R, UINT64, offsetof(Model, r), 1, STRUCTURAL}, {A_, FLOAT64, offsetof(Model, A), 0, START},
    {B_, FLOAT64, offsetof(Model, B), 0, START},    {C_, FLOAT64, offsetof(Model, C), 0, START},
    {D_, FLOAT64, offsetof(Model, D), 0, START},    {X0, FLOAT64, offsetof(Model, x0), 0, START},
    {U, FLOAT64, offsetof(Model, u), 0, INPUT},     {Y, FLOAT64, offsetof(Model, y), 0, READ_ONLY},
    {X, FLOAT64, offsetof(Model, x), 0, READ_ONLY}, {DX, FLOAT64, offsetof(Model, dx), 0, READ_ONLY},
};
#define N_VARS (sizeof model_vars / sizeof model_vars[0])

static size_t model_count(const Model* m, unsigned vr) {
  switch (vr) {
    case A_: return m->n * m->n;
    case B_: return m->n * m->m;
    case C_: return m->r * m->n;
    case D_: return m->r * m->m;
    case U: return m->m;
    case Y: return m->r;
    default: return m->n;
  }
}
static void model_start(Model* m) {
  memset(m, 0, sizeof *m);
  m->n = 3, m->m = 1, m->r = 1;
  m->A[0] = -1, m->A[4] = -2, m->A[8] = -3;
  m->B[0] = m->B[1] = m->B[2] = 1;
  m->C[0] = m->C[1] = m->C[2] = 1;
  m->D[0] = 0.5;
  m->x0[0] = 1, m->x0[2] = -1;
  m->u[0] = 2;
}
static void model_initialize(Model* m, double t0) {
  (void)t0;
  memcpy(m->x, m->x0, sizeof m->x);
}
static size_t model_nx(const Model* m) { return m->n > MAX ? MAX : m->n; }
static double* model_states(Model* m) { return m->x; }
static void model_derivatives(Model* m, double t, double* dx) {
  (void)t;
  for (size_t i = 0; i < m->n; ++i) {
    dx[i] = 0.0;
    for (size_t j = 0; j < m->n; ++j) dx[i] += m->A[i * m->n + j] * m->x[j];
    for (size_t j = 0; j < m->m; ++j) dx[i] += m->B[i * m->m + j] * m->u[j];
  }
}
static size_t model_nz(const Model* m) { (void)m; return 0; }
static void model_indicators(Model* m, double t, double* z) { (void)m, (void)t, (void)z; }
static void model_outputs(Model* m, double t) {
  model_derivatives(m, t, m->dx);
  for (size_t i = 0; i < m->r; ++i) {
    m->y[i] = 0.0;
    for (size_t j = 0; j < m->n; ++j) m->y[i] += m->C[i * m->n + j] * m->x[j];
    for (size_t j = 0; j < m->m; ++j) m->y[i] += m->D[i * m->m + j] * m->u[j];
  }
}
static void model_event(Model* m, double t, Event* e) { (void)m, (void)t, (void)e; }

#include "test_fmu.h"
