// What a run changes, apart from the graph it runs (graph/graph.hpp): each subsystem's time,
// outputs, step count, bond energies and place in results.csv (NodeState), each connection's
// pushes, cached values and iterates (LinkState). Internal to the host.
//
// Made fresh for each run from the experiment's graph: the constructor allocates everything
// stepping needs and attaches to the nodes' NodeInputs, so that the plugins read their inputs
// from this state; stepping (run/master.hpp, the coupling schemes) then allocates nothing.
// Destruction detaches. One RunState per graph at a time (the constructor throws
// std::logic_error when another is attached); it must not outlive the graph. One thread.
//
// The hot fields of the graph a step reads (a node's step, a link's offsets and conversion, a
// bond's elements) are copied here, so that a step and a push each read one block of memory.
// The small arrays every step touches (a node's outputs y and y_prev, its inputs' known values,
// the values its connections hold, its connections out and in) lie in a few blocks of the
// RunState, node after node in the nodes' order, instead of one heap block each: with
// thousands of subsystems each separate block was a cache miss per step.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <vector>

#include "graph/graph.hpp"
#include "run/coupling_error.hpp"
#include "core/event_outputs.hpp"

namespace stride::host {

struct LinkState;

// A power bond's run: its elements (copied from the Bond) and what it accumulated.
struct BondState {
  std::size_t input = 0, element = 0, output_offset = 0, width = 0;
  double sign = 1.0;
  double power = 0.0;  // at the last step end
  // ∫ power dt over the subsystem's steps (Rahikainen 2020 §2.3.2): the rectangle rule with
  // the power at the step end when every link into the bond holds its samples (extrapolation
  // of order 0), the trapezoidal rule otherwise.
  double energy = 0.0;
  bool rectangle = false;
};

struct alignas(64) NodeState {
  // What every step reads and writes, first and together (the master visits every subsystem
  // each macro step: with thousands of subsystems these are cache misses).
  double t = 0.0, t_prev = 0.0;
  double step = 0.0;  // the node's step
  double grid_k = 0.0;  // t's nearest grid point is start + grid_k step (a hint: Master::grid_point)
  long steps = 0;
  // Observers see this subsystem's step once t reaches this time (Observer::passed); -inf
  // until they have seen it once.
  double observe_at = -std::numeric_limits<double>::infinity();
  Subsystem* sub = nullptr;
  bool inputs_renewed = false;  // a new sample arrived since the last step
  // Nothing reads this subsystem's outputs after every step (Master::lazy_outputs): the
  // master reads them where an observer wakes, a connection pushes or someone asks
  // (Master::fresh_outputs). y_stale: y is not yet the outputs at t.
  bool lazy_outputs = false, y_stale = false;
  int index = 0;                // in RunState::nodes and Graph::nodes
  // The outputs at t and at t_prev (swapped by each step), in RunState::values.
  std::span<double> y, y_prev;
  // Each input's value over an interval of times, as the plugin's Inputs::at returns it without
  // asking the host (a held sample, the value just evaluated); in RunState::known.
  std::span<NodeInputs::Known> known;
  std::span<LinkState* const> out_links;  // in RunState::link_refs
  std::span<const Node::Bound> bounds;
  std::vector<BondState> bonds;
  std::size_t next_record = 0;  // first row of results.csv this subsystem has not filled
  // A subsystem whose outputs jump at events (an FMU): after a step that ended at one,
  // `event_at_end` and the outputs just before it, which recording interpolates to instead of y.
  const EventOutputs* events = nullptr;
  const DenseOutputs* dense = nullptr;  // outputs at record times inside a step, where it has them
  bool event_at_end = false;
  std::vector<double> y_before_event;
  const Node* node = nullptr;
  NodeInputs* plugin_inputs = nullptr;
  // Per output element: whether the run reads it (RunState::read_only_what_the_run_reads);
  // null: every element is read.
  std::unique_ptr<bool[]> outputs_read;
  std::span<const std::span<LinkState* const>> in_links;     // per input index (RunState::port_links)
  std::vector<std::vector<double>> input_value;               // per input index, assembled from several links
  double energy0 = std::numeric_limits<double>::quiet_NaN();  // stored energy after initialization
  // The steps actually taken (cut to communication points or events), for summary.json.
  double smallest_step = std::numeric_limits<double>::infinity(), largest_step = 0.0;

  // The value of input `port` at t, as the plugin reads it.
  std::span<const double> input(std::size_t port, double t) {
    const NodeInputs::Known& k = known[port];
    if (t >= k.from && t <= k.to) return {k.data, k.size};
    return plugin_inputs->at(port, t);
  }
};

// One connection's run. The fields a push and a read touch come first (the master visits
// every connection of every subsystem that stepped, each macro step).
struct alignas(64) LinkState {
  NodeState* src = nullptr;
  std::size_t src_offset = 0;  // into src->y
  std::size_t width = 0;
  NodeState* dst = nullptr;
  std::size_t dst_input = 0;
  std::size_t dst_offset = 0;
  Extrapolator* extrapolator = nullptr;
  double last_push = -std::numeric_limits<double>::infinity();
  // `value` is the extrapolator's evaluation at value_time after `pushes` pushes: evaluation
  // is a const function of the pushed samples and t, so a second read at the same time with
  // no push in between (a plugin reading an input several times in one step, the power of a
  // bond after outputs()) reuses it instead of evaluating again.
  std::uint64_t pushes = 0;
  std::uint64_t value_pushes = ~std::uint64_t(0);
  double value_time = std::numeric_limits<double>::quiet_NaN();
  std::span<double> value;  // last evaluated input (in RunState::values, beside its reader's outputs)
  bool whole_port = false;
  bool convert = false;
  // Gauss–Seidel, source before reader (Link::source_first), through a hold (finite
  // holds_from): the reader holds the newest sample from ahead_from, its own time when the
  // sample was pushed (the start of the macro step the sample ends) instead of from the
  // sample's time; else +infinity. Under Gauss–Seidel a hold is the new value held over the
  // macro step, not the old one: otherwise the reader would read what Jacobi gives it.
  bool source_first = false;
  double ahead_from = std::numeric_limits<double>::infinity();
  // Iterative coupling: while a macro step [iter_t0, iter_t1] is repeated, the input is the
  // straight line from iter_start (its value at iter_t0) to iter_end (the relaxed iterate at
  // iter_t1) instead of the extrapolator's value. A change of either counts as a push.
  bool iterating = false;
  int index = 0;  // in RunState::links and Graph::links
  double scale = 1.0, offset = 0.0;
  std::vector<double> converted;
  double iter_t0 = 0.0, iter_t1 = 0.0;
  std::vector<double> iter_start, iter_end;
  const Link* link = nullptr;

