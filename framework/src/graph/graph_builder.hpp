// Building the co-simulation graph (graph/graph.hpp) from a checked manifest and the plugins,
// with every check that needs the plugins. The builder is not the graph (Drake's
// DiagramBuilder and its Build()): it holds the graph while it grows and one list of
// diagnostics that every phase appends to, and finish() hands the graph over, immutable from
// then on, or throws every problem found at once. Internal to the host.
//
// Phases, in this order (build() runs them all; a test may run the first few and read graph()
// and diagnostics()):
//   add_subsystems            each subsystem's plugin objects (plugin, FMU, ODE system with
//                             integrator, multibody model with formulation): names, versions,
//                             parameters, ports (an FMU's String and Binary ones beside the
//                             numeric ones), units, bonds; inputs and loggers bound
//   add_connections           element ranges, sizes, units (and conversions), one connection
//                             per input element, the extrapolators; String and Binary
//                             connections between FMUs wired beside them
//   check_unconnected_inputs  every input element fed (complete graphs, nothing failed before)
//   add_power_bonds           one bond per connection into a bonded input, pairs of bonds
//                             (across subsystems that pass the values on), unpaired bonds
//   add_bounds                the monitors' output bounds
//   order_subsystems          the Gauss–Seidel order: those listed first, then the others
//   mark_source_first         Gauss–Seidel: the connections whose reader steps after their
//                             source (Link::source_first); an extrapolator that would hide the
//                             source's new sample from it refused
//   describe_bond_delays      the communication delay of each paired bond's paths
//   check_algebraic_loops     each cycle through outputs with direct feedthrough, and where the
//                             coupling scheme breaks it (a warning for validate)
//   add_record_columns        the columns of results.csv (patterns expanded; an FMU's
//                             variables the record names were made ports when it was created,
//                             its String and Binary variables are text columns);
//                             event rows only with one recorded subsystem
// A phase skips what an earlier one could not build (a connection to a subsystem whose plugin
// failed is not reported again).
//
// Throws: finish() throws ManifestError with the manifest's own problems and every diagnostic;
// the phases never throw for bad input (what a plugin throws while it is created becomes a
// diagnostic at the manifest field that chose it). One thread. The manifest must outlive the
// builder; the registry must outlive the graph (it holds the plugin libraries).
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/graph.hpp"

namespace stride::host {

class FmuModel;  // fmi/model.hpp, the door through which the builder creates an FMU subsystem

class GraphBuilder {
 public:
  GraphBuilder(const Manifest& manifest, const PluginRegistry& registry);
  ~GraphBuilder();
  GraphBuilder(const GraphBuilder&) = delete;
  GraphBuilder& operator=(const GraphBuilder&) = delete;

  void add_subsystems();
  void add_connections();
  void check_unconnected_inputs();
  void check_algebraic_loops();
  void describe_feedthrough_loop(const std::vector<std::pair<std::pair<const Node*, int>, const Link*>>& loop);
  void add_power_bonds();
  void add_bounds();
  void order_subsystems();
  void mark_source_first();
  void describe_bond_delays();
  void add_record_columns();

  // The graph as built so far, and what the phases found wrong.
  const Graph& graph() const { return *graph_; }
  const std::vector<Diagnostic>& diagnostics() const { return diags_; }
  // The graph, when neither the manifest nor a phase found a problem; else throws
  // ManifestError with all of them.
  std::unique_ptr<Graph> finish();
  // Every phase, then finish().
  static std::unique_ptr<Graph> build(const Manifest& manifest, const PluginRegistry& registry);

 private:
  // Where a connection's value comes from: its source, or, when the source output passes an
  // input on (PortSpec::through), the origin of what feeds that input.
  struct Origin {
    const Node* node;
    std::size_t offset;            // into the node's outputs
    std::vector<const Node*> via;  // the subsystems passed
  };

