// SystemStructure.ssd as a manifest document (see stride/host/ssp/ssp.hpp). One method per
// part of the SSD, in the order they are needed: the package, the root with its units and
// enumerations, the default experiment, the system, its components, connections and bindings.
#include "stride/host/ssp/ssp.hpp"

#include <algorithm>
#include <mutex>
#include <set>

#include "input/units.hpp"
#include "ssp/files.hpp"
#include "ssp/fmu_facts.hpp"
#include "ssp/osp.hpp"
#include "ssp/parameters.hpp"

namespace stride::host::ssp {
namespace fs = std::filesystem;
using ordered = nlohmann::ordered_json;

namespace {

struct Component {
  std::string name;
  pugi::xml_node node;
  bool fmu = true;
  std::optional<FmuFacts> facts;
  std::map<std::string, std::string> kinds;  // connector -> kind
  ordered entry = ordered::object();
  std::map<std::string, BoundValue> parameters;  // the value that wins, by name
};

class SsdReader {
 public:
  SsdReader(SystemFile system, std::unique_ptr<XmlFile> ssd, SystemChoice choice)
      : system_file_(std::move(system)), ssd_(std::move(ssd)), choice_(std::move(choice)) {}

  SspManifest read() {
    read_root();
    if (problems_.empty()) {
      read_system();
      read_experiment();
      read_components();
      read_connections();
      read_bindings();
    }
    if (!problems_.empty()) throw ManifestError(problems_);
    return finished(system_file_, assemble(), std::move(origins_), std::move(notes_));
  }

 private:
  void problem(pugi::xml_node n, const std::string& what) { problems_.push_back(ssd_->problem(n, what)); }
  std::string origin(pugi::xml_node n) const { return ssd_->label() + ": " + ssd_->where(n); }

  // <SystemStructureDescription>: version 1.0, the units and enumerations of the whole file.
  void read_root() {
    pugi::xml_node r = ssd_->root();
    if (!XmlFile::is(r, kSsd, "SystemStructureDescription")) {
      problem(r, "the root element must be ssd:SystemStructureDescription (namespace " + std::string(kSsd) + ")");
      return;
    }
    const std::string version = r.attribute("version").value();
    if (version != "1.0") problem(r, "version=\"" + version + "\": Stride reads SSP 1.0 system structure descriptions");
    name_ = r.attribute("name").value();
    read_units(*ssd_, XmlFile::child(r, kSsd, "Units"), units_, problems_);
    read_enumerations(XmlFile::child(r, kSsd, "Enumerations"), enumerations_);
    system_ = XmlFile::child(r, kSsd, "System");
    if (!system_) problem(r, "the description has no <System>");
  }

  // Stride's own settings in an element's annotations (a JSON object), or an empty object.
  ordered stride_annotation(pugi::xml_node element, const std::vector<std::string>& allowed) {
    for (pugi::xml_node a : XmlFile::children(XmlFile::child(element, kSsd, "Annotations"), kSsc, "Annotation")) {
      if (std::string(a.attribute("type").value()) != kStrideAnnotation) continue;
      std::vector<Diagnostic> d;
      const pugi::xml_node held = XmlFile::child(a, kStrideNamespace, kStrideElement);
      auto j = parse_json(held ? held.text().get() : a.text().get(), origin(held ? held : a), d);
      if (!j || !j->is_object()) {
        problem(a, "a " + std::string(kStrideAnnotation) + " annotation holds a JSON object");
        return ordered::object();
      }
      ordered o = ordered::parse(j->dump());
      for (auto it = o.begin(); it != o.end(); ++it)
        if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end())
          problem(a, "\"" + it.key() + "\" is not a key of this annotation (allowed: " + listed(allowed) + ")");
      return o;
    }
    return ordered::object();
  }

  // A number from another tool's annotation: the attribute `attribute` of the first descendant
  // named `local_name` inside an annotation of `type`.
  std::optional<double> tool_annotation(pugi::xml_node element, const char* type, const char* local_name,
                                        const char* attribute) {
    for (pugi::xml_node a : XmlFile::children(XmlFile::child(element, kSsd, "Annotations"), kSsc, "Annotation")) {
      if (std::string(a.attribute("type").value()) != type) continue;
      pugi::xml_node found = a.find_node(
          [&](pugi::xml_node n) { return n.type() == pugi::node_element && XmlFile::local(n) == local_name; });
      if (found) return ssd_->number(found, attribute, problems_);
    }
    return std::nullopt;
  }

