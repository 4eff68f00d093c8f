// OspSystemStructure.xml as a manifest document (see osp.hpp). One method per part of the file,
// in the order they are needed: the header (times, step, algorithm), the simulators with their
// initial values, the functions, the connections.
#include "ssp/osp.hpp"

#include <cmath>
#include <map>
#include <set>

#include "ssp/fmu_facts.hpp"
#include "ssp/parameters.hpp"

namespace stride::host::ssp {
namespace fs = std::filesystem;
using ordered = nlohmann::ordered_json;

namespace {

struct Simulator {
  std::string name;
  pugi::xml_node node;
  FmuFacts facts;
  ordered entry = ordered::object();
};

// A linear transformation function: its input signal's source and its output signal's targets.
struct Linear {
  pugi::xml_node node;
  double factor = 1.0, offset = 0.0;
  std::vector<std::pair<std::string, pugi::xml_node>> in, out;  // endpoint, the <SignalConnection>
};

class OspReader {
 public:
  OspReader(SystemFile system, std::unique_ptr<XmlFile> xml) : system_(std::move(system)), xml_(std::move(xml)) {}

  SspManifest read() {
    read_header();
    read_simulators();
    read_functions();
    read_connections();
    connect_functions();
    if (!problems_.empty()) throw ManifestError(problems_);
    return finished(system_, assemble(), std::move(origins_), std::move(notes_));
  }

 private:
  void problem(pugi::xml_node n, const std::string& what) { problems_.push_back(xml_->problem(n, what)); }
  std::string origin(pugi::xml_node n) const { return xml_->label() + ": " + xml_->where(n); }
  pugi::xml_node child(pugi::xml_node n, const char* name) const { return XmlFile::child(n, kOsp, name); }

  // A number written as an element's text (<BaseStepSize>0.01</BaseStepSize>).
  std::optional<double> text_number(pugi::xml_node n) {
    const std::string t = n.text().get();
    char* end = nullptr;
    const double x = std::strtod(t.c_str(), &end);
    while (end && (*end == ' ' || *end == '\n' || *end == '\t' || *end == '\r')) ++end;
    if (t.empty() || *end != '\0' || !std::isfinite(x)) {
      problem(n, "\"" + t + "\" is not a finite number");
      return std::nullopt;
    }
    return x;
  }

  // Start time, base step and algorithm; the stop time is the command's (libcosim takes it on
  // its command line too).
  void read_header() {
    const pugi::xml_node r = xml_->root();
    static const std::set<std::string> known = {"StartTime", "BaseStepSize", "Algorithm",  "Simulators",
                                                "Functions", "Connections",  "Description"};
    for (pugi::xml_node n = r.first_child(); n; n = n.next_sibling())
      if (n.type() == pugi::node_element && !known.count(XmlFile::local(n)))
        problem(n, "<" + XmlFile::local(n) +
                       "> is not part of OspSystemStructure.xml as Stride reads it (StartTime, "
                       "BaseStepSize, Algorithm, Simulators, Functions, Connections, Description)");
    coupling_["scheme"] = "jacobi";
    coupling_["initialization"] = "exchange";  // libcosim's start-up
    const pugi::xml_node start = child(r, "StartTime"), step = child(r, "BaseStepSize");
    coupling_["start"] = start ? text_number(start).value_or(0.0) : 0.0;
    if (step) {
      if (auto h = text_number(step)) coupling_["macro_step"] = *h;
    } else {
      coupling_["macro_step"] = 0.1;
      notes_.push_back("no <BaseStepSize>: the OSP's default, 0.1 s");
    }
    origins_["/coupling"] = origin(r);
    if (start) origins_["/coupling/start"] = origin(start);
    if (step) origins_["/coupling/macro_step"] = origin(step);
    notes_.push_back("OspSystemStructure.xml has no stop time: give one with --set /coupling/end=...");
    if (pugi::xml_node a = child(r, "Algorithm")) {
      const std::string name = a.text().get();
      if (name != "fixedStep")
        problem(a, "algorithm \"" + name +
                       "\" is not supported (fixedStep: every simulator steps from the values "
                       "of the last communication point, Stride's jacobi scheme)");
    }
  }

  void read_simulators() {
    std::set<std::string> names;
    for (pugi::xml_node n : XmlFile::children(child(xml_->root(), "Simulators"), kOsp, "Simulator")) {
      Simulator s{n.attribute("name").value(), n, {}, ordered::object()};
      if (s.name.empty() || s.name.find('.') != std::string::npos) {
        problem(n, "simulator name \"" + s.name + "\": Stride needs names that are not empty and contain no '.'");
        continue;
      }
      if (!names.insert(s.name).second) problem(n, "simulator \"" + s.name + "\" is declared twice");
      origins_["/subsystems/" + pointer_escape(s.name)] = origin(n);
      if (read_simulator(s)) simulators_.push_back(std::move(s));
    }
    if (simulators_.empty() && problems_.empty()) problem(xml_->root(), "the system has no simulators");
  }

