// The monolithic crane of Peiret 2018 Sect. 4.1 / 4.1.1 (Eq. 42, BENCHMARKS.md §1-2) solved by
// SUNDIALS CVODE as a numerics user writes it: one CVode loop, BDF, dense direct linear
// solver with CVODE's own difference-quotient Jacobian, the solver stepping past output
// times and interpolating there (CV_NORMAL). The same equations (plugins/common/crane.hpp,
// hydraulics.hpp), initial equilibrium (Eq. 41), tolerances (rtol, atol × 1 rad, 1 rad/s,
// p_P) and valve-kink stops as the crane_monolithic plugin's cvode_bdf, so that
// manifests/crane*_monolithic_cvode.json can be timed against it.
//
//   crane_cvode [--actuators 1|2] [--rtol R] [--atol A] [--rows DT] [--end T] [--repeat N]
//               [--csv FILE]
//
// --rows DT: an output row every DT seconds (the plugin's outputs, formatted as results.csv
// formats them, kept in memory and written to --csv after the timing); 0 (default): stepping
// alone, rows at the start and the end only. Prints CVODE's counters, the final s
// and the median and minimum wall time of N solves. Not a test.
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <cvode/cvode.h>
#include <nvector/nvector_serial.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "common/crane.hpp"
#include "common/hydraulics.hpp"

namespace {

namespace cr = stride::crane;
namespace hy = stride::hydraulics;

// Eq. 42 in independent coordinates z = [θ1, θ2, θ̇1, θ̇2, p1_k, p2_k].
struct Crane {
  cr::Geometry geo;
  int na = 1;
  hy::Cylinder cyl[2];
  hy::ValveLaw valve[2];
  long rhs_evaluations = 0;

  void rhs(double t, const double* z, double* f) {
    ++rhs_evaluations;
    const Eigen::Vector2d q(z[0], z[1]), v(z[2], z[3]);
    const cr::Actuators a = cr::actuators(geo, q, v);
    Eigen::Vector2d gen = cr::gravity_forces(geo, q) - cr::coriolis(geo, q, v);
    for (int k = 0; k < na; ++k) {
      const double p1 = z[4 + 2 * k], p2 = z[5 + 2 * k];
      const auto r = cyl[k].rates(a.s[k], a.s_dot[k], valve[k](t), p1, p2);
      f[4 + 2 * k] = r.dp1;
      f[5 + 2 * k] = r.dp2;
      gen += a.A.row(k).transpose() * cyl[k].force(p1, p2, a.s_dot[k]);
    }
    f[0] = v[0];
    f[1] = v[1];
    const Eigen::Vector2d acc = cr::mass_matrix(geo, q).llt().solve(gen);
    f[2] = acc[0];
    f[3] = acc[1];
  }

  // Table 1 at rest, each cylinder at its static equilibrium (Eq. 41, Table 3); z0 of size 4 + 2 na.
  void initial_state(double t0, double* z) {
    const Eigen::Vector2d q0(geo.theta1_0, geo.theta2_0);
    const cr::Actuators a = cr::actuators(geo, q0, Eigen::Vector2d::Zero());
    const Eigen::Vector2d f_eq = cr::equilibrium_forces(geo, q0, na);
    z[0] = q0[0];
    z[1] = q0[1];
    z[2] = z[3] = 0.0;
    for (int k = 0; k < na; ++k) {
      cyl[k].s0 = a.s[k];
      const hy::Equilibrium e = hy::solve_equilibrium(cyl[k], f_eq[k]);
      valve[k].kappa0 = e.kappa - valve[k].offset(t0);
      z[4 + 2 * k] = e.p1;
      z[5 + 2 * k] = e.p2;
    }
  }

