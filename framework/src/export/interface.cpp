// The interface of an exported experiment (see interface.hpp).
#include "export/interface.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <map>
#include <set>
#include <stdexcept>

#include "graph/graph.hpp"

namespace stride::host::fmu_export {

namespace {

// The ports shown, in the graph's order: (node, port index), inputs before outputs of a node.
using ShownPort = std::pair<const Node*, std::size_t>;

bool unconnected_input(const Node& n, std::size_t port) {
  for (std::size_t k = 0; k < n.inputs.size(); ++k)
    if (n.inputs[k] == port) return n.in_links[k].empty();
  return false;
}

// An output's min and max: the manifest's divergence bound (/monitor/bounds) of its element (FMI
// 2) or the one bound all its elements share (FMI 3 arrays).
void output_bounds(const Node& n, std::size_t port, std::size_t element, ExportedVariable& v) {
  const std::size_t first = n.output_offset[port] + element, count = v.size;
  std::optional<double> lo, hi;
  std::size_t covered = 0;
  for (const Node::Bound& b : n.bounds) {
    if (b.element < first || b.element >= first + count) continue;
    if (covered > 0 && (lo != b.min || hi != b.max)) return;  // elements bounded differently
    lo = b.min, hi = b.max;
    ++covered;
  }
  if (covered != count) return;
  if (lo && std::isfinite(*lo)) v.min = lo;
  if (hi && std::isfinite(*hi)) v.max = hi;
}

std::vector<ShownPort> shown_ports(const Experiment& ex) {
  const Manifest& man = ex.manifest();
  std::vector<Diagnostic> problems;
  std::vector<bool> listed(man.exports.size(), false);
  std::vector<ShownPort> shown;
  for (const Node& n : ex.graph().nodes)
    for (std::size_t i = 0; i < n.ports.size(); ++i) {
      const PortSpec& p = n.ports[i];
      const bool input = p.direction != Direction::output;
      if (input && !unconnected_input(n, i)) continue;
      const std::string name = n.name + "." + p.name;
      const auto at = std::find(man.exports.begin(), man.exports.end(), name);
      if (at != man.exports.end()) listed[static_cast<std::size_t>(at - man.exports.begin())] = true;
      if (man.exports.empty() || at != man.exports.end()) shown.emplace_back(&n, i);
      else if (input)
        problems.push_back({man.file.string(), "/exports",
                            "input \"" + name + "\" is fed by no connection and not listed: list it (the FMU's " +
                                "importer sets it) or connect it"});
    }
  for (std::size_t i = 0; i < listed.size(); ++i)
    if (!listed[i])
      problems.push_back({man.file.string(), "/exports/" + std::to_string(i),
                          "\"" + man.exports[i] +
                              "\" is neither an output port nor an input no connection feeds (expected "
                              "\"subsystem.port\" of either)"});
  if (!problems.empty()) throw ManifestError(problems);
  std::stable_partition(shown.begin(), shown.end(),
                        [](const ShownPort& s) { return s.first->ports[s.second].direction != Direction::output; });
  return shown;
}

}  // namespace

// The real parameters of plugin subsystems, as FMU parameters.
void add_parameters(const Experiment& ex, const PluginRegistry& registry, bool port_names, std::uint32_t& vr,
                    ExperimentInterface& out) {
  std::set<std::string> taken;
  for (const auto& v : out.model.variables) taken.insert(v.name);
  for (const SubsystemConfig& sc : ex.manifest().subsystems) {
    const LoadedPlugin* lp = sc.fmu.empty() ? registry.find(sc.plugin.plugin) : nullptr;
    if (!lp) continue;
    for (const ParamSpec& ps : lp->info().parameters) {
      if (ps.type != ParamType::real) continue;
      const json& given = sc.plugin.parameters.is_object() && sc.plugin.parameters.contains(ps.name)
                              ? sc.plugin.parameters[ps.name]
                              : ps.default_value;
      const std::string name = port_names ? ps.name : sc.name + "." + ps.name;
      if (!given.is_number() || !taken.insert(name).second) continue;  // a value with a unit, a clash
      ExportedVariable v;
      v.name = name;
      v.value_reference = vr++;
      v.causality = Causality::parameter;
      v.unit = ps.unit == "1" ? "" : ps.unit;
      v.start = given.get<double>();
      v.min = ps.min;
      v.max = ps.max;
      v.description = ps.doc;
      out.model.variables.push_back(v);
      PortBinding b{v.value_reference, sc.name + "." + ps.name, 0, 1, false};
      b.parameter = "/subsystems/" + pointer_escape(sc.name) + "/parameters/" + pointer_escape(ps.name);
      b.start = given.get<double>();
      out.bindings.push_back(b);
    }
  }
}

ExperimentInterface experiment_interface(const Experiment& ex, const PluginRegistry& registry, int fmi_version,
                                         const std::string& model_identifier, bool port_names) {
  ExperimentInterface out;
  ExportedModel& m = out.model;
  const Manifest& man = ex.manifest();
  m.fmi_version = fmi_version;
  m.model_name = model_identifier;
  m.model_identifier = model_identifier;
  m.description = "the Stride co-simulation experiment " + model_identifier;
  m.generation_tool = "Stride (stride export)";
  m.start_time = man.coupling.start;
  m.stop_time = man.coupling.end;
  m.step_size = man.coupling.macro_step;
  // FMU state: what Simulation::can_save() allows once the run is initialized.
  const CouplingConfig& c = man.coupling;
  m.can_get_set_state = c.scheme != Scheme::multirate && !c.iteration.enabled && !c.step_control.enabled &&
                        ex.graph().links.empty();
  for (const Node& n : ex.graph().nodes) m.can_get_set_state = m.can_get_set_state && n.sub->can_save_state();
  if (fmi_version == 3) {
    ExportedVariable time;
    time.name = "time";
    time.value_reference = kTimeValueReference;
    time.causality = Causality::independent;
    time.unit = "s";
    time.description = "the experiment's time";
    m.variables.push_back(time);
  }
  std::uint32_t vr = kTimeValueReference + 1;
  std::map<const Node*, std::vector<std::uint32_t>> node_inputs;  // value references of each node's inputs
  for (const auto& [node, i] : shown_ports(ex)) {
    const Node& n = *node;
    const PortSpec& p = n.ports[i];
    const bool input = p.direction != Direction::output;
    const std::string port = n.name + "." + p.name;
    const std::string shown = port_names ? p.name : port;
    const std::size_t scalars = fmi_version == 2 ? p.size : 1;
    std::vector<double> start;
    if (input)
      for (std::size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] == i) start = n.input_start[k];
    for (std::size_t e = 0; e < scalars; ++e) {
      ExportedVariable v;
      v.name = fmi_version == 2 && p.size > 1 ? shown + "[" + std::to_string(e + 1) + "]" : shown;
      v.value_reference = vr++;
      v.causality = input ? Causality::input : Causality::output;
      v.size = fmi_version == 2 ? 1 : p.size;
      v.unit = p.unit == "1" ? "" : p.unit;
      v.description = p.doc;
      if (input) {
        v.start = v.size == 1 ? json(start.at(e)) : json(start);
        node_inputs[node].push_back(v.value_reference);
      } else {
        if (p.feedthrough) v.dependencies = node_inputs[node];
        output_bounds(n, i, e, v);
      }
      m.variables.push_back(v);
      out.bindings.push_back({v.value_reference, port, e, v.size, input});
    }
  }
  add_parameters(ex, registry, port_names, vr, out);
  return out;
}

