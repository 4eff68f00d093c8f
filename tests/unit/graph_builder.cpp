// The graph builder's phases one at a time (graph/graph_builder.hpp): each check reports what
// it is there to find, and only that, when the phases before it have run; what it builds
// (links, bond pairs, order, columns) is what the manifest's wiring implies. Test plugins:
// tests/broken_plugins/runtime (test_gain: y = k u with direct feedthrough; test_ramp).
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graph/graph_builder.hpp"
#include "shipped_plugins.hpp"
#include "stride/host/graph/experiment.hpp"

using namespace stride::host;

namespace {

const std::string kDir = STRIDE_SOURCE_DIR "/tests/manifests/";

const PluginRegistry& registry() { return stride_test::registry_with_test_plugins(); }

std::string all(const std::vector<Diagnostic>& diags) {
  std::string s;
  for (const auto& d : diags) s += d.str() + "\n";
  return s;
}

std::vector<std::string> names(const std::vector<const Node*>& nodes) {
  std::vector<std::string> v;
  for (const Node* n : nodes) v.push_back(n->name);
  return v;
}

}  // namespace

TEST_CASE("graph builder: subsystems, then connections, each as the manifest lists them") {
  const Manifest m = read_manifest(kDir + "ramp_gain.json");
  GraphBuilder b(m, registry());
  b.add_subsystems();
  REQUIRE(b.diagnostics().empty());
  const Graph& g = b.graph();
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.links.empty());
  // src: one output y; amp: input u, output y, both of width 1.
  const Node& amp = *std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.name == "amp"; });
  CHECK(amp.inputs.size() == 1);
  CHECK(amp.output_width == 1);
  CHECK(amp.in_links[0].empty());
  b.add_connections();
  REQUIRE(b.diagnostics().empty());
  REQUIRE(g.links.size() == 1);
  CHECK(g.links[0].src->name == "src");
  CHECK(g.links[0].dst == &amp);
  CHECK(amp.in_links[0] == std::vector<const Link*>{&g.links[0]});
  CHECK_FALSE(g.links[0].whole_port);  // decided by the check of unconnected inputs
  b.check_unconnected_inputs();
  CHECK(g.links[0].whole_port);  // the only link into amp.u, all of it
  CHECK(b.diagnostics().empty());
}

TEST_CASE("graph builder: a feedthrough loop is allowed and described with where the scheme breaks it") {
  {
    const Manifest m = read_manifest(kDir + "algebraic_loop.json");
    GraphBuilder b(m, registry());
    b.add_subsystems();
    b.add_connections();
    b.check_unconnected_inputs();
    b.check_algebraic_loops();
    INFO(all(b.diagnostics()));
    CHECK(b.diagnostics().empty());
    REQUIRE(b.graph().feedthrough_loops.size() == 1);
    const std::string& msg = b.graph().feedthrough_loops[0];
    CHECK((msg.find("feedthrough loop a.y -> b.y -> a.y") == 0 || msg.find("feedthrough loop b.y -> a.y -> b.y") == 0));
    CHECK(msg.find("every connection of the loop reads its source's output of the previous communication point") !=
          std::string::npos);
  }
  // Gauss–Seidel, a before b: a reads b's output of the previous communication point.
  const Manifest m = read_manifest(kDir + "algebraic_loop.json",
                                   {"/coupling/scheme=\"gauss_seidel\"", "/coupling/order=[\"a\", \"b\"]"});
  GraphBuilder b(m, registry());
  b.add_subsystems();
  b.add_connections();
  b.check_unconnected_inputs();
  b.order_subsystems();
  b.mark_source_first();
  b.check_algebraic_loops();
  INFO(all(b.diagnostics()));
  REQUIRE(b.graph().feedthrough_loops.size() == 1);
  CHECK(b.graph().feedthrough_loops[0].find(
            "where a subsystem steps before its source (/coupling/order): b.y -> a.u read(s)") != std::string::npos);
}

TEST_CASE("graph builder: an input left unconnected is reported by its phase, and the loop check then waits") {
  Manifest m = read_manifest(kDir + "ramp_gain.json", {"/connections=[]"});
  GraphBuilder b(m, registry());
  b.add_subsystems();
  b.add_connections();
  REQUIRE(b.diagnostics().empty());
  b.check_unconnected_inputs();
  INFO(all(b.diagnostics()));
  REQUIRE(b.diagnostics().size() == 1);
  CHECK(b.diagnostics()[0].message.find("input \"amp.u\"") != std::string::npos);
  CHECK(b.diagnostics()[0].message.find("not connected") != std::string::npos);
  b.check_algebraic_loops();  // meaningless on a graph with holes: adds nothing
  CHECK(b.diagnostics().size() == 1);
}

