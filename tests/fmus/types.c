/* Every variable type of the version, through: for each numeric type T an array parameter p_T
 * and input u_T of two elements, with outputs q_T = p_T (no feedthrough) and y_T = u_T (direct
 * feedthrough); String (and FMI 3 Binary) scalars the same way. Two instances connected
 * crosswise (a.q_T -> b.u_T, b.q_T -> a.u_T) give y_T = the other's p_T exactly, which checks
 * every type's way into the FMU and out of it. A String s_t (FMI 3 also a Binary b_t) changes
 * with time: "tick k, "q"<newline>end" (bytes k, 0, '"', '\n', ',', 255) with k = floor(4 t), the
 * text a CSV writer must quote. FMI 3 types: Float64, Float32, Int8, UInt8,
 * Int16, UInt16, Int32, UInt32, Int64, UInt64, Boolean, Enumeration (Int64); FMI 2: Real,
 * Integer, Boolean, Enumeration (Integer), String. */
#include "test_model.h"

#include <stdio.h>

#define MODEL_TOKEN "{9d7e4c11-stride-types}"
#define MODEL_CS_SUBSTEP 0.01

/* One numeric type: parameter, its copy, input, its copy. */
#define ROLES(C, name) C p_##name[2], q_##name[2], u_##name[2], y_##name[2];
typedef struct {
  ROLES(double, f64)
  ROLES(float, f32)
  ROLES(int8_t, i8)
  ROLES(uint8_t, u8)
  ROLES(int16_t, i16)
  ROLES(uint16_t, u16)
  ROLES(int32_t, i32)
  ROLES(uint32_t, u32)
  ROLES(int64_t, i64)
  ROLES(uint64_t, u64)
  ROLES(bool, bool)
  ROLES(int64_t, enum64)
  ROLES(int32_t, enum32)
  char *s_p, *s_q, *s_u, *s_y, *s_t;
  Bin b_p, b_q, b_u, b_y, b_t;
} Model;

/* Value references: 100 + 10 k + role (0 p, 1 q, 2 u, 3 y) for numeric type k; 300.. Strings,
 * 310.. Binaries. FMI 2 variables are scalars (element 0). */
