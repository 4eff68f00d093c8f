// What every coupling scheme (run/coupling.hpp) does to a run: calls into the plugins, guarded
// so that whatever they throw ends the run with a report naming them; one step of a subsystem
// with its output checks, bond energies and observers; pushes into the connections;
// communication points with the energy-residual monitor; snapshots for repeated macro steps;
// and the initialization. Internal to the host.
//
// Call order: Master(state, ...) -> observe(observer)* -> initialize() -> a coupling scheme
// calls step() / advance_to() / push() / reached() / save() / restore() until the end.
// Every way a run ends early is thrown as Stop (status, message): a plugin that throws or
// fails a step, an output that is not finite or leaves its bounds, an energy residual over
// the limit, a stop signal. One thread. Stepping allocates nothing (save() may: the plugin's
// save_state). The step path is inline here: every scheme's loop compiles it in.
#pragma once

#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "run/observer.hpp"
#include "run/run_state.hpp"
#include "run/stop.hpp"
#include "stride/host/run/supervise.hpp"

namespace stride::host {

class Master {
 public:
  // `stop`, when not null, is set to a signal number to stop; `beacon`, when not null, is
  // shared with a supervising process.
  Master(RunState& state, const CouplingConfig& coupling, double residual_limit, const volatile int* stop,
         RunBeacon* beacon);
  Master(const Master&) = delete;
  Master& operator=(const Master&) = delete;

  // Before initialize(): the observer is called for the events it declares (observer.hpp).
  void observe(Observer& o);
  // Every subsystem at the start time: initialize, outputs until feedthrough chains settle,
  // [/coupling/initialization "exchange": outputs until none changes,] equilibrate, outputs;
  // the extrapolators start from them. Throws Stop.
  void initialize();
  // The first half of initialize(): every subsystem initialized and its outputs read until the
  // feedthrough chains settle, before any equilibrates (an exported FMU's outputs in
  // initialization mode). initialize() starts again from the beginning. Throws Stop.
  void initial_outputs();

  RunState& state() { return s_; }
  const RunState& state() const { return s_; }
  const CouplingConfig& coupling() const { return c_; }
  // Times within eps() are one time (round-off of sums of steps).
  double eps() const { return eps_; }
  double time_reached() const { return s_.time_reached(c_.end); }

  // One step of n of at most h: the step, its outputs (finite, within their bounds), the
  // energy through its bonds, the observers. Throws Stop.
  void step(NodeState& n, double h) {
    if (stop_ && *stop_) stop_by_signal();
    // A step that wakes the observers interpolates from y_prev: the outputs at n.t.
    if (n.y_stale && n.t + h * (1 + 1e-12) >= n.observe_at) fresh_outputs(n);
    n.t_prev = n.t;
    std::swap(n.y_prev, n.y);
    double t_new = n.t;
    guarded(n, [&] {
      if (n.inputs_renewed) n.sub->input_discontinuity(n.t);
      t_new = n.sub->step(n.t, h);
    });
    n.inputs_renewed = false;
    if (!(t_new > n.t) || t_new > n.t + h * (1 + 1e-12)) bad_step_time(n, t_new, h);
    n.t = grid_point(n, t_new);
    ++n.steps;
    n.smallest_step = std::min(n.smallest_step, n.t - n.t_prev);
    n.largest_step = std::max(n.largest_step, n.t - n.t_prev);
    if (n.lazy_outputs && n.t < n.observe_at) {
      n.y_stale = true;  // no one looks before the next fresh_outputs()
      return;
    }
    n.y_stale = false;
    read_outputs(n);
    if (n.events) guarded(n, [&] { n.event_at_end = n.events->outputs_before_event(n.y_before_event); });
    if (!defer_monitors_) {
      check_monitors(n);
    } else if (!violation_) {
      try {
        check_monitors(n);
      } catch (const Stop& s) {
        violation_ = s;
      }
    }
    for (BondState& b : n.bonds) {
      const double p = bond_power(n, b);
      b.energy += (b.rectangle ? p : 0.5 * (p + b.power)) * (n.t - n.t_prev);
      b.power = p;
    }
    if (n.t >= n.observe_at) passed(n);
  }

