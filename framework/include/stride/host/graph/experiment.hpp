// A co-simulation experiment: the manifest as read and checked and the graph of plugin objects
// it describes.
//
// Order: read_manifest (input/manifest.hpp) -> Experiment (plugins, parameters, ports, units,
// sizes, unconnected inputs, algebraic loops) -> run (run/run.hpp). Every check finishes
// before anything steps; every problem found is reported, not only the first.
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
  // For each paired power bond, the communication delay its two paths add under the scheme.
  std::vector<std::string> bond_delays() const;
  Graph& graph() { return *graph_; }

 private:
  Manifest manifest_;
  std::unique_ptr<Graph> graph_;
};

}  // namespace stride::host