#define N (FMI_VERSION == 3 ? 2 : 1)
#define VARS(k, TYPE, name)                                                                       \
  {100 + 10 * k, TYPE, offsetof(Model, p_##name), N, START},                                    \
      {101 + 10 * k, TYPE, offsetof(Model, q_##name), N, READ_ONLY},                            \
      {102 + 10 * k, TYPE, offsetof(Model, u_##name), N, INPUT}, {103 + 10 * k, TYPE, offsetof(Model, y_##name), N, READ_ONLY}
static const Var model_vars[] = {
    VARS(0, FLOAT64, f64),
    VARS(6, INT32, i32),
    VARS(10, BOOLEAN, bool),
#if FMI_VERSION == 3
    VARS(1, FLOAT32, f32), VARS(2, INT8, i8),      VARS(3, UINT8, u8),   VARS(4, INT16, i16), VARS(5, UINT16, u16),
    VARS(7, UINT32, u32),  VARS(8, INT64, i64),    VARS(9, UINT64, u64), VARS(11, INT64, enum64),
    {310, BINARY, offsetof(Model, b_p), 1, START}, {311, BINARY, offsetof(Model, b_q), 1, READ_ONLY},
    {312, BINARY, offsetof(Model, b_u), 1, INPUT}, {313, BINARY, offsetof(Model, b_y), 1, READ_ONLY},
    {314, BINARY, offsetof(Model, b_t), 1, READ_ONLY},
#else
    VARS(11, INT32, enum32),
#endif
    {300, STRING, offsetof(Model, s_p), 1, START}, {301, STRING, offsetof(Model, s_q), 1, READ_ONLY},
    {302, STRING, offsetof(Model, s_u), 1, INPUT}, {303, STRING, offsetof(Model, s_y), 1, READ_ONLY},
    {304, STRING, offsetof(Model, s_t), 1, READ_ONLY},
};
#define N_VARS (sizeof model_vars / sizeof model_vars[0])

static size_t model_count(const Model* m, unsigned vr) { (void)m, (void)vr; return 1; }
#if FMI_VERSION == 3
static Bin bin_of(const char* bytes, size_t n) {
  Bin b = {(unsigned char*)malloc(n ? n : 1), n};
  if (b.data && n) memcpy(b.data, bytes, n);
  return b;
}
#endif
/* The start values of modelDescription.xml (FMI 2: the first element). */
#define SET2(name, a, b) m->p_##name[0] = a, m->p_##name[1] = b
static void model_start(Model* m) {
  memset(m, 0, sizeof *m);
  SET2(f64, 1.5, -2.25), SET2(f32, 0.5f, -0.25f), SET2(i8, -100, 7), SET2(u8, 200, 3), SET2(i16, -30000, 5);
  SET2(u16, 60000, 9), SET2(i32, -2000000000, 11), SET2(u32, 4000000000u, 13), SET2(i64, -9007199254740992LL, 15);
  SET2(u64, 9007199254740992ULL, 17), SET2(bool, true, false), SET2(enum64, 2, 3), SET2(enum32, 2, 3);
  m->u_enum64[0] = m->u_enum64[1] = 1, m->u_enum32[0] = 1;
  m->s_p = fmu_strdup("start");
  m->s_q = fmu_strdup("");
  m->s_u = fmu_strdup("");
  m->s_y = fmu_strdup("");
  m->s_t = fmu_strdup("");
#if FMI_VERSION == 3  /* Binary variables exist in FMI 3 only (free_strings frees the declared ones) */
  m->b_p = bin_of("\x01\x02", 2);
  m->b_q = bin_of("", 0);
  m->b_u = bin_of("", 0);
  m->b_y = bin_of("", 0);
  m->b_t = bin_of("", 0);
#endif
}
static void model_initialize(Model* m, double t0) { (void)m, (void)t0; }
static size_t model_nx(const Model* m) { (void)m; return 0; }
static double* model_states(Model* m) { (void)m; return NULL; }
static void model_derivatives(Model* m, double t, double* dx) { (void)m, (void)t, (void)dx; }
static size_t model_nz(const Model* m) { (void)m; return 0; }
static void model_indicators(Model* m, double t, double* z) { (void)m, (void)t, (void)z; }
#if FMI_VERSION == 3
static void copy_bin(Bin* to, const Bin* from) {
  free(to->data);
  *to = bin_of((const char*)from->data, from->size);
}
#endif
#define COPY(name) memcpy(m->q_##name, m->p_##name, sizeof m->p_##name), memcpy(m->y_##name, m->u_##name, sizeof m->u_##name)
static void model_outputs(Model* m, double t) {
  COPY(f64), COPY(f32), COPY(i8), COPY(u8), COPY(i16), COPY(u16), COPY(i32), COPY(u32), COPY(i64), COPY(u64), COPY(bool),
      COPY(enum64), COPY(enum32);
  fmu_set_text(&m->s_q, m->s_p);
  fmu_set_text(&m->s_y, m->s_u);
  const int k = (int)(4 * t + 1e-9);
  char text[64];
  snprintf(text, sizeof text, "tick %d, \"q\"\nend", k);
  fmu_set_text(&m->s_t, text);
#if FMI_VERSION == 3
  copy_bin(&m->b_q, &m->b_p);
  copy_bin(&m->b_y, &m->b_u);
  const char bytes[6] = {(char)k, 0, '"', '\n', ',', (char)255};
  free(m->b_t.data);
  m->b_t = bin_of(bytes, 6);
#endif
}
static void model_event(Model* m, double t, Event* e) { (void)m, (void)t, (void)e; }

#include "test_fmu.h"
