#include "run/master.hpp"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/signals.hpp"

namespace stride::host {

Master::Master(RunState& state, const CouplingConfig& coupling, double residual_limit, const volatile int* stop,
               RunBeacon* beacon)
    : s_(state),
      c_(coupling),
      stop_(stop),
      beacon_(beacon ? beacon : &own_beacon_),
      // Relative to the macro step, but never below the spacing of doubles at the end time.
      eps_(std::max(1e-9 * std::min(coupling.macro_step, coupling.end - coupling.start),
                    9e-16 * std::max(std::abs(coupling.start), std::abs(coupling.end)))),
      residual_limit_(residual_limit) {
  stepped_.reserve(state.nodes.size());
}

void Master::observe(Observer& o) {
  if (o.events() & Observer::steps) at_steps_.push_back(&o);
  if (o.events() & Observer::communication_points) at_points_.push_back(&o);
}

void Master::initial_outputs() {
  const double t0 = c_.start;
  for (auto& n : s_.nodes) guarded(n, [&] { n.sub->initialize(t0); });
  for (auto& n : s_.nodes) n.t = n.t_prev = t0;
  // Feedthrough outputs need their inputs: start every connection from zeros, evaluate every
  // subsystem once (outputs without feedthrough are exact then), and re-evaluate a subsystem
  // in pass k only when it has a feedthrough output at the end of a chain of k feedthrough
  // outputs: its inputs are exact after pass k - 1. A graph without feedthrough takes no
  // further pass; each pass visits only the subsystems of its depth.
  beacon_->phase.store(1);
  pushed_.assign(s_.links.size(), {});
  for (auto& l : s_.links) {
    std::fill(l.src->y.begin(), l.src->y.end(), 0.0);
    push_initial(l, t0);
  }
  for (const auto& pass : feedthrough_passes())
    for (NodeState* n : pass) outputs_at_start(*n, t0);
}

void Master::initialize() {
  const double t0 = c_.start;
  initial_outputs();
  const bool exchange = c_.initialization == Initialization::exchange;
  if (exchange) exchange_in_initialization(t0);
  // Consistent initialization (e.g. static equilibrium), then fresh outputs: one subsystem after
  // another with the outputs of those before it, or, after the exchange, all together.
  for (NodeState* n : s_.order) {
    guarded(*n, [&] { n->sub->equilibrate(t0); });
    if (!exchange) outputs_at_start(*n, t0);
  }
  for (NodeState* n : s_.order) {
    outputs_at_start(*n, t0);
    std::copy(n->y.begin(), n->y.end(), n->y_prev.begin());
    for (BondState& b : n->bonds) {
      b.power = bond_power(*n, b);
      b.rectangle = true;
      for (LinkState* l : n->in_links[b.input])
        if (l->dst_offset < b.element + b.width && b.element < l->dst_offset + l->width)
          b.rectangle = b.rectangle && std::isfinite(l->extrapolator->holds_from());
    }
  }
  pushed_ = {};
  for (auto& n : s_.nodes) {
    n.lazy_outputs = lazy_outputs(n);
    passed(n);
    guarded(n, [&] { n.energy0 = n.sub->energy(); });
  }
  beacon_->phase.store(2);
}

// libcosim's start-up: Gauss-Seidel sweeps over every subsystem's outputs (each read with the
// inputs the sweep has pushed so far, an FMU still in initialization mode) until a sweep changes
// no output by more than 1e-12 relative. One sweep more than there are subsystems carries a
// value along any chain; a loop that has not settled after kMaxSweeps is no start to run from.
void Master::exchange_in_initialization(double t0) {
  constexpr int kMaxSweeps = 100;
  std::vector<std::vector<double>> before(s_.nodes.size());
  for (int sweep = 1; sweep <= kMaxSweeps; ++sweep) {
    double worst = 0.0;
    const NodeState* where = nullptr;
    std::size_t element = 0;
    for (NodeState* n : s_.order) {
      before[static_cast<std::size_t>(n - s_.nodes.data())].assign(n->y.begin(), n->y.end());
      outputs_at_start(*n, t0);
      const auto& y0 = before[static_cast<std::size_t>(n - s_.nodes.data())];
      for (std::size_t i = 0; i < n->y.size(); ++i) {
        const double change = std::abs(n->y[i] - y0[i]) / std::max(1.0, std::abs(n->y[i]));
        if (change > worst) worst = change, where = n, element = i;
      }
    }
    if (worst <= 1e-12) return;
    if (sweep == kMaxSweeps) {
      const Node& d = *where->node;
      const std::size_t p = d.output_port_at(element);
      throw Stop{RunStatus::failed, "initialization exchange: the outputs did not settle in " +
                                        std::to_string(kMaxSweeps) + " sweeps (output \"" + d.name + "." +
                                        (p < d.ports.size() ? d.ports[p].name : "") + "\" still changed by " +
                                        message_number(worst) +
                                        " relative); the loop through it has no fixed point the exchange reaches: use "
                                        "/coupling/initialization \"sequential\""};
    }
  }
}

// Whether n's outputs are needed only at the end of its steps that observers watch, where its
// connections push (advance_to, push_outputs) and where someone asks (fresh_outputs): no bond
// (power every step), no bound (checked every step), and, for a subsystem whose outputs are
// read late (it feeds no connection), no output that depends on inputs a later sample changes.
// Between communication points no sample arrives, so outputs() at the time reached gives what
// it gave right after the step.
bool Master::lazy_outputs(const NodeState& n) {
  if (!n.bonds.empty() || !n.bounds.empty() || n.events) return false;  // events: outputs before each
  if (!n.out_links.empty()) return true;
  bool connected = false;
  for (const auto& links : n.in_links) connected = connected || !links.empty();
  if (!connected) return true;
  for (const auto& p : n.node->ports)
    if (p.direction == Direction::output && p.feedthrough) return false;
  return true;
}

void Master::outputs_at_start(NodeState& n, double t0) {
  read_outputs(n);
  for (LinkState* l : n.out_links) push_initial(*l, t0);
}

// Who is evaluated in each initialization pass: pass 0 every subsystem (in the order), pass k
// those with a feedthrough output whose longest chain of feedthrough outputs before it
// (through connections) has k - 1 links, i.e. depth k. Depths by Kahn's algorithm over the
// feedthrough outputs, O(subsystems + connections · outputs).
std::vector<std::vector<NodeState*>> Master::feedthrough_passes() const {
  const Graph& g = s_.graph;
  std::vector<std::vector<NodeState*>> passes(1, s_.order);
  // Feedthrough outputs of each node, and the output port each link reads.
  std::vector<std::vector<std::size_t>> ft(g.nodes.size());
  std::vector<std::size_t> first(g.nodes.size() + 1, 0);
  for (const Node& n : g.nodes) {
    for (std::size_t i = 0; i < n.ports.size(); ++i)
      if (n.ports[i].direction == Direction::output && n.ports[i].feedthrough) ft[n.index].push_back(i);
  }
  for (std::size_t k = 0; k < g.nodes.size(); ++k) first[k + 1] = first[k] + ft[k].size();
  const std::size_t nv = first.back();
  if (nv == 0) return passes;
  auto vertex = [&](const Node* n, std::size_t port) -> long {
    for (std::size_t j = 0; j < ft[n->index].size(); ++j)
      if (ft[n->index][j] == port) return static_cast<long>(first[n->index] + j);
    return -1;
  };
  // Edge: a feedthrough output feeding a subsystem -> each feedthrough output of that subsystem.
  std::vector<std::vector<std::size_t>> next(nv);
  std::vector<std::size_t> indegree(nv, 0);
  for (const Link& l : g.links) {
    const Node& s = *l.src;
    const std::size_t at = s.output_port_at(l.src_offset);
    const long from = at < s.ports.size() ? vertex(&s, at) : -1;
    if (from < 0) continue;
    for (std::size_t j = 0; j < ft[l.dst->index].size(); ++j) {
      next[static_cast<std::size_t>(from)].push_back(first[l.dst->index] + j);
      ++indegree[first[l.dst->index] + j];
    }
  }
  std::vector<std::size_t> depth(nv, 1), queue;
  for (std::size_t v = 0; v < nv; ++v)
    if (indegree[v] == 0) queue.push_back(v);
  for (std::size_t q = 0; q < queue.size(); ++q)
    for (std::size_t w : next[queue[q]]) {
      depth[w] = std::max(depth[w], depth[queue[q]] + 1);
      if (--indegree[w] == 0) queue.push_back(w);
    }
  if (queue.size() < nv) {
    // A feedthrough cycle (the graph check refuses these): as many passes as subsystems.
    passes.assign(g.nodes.size() + 2, s_.order);
    return passes;
  }
  std::size_t longest = 0;
  for (std::size_t d : depth) longest = std::max(longest, d);
  passes.resize(longest + 1);
  for (NodeState* n : s_.order) {
    std::vector<std::size_t> ds;
    for (std::size_t j = 0; j < ft[n->index].size(); ++j) ds.push_back(depth[first[n->index] + j]);
    std::sort(ds.begin(), ds.end());
    ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
    for (std::size_t d : ds) passes[d].push_back(n);
  }
  return passes;
}

// During initialization: a connection's extrapolator restarts from the source's outputs at t0
// only when they differ from what it was last given.
void Master::push_initial(LinkState& l, double t) {
  auto& last = pushed_[static_cast<std::size_t>(l.index)];
  const double* y = l.src->y.data() + l.src_offset;
  if (last.size() == l.width && std::equal(last.begin(), last.end(), y)) return;
  guarded(l, [&] {
    l.extrapolator->reset(l.width);
    l.last_push = -std::numeric_limits<double>::infinity();
    l.push(t);
  });
  last.assign(y, y + l.width);
}

void Master::hold_after(double T) {
  for (Observer* o : at_steps_) o->hold_after(T);
}

void Master::accept(double T) {
  for (Observer* o : at_steps_) o->accepted(T);
}

void Master::save(NodeState& n, Snapshot& s) {
  fresh_outputs(n);
  s.t = n.t, s.t_prev = n.t_prev, s.steps = n.steps, s.next_record = n.next_record;
  s.smallest_step = n.smallest_step, s.largest_step = n.largest_step;
  s.y.assign(n.y.begin(), n.y.end());
  s.y_prev.assign(n.y_prev.begin(), n.y_prev.end());
  s.bond_energy.resize(n.bonds.size());
  s.bond_power.resize(n.bonds.size());
  for (std::size_t i = 0; i < n.bonds.size(); ++i)
    s.bond_energy[i] = n.bonds[i].energy, s.bond_power[i] = n.bonds[i].power;
  guarded(n, [&] { n.sub->save_state(s.state); });
  if (!s.state)
    throw Stop{RunStatus::failed, "subsystem \"" + n.node->name + "\" (" + n.node->plugin +
                                      ") saved no state at t = " + message_number(n.t) + " s"};
}

void Master::restore(NodeState& n, const Snapshot& s) {
  guarded(n, [&] { n.sub->restore_state(*s.state); });
  n.observe_at = std::numeric_limits<double>::infinity();
  for (Observer* o : at_steps_) o->rewound(n, s.next_record);
  n.next_record = s.next_record;
  n.t = s.t, n.t_prev = s.t_prev, n.steps = s.steps;
  n.smallest_step = s.smallest_step, n.largest_step = s.largest_step;
  std::copy(s.y.begin(), s.y.end(), n.y.begin());
  std::copy(s.y_prev.begin(), s.y_prev.end(), n.y_prev.begin());
  n.y_stale = false;
  for (std::size_t i = 0; i < n.bonds.size(); ++i)
    n.bonds[i].energy = s.bond_energy[i], n.bonds[i].power = s.bond_power[i];
}

void Master::failed(const NodeState& n) const {
  const std::string& name = n.node->name;
  const std::string& plugin = n.node->plugin;
  try {
    throw;
  } catch (const StepFailure& e) {
    throw Stop{RunStatus::diverged,
               "subsystem \"" + name + "\" (" + plugin + ") failed at t = " + message_number(n.t) + " s: " + e.what()};
  } catch (const PluginError& e) {
    throw Stop{RunStatus::failed, "subsystem \"" + name + "\": " + e.what()};
  } catch (const EndOfSimulation& e) {
    // The model came to its end (an FMU asked to terminate): a normal end where it stopped.
    throw Stop{RunStatus::completed,
               "subsystem \"" + name + "\" ended the simulation at t = " + message_number(n.t) + " s: " + e.what()};
  } catch (const Stop&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw Stop{RunStatus::failed, "out of memory in plugin \"" + plugin + "\" of subsystem \"" + name + "\""};
  } catch (const std::exception& e) {
    throw Stop{RunStatus::failed, "plugin \"" + plugin + "\" of subsystem \"" + name + "\" threw: " + e.what()};
  } catch (...) {
    throw Stop{RunStatus::failed, "plugin \"" + plugin + "\" of subsystem \"" + name +
                                      "\" threw an exception that is not a std::exception"};
  }
}

void Master::failed(const LinkState& l) const {
  const ConnectionConfig& c = l.link->config;
  try {
    throw;
  } catch (const Stop&) {
    throw;
  } catch (const std::exception& e) {
    throw Stop{RunStatus::failed, "extrapolator \"" + c.extrapolator.plugin + "\" of connection " + c.from_text +
                                      " -> " + c.to_text + " threw: " + e.what()};
  } catch (...) {
    throw Stop{RunStatus::failed, "extrapolator \"" + c.extrapolator.plugin + "\" of connection " + c.from_text +
                                      " -> " + c.to_text + " threw an exception that is not a std::exception"};
  }
}

void Master::stop_by_signal() const {
  throw Stop{RunStatus::interrupted, "interrupted by signal " + signal_name(*stop_)};
}

void Master::bad_step_time(const NodeState& n, double t_new, double h) const {
  throw Stop{RunStatus::failed, "subsystem \"" + n.node->name + "\" (" + n.node->plugin + ") returned time " +
                                    message_number(t_new) + " from a step at t = " + message_number(n.t) +
                                    " of at most " + message_number(h) + " s"};
}

void Master::not_finite(const NodeState& n, std::size_t element) const {
  const Node& d = *n.node;
  const std::size_t p = d.output_port_at(element);
  const std::string port = p < d.ports.size() ? d.ports[p].name : "";
  throw Stop{RunStatus::diverged, "subsystem \"" + d.name + "\": output \"" + port +
                                      "\" is not finite at t = " + message_number(n.t) + " s"};
}

void Master::out_of_bounds(const NodeState& n, const Node::Bound& b, double v) const {
  throw Stop{RunStatus::diverged, "output " + b.label + " = " + message_number(v) + " left its declared bounds [" +
                                      message_number(b.min) + ", " + message_number(b.max) +
                                      "] at t = " + message_number(n.t) + " s"};
}

void Master::residual_over_limit(const PairState& p, double r) const {
  throw Stop{RunStatus::diverged, "energy residual of power bond " + p.pair->name() + " is " + message_number(r) +
                                      " J, beyond the limit " + message_number(residual_limit_) +
                                      " J at t = " + message_number(time_reached()) + " s"};
}

}  // namespace stride::host