  // The start and stop time, and the macro step: Stride's annotation, else OMSimulator's fixed
  // step (org.openmodelica on the system), else libcosim's (com.opensimulationplatform on the
  // default experiment).
  void read_experiment() {
    pugi::xml_node e = XmlFile::child(ssd_->root(), kSsd, "DefaultExperiment");
    coupling_ = stride_annotation(
        system_, {"coupling", "record", "monitor", "log", "output", "title", "description", "exports"});
    ordered c = coupling_.contains("coupling") ? coupling_["coupling"] : ordered::object();
    if (!c.contains("start")) c["start"] = e ? ssd_->number(e, "startTime", problems_).value_or(0.0) : 0.0;
    if (!c.contains("end") && e && e.attribute("stopTime"))
      c["end"] = ssd_->number(e, "stopTime", problems_).value_or(0.0);
    origins_["/coupling/start"] = origins_["/coupling/end"] = e ? origin(e) : origin(ssd_->root());
    if (!c.contains("macro_step")) {
      auto h = tool_annotation(system_, "org.openmodelica", "FixedStepMaster", "stepSize");
      if (!h && e) h = tool_annotation(e, "com.opensimulationplatform", "FixedStepAlgorithm", "baseStepSize");
      if (h) c["macro_step"] = *h;
      else
        notes_.push_back(
            "no co-simulation step in the SSD's annotations: give one with --set /coupling/macro_step=...");
    }
    origins_["/coupling/macro_step"] = origin(system_);
    if (!c.contains("scheme")) c["scheme"] = "jacobi";
    coupling_["coupling"] = c;
  }

  // The top-level system: what Stride does not read is named; its own connectors are kept.
  void read_system() {
    for (const char* unsupported : {"SignalDictionaries"})
      if (pugi::xml_node n = XmlFile::child(system_, kSsd, unsupported))
        problem(n, std::string("<") + unsupported + "> is not supported by Stride");
    for (pugi::xml_node c : XmlFile::children(XmlFile::child(system_, kSsd, "Connectors"), kSsd, "Connector"))
      system_kinds_[c.attribute("name").value()] = c.attribute("kind").value();
    for (pugi::xml_node elements : XmlFile::children(system_, kSsd, "Elements"))
      for (pugi::xml_node n = elements.first_child(); n; n = n.next_sibling()) {
        if (n.type() != pugi::node_element) continue;
        if (XmlFile::is(n, kSsd, "Component")) continue;
        problem(n, "<" + XmlFile::local(n) +
                       "> elements are not supported (Stride reads one system of components; "
                       "nested systems and signal dictionaries are not flattened)");
      }
  }

  void read_components() {
    std::set<std::string> names;
    for (pugi::xml_node n : XmlFile::children(XmlFile::child(system_, kSsd, "Elements"), kSsd, "Component")) {
      Component c;
      c.name = n.attribute("name").value();
      c.node = n;
      if (c.name.empty() || c.name.find('.') != std::string::npos) {
        problem(n, "component name \"" + c.name + "\": Stride needs names that are not empty and contain no '.'");
        continue;
      }
      if (!names.insert(c.name).second) problem(n, "component \"" + c.name + "\" is declared twice");
      origins_["/subsystems/" + pointer_escape(c.name)] = origin(n);
      if (read_component(c)) components_.push_back(std::move(c));
    }
    if (components_.empty() && problems_.empty()) problem(system_, "the system has no components");
  }

