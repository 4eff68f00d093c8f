#include "run/macro_step_control.hpp"

#include <algorithm>
#include <cmath>

namespace stride::host {

void MacroStepControl::begin(const RunState& s, const CouplingConfig& c) {
  sc_ = c.step_control;
  H_ = c.macro_step;
  start_.assign(s.pairs.size(), {});
}

void MacroStepControl::before(const RunState& s) {
  for (std::size_t i = 0; i < s.pairs.size(); ++i) start_[i] = {*s.pairs[i].energy_a, *s.pairs[i].energy_b};
}

bool MacroStepControl::after(const RunState& s, double T, double Tn, bool may_reject, RowFile* log) {
  double err = 0.0;
  for (std::size_t i = 0; i < s.pairs.size(); ++i) {
    const double ea = *s.pairs[i].energy_a - start_[i][0], eb = *s.pairs[i].energy_b - start_[i][1];
    err = std::max(err,
                   std::abs(ea + eb) / (sc_.absolute_tolerance + sc_.tolerance * std::max(std::abs(ea), std::abs(eb))));
  }
  if (!std::isfinite(err)) err = std::numeric_limits<double>::max();
  const double taken = Tn - T;
  // (H_, not the step taken: T + H - T differs from H by round-off.)
  const bool redo = may_reject && err > 1 && H_ > sc_.min_step;
  if (log) {
    std::string& b = log->buffer();
    put_number(b, T);
    b += ',';
    put_number(b, taken);
    b += ',';
    put_number(b, err);
    b += redo ? ",0\n" : ",1\n";
    if (log->due()) log->commit();
  }
  if (redo) {
    ++rejected_;
    H_ = std::max(sc_.min_step, taken * std::clamp(sc_.safety / std::sqrt(err), 0.2, 0.9));
    return false;
  }
  ++steps_;
  smallest_ = std::min(smallest_, taken);
  largest_ = std::max(largest_, taken);
  largest_err_ = std::max(largest_err_, err);
  if (err > 1) ++over_;
  if (H_ <= sc_.min_step) ++at_min_;
  // PI control of ε ~ H^2 (Gustafsson's k_I = 0.3/2, k_P = 0.4/2).
  const double e = std::max(err, 1e-10);
  if (prev_ < 0) prev_ = e;
  const double factor = sc_.safety * std::pow(e, -0.15) * std::pow(prev_ / e, 0.2);
  prev_ = e;
  H_ = std::clamp(H_ * std::clamp(factor, 0.2, 2.0), sc_.min_step, sc_.max_step);
  return true;
}

json MacroStepControl::summary(double span) const {
  return {{"tolerance", sc_.tolerance},
          {"absolute_tolerance_J", sc_.absolute_tolerance},
          {"safety", sc_.safety},
          {"min_step", sc_.min_step},
          {"max_step", sc_.max_step},
          {"macro_steps", steps_},
          {"mean_step", steps_ ? span / double(steps_) : 0.0},
          {"smallest_step", steps_ ? smallest_ : 0.0},
          {"largest_step", largest_},
          {"steps_over_tolerance", over_},
          {"rejected_steps", rejected_},
          {"steps_at_min_step", at_min_},
          {"largest_error_ratio", largest_err_},
          {"per_macro_step", "steps.csv"}};
}

}  // namespace stride::host