  bool read_simulator(Simulator& s) {
    const auto file = resolve_uri(*xml_, s.node, s.node.attribute("source").value(), system_.root, problems_);
    if (!file) return false;
    try {
      s.facts = read_fmu_facts(*file, s.node.attribute("source").value());
    } catch (const std::exception& e) {
      problem(s.node, e.what());
      return false;
    }
    s.entry["fmu"] = file->string();
    if (!s.facts.md.has_cs) {
      problem(s.node, "the FMU has no co-simulation interface (libcosim's simulators are co-simulation FMUs)");
      return false;
    }
    s.entry["step"] = coupling_.value("macro_step", 0.1);
    if (s.node.attribute("stepSize")) {
      const double h = xml_->number(s.node, "stepSize", problems_).value_or(0.0), base = s.entry["step"];
      if (h != base)  // libcosim steps such a simulator every h/base base steps, outputs held between
        problem(s.node, "stepSize " + std::string(s.node.attribute("stepSize").as_string()) +
                            " differs from BaseStepSize: a simulator stepping every n-th base step (libcosim's "
                            "decimation) is not supported; give every simulator the base step");
    }
    for (pugi::xml_node v : XmlFile::children(child(s.node, "InitialValues"), kOsp, "InitialValue"))
      initial_value(s, v);
    return true;
  }

  // <InitialValue variable="k"><Real value="2"/></InitialValue>: the variable's value before
  // the run, as the manifest's "parameters" give it.
  void initial_value(Simulator& s, pugi::xml_node iv) {
    static const UnitDefs no_units;
    static const Enumerations no_enumerations;
    const std::string name = iv.attribute("variable").value();
    const fmi::Variable* var = s.facts.variable(name);
    if (!var) return problem(iv, "simulator " + s.name + " has no variable \"" + name + "\"");
    if (!settable(*var))
      return problem(iv, "\"" + name + "\" (causality " + var->causality + ") takes no value before the run");
    const pugi::xml_node e = iv.first_child().type() == pugi::node_element ? iv.first_child() : pugi::xml_node();
    BoundValue v;
    v.name = name;
    v.type = e ? XmlFile::local(e) : "";
    if (v.type == "Enumeration") v.type = "Integer";  // OSP writes an enumeration's value as its integer
    v.values = {e.attribute("value").value()};
    v.file = xml_->label();
    v.where = xml_->where(iv);
    v.units = &no_units;
    v.enumerations = &no_enumerations;
    if (!e || !e.attribute("value"))
      return problem(iv,
                     "an initial value is one <Real>, <Integer>, <Boolean>, <String> or <Enumeration> with a "
                     "value attribute");
    std::string why;
    const ParameterTarget t{type_of(var->type), var->unit, var->size};
    auto value = parameter_value(v, t, no_units, no_enumerations, why);
    if (!value) return problem(iv, "initial value of \"" + name + "\": " + why);
    if (!s.entry.contains("parameters")) s.entry["parameters"] = ordered::object();
    s.entry["parameters"][name] = ordered::parse(value->dump());
    origins_["/subsystems/" + pointer_escape(s.name) + "/parameters/" + pointer_escape(name)] = origin(iv);
  }

  void read_functions() {
    for (pugi::xml_node f = child(xml_->root(), "Functions").first_child(); f; f = f.next_sibling()) {
      if (f.type() != pugi::node_element) continue;
      const std::string kind = XmlFile::local(f), name = f.attribute("name").value();
      if (kind != "LinearTransformation") {
        problem(f, "<" + kind +
                       "> functions are not supported (Stride connects one output to inputs, with a "
                       "LinearTransformation between them)");
        continue;
      }
      Linear l{f,
               xml_->number(f, "factor", problems_).value_or(1.0),
               xml_->number(f, "offset", problems_).value_or(0.0),
               {},
               {}};
      if (!linear_.emplace(name, l).second) problem(f, "function \"" + name + "\" is declared twice");
    }
  }

  Simulator* simulator(const std::string& name) {
    for (auto& s : simulators_)
      if (s.name == name) return &s;
    return nullptr;
  }

  // <Variable simulator="a" name="x"/>: the variable and its manifest endpoint.
  const fmi::Variable* variable(pugi::xml_node v, std::string& endpoint_out) {
    const std::string sim = v.attribute("simulator").value(), name = v.attribute("name").value();
    Simulator* s = simulator(sim);
    if (!s) {
      problem(v, "no simulator \"" + sim + "\"");
      return nullptr;
    }
    const fmi::Variable* var = s->facts.variable(name);
    if (!var) problem(v, "simulator " + sim + " has no variable \"" + name + "\"");
    endpoint_out = endpoint(sim, name, &s->facts);
    return var;
  }

