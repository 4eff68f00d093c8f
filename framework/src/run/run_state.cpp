#include "run/run_state.hpp"

#include <stdexcept>
#include <string>

namespace stride::host {

void NodeInputs::attach(NodeState& state) {
  if (state_)
    throw std::logic_error("subsystem \"" + state.node->name + "\" is driven by another run of this experiment");
  state_ = &state;
  clock_ = &state.t;
  set_known(state.known.data(), state.known.size());
}

void NodeInputs::detach() {
  state_ = nullptr;
  clock_ = &kNoTime;
  set_known(nullptr, 0);
  set_outputs_read(nullptr, 0);
}

std::span<const double> NodeInputs::evaluate(std::size_t port, double t) {
  if (!state_) throw std::logic_error("an input was read with no run under way");
  NodeState& n = *state_;
  if (port >= n.in_links.size())
    throw std::out_of_range("input index " + std::to_string(port) + " read by subsystem \"" + n.node->name +
                            "\", which has " + std::to_string(n.in_links.size()) + " inputs");
  const auto& links = n.in_links[port];
  // The interval of times for which every link's value is the one evaluated now: a hold from
  // its start on, else this instant only.
  double from = -std::numeric_limits<double>::infinity(), to = std::numeric_limits<double>::infinity();
  for (LinkState* l : links) {
    if (l->iterating) {
      if (!(t == l->value_time && l->pushes == l->value_pushes)) {
        const double span = l->iter_t1 - l->iter_t0;
        const double w = span > 0 ? std::clamp((t - l->iter_t0) / span, 0.0, 1.0) : 1.0;
        for (std::size_t i = 0; i < l->width; ++i) l->value[i] = (1 - w) * l->iter_start[i] + w * l->iter_end[i];
        l->value_time = t;
        l->value_pushes = l->pushes;
      }
      from = std::max(from, t);
      to = t;
      continue;
    }
    try {
      // From ahead_from on, a Gauss–Seidel hold gives the newest sample (LinkState::ahead_from).
      const bool ahead = t >= l->ahead_from;
      if (!(t == l->value_time && l->pushes == l->value_pushes)) {  // evaluated already
        l->extrapolator->evaluate(ahead ? std::max(t, l->last_push) : t, l->value);
        l->value_time = t;
        l->value_pushes = l->pushes;
      }
      const double held = ahead ? l->ahead_from : l->extrapolator->holds_from();
      from = std::max(from, held <= t ? held : t);
      if (held > t) to = t;
    } catch (const std::exception& e) {
      throw PluginError(l->link->config.extrapolator.plugin, std::string("extrapolator of ") + n.node->name + "." +
                                                                 n.node->ports[n.node->inputs[port]].name + ": " +
                                                                 e.what());
    } catch (...) {
      throw PluginError(l->link->config.extrapolator.plugin, std::string("extrapolator of ") + n.node->name + "." +
                                                                 n.node->ports[n.node->inputs[port]].name +
                                                                 ": threw an exception that is not a std::exception");
    }
  }
  std::span<const double> value;
  // whole_port first: it answers without reading input_value (another block of memory).
  if (links.size() == 1 &&
      (links[0]->whole_port || (links[0]->dst_offset == 0 && links[0]->width == n.input_value[port].size()))) {
    value = links[0]->value;
  } else {
    auto& out = n.input_value[port];
    for (LinkState* l : links)
      std::copy(l->value.begin(), l->value.end(), out.begin() + static_cast<long>(l->dst_offset));
    value = out;
  }
  n.known[port] = Known{from, to, value.data(), value.size()};
  return value;
}

// Per node: y, y_prev, then the value of each connection into it; its known inputs; its
// connections out, then in (in the graph's order of links into each input).
void RunState::lay_out_blocks() {
  const Graph& g = graph;
  std::size_t nv = 0, nk = 0, nr = 0, np = 0;
  for (const Node& d : g.nodes) {
    nv += 2 * d.output_width, nk += d.inputs.size(), nr += d.out_links.size(), np += d.in_links.size();
    for (const auto& port : d.in_links) nr += port.size();
  }
  for (const Link& d : g.links) nv += d.width;
  values.assign(nv, 0.0);
  known.assign(nk, NodeInputs::Known{});
  link_refs.assign(nr, nullptr);
  port_links.assign(np, {});
  std::span<double> free_values(values);
  std::span<NodeInputs::Known> free_known(known);
  std::span<LinkState*> free_refs(link_refs);
  std::span<std::span<LinkState* const>> free_ports(port_links);
  auto take = [](auto& from, std::size_t size) {
    auto s = from.first(size);
    from = from.subspan(size);
    return s;
  };
  for (const Node& d : g.nodes) {
    NodeState& n = nodes[static_cast<std::size_t>(d.index)];
    n.y = take(free_values, d.output_width);
    n.y_prev = take(free_values, d.output_width);
    n.known = take(free_known, d.inputs.size());
    for (const auto& port : d.in_links)
      for (const Link* l : port) links[static_cast<std::size_t>(l->index)].value = take(free_values, l->width);
    const auto refs = [&](const std::vector<const Link*>& from) {
      std::span<LinkState*> to = take(free_refs, from.size());
      for (std::size_t i = 0; i < from.size(); ++i) to[i] = &links[static_cast<std::size_t>(from[i]->index)];
      return std::span<LinkState* const>(to);
    };
    n.out_links = refs(d.out_links);
    std::span<std::span<LinkState* const>> ports = take(free_ports, d.in_links.size());
    for (std::size_t k = 0; k < d.in_links.size(); ++k) ports[k] = refs(d.in_links[k]);
    n.in_links = ports;
  }
}

RunState::RunState(const Graph& g) : graph(g), nodes(g.nodes.size()), links(g.links.size()) {
  lay_out_blocks();
  for (const Node& d : g.nodes) {
    NodeState& n = nodes[static_cast<std::size_t>(d.index)];
    n.node = &d;
    n.index = d.index;
    n.step = d.step;
    n.sub = d.sub.get();
    n.plugin_inputs = d.plugin_inputs.get();
    n.events = dynamic_cast<const EventOutputs*>(n.sub);
    if (n.events && !n.events->has_events()) n.events = nullptr;
    n.dense = dynamic_cast<const DenseOutputs*>(n.sub);
    if (n.events) n.y_before_event.assign(d.output_width, 0.0);
    n.bounds = d.bounds;
    n.input_value = d.input_start;
    for (const Bond& b : d.bonds) n.bonds.push_back({b.input, b.element, b.output_offset, b.width, b.sign});
  }
  for (const Link& d : g.links) {
    LinkState& l = links[static_cast<std::size_t>(d.index)];
    l.link = &d;
    l.index = d.index;
    l.src = &nodes[static_cast<std::size_t>(d.src->index)];
    l.src_offset = d.src_offset;
    l.width = d.width;
    l.dst = &nodes[static_cast<std::size_t>(d.dst->index)];
    l.dst_input = d.dst_input;
    l.dst_offset = d.dst_offset;
    l.extrapolator = d.extrapolator.get();
    l.whole_port = d.whole_port;
    l.source_first = d.source_first;
    l.convert = d.convert;
    l.scale = d.scale;
    l.offset = d.offset;
    if (d.convert) l.converted.assign(d.width, 0.0);
  }
  for (const Node* d : g.order) order.push_back(&nodes[static_cast<std::size_t>(d->index)]);
  for (const BondPair& p : g.bond_pairs)
    pairs.push_back({&p, &nodes[static_cast<std::size_t>(p.a->index)].bonds[p.bond_a].energy,
                     &nodes[static_cast<std::size_t>(p.b->index)].bonds[p.bond_b].energy});
  coupling_errors.size_for(*this);
  std::size_t attached = 0;
  try {
    for (; attached < nodes.size(); ++attached) nodes[attached].plugin_inputs->attach(nodes[attached]);
  } catch (...) {
    while (attached > 0) nodes[--attached].plugin_inputs->detach();
    throw;
  }
}

void RunState::read_only_what_the_run_reads() {
  for (NodeState& n : nodes) {
    const Node& d = *n.node;
    n.outputs_read.reset(new bool[d.output_width]);
    bool* read = n.outputs_read.get();
    // Outputs just before an event are recorded from every element; the conjugate output of a
    // bond, a bound and a recorded column are read by the host itself.
    std::fill(read, read + d.output_width, n.events != nullptr);
    for (const BondState& b : n.bonds) std::fill(read + b.output_offset, read + b.output_offset + b.width, true);
    for (const Node::Bound& b : n.bounds) read[b.element] = true;
    for (std::size_t e : d.record_elem) read[e] = true;
    for (const LinkState* l : n.out_links) std::fill(read + l->src_offset, read + l->src_offset + l->width, true);
    n.plugin_inputs->outputs_read(read, d.output_width);
  }
}

RunState::~RunState() {
  for (auto& n : nodes) n.plugin_inputs->detach();
}

}  // namespace stride::host
