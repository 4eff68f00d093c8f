/* Co-simulation stepping of the example FMUs: from t to t + h in the fewest equal RK4 substeps
 * of at most r[CS_SUBSTEP_VR] (1 ms when not positive), the inputs held. Uses N_STATES,
 * state_vr, der_vr and model_derivatives of the including model. */
#include <math.h>

static void rk4_substeps(double* r, double t, double h) {
  const double hmax = r[CS_SUBSTEP_VR] > 0 ? r[CS_SUBSTEP_VR] : 1e-3;
  const int n = (int)ceil(h / hmax - 1e-9);
  const double dt = h / n;
  static const double a[4] = {0.0, 0.5, 0.5, 1.0};
  for (int step = 0; step < n; ++step, t += dt) {
    double x0[N_STATES], k[4][N_STATES];
    for (int i = 0; i < N_STATES; ++i) x0[i] = r[state_vr[i]];
    for (int s = 0; s < 4; ++s) {
      for (int i = 0; i < N_STATES; ++i) r[state_vr[i]] = x0[i] + (s ? a[s] * dt * k[s - 1][i] : 0.0);
      model_derivatives(r, t + a[s] * dt);
      for (int i = 0; i < N_STATES; ++i) k[s][i] = r[der_vr[i]];
    }
    for (int i = 0; i < N_STATES; ++i) r[state_vr[i]] = x0[i] + dt / 6.0 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
  }
}
