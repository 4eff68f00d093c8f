// CVODE's solver counters, shared by the cvode integrator plugin and the monolithic crane
// reference. Header-only.
#pragma once

#include <cvode/cvode.h>

namespace stride_sundials {

// Counters since CVODE's last (re)initialization (CVodeReInit zeroes them); += sums them over
// re-initializations, keeping the last order and step of the latest run that stepped.
struct CvodeCounters {
  long steps = 0, nonlinear = 0, error_fails = 0, jacobians = 0, conv_fails = 0;
  int last_order = 0;
  double last_step = 0.0;

  // `jacobians`: the memory has a linear solver (BDF with Newton) whose evaluations to count.
  static CvodeCounters read(void* mem, bool jacobians) {
    CvodeCounters c;
    CVodeGetNumSteps(mem, &c.steps);
    CVodeGetNumNonlinSolvIters(mem, &c.nonlinear);
    CVodeGetNumErrTestFails(mem, &c.error_fails);
    CVodeGetNumNonlinSolvConvFails(mem, &c.conv_fails);
    if (jacobians) CVodeGetNumJacEvals(mem, &c.jacobians);
    CVodeGetLastOrder(mem, &c.last_order);
    CVodeGetLastStep(mem, &c.last_step);
    return c;
  }
  CvodeCounters& operator+=(const CvodeCounters& o) {
    steps += o.steps;
    nonlinear += o.nonlinear;
    error_fails += o.error_fails;
    jacobians += o.jacobians;
    conv_fails += o.conv_fails;
    if (o.steps > 0) {
      last_order = o.last_order;
      last_step = o.last_step;
    }
    return *this;
  }
};

}  // namespace stride_sundials