  void error(const std::string& pointer, std::string message);
  std::vector<std::string> names_of(Kind kind) const;
  json in_manifest(const PluginRef& ref) const;
  Logger& logger_for(const Node& n, const std::string& role = {}, const std::string& plugin = {});
  // A plugin reference of the given kind: its name, kind, version and parameters checked.
  const LoadedPlugin* resolve(const PluginRef& ref, Kind kind, const std::string& pointer);
  bool version_ok(const PluginRef& ref, const LoadedPlugin& p);
  bool parameters_ok(const PluginRef& ref, const LoadedPlugin& p);
  // make(), with what it throws reported at `pointer`; an empty result then.
  template <class Make>
  auto created(const std::string& pointer, Make&& make) -> decltype(make());

  // add_subsystems, one subsystem: false when it could not be made.
  bool add_subsystem(SubsystemConfig sc);
  bool create_fmu_subsystem(Node& node, const SubsystemConfig& sc, const LoadedPlugin& p, const FmuModel& fmu,
                            json& fmu_params);
  void add_fmu_port_terms(Node& node, const FmuModel& fmu, const json& fmu_params);
  bool create_ode_subsystem(Node& node, const SubsystemConfig& sc);
  bool create_multibody_subsystem(Node& node, const SubsystemConfig& sc);
  bool fixed_step_ok(const SubsystemConfig& sc);
  bool declare_ports(Node& node, const SubsystemConfig& sc, bool fmu);
  std::vector<Bond> bonded_inputs(const Node& node, const SubsystemConfig& sc);
  void check_through(const Node& node, const SubsystemConfig& sc);
  void check_snapshots(const Node& node, const SubsystemConfig& sc);

  // add_connections, one connection.
  void add_connection(const ConnectionConfig& cc);
  // One end of a connection: a port and its elements [first, first + count).
  struct End {
    int port = -1;
    std::size_t first = 0, count = 0;
  };
  End connection_end(const Node& n, const std::string& written, const std::string& port, std::size_t first,
                     std::size_t count, Direction dir, const std::string& pointer);
  End connection_end(const ConnectionConfig& cc, const Node* n, bool from);  // n null: not found (reported)
  bool ranges_ok(const ConnectionConfig& cc, const PortSpec& from, const End& s, const PortSpec& to, const End& d);
  Node* find_node(const std::string& name, const std::string& pointer);
  int find_port(const Node& n, const std::string& port, Direction dir, const std::string& pointer);

  Origin origin_of(const Link& l) const;
  void pair_bonds(std::vector<std::vector<char>>& paired);
  void warn_unpaired(const std::vector<std::vector<char>>& paired);
  std::string path_delay(const Node* from, const std::vector<const Node*>& via, const Node* to) const;
  void add_port_columns(Node& n, std::size_t port);
  void add_named_columns();
  std::vector<std::string> recorded_fmu_variables(const std::string& sub, const FmuModel& fmu);
  void add_pattern_columns(const std::string& sub, const std::string& port, const std::string& pointer);

  // String and Binary ports (Node::text_ports, an FMU's variables of those types): connected
  // between two FMUs (same type and size, element ranges as for ports, no unit, transformation
  // or extrapolator) and recorded (an array: one column per element).
  std::string text_partner(const Node& n, const std::string& port) const;
  bool text_connection(const ConnectionConfig& cc, Node* src, Node* dst);
  void add_text_connection(const ConnectionConfig& cc, Node& src, const TextPortSpec* from, Node& dst,
                           const TextPortSpec* to);
  void add_text_column(Node& n, const std::string& name, const TextPortSpec& t, const std::string& pointer);

  const Manifest& manifest_;
  const PluginRegistry& reg_;
  const std::string file_;
  std::unique_ptr<Graph> graph_;
  std::vector<Diagnostic> diags_;
  std::map<std::string, Node*> by_name_;
  std::vector<std::string> sub_names_;         // every subsystem the manifest names, built or not
  // Per FMU subsystem: the variables a record may name beside its outputs (for messages).
  std::map<std::string, std::vector<std::string>> fmu_variables_;
  std::set<std::pair<const Node*, std::size_t>> recorded_;       // (node, port) with columns already
  std::set<std::pair<const Node*, std::string>> recorded_text_;  // (node, variable) with a column
  // (node, input): per element, the pointer of the connection feeding it ("" none)
  std::map<std::pair<const Node*, std::string>, std::vector<std::string>> text_fed_;
  std::vector<std::vector<Bond>> bond_ports_;  // per node: each bonded input port, whole width
};

}  // namespace stride::host
