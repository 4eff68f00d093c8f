/* A follower for the start-up tests: in initialization mode its output is y = u + b, read at
 * once from the input it is given; leaving initialization it keeps that value as its state
 * (ds/dt = 0) and then outputs y = s whatever its input does (no feedthrough after the start:
 * the output's dependencies are empty, its initial unknown depends on u). So y over the run is
 * exactly the value its input had when initialization ended: a system of followers shows how
 * the importer passed values between its FMUs before leaving initialization. */
#include "test_model.h"

#define MODEL_TOKEN "{9d7e4c11-stride-follower}"
#define MODEL_CS_SUBSTEP 0.1

typedef struct {
  double u, y, b, s;
  bool initialized;
} Model;

enum { U = 1, Y = 2, B = 3, S = 4 };
static const Var model_vars[] = {
    {U, FLOAT64, offsetof(Model, u), 1, INPUT},
    {Y, FLOAT64, offsetof(Model, y), 1, READ_ONLY},
    {B, FLOAT64, offsetof(Model, b), 1, START},
    {S, FLOAT64, offsetof(Model, s), 1, READ_ONLY},
};
#define N_VARS (sizeof model_vars / sizeof model_vars[0])

static size_t model_count(const Model* m, unsigned vr) { (void)m, (void)vr; return 1; }
static void model_start(Model* m) {
  m->u = m->y = m->b = m->s = 0.0;
  m->initialized = false;
}
static void model_initialize(Model* m, double t0) {
  (void)t0;
  m->s = m->u + m->b;
  m->initialized = true;
}
static size_t model_nx(const Model* m) { (void)m; return 1; }
static double* model_states(Model* m) { return &m->s; }
static void model_derivatives(Model* m, double t, double* dx) { (void)m, (void)t, dx[0] = 0.0; }
static size_t model_nz(const Model* m) { (void)m; return 0; }
static void model_indicators(Model* m, double t, double* z) { (void)m, (void)t, (void)z; }
static void model_outputs(Model* m, double t) {
  (void)t;
  m->y = m->initialized ? m->s : m->u + m->b;
}
static void model_event(Model* m, double t, Event* e) { (void)m, (void)t, (void)e; }

#include "test_fmu.h"
