/* Arrays of String and Binary values, n elements each (a structural parameter, at most 8):
 * outputs s_a and b_a that change with time, inputs s_u and b_u copied to the outputs s_y and
 * b_y (direct feedthrough), and a scalar String input s_v. With k = floor(4 t), element j of
 * s_a is empty when (k + j) mod 3 = 0, else "k<k>, \"e<j>\"<newline>" (a comma, quotes and a
 * line break, which a CSV writer must quote); element j of b_a is the first (k + j) mod 4 of the
 * bytes k, 0, j, '"', ',', '\n' (empty ones, and a NUL byte from two bytes on). FMI 3 only. */
#include "test_model.h"

#include <stdio.h>

#define MODEL_TOKEN "{9d7e4c11-stride-texts}"
#define MODEL_CS_SUBSTEP 0.01
#define MAX 8

typedef struct {
  uint64_t n;
  char *s_a[MAX], *s_u[MAX], *s_y[MAX], *s_v;
  Bin b_a[MAX], b_u[MAX], b_y[MAX];
} Model;

enum { N = 1, S_A = 10, B_A = 11, S_U = 12, B_U = 13, S_Y = 14, B_Y = 15, S_V = 16 };
static const Var model_vars[] = {
    {N, UINT64, offsetof(Model, n), 1, STRUCTURAL},      {S_A, STRING, offsetof(Model, s_a), 0, READ_ONLY},
    {B_A, BINARY, offsetof(Model, b_a), 0, READ_ONLY},   {S_U, STRING, offsetof(Model, s_u), 0, INPUT},
    {B_U, BINARY, offsetof(Model, b_u), 0, INPUT},       {S_Y, STRING, offsetof(Model, s_y), 0, READ_ONLY},
    {B_Y, BINARY, offsetof(Model, b_y), 0, READ_ONLY},   {S_V, STRING, offsetof(Model, s_v), 1, INPUT},
};
#define N_VARS (sizeof model_vars / sizeof model_vars[0])

static size_t model_count(const Model* m, unsigned vr) {
  (void)vr;
  return m->n > MAX ? MAX : m->n;
}
/* Unset elements are NULL (read as empty); the frame frees the first n of each. */
static void model_start(Model* m) {
  memset(m, 0, sizeof *m);
  m->n = 3;
}
static void model_initialize(Model* m, double t0) { (void)m, (void)t0; }
static size_t model_nx(const Model* m) { (void)m; return 0; }
static double* model_states(Model* m) { (void)m; return NULL; }
static void model_derivatives(Model* m, double t, double* dx) { (void)m, (void)t, (void)dx; }
static size_t model_nz(const Model* m) { (void)m; return 0; }
static void model_indicators(Model* m, double t, double* z) { (void)m, (void)t, (void)z; }
static void set_bin(Bin* to, const unsigned char* from, size_t size) {
  free(to->data);
  to->data = (unsigned char*)malloc(size ? size : 1);
  if (to->data && size) memcpy(to->data, from, size);
  to->size = to->data ? size : 0;
}
static void model_outputs(Model* m, double t) {
  const int k = (int)(4 * t + 1e-9);
  const size_t n = model_count(m, S_A);
  for (size_t j = 0; j < n; ++j) {
    char text[64] = "";
    if ((k + (int)j) % 3) snprintf(text, sizeof text, "k%d, \"e%d\"\n", k, (int)j);
    fmu_set_text(&m->s_a[j], text);
    const unsigned char bytes[6] = {(unsigned char)k, 0, (unsigned char)j, '"', ',', '\n'};
    set_bin(&m->b_a[j], bytes, (size_t)((k + (int)j) % 4));
    fmu_set_text(&m->s_y[j], m->s_u[j] ? m->s_u[j] : "");
    set_bin(&m->b_y[j], m->b_u[j].data, m->b_u[j].data ? m->b_u[j].size : 0);
  }
}
static void model_event(Model* m, double t, Event* e) { (void)m, (void)t, (void)e; }

#include "test_fmu.h"