  bool read_component(Component& c) {
    const std::string type = c.node.attribute("type").as_string("application/x-fmu-sharedlibrary");
    if (!c.node.attribute("source")) {
      problem(c.node, "the component has no source (no implementation to run)");
      return false;
    }
    const std::string source = c.node.attribute("source").value();
    ordered settings =
        stride_annotation(c.node, {"step", "integrator", "formulation", "parameters", "version", "description"});
    if (type == kStridePluginType) {
      c.fmu = false;
      c.entry["plugin"] = source;
    } else if (type == "application/x-fmu-sharedlibrary") {
      if (!read_fmu(c, source, settings)) return false;
    } else {
      problem(c.node, "components of type \"" + type + "\" are not supported (FMUs, and Stride plugins as \"" +
                          kStridePluginType + "\")");
      return false;
    }
    for (auto it = settings.begin(); it != settings.end(); ++it)
      if (it.key() != "parameters") c.entry[it.key()] = it.value();
    if (settings.contains("parameters")) c.entry["parameters"] = settings["parameters"];
    if (!c.entry.contains("step")) {
      if (auto h = tool_annotation(c.node, "com.opensimulationplatform", "StepSizeHint", "value")) c.entry["step"] = *h;
      else if (coupling_["coupling"].contains("macro_step")) c.entry["step"] = coupling_["coupling"]["macro_step"];
    }
    read_connectors(c);
    return true;
  }

  // An FMU component: its file, its model description and the interface it is used through.
  bool read_fmu(Component& c, const std::string& source, const ordered& settings) {
    const auto file = resolve_uri(*ssd_, c.node, source, system_file_.root, problems_);
    if (!file) return false;
    c.entry["fmu"] = file->string();
    try {
      c.facts = read_fmu_facts(*file, source);
    } catch (const std::exception& e) {
      problem(c.node, e.what());
      return false;
    }
    const fmi::ModelDescription& md = c.facts->md;
    const std::string impl = c.node.attribute("implementation").as_string("any");
    const bool me = impl == "ModelExchange" || (impl == "any" && (settings.contains("integrator") || !md.has_cs));
    if (impl != "any" && impl != "CoSimulation" && impl != "ModelExchange") {
      problem(c.node, "implementation=\"" + impl + "\" is not supported (CoSimulation, ModelExchange or any)");
      return false;
    }
    if ((me && !md.has_me) || (!me && !md.has_cs)) {
      problem(c.node, "the FMU has no " + std::string(me ? "model-exchange" : "co-simulation") + " interface");
      return false;
    }
    if (!me && settings.contains("integrator")) {
      problem(c.node, "implementation=\"CoSimulation\" with an integrator in the Stride annotation");
      return false;
    }
    if (me && !settings.contains("integrator")) {
      c.entry["integrator"] = "cvode";
      notes_.push_back("component " + c.name + ": model exchange, integrated by cvode (a " + kStrideAnnotation +
                       " annotation with \"integrator\" chooses another)");
    }
    return true;
  }

  // The component's connectors: names and kinds, checked against the FMU's variables.
  void read_connectors(Component& c) {
    for (pugi::xml_node k : XmlFile::children(XmlFile::child(c.node, kSsd, "Connectors"), kSsd, "Connector")) {
      const std::string name = k.attribute("name").value(), kind = k.attribute("kind").value();
      c.kinds[name] = kind;
      if (!c.facts) continue;
      const fmi::Variable* v = c.facts->variable(name);
      if (!v) {
        problem(k, "the FMU has no variable \"" + name + "\"");
        continue;
      }
      if (v->causality != kind)
        problem(k, "kind \"" + kind + "\", but the FMU's variable has causality \"" + v->causality + "\"");
      check_connector_type(k, *v);
    }
  }

  void check_connector_type(pugi::xml_node k, const fmi::Variable& v) {
    for (pugi::xml_node t = k.first_child(); t; t = t.next_sibling()) {
      if (t.type() != pugi::node_element || XmlFile::uri(t) != kSsc) continue;
      const std::string type = XmlFile::local(t);
      static const std::map<std::string, std::string> of = {{"Real", "real"},
                                                            {"Integer", "integer"},
                                                            {"Boolean", "boolean"},
                                                            {"String", "string"},
                                                            {"Enumeration", "integer"}};
      if (of.count(type) && of.at(type) != type_of(v.type))
        problem(t, "a " + type + " connector for the FMU's " + type_of(v.type) + " variable \"" + v.name + "\"");
      const std::string unit = t.attribute("unit").value();
      if (type == "Real" && !unit.empty() && !same_quantity(unit, v.unit))
        problem(t, "unit \"" + unit + "\" does not measure the quantity of the FMU's unit \"" + v.unit + "\"");
    }
  }

