// Pieces shared by the SUNDIALS-based integrator plugins (cvode, arkode): ownership of the
// SUNDIALS objects, the C callbacks that forward to an OdeSystem, and error capture.
// Header-only; the folder has no CMakeLists.txt and is not a plugin.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>

#include <nvector/nvector_serial.h>
#include <sundials/sundials_context.h>
#include <sundials/sundials_linearsolver.h>
#include <sundials/sundials_matrix.h>
#include <sundials/sundials_nonlinearsolver.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include <stride/stride.hpp>

namespace stride_sundials {

struct ContextDeleter {
  void operator()(SUNContext c) const { SUNContext_Free(&c); }
};
struct VectorDeleter {
  void operator()(N_Vector v) const { N_VDestroy(v); }
};
struct MatrixDeleter {
  void operator()(SUNMatrix m) const { SUNMatDestroy(m); }
};
struct LinearSolverDeleter {
  void operator()(SUNLinearSolver s) const { SUNLinSolFree(s); }
};
struct NonlinearSolverDeleter {
  void operator()(SUNNonlinearSolver s) const { SUNNonlinSolFree(s); }
};
using Context = std::unique_ptr<std::remove_pointer_t<SUNContext>, ContextDeleter>;
using Vector = std::unique_ptr<std::remove_pointer_t<N_Vector>, VectorDeleter>;
using Matrix = std::unique_ptr<std::remove_pointer_t<SUNMatrix>, MatrixDeleter>;
using LinearSolver = std::unique_ptr<std::remove_pointer_t<SUNLinearSolver>, LinearSolverDeleter>;
using NonlinearSolver =
    std::unique_ptr<std::remove_pointer_t<SUNNonlinearSolver>, NonlinearSolverDeleter>;

inline Context make_context() {
  SUNContext c = nullptr;
  if (SUNContext_Create(nullptr, &c) != 0 || !c) throw std::runtime_error("SUNContext_Create failed");
  return Context(c);
}

inline std::span<double> view(N_Vector v) {
  return {N_VGetArrayPointer(v), static_cast<std::size_t>(N_VGetLength(v))};
}

// What the C callbacks need: the system being stepped (set at every step, it may change
// between steps), the last SUNDIALS error message, and an exception thrown by the system,
// which cannot cross the C solver and is rethrown once the solver has returned.
struct Bridge {
  stride::OdeSystem* sys = nullptr;
  bool analytic = false;  // the system provides an analytic Jacobian
  long evaluations = 0;   // calls of sys->derivatives, difference-quotient Jacobians included
  std::exception_ptr error;
  char message[512] = {0};
  // Where SUNDIALS warnings go (the integrator's log_warning); none: kept in `message` only.
  void (*warning)(const void* owner, const char* text) = nullptr;
  const void* owner = nullptr;

  // Rethrows a pending exception from the system, else throws StepFailure with the message.
  [[noreturn]] void fail(const char* solver, double t, int flag) {
    if (error) {
      auto e = error;
      error = nullptr;
      std::rethrow_exception(e);
    }
    throw stride::StepFailure(std::string(solver) + " failed at t = " + stride::format_text("{}", t) + " s" +
                              " (flag " + std::to_string(flag) + "): " + message);
  }
};

// f(t, y) into ydot. A non-finite derivative is a recoverable failure (>0): the solver retries
// with a smaller step; an exception from the system is unrecoverable (<0).
inline int rhs(Bridge& b, double t, N_Vector y, N_Vector ydot) {
  try {
    auto out = view(ydot);
    ++b.evaluations;
    b.sys->derivatives(t, view(y), out);
    for (double d : out)
      if (!std::isfinite(d)) return 1;
    return 0;
  } catch (...) {
    b.error = std::current_exception();
    return -1;
  }
}

// df/dy into a dense SUNMatrix (column-major, leading dimension = rows): the system's analytic
// Jacobian when it has one (b.analytic), else forward differences in the solver's work vectors
// (SUNDIALS' own difference quotients allocate a vector at every Jacobian evaluation).
inline int jacobian(Bridge& b, double t, N_Vector y, N_Vector fy, SUNMatrix J, N_Vector tmp1,
                    N_Vector tmp2) {
  try {
    const auto n = static_cast<Eigen::Index>(SUNDenseMatrix_Rows(J));
    Eigen::Map<Eigen::MatrixXd> m(SUNDenseMatrix_Data(J), n, n);
    if (b.analytic && b.sys->jacobian(t, view(y), m)) return 0;
    stride::finite_difference_jacobian(*b.sys, t, view(y), view(fy), view(tmp1), view(tmp2), m);
    b.evaluations += n;
    return 0;
  } catch (...) {
    b.error = std::current_exception();
    return -1;
  }
}

// SUNDIALS error handler: keeps the message (fixed buffer, no allocation) instead of printing.
inline void capture_error(int error_code, const char* module, const char* function, char* msg, void* data) {
  auto* b = static_cast<Bridge*>(data);
  std::snprintf(b->message, sizeof b->message, "%s/%s: %s", module ? module : "",
                function ? function : "", msg ? msg : "");
  // Errors end the step with this message (Bridge::fail); warnings go to the run's log.
  if (error_code > 0 && b->warning) b->warning(b->owner, b->message);
}

// The absolute tolerance of every state (stride::absolute_tolerances: the system's nominal
// values or its own per-state tolerances), as SUNDIALS' vector of tolerances.
inline Vector tolerance_vector(const stride::OdeSystem& sys, double atol, std::size_t n, SUNContext ctx) {
  Vector v(N_VNew_Serial(static_cast<sunindextype>(n), ctx));
  stride::absolute_tolerances(sys, atol, view(v.get()));
  return v;
}

// The host's communication times are points of its grid (k·H), the solver's time its own sum
// of steps (0.05 + 0.01 = 0.060000000000000005): one time when they differ by round-off only.
inline bool same_time(double host, double solver) {
  return std::abs(host - solver) <= 8 * std::numeric_limits<double>::epsilon() * std::max(1.0, std::abs(host));
}

inline bool same_state(std::span<const double> a, N_Vector v) {
  auto b = view(v);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) return false;
  return true;
}

}  // namespace stride_sundials