  // Pushes the source's current outputs when newer than the last push.
  void push(double t) {
    if (t > last_push) push_now(t);
  }
  void push_now(double t);
  // The source's current outputs as the destination reads them (unit conversion applied).
  void source_value(std::span<double> out) const {
    const double* v = src->y.data() + src_offset;
    for (std::size_t i = 0; i < width; ++i) out[i] = convert ? v[i] * scale + offset : v[i];
  }
};

// Inline: every push of every step goes through these two.
inline void LinkState::push_now(double t) {
  std::span<const double> y = std::span<const double>(src->y).subspan(src_offset, width);
  if (convert) {
    for (std::size_t i = 0; i < width; ++i) converted[i] = y[i] * scale + offset;
    y = converted;
  }
  extrapolator->push(t, y);
  last_push = t;
  ++pushes;
  dst->inputs_renewed = true;
  // A hold from the new sample on is the sample itself: the destination reads it from here
  // without evaluating the extrapolator (under Gauss–Seidel from where the reader stands).
  double held = extrapolator->holds_from();
  if (source_first) {
    ahead_from = std::isfinite(held) ? std::min(held, dst->t) : std::numeric_limits<double>::infinity();
    held = std::min(held, ahead_from);
  }
  if (whole_port && held <= t) {
    for (std::size_t i = 0; i < width; ++i) value[i] = y[i];
    value_time = std::numeric_limits<double>::quiet_NaN();
    dst->known[dst_input] =
        NodeInputs::Known{held, std::numeric_limits<double>::infinity(), value.data(), value.size()};
  } else {
    dst->known[dst_input] = NodeInputs::Known{};
  }
}

inline void CouplingErrors::before_push(LinkState& l, double t, double eps) {
  if (!estimate) return;
  Connection& c = links_[static_cast<std::size_t>(l.index)];
  const double* y = l.src->y.data() + l.src_offset;
  double e = 0.0, scale = c.scale;
  // Counted only where the reader stepped to t on the prediction.
  const bool read = !l.iterating && l.dst->t >= t - eps;
  // The reader's own value when it is still valid at t: a hold (NodeInputs::Known) or the
  // evaluation cached for t; else the extrapolator once more.
  const double* u = l.value.data();
  const NodeInputs::Known& k = l.dst->known[l.dst_input];
  const bool held = k.data == u && t >= k.from && t <= k.to;
  if (read && !held && !(t == l.value_time && l.pushes == l.value_pushes)) {
    l.extrapolator->evaluate(t, std::span<double>(predicted_.data(), l.width));
    u = predicted_.data();
  }
  for (std::size_t i = 0; i < l.width; ++i) {
    const double yi = l.convert ? y[i] * l.scale + l.offset : y[i];
    scale = std::max(scale, std::abs(yi));
    if (read) e = std::max(e, std::abs(yi - u[i]));
  }
  c.scale = scale;
  if (!read) return;
  ++c.points;
  c.sum_sq += e * e;
  if (e > c.max || c.points == 1) c.max = e, c.max_at = t;
}

// The energies of the two bonds of a BondPair.
struct PairState {
  const BondPair* pair;
  const double* energy_a;
  const double* energy_b;
  // The generalized energy residual: zero under exact coupling.
  double residual() const { return *energy_a + *energy_b; }
};

struct RunState {
  // Throws std::logic_error when another RunState of the graph is alive.
  explicit RunState(const Graph& graph);
  ~RunState();
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  const Graph& graph;
  // The blocks NodeState::y, y_prev, known and LinkState::value point into (sized once).
  std::vector<double> values;
  std::vector<NodeInputs::Known> known;
  std::vector<LinkState*> link_refs;                   // NodeState::out_links and in_links' links
  std::vector<std::span<LinkState* const>> port_links;  // NodeState::in_links
  std::vector<NodeState> nodes;   // as Graph::nodes
  std::vector<LinkState> links;   // as Graph::links
  std::vector<NodeState*> order;  // as Graph::order
  std::vector<PairState> pairs;   // as Graph::bond_pairs
  CouplingErrors coupling_errors;  // the run's estimate of its coupling error (summary.json "accuracy")

  // Tells each subsystem which of its output elements the run reads (connections, bonds,
  // bounds, results.csv; every one of a subsystem with events): the others need not be
  // computed (Inputs::output_read). For run(), whose only reader of outputs is itself; a
  // Simulation whose caller may ask for any output does not call it.
  void read_only_what_the_run_reads();

  // The time every subsystem has reached (at most `end`).
  double time_reached(double end) const {
    for (const auto& n : nodes) end = std::min(end, n.t);
    return end;
  }

 private:
  // Sizes values, known, link_refs and port_links and points the nodes and links into them.
  void lay_out_blocks();
};

}  // namespace stride::host
