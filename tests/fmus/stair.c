/* A stair with a ramp under it: counter = 1 + the number of time events so far, one every
 * `period` seconds; dx/dt = counter. Each event takes three rounds of event iteration (the
 * counter steps in the first; `settled` counts the events whose rounds all ran). When the
 * counter reaches `last` the model asks to end the simulation (period 1, last 10: at t = 9 s).
 * Closed form for t in [k, k + 1), period 1: counter = k + 1, x = k (k + 1) / 2 + (k + 1)(t - k). */
#include "test_model.h"

#define MODEL_TOKEN "{9d7e4c11-stride-stair}"
#define MODEL_CS_SUBSTEP 0.01

typedef struct {
  int32_t counter, settled, last;
  double x, der_x, period, next, first;
  int pending;
} Model;

enum { COUNTER = 1, X = 2, DER_X = 3, SETTLED = 4, PERIOD = 5, LAST = 6, FIRST = 7 };
static const Var model_vars[] = {
    {COUNTER, INT32, offsetof(Model, counter), 1, READ_ONLY}, {X, FLOAT64, offsetof(Model, x), 1, START},
    {DER_X, FLOAT64, offsetof(Model, der_x), 1, READ_ONLY},   {SETTLED, INT32, offsetof(Model, settled), 1, READ_ONLY},
    {PERIOD, FLOAT64, offsetof(Model, period), 1, START},     {LAST, INT32, offsetof(Model, last), 1, START},
    {FIRST, FLOAT64, offsetof(Model, first), 1, START},
};
#define N_VARS (sizeof model_vars / sizeof model_vars[0])

static size_t model_count(const Model* m, unsigned vr) { (void)m, (void)vr; return 1; }
static void model_start(Model* m) {
  m->counter = 1, m->settled = 0, m->last = 10;
  m->x = 0.0, m->period = 1.0, m->first = -1.0;
}
static void model_initialize(Model* m, double t0) {
  m->next = m->first >= 0 ? m->first : t0 + m->period;
  m->pending = 0;
}
static size_t model_nx(const Model* m) { (void)m; return 1; }
static double* model_states(Model* m) { return &m->x; }
static void model_derivatives(Model* m, double t, double* dx) {
  (void)t;
  dx[0] = m->counter;
}
static size_t model_nz(const Model* m) { (void)m; return 0; }
static void model_indicators(Model* m, double t, double* z) { (void)m, (void)t, (void)z; }
static void model_outputs(Model* m, double t) {
  (void)t;
  m->der_x = m->counter;
}
/* The time event is due when the time has reached it (no tolerance: the importer must hand
 * in the event time itself). */
static void model_event(Model* m, double t, Event* e) {
  if (m->pending > 0) {
    if (--m->pending == 0) ++m->settled;
  } else if (t >= m->next) {
    ++m->counter;
    m->next += m->period;
    m->pending = 2;
  }
  e->again = m->pending > 0;
  e->terminate = m->pending == 0 && m->counter >= m->last;
  e->next_defined = true;
  e->next = m->next;
}

#include "test_fmu.h"
