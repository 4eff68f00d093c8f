// Jacobi and Gauss–Seidel with the adaptive macro step (/coupling/step_control; Sadjina 2017):
// the energy residual a macro step adds to the paired power bonds sets the next one
// (run/macro_step_control.hpp).
//
//   T = start, H = the manifest's macro step
//   while T < target:
//     reject: hold results after T; save every subsystem
//     repeat:
//       Tn = T + H, but no sliver under min_step before target
//       note the energies of every bond pair
//       step every subsystem to Tn as Jacobi / Gauss–Seidel do (Master::advance_all);
//         reject (Jacobi only): nothing is pushed yet, output bounds are judged once accepted
//       ε = max over pairs |ΔE_a + ΔE_b| / (atol + rtol max(|ΔE_a|, |ΔE_b|))
//       if reject and ε > 1 and H > min_step:
//         H = max(min_step, H clamp(safety/√ε, 0.2, 0.9)); restore every subsystem; again
//       else: H from ε by PI control, within [H/5, 2H] and [min_step, max_step]; accept
//     reject: push every output; accept the results up to Tn; a bound crossed ends the run
//     T = Tn; energy residuals, observers
//
// Allocates at construction; with reject, save() may allocate (plugin snapshots).
#include <algorithm>

#include "run/coupling.hpp"
#include "run/macro_step_control.hpp"

namespace stride::host {
namespace {

class StepControlledCoupling final : public CouplingScheme {
 public:
  StepControlledCoupling(Master& m, bool sequential, bool reject, RowFile* log)
      : m_(m), sequential_(sequential), reject_(reject), log_(log), T_(m.coupling().start) {
    control_.begin(m.state(), m.coupling());
    if (reject_) {
      snapshots_.resize(m.state().nodes.size());
      renewed_.resize(m.state().nodes.size());
      m.defer_monitors();
    }
  }

  void advance(double target) override {
    while (T_ < target - m_.eps()) {
      const double Tn = reject_ ? rejecting_step(target) : macro_step(target);
      T_ = Tn;
      m_.reached(T_);
    }
  }

  void summarize(json& s) const override {
    s["step_control"] = control_.summary(m_.time_reached() - m_.coupling().start);
  }

 private:
  // One macro step, never repeated; returns its end.
  double macro_step(double target) {
    const double Tn = control_.next(T_, target);
    control_.before(m_.state());
    m_.advance_all(Tn, sequential_);
    control_.after(m_.state(), T_, Tn, false, log_);
    return Tn;
  }

  // One macro step from snapshots (Jacobi), repeated shorter while its residual is over the
  // tolerance. Inputs come from the extrapolators, which get the outputs once a step is
  // accepted; rows of results.csv and output bounds are taken from the accepted step only.
  double rejecting_step(double target) {
    RunState& s = m_.state();
    m_.hold_after(T_);
    for (auto& n : s.nodes) {
      m_.save(n, snapshots_[static_cast<std::size_t>(n.index)]);
      renewed_[static_cast<std::size_t>(n.index)] = n.inputs_renewed;
    }
    double Tn = T_;
    for (;;) {
      m_.forget_violation();
      Tn = control_.next(T_, target);
      control_.before(s);
      for (NodeState* n : s.order) m_.advance_to(*n, Tn);
      if (control_.after(s, T_, Tn, true, log_)) break;
      for (auto& n : s.nodes) {
        m_.restore(n, snapshots_[static_cast<std::size_t>(n.index)]);
        n.inputs_renewed = renewed_[static_cast<std::size_t>(n.index)];
      }
    }
    for (NodeState* n : s.order) m_.push_outputs(*n);
    m_.accept(Tn);
    m_.throw_violation();
    return Tn;
  }

  Master& m_;
  const bool sequential_, reject_;
  RowFile* log_;  // steps.csv
  double T_;
  MacroStepControl control_;
  std::vector<Master::Snapshot> snapshots_;  // reject: every subsystem at T
  std::vector<char> renewed_;                // reject: whose inputs were renewed at T
};

}  // namespace

std::unique_ptr<CouplingScheme> make_step_controlled_coupling(Master& master, bool sequential, bool reject,
                                                              RowFile* steps_log) {
  return std::make_unique<StepControlledCoupling>(master, sequential, reject, steps_log);
}

}  // namespace stride::host
