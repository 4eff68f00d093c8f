/* A bouncing ball with a lamp: dh/dt = v, dv/dt = -g; at h = 0 falling, v := -e v (a state
 * event on the indicator z = h) and the lamp lights for `flash` seconds: the model schedules a
 * time event only while the lamp is on, so the importer must ask for the next event time after
 * every event. `flashes` counts the lamp's time events, `bounces` the state events. h and v are
 * states whose start values may be set. Bounce times from h(0) = h0, v(0) = 0:
 * t1 = sqrt(2 h0 / g), t_{k+1} = t_k + 2 e^k v1 / g with v1 = sqrt(2 g h0). */
#include <float.h>

#include "test_model.h"

#define MODEL_TOKEN "{9d7e4c11-stride-ball}"
#define MODEL_CS_SUBSTEP 0.001

typedef struct {
  double x[2]; /* h, v */
  double der[2], g, e, flash, off;
  bool lamp;
  int32_t bounces, flashes;
} Model;

enum { H = 1, V = 2, DER_H = 3, DER_V = 4, G = 5, E = 6, FLASH = 7, LAMP = 8, BOUNCES = 9, FLASHES = 10 };
static const Var model_vars[] = {
    {H, FLOAT64, offsetof(Model, x[0]), 1, START},           {V, FLOAT64, offsetof(Model, x[1]), 1, START},
    {DER_H, FLOAT64, offsetof(Model, der[0]), 1, READ_ONLY}, {DER_V, FLOAT64, offsetof(Model, der[1]), 1, READ_ONLY},
    {G, FLOAT64, offsetof(Model, g), 1, START},              {E, FLOAT64, offsetof(Model, e), 1, START},
    {FLASH, FLOAT64, offsetof(Model, flash), 1, START},      {LAMP, BOOLEAN, offsetof(Model, lamp), 1, READ_ONLY},
    {BOUNCES, INT32, offsetof(Model, bounces), 1, READ_ONLY}, {FLASHES, INT32, offsetof(Model, flashes), 1, READ_ONLY},
};
#define N_VARS (sizeof model_vars / sizeof model_vars[0])

static size_t model_count(const Model* m, unsigned vr) { (void)m, (void)vr; return 1; }
static void model_start(Model* m) {
  m->x[0] = 1.0, m->x[1] = 0.0;
  m->g = 9.81, m->e = 0.8, m->flash = 0.1;
  m->lamp = false, m->bounces = 0, m->flashes = 0;
}
static void model_initialize(Model* m, double t0) { (void)m, (void)t0; }
static size_t model_nx(const Model* m) { (void)m; return 2; }
static double* model_states(Model* m) { return m->x; }
static void model_derivatives(Model* m, double t, double* dx) {
  (void)t;
  dx[0] = m->x[1];
  dx[1] = -m->g;
}
static size_t model_nz(const Model* m) { (void)m; return 1; }
/* The ball lying on the ground after a bounce is kept just above it, so that the indicator's
 * next change is the next impact. */
static void model_indicators(Model* m, double t, double* z) {
  (void)t;
  z[0] = m->x[0];
}
static void model_outputs(Model* m, double t) { model_derivatives(m, t, m->der); }
static void model_event(Model* m, double t, Event* e) {
  if (m->x[0] <= 0 && m->x[1] < 0) {
    m->x[0] = DBL_MIN;
    m->x[1] = -m->e * m->x[1];
    ++m->bounces;
    m->lamp = true;
    m->off = t + m->flash;
    e->states_changed = true;
  } else if (m->lamp && t >= m->off) {
    m->lamp = false;
    ++m->flashes;
  }
  e->next_defined = m->lamp;
  e->next = m->off;
}

#include "test_fmu.h"
