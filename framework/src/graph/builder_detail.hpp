// What the graph builder's source files share (internal to the host): message helpers and
// GraphBuilder::created, which every phase that creates plugin objects calls. The builder's
// phases (graph_builder.hpp) live one file each, or a few related ones together:
//   graph_builder.cpp        construction, build(), finish(), plugin references, parameters
//   builder_subsystems.cpp   add_subsystems
//   builder_connections.cpp  add_connections
//   builder_checks.cpp       check_unconnected_inputs, check_algebraic_loops, add_bounds,
//                            order_subsystems
//   builder_bonds.cpp        add_power_bonds, describe_bond_delays
//   builder_columns.cpp      add_record_columns
//   builder_text.cpp         String and Binary variables: their connections and columns
// Nothing here throws but what GraphBuilder::created catches; one thread, as the builder.
#pragma once

#include <exception>
#include <string>
#include <vector>

#include "graph/graph_builder.hpp"
#include "stride/host/input/json_input.hpp"

namespace stride::host {
namespace builder_detail {

// "name (input, 3 x m)"; a String or Binary port "name (local, 3 x String)"
std::string describe_port(const PortSpec& p);
std::string describe_port(const TextPortSpec& t);

}  // namespace builder_detail

template <class Make>
auto GraphBuilder::created(const std::string& pointer, Make&& make) -> decltype(make()) {
  try {
    return make();
  } catch (const ParameterError& e) {
    // The plugin named the value: report it where the user wrote it.
    if (e.file().empty()) error(pointer + "/parameters" + e.pointer(), e.what());
    else diags_.push_back({e.file(), e.pointer(), e.what()});
  } catch (const std::exception& e) {
    error(pointer, std::string("could not create: ") + e.what());
  } catch (...) {
    error(pointer, "could not create: the plugin threw an exception that is not a std::exception");
  }
  return decltype(make())();
}

}  // namespace stride::host