  static bool is_source(const fmi::Variable& v) {
    return v.causality == "output" || v.causality == "calculatedParameter";
  }

  void read_connections() {
    const pugi::xml_node all = child(xml_->root(), "Connections");
    origins_["/connections"] = origin(all ? all : xml_->root());
    for (pugi::xml_node c = all.first_child(); c; c = c.next_sibling()) {
      if (c.type() != pugi::node_element) continue;
      const std::string kind = XmlFile::local(c);
      if (kind == "VariableConnection") variable_connection(c);
      else if (kind == "SignalConnection") signal_connection(c);
      else
        problem(c, "<" + kind +
                       "> is not supported (variable groups need the FMUs' OspModelDescription.xml: write "
                       "the group's variables as VariableConnection elements)");
    }
  }

  void variable_connection(pugi::xml_node c) {
    const auto ends = XmlFile::children(c, kOsp, "Variable");
    if (ends.size() != 2) return problem(c, "a VariableConnection joins two <Variable> elements");
    std::string a, b;
    const fmi::Variable *va = variable(ends[0], a), *vb = variable(ends[1], b);
    if (!va || !vb) return;
    if (!is_source(*va)) {
      std::swap(a, b);
      std::swap(va, vb);
    }
    if (!is_source(*va) || vb->causality != "input")
      return problem(c, "a connection joins an output to an input; here " + va->causality + " and " + vb->causality);
    add_connection(c, a, b, nullptr);
  }

  void signal_connection(pugi::xml_node c) {
    const pugi::xml_node signal = child(c, "Signal"), var = child(c, "Variable");
    if (!signal || !var) return problem(c, "a SignalConnection joins one <Signal> and one <Variable>");
    auto it = linear_.find(signal.attribute("function").value());
    if (it == linear_.end())
      return problem(signal,
                     "no LinearTransformation function \"" + std::string(signal.attribute("function").value()) + "\"");
    std::string end;
    const fmi::Variable* v = variable(var, end);
    if (!v) return;
    const std::string port = signal.attribute("name").value();
    if (port == "in" && is_source(*v)) it->second.in.emplace_back(end, c);
    else if (port == "out" && v->causality == "input") it->second.out.emplace_back(end, c);
    else
      problem(c, "signal \"" + port + "\" of a LinearTransformation with a variable of causality " + v->causality +
                     " (in: from an output; out: to an input)");
  }

  // Each function becomes connections from its one source to each of its targets.
  void connect_functions() {
    for (const auto& [name, l] : linear_) {
      if (l.in.size() != 1 || l.out.empty()) {
        problem(l.node, "function \"" + name + "\" needs one SignalConnection to \"in\" and at least one from \"out\"");
        continue;
      }
      for (const auto& [to, node] : l.out) add_connection(node, l.in[0].first, to, &l);
    }
  }

  void add_connection(pugi::xml_node n, const std::string& from, const std::string& to, const Linear* l) {
    ordered c = ordered::object();
    c["from"] = from;
    c["to"] = to;
    if (l) c["transformation"] = {{"factor", l->factor}, {"offset", l->offset}};
    c["unit_conversion"] = false;  // libcosim passes values as they are
    origins_["/connections/" + std::to_string(connections_.size())] = origin(n);
    connections_.push_back(c);
  }

  ordered assemble() {
    ordered d = ordered::object();
    d["format"] = 1;
    d["title"] = system_.name;
    if (pugi::xml_node desc = child(xml_->root(), "Description")) d["description"] = desc.text().get();
    d["subsystems"] = ordered::object();
    for (Simulator& s : simulators_) d["subsystems"][s.name] = s.entry;
    d["connections"] = connections_;
    d["coupling"] = coupling_;
    d["output"] = (fs::path("out") / system_.name).string();
    return d;
  }

  SystemFile system_;
  std::unique_ptr<XmlFile> xml_;
  std::vector<Diagnostic> problems_;
  std::vector<std::string> notes_;
  std::map<std::string, std::string> origins_;
  ordered coupling_ = ordered::object();
  std::vector<Simulator> simulators_;
  std::map<std::string, Linear> linear_;
  std::vector<ordered> connections_;
};

}  // namespace

bool is_osp(const XmlFile& file) { return XmlFile::is(file.root(), kOsp, "OspSystemStructure"); }

SspManifest read_osp(SystemFile system, std::unique_ptr<XmlFile> xml) {
  return OspReader(std::move(system), std::move(xml)).read();
}

}  // namespace stride::host::ssp