  // The crane_monolithic plugin's output row at (t, z): s, s_dot, p1, p2, f_h, kappa of each
  // actuator, x_R, y_R, x_R_dot, T + V.
  void outputs(double t, const double* z, std::vector<double>& y) const {
    const Eigen::Vector2d q(z[0], z[1]), v(z[2], z[3]);
    const cr::Actuators a = cr::actuators(geo, q, v);
    y.clear();
    for (int k = 0; k < na; ++k) y.push_back(a.s[k]);
    for (int k = 0; k < na; ++k) y.push_back(a.s_dot[k]);
    for (int k = 0; k < na; ++k) y.push_back(z[4 + 2 * k]);
    for (int k = 0; k < na; ++k) y.push_back(z[5 + 2 * k]);
    for (int k = 0; k < na; ++k) y.push_back(cyl[k].force(z[4 + 2 * k], z[5 + 2 * k], a.s_dot[k]));
    for (int k = 0; k < na; ++k) y.push_back(valve[k](t));
    const Eigen::Vector2d R = cr::point_R(geo, q), Rd = cr::velocity_R(geo, q, v);
    y.push_back(R[0]);
    y.push_back(R[1]);
    y.push_back(Rd[0]);
    y.push_back(cr::kinetic_energy(geo, q, v) + cr::potential_energy(geo, q));
  }
};

// As results.csv: 12 significant digits.
void put_number(std::string& out, double v) {
  char num[32];
  out.append(num, static_cast<std::size_t>(std::to_chars(num, num + sizeof num, v, std::chars_format::general, 12).ptr - num));
}

int cv_rhs(double t, N_Vector y, N_Vector ydot, void* data) {
  static_cast<Crane*>(data)->rhs(t, N_VGetArrayPointer(y), N_VGetArrayPointer(ydot));
  for (sunindextype i = 0; i < N_VGetLength(ydot); ++i)
    if (!std::isfinite(N_VGetArrayPointer(ydot)[i])) return 1;
  return 0;
}

void check(int flag, const char* what) {
  if (flag < 0) throw std::runtime_error(std::string(what) + " failed, flag " + std::to_string(flag));
}

struct Result {
  long steps = 0, rhs = 0, jacobians = 0, error_fails = 0;
  double seconds = 0.0;
  std::string csv;      // the output rows as results.csv has them
  std::vector<double> last;  // the last row's outputs
};

// One solve from t0 = 0 to `end`, rows every `dt` (0: at the end only).
Result solve(int na, double rtol, double atol, double dt, double end) {
  Crane m;
  m.na = na;
  m.valve[0].offset = hy::PiecewiseLinear({2.0, 2.001, 6.0, 6.002}, {0.0, -0.01, -0.01, 0.02}, "valve 1");
  m.valve[1].offset = hy::PiecewiseLinear({0.0, 2.0}, {0.0, -0.005}, "valve 2");
  std::vector<double> kinks = {2.0, 2.001, 6.0, 6.002};
  if (na == 2) kinks.insert(kinks.begin(), 0.0);
  const int n = 4 + 2 * na;
  const long nrows = dt > 0.0 ? std::lround(end / dt) : 1;
  Result r;
  r.csv.reserve(static_cast<std::size_t>(nrows + 1) * 256);

  SUNContext ctx = nullptr;
  check(SUNContext_Create(nullptr, &ctx), "SUNContext_Create");
  N_Vector y = N_VNew_Serial(n, ctx), abstol = N_VNew_Serial(n, ctx);
  m.initial_state(0.0, N_VGetArrayPointer(y));
  for (int i = 0; i < n; ++i) N_VGetArrayPointer(abstol)[i] = atol * (i < 4 ? 1.0 : m.cyl[0].p_P);
  SUNMatrix A = SUNDenseMatrix(n, n, ctx);
  SUNLinearSolver ls = SUNLinSol_Dense(y, A, ctx);

  const auto start = std::chrono::steady_clock::now();
  void* mem = CVodeCreate(CV_BDF, ctx);
  check(CVodeInit(mem, cv_rhs, 0.0, y), "CVodeInit");
  check(CVodeSetUserData(mem, &m), "CVodeSetUserData");
  check(CVodeSVtolerances(mem, rtol, abstol), "CVodeSVtolerances");
  check(CVodeSetMaxNumSteps(mem, 100000), "CVodeSetMaxNumSteps");
  check(CVodeSetLinearSolver(mem, ls, A), "CVodeSetLinearSolver");
  auto add_counters = [&] {
    long v = 0;
    CVodeGetNumSteps(mem, &v), r.steps += v;
    CVodeGetNumJacEvals(mem, &v), r.jacobians += v;
    CVodeGetNumErrTestFails(mem, &v), r.error_fails += v;
  };
  r.last.reserve(16);
  auto row = [&](double t) {
    m.outputs(t, N_VGetArrayPointer(y), r.last);
    put_number(r.csv, t);
    for (double v : r.last) {
      r.csv += ',';
      put_number(r.csv, v);
    }
    r.csv += '\n';
  };
  row(0.0);
  std::size_t next_kink = 0;
  while (next_kink < kinks.size() && kinks[next_kink] <= 0.0) ++next_kink;
  double t = 0.0;
  for (long i = 1; i <= nrows; ++i) {
    const double tout = dt > 0.0 ? std::min(end, static_cast<double>(i) * dt) : end;
    // Each valve-table node up to tout: end a step there, restart at order 1 (as the plugin).
    while (next_kink < kinks.size() && kinks[next_kink] <= tout) {
      const double k = kinks[next_kink++];
      check(CVodeSetStopTime(mem, k), "CVodeSetStopTime");
      check(CVode(mem, k, y, &t, CV_NORMAL), "CVode");
      add_counters();
      check(CVodeReInit(mem, k, y), "CVodeReInit");
    }
    if (t < tout) {
      check(CVodeSetStopTime(mem, next_kink < kinks.size() ? kinks[next_kink] : end), "CVodeSetStopTime");
      check(CVode(mem, tout, y, &t, CV_NORMAL), "CVode");
    }
    row(tout);
  }
  add_counters();
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.rhs = m.rhs_evaluations;
  CVodeFree(&mem);
  SUNLinSolFree(ls);
  SUNMatDestroy(A);
  N_VDestroy(abstol);
  N_VDestroy(y);
  SUNContext_Free(&ctx);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int na = 1, repeat = 7;
  double rtol = 1e-3, atol = -1.0, dt = 0.0, end = 10.0;
  const char* csv = nullptr;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has = i + 1 < argc;
    if (a == "--actuators" && has) na = std::atoi(argv[++i]);
    else if (a == "--rtol" && has) rtol = std::atof(argv[++i]);
    else if (a == "--atol" && has) atol = std::atof(argv[++i]);
    else if (a == "--rows" && has) dt = std::atof(argv[++i]);
    else if (a == "--end" && has) end = std::atof(argv[++i]);
    else if (a == "--repeat" && has) repeat = std::atoi(argv[++i]);
    else if (a == "--csv" && has) csv = argv[++i];
    else {
      std::fprintf(stderr, "usage: crane_cvode [--actuators 1|2] [--rtol R] [--atol A (default R)] [--rows DT] [--end T] [--repeat N] [--csv FILE]\n");
      return 2;
    }
  }
  if ((na != 1 && na != 2) || !(rtol > 0.0) || !(end > 0.0) || dt < 0.0 || repeat < 1) {
    std::fprintf(stderr, "crane_cvode: need --actuators 1 or 2, rtol > 0, end > 0, rows >= 0, repeat >= 1\n");
    return 2;
  }
  if (atol < 0.0) atol = rtol;
  std::vector<double> wall;
  Result r;
  try {
    for (int k = 0; k < repeat; ++k) {
      r = solve(na, rtol, atol, dt, end);
      wall.push_back(r.seconds);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "crane_cvode: %s\n", e.what());
    return 1;
  }
  std::sort(wall.begin(), wall.end());
  std::printf("crane_cvode actuators %d rtol %g atol %g rows %g end %g\n", na, rtol, atol, dt, end);
  std::printf("steps %ld rhs_evaluations %ld jacobian_evaluations %ld error_test_failures %ld\n", r.steps, r.rhs,
              r.jacobians, r.error_fails);
  std::printf("s(end)");
  for (int k = 0; k < na; ++k) std::printf(" %.12g", r.last[static_cast<std::size_t>(k)]);
  std::printf("\nwall ms: median %.3f min %.3f of %d\n", 1e3 * wall[wall.size() / 2], 1e3 * wall.front(), repeat);
  if (csv) {
    FILE* f = std::fopen(csv, "w");
    if (!f) {
      std::fprintf(stderr, "crane_cvode: cannot write %s: %s\n", csv, std::strerror(errno));
      return 1;
    }
    std::string header = "time";
    for (const char* port : {"s", "s_dot", "p1", "p2", "f_h", "kappa"})
      for (int k = 1; k <= na; ++k) header += std::string(",") + port + (na == 2 ? "_" + std::to_string(k) : "");
    std::fprintf(f, "%s,x_R,y_R,x_R_dot,energy\n", header.c_str());
    std::fputs(r.csv.c_str(), f);
    std::fclose(f);
  }
  return 0;
}
