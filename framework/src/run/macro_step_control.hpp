// The adaptive macro step (StepControlConfig, manifest /coupling/step_control): the energy
// residual each macro step adds to the paired power bonds sets the next macro step. Internal
// to the host.
//
// Call order: begin() -> { next() -> before() -> [macro step] -> after() }*, from one thread.
// Allocates in begin() only.
#pragma once

#include <array>
#include <limits>
#include <vector>

#include "run/row_file.hpp"
#include "run/run_state.hpp"

namespace stride::host {

class MacroStepControl {
 public:
  void begin(const RunState& s, const CouplingConfig& c);
  // The end of the macro step from T: H, but no sliver under min_step left before `end`.
  double next(double T, double end) const {
    double Tn = T + H_;
    if (end - Tn < sc_.min_step) Tn = end - T <= sc_.max_step ? end : T + 0.5 * (end - T);
    return Tn;
  }
  // Notes each paired bond's energies at the start of the macro step.
  void before(const RunState& s);
  // After the macro step from T to Tn: false when it is to be repeated (may_reject, ε > 1 and
  // the step above min_step), with the shorter step set. Appends a row to `log` (steps.csv)
  // when given; throws Stop when the disk refuses it.
  bool after(const RunState& s, double T, double Tn, bool may_reject, RowFile* log);
  // The summary.json entry "step_control"; `span` is the time the run covered.
  json summary(double span) const;

 private:
  StepControlConfig sc_;
  double H_ = 0.0;
  double prev_ = -1.0;
  std::vector<std::array<double, 2>> start_;
  long steps_ = 0, over_ = 0, at_min_ = 0, rejected_ = 0;
  double smallest_ = std::numeric_limits<double>::infinity(), largest_ = 0.0, largest_err_ = 0.0;
};

}  // namespace stride::host
