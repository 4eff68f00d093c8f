// `stride export --ssp` (see stride/host/export/export.hpp): a manifest as an SSP 1.0 package
// that read_ssp() (ssp/reader.cpp) reads back as the same manifest.
#include <pugixml.hpp>

#include <map>
#include <set>
#include <sstream>

#include "export/archive.hpp"
#include "fmi/fmu.hpp"
#include "fmi/unpack.hpp"
#include "graph/graph.hpp"
#include "input/units.hpp"
#include "stride/host/api/commands.hpp"
#include "stride/host/export/export.hpp"
#include "stride/host/ssp/ssp.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

// Stride's settings of an element, as the reader takes them back (ssp::kStrideAnnotation).
void annotate(pugi::xml_node element, const json& settings) {
  if (settings.empty()) return;
  pugi::xml_node a = element.append_child("ssd:Annotations").append_child("ssc:Annotation");
  a.append_attribute("type") = ssp::kStrideAnnotation;
  a.append_child((std::string("stride:") + ssp::kStrideElement).c_str()).text() = settings.dump().c_str();
}

// A JSON scalar as the ssv element of its type (Real, Integer, Boolean, String).
void ssv_value(pugi::xml_node parameter, const json& v, bool real) {
  if (v.is_boolean()) {
    parameter.append_child("ssv:Boolean").append_attribute("value") = v.get<bool>() ? "true" : "false";
  } else if (v.is_number() && (real || !v.is_number_integer())) {
    parameter.append_child("ssv:Real").append_attribute("value") = json(v.get<double>()).dump().c_str();
  } else if (v.is_number_integer()) {
    parameter.append_child("ssv:Integer").append_attribute("value") = v.dump().c_str();
  } else {
    parameter.append_child("ssv:String").append_attribute("value") = v.get<std::string>().c_str();
  }
}

// The SSP connector type of a port or an FMU variable: "Real" with its unit, or another type.
void connector(pugi::xml_node connectors, const std::string& name, const std::string& kind, const char* type,
               const std::string& unit, std::set<std::string>& units) {
  pugi::xml_node c = connectors.append_child("ssd:Connector");
  c.append_attribute("name") = name.c_str();
  c.append_attribute("kind") = kind.c_str();
  pugi::xml_node t = c.append_child((std::string("ssc:") + type).c_str());
  if (std::string(type) == "Real" && !unit.empty() && unit != "1") {
    t.append_attribute("unit") = unit.c_str();
    units.insert(unit);
  }
}

const char* connector_type(fmi::VarType t) {
  switch (t) {
    case fmi::VarType::float64:
    case fmi::VarType::float32: return "Real";
    case fmi::VarType::boolean: return "Boolean";
    case fmi::VarType::string: return "String";
    case fmi::VarType::enumeration:
    case fmi::VarType::binary:
    case fmi::VarType::clock: return nullptr;
    default: return "Integer";
  }
}

class SspWriter {
 public:
  // fmi 2 or 3: plugin subsystems are exported as FMUs of that version into `scratch` (every
  // component an FMU); 0: they stay Stride plugin components.
  SspWriter(const Experiment& ex, PluginRegistry& reg, int fmi, const fs::path& scratch)
      : ex_(ex), reg_(reg), m_(ex.manifest()), fmi_(fmi), scratch_(scratch) {}

  // The SystemStructure.ssd text, and the FMU files it names under resources/.
  std::string write(std::map<std::string, fs::path>& resources) {
    pugi::xml_node decl = doc_.append_child(pugi::node_declaration);
    decl.append_attribute("version") = "1.0";
    decl.append_attribute("encoding") = "UTF-8";
    pugi::xml_node root = doc_.append_child("ssd:SystemStructureDescription");
    root.append_attribute("xmlns:ssd") = ssp::kSsd;
    root.append_attribute("xmlns:ssc") = ssp::kSsc;
    root.append_attribute("xmlns:ssv") = ssp::kSsv;
    root.append_attribute("xmlns:oms") = kOms;
    root.append_attribute("xmlns:stride") = ssp::kStrideNamespace;
    root.append_attribute("version") = "1.0";
    root.append_attribute("name") = m_.file.stem().string().c_str();
    root.append_attribute("generationTool") = "Stride (stride export --ssp)";
    pugi::xml_node system = root.append_child("ssd:System");
    system.append_attribute("name") = "root";
    pugi::xml_node elements = system.append_child("ssd:Elements");
    for (const Node& n : ex_.graph().nodes) component(elements, n, resources);
    connections(system.append_child("ssd:Connections"));
    system_settings(system);
    write_units(root);
    pugi::xml_node e = root.append_child("ssd:DefaultExperiment");
    e.append_attribute("startTime") = json(m_.coupling.start).dump().c_str();
    e.append_attribute("stopTime") = json(m_.coupling.end).dump().c_str();
    std::ostringstream out;
    doc_.save(out, "  ", pugi::format_default, pugi::encoding_utf8);
    return out.str();
  }
  std::size_t components() const { return ex_.graph().nodes.size(); }
  std::size_t connections_written() const { return connections_; }
  std::size_t parameters() const { return parameters_; }

