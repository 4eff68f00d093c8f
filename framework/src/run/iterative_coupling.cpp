// Iterative Jacobi and Gauss–Seidel coupling (/coupling/iteration, IterationConfig): every
// macro step repeated from snapshots until the interface values at its end stop changing.
//
//   T = start
//   while T < target:
//     Tn = min(start + (k + 1) H, target)
//     hold results after T; save every subsystem
//     for every connection: u0 = its value at T, u = the extrapolators' prediction at Tn
//     for pass = 1, 2, ...:
//       pass > 1: restore every subsystem; each input is the straight line from u0 to u
//       step every subsystem to Tn in order; Gauss–Seidel: a connection to a later
//         subsystem carries at once the value its source reached (u = y), not relaxed
//       change = max over connections and elements of |y - u| against atol + rtol |y|
//       if converged or pass = max_iterations: stop passing
//       u += ω (y - u) on every connection not carried forward
//     not converged and stop_unconverged: restore, end the run at T
//     push every output at Tn; accept the results up to Tn; a bound crossed ends the run
//     T = Tn; energy residuals, observers
//
// Pass 1 is the plain scheme (extrapolated inputs). Allocates at construction; save() may
// allocate (plugin snapshots). iterations.csv: one row per macro step.
#include <algorithm>
#include <limits>
#include <string>

#include "run/coupling.hpp"

namespace stride::host {
namespace {

class IterativeCoupling final : public CouplingScheme {
 public:
  IterativeCoupling(Master& m, bool sequential, RowFile* log)
      : m_(m), ic_(m.coupling().iteration), log_(log), T_(m.coupling().start) {
    RunState& s = m.state();
    snapshots_.resize(s.nodes.size());
    std::vector<std::size_t> place(s.nodes.size());
    for (std::size_t i = 0; i < s.order.size(); ++i) place[static_cast<std::size_t>(s.order[i]->index)] = i;
    forward_.assign(s.links.size(), 0);
    std::size_t widest = 1;
    for (auto& l : s.links) {
      forward_[static_cast<std::size_t>(l.index)] =
          sequential && place[static_cast<std::size_t>(l.src->index)] < place[static_cast<std::size_t>(l.dst->index)];
      l.iter_start.assign(l.width, 0.0);
      l.iter_end.assign(l.width, 0.0);
      widest = std::max(widest, l.width);
    }
    y_.resize(widest);
    m.defer_monitors();
  }

  void advance(double target) override {
    const CouplingConfig& c = m_.coupling();
    while (T_ < target - m_.eps()) {
      const double grid = c.start + static_cast<double>(k_ + 1) * c.macro_step;
      const double Tn = std::min(grid, target);
      if (grid <= target + m_.eps()) ++k_;
      macro_step(Tn);
      T_ = Tn;
      m_.reached(T_);
    }
  }

  void summarize(json& s) const override {
    s["iteration"] = {
        {"max_iterations", ic_.max_iterations},
        {"relaxation", ic_.relaxation},
        {"tolerance", ic_.tolerance},
        {"absolute_tolerance", ic_.absolute_tolerance},
        {"macro_steps", stats_.macro_steps},
        {"passes", stats_.passes},
        {"mean_passes_per_macro_step", stats_.macro_steps ? double(stats_.passes) / double(stats_.macro_steps) : 0.0},
        {"most_passes_in_a_macro_step", stats_.most_passes},
        {"unconverged_macro_steps", stats_.unconverged},
        {"first_unconverged_time", stats_.first_unconverged},
        {"largest_final_residual", stats_.largest_final},
        {"per_macro_step", "iterations.csv"}};
  }

 private:
  // How far the last pass's end values were from those its readers were given.
  struct Change {
    bool converged = true;
    double ratio = 0.0, largest = 0.0;  // largest |y - u| over its bound, and largest |y - u|
  };

  void macro_step(double Tn) {
    RunState& s = m_.state();
    m_.hold_after(T_);
    for (auto& n : s.nodes) m_.save(n, snapshots_[static_cast<std::size_t>(n.index)]);
    // The interface at T, and the extrapolators' prediction at Tn (what pass 1 uses).
    for (auto& l : s.links) {
      m_.guarded(l, [&] {
        l.extrapolator->evaluate(T_, l.iter_start);
        l.extrapolator->evaluate(Tn, l.iter_end);
      });
      l.iter_t0 = T_;
      l.iter_t1 = Tn;
    }
    int pass = 0;
    Change change;
    for (;;) {
      ++pass;
      m_.forget_violation();  // an output bound crossed by an iterate that is not accepted is no divergence
      if (pass > 1)
        for (auto& n : s.nodes) m_.restore(n, snapshots_[static_cast<std::size_t>(n.index)]);
      step_all(Tn);
      change = measure();
      if (change.converged || pass >= ic_.max_iterations) break;
      relax();
    }
    if (!change.converged && ic_.stop_unconverged) stop_unconverged(Tn, pass, change);
    // Accepted: the extrapolators get the samples at Tn, the rows up to Tn are written.
    for (auto& l : s.links)
      if (l.iterating) set_iterating(l, false);
    for (NodeState* n : s.order) m_.push_outputs(*n);
    m_.accept(Tn);
    log(Tn, pass, change);
    m_.throw_violation();
  }

