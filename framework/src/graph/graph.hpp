// The co-simulation graph: what building an experiment produces (graph/graph_builder.hpp) and
// every run reads (run/run_state.hpp). Internal to the host.
//
// Immutable once built: the subsystems (Node) with their ports and output layout, the
// connections (Link) with their element ranges and unit conversions, the power bonds and the
// pairs they form, the output bounds, the Gauss–Seidel order and the recorded columns.
// Experiment::graph() hands it out const. What changes while a run steps (times, outputs,
// extrapolator samples, cached input values, bond energies, snapshots) is the run's: RunState.
//
// Ownership: the graph owns the plugin objects (subsystems, extrapolators) and the host objects
// they were bound to when they were created: each node's NodeInputs and the log (RunLog).
// Plugin objects keep their own state, so one run at a time drives a graph: a RunState
// attaches to every NodeInputs when it is made (a second one is refused) and detaches at its
// end. Nodes and links are stored by value; the builder reserves their vectors once, so the
// pointers between them never dangle.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/text_signal.hpp"
#include "stride/host/graph/experiment.hpp"

namespace stride::host {

struct Node;
struct NodeState;
class RunLog;

// One connection: source output elements -> destination input elements, through an
// extrapolator.
struct Link {
  const Node* src = nullptr;
  std::size_t src_offset = 0;  // into the source's outputs
  std::size_t width = 0;
  const Node* dst = nullptr;
  std::size_t dst_input = 0;   // input index at the destination
  std::size_t dst_offset = 0;  // first element of that input fed by this link
  // The plugin object: it keeps the pushed samples, which the run resets at initialization.
  std::shared_ptr<Extrapolator> extrapolator;
  int index = 0;            // in Graph::links
  bool whole_port = false;  // the only link into that input, covering all of it
  // Gauss–Seidel: the source comes before the reader in the order, so the reader steps through a
  // macro step after the source pushed its sample at the end of it (LinkState::ahead_from).
  bool source_first = false;
  // Unit conversion from the source's unit to the destination's (kN -> N, bar -> Pa): samples
  // are converted before the extrapolator sees them.
  bool convert = false;
  double scale = 1.0, offset = 0.0;
  ConnectionConfig config;
};

// Power bond of one subsystem: an effort input with the flow output of the same bond (or a
// flow input with an effort output). Power in = sign · u·y. One bond per connection feeding a
// bonded input (an input port fed element-wise by several subsystems has one bond per feeding
// subsystem). Its power and energy are the run's (BondState).
struct Bond {
  std::string name;
  std::size_t input = 0;          // input index
  std::size_t element = 0;        // first element of the input in this bond
  std::size_t output_offset = 0;  // into the outputs: the conjugate output's element matching `element`
  std::size_t width = 0;
  double sign = 1.0;
};

// The host's Inputs of one node: what its plugin objects read their inputs from, bound once
// when they are created, and the time their log messages carry. Both follow the run attached
// (RunState's constructor), which owns the values; reading an input with no run attached
// throws std::logic_error. Its evaluate(), attach() and detach() are the run's
// (run/run_state.cpp).
class NodeInputs final : public Inputs {
 public:
  using Known = Inputs::Known;
  // Throws std::logic_error when another run is attached.
  void attach(NodeState& state);
  void detach();
  // Which output elements the run reads (Inputs::output_read); null: every one.
  void outputs_read(const bool* read, std::size_t count) { set_outputs_read(read, count); }
  // Where the log sinks of the node's plugin objects read the time of a message.
  const double* const* clock() const { return &clock_; }

 protected:
  std::span<const double> evaluate(std::size_t port, double t) override;

