// The builder's power bonds: one bond per connection into a bonded input, the pairs, the
// unpaired ones, and the communication delay of each pair's paths.
#include <algorithm>
#include <cmath>

#include "graph/builder_detail.hpp"

namespace stride::host {
using namespace builder_detail;

// ---- add_power_bonds ------------------------------------------------------------------------

void GraphBuilder::add_power_bonds() {
  // One bond per connection into a bonded input.
  for (Node& n : graph_->nodes)
    for (const Bond& port : bond_ports_[static_cast<std::size_t>(n.index)])
      for (const Link* l : n.in_links[port.input]) {
        Bond b = port;
        b.element = l->dst_offset;
        b.output_offset = port.output_offset + l->dst_offset;
        b.width = l->width;
        if (l->width < n.ports[n.inputs[port.input]].size)
          b.name = port.name + "[" + std::to_string(l->dst_offset) +
                   (l->width > 1 ? ":" + std::to_string(l->dst_offset + l->width) : "") + "]";
        n.bonds.push_back(b);
      }
  std::vector<std::vector<char>> paired(graph_->nodes.size());
  for (const Node& n : graph_->nodes) paired[static_cast<std::size_t>(n.index)].assign(n.bonds.size(), 0);
  pair_bonds(paired);
  if (manifest_.coupling.step_control.enabled && graph_->bond_pairs.empty())
    error("/coupling/step_control",
          "the adaptive macro step is set by the energy residuals of power bonds, and no two "
          "subsystems here exchange power through a bond (`stride plugins describe NAME` shows "
          "a plugin's bonds); use a fixed macro step");
  // Said, not refused: a manifest whose subsystem was swapped for an FMU keeps its monitor.
  if (std::isfinite(manifest_.monitor.energy_residual_limit) && graph_->bond_pairs.empty())
    graph_->bond_warnings.push_back(
        "/monitor/energy_residual_limit watches nothing: no two subsystems here exchange power through a "
        "bond (`stride plugins describe NAME` shows a plugin's bonds), so no energy residual is checked");
  warn_unpaired(paired);
}

GraphBuilder::Origin GraphBuilder::origin_of(const Link& l) const {
  Origin o{l.src, l.src_offset, {}};
  for (std::size_t hop = 0; hop < graph_->nodes.size(); ++hop) {
    const std::size_t pi = o.node->output_port_at(o.offset);
    if (pi >= o.node->ports.size() || o.node->ports[pi].through.empty()) break;
    const int k = o.node->port_index(o.node->ports[pi].through);
    if (k < 0) break;
    const auto in = std::find(o.node->inputs.begin(), o.node->inputs.end(), static_cast<std::size_t>(k));
    if (in == o.node->inputs.end()) break;
    const std::size_t e = o.offset - o.node->output_offset[pi];
    const Link* feed = nullptr;
    for (const Link* f : o.node->in_links[static_cast<std::size_t>(in - o.node->inputs.begin())])
      if (e >= f->dst_offset && e < f->dst_offset + f->width) feed = f;
    if (!feed || std::find(o.via.begin(), o.via.end(), o.node) != o.via.end()) break;
    o.via.push_back(o.node);
    o.offset = feed->src_offset + (e - feed->dst_offset);
    o.node = feed->src;
  }
  return o;
}

// Power bonds between pairs of subsystems (each pair once), directly or across subsystems that
// pass the values on: n's bond input comes from other's bond output, and n's bond output feeds
// other's bond input.
void GraphBuilder::pair_bonds(std::vector<std::vector<char>>& paired) {
  for (const Node& n : graph_->nodes)
    for (std::size_t i = 0; i < n.bonds.size(); ++i) {
      const Bond& b = n.bonds[i];
      for (const Link* in : n.in_links[b.input]) {
        if (in->dst_offset != b.element) continue;
        const Origin from = origin_of(*in);
        const Node* other = from.node;
        if (other == &n) continue;
        for (std::size_t j = 0; j < other->bonds.size(); ++j) {
          const Bond& ob = other->bonds[j];
          if (!(from.offset >= ob.output_offset && from.offset < ob.output_offset + ob.width)) continue;
          for (const Link* l : other->in_links[ob.input]) {
            if (l->dst_offset != ob.element) continue;
            const Origin back = origin_of(*l);
            if (back.node != &n || back.offset < b.output_offset || back.offset >= b.output_offset + b.width) continue;
            paired[static_cast<std::size_t>(n.index)][i] = paired[static_cast<std::size_t>(other->index)][j] = 1;
            if (n.index < other->index) graph_->bond_pairs.push_back({&n, i, other, j, back.via, from.via});
          }
        }
      }
    }
}

void GraphBuilder::warn_unpaired(const std::vector<std::vector<char>>& paired) {
  for (const Node& n : graph_->nodes)
    for (std::size_t i = 0; i < n.bonds.size(); ++i) {
      if (paired[static_cast<std::size_t>(n.index)][i]) continue;
      const Bond& b = n.bonds[i];
      std::string source = "nothing";
      for (const Link* in : n.in_links[b.input])
        if (in->dst_offset == b.element) {
          const Origin o = origin_of(*in);
          const std::size_t pi = o.node->output_port_at(o.offset);
          source = o.node->name + "." + (pi < o.node->ports.size() ? o.node->ports[pi].name : std::string("?"));
          for (auto v = o.via.rbegin(); v != o.via.rend(); ++v) source += " through " + (*v)->name;
        }
      graph_->bond_warnings.push_back(
          "power bond " + n.name + "." + b.name + " has no partner: its input " + n.name + "." +
          n.ports[n.inputs[b.input]].name + " comes from " + source +
          ", which is not the conjugate output of a subsystem it feeds back; its energy is not checked against another "
          "subsystem (a subsystem in between must declare that it passes the value on: PortSpec::through)");
    }
}

// The communication delay a paired bond's path adds (one connection per subsystem passed, plus
// the last): Jacobi, a macro step per connection; Gauss–Seidel, a macro step per connection
// that reads a subsystem later in the order.
std::string GraphBuilder::path_delay(const Node* from, const std::vector<const Node*>& via, const Node* to) const {
  const Graph& g = *graph_;
  const CouplingConfig& c = manifest_.coupling;
  auto order_pos = [&](const Node* x) { return std::find(g.order.begin(), g.order.end(), x) - g.order.begin(); };
  std::vector<const Node*> chain{from};
  for (auto v = via.rbegin(); v != via.rend(); ++v) chain.push_back(*v);
  chain.push_back(to);
  std::string text = chain.front()->name;
  int steps = 0;
  for (std::size_t k = 1; k < chain.size(); ++k) {
    text += " -> " + chain[k]->name;
    if (c.scheme == Scheme::jacobi) ++steps;
    else if (c.scheme == Scheme::gauss_seidel && order_pos(chain[k - 1]) > order_pos(chain[k])) ++steps;
  }
  if (c.scheme == Scheme::multirate)
    return text + ": " + std::to_string(chain.size() - 1) + " connection" + (chain.size() > 2 ? "s" : "") +
           " (multirate: each delays by up to its source's step)";
  return text + ": " + std::to_string(steps) + " macro step" + (steps == 1 ? "" : "s") + " (" +
         number_text(steps * c.macro_step) + " s)";
}

void GraphBuilder::describe_bond_delays() {
  for (const BondPair& p : graph_->bond_pairs)
    graph_->bond_delays.push_back(p.name() + ": " + path_delay(p.a, p.via_ab, p.b) + "; " +
                                  path_delay(p.b, p.via_ba, p.a));
}

}  // namespace stride::host
