// A co-simulation experiment: the manifest as read and checked and the graph of plugin objects
// it describes.
//
// Order: read_manifest (input/manifest.hpp) -> Experiment (the graph builder's phases:
// plugins, parameters, ports, units, sizes, unconnected inputs, algebraic loops, bonds, order,
// columns; framework/src/graph/graph_builder.hpp) -> run (run/run.hpp), or a Simulation
// stepped from outside (framework/src/run/simulation.hpp). Every check finishes before
// anything steps; every problem found is reported, not only the first.
//
// The graph is immutable once built; each run keeps its own state. The plugin objects are the
// experiment's and keep their own state, so one run at a time uses an experiment (a second,
// concurrent one is refused with std::logic_error); a later run initializes every plugin
// again. The registry must outlive the experiment.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "stride/host/input/manifest.hpp"
#include "stride/host/load/registry.hpp"

namespace stride::host {

// One subsystem instance in the graph.
struct Node;
struct Link;
struct Graph;

class Experiment {
 public:
  // Creates and checks every plugin object. Throws ManifestError.
  Experiment(Manifest manifest, const PluginRegistry& registry);
  ~Experiment();
  Experiment(const Experiment&) = delete;
  Experiment& operator=(const Experiment&) = delete;

  const Manifest& manifest() const { return manifest_; }
  // CSV column names, in order (after "time").
  std::vector<std::string> columns() const;
  // The unit of a numeric CSV column (its output port's, "1" where the port declares none);
  // "" for a text column or a name that is not a column.
  std::string column_unit(const std::string& column) const;
  std::size_t subsystem_count() const;
  std::size_t connection_count() const;
  // Connections whose source output has direct feedthrough ("from -> to").
  std::vector<std::string> feedthrough_connections() const;
  // Connections between different units of one quantity, converted on the way
  // ("a.f -> b.f: kN to N (x 1000)").
  std::vector<std::string> unit_conversions() const;
  // FMU inputs no connection feeds, kept at their start values ("ss.u = [2]").
  std::vector<std::string> unconnected_inputs() const;
  // Power bonds that found no partner subsystem (their energy is not checked against another).
  std::vector<std::string> bond_warnings() const;
  // Cycles through outputs with direct feedthrough, each with where the coupling scheme breaks it.
  std::vector<std::string> feedthrough_loops() const;
  // For each paired power bond, the communication delay its two paths add under the scheme.
  std::vector<std::string> bond_delays() const;
  // The graph as built: immutable (graph/graph.hpp, internal). A run reads it and keeps its own
  // state (run/run_state.hpp).
  const Graph& graph() const { return *graph_; }

 private:
  Manifest manifest_;
  std::unique_ptr<Graph> graph_;
};

}  // namespace stride::host