  // n's outputs at its time reached, read now if the last steps skipped them (lazy_outputs).
  void fresh_outputs(NodeState& n) {
    if (!n.y_stale) return;
    n.y_stale = false;
    read_outputs(n);
  }

  // Advances n until it reaches `target` (Jacobi / Gauss–Seidel); false when it is there
  // already. With align, the last step is cut to land on the target.
  bool advance_to(NodeState& n, double target) {
    if (!(n.t < target - eps_)) return false;
    do {
      // The manifest's step exactly when it ends on the target within round-off (n.t is on the
      // grid, and snapped below), the remainder only when the target falls inside the step.
      double h = n.step;
      if (c_.align && n.t + h > target + eps_) h = target - n.t;
      step(n, h);
      if (std::abs(n.t - target) <= eps_) n.t = target;
    } while (n.t < target - eps_);
    // Its connections read the outputs at the target, before anyone pushes new samples.
    if (!n.out_links.empty()) fresh_outputs(n);
    return true;
  }

  // Every subsystem to the communication point Tn, in Graph::order. Gauss–Seidel (sequential):
  // each one's outputs are pushed as soon as it is there, so the later ones read them; Jacobi:
  // once all are there, so everyone read the old ones. Only those that stepped push.
  void advance_all(double Tn, bool sequential) {
    stepped_.clear();
    for (NodeState* n : s_.order)
      if (advance_to(*n, Tn)) {
        if (sequential) push_outputs(*n);
        else stepped_.push_back(n);
      }
    for (NodeState* n : stepped_) push_outputs(*n);
  }

  void push(LinkState& l, double t) {
    if (t > l.last_push) guarded(l, [&] {
        s_.coupling_errors.before_push(l, t, eps_);
        l.push_now(t);
      });
  }
  // n's outputs into every connection they feed.
  void push_outputs(NodeState& n) {
    if (n.out_links.empty()) return;
    fresh_outputs(n);
    for (LinkState* l : n.out_links) push(*l, n.t);
  }

  // Every subsystem is at the communication point T: the beacon, the energy residuals, the
  // observers.
  void reached(double T) {
    beacon_->time_reached.store(T, std::memory_order_relaxed);
    check_residuals();
    s_.coupling_errors.reached(s_);
    for (Observer* o : at_points_) o->reached(s_, T);
  }

  // Repeated macro steps (iterative coupling, rejected steps): output bounds are judged on the
  // accepted pass only. While deferred, a crossing is kept (violation()) instead of thrown.
  void defer_monitors() { defer_monitors_ = true; }
  void forget_violation() { violation_.reset(); }
  void throw_violation() const {
    if (violation_) throw *violation_;
  }
  // Results after T wait until accept(T') (observers' hold_after / accepted).
  void hold_after(double T);
  void accept(double T);

  // A subsystem's state at a communication point, for repeating a macro step: the host's part
  // (time, outputs, record position, bond energies) and the subsystem's own snapshot.
  struct Snapshot {
    double t = 0.0, t_prev = 0.0;
    long steps = 0;
    double smallest_step = 0.0, largest_step = 0.0;
    std::size_t next_record = 0;
    std::vector<double> y, y_prev, bond_energy, bond_power;
    std::unique_ptr<SavedState> state;
  };
  void save(NodeState& n, Snapshot& s);
  void restore(NodeState& n, const Snapshot& s);

