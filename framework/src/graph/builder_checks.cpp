// The builder's checks of the whole graph (unconnected inputs, algebraic loops), the bounds
// and the Gauss–Seidel order.
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <set>

#include "graph/builder_detail.hpp"
#include "core/text_signal.hpp"

namespace stride::host {
using namespace builder_detail;

// ---- Checks of the whole graph --------------------------------------------------------------

// Only meaningful when every subsystem was built and every connection could be resolved.
void GraphBuilder::check_unconnected_inputs() {
  if (!diags_.empty() || graph_->nodes.size() != manifest_.subsystems.size() || !manifest_.graph_complete) return;
  for (const Node& n : graph_->nodes)
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const PortSpec& in = n.ports[n.inputs[k]];
      std::size_t fed = 0;
      for (const Link* l : n.in_links[k]) fed += l->width;
      if (n.in_links[k].size() == 1)
        graph_->links[static_cast<std::size_t>(n.in_links[k][0]->index)].whole_port = fed == in.size;
      if (fed == in.size) continue;
      if (n.fmu || (manifest_.external_inputs && !fed)) {
        graph_->unconnected.push_back(n.name + "." + in.name + " = " + json(n.input_start[k]).dump() +
                                      (fed ? " where no connection feeds it" : "") +
                                      (n.fmu ? "" : " (an input of the exported FMU)"));
        continue;
      }
      error("/connections",
            "input \"" + n.name + "." + in.name + "\" (" + describe_port(in) + ") is " +
                (fed ? "only partly connected (" + std::to_string(fed) + " of " + std::to_string(in.size) + " elements)"
                     : std::string("not connected")) +
                "; add {\"from\": \"<subsystem>.<output>\", \"to\": \"" + n.name + "." + in.name + "\"}");
    }
  // An FMU's String and Binary inputs no connection feeds keep theirs too.
  for (const Node& n : graph_->nodes) {
    for (const TextPortSpec& t : n.text_ports) {
      if (!t.input()) continue;
      const auto fed = text_fed_.find({&n, t.name});
      const bool partly = fed != text_fed_.end();  // an array some of whose elements are fed
      if (partly &&
          std::none_of(fed->second.begin(), fed->second.end(), [](const std::string& p) { return p.empty(); }))
        continue;
      std::string value = t.start.dump(-1, ' ', true);  // ASCII: cut anywhere
      if (value.size() > 80) value = value.substr(0, 76) + "...\"";
      graph_->unconnected.push_back(n.name + "." + t.name + " = " + value +
                                    (partly ? " where no connection feeds it" : ""));
    }
  }
}

// A cycle through outputs with direct feedthrough: vertex = (node, output port); edge o -> o'
// when o feeds an input of the node of o' and o' has feedthrough. No scheme solves such a loop
// within a step: subsystems step one after another or side by side, so some connection of the
// loop reads an earlier communication point (every one under Jacobi, those read against
// /coupling/order under Gauss–Seidel), unless the macro steps are iterated. The loop is allowed
// and `validate` says where it is broken.
void GraphBuilder::check_algebraic_loops() {
  if (!diags_.empty() || !manifest_.graph_complete) return;
  using Vertex = std::pair<const Node*, int>;
  std::map<Vertex, std::vector<std::pair<Vertex, const Link*>>> adj;
  for (const Link& l : graph_->links) {
    const std::size_t at = l.src->output_port_at(l.src_offset);
    const int so = at < l.src->ports.size() ? int(at) : -1;
    for (std::size_t i = 0; i < l.dst->ports.size(); ++i)
      if (l.dst->ports[i].direction == Direction::output && l.dst->ports[i].feedthrough && l.src->ports[so].feedthrough)
        adj[{l.src, so}].push_back({{l.dst, int(i)}, &l});
  }
  std::map<Vertex, int> state;
  std::vector<std::pair<Vertex, const Link*>> stack;
  std::function<void(Vertex)> dfs = [&](Vertex v) {
    state[v] = 1;
    for (const auto& edge : adj[v]) {
      const Vertex w = edge.first;  // no structured binding: clang 14 cannot capture one
      stack.push_back({v, edge.second});
      if (state[w] == 1) {
        auto it = std::find_if(stack.begin(), stack.end(), [&](const auto& e) { return e.first == w; });
        describe_feedthrough_loop({it, stack.end()});
      } else if (state[w] == 0) {
        dfs(w);
      }
      stack.pop_back();
    }
    state[v] = 2;
  };
  for (auto& [v, _] : adj)
    if (state[v] == 0) dfs(v);
}

void GraphBuilder::describe_feedthrough_loop(
    const std::vector<std::pair<std::pair<const Node*, int>, const Link*>>& loop) {
  const CouplingConfig& c = manifest_.coupling;
  std::string cycle, late;
  for (const auto& [v, link] : loop) {
    cycle += v.first->name + "." + v.first->ports[std::size_t(v.second)].name + " -> ";
    if (c.scheme == Scheme::gauss_seidel && !link->source_first)
      late += std::string(late.empty() ? "" : ", ") + link->config.from_text + " -> " + link->config.to_text;
  }
  cycle += loop.front().first.first->name + "." +
           loop.front().first.first->ports[std::size_t(loop.front().first.second)].name;
  std::string how;
  if (c.iteration.enabled) how = "each macro step is iterated until the loop's values agree (/coupling/iteration)";
  else if (c.scheme == Scheme::jacobi)
    how =
        "the \"jacobi\" scheme breaks it: every connection of the loop reads its source's output of the previous "
        "communication point (extrapolated), a delay of one macro step";
  else if (c.scheme == Scheme::gauss_seidel)
    how = "the \"gauss_seidel\" scheme breaks it where a subsystem steps before its source (/coupling/order): " + late +
          " read(s) the previous communication point, a delay of one macro step";
  else
    how =
        "the \"multirate\" scheme breaks it: the subsystem stepped first reads the other's output extrapolated from "
        "earlier samples";
  graph_->feedthrough_loops.push_back(
      "feedthrough loop " + cycle + ": " + how +
      "; at the start time its outputs are evaluated in passes from zero inputs, not solved" +
      (c.iteration.enabled ? ""
                           : "; \"coupling\": {\"iteration\": {\"enabled\": true}} solves the loop "
                             "in every macro step instead"));
}