 private:
  static constexpr const char* kOms =
      "https://raw.githubusercontent.com/OpenModelica/OMSimulator/master/schema/oms.xsd";

  const json& entry(const std::string& name) const { return m_.document.at("subsystems").at(name); }

  void component(pugi::xml_node elements, const Node& n, std::map<std::string, fs::path>& resources) {
    const SubsystemConfig* sc = nullptr;
    for (const SubsystemConfig& s : m_.subsystems)
      if (s.name == n.name) sc = &s;
    const json& e = entry(n.name);
    pugi::xml_node c = elements.append_child("ssd:Component");
    c.append_attribute("name") = n.name.c_str();
    json settings = json::object();
    for (const auto& [key, value] : e.items())
      if (key != "plugin" && key != "fmu" && key != "parameters") settings[key] = value;
    if (sc && !sc->fmu.empty()) {
      const std::string source = resource_name(n.name, sc->fmu, resources);
      c.append_attribute("type") = "application/x-fmu-sharedlibrary";
      c.append_attribute("source") = source.c_str();
      c.append_attribute("implementation") = e.contains("integrator") ? "ModelExchange" : "CoSimulation";
      fmu_component(c, sc->fmu, n.name, e, settings);
    } else if (fmi_) {
      // The subsystem exported alone: its parameters, integrator or formulation are inside.
      const fs::path fmu = scratch_ / (n.name + ".fmu");
      export_fmu(m_.file, fmu, fmi_, n.name);
      const std::string source = resource_name(n.name, fmu, resources);
      c.append_attribute("type") = "application/x-fmu-sharedlibrary";
      c.append_attribute("source") = source.c_str();
      c.append_attribute("implementation") = "CoSimulation";
      settings = {{"step", e.at("step")}};
      fmu_component(c, fmu, n.name, json::object(), settings);
    } else {
      c.append_attribute("type") = ssp::kStridePluginType;
      c.append_attribute("source") = e.at("plugin").get<std::string>().c_str();
      pugi::xml_node connectors = c.append_child("ssd:Connectors");
      for (const PortSpec& p : n.ports)
        connector(connectors, p.name, p.direction == Direction::output ? "output" : "input", "Real", p.unit, units_);
      if (e.contains("parameters")) {
        settings["parameters"] = e["parameters"];
        parameters_ += e["parameters"].size();
      }
    }
    annotate(c, settings);
  }

  // An FMU's variables as connectors; its scalar parameters as an inline parameter set, every
  // other value it is given (arrays, start values of states) in Stride's annotation.
  void fmu_component(pugi::xml_node c, const fs::path& file, const std::string& name, const json& e, json& settings) {
    std::string why;
    const LoadedPlugin* lp = reg_.load_fmu(file, why);
    if (!lp || !lp->fmu) throw std::runtime_error(file.string() + ": " + why);
    const fmi::ModelDescription& md = lp->fmu->description();
    pugi::xml_node connectors = c.append_child("ssd:Connectors");
    for (const fmi::Variable& v : md.variables) {
      if ((v.causality != "input" && v.causality != "output") || v.size != 1) continue;
      if (const char* type = connector_type(v.type))
        connector(connectors, v.name, v.causality, type, v.fmu_unit.empty() ? v.unit : v.fmu_unit, units_);
    }
    if (!e.contains("parameters")) return;
    pugi::xml_node set;
    for (const auto& [name, value] : e["parameters"].items()) {
      ++parameters_;
      const fmi::Variable* v = md.find(name);
      if (!v || v->causality != "parameter" || !value.is_primitive() || value.is_null()) {
        settings["parameters"][name] = value;
        continue;
      }
      if (!set) {
        set = c.append_child("ssd:ParameterBindings")
                  .append_child("ssd:ParameterBinding")
                  .append_child("ssd:ParameterValues")
                  .append_child("ssv:ParameterSet");
        set.append_attribute("version") = "1.0";
        set.append_attribute("name") = name.c_str();
        set = set.append_child("ssv:Parameters");
      }
      pugi::xml_node p = set.append_child("ssv:Parameter");
      p.append_attribute("name") = name.c_str();
      ssv_value(p, value, v->type == fmi::VarType::float64 || v->type == fmi::VarType::float32);
    }
  }

  // The FMU file as "resources/<its file name>" (one file per FMU used; "<component>_<file name>"
  // when two FMUs share a file name).
  static std::string resource_name(const std::string& component, const fs::path& fmu,
                                   std::map<std::string, fs::path>& resources) {
    for (const auto& [name, file] : resources)
      if (file == fmu) return name;
    std::string name = "resources/" + fmu.filename().string();
    if (resources.count(name)) name = "resources/" + component + "_" + fmu.filename().string();
    resources[name] = fmu;
    return name;
  }