  // Calls into plugin code go through here: the beacon says who is inside, and whatever it
  // throws ends the run with a report naming it (Stop).
  template <class Fn>
  void guarded(NodeState& n, Fn&& fn) {
    beacon_->node.store(n.index, std::memory_order_relaxed);
    beacon_->node_time.store(n.t, std::memory_order_relaxed);
    try {
      fn();
    } catch (...) {
      failed(n);
    }
    beacon_->node.store(-1, std::memory_order_relaxed);
  }
  template <class Fn>
  void guarded(LinkState& l, Fn&& fn) {
    beacon_->link.store(l.index, std::memory_order_relaxed);
    try {
      fn();
    } catch (...) {
      failed(l);
    }
    beacon_->link.store(-1, std::memory_order_relaxed);
  }

 private:
  // on_grid(t_new, start, step, t_new - t_prev), tried first at the grid point after the last
  // one without on_grid's division and floor: within a quarter step of it, on_grid's k is that
  // point's, so the result is the same to the bit.
  double grid_point(NodeState& n, double t_new) {
    const double h = n.step, tk = c_.start + (n.grid_k + 1) * h, d = std::abs(t_new - tk);
    if (d <= 0.25 * h && d <= std::max(1e-9 * std::min(h, t_new - n.t_prev), 4.5e-16 * std::abs(t_new))) {
      n.grid_k += 1;
      return tk;
    }
    const double t = on_grid(t_new, c_.start, h, t_new - n.t_prev);
    n.grid_k = std::floor((t - c_.start) / h + 0.5);
    return t;
  }
  void read_outputs(NodeState& n) {
    guarded(n, [&] { n.sub->outputs(n.y); });
    for (std::size_t i = 0; i < n.y.size(); ++i)
      if (!std::isfinite(n.y[i])) not_finite(n, i);
  }
  void check_monitors(const NodeState& n) const {
    for (const auto& b : n.bounds) {
      const double v = n.y[b.element];
      if (v < b.min || v > b.max) out_of_bounds(n, b, v);
    }
  }
  void check_residuals() const {
    for (const PairState& p : s_.pairs) {
      const double r = p.residual();
      if (!(std::abs(r) <= residual_limit_)) residual_over_limit(p, r);
    }
  }
  static double bond_power(NodeState& n, const BondState& b) {
    auto u = n.input(b.input, n.t);
    double p = 0;
    for (std::size_t i = 0; i < b.width; ++i) p += u[b.element + i] * n.y[b.output_offset + i];
    return b.sign * p;
  }
  void passed(NodeState& n) {
    n.observe_at = std::numeric_limits<double>::infinity();
    for (Observer* o : at_steps_) o->passed(n);
  }

  // Initialization (master.cpp).
  std::vector<std::vector<NodeState*>> feedthrough_passes() const;
  void push_initial(LinkState& l, double t);
  void outputs_at_start(NodeState& n, double t0);
  void exchange_in_initialization(double t0);
  static bool lazy_outputs(const NodeState& n);

  // The reports of what ends a run (cold).
  [[noreturn]] void failed(const NodeState& n) const;
  [[noreturn]] void failed(const LinkState& l) const;
  [[noreturn]] void stop_by_signal() const;
  [[noreturn]] void bad_step_time(const NodeState& n, double t_new, double h) const;
  [[noreturn]] void not_finite(const NodeState& n, std::size_t element) const;
  [[noreturn]] void out_of_bounds(const NodeState& n, const Node::Bound& b, double v) const;
  [[noreturn]] void residual_over_limit(const PairState& p, double r) const;

  RunState& s_;
  const CouplingConfig& c_;
  const volatile int* stop_;
  RunBeacon own_beacon_;
  RunBeacon* beacon_;  // never null
  double eps_;
  double residual_limit_;
  std::vector<Observer*> at_steps_, at_points_;
  std::vector<NodeState*> stepped_;          // advance_all under Jacobi: who stepped
  std::vector<std::vector<double>> pushed_;  // initialization: the values each connection was last given
  bool defer_monitors_ = false;
  std::optional<Stop> violation_;
};

}  // namespace stride::host
