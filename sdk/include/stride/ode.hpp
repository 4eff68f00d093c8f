// Continuous-time subsystems in first-order form, and the integrators that step them.
#pragma once

#include "stride/plugin.hpp"

namespace stride {

// What an integrator may know about one state element (OdeSystem::states()).
struct StateSpec {
  std::string name;
  std::string unit;    // SI (UDUNITS-2 syntax), "1" for dimensionless; checked at load
  double nominal = 1;  // a typical magnitude (> 0): tolerances of that state scale with it
  // The absolute error tolerated in this state, in its unit; NaN: the integrator's own
  // absolute tolerance (for a state of magnitude 1) times `nominal`.
  double absolute_tolerance = std::numeric_limits<double>::quiet_NaN();
};

// dx/dt = f(t, x, u). Inputs u are read through inputs().at(port, t) inside derivatives().
// The state may declare a mechanical structure x = [q (n), v (n), rest]: dq/dt = v.
// Semi-implicit (symplectic) Euler uses it to update q with the new v (Eq. 38-40).
class OdeSystem : public Component {
 public:
  virtual std::size_t state_size() const = 0;
  // n in x = [q, v, rest] with dq/dt = v; 0 when the system has no such structure.
  virtual std::size_t second_order_size() const { return 0; }
  // Name, unit and scale of each state element: empty (no information) or state_size()
  // entries, fixed after construction. Adaptive integrators scale their error test with it:
  // a state in Pa (1e7) and one in m (0.1) cannot share one absolute tolerance.
  virtual std::vector<StateSpec> states() const { return {}; }
  virtual void initial_state(double t0, std::span<double> x) = 0;
  // Consistent initialization from inputs at t0 (see Subsystem::equilibrate); may change x.
  virtual void equilibrate(double /*t0*/, std::span<double> /*x*/) {}
  virtual void derivatives(double t, std::span<const double> x, std::span<double> dxdt) = 0;
  // Analytic Jacobian df/dx (column-major, state_size^2); return false to let the integrator
  // use finite differences.
  virtual bool jacobian(double /*t*/, std::span<const double> /*x*/, Eigen::Ref<Eigen::MatrixXd> /*J*/) {
    return false;
  }
  // All outputs at (t, x), concatenated in port declaration order.
  virtual void outputs(double t, std::span<const double> x, std::span<double> y) = 0;
  // Stored energy at (t, x) in J; NaN when not modelled.
  virtual double energy_at(double /*t*/, std::span<const double> /*x*/) const {
    return std::numeric_limits<double>::quiet_NaN();
  }
  // Extra summary entries.
  virtual json report() const { return json::object(); }

  // Events the system causes itself (a gear shift, an intake stroke, a valve that switches):
  // event_indicators() gives z(t, x), continuous in (t, x) while the discrete state stays
  // the same; an event happens where an indicator changes domain between z > 0 and z <= 0
  // (the rule of FMI's event indicators). The host locates the first one inside a step by
  // bisection (re-integrating from the step's start), stops the integration there, calls
  // handle_event(t, x) — which updates the discrete state (gear, latched values) and may
  // change x — restarts the integrator (reset()) at the event and integrates the rest of the
  // step, so that no integrator step spans a discontinuity of f. After handle_event() the
  // indicators are read again: an event that leaves its indicator where it was does not
  // repeat. A system with events that also saves its state (below) saves its discrete state.
  virtual std::size_t event_indicator_count() const { return 0; }
  virtual void event_indicators(double /*t*/, std::span<const double> /*x*/, std::span<double> /*z*/) {}
  virtual void handle_event(double /*t*/, std::span<double> /*x*/) {}

  // Optional capability, for iterative coupling (see Subsystem::save_state): the host saves
  // and restores x and restarts the integrator (reset()) at the restored time itself; the
  // system saves only what steps change beyond x (a latch, a counter that enters the
  // derivatives). A system whose derivatives and outputs depend on (t, x, inputs) and on
  // what initial_state()/equilibrate() set returns true and keeps the empty save/restore.
  virtual bool can_save_state() const { return false; }
  virtual void save_state(std::unique_ptr<SavedState>& /*slot*/) {}
  virtual void restore_state(const SavedState& /*state*/) {}
};

// Absolute tolerance of each state: StateSpec::absolute_tolerance where given, else atol times
// its nominal value (atol alone when the system declares no states).
inline void absolute_tolerances(const OdeSystem& sys, double atol, std::span<double> out) {
  const auto s = sys.states();
  for (std::size_t i = 0; i < out.size(); ++i) {
    out[i] = atol;
    if (i < s.size()) out[i] = std::isnan(s[i].absolute_tolerance) ? atol * s[i].nominal : s[i].absolute_tolerance;
  }
}

// Steps an OdeSystem. Call order:
//   reset(sys, t0, x0) -> { [input_discontinuity(t)] -> step(sys, t, h, x) }*
// where a later reset() restarts it at any (t, x): after an event, or when the host repeats a
// macro step (iterative coupling) and has put x back.
// reset() allocates all work memory and may evaluate the system (its inputs are available,
// after the host's consistent initialization); step() must not allocate.
// t and h: t is the time step() returned last (or t0); h is the subsystem's step from the
// manifest, or the remainder up to a communication point or the end of the run. The host keeps
// t on the subsystem's grid (t0 + k h_step, without accumulated round-off) and hands in the
// manifest's h exactly when the step ends on that grid.
// step() evaluates the system (and its inputs) only in [t, t + h]; one without inputs also later.
// Between input_discontinuity() calls the inputs are smooth in t, so a method may carry values
// from one step into the next (first-same-as-last, multistep history); across one it must not.
// One integrator object serves one system; the host calls it from one thread at a time.
class Integrator : public LogSource {
 public:
  virtual void reset(OdeSystem& sys, double t0, std::span<const double> x0) = 0;
  // Advances x from t by at most h; returns the time reached (t < t_new <= t + h).
  // Fixed-step methods take exactly h. Throws StepFailure when the step cannot be completed.
  virtual double step(OdeSystem& sys, double t, double h, std::span<double> x) = 0;
  // The inputs of the system may jump at t, the time of the next step (see
  // Subsystem::input_discontinuity). Must not allocate.
  virtual void input_discontinuity(double /*t*/) {}
  // steps, rhs_evaluations, newton_iterations, rejected_steps, ...
  virtual json statistics() const { return json::object(); }
};

// Forward-difference Jacobian of sys.derivatives at (t, x); f0 = f(t, x), work has size n.
inline void finite_difference_jacobian(OdeSystem& sys, double t, std::span<const double> x,
                                       std::span<const double> f0, std::span<double> xp,
                                       std::span<double> fp, Eigen::Ref<Eigen::MatrixXd> J) {
  const std::size_t n = x.size();
  for (std::size_t i = 0; i < n; ++i) xp[i] = x[i];
  for (std::size_t j = 0; j < n; ++j) {
    const double dx = 1e-7 * std::max(1.0, std::abs(x[j]));
    xp[j] = x[j] + dx;
    sys.derivatives(t, xp, fp);
    for (std::size_t i = 0; i < n; ++i) J(i, j) = (fp[i] - f0[i]) / dx;
    xp[j] = x[j];
  }
}

}  // namespace stride