  void connections(pugi::xml_node all) {
    const json& cs = m_.document.value("connections", json::array());
    for (std::size_t i = 0; i < m_.connections.size(); ++i) {
      const ConnectionConfig& cc = m_.connections[i];
      if (cc.from_count || cc.to_count || cc.from_first || cc.to_first)
        throw ManifestError({{m_.file.string(), cc.pointer,
                              "a connection of port elements (\"" + cc.from_text + "\" -> \"" + cc.to_text +
                                  "\") has no SSP 1.0 form: connect whole ports"}});
      pugi::xml_node c = all.append_child("ssd:Connection");
      c.append_attribute("startElement") = cc.from_subsystem.c_str();
      c.append_attribute("startConnector") = cc.from_port.c_str();
      c.append_attribute("endElement") = cc.to_subsystem.c_str();
      c.append_attribute("endConnector") = cc.to_port.c_str();
      if (!cc.unit_conversion) c.append_attribute("suppressUnitConversion") = "true";
      if (cc.factor != 1.0 || cc.offset != 0.0) {
        pugi::xml_node t = c.append_child("ssc:LinearTransformation");
        t.append_attribute("factor") = json(cc.factor).dump().c_str();
        t.append_attribute("offset") = json(cc.offset).dump().c_str();
      }
      json settings = json::object();
      if (i < cs.size())
        for (const char* key : {"extrapolator", "description"})
          if (cs[i].contains(key)) settings[key] = cs[i][key];
      annotate(c, settings);
      ++connections_;
    }
  }

  // The coupling, recording, monitors and log in Stride's annotation, the macro step also as
  // OMSimulator's fixed-step master (the DefaultExperiment holds start and stop).
  void system_settings(pugi::xml_node system) {
    json settings = json::object();
    for (const char* key : {"title", "description", "coupling", "record", "monitor", "log", "exports"})
      if (m_.document.contains(key)) settings[key] = m_.document[key];
    annotate(system, settings);
    pugi::xml_node all = system.child("ssd:Annotations");
    if (!all) all = system.append_child("ssd:Annotations");
    pugi::xml_node a = all.append_child("ssc:Annotation");
    a.append_attribute("type") = "org.openmodelica";
    pugi::xml_node f =
        a.append_child("oms:Annotations").append_child("oms:SimulationInformation").append_child("oms:FixedStepMaster");
    f.append_attribute("description") = "oms-ma";
    f.append_attribute("stepSize") = json(m_.coupling.macro_step).dump().c_str();
  }

  void write_units(pugi::xml_node root) {
    if (units_.empty()) return;
    pugi::xml_node all = root.append_child("ssd:Units");
    for (const std::string& u : units_) {
      pugi::xml_node unit = all.append_child("ssc:Unit");
      unit.append_attribute("name") = u.c_str();
      const auto d = unit_definition(u);
      if (!d) continue;  // a unit the units library does not know: named only
      pugi::xml_node base = unit.append_child("ssc:BaseUnit");
      for (const auto& [name, e] : d->exponents) base.append_attribute(name.c_str()) = e;
      if (d->factor != 1.0) base.append_attribute("factor") = json(d->factor).dump().c_str();
      if (d->offset != 0.0) base.append_attribute("offset") = json(d->offset).dump().c_str();
    }
  }

  const Experiment& ex_;
  PluginRegistry& reg_;
  const Manifest& m_;
  const int fmi_;
  const fs::path scratch_;
  pugi::xml_document doc_;
  std::set<std::string> units_;
  std::size_t connections_ = 0, parameters_ = 0;
};

}  // namespace

SspReport export_ssp(const fs::path& manifest, const fs::path& out, int fmi) {
  if (out.extension() != ".ssp")
    throw std::runtime_error(out.string() + ": an SSP package is written to a file ending in .ssp");
  if (fmi != 0 && fmi != 2 && fmi != 3)
    throw std::runtime_error("FMI version " + std::to_string(fmi) + ": Stride exports FMI 2.0 and 3.0");
  if (fmi && manifest.extension() != ".json")
    throw std::runtime_error(manifest.string() + ": plugin subsystems are exported as FMUs from a JSON manifest only");
  PluginRegistry reg;
  Manifest m = manifest_of(manifest.string(), {});
  m.external_inputs = !m.exports.empty();
  const std::unique_ptr<Experiment> ex = build_experiment(reg, std::move(m));
  const fmi::TempFolder scratch;
  SspWriter w(*ex, reg, fmi, scratch.path());
  std::map<std::string, fs::path> resources;
  const std::string ssd = w.write(resources);
  Archive a(out);
  a.text("SystemStructure.ssd", ssd);
  for (const auto& [name, file] : resources) a.file(name, file);
  a.finish();
  return {w.components(), w.connections_written(), w.parameters(), resources.size()};
}

}  // namespace stride::host
