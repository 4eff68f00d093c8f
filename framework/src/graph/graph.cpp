// The experiment: its manifest and the graph the builder made of it (graph_builder.hpp).
#include "graph/graph.hpp"

#include "graph/graph_builder.hpp"
#include "core/run_log.hpp"

namespace stride::host {

Graph::Graph() = default;
Graph::~Graph() = default;

std::string BondPair::name() const {
  return a->name + "." + a->bonds[bond_a].name + " <-> " + b->name + "." + b->bonds[bond_b].name;
}

Experiment::~Experiment() = default;

std::vector<std::string> Experiment::columns() const { return graph_->columns; }
std::string Experiment::column_unit(const std::string& column) const {
  for (const Node& n : graph_->nodes)
    for (std::size_t i = 0; i < n.record_cols.size(); ++i) {
      if (graph_->columns[n.record_cols[i]] != column) continue;
      const std::size_t port = n.output_port_at(n.record_elem[i]);
      if (port >= n.ports.size()) return "1";
      return n.ports[port].unit.empty() ? "1" : n.ports[port].unit;
    }
  return "";
}
std::size_t Experiment::subsystem_count() const { return graph_->nodes.size(); }
std::size_t Experiment::connection_count() const { return graph_->links.size() + graph_->text_connections; }
std::vector<std::string> Experiment::unit_conversions() const { return graph_->conversions; }
std::vector<std::string> Experiment::unconnected_inputs() const { return graph_->unconnected; }
std::vector<std::string> Experiment::bond_warnings() const { return graph_->bond_warnings; }
std::vector<std::string> Experiment::feedthrough_loops() const { return graph_->feedthrough_loops; }
std::vector<std::string> Experiment::bond_delays() const { return graph_->bond_delays; }
std::vector<std::string> Experiment::feedthrough_connections() const {
  std::vector<std::string> out;
  for (const Link& l : graph_->links) {
    const std::size_t i = l.src->output_port_at(l.src_offset);
    if (i < l.src->ports.size() && l.src->ports[i].feedthrough)
      out.push_back(l.config.from_text + " -> " + l.config.to_text);
  }
  return out;
}

Experiment::Experiment(Manifest manifest, const PluginRegistry& registry)
    : manifest_(std::move(manifest)), graph_(GraphBuilder::build(manifest_, registry)) {}

}  // namespace stride::host
