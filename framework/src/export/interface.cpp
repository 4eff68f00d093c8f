// The interface of an exported experiment (see interface.hpp).
#include "export/interface.hpp"

#include <stdexcept>

#include "graph/graph.hpp"

namespace stride::host::fmu_export {

ExperimentInterface experiment_interface(const Experiment& ex, int fmi_version, const std::string& model_identifier) {
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
  std::uint32_t vr = 1;
  for (const Node& n : ex.graph().nodes) {
    for (const PortSpec& p : n.ports) {
      if (p.direction != Direction::output) continue;
      const std::string port = n.name + "." + p.name;
      const std::size_t scalars = fmi_version == 2 ? p.size : 1;
      for (std::size_t e = 0; e < scalars; ++e) {
        ExportedVariable v;
        v.name = fmi_version == 2 && p.size > 1 ? port + "[" + std::to_string(e + 1) + "]" : port;
        v.value_reference = vr++;
        v.causality = Causality::output;
        v.size = fmi_version == 2 ? 1 : p.size;
        v.unit = p.unit == "1" ? "" : p.unit;
        v.description = p.doc;
        m.variables.push_back(v);
        out.bindings.push_back({v.value_reference, port, e, v.size});
      }
    }
  }
  return out;
}

json interface_json(const ExperimentInterface& i) {
  json vars = json::array();
  for (const PortBinding& b : i.bindings)
    vars.push_back(
        {{"value_reference", b.value_reference}, {"port", b.port}, {"element", b.element}, {"size", b.size}});
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
                   v["element"].get<std::size_t>(), v["size"].get<std::size_t>()});
  }
  return out;
}

}  // namespace stride::host::fmu_export