  bool same_quantity(const std::string& unit, const std::string& fmu_unit) const {
    std::map<std::string, int> a, b;
    if (auto it = units_.find(unit); it != units_.end()) a = it->second.exponents;
    else if (auto d = unit_definition(unit)) a = d->exponents;
    else return true;  // not known here: the connection's own check names it
    if (auto d = unit_definition(fmu_unit)) b = d->exponents;
    else return true;
    return a == b;
  }

  Component* component(const std::string& name) {
    for (auto& c : components_)
      if (c.name == name) return &c;
    return nullptr;
  }

  // A connection's end: "component.connector" with its kind, or a system connector.
  struct End {
    std::string element, connector, kind;
  };
  std::optional<End> end_of(pugi::xml_node n, const char* element, const char* connector) {
    End e{n.attribute(element).value(), n.attribute(connector).value(), ""};
    if (e.element.empty()) {
      if (!system_kinds_.count(e.connector)) {
        problem(n, "the system has no connector \"" + e.connector + "\"");
        return std::nullopt;
      }
      e.kind = system_kinds_.at(e.connector);
      return e;
    }
    Component* c = component(e.element);
    if (!c) {
      problem(n, "no component \"" + e.element + "\" (" + element + ")");
      return std::nullopt;
    }
    if (!c->kinds.count(e.connector)) {
      problem(n, "component \"" + e.element + "\" declares no connector \"" + e.connector + "\"");
      return std::nullopt;
    }
    e.kind = c->kinds.at(e.connector);
    return e;
  }

  void read_connections() {
    // A connection missing in the system (an unconnected input) is the system's <Connections>.
    const pugi::xml_node all = XmlFile::child(system_, kSsd, "Connections");
    origins_["/connections"] = origin(all ? all : system_);
    for (pugi::xml_node n : XmlFile::children(XmlFile::child(system_, kSsd, "Connections"), kSsd, "Connection")) {
      for (const char* a : {"startIndices", "endIndices"})
        if (n.attribute(a)) problem(n, std::string(a) + " (connections to array elements) is not supported");
      auto a = end_of(n, "startElement", "startConnector"), b = end_of(n, "endElement", "endConnector");
      if (!a || !b) continue;
      if (a->element.empty() || b->element.empty()) {
        system_connection(n, *a, *b);
        continue;
      }
      if (a->kind == "input" && b->kind == "output") std::swap(a, b);  // start and end say nothing of direction
      component_connection(n, *a, *b);
    }
  }

  std::string endpoint_of(const End& e) {
    const Component* c = component(e.element);
    return endpoint(e.element, e.connector, c && c->facts ? &*c->facts : nullptr);
  }

  void component_connection(pugi::xml_node n, const End& from, const End& to) {
    if (from.kind != "output" || to.kind != "input") {
      problem(n, "a connection from a " + from.kind + " to a " + to.kind +
                     " connector: Stride connects outputs to inputs "
                     "(parameter connections are not supported)");
      return;
    }
    ordered c = ordered::object();
    c["from"] = endpoint_of(from);
    c["to"] = endpoint_of(to);
    const Transformation t = connection_transformation(n);
    if (t.linear) c["transformation"] = {{"factor", t.factor}, {"offset", t.offset}};
    if (t.suppress_unit_conversion) c["unit_conversion"] = false;
    ordered settings = stride_annotation(n, {"extrapolator", "description"});
    for (auto it = settings.begin(); it != settings.end(); ++it) c[it.key()] = it.value();
    origins_["/connections/" + std::to_string(connections_.size())] = origin(n);
    connections_.push_back(c);
  }

  Transformation connection_transformation(pugi::xml_node n) {
    Transformation t;
    t.suppress_unit_conversion = ssd_->boolean(n, "suppressUnitConversion", problems_).value_or(false);
    for (pugi::xml_node x = n.first_child(); x; x = x.next_sibling()) {
      if (x.type() != pugi::node_element || XmlFile::uri(x) != kSsc) continue;
      if (XmlFile::local(x) == "LinearTransformation") {
        t.linear = true;
        t.factor = ssd_->number(x, "factor", problems_).value_or(1.0);
        t.offset = ssd_->number(x, "offset", problems_).value_or(0.0);
      } else {
        problem(x, "<" + XmlFile::local(x) +
                       "> on a connection is not supported (Stride exchanges numbers: only "
                       "LinearTransformation)");
      }
    }
    return t;
  }