 private:
  static constexpr double kNoTime = 0.0;
  NodeState* state_ = nullptr;
  const double* clock_ = &kNoTime;
};

// One subsystem instance.
struct Node {
  struct Bound {
    std::size_t element;
    double min, max;
    std::string label;
  };
  std::string name;
  std::string plugin;  // plugin(s) for error reports
  std::string pointer;
  bool fmu = false;  // an FMU: its unconnected inputs keep their start values
  double step = 0.0;
  std::shared_ptr<Subsystem> sub;                                              // the plugin object
  std::unique_ptr<NodeInputs> plugin_inputs = std::make_unique<NodeInputs>();  // bound to sub
  std::vector<PortSpec> ports;
  std::vector<TextPortSpec> text_ports;  // String and Binary ports (an FMU's), beside the numeric ones
  // A model's own names of single elements of its array ports (an FMU's "u[1]"): name ->
  // (port index, element). Connections may name an element so.
  std::map<std::string, std::pair<std::size_t, std::size_t>> element_names;
  std::vector<std::size_t> inputs;         // port indices of the inputs, in order
  std::vector<std::size_t> output_offset;  // per port index (outputs only)
  std::size_t output_width = 0;
  std::vector<std::vector<const Link*>> in_links;  // per input index: the links feeding its elements
  std::vector<std::vector<double>> input_start;    // per input index: its value where no link feeds it
  std::vector<const Link*> out_links;
  std::vector<Bond> bonds;
  std::vector<Bound> bounds;             // divergence monitors on outputs
  std::vector<std::size_t> record_cols;  // CSV column of each recorded output element
  std::vector<std::size_t> record_elem;  // the output element of each column
  // Recorded String and Binary variables (an FMU's): their CSV columns and values.
  struct TextColumn {
    std::size_t col;
    std::shared_ptr<const TextSignal> signal;
  };
  std::vector<TextColumn> text_cols;
  bool recorded = false;  // any column, numeric or text
  int index = 0;                         // in Graph::nodes

  // The output port holding element `offset` of the outputs; ports.size() when none does.
  std::size_t output_port_at(std::size_t offset) const {
    for (std::size_t i = 0; i < ports.size(); ++i)
      if (ports[i].direction == Direction::output && offset >= output_offset[i] &&
          offset < output_offset[i] + ports[i].size)
        return i;
    return ports.size();
  }
  int port_index(const std::string& port) const {
    for (std::size_t i = 0; i < ports.size(); ++i)
      if (ports[i].name == port) return static_cast<int>(i);
    return -1;
  }
  // A String or Binary port by its name or an alias; null when none is (or a numeric port is)
  // so named.
  const TextPortSpec* text_port(const std::string& port) const {
    if (port_index(port) >= 0) return nullptr;
    for (const TextPortSpec& t : text_ports)
      if (t.name == port || std::find(t.aliases.begin(), t.aliases.end(), port) != t.aliases.end()) return &t;
    return nullptr;
  }
};

// Two subsystems exchanging power through conjugate bonds: the effort output of one feeds the
// effort input of the other and the flow outputs likewise. Exact coupling makes the energies
// that enter both through the bond cancel; their sum is the generalized energy residual
// (RunState::residual).
struct BondPair {
  const Node* a;
  std::size_t bond_a;
  const Node* b;
  std::size_t bond_b;
  std::string name() const;
  // Subsystems that pass the bond's values on (PortSpec::through), from a to b and back.
  std::vector<const Node*> via_ab, via_ba;
};

struct Graph {
  // First, so that it is destroyed last: plugin objects may log until they are gone.
  std::unique_ptr<RunLog> log;
  std::vector<BondPair> bond_pairs;
  std::vector<Node> nodes;                 // capacity reserved before the first is added: never reallocated
  std::vector<Link> links;                 // likewise
  std::vector<std::string> columns;        // CSV columns after "time"
  std::vector<const Node*> order;          // Gauss–Seidel order / initialization order
  std::vector<std::string> conversions;    // connections that convert units, for `validate`
  std::vector<std::string> bond_warnings;  // bonds left without a partner, for `validate`
  std::vector<std::string> feedthrough_loops;  // and where the scheme breaks each, for `validate`
  std::vector<std::string> bond_delays;    // communication delay of each paired bond's paths
  std::vector<std::string> unconnected;    // FMU inputs kept at their start values, for `validate`
  std::size_t text_connections = 0;        // String and Binary connections (beside the links)
  Graph();
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
};

}  // namespace stride::host