  // One pass: every subsystem to Tn in order; under Gauss–Seidel the connections to later
  // subsystems carry what their source just reached.
  void step_all(double Tn) {
    for (NodeState* n : m_.state().order) {
      m_.advance_to(*n, Tn);
      for (LinkState* l : n->out_links)
        if (forward_[static_cast<std::size_t>(l->index)]) {
          l->source_value(l->iter_end);
          set_iterating(*l, true);
        }
    }
  }

  // Each connection's new end value against the one its reader was given.
  Change measure() {
    Change c;
    for (auto& l : m_.state().links) {
      l.source_value(y_);
      for (std::size_t i = 0; i < l.width; ++i) {
        const double r = std::abs(y_[i] - l.iter_end[i]);
        const double bound = ic_.absolute_tolerance + ic_.tolerance * std::abs(y_[i]);
        c.largest = std::max(c.largest, r);
        if (r > bound) {
          c.converged = false;
          c.ratio = std::max(c.ratio, bound > 0 ? r / bound : std::numeric_limits<double>::infinity());
        } else if (bound > 0) {
          c.ratio = std::max(c.ratio, r / bound);
        }
      }
    }
    return c;
  }

  // u += ω (y - u) on the connections not carried forward; every input follows its line.
  void relax() {
    for (auto& l : m_.state().links) {
      if (!forward_[static_cast<std::size_t>(l.index)]) {
        l.source_value(y_);
        for (std::size_t i = 0; i < l.width; ++i) l.iter_end[i] += ic_.relaxation * (y_[i] - l.iter_end[i]);
      }
      set_iterating(l, true);
    }
  }

  static void set_iterating(LinkState& l, bool on) {
    l.iterating = on;
    ++l.pushes;  // the value cached for a time is stale
    l.dst->inputs_renewed = true;
    l.dst->known[l.dst_input] = NodeInputs::Known{};
  }

  // The run ends at T, the last converged communication point: nothing of this macro step
  // reaches results.csv.
  [[noreturn]] void stop_unconverged(double Tn, int pass, const Change& c) {
    for (auto& n : m_.state().nodes) m_.restore(n, snapshots_[static_cast<std::size_t>(n.index)]);
    log(Tn, pass, c);
    throw Stop{RunStatus::diverged, "iterative coupling did not converge in " + std::to_string(pass) +
                                        " passes in the macro step from t = " + message_number(T_) + " to " +
                                        message_number(Tn) + " s: the largest interface change was " +
                                        message_number(c.largest) + " (" + message_number(c.ratio) +
                                        " times the tolerance); the results end at t = " + message_number(T_) + " s"};
  }

  // One macro step: the counts of summary.json and a row of iterations.csv.
  void log(double Tn, int pass, const Change& c) {
    ++stats_.macro_steps;
    stats_.passes += pass;
    stats_.most_passes = std::max(stats_.most_passes, pass);
    stats_.largest_final = std::max(stats_.largest_final, c.largest);
    if (!c.converged && stats_.unconverged++ == 0) stats_.first_unconverged = Tn;
    if (!log_) return;
    std::string& b = log_->buffer();
    put_number(b, Tn);
    b += ',' + std::to_string(pass) + ',';
    put_number(b, c.largest);
    b += ',';
    put_number(b, c.ratio);
    b += c.converged ? ",1\n" : ",0\n";
    if (log_->due()) log_->commit();
  }

  Master& m_;
  const IterationConfig& ic_;
  RowFile* log_;  // iterations.csv
  double T_;
  long k_ = 0;
  std::vector<Master::Snapshot> snapshots_;  // every subsystem at T
  std::vector<char> forward_;                // per connection: Gauss–Seidel carries it forward
  std::vector<double> y_;                    // a connection's source value
  struct {
    long macro_steps = 0, passes = 0, unconverged = 0;
    int most_passes = 0;
    double largest_final = 0.0;
    double first_unconverged = std::numeric_limits<double>::quiet_NaN();
  } stats_;
};

}  // namespace

std::unique_ptr<CouplingScheme> make_iterative_coupling(Master& master, bool sequential, RowFile* iterations_log) {
  return std::make_unique<IterativeCoupling>(master, sequential, iterations_log);
}

}  // namespace stride::host
