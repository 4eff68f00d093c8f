#include "graph/graph_builder.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "fmi/fmu.hpp"
#include "fmi/instance.hpp"  // fmt_time
#include "input/plugin_version.hpp"
#include "input/units.hpp"
#include "run/run_log.hpp"
#include "run/text_signal.hpp"
#include "stride/host/graph/adapters.hpp"

namespace stride::host {
namespace {

// A port wider than this is a plugin's mistake, not a model (the largest shipped port has 9).
constexpr std::size_t kMaxPortSize = 1'000'000;

std::string list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "(none)" : s;
}

std::string describe_port(const PortSpec& p) {
  return p.name + " (" + (p.direction == Direction::input ? "input" : "output") + ", " + std::to_string(p.size) +
         " x " + (p.unit.empty() ? "1" : p.unit) + ")";
}

std::string unit_of(const PortSpec& p) { return p.unit.empty() ? "1" : p.unit; }

// "an extrapolator", "a subsystem"
std::string with_article(const std::string& word) {
  const bool vowel = !word.empty() && std::string("aeiou").find(word[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + word;
}

// What an integrator will read from an ODE system's states(): one entry per state or none, a
// unit UDUNITS-2 reads, a positive nominal value and tolerance. Throws std::runtime_error.
void check_states(const OdeSystem& sys, const std::string& plugin) {
  const auto states = sys.states();
  if (!states.empty() && states.size() != sys.state_size())
    throw std::runtime_error("plugin \"" + plugin + "\" declares " + std::to_string(states.size()) +
                             " states in states() for a state of size " + std::to_string(sys.state_size()));
  for (const auto& st : states) {
    const std::string what = "plugin \"" + plugin + "\" declares state \"" + st.name + "\"";
    if (auto why = unit_problem(st.unit); !why.empty())
      throw std::runtime_error(what + " in unit \"" + st.unit + "\": " + why);
    if (!(st.nominal > 0.0) || !std::isfinite(st.nominal))
      throw std::runtime_error(what + " with nominal value " + number_text(st.nominal) +
                               " (expected a positive number)");
    if (!std::isnan(st.absolute_tolerance) && !(st.absolute_tolerance > 0.0))
      throw std::runtime_error(what + " with absolute tolerance " + number_text(st.absolute_tolerance) +
                               " (expected a positive number, or NaN for atol times the nominal value)");
  }
}

}  // namespace

GraphBuilder::GraphBuilder(const Manifest& manifest, const PluginRegistry& registry)
    : manifest_(manifest), reg_(registry), file_(manifest.file.string()), graph_(std::make_unique<Graph>()) {
  graph_->log = std::make_unique<RunLog>(manifest_.log);
  // Never reallocated: links and nodes point into both.
  graph_->nodes.reserve(manifest_.subsystems.size());
  graph_->links.reserve(manifest_.connections.size());
  for (const auto& sc : manifest_.subsystems) sub_names_.push_back(sc.name);
}

GraphBuilder::~GraphBuilder() = default;

std::unique_ptr<Graph> GraphBuilder::build(const Manifest& manifest, const PluginRegistry& registry) {
  GraphBuilder b(manifest, registry);
  b.add_subsystems();
  b.add_connections();
  b.check_unconnected_inputs();
  b.check_algebraic_loops();
  b.add_power_bonds();
  b.add_bounds();
  b.order_subsystems();
  b.describe_bond_delays();
  b.add_record_columns();
  return b.finish();
}

std::unique_ptr<Graph> GraphBuilder::finish() {
  if (!diags_.empty() || !manifest_.problems.empty()) {
    std::vector<Diagnostic> all = manifest_.problems;
    all.insert(all.end(), diags_.begin(), diags_.end());
    attribute_to_variables(all, manifest_);
    throw ManifestError(all);
  }
  return std::move(graph_);
}

// ---- Shared by the phases -------------------------------------------------------------------

void GraphBuilder::error(const std::string& pointer, std::string message) {
  diags_.push_back({file_, pointer, std::move(message)});
}

std::vector<std::string> GraphBuilder::names_of(Kind kind) const {
  std::vector<std::string> v;
  for (auto* p : reg_.plugins(kind)) v.push_back(p->info().name);
  return v;
}

// A plugin's parameters with its path parameters (ParamType::path) resolved against the folder
// of the manifest they were written in.
json GraphBuilder::in_manifest(const PluginRef& ref) const {
  const LoadedPlugin* p = reg_.find(ref.plugin);
  if (!p || !ref.parameters.is_object() || manifest_.file.empty()) return ref.parameters;
  json out = ref.parameters;
  namespace fs = std::filesystem;
  const fs::path base = fs::absolute(manifest_.file).parent_path();
  for (const auto& s : p->info().parameters) {
    if (s.type != ParamType::path || !out.contains(s.name) || !out[s.name].is_string()) continue;
    const std::string v = out[s.name].get<std::string>();
    if (!v.empty() && fs::path(v).is_relative()) out[s.name] = (base / v).lexically_normal().string();
  }
  return out;
}

// Messages of a subsystem's plugin objects carry its name and time; an integrator's or a
// formulation's also the plugin's role.
Logger& GraphBuilder::logger_for(const Node& n, const std::string& role, const std::string& plugin) {
  return graph_->log->sink(role.empty() ? n.name : n.name + " (" + role + " " + plugin + ")", n.name,
                           n.plugin_inputs->clock());
}

const LoadedPlugin* GraphBuilder::resolve(const PluginRef& ref, Kind kind, const std::string& pointer) {
  const LoadedPlugin* p = reg_.find(ref.plugin);
  if (!p) {
    auto avail = names_of(kind);
    std::string msg = std::string("unknown ") + to_string(kind) + " plugin \"" + ref.plugin + "\"";
    if (auto note = refused_note(reg_, ref.plugin); !note.empty()) msg += note;
    else if (auto c = closest(ref.plugin, avail); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
    error(pointer, msg + "; available: " + list(avail));
    return nullptr;
  }
  if (p->info().kind != kind) {
    error(pointer, "expected " + with_article(to_string(kind)) + " plugin, found \"" + ref.plugin + "\", which is " +
                       with_article(to_string(p->info().kind)) + "; available: " + list(names_of(kind)));
    return nullptr;
  }
  const bool version = version_ok(ref, *p);
  const bool parameters = parameters_ok(ref, *p);
  return version && parameters ? p : nullptr;
}

bool GraphBuilder::version_ok(const PluginRef& ref, const LoadedPlugin& p) {
  if (ref.version.empty()) return true;
  std::vector<VersionClause> required;
  parse_requirement(ref.version, required);  // well formed: checked with the manifest
  const std::string& found = p.info().version;
  if (auto v = parse_version(found); !v) {
    error(ref.version_pointer, "plugin \"" + ref.plugin + "\" declares version \"" + found +
                                   "\", which is not dotted integers, so the requirement \"" + ref.version +
                                   "\" cannot be checked (" + p.file.string() + ")");
    return false;
  } else if (!satisfies(*v, required)) {
    error(ref.version_pointer, "plugin \"" + ref.plugin + "\" is version " + found + ", which does not satisfy \"" +
                                   ref.version + "\" (" + p.file.string() + ")");
    return false;
  }
  return true;
}

bool GraphBuilder::parameters_ok(const PluginRef& ref, const LoadedPlugin& p) {
  bool ok = true;
  const auto& specs = p.info().parameters;
  std::vector<std::string> spec_names;
  for (const auto& s : specs) spec_names.push_back(s.name);
  const std::string pp = ref.pointer + "/parameters";
  for (auto it = ref.parameters.begin(); it != ref.parameters.end(); ++it) {
    auto s = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& x) { return x.name == it.key(); });
    if (s == specs.end()) {
      std::string msg = "plugin \"" + ref.plugin + "\" has no parameter \"" + it.key() + "\"";
      if (auto c = closest(it.key(), spec_names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      error(pp + "/" + it.key(), msg + "; parameters: " + list(spec_names));
      ok = false;
    } else {
      json value = it.value();  // make_params reads it again through the same accept_param
      std::string where;
      if (auto e = accept_param(*s, value, &where); !e.empty()) {
        error(pp + "/" + pointer_escape(it.key()) + where, e);
        ok = false;
      }
    }
  }
  for (const auto& s : specs)
    if (s.default_value.is_null() && !ref.parameters.contains(s.name)) {
      error(pp + "/" + s.name,
            "required parameter \"" + s.name + "\" of plugin \"" + ref.plugin + "\" is missing (" + s.doc + ")");
      ok = false;
    }
  return ok;
}

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

// ---- add_subsystems -------------------------------------------------------------------------

void GraphBuilder::add_subsystems() {
  for (const SubsystemConfig& sc : manifest_.subsystems) add_subsystem(sc);
}

bool GraphBuilder::add_subsystem(SubsystemConfig sc) {
  // An FMU is unpacked and checked here, then resolved like a plugin named by its file.
  const fmi::FmuPlugin* fmu = nullptr;
  if (!sc.fmu.empty()) {
    std::string why;
    const LoadedPlugin* lp = reg_.load_fmu(sc.fmu, why);
    if (!lp) {
      error(sc.pointer + "/fmu", why);
      return false;
    }
    sc.plugin.plugin = lp->info().name;
    fmu = lp->fmu.get();
  }
  const LoadedPlugin* p = resolve(sc.plugin, Kind::subsystem, sc.pointer + (fmu ? "/fmu" : "/plugin"));
  if (!p) return false;
  Node node;
  node.name = sc.name;
  node.plugin = sc.plugin.plugin;
  node.pointer = sc.pointer;
  node.step = sc.step;
  const Form form = p->info().form;
  bool made = false;
  json fmu_params;  // an FMU's parameters and start values, checked
  if (fmu) {
    made = create_fmu_subsystem(node, sc, *p, *fmu, fmu_params);
  } else if (form == Form::ode) {
    made = create_ode_subsystem(node, sc);
  } else if (form == Form::multibody) {
    made = create_multibody_subsystem(node, sc);
  } else {
    if (sc.integrator)
      error(sc.integrator->pointer,
            "subsystem plugin \"" + sc.plugin.plugin + "\" steps itself and takes no integrator");
    if (sc.formulation)
      error(sc.formulation->pointer,
            "subsystem plugin \"" + sc.plugin.plugin + "\" steps itself and takes no formulation");
    node.sub = created(sc.pointer, [&] { return reg_.create_subsystem(sc.plugin.plugin, in_manifest(sc.plugin)); });
    made = node.sub != nullptr;
  }
  if (!made || !node.sub) return false;
  // Adapters (ODE, multibody) bound their parts above; an FMU routes its messages here.
  if (fmu || form == Form::stepper) node.sub->bind_logger(logger_for(node));
  if (!declare_ports(node, sc, fmu != nullptr)) return false;
  // An FMU input no connection feeds keeps its start value (or the manifest's).
  for (std::size_t k : node.inputs)
    node.input_start.push_back(fmu ? fmu->input_start(node.ports[k].name, fmu_params)
                                   : std::vector<double>(node.ports[k].size, 0.0));
  std::vector<Bond> bonded = bonded_inputs(node, sc);
  check_through(node, sc);
  check_snapshots(node, sc);
  try {
    node.sub->bind(*node.plugin_inputs);
  } catch (...) {
    error(sc.pointer, "plugin \"" + node.plugin + "\" threw while the host bound its inputs");
    return false;
  }
  node.index = static_cast<int>(graph_->nodes.size());
  graph_->nodes.push_back(std::move(node));
  by_name_[graph_->nodes.back().name] = &graph_->nodes.back();
  bond_ports_.push_back(std::move(bonded));
  return true;
}

bool GraphBuilder::create_fmu_subsystem(Node& node, const SubsystemConfig& sc, const LoadedPlugin& p,
                                        const fmi::FmuPlugin& fmu, json& fmu_params) {
  // Co-simulation FMUs step themselves; with an integrator, the model-exchange interface.
  if (sc.formulation) error(sc.formulation->pointer, "an FMU takes no formulation");
  const auto& md = fmu.description();
  if (sc.integrator && !md.has_me) {
    error(sc.integrator->pointer,
          "the FMU has no model-exchange interface, so it takes no integrator (it steps itself)");
    return false;
  }
  if (!sc.integrator && !md.has_cs && !md.derivatives.empty()) {
    error(sc.pointer + "/integrator", "the FMU is for model exchange only and has continuous states: name an integrator; available: " +
                                          list(names_of(Kind::integrator)));
    return false;
  }
  if (sc.integrator) {
    if (!resolve(*sc.integrator, Kind::integrator, sc.integrator->pointer)) return false;
    node.plugin += " + " + sc.integrator->plugin;
  }
  node.fmu = true;
  fmu_md_[sc.name] = &md;
  if (!sc.integrator && !md.can_variable_step && !fixed_step_ok(sc)) return false;
  // Variables the record names beside the FMU's outputs: read like outputs.
  const std::vector<std::string> observed = recorded_fmu_variables(sc.name, md);
  node.sub = created(sc.pointer + "/fmu", [&]() -> std::shared_ptr<Subsystem> {
    const Params prm = reg_.make_params(p, sc.plugin.parameters);
    fmu_params = prm.values();
    std::shared_ptr<Integrator> integ;
    if (sc.integrator) {
      integ = reg_.create_integrator(sc.integrator->plugin, in_manifest(*sc.integrator));
      integ->bind_logger(logger_for(node, "integrator", sc.integrator->plugin));
    }
    auto keep = p.fmu;  // the binary and the unpacked folder outlive the instance
    auto lib = fmu.library(bool(integ));
    std::unique_ptr<Subsystem> made;
    try {
      made = fmu.create(prm, sc.name, integ, observed, manifest_.coupling.start);
    } catch (const ParameterError& e) {
      error(sc.pointer + "/parameters" + e.pointer(), e.what());  // where the user wrote the value
      return nullptr;
    } catch (const PluginError&) {
      throw;
    } catch (const std::exception& e) {
      throw PluginError(p.info().name, e.what());
    }
    return std::shared_ptr<Subsystem>(made.release(), [keep, lib](Subsystem* o) { delete o; });
  });
  return node.sub != nullptr;
}

// A co-simulation FMU that cannot change its step size (canHandleVariableCommunicationStepSize
// false) is refused here, not at the step that would change it: every step it is given has one
// length when macro steps are fixed, a multiple of the (aligned) step, and fill the span.
bool GraphBuilder::fixed_step_ok(const SubsystemConfig& sc) {
  const CouplingConfig& c = manifest_.coupling;
  const std::string why = "the FMU cannot change its communication step size (canHandleVariableCommunicationStepSize=\"false\"), ";
  auto multiple = [](double a, double b) { return std::abs(a / b - std::round(a / b)) <= 1e-9 * std::max(1.0, a / b); };
  if (c.step_control.enabled) {
    error("/coupling/step_control", why + "but an adaptive macro step changes it; use a fixed macro step");
    return false;
  }
  const double macro = c.macro_step, span = c.end - c.start;
  const double h = c.align && sc.step > 0 ? std::min(sc.step, macro) : sc.step > 0 ? sc.step : macro;
  if (c.align && !multiple(macro, h)) {
    error(sc.pointer + "/step", why + "but steps of " + number_text(h) + " s in macro steps of " + number_text(macro) +
                                    " s end with a step of " + fmi::fmt_time(macro - std::floor(macro / h) * h) +
                                    " s; make the macro step a multiple of the subsystem's step");
    return false;
  }
  if (!multiple(span, h)) {
    error("/coupling/end", why + "but steps of " + number_text(h) + " s from " + number_text(c.start) + " to " +
                               number_text(c.end) + " s end with a shorter one; make the span a multiple of the step");
    return false;
  }
  return true;
}

bool GraphBuilder::create_ode_subsystem(Node& node, const SubsystemConfig& sc) {
  if (!sc.integrator) {
    error(sc.pointer + "/integrator",
          "subsystem plugin \"" + sc.plugin.plugin +
              "\" is an ODE system: name an integrator; available: " + list(names_of(Kind::integrator)));
    return false;
  }
  if (!resolve(*sc.integrator, Kind::integrator, sc.integrator->pointer)) return false;
  node.plugin += " + " + sc.integrator->plugin;
  node.sub = created(sc.pointer, [&]() -> std::shared_ptr<Subsystem> {
    auto sys = reg_.create_ode(sc.plugin.plugin, sc.plugin.parameters);
    auto integ = reg_.create_integrator(sc.integrator->plugin, in_manifest(*sc.integrator));
    sys->bind_logger(logger_for(node));
    integ->bind_logger(logger_for(node, "integrator", sc.integrator->plugin));
    check_states(*sys, sc.plugin.plugin);
    return make_ode_subsystem(std::move(sys), std::move(integ));
  });
  return node.sub != nullptr;
}

bool GraphBuilder::create_multibody_subsystem(Node& node, const SubsystemConfig& sc) {
#if __has_include(<stride/multibody.hpp>)
  if (!sc.formulation) {
    error(sc.pointer + "/formulation",
          "subsystem plugin \"" + sc.plugin.plugin +
              "\" is a multibody model: name a formulation; available: " + list(names_of(Kind::formulation)));
    return false;
  }
  if (!resolve(*sc.formulation, Kind::formulation, sc.formulation->pointer)) return false;
  node.plugin += " + " + sc.formulation->plugin;
  node.sub = created(sc.pointer, [&]() -> std::shared_ptr<Subsystem> {
    auto model = reg_.create_model(sc.plugin.plugin, in_manifest(sc.plugin));
    auto formulation = reg_.create_formulation(sc.formulation->plugin, in_manifest(*sc.formulation));
    model->bind_logger(logger_for(node));
    formulation->bind_logger(logger_for(node, "formulation", sc.formulation->plugin));
    return make_multibody_subsystem(std::move(model), std::move(formulation));
  });
  return node.sub != nullptr;
#else
  error(sc.pointer + "/plugin", "this host was built without multibody support");
  return false;
#endif
}

// The plugin's ports: distinct names, sane sizes, units UDUNITS-2 reads; then the layout of
// the inputs and of the outputs (concatenated in declaration order).
bool GraphBuilder::declare_ports(Node& node, const SubsystemConfig& sc, bool fmu) {
  try {
    node.ports = node.sub->ports();
  } catch (const std::exception& e) {
    error(sc.pointer, "plugin \"" + node.plugin + "\" failed to declare its ports: " + e.what());
    return false;
  } catch (...) {
    error(sc.pointer, "plugin \"" + node.plugin +
                          "\" failed to declare its ports: it threw an exception that is not a std::exception");
    return false;
  }
  std::set<std::string> seen;
  bool ok = true;
  for (const auto& port : node.ports) {
    if (!seen.insert(port.name).second || port.size == 0 || port.size > kMaxPortSize) {
      error(sc.pointer, "plugin \"" + node.plugin + "\" declares port \"" + port.name + "\" twice, or with size " +
                            std::to_string(port.size) + " (expected 1 to " + std::to_string(kMaxPortSize) + ")");
      ok = false;
    }
    // A plugin's port unit must be one UDUNITS-2 reads (an FMU's units are names the FMU
    // defines, checked when they are connected).
    if (!fmu)
      if (auto why = unit_problem(port.unit); !why.empty()) {
        error(sc.pointer, "plugin \"" + node.plugin + "\" declares port \"" + port.name + "\" in unit \"" + port.unit +
                              "\": " + why);
        ok = false;
      }
  }
  if (!ok) return false;
  node.output_offset.assign(node.ports.size(), 0);
  for (std::size_t i = 0; i < node.ports.size(); ++i) {
    if (node.ports[i].direction == Direction::input) {
      node.inputs.push_back(i);
    } else {
      node.output_offset[i] = node.output_width;
      node.output_width += node.ports[i].size;
    }
  }
  node.in_links.assign(node.inputs.size(), {});
  return true;
}

// An output that passes an input on (PortSpec::through) names an input of its size.
void GraphBuilder::check_through(const Node& node, const SubsystemConfig& sc) {
  for (const PortSpec& o : node.ports) {
    if (o.through.empty()) continue;
    const int k = node.port_index(o.through);
    if (o.direction != Direction::output || k < 0 ||
        node.ports[static_cast<std::size_t>(k)].direction != Direction::input ||
        node.ports[static_cast<std::size_t>(k)].size != o.size)
      error(sc.pointer, "plugin \"" + node.plugin + "\": port \"" + o.name + "\" passes on \"" + o.through +
                            "\", which is not an input of the same size (PortSpec::through is for outputs)");
  }
}

// Power bonds: each bonded input pairs with the output of the same bond and opposite role.
std::vector<Bond> GraphBuilder::bonded_inputs(const Node& node, const SubsystemConfig& sc) {
  std::vector<Bond> bonded;
  for (std::size_t k = 0; k < node.inputs.size(); ++k) {
    const PortSpec& in = node.ports[node.inputs[k]];
    if (in.role == BondRole::none) continue;
    auto out = std::find_if(node.ports.begin(), node.ports.end(), [&](const PortSpec& o) {
      return o.direction == Direction::output && o.bond == in.bond && o.role != BondRole::none && o.role != in.role;
    });
    if (out == node.ports.end() || out->size != in.size) {
      error(sc.pointer, "plugin \"" + node.plugin + "\": input \"" + in.name + "\" of bond \"" + in.bond +
                            "\" has no conjugate output of the same size");
      continue;
    }
    Bond b;
    b.name = in.bond;
    b.input = k;
    b.output_offset = node.output_offset[static_cast<std::size_t>(out - node.ports.begin())];
    b.width = in.size;
    b.sign = in.role == BondRole::effort ? 1.0 : -1.0;
    bonded.push_back(b);
  }
  return bonded;
}

// Repeated macro steps need every subsystem's snapshots.
void GraphBuilder::check_snapshots(const Node& node, const SubsystemConfig& sc) {
  const CouplingConfig& c = manifest_.coupling;
  if (!c.iteration.enabled && !c.step_control.reject) return;
  bool saves = false;
  try {
    saves = node.sub->can_save_state();
  } catch (...) {
  }
  if (saves) return;
  error(sc.pointer,
        std::string(c.iteration.enabled ? "iterative coupling (/coupling/iteration)"
                                        : "the adaptive macro step with \"reject\": true (/coupling/step_control)") +
            " repeats macro steps from snapshots, but subsystem \"" + node.name + "\" (" + node.plugin +
            ") cannot save and restore its state" +
            (!sc.fmu.empty() ? " (the FMU does not declare canGetAndSetFMUstate for this interface)" : ""));
}

// ---- add_connections ------------------------------------------------------------------------

void GraphBuilder::add_connections() {
  for (const auto& cc : manifest_.connections) add_connection(cc);
}

Node* GraphBuilder::find_node(const std::string& name, const std::string& pointer) {
  auto it = by_name_.find(name);
  if (it != by_name_.end()) return it->second;
  const auto& declared = manifest_.declared_subsystems;
  if (std::find(sub_names_.begin(), sub_names_.end(), name) != sub_names_.end() ||
      std::find(declared.begin(), declared.end(), name) != declared.end())
    return nullptr;  // reported already
  std::string msg = "unknown subsystem \"" + name + "\"";
  if (auto c = closest(name, sub_names_); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
  error(pointer, msg + "; subsystems: " + list(sub_names_));
  return nullptr;
}

int GraphBuilder::find_port(const Node& n, const std::string& port, Direction dir, const std::string& pointer) {
  int i = n.port_index(port);
  std::vector<std::string> candidates, described;
  for (const auto& p : n.ports)
    if (p.direction == dir) candidates.push_back(p.name), described.push_back(describe_port(p));
  const char* what = dir == Direction::input ? "input" : "output";
  if (i < 0) {
    std::string msg = "subsystem \"" + n.name + "\" has no port \"" + port + "\"";
    if (auto c = closest(port, candidates); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
    error(pointer, msg + "; its " + what + "s: " + list(described));
    return -1;
  }
  if (n.ports[static_cast<std::size_t>(i)].direction != dir) {
    error(pointer, "expected an " + std::string(what) + " port, found \"" + n.name + "." + port + "\", which is an " +
                       (dir == Direction::input ? "output" : "input") + "; " + what + "s of \"" + n.name +
                       "\": " + list(described));
    return -1;
  }
  return i;
}

// Element ranges inside their ports, and as many elements on both ends.
bool GraphBuilder::ranges_ok(const ConnectionConfig& cc, const PortSpec& so, const PortSpec& di) {
  bool ok = true;
  const std::size_t s_first = cc.from_first, s_count = cc.from_count ? cc.from_count : so.size;
  const std::size_t d_first = cc.to_first, d_count = cc.to_count ? cc.to_count : di.size;
  if (s_first >= so.size || s_count > so.size - s_first) {
    error(cc.pointer + "/from", "elements [" + std::to_string(s_first) + ", " + std::to_string(s_first + s_count) +
                                    ") out of range: " + cc.from_subsystem + "." + so.name + " has " +
                                    std::to_string(so.size) + " elements");
    ok = false;
  }
  if (d_first >= di.size || d_count > di.size - d_first) {
    error(cc.pointer + "/to", "elements [" + std::to_string(d_first) + ", " + std::to_string(d_first + d_count) +
                                  ") out of range: " + cc.to_subsystem + "." + di.name + " has " +
                                  std::to_string(di.size) + " elements");
    ok = false;
  }
  if (ok && s_count != d_count) {
    error(cc.pointer + "/to", "size mismatch: " + cc.from_text + " gives " + std::to_string(s_count) + " element(s), " +
                                  cc.to_text + " expects " + std::to_string(d_count));
    ok = false;
  }
  return ok;
}

void GraphBuilder::add_connection(const ConnectionConfig& cc) {
  Node* src = find_node(cc.from_subsystem, cc.pointer + "/from");
  Node* dst = find_node(cc.to_subsystem, cc.pointer + "/to");
  if (text_connection(cc, src, dst)) return;  // String and Binary variables, beside the ports
  int sp = src ? find_port(*src, cc.from_port, Direction::output, cc.pointer + "/from") : -1;
  int dp = dst ? find_port(*dst, cc.to_port, Direction::input, cc.pointer + "/to") : -1;
  const LoadedPlugin* ep = resolve(cc.extrapolator, Kind::extrapolator, cc.extrapolator.pointer);
  if (sp < 0 || dp < 0) return;
  const PortSpec& so = src->ports[static_cast<std::size_t>(sp)];
  const PortSpec& di = dst->ports[static_cast<std::size_t>(dp)];
  bool ok = ranges_ok(cc, so, di);
  const std::size_t s_first = cc.from_first, s_count = cc.from_count ? cc.from_count : so.size;
  const std::size_t d_first = cc.to_first, d_count = cc.to_count ? cc.to_count : di.size;
  // Equal texts need no units library (an FMU may name a unit UDUNITS-2 does not know);
  // different spellings of one unit (kg*m/s^2 and N) convert with scale 1, i.e. not at all.
  std::optional<UnitConversion> conversion = UnitConversion{};
  if (cc.unit_conversion && unit_of(so) != unit_of(di)) {
    std::string why;
    conversion = unit_conversion(unit_of(so), unit_of(di), &why);
    if (!conversion) {
      error(cc.pointer + "/to", "unit mismatch: " + cc.from_subsystem + "." + so.name + " is in " + unit_of(so) + ", " +
                                    cc.to_subsystem + "." + di.name + " expects " + unit_of(di) + " (" + why + ")");
      ok = false;
    }
  }
  const auto k = static_cast<std::size_t>(std::find(dst->inputs.begin(), dst->inputs.end(), std::size_t(dp)) -
                                          dst->inputs.begin());
  if (ok)
    for (const Link* other : dst->in_links[k])
      if (d_first < other->dst_offset + other->width && other->dst_offset < d_first + d_count) {
        error(cc.pointer + "/to", "input \"" + cc.to_text + "\" is already fed by " + other->config.pointer +
                                      " (each input element takes one connection)");
        ok = false;
      }
  if (!ok || !ep) return;
  Link link;
  link.config = cc;
  link.src = src;
  link.src_offset = src->output_offset[static_cast<std::size_t>(sp)] + s_first;
  link.width = s_count;
  link.dst = dst;
  link.dst_input = k;
  link.dst_offset = d_first;
  if (conversion && !conversion->identity()) {
    link.convert = true;
    link.scale = conversion->scale;
    link.offset = conversion->offset;
    graph_->conversions.push_back(
        cc.from_text + " -> " + cc.to_text + ": " + unit_of(so) + " to " + unit_of(di) + " (x " +
        number_text(conversion->scale) +
        (conversion->offset != 0.0 ? " + " + number_text(conversion->offset) : std::string()) + ")");
  }
  if (cc.factor != 1.0 || cc.offset != 0.0) {  // f x + o in the source's unit, then converted
    link.offset = link.scale * cc.offset + link.offset;
    link.scale = link.scale * cc.factor;
    link.convert = true;
    graph_->conversions.push_back(cc.from_text + " -> " + cc.to_text + ": transformation x " +
                                  number_text(cc.factor) + " + " + number_text(cc.offset) + " (in " + unit_of(so) + ")");
  }
  link.extrapolator = created(cc.extrapolator.pointer, [&] {
    return reg_.create_extrapolator(cc.extrapolator.plugin, in_manifest(cc.extrapolator));
  });
  if (!link.extrapolator) return;
  link.extrapolator->bind_logger(graph_->log->sink(
      "connection " + cc.from_text + " -> " + cc.to_text + " (extrapolator " + cc.extrapolator.plugin + ")",
      "connection " + cc.pointer, dst->plugin_inputs->clock()));
  if (!created(cc.extrapolator.pointer, [&] {
        link.extrapolator->timing({src->step, dst->step, manifest_.coupling.macro_step});
        return true;
      }))
    return;
  link.index = static_cast<int>(graph_->links.size());
  graph_->links.push_back(std::move(link));
  dst->in_links[k].push_back(&graph_->links.back());
  src->out_links.push_back(&graph_->links.back());
}

// ---- Checks of the whole graph --------------------------------------------------------------

// Only meaningful when every subsystem was built and every connection could be resolved.
void GraphBuilder::check_unconnected_inputs() {
  if (!diags_.empty() || graph_->nodes.size() != manifest_.subsystems.size() || !manifest_.graph_complete) return;
  for (const Node& n : graph_->nodes)
    for (std::size_t k = 0; k < n.inputs.size(); ++k) {
      const PortSpec& in = n.ports[n.inputs[k]];
      std::size_t fed = 0;
      for (const Link* l : n.in_links[k]) fed += l->width;
      if (n.in_links[k].size() == 1)
        graph_->links[static_cast<std::size_t>(n.in_links[k][0]->index)].whole_port = fed == in.size;
      if (fed == in.size) continue;
      if (n.fmu || (manifest_.external_inputs && !fed)) {
        graph_->unconnected.push_back(n.name + "." + in.name + " = " + json(n.input_start[k]).dump() +
                                      (fed ? " where no connection feeds it" : "") +
                                      (n.fmu ? "" : " (an input of the exported FMU)"));
        continue;
      }
      error("/connections",
            "input \"" + n.name + "." + in.name + "\" (" + describe_port(in) + ") is " +
                (fed ? "only partly connected (" + std::to_string(fed) + " of " + std::to_string(in.size) + " elements)"
                     : std::string("not connected")) +
                "; add {\"from\": \"<subsystem>.<output>\", \"to\": \"" + n.name + "." + in.name + "\"}");
    }
  // An FMU's String and Binary inputs no connection feeds keep theirs too.
  for (const SubsystemConfig& sc : manifest_.subsystems) {
    const auto md = fmu_md_.find(sc.name);
    if (md == fmu_md_.end()) continue;
    for (const fmi::Variable& v : md->second->variables) {
      if (v.causality != "input" || (v.type != fmi::VarType::string && v.type != fmi::VarType::binary)) continue;
      const auto fed = text_fed_.find({by_name_.at(sc.name), v.name});
      const bool partly = fed != text_fed_.end();  // an array some of whose elements are fed
      if (partly && std::none_of(fed->second.begin(), fed->second.end(), [](const std::string& p) { return p.empty(); }))
        continue;
      const json& given = sc.plugin.parameters;
      json start = given.contains(v.name) ? given[v.name] : v.start;
      const auto* ports = dynamic_cast<const TextPorts*>(by_name_.at(sc.name)->sub.get());
      if (!v.dimensions.empty() && ports) {  // as many elements as this instance's array has
        json sized = json::array();
        for (std::size_t e = 0; e < ports->text_size(v.name); ++e)
          sized.push_back(start.is_array() && e < start.size() ? start[e] : json(""));
        start = std::move(sized);
      }
      std::string value = start.dump(-1, ' ', true);  // ASCII: cut anywhere
      if (value.size() > 80) value = value.substr(0, 76) + "...\"";
      graph_->unconnected.push_back(sc.name + "." + v.name + " = " + value + (partly ? " where no connection feeds it" : ""));
    }
  }
}

// A cycle through outputs with direct feedthrough: vertex = (node, output port); edge o -> o'
// when o feeds an input of the node of o' and o' has feedthrough.
void GraphBuilder::check_algebraic_loops() {
  if (!diags_.empty() || !manifest_.graph_complete) return;
  using Vertex = std::pair<const Node*, int>;
  std::map<Vertex, std::vector<Vertex>> adj;
  for (const Link& l : graph_->links) {
    const std::size_t at = l.src->output_port_at(l.src_offset);
    const int so = at < l.src->ports.size() ? int(at) : -1;
    for (std::size_t i = 0; i < l.dst->ports.size(); ++i)
      if (l.dst->ports[i].direction == Direction::output && l.dst->ports[i].feedthrough && l.src->ports[so].feedthrough)
        adj[{l.src, so}].push_back({l.dst, int(i)});
  }
  std::map<Vertex, int> state;
  std::vector<Vertex> stack;
  std::function<bool(Vertex)> dfs = [&](Vertex v) {
    state[v] = 1;
    stack.push_back(v);
    for (auto& w : adj[v]) {
      if (state[w] == 1) {
        std::string cycle;
        auto it = std::find(stack.begin(), stack.end(), w);
        for (; it != stack.end(); ++it) cycle += it->first->name + "." + it->first->ports[it->second].name + " -> ";
        cycle += w.first->name + "." + w.first->ports[w.second].name;
        error("/connections",
              "algebraic loop through outputs with direct feedthrough: " + cycle +
                  "; break it with an output that has no feedthrough (e.g. velocity–pressure coupling)");
        return true;
      }
      if (state[w] == 0 && dfs(w)) return true;
    }
    stack.pop_back();
    state[v] = 2;
    return false;
  };
  for (auto& [v, _] : adj)
    if (state[v] == 0 && dfs(v)) break;
}

// ---- add_power_bonds ------------------------------------------------------------------------

void GraphBuilder::add_power_bonds() {
  // One bond per connection into a bonded input.
  for (Node& n : graph_->nodes)
    for (const Bond& port : bond_ports_[static_cast<std::size_t>(n.index)])
      for (const Link* l : n.in_links[port.input]) {
        Bond b = port;
        b.element = l->dst_offset;
        b.output_offset = port.output_offset + l->dst_offset;
        b.width = l->width;
        if (l->width < n.ports[n.inputs[port.input]].size)
          b.name = port.name + "[" + std::to_string(l->dst_offset) +
                   (l->width > 1 ? ":" + std::to_string(l->dst_offset + l->width) : "") + "]";
        n.bonds.push_back(b);
      }
  std::vector<std::vector<char>> paired(graph_->nodes.size());
  for (const Node& n : graph_->nodes) paired[static_cast<std::size_t>(n.index)].assign(n.bonds.size(), 0);
  pair_bonds(paired);
  if (manifest_.coupling.step_control.enabled && graph_->bond_pairs.empty())
    error("/coupling/step_control",
          "the adaptive macro step is set by the energy residuals of power bonds, and no two "
          "subsystems here exchange power through a bond (`stride plugins describe NAME` shows "
          "a plugin's bonds); use a fixed macro step");
  warn_unpaired(paired);
}

GraphBuilder::Origin GraphBuilder::origin_of(const Link& l) const {
  Origin o{l.src, l.src_offset, {}};
  for (std::size_t hop = 0; hop < graph_->nodes.size(); ++hop) {
    const std::size_t pi = o.node->output_port_at(o.offset);
    if (pi >= o.node->ports.size() || o.node->ports[pi].through.empty()) break;
    const int k = o.node->port_index(o.node->ports[pi].through);
    if (k < 0) break;
    const auto in = std::find(o.node->inputs.begin(), o.node->inputs.end(), static_cast<std::size_t>(k));
    if (in == o.node->inputs.end()) break;
    const std::size_t e = o.offset - o.node->output_offset[pi];
    const Link* feed = nullptr;
    for (const Link* f : o.node->in_links[static_cast<std::size_t>(in - o.node->inputs.begin())])
      if (e >= f->dst_offset && e < f->dst_offset + f->width) feed = f;
    if (!feed || std::find(o.via.begin(), o.via.end(), o.node) != o.via.end()) break;
    o.via.push_back(o.node);
    o.offset = feed->src_offset + (e - feed->dst_offset);
    o.node = feed->src;
  }
  return o;
}

// Power bonds between pairs of subsystems (each pair once), directly or across subsystems that
// pass the values on: n's bond input comes from other's bond output, and n's bond output feeds
// other's bond input.
void GraphBuilder::pair_bonds(std::vector<std::vector<char>>& paired) {
  for (const Node& n : graph_->nodes)
    for (std::size_t i = 0; i < n.bonds.size(); ++i) {
      const Bond& b = n.bonds[i];
      for (const Link* in : n.in_links[b.input]) {
        if (in->dst_offset != b.element) continue;
        const Origin from = origin_of(*in);
        const Node* other = from.node;
        if (other == &n) continue;
        for (std::size_t j = 0; j < other->bonds.size(); ++j) {
          const Bond& ob = other->bonds[j];
          if (!(from.offset >= ob.output_offset && from.offset < ob.output_offset + ob.width)) continue;
          for (const Link* l : other->in_links[ob.input]) {
            if (l->dst_offset != ob.element) continue;
            const Origin back = origin_of(*l);
            if (back.node != &n || back.offset < b.output_offset || back.offset >= b.output_offset + b.width) continue;
            paired[static_cast<std::size_t>(n.index)][i] = paired[static_cast<std::size_t>(other->index)][j] = 1;
            if (n.index < other->index) graph_->bond_pairs.push_back({&n, i, other, j, back.via, from.via});
          }
        }
      }
    }
}

void GraphBuilder::warn_unpaired(const std::vector<std::vector<char>>& paired) {
  for (const Node& n : graph_->nodes)
    for (std::size_t i = 0; i < n.bonds.size(); ++i) {
      if (paired[static_cast<std::size_t>(n.index)][i]) continue;
      const Bond& b = n.bonds[i];
      std::string source = "nothing";
      for (const Link* in : n.in_links[b.input])
        if (in->dst_offset == b.element) {
          const Origin o = origin_of(*in);
          const std::size_t pi = o.node->output_port_at(o.offset);
          source = o.node->name + "." + (pi < o.node->ports.size() ? o.node->ports[pi].name : std::string("?"));
          for (auto v = o.via.rbegin(); v != o.via.rend(); ++v) source += " through " + (*v)->name;
        }
      graph_->bond_warnings.push_back(
          "power bond " + n.name + "." + b.name + " has no partner: its input " + n.name + "." +
          n.ports[n.inputs[b.input]].name + " comes from " + source +
          ", which is not the conjugate output of a subsystem it feeds back; its energy is not checked against another "
          "subsystem (a subsystem in between must declare that it passes the value on: PortSpec::through)");
    }
}

// ---- add_bounds, order_subsystems, describe_bond_delays, add_record_columns -----------------

void GraphBuilder::add_bounds() {
  for (const auto& ob : manifest_.monitor.bounds) {
    Node* n = find_node(ob.subsystem, ob.pointer);
    if (!n) continue;
    const int pi = find_port(*n, ob.port, Direction::output, ob.pointer);
    if (pi < 0) continue;
    const PortSpec& ps = n->ports[static_cast<std::size_t>(pi)];
    const std::size_t first = ob.first, count = ob.count ? ob.count : ps.size;
    if (first >= ps.size || count > ps.size - first) {
      error(ob.pointer, "elements [" + std::to_string(first) + ", " + std::to_string(first + count) +
                            ") out of range: " + ob.subsystem + "." + ob.port + " has " + std::to_string(ps.size) +
                            " elements");
      continue;
    }
    for (std::size_t e = first; e < first + count; ++e)
      n->bounds.push_back({n->output_offset[static_cast<std::size_t>(pi)] + e, ob.min, ob.max,
                           ob.subsystem + "." + ob.port + (ps.size > 1 ? "[" + std::to_string(e) + "]" : "")});
  }
}

void GraphBuilder::order_subsystems() {
  Graph& g = *graph_;
  std::vector<bool> ordered(g.nodes.size(), false);
  for (std::size_t i = 0; i < manifest_.coupling.order.size(); ++i) {
    const auto& name = manifest_.coupling.order[i];
    const auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      if (std::find(sub_names_.begin(), sub_names_.end(), name) == sub_names_.end()) {
        std::string msg = "unknown subsystem \"" + name + "\"";
        if (auto c = closest(name, sub_names_); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
        error("/coupling/order/" + std::to_string(i), msg + "; subsystems: " + list(sub_names_));
      }
    } else if (ordered[static_cast<std::size_t>(it->second->index)]) {
      error("/coupling/order/" + std::to_string(i), "subsystem \"" + name + "\" is listed twice");
    } else {
      g.order.push_back(it->second);
      ordered[static_cast<std::size_t>(it->second->index)] = true;
    }
  }
  for (const Node& n : g.nodes)
    if (!ordered[static_cast<std::size_t>(n.index)]) g.order.push_back(&n);
}

// The communication delay a paired bond's path adds (one connection per subsystem passed, plus
// the last): Jacobi, a macro step per connection; Gauss–Seidel, a macro step per connection
// that reads a subsystem later in the order.
std::string GraphBuilder::path_delay(const Node* from, const std::vector<const Node*>& via, const Node* to) const {
  const Graph& g = *graph_;
  const CouplingConfig& c = manifest_.coupling;
  auto order_pos = [&](const Node* x) { return std::find(g.order.begin(), g.order.end(), x) - g.order.begin(); };
  std::vector<const Node*> chain{from};
  for (auto v = via.rbegin(); v != via.rend(); ++v) chain.push_back(*v);
  chain.push_back(to);
  std::string text = chain.front()->name;
  int steps = 0;
  for (std::size_t k = 1; k < chain.size(); ++k) {
    text += " -> " + chain[k]->name;
    if (c.scheme == Scheme::jacobi) ++steps;
    else if (c.scheme == Scheme::gauss_seidel && order_pos(chain[k - 1]) > order_pos(chain[k])) ++steps;
  }
  if (c.scheme == Scheme::multirate)
    return text + ": " + std::to_string(chain.size() - 1) + " connection" + (chain.size() > 2 ? "s" : "") +
           " (multirate: each delays by up to its source's step)";
  return text + ": " + std::to_string(steps) + " macro step" + (steps == 1 ? "" : "s") + " (" +
         number_text(steps * c.macro_step) + " s)";
}

void GraphBuilder::describe_bond_delays() {
  for (const BondPair& p : graph_->bond_pairs)
    graph_->bond_delays.push_back(p.name() + ": " + path_delay(p.a, p.via_ab, p.b) + "; " +
                                  path_delay(p.b, p.via_ba, p.a));
}

void GraphBuilder::add_port_columns(Node& n, std::size_t pi) {
  const PortSpec& p = n.ports[pi];
  for (std::size_t e = 0; e < p.size; ++e) {
    std::string col = n.name + "." + p.name;
    if (p.size > 1) col += "." + (e < p.elements.size() ? p.elements[e] : std::to_string(e));
    n.record_cols.push_back(graph_->columns.size());
    n.record_elem.push_back(n.output_offset[pi] + e);
    n.recorded = true;
    graph_->columns.push_back(col);
  }
}

// The names of an FMU's variables beyond its outputs that the record chooses, by name or by
// pattern ("s.*", "*.der(*)"), each variable once. A pattern takes the variable's own name or
// else the first FMI 3 alias it matches; it never takes the independent variable (time is the
// first column already).
std::vector<std::string> GraphBuilder::recorded_fmu_variables(const std::string& sub, const fmi::ModelDescription& md) {
  std::vector<std::string>& known = fmu_variables_[sub];
  for (const fmi::Variable& v : md.variables)
    if ((fmi::observable(v) || fmi::text_recordable(v)) && v.causality != "independent") known.push_back(v.name);
  std::vector<std::string> names;
  auto add = [&](const std::string& n) {
    if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
  };
  for (const std::string& entry : manifest_.record.variables) {
    const auto dot = entry.find('.');
    const std::string s = entry.substr(0, dot), port = entry.substr(dot + 1);
    if (s != sub && !(is_pattern(s) && pattern_match(s, sub))) continue;
    if (!is_pattern(port) || md.find(port)) {
      add(port);
      continue;
    }
    for (const fmi::Variable& v : md.variables) {
      if (!fmi::observable(v) || v.causality == "independent") continue;
      if (pattern_match(port, v.name)) add(v.name);
      else if (auto a = std::find_if(v.aliases.begin(), v.aliases.end(), [&](const std::string& n) { return pattern_match(port, n); });
               a != v.aliases.end())
        add(*a);
    }
  }
  return names;
}

// One entry of record/variables that is a pattern and names no port exactly: every output port
// of every subsystem it matches, in the subsystems' order and each one's port order (an FMU's
// outputs first, then its other variables in the order of modelDescription.xml). Ports recorded
// by an earlier entry are not repeated; a pattern that matches nothing is an error listing what
// there is.
void GraphBuilder::add_pattern_columns(const std::string& sub, const std::string& port, const std::string& ptr) {
  std::vector<Node*> nodes;
  if (!is_pattern(sub)) {
    if (Node* n = find_node(sub, ptr)) nodes.push_back(n);
    else return;
  } else {
    for (Node& n : graph_->nodes)
      if (pattern_match(sub, n.name)) nodes.push_back(&n);
    const bool failed = std::any_of(sub_names_.begin(), sub_names_.end(), [&](const std::string& n) { return pattern_match(sub, n); });
    if (nodes.empty() && !failed) error(ptr, "the pattern \"" + sub + "\" matches no subsystem; subsystems: " + list(sub_names_));
    if (nodes.empty()) return;  // those it matches were not built, reported already
  }
  bool any = false, fmu = false;
  std::vector<std::string> there;
  for (Node* n : nodes) {
    for (std::size_t i = 0; i < n->ports.size(); ++i) {
      if (n->ports[i].direction != Direction::output) continue;
      there.push_back(n->name + "." + n->ports[i].name);
      if (!pattern_match(port, n->ports[i].name)) continue;
      any = true;
      if (recorded_.insert({n, i}).second) add_port_columns(*n, i);
    }
    const auto f = fmu_variables_.find(n->name);
    if (f == fmu_variables_.end()) continue;
    fmu = true;
    // Its String and Binary variables after the numbers, by name or else the first alias matched.
    for (const fmi::Variable& v : fmu_md_.at(n->name)->variables) {
      if (!fmi::text_recordable(v)) continue;
      const std::string* name = pattern_match(port, v.name) ? &v.name : nullptr;
      for (const std::string& a : v.aliases)
        if (!name && pattern_match(port, a)) name = &a;
      if (!name) continue;
      any = true;
      add_text_column(*n, *name, v, ptr);
    }
    for (const std::string& v : f->second)
      if (std::find(there.begin(), there.end(), n->name + "." + v) == there.end()) there.push_back(n->name + "." + v);
  }
  if (any) return;
  const std::size_t shown = 40, more = there.size() > shown ? there.size() - shown : 0;
  there.resize(there.size() - more);
  error(ptr, "the pattern \"" + sub + "." + port + "\" matches no output" + (fmu ? " or recordable variable" : "") +
                 "; there are: " + list(there) + (more ? " and " + std::to_string(more) + " more" : ""));
}

void GraphBuilder::add_record_columns() {
  add_named_columns();
  if (!manifest_.record.event_rows) return;
  // The rows at an event's time are written when the subsystem's step reaches it; another
  // subsystem's columns would need their values at that time after they have passed it.
  std::vector<std::string> recording;
  for (const Node& n : graph_->nodes)
    if (n.recorded) recording.push_back(n.name);
  if (recording.size() > 1)
    error("/record/event_rows", "event rows need every recorded column from one subsystem, found columns of " +
                                    list(recording) + "; name one subsystem's variables in /record/variables");
}

void GraphBuilder::add_named_columns() {
  if (manifest_.record.variables.empty()) {
    for (Node& n : graph_->nodes)
      for (std::size_t i = 0; i < n.ports.size(); ++i)
        if (n.ports[i].direction == Direction::output) add_port_columns(n, i);
    return;
  }
  for (std::size_t i = 0; i < manifest_.record.variables.size(); ++i) {
    const auto& v = manifest_.record.variables[i];
    const std::string ptr = "/record/variables/" + std::to_string(i);
    auto dot = v.find('.');
    const std::string sub = v.substr(0, dot), port = v.substr(dot + 1);
    if (is_pattern(sub) || is_pattern(port)) {
      auto it = by_name_.find(sub);  // a name with "*" or "?" in it is itself first
      if (it == by_name_.end() || it->second->port_index(port) < 0) {
        add_pattern_columns(sub, port, ptr);
        continue;
      }
    }
    Node* n = find_node(sub, ptr);
    if (!n) continue;
    if (const fmi::Variable* text = text_variable(*n, port)) {
      add_text_column(*n, port, *text, ptr);
      continue;
    }
    const int pi = find_port(*n, port, Direction::output, ptr);
    if (pi >= 0 && recorded_.insert({n, std::size_t(pi)}).second) add_port_columns(*n, static_cast<std::size_t>(pi));
  }
}

// ---- String and Binary variables ---------------------------------------------------------

// An FMU's String or Binary variable by name or FMI 3 alias; null for a port or anything else.
const fmi::Variable* GraphBuilder::text_variable(const Node& n, const std::string& name) const {
  const auto md = fmu_md_.find(n.name);
  if (!n.fmu || md == fmu_md_.end() || n.port_index(name) >= 0) return nullptr;
  const fmi::Variable* v = md->second->find(name);
  return v && (v->type == fmi::VarType::string || v->type == fmi::VarType::binary) ? v : nullptr;
}

// What the other end of a String or Binary connection is, for messages.
std::string GraphBuilder::text_partner(const Node& n, const std::string& port) const {
  if (const fmi::Variable* v = text_variable(n, port))
    return std::string("a ") + (v->type == fmi::VarType::binary ? "Binary" : "String") + " variable";
  const int i = n.port_index(port);
  if (i >= 0)
    return (n.fmu ? std::string("a numeric port of an FMU") : "a port of plugin " + n.plugin) + ": " +
           describe_port(n.ports[std::size_t(i)]);
  return "no port or variable of subsystem \"" + n.name + "\"";
}

// A connection naming a String or Binary variable at either end (true: made or refused here).
bool GraphBuilder::text_connection(const ConnectionConfig& cc, Node* src, Node* dst) {
  const fmi::Variable* from = src ? text_variable(*src, cc.from_port) : nullptr;
  const fmi::Variable* to = dst ? text_variable(*dst, cc.to_port) : nullptr;
  if (!from && !to) return false;
  if (src && dst) add_text_connection(cc, *src, from, *dst, to);
  return true;
}

// A String feeds a String input of another FMU and a Binary a Binary input: the value the
// source held at the latest communication point, set with the destination's inputs.
void GraphBuilder::add_text_connection(const ConnectionConfig& cc, Node& src, const fmi::Variable* from, Node& dst,
                                       const fmi::Variable* to) {
  const fmi::Variable& known = from ? *from : *to;
  const std::string type = known.type == fmi::VarType::binary ? "Binary" : "String";
  if (!from || !to || from->type != to->type) {
    const bool at_to = from != nullptr;
    error(cc.pointer + (at_to ? "/to" : "/from"),
          "\"" + (at_to ? cc.from_text : cc.to_text) + "\" is " + with_article(type) + " variable of an FMU: it connects only to " +
              with_article(type) + (at_to ? " input" : " variable") + " of an FMU, and \"" + (at_to ? cc.to_text : cc.from_text) +
              "\" is " + (at_to ? text_partner(dst, cc.to_port) : text_partner(src, cc.from_port)));
    return;
  }
  bool ok = true;
  auto refuse = [&](const std::string& where, const std::string& why) {
    error(cc.pointer + where, why);
    ok = false;
  };
  if (from->causality == "input")
    refuse("/from", "\"" + cc.from_text + "\" is an input: a connection reads an output (or a variable that is no input)");
  if (to->causality != "input")
    refuse("/to", "\"" + cc.to_text + "\" is no input (causality \"" + to->causality + "\"): a connection feeds an input");
  const bool ranged = cc.from_first || cc.from_count || cc.to_first || cc.to_count;
  if (ranged && from->dimensions.empty() && to->dimensions.empty())
    refuse("/from", "a " + type + " connection takes the whole variable: remove the element range");
  if (cc.factor != 1.0 || cc.offset != 0.0)
    refuse("/transformation", "a " + type + " value takes no transformation (factor and offset are for numbers)");
  if (cc.extrapolator.pointer != cc.pointer && cc.extrapolator.plugin != "zoh")
    refuse("/extrapolator", "a " + type + " connection passes the value held at each communication point and takes no "
                                    "extrapolator (\"" + cc.extrapolator.plugin + "\"): remove it");
  auto* out = dynamic_cast<TextPorts*>(src.sub.get());
  auto* in = dynamic_cast<TextPorts*>(dst.sub.get());
  if (!ok || !out || !in) return;
  // Element ranges and sizes as for numeric ports (an FMI 3 array's size from its structural
  // parameters); element by element, each one fed once.
  PortSpec so, di;
  so.name = cc.from_port, so.size = out->text_size(cc.from_port);
  di.name = cc.to_port, di.size = in->text_size(cc.to_port);
  if (!ranges_ok(cc, so, di)) return;
  const std::size_t count = cc.to_count ? cc.to_count : di.size;
  std::vector<std::string>& fed = text_fed_[{&dst, to->name}];
  fed.resize(di.size);
  for (std::size_t e = cc.to_first; e < cc.to_first + count; ++e)
    if (!fed[e].empty()) return refuse("/to", "input \"" + cc.to_text + "\" is already fed by " + fed[e]);
  for (std::size_t e = cc.to_first; e < cc.to_first + count; ++e) fed[e] = cc.pointer;
  created(cc.pointer, [&] {
    for (std::size_t i = 0; i < count; ++i)
      in->text_input(to->name, cc.to_first + i, out->text_output(cc.from_port, cc.from_first + i));
    ++graph_->text_connections;
    return true;
  });
}

// One column of a String or Binary variable (not an input: those are what a connection set).
void GraphBuilder::add_text_column(Node& n, const std::string& name, const fmi::Variable& v, const std::string& ptr) {
  const std::string type = v.type == fmi::VarType::binary ? "Binary" : "String";
  if (v.causality == "input") {
    error(ptr, "\"" + n.name + "." + name + "\" is " + with_article(type) +
                   " input: results.csv records outputs and other variables, not inputs; record what feeds it");
    return;
  }
  auto* ports = dynamic_cast<TextPorts*>(n.sub.get());
  if (!ports || !recorded_text_.insert({&n, v.name}).second) return;
  // An array: one column per element, named as a numeric array's.
  created(ptr, [&] {
    const std::size_t size = ports->text_size(name);
    for (std::size_t e = 0; e < size; ++e) {
      n.text_cols.push_back({graph_->columns.size(), ports->text_output(name, e)});
      graph_->columns.push_back(n.name + "." + name + (size > 1 ? "." + std::to_string(e) : std::string()));
    }
    n.recorded = true;
    return true;
  });
}

}  // namespace stride::host