// ---- add_bounds, order_subsystems, describe_bond_delays, add_record_columns -----------------

void GraphBuilder::add_bounds() {
  for (const auto& ob : manifest_.monitor.bounds) {
    Node* n = find_node(ob.subsystem, ob.pointer);
    if (!n) continue;
    const int pi = find_port(*n, ob.port, Direction::output, ob.pointer);
    if (pi < 0) continue;
    const PortSpec& ps = n->ports[static_cast<std::size_t>(pi)];
    const std::size_t first = ob.first, count = ob.count ? ob.count : ps.size;
    if (first >= ps.size || count > ps.size - first) {
      error(ob.pointer, "elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
                            ") out of range: " + ob.subsystem + "." + ob.port + " has " + std::to_string(ps.size) +
                            " elements");
      continue;
    }
    for (std::size_t e = first; e < first + count; ++e)
      n->bounds.push_back({n->output_offset[static_cast<std::size_t>(pi)] + e, ob.min, ob.max,
                           ob.subsystem + "." + ob.port + (ps.size > 1 ? "[" + std::to_string(e) + "]" : "")});
  }
}

void GraphBuilder::order_subsystems() {
  Graph& g = *graph_;
  std::vector<bool> ordered(g.nodes.size(), false);
  for (std::size_t i = 0; i < manifest_.coupling.order.size(); ++i) {
    const auto& name = manifest_.coupling.order[i];
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      if (std::find(sub_names_.begin(), sub_names_.end(), name) == sub_names_.end()) {
        std::string msg = "unknown subsystem \"" + name + "\"";
        if (auto c = closest(name, sub_names_); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
        error("/coupling/order/" + std::to_string(i), msg + "; subsystems: " + listed(sub_names_));
      }
    } else if (ordered[static_cast<std::size_t>(it->second->index)]) {
      error("/coupling/order/" + std::to_string(i), "subsystem \"" + name + "\" is listed twice");
    } else {
      g.order.push_back(it->second);
      ordered[static_cast<std::size_t>(it->second->index)] = true;
    }
  }
  for (const Node& n : g.nodes)
    if (!ordered[static_cast<std::size_t>(n.index)]) g.order.push_back(&n);
}

// Gauss–Seidel means that a later subsystem reads what an earlier one pushed in the same macro
// step. A hold (an extrapolator whose holds_from() is finite: zoh, lagrange of order 0) is held
// by the host from the start of that macro step (LinkState::ahead_from). Any other extrapolator
// must use a sample newer than the time asked: given fresh samples 0 at T and 1 at T + H and
// asked for T + H/2, an answer of 0 in every element means the reader would get the Jacobi
// value while the manifest says gauss_seidel, and the connection is refused. The host resets
// every extrapolator at initialization, so the probe leaves nothing behind. Iterative coupling
// feeds those connections itself (the line to the source's value) and needs neither.
void GraphBuilder::mark_source_first() {
  const CouplingConfig& c = manifest_.coupling;
  if (c.scheme != Scheme::gauss_seidel || c.iteration.enabled || !diags_.empty()) return;
  Graph& g = *graph_;
  std::vector<std::size_t> place(g.nodes.size());
  for (std::size_t i = 0; i < g.order.size(); ++i) place[static_cast<std::size_t>(g.order[i]->index)] = i;
  std::set<std::string> refused;  // one report per connection (a connection may be several links)
  for (Link& l : g.links) {
    if (place[static_cast<std::size_t>(l.src->index)] > place[static_cast<std::size_t>(l.dst->index)]) continue;
    l.source_first = true;
    const auto reads_newer = created(l.config.extrapolator.pointer, [&] {
      Extrapolator& e = *l.extrapolator;
      std::vector<double> older(l.width, 0.0), newer(l.width, 1.0), u(l.width, 0.0);
      e.reset(l.width);
      e.push(c.start, older);
      e.push(c.start + c.macro_step, newer);
      if (std::isfinite(e.holds_from())) return std::optional<bool>(true);
      e.evaluate(c.start + 0.5 * c.macro_step, u);
      return std::optional<bool>(std::any_of(u.begin(), u.end(), [](double v) { return v != 0.0; }));
    });
    if (!reads_newer || *reads_newer || !refused.insert(l.config.pointer).second) continue;
    const ConnectionConfig& cc = l.config;
    error(cc.extrapolator.pointer,
          "under the \"gauss_seidel\" scheme \"" + cc.to_subsystem + "\" steps after \"" + cc.from_subsystem +
              "\" (/coupling/order) and must read the sample \"" + cc.from_text +
              "\" pushed at the end of the macro step, but extrapolator \"" + cc.extrapolator.plugin +
              "\" answers inside the step without it (asked halfway between samples 0 and 1 it gives 0): the "
              "run would be Jacobi; use an extrapolator that interpolates between samples (lagrange, linear) "
              "or holds one (zoh), reverse the order, or use the \"jacobi\" scheme");
  }
}

}  // namespace stride::host