  // A system output fed by a component output is recorded; anything else at the system's
  // boundary has no source in a run.
  void system_connection(pugi::xml_node n, const End& a, const End& b) {
    const End& inner = a.element.empty() ? b : a;
    const End& outer = a.element.empty() ? a : b;
    if (inner.kind == "output" && outer.kind == "output") {
      record_.push_back(inner.element + "." + inner.connector);
      return;
    }
    if (inner.kind == "input" && outer.kind == "input") {
      exports_.push_back(inner.element + "." + inner.connector);
      origins_["/exports/" + std::to_string(exports_.size() - 1)] = origin(n);
      return;
    }
    problem(n, "a connection between the system's " + outer.kind + " connector \"" + outer.connector + "\" and a " +
                   inner.kind + " connector: not supported");
  }

  // An element's bindings are alternative parameter sets (libcosim's reading): the first, or
  // the one named by --parameter-set. Component sets first; then the system's, which win.
  void read_bindings() {
    for (Component& c : components_)
      for (BoundValue& v : chosen_set(c.node, c.name)) c.parameters[v.name] = std::move(v);
    for (BoundValue& v : chosen_set(system_, "")) {
      const auto dot = v.name.find('.');
      Component* c = dot == std::string::npos ? nullptr : component(v.name.substr(0, dot));
      if (!c) {
        notes_.push_back(v.origin() + ": \"" + v.name + "\" names no component's parameter (ignored, as SSP asks)");
        continue;
      }
      const std::string name = v.name.substr(dot + 1);
      c->parameters[name] = std::move(v);
      c->parameters[name].name = name;
    }
    if (!choice_.parameter_set.empty() && !set_names_.count(choice_.parameter_set)) {
      std::string all;
      for (const auto& n : set_names_) all += (all.empty() ? "\"" : ", \"") + n + "\"";
      problems_.push_back({ssd_->label(), "",
                           "--parameter-set \"" + choice_.parameter_set +
                               "\": no parameter set of that name (the sets: " + (all.empty() ? "none" : all) + ")"});
    }
    for (Component& c : components_) apply_parameters(c);
  }

  // The values of the parameter set chosen among the bindings of `element` ("" names the system).
  std::vector<BoundValue> chosen_set(pugi::xml_node element, const std::string& name) {
    const auto bindings =
        XmlFile::children(XmlFile::child(element, kSsd, "ParameterBindings"), kSsd, "ParameterBinding");
    std::vector<BoundValue> out;
    std::string applied, skipped;
    for (pugi::xml_node b : bindings) {
      Bindings got;
      read_binding(*ssd_, b, system_file_.root, got, problems_);
      set_names_.insert(got.set_name);
      const bool take = applied.empty() && (choice_.parameter_set.empty() || got.set_name == choice_.parameter_set);
      std::string& list = take ? applied : skipped;
      list += (list.empty() ? "\"" : ", \"") + got.set_name + "\"";
      if (take)
        for (BoundValue& v : got.values) out.push_back(std::move(v));
      keep(std::move(got));
    }
    if (bindings.size() > 1 || (!choice_.parameter_set.empty() && !bindings.empty() && applied.empty()))
      notes_.push_back((name.empty() ? std::string("the system") : "component " + name) + ": parameter set " +
                       (applied.empty() ? "none" : applied) + " applied" + (skipped.empty() ? "" : ", not " + skipped) +
                       " (--parameter-set NAME chooses one)");
    return out;
  }

  void keep(Bindings&& b) {
    for (auto& f : b.files) files_.push_back(std::move(f));
    for (auto& u : b.units) unit_sets_.push_back(std::move(u));
    for (auto& e : b.enumerations) enumeration_sets_.push_back(std::move(e));
  }