TEST_CASE("graph builder: order, bounds and record columns follow the manifest") {
  const Manifest m = read_manifest(
      kDir + "ramp_gain.json",
      {"/coupling/order=[\"amp\"]", "/record/variables=[\"amp.y\"]", "/monitor={\"bounds\": {\"amp.y\": [-1, 5]}}"});
  GraphBuilder b(m, registry());
  b.add_subsystems();
  b.add_connections();
  b.add_bounds();
  b.order_subsystems();
  b.add_record_columns();
  INFO(all(b.diagnostics()));
  REQUIRE(b.diagnostics().empty());
  const Graph& g = b.graph();
  // Listed first, then the others in the manifest's order.
  CHECK(names(g.order) == std::vector<std::string>{"amp", "src"});
  CHECK(g.columns == std::vector<std::string>{"amp.y"});
  for (const Node& n : g.nodes) {
    CHECK(n.record_cols.size() == (n.name == "amp" ? 1u : 0u));
    CHECK(n.bounds.size() == (n.name == "amp" ? 1u : 0u));
  }
  const Node& amp = *g.order[0];
  REQUIRE(amp.bounds.size() == 1);
  CHECK(amp.bounds[0].min == -1.0);
  CHECK(amp.bounds[0].max == 5.0);
  CHECK(amp.bounds[0].label == "amp.y");
}

TEST_CASE("graph builder: power bonds pair across the connections that close them") {
  // crane1_rim.json: the cylinder's actuator bond is closed by the RIM (rim.s, rim.s_dot ->
  // cylinder; cylinder.f_h -> rim), the crane's is not (its velocity goes to the RIM, whose
  // force does not come back to it); crane1_zoh.json wires crane and cylinder directly.
  {
    const Manifest m = load_manifest(STRIDE_SOURCE_DIR "/manifests/crane1_rim.json");
    GraphBuilder b(m, registry());
    b.add_subsystems();
    b.add_connections();
    b.add_power_bonds();
    INFO(all(b.diagnostics()));
    REQUIRE(b.diagnostics().empty());
    const Graph& g = b.graph();
    REQUIRE(g.bond_pairs.size() == 1);
    CHECK(g.bond_pairs[0].name() == "rim.actuator <-> cylinder.actuator");
    REQUIRE(g.bond_warnings.size() == 1);
    CHECK(g.bond_warnings[0].find("power bond crane.actuator has no partner") == 0);
    CHECK(g.bond_delays.empty());  // not yet described
    b.order_subsystems();
    b.describe_bond_delays();
    REQUIRE(g.bond_delays.size() == 1);
    CHECK(g.bond_delays[0].find("rim -> cylinder: 1 macro step") != std::string::npos);
  }
  {
    const Manifest m = load_manifest(STRIDE_SOURCE_DIR "/manifests/crane1_zoh.json");
    GraphBuilder b(m, registry());
    b.add_subsystems();
    b.add_connections();
    b.add_power_bonds();
    REQUIRE(b.graph().bond_pairs.size() == 1);
    CHECK(b.graph().bond_pairs[0].name() == "crane.actuator <-> cylinder.actuator");
    CHECK(b.graph().bond_warnings.empty());
  }
}

TEST_CASE("graph builder: every phase reports, and finish() throws them all at once") {
  // An unknown plugin, a connection to a port that does not exist and an unknown subsystem in
  // the order: three phases, three diagnostics, one ManifestError.
  const Manifest m = read_manifest(kDir + "ramp_gain.json", {"/subsystems/src/plugin=test_rampp",
                                                             "/connections/0/to=amp.v", "/coupling/order=[\"ampp\"]"});
  GraphBuilder b(m, registry());
  b.add_subsystems();
  CHECK(b.diagnostics().size() == 1);
  b.add_connections();
  CHECK(b.diagnostics().size() == 2);
  b.order_subsystems();
  CHECK(b.diagnostics().size() == 3);
  try {
    b.finish();
    FAIL("finish() returned a graph with problems");
  } catch (const ManifestError& e) {
    INFO(e.what());
    REQUIRE(e.diagnostics().size() == 3);
    CHECK(e.diagnostics()[0].pointer == "/subsystems/src/plugin");
    CHECK(e.diagnostics()[1].pointer == "/connections/0/to");
    CHECK(e.diagnostics()[2].pointer == "/coupling/order/0");
  }
}