json interface_json(const ExperimentInterface& i) {
  json vars = json::array();
  for (const PortBinding& b : i.bindings)
    vars.push_back(
        {{"value_reference", b.value_reference}, {"port", b.port}, {"element", b.element}, {"size", b.size},
         {"input", b.input}, {"parameter", b.parameter}, {"start", b.start}});
  return {{"format", 1}, {"fmi_version", i.model.fmi_version}, {"token", i.model.token}, {"variables", vars}};
}

std::vector<PortBinding> bindings_of(const json& j) {
  if (!j.is_object() || j.value("format", 0) != 1 || !j.contains("variables") || !j["variables"].is_array())
    throw std::runtime_error("stride_export.json: expected {\"format\": 1, \"variables\": [...]}");
  std::vector<PortBinding> out;
  for (const json& v : j["variables"]) {
    if (!v.is_object() || !v.contains("value_reference") || !v.contains("port") || !v.contains("element") ||
        !v.contains("size"))
      throw std::runtime_error("stride_export.json: a variable without value_reference, port, element and size");
    out.push_back({v["value_reference"].get<std::uint32_t>(), v["port"].get<std::string>(),
                   v["element"].get<std::size_t>(), v["size"].get<std::size_t>(), v.value("input", false),
                   v.value("parameter", std::string()), v.value("start", 0.0)});
  }
  return out;
}

}  // namespace stride::host::fmu_export