  void apply_parameters(Component& c) {
    for (const auto& [name, v] : c.parameters) {
      ParameterTarget t;
      if (c.facts) {
        const fmi::Variable* var = c.facts->variable(name);
        if (!var) {
          notes_.push_back(v.origin() + ": component " + c.name + " has no variable \"" + name +
                           "\" (ignored, as SSP asks)");
          continue;
        }
        if (!settable(*var)) {
          notes_.push_back(v.origin() + ": \"" + name + "\" of component " + c.name + " (causality " + var->causality +
                           ") takes no value before the run (ignored)");
          continue;
        }
        t = {type_of(var->type), var->unit, var->size};
      }
      std::string why;
      auto value = parameter_value(v, t, units_, enumerations_, why);
      if (!value) {
        problems_.push_back({v.file, v.where, "parameter \"" + name + "\" of component " + c.name + ": " + why});
        continue;
      }
      if (!c.entry.contains("parameters")) c.entry["parameters"] = ordered::object();
      c.entry["parameters"][name] = ordered::parse(value->dump());
      origins_["/subsystems/" + pointer_escape(c.name) + "/parameters/" + pointer_escape(name)] = v.origin();
    }
  }

  ordered assemble() {
    ordered d = ordered::object();
    d["format"] = 1;
    d["title"] = coupling_.value("title", name_.empty() ? system_file_.name : name_);
    if (coupling_.contains("description")) d["description"] = coupling_["description"];
    d["subsystems"] = ordered::object();
    for (Component& c : components_) d["subsystems"][c.name] = c.entry;
    d["connections"] = connections_;
    d["coupling"] = coupling_["coupling"];
    if (coupling_.contains("record")) d["record"] = coupling_["record"];
    else if (!record_.empty()) d["record"] = {{"variables", record_}};
    if (!exports_.empty() || coupling_.contains("exports"))
      d["exports"] = coupling_.contains("exports") ? coupling_["exports"] : ordered(exports_);
    for (const char* k : {"monitor", "log"})
      if (coupling_.contains(k)) d[k] = coupling_[k];
    d["output"] = coupling_.value("output", (fs::path("out") / system_file_.name).string());
    return d;
  }

  SystemFile system_file_;
  std::unique_ptr<XmlFile> ssd_;
  SystemChoice choice_;
  std::set<std::string> set_names_;
  std::vector<Diagnostic> problems_;
  std::vector<std::string> notes_;
  std::map<std::string, std::string> origins_;
  std::string name_;
  UnitDefs units_;
  Enumerations enumerations_;
  pugi::xml_node system_;
  std::map<std::string, std::string> system_kinds_;
  ordered coupling_ = ordered::object();
  std::vector<Component> components_;
  std::vector<ordered> connections_;
  std::vector<std::string> record_, exports_;
  std::vector<std::unique_ptr<XmlFile>> files_;
  std::vector<std::unique_ptr<UnitDefs>> unit_sets_;
  std::vector<std::unique_ptr<Enumerations>> enumeration_sets_;
};

}  // namespace

bool is_ssp_file(const fs::path& path) {
  std::error_code ec;
  const auto x = path.extension();
  return x == ".ssp" || x == ".ssd" || x == ".xml" || fs::is_directory(path, ec);
}

SspManifest read_ssp(const fs::path& path, const SystemChoice& choice) {
  SystemFile system = locate_system(path, choice.ssd);
  auto xml = std::make_unique<XmlFile>(system.file, system.label);
  if (is_osp(*xml)) return read_osp(std::move(system), std::move(xml));
  return SsdReader(std::move(system), std::move(xml), choice).read();
}

void attribute_to_ssp(std::vector<Diagnostic>& diagnostics, const std::map<std::string, std::string>& origins) {
  for (Diagnostic& d : diagnostics) {
    // The longest origin that is the pointer or one of its parents.
    const std::string* best = nullptr;
    std::size_t best_len = 0;
    for (const auto& [pointer, where] : origins)
      if ((d.pointer == pointer || d.pointer.rfind(pointer + "/", 0) == 0) && pointer.size() >= best_len) {
        best = &where;
        best_len = pointer.size();
      }
    if (best && d.message.find(" (from " + *best + ")") == std::string::npos) d.message += " (from " + *best + ")";
  }
}

}  // namespace stride::host::ssp
