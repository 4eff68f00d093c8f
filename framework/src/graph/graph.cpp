// Building the co-simulation graph from a manifest, with every check that needs the plugins:
// parameters, ports, directions, sizes, units, unconnected inputs, algebraic loops.
#include "graph/graph.hpp"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "fmi/fmu.hpp"
#include "input/plugin_version.hpp"
#include "run/run_log.hpp"
#include "stride/host/graph/adapters.hpp"
#include "input/units.hpp"

namespace stride::host {

void Link::push_now(double t) {
  std::span<const double> y = std::span<const double>(src->y).subspan(src_offset, width);
  if (convert) {
    for (std::size_t i = 0; i < width; ++i) converted[i] = y[i] * scale + offset;
    y = converted;
  }
  extrapolator->push(t, y);
  last_push = t;
  ++pushes;
  dst->inputs_renewed = true;
  // A hold from the new sample on is the sample itself: the destination reads it from here
  // without evaluating the extrapolator.
  const double held = extrapolator->holds_from();
  if (whole_port && held <= t) {
    for (std::size_t i = 0; i < width; ++i) value[i] = y[i];
    value_time = std::numeric_limits<double>::quiet_NaN();
    dst->input_view.know(dst_input, held, value);
  } else {
    dst->input_view.forget(dst_input);
  }
}

void NodeInputs::prepare() {
  known_.assign(node_.inputs.size(), Known{});
  set_known(known_.data(), known_.size());
}

std::span<const double> NodeInputs::evaluate(std::size_t port, double t) {
  if (port >= node_.in_links.size())
    throw std::out_of_range("input index " + std::to_string(port) + " read by subsystem \"" + node_.name + "\", which has " +
                            std::to_string(node_.in_links.size()) + " inputs");
  const auto& links = node_.in_links[port];
  // The interval of times for which every link's value is the one evaluated now: a hold from
  // its start on, else this instant only.
  double from = -std::numeric_limits<double>::infinity(), to = std::numeric_limits<double>::infinity();
  for (Link* l : links) {
    if (l->iterating) {
      if (!(t == l->value_time && l->pushes == l->value_pushes)) {
        const double span = l->iter_t1 - l->iter_t0;
        const double w = span > 0 ? std::clamp((t - l->iter_t0) / span, 0.0, 1.0) : 1.0;
        for (std::size_t i = 0; i < l->width; ++i) l->value[i] = (1 - w) * l->iter_start[i] + w * l->iter_end[i];
        l->value_time = t;
        l->value_pushes = l->pushes;
      }
      from = std::max(from, t);
      to = t;
      continue;
    }
    try {
      if (!(t == l->value_time && l->pushes == l->value_pushes)) {  // evaluated already
        l->extrapolator->evaluate(t, l->value);
        l->value_time = t;
        l->value_pushes = l->pushes;
      }
      const double held = l->extrapolator->holds_from();
      from = std::max(from, held <= t ? held : t);
      if (held > t) to = t;
    } catch (const std::exception& e) {
      throw PluginError(l->config.extrapolator.plugin, std::string("extrapolator of ") + node_.name + "." +
                                                           node_.ports[node_.inputs[port]].name + ": " + e.what());
    } catch (...) {
      throw PluginError(l->config.extrapolator.plugin, std::string("extrapolator of ") + node_.name + "." +
                                                           node_.ports[node_.inputs[port]].name +
                                                           ": threw an exception that is not a std::exception");
    }
  }
  std::span<const double> value;
  if (links.size() == 1 && links[0]->dst_offset == 0 && links[0]->width == node_.input_value[port].size()) {
    value = links[0]->value;
  } else {
    auto& out = node_.input_value[port];
    for (Link* l : links) std::copy(l->value.begin(), l->value.end(), out.begin() + static_cast<long>(l->dst_offset));
    value = out;
  }
  if (port < known_.size()) known_[port] = Known{from, to, value.data(), value.size()};
  return value;
}

double BondPair::residual() const { return a->bonds[bond_a].energy + b->bonds[bond_b].energy; }
std::string BondPair::name() const {
  return a->name + "." + a->bonds[bond_a].name + " <-> " + b->name + "." + b->bonds[bond_b].name;
}

namespace {

// A port wider than this is a plugin's mistake, not a model (the largest shipped port has 9).
constexpr std::size_t kMaxPortSize = 1'000'000;

std::string list(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
  return s.empty() ? "(none)" : s;
}

std::string describe_port(const PortSpec& p) {
  return p.name + " (" + (p.direction == Direction::input ? "input" : "output") + ", " +
         std::to_string(p.size) + " x " + (p.unit.empty() ? "1" : p.unit) + ")";
}

std::string unit_of(const PortSpec& p) { return p.unit.empty() ? "1" : p.unit; }

// "an extrapolator", "a subsystem"
std::string with_article(const std::string& word) {
  const bool vowel = !word.empty() && std::string("aeiou").find(word[0]) != std::string::npos;
  return (vowel ? "an " : "a ") + word;
}

// A plugin's parameters with its path parameters (ParamType::path) resolved against the folder
// of the manifest they were written in.
json with_paths_resolved(const PluginRegistry& reg, const std::string& plugin, const json& given,
                         const std::filesystem::path& manifest) {
  const LoadedPlugin* p = reg.find(plugin);
  if (!p || !given.is_object() || manifest.empty()) return given;
  json out = given;
  namespace fs = std::filesystem;
  const fs::path base = fs::absolute(manifest).parent_path();
  for (const auto& s : p->info().parameters) {
    if (s.type != ParamType::path || !out.contains(s.name) || !out[s.name].is_string()) continue;
    const std::string v = out[s.name].get<std::string>();
    if (!v.empty() && fs::path(v).is_relative()) out[s.name] = (base / v).lexically_normal().string();
  }
  return out;
}

}  // namespace

Experiment::~Experiment() = default;

std::vector<std::string> Experiment::columns() const { return graph_->columns; }
std::size_t Experiment::subsystem_count() const { return graph_->nodes.size(); }
std::size_t Experiment::connection_count() const { return graph_->links.size(); }
std::vector<std::string> Experiment::unit_conversions() const { return graph_->conversions; }
std::vector<std::string> Experiment::unconnected_inputs() const { return graph_->unconnected; }
std::vector<std::string> Experiment::bond_warnings() const { return graph_->bond_warnings; }
std::vector<std::string> Experiment::bond_delays() const { return graph_->bond_delays; }
std::vector<std::string> Experiment::feedthrough_connections() const {
  std::vector<std::string> out;
  for (const auto& l : graph_->links) {
    const std::size_t i = l->src->output_port_at(l->src_offset);
    if (i < l->src->ports.size() && l->src->ports[i].feedthrough) out.push_back(l->config.from_text + " -> " + l->config.to_text);
  }
  return out;
}

Experiment::Experiment(Manifest manifest, const PluginRegistry& reg)
    : manifest_(std::move(manifest)), graph_(std::make_unique<Graph>()) {
  const std::string file = manifest_.file.string();
  auto in_manifest = [&](const PluginRef& ref) { return with_paths_resolved(reg, ref.plugin, ref.parameters, manifest_.file); };
  std::vector<Diagnostic> diags;
  auto error = [&](const std::string& ptr, std::string msg) { diags.push_back({file, ptr, std::move(msg)}); };
  Graph& g = *graph_;
  g.log = std::make_unique<RunLog>(manifest_.log);
  // Messages of a subsystem's plugin objects carry its name and time; an integrator's or a
  // formulation's also the plugin's role.
  auto logger_for = [&](const Node& n, const std::string& role = {}, const std::string& plugin = {}) -> Logger& {
    return g.log->sink(role.empty() ? n.name : n.name + " (" + role + " " + plugin + ")", n.name, &n.t);
  };

  auto names_of = [&](Kind kind) {
    std::vector<std::string> v;
    for (auto* p : reg.plugins(kind)) v.push_back(p->info().name);
    return v;
  };
  // Resolves a plugin reference of the given kind, reporting unknown names and wrong kinds.
  auto resolve = [&](const PluginRef& ref, Kind kind, const std::string& ptr) -> const LoadedPlugin* {
    const LoadedPlugin* p = reg.find(ref.plugin);
    if (!p) {
      auto avail = names_of(kind);
      std::string msg = std::string("unknown ") + to_string(kind) + " plugin \"" + ref.plugin + "\"";
      if (auto note = refused_note(reg, ref.plugin); !note.empty()) msg += note;
      else if (auto c = closest(ref.plugin, avail); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      error(ptr, msg + "; available: " + list(avail));
      return nullptr;
    }
    if (p->info().kind != kind) {
      error(ptr, "expected " + with_article(to_string(kind)) + " plugin, found \"" + ref.plugin + "\", which is " +
                     with_article(to_string(p->info().kind)) + "; available: " + list(names_of(kind)));
      return nullptr;
    }
    bool ok = true;
    if (!ref.version.empty()) {
      std::vector<VersionClause> required;
      parse_requirement(ref.version, required);  // well formed: checked with the manifest
      const std::string& found = p->info().version;
      if (auto v = parse_version(found); !v) {
        error(ref.version_pointer, "plugin \"" + ref.plugin + "\" declares version \"" + found +
                                       "\", which is not dotted integers, so the requirement \"" + ref.version +
                                       "\" cannot be checked (" + p->file.string() + ")");
        ok = false;
      } else if (!satisfies(*v, required)) {
        error(ref.version_pointer, "plugin \"" + ref.plugin + "\" is version " + found + ", which does not satisfy \"" +
                                       ref.version + "\" (" + p->file.string() + ")");
        ok = false;
      }
    }
    const auto& specs = p->info().parameters;
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
        error(pp + "/" + s.name, "required parameter \"" + s.name + "\" of plugin \"" + ref.plugin + "\" is missing (" + s.doc + ")");
        ok = false;
      }
    return ok ? p : nullptr;
  };
  auto created = [&](const std::string& ptr, auto&& make) {
    try {
      return make();
    } catch (const ParameterError& e) {
      // The plugin named the value: report it where the user wrote it.
      if (e.file().empty()) error(ptr + "/parameters" + e.pointer(), e.what());
      else diags.push_back({e.file(), e.pointer(), e.what()});
    } catch (const std::exception& e) {
      error(ptr, std::string("could not create: ") + e.what());
    } catch (...) {
      error(ptr, "could not create: the plugin threw an exception that is not a std::exception");
    }
    return decltype(make())();
  };

  // Subsystems.
  std::map<std::string, Node*> by_name;
  for (SubsystemConfig sc : manifest_.subsystems) {
    // An FMU is unpacked and checked here, then resolved like a plugin named by its file.
    const fmi::FmuPlugin* fmu = nullptr;
    json fmu_params;  // an FMU's parameters and start values, checked
    if (!sc.fmu.empty()) {
      std::string why;
      const LoadedPlugin* lp = reg.load_fmu(sc.fmu, why);
      if (!lp) {
        error(sc.pointer + "/fmu", why);
        continue;
      }
      sc.plugin.plugin = lp->info().name;
      fmu = lp->fmu.get();
    }
    const LoadedPlugin* p = resolve(sc.plugin, Kind::subsystem, sc.pointer + (fmu ? "/fmu" : "/plugin"));
    if (!p) continue;
    auto node = std::make_unique<Node>();
    node->name = sc.name;
    node->plugin = sc.plugin.plugin;
    node->pointer = sc.pointer;
    node->step = sc.step;
    const Form form = p->info().form;
    if (fmu) {
      // Co-simulation FMUs step themselves; with an integrator, the model-exchange interface.
      if (sc.formulation) error(sc.formulation->pointer, "an FMU takes no formulation");
      const auto& md = fmu->description();
      if (sc.integrator && !md.has_me) {
        error(sc.integrator->pointer, "the FMU has no model-exchange interface, so it takes no integrator (it steps itself)");
        continue;
      }
      if (!sc.integrator && !md.has_cs && !md.derivatives.empty()) {
        error(sc.pointer + "/integrator", "the FMU is for model exchange only and has continuous states: name an integrator; available: " +
                                              list(names_of(Kind::integrator)));
        continue;
      }
      if (sc.integrator) {
        const LoadedPlugin* ip = resolve(*sc.integrator, Kind::integrator, sc.integrator->pointer);
        if (!ip) continue;
        node->plugin += " + " + sc.integrator->plugin;
      }
      node->fmu = true;
      node->sub = created(sc.pointer + "/fmu", [&]() -> std::shared_ptr<Subsystem> {
        const Params prm = reg.make_params(*p, sc.plugin.parameters);
        fmu_params = prm.values();
        std::shared_ptr<Integrator> integ;
        if (sc.integrator) {
          integ = reg.create_integrator(sc.integrator->plugin, in_manifest(*sc.integrator));
          integ->bind_logger(logger_for(*node, "integrator", sc.integrator->plugin));
        }
        auto keep = p->fmu;  // the binary and the unpacked folder outlive the instance
        auto lib = fmu->library(bool(integ));
        std::unique_ptr<Subsystem> made;
        try {
          made = fmu->create(prm, sc.name, integ);
        } catch (const ParameterError& e) {
          error(sc.pointer + "/parameters" + e.pointer(), e.what());  // where the user wrote the value
          return nullptr;
        } catch (const PluginError&) {
          throw;
        } catch (const std::exception& e) {
          throw PluginError(p->info().name, e.what());
        }
        return std::shared_ptr<Subsystem>(made.release(), [keep, lib](Subsystem* o) { delete o; });
      });
    } else if (form == Form::ode) {
      if (!sc.integrator) {
        error(sc.pointer + "/integrator", "subsystem plugin \"" + sc.plugin.plugin +
                                              "\" is an ODE system: name an integrator; available: " +
                                              list(names_of(Kind::integrator)));
        continue;
      }
      const LoadedPlugin* ip = resolve(*sc.integrator, Kind::integrator, sc.integrator->pointer);
      if (!ip) continue;
      node->plugin += " + " + sc.integrator->plugin;
      node->sub = created(sc.pointer, [&]() -> std::shared_ptr<Subsystem> {
        auto sys = reg.create_ode(sc.plugin.plugin, sc.plugin.parameters);
        auto integ = reg.create_integrator(sc.integrator->plugin, in_manifest(*sc.integrator));
        sys->bind_logger(logger_for(*node));
        integ->bind_logger(logger_for(*node, "integrator", sc.integrator->plugin));
        // What the integrator will read from states(): one entry per state or none, a unit
        // UDUNITS-2 reads, a positive nominal value and tolerance.
        const auto states = sys->states();
        if (!states.empty() && states.size() != sys->state_size())
          throw std::runtime_error("plugin \"" + sc.plugin.plugin + "\" declares " + std::to_string(states.size()) +
                                   " states in states() for a state of size " + std::to_string(sys->state_size()));
        for (const auto& st : states) {
          const std::string what = "plugin \"" + sc.plugin.plugin + "\" declares state \"" + st.name + "\"";
          if (auto why = unit_problem(st.unit); !why.empty())
            throw std::runtime_error(what + " in unit \"" + st.unit + "\": " + why);
          if (!(st.nominal > 0.0) || !std::isfinite(st.nominal))
            throw std::runtime_error(what + " with nominal value " + number_text(st.nominal) + " (expected a positive number)");
          if (!std::isnan(st.absolute_tolerance) && !(st.absolute_tolerance > 0.0))
            throw std::runtime_error(what + " with absolute tolerance " + number_text(st.absolute_tolerance) +
                                     " (expected a positive number, or NaN for atol times the nominal value)");
        }
        return make_ode_subsystem(std::move(sys), std::move(integ));
      });
    } else if (form == Form::multibody) {
#if __has_include(<stride/multibody.hpp>)
      if (!sc.formulation) {
        error(sc.pointer + "/formulation", "subsystem plugin \"" + sc.plugin.plugin +
                                               "\" is a multibody model: name a formulation; available: " +
                                               list(names_of(Kind::formulation)));
        continue;
      }
      const LoadedPlugin* fp = resolve(*sc.formulation, Kind::formulation, sc.formulation->pointer);
      if (!fp) continue;
      node->plugin += " + " + sc.formulation->plugin;
      node->sub = created(sc.pointer, [&]() -> std::shared_ptr<Subsystem> {
        auto model = reg.create_model(sc.plugin.plugin, in_manifest(sc.plugin));
        auto formulation = reg.create_formulation(sc.formulation->plugin, in_manifest(*sc.formulation));
        model->bind_logger(logger_for(*node));
        formulation->bind_logger(logger_for(*node, "formulation", sc.formulation->plugin));
        return make_multibody_subsystem(std::move(model), std::move(formulation));
      });
#else
      error(sc.pointer + "/plugin", "this host was built without multibody support");
      continue;
#endif
    } else {
      if (sc.integrator) error(sc.integrator->pointer, "subsystem plugin \"" + sc.plugin.plugin + "\" steps itself and takes no integrator");
      if (sc.formulation) error(sc.formulation->pointer, "subsystem plugin \"" + sc.plugin.plugin + "\" steps itself and takes no formulation");
      node->sub = created(sc.pointer, [&] { return reg.create_subsystem(sc.plugin.plugin, in_manifest(sc.plugin)); });
    }
    if (!node->sub) continue;
    // Adapters (ODE, multibody) bound their parts above; an FMU routes its messages here.
    if (fmu || form == Form::stepper) node->sub->bind_logger(logger_for(*node));
    try {
      node->ports = node->sub->ports();
    } catch (const std::exception& e) {
      error(sc.pointer, "plugin \"" + node->plugin + "\" failed to declare its ports: " + e.what());
      continue;
    } catch (...) {
      error(sc.pointer, "plugin \"" + node->plugin + "\" failed to declare its ports: it threw an exception that is not a std::exception");
      continue;
    }
    std::set<std::string> seen;
    bool ports_ok = true;
    for (std::size_t i = 0; i < node->ports.size(); ++i) {
      const auto& port = node->ports[i];
      if (!seen.insert(port.name).second || port.size == 0 || port.size > kMaxPortSize) {
        error(sc.pointer, "plugin \"" + node->plugin + "\" declares port \"" + port.name + "\" twice, or with size " +
                              std::to_string(port.size) + " (expected 1 to " + std::to_string(kMaxPortSize) + ")");
        ports_ok = false;
      }
      // A plugin's port unit must be one UDUNITS-2 reads (an FMU's units are names the FMU
      // defines, checked when they are connected).
      if (!fmu)
        if (auto why = unit_problem(port.unit); !why.empty()) {
          error(sc.pointer, "plugin \"" + node->plugin + "\" declares port \"" + port.name + "\" in unit \"" + port.unit + "\": " + why);
          ports_ok = false;
        }
    }
    if (!ports_ok) continue;
    node->output_offset.assign(node->ports.size(), 0);
    for (std::size_t i = 0; i < node->ports.size(); ++i) {
      if (node->ports[i].direction == Direction::input) {
        node->inputs.push_back(i);
      } else {
        node->output_offset[i] = node->output_width;
        node->output_width += node->ports[i].size;
      }
    }
    node->in_links.assign(node->inputs.size(), {});
    // An FMU input no connection feeds keeps its start value (or the manifest's).
    for (std::size_t k : node->inputs)
      node->input_value.push_back(fmu ? fmu->input_start(node->ports[k].name, fmu_params) : std::vector<double>(node->ports[k].size, 0.0));
    // Power bonds: each bonded input pairs with the output of the same bond and opposite role.
    for (std::size_t k = 0; k < node->inputs.size(); ++k) {
      const PortSpec& in = node->ports[node->inputs[k]];
      if (in.role == BondRole::none) continue;
      auto out = std::find_if(node->ports.begin(), node->ports.end(), [&](const PortSpec& o) {
        return o.direction == Direction::output && o.bond == in.bond && o.role != BondRole::none && o.role != in.role;
      });
      if (out == node->ports.end() || out->size != in.size) {
        error(sc.pointer, "plugin \"" + node->plugin + "\": input \"" + in.name + "\" of bond \"" + in.bond +
                              "\" has no conjugate output of the same size");
        continue;
      }
      Bond b;
      b.name = in.bond;
      b.input = k;
      b.output_offset = node->output_offset[static_cast<std::size_t>(out - node->ports.begin())];
      b.width = in.size;
      b.sign = in.role == BondRole::effort ? 1.0 : -1.0;
      node->bond_ports.push_back(b);
    }
    for (const PortSpec& o : node->ports) {
      if (o.through.empty()) continue;
      const int k = node->port_index(o.through);
      if (o.direction != Direction::output || k < 0 || node->ports[static_cast<std::size_t>(k)].direction != Direction::input ||
          node->ports[static_cast<std::size_t>(k)].size != o.size)
        error(sc.pointer, "plugin \"" + node->plugin + "\": port \"" + o.name + "\" passes on \"" + o.through +
                              "\", which is not an input of the same size (PortSpec::through is for outputs)");
    }
    node->y.assign(node->output_width, 0.0);
    node->y_prev.assign(node->output_width, 0.0);
    if (manifest_.coupling.iteration.enabled || manifest_.coupling.step_control.reject) {
      bool saves = false;
      try {
        saves = node->sub->can_save_state();
      } catch (...) {
      }
      if (!saves)
        error(sc.pointer, std::string(manifest_.coupling.iteration.enabled
                                          ? "iterative coupling (/coupling/iteration)"
                                          : "the adaptive macro step with \"reject\": true (/coupling/step_control)") +
                              " repeats macro steps from snapshots, but subsystem \"" +
                              node->name + "\" (" + node->plugin + ") cannot save and restore its state" +
                              (!sc.fmu.empty() ? " (the FMU does not declare canGetAndSetFMUstate for this interface)" : ""));
    }
    try {
      node->sub->bind(node->input_view);
    } catch (...) {
      error(sc.pointer, "plugin \"" + node->plugin + "\" threw while the host bound its inputs");
      continue;
    }
    by_name[node->name] = node.get();
    node->index = static_cast<int>(g.nodes.size());
    g.nodes.push_back(std::move(node));
  }
  std::vector<std::string> sub_names;
  for (const auto& sc : manifest_.subsystems) sub_names.push_back(sc.name);
  const bool all_built = g.nodes.size() == manifest_.subsystems.size();

  // Connections.
  auto find_node = [&](const std::string& name, const std::string& ptr) -> Node* {
    auto it = by_name.find(name);
    if (it != by_name.end()) return it->second;
    if (std::find(sub_names.begin(), sub_names.end(), name) != sub_names.end() ||
        std::find(manifest_.declared_subsystems.begin(), manifest_.declared_subsystems.end(), name) !=
            manifest_.declared_subsystems.end())
      return nullptr;  // reported already
    std::string msg = "unknown subsystem \"" + name + "\"";
    if (auto c = closest(name, sub_names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
    error(ptr, msg + "; subsystems: " + list(sub_names));
    return nullptr;
  };
  auto find_port = [&](Node* n, const std::string& port, Direction dir, const std::string& ptr) -> int {
    int i = n->port_index(port);
    std::vector<std::string> candidates, described;
    for (const auto& p : n->ports)
      if (p.direction == dir) candidates.push_back(p.name), described.push_back(describe_port(p));
    const char* what = dir == Direction::input ? "input" : "output";
    if (i < 0) {
      std::string msg = "subsystem \"" + n->name + "\" has no port \"" + port + "\"";
      if (auto c = closest(port, candidates); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      error(ptr, msg + "; its " + what + "s: " + list(described));
      return -1;
    }
    if (n->ports[i].direction != dir) {
      error(ptr, "expected an " + std::string(what) + " port, found \"" + n->name + "." + port + "\", which is an " +
                     (dir == Direction::input ? "output" : "input") + "; " + what + "s of \"" + n->name + "\": " + list(described));
      return -1;
    }
    return i;
  };
  for (const auto& cc : manifest_.connections) {
    Node* src = find_node(cc.from_subsystem, cc.pointer + "/from");
    Node* dst = find_node(cc.to_subsystem, cc.pointer + "/to");
    int sp = src ? find_port(src, cc.from_port, Direction::output, cc.pointer + "/from") : -1;
    int dp = dst ? find_port(dst, cc.to_port, Direction::input, cc.pointer + "/to") : -1;
    const LoadedPlugin* ep = resolve(cc.extrapolator, Kind::extrapolator, cc.extrapolator.pointer);
    if (sp < 0 || dp < 0) continue;
    const PortSpec& so = src->ports[sp];
    const PortSpec& di = dst->ports[dp];
    bool ok = true;
    // Element ranges.
    const std::size_t s_first = cc.from_first, s_count = cc.from_count ? cc.from_count : so.size;
    const std::size_t d_first = cc.to_first, d_count = cc.to_count ? cc.to_count : di.size;
    if (s_first >= so.size || s_count > so.size - s_first) {
      error(cc.pointer + "/from", "elements [" + std::to_string(s_first) + ", " + std::to_string(s_first + s_count) +
                                      ") out of range: " + cc.from_subsystem + "." + so.name + " has " + std::to_string(so.size) + " elements");
      ok = false;
    }
    if (d_first >= di.size || d_count > di.size - d_first) {
      error(cc.pointer + "/to", "elements [" + std::to_string(d_first) + ", " + std::to_string(d_first + d_count) +
                                    ") out of range: " + cc.to_subsystem + "." + di.name + " has " + std::to_string(di.size) + " elements");
      ok = false;
    }
    if (ok && s_count != d_count) {
      error(cc.pointer + "/to", "size mismatch: " + cc.from_text + " gives " + std::to_string(s_count) +
                                    " element(s), " + cc.to_text + " expects " + std::to_string(d_count));
      ok = false;
    }
    // Equal texts need no units library (an FMU may name a unit UDUNITS-2 does not know);
    // different spellings of one unit (kg*m/s^2 and N) convert with scale 1, i.e. not at all.
    std::optional<UnitConversion> conversion = UnitConversion{};
    if (unit_of(so) != unit_of(di)) {
      std::string why;
      conversion = unit_conversion(unit_of(so), unit_of(di), &why);
      if (!conversion) {
        error(cc.pointer + "/to", "unit mismatch: " + cc.from_subsystem + "." + so.name + " is in " + unit_of(so) + ", " +
                                      cc.to_subsystem + "." + di.name + " expects " + unit_of(di) + " (" + why + ")");
        ok = false;
      }
    }
    std::size_t k = static_cast<std::size_t>(std::find(dst->inputs.begin(), dst->inputs.end(), std::size_t(dp)) - dst->inputs.begin());
    if (ok)
      for (Link* other : dst->in_links[k])
        if (d_first < other->dst_offset + other->width && other->dst_offset < d_first + d_count) {
          error(cc.pointer + "/to", "input \"" + cc.to_text + "\" is already fed by " + other->config.pointer +
                                        " (each input element takes one connection)");
          ok = false;
        }
    if (!ok || !ep) continue;
    auto link = std::make_unique<Link>();
    link->config = cc;
    link->src = src;
    link->src_offset = src->output_offset[sp] + s_first;
    link->width = s_count;
    link->dst = dst;
    link->dst_input = k;
    link->dst_offset = d_first;
    link->value.assign(s_count, 0.0);
    if (conversion && !conversion->identity()) {
      link->convert = true;
      link->scale = conversion->scale;
      link->offset = conversion->offset;
      link->converted.assign(s_count, 0.0);
      g.conversions.push_back(cc.from_text + " -> " + cc.to_text + ": " + unit_of(so) + " to " + unit_of(di) + " (x " +
                              number_text(conversion->scale) +
                              (conversion->offset != 0.0 ? " + " + number_text(conversion->offset) : std::string()) + ")");
    }
    link->extrapolator = created(cc.extrapolator.pointer, [&] {
      return reg.create_extrapolator(cc.extrapolator.plugin, in_manifest(cc.extrapolator));
    });
    if (!link->extrapolator) continue;
    link->extrapolator->bind_logger(g.log->sink("connection " + cc.from_text + " -> " + cc.to_text + " (extrapolator " +
                                                    cc.extrapolator.plugin + ")",
                                                "connection " + cc.pointer, &dst->t));
    if (!created(cc.extrapolator.pointer, [&] {
          link->extrapolator->timing({src->step, dst->step, manifest_.coupling.macro_step});
          return true;
        }))
      continue;
    dst->in_links[k].push_back(link.get());
    src->out_links.push_back(link.get());
    link->index = static_cast<int>(g.links.size());
    g.links.push_back(std::move(link));
  }

  // Unconnected inputs (only meaningful when every connection could be resolved).
  if (diags.empty() && all_built && manifest_.graph_complete) {
    for (auto& n : g.nodes)
      for (std::size_t k = 0; k < n->inputs.size(); ++k) {
        const PortSpec& in = n->ports[n->inputs[k]];
        std::size_t fed = 0;
        for (Link* l : n->in_links[k]) fed += l->width;
        if (n->in_links[k].size() == 1) n->in_links[k][0]->whole_port = fed == in.size;
        if (fed == in.size) continue;
        if (n->fmu) {
          g.unconnected.push_back(n->name + "." + in.name + " = " + json(n->input_value[k]).dump() +
                                  (fed ? " where no connection feeds it" : ""));
          continue;
        }
        error("/connections", "input \"" + n->name + "." + in.name + "\" (" + describe_port(in) + ") is " +
                                  (fed ? "only partly connected (" + std::to_string(fed) + " of " + std::to_string(in.size) + " elements)"
                                       : std::string("not connected")) +
                                  "; add {\"from\": \"<subsystem>.<output>\", \"to\": \"" + n->name + "." + in.name + "\"}");
      }
  }

  // Algebraic loops: a cycle through outputs with direct feedthrough.
  if (diags.empty() && manifest_.graph_complete) {
    // vertex = (node, output port); edge o -> o' when o feeds an input of the node of o' and o'
    // has feedthrough.
    std::map<std::pair<Node*, int>, std::vector<std::pair<Node*, int>>> adj;
    for (auto& l : g.links) {
      const std::size_t at = l->src->output_port_at(l->src_offset);
      const int so = at < l->src->ports.size() ? int(at) : -1;
      for (std::size_t i = 0; i < l->dst->ports.size(); ++i)
        if (l->dst->ports[i].direction == Direction::output && l->dst->ports[i].feedthrough &&
            l->src->ports[so].feedthrough)
          adj[{l->src, so}].push_back({l->dst, int(i)});
    }
    std::map<std::pair<Node*, int>, int> state;
    std::vector<std::pair<Node*, int>> stack;
    std::function<bool(std::pair<Node*, int>)> dfs = [&](std::pair<Node*, int> v) {
      state[v] = 1;
      stack.push_back(v);
      for (auto& w : adj[v]) {
        if (state[w] == 1) {
          std::string cycle;
          auto it = std::find(stack.begin(), stack.end(), w);
          for (; it != stack.end(); ++it) cycle += it->first->name + "." + it->first->ports[it->second].name + " -> ";
          cycle += w.first->name + "." + w.first->ports[w.second].name;
          error("/connections", "algebraic loop through outputs with direct feedthrough: " + cycle +
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

  // One bond per connection into a bonded input.
  for (auto& n : g.nodes)
    for (const Bond& port : n->bond_ports)
      for (Link* l : n->in_links[port.input]) {
        Bond b = port;
        b.element = l->dst_offset;
        b.output_offset = port.output_offset + l->dst_offset;
        b.width = l->width;
        if (l->width < n->ports[n->inputs[port.input]].size)
          b.name = port.name + "[" + std::to_string(l->dst_offset) + (l->width > 1 ? ":" + std::to_string(l->dst_offset + l->width) : "") + "]";
        n->bonds.push_back(b);
      }

  // Where the value a connection carries comes from: its source, or, when the source output
  // passes an input on (PortSpec::through), the origin of what feeds that input.
  struct Origin {
    Node* node;
    std::size_t offset;       // into node->y
    std::vector<Node*> via;  // the subsystems passed
  };
  auto origin_of = [&](const Link* l) {
    Origin o{l->src, l->src_offset, {}};
    for (std::size_t hop = 0; hop < g.nodes.size(); ++hop) {
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
  };
  // Power bonds between pairs of subsystems (each pair once), directly or across subsystems
  // that pass the values on.
  std::vector<std::vector<char>> paired(g.nodes.size());
  for (auto& n : g.nodes) paired[static_cast<std::size_t>(n->index)].assign(n->bonds.size(), 0);
  for (auto& n : g.nodes)
    for (std::size_t i = 0; i < n->bonds.size(); ++i) {
      const Bond& b = n->bonds[i];
      for (Link* in : n->in_links[b.input]) {
        if (in->dst_offset != b.element) continue;
        const Origin from = origin_of(in);
        Node* other = from.node;
        if (other == n.get()) continue;
        for (std::size_t j = 0; j < other->bonds.size(); ++j) {
          const Bond& ob = other->bonds[j];
          if (!(from.offset >= ob.output_offset && from.offset < ob.output_offset + ob.width)) continue;
          // does n's bond output feed other's bond input?
          for (Link* l : other->in_links[ob.input]) {
            if (l->dst_offset != ob.element) continue;
            const Origin back = origin_of(l);
            if (back.node != n.get() || back.offset < b.output_offset || back.offset >= b.output_offset + b.width) continue;
            paired[static_cast<std::size_t>(n->index)][i] = paired[static_cast<std::size_t>(other->index)][j] = 1;
            if (n->index < other->index) g.bond_pairs.push_back({n.get(), i, other, j, back.via, from.via});
          }
        }
      }
    }
  if (manifest_.coupling.step_control.enabled && g.bond_pairs.empty())
    error("/coupling/step_control", "the adaptive macro step is set by the energy residuals of power bonds, and no two "
                                    "subsystems here exchange power through a bond (`stride plugins describe NAME` shows "
                                    "a plugin's bonds); use a fixed macro step");
  for (auto& n : g.nodes)
    for (std::size_t i = 0; i < n->bonds.size(); ++i) {
      if (paired[static_cast<std::size_t>(n->index)][i]) continue;
      const Bond& b = n->bonds[i];
      std::string source = "nothing";
      for (Link* in : n->in_links[b.input])
        if (in->dst_offset == b.element) {
          const Origin o = origin_of(in);
          const std::size_t pi = o.node->output_port_at(o.offset);
          source = o.node->name + "." + (pi < o.node->ports.size() ? o.node->ports[pi].name : std::string("?"));
          for (auto v = o.via.rbegin(); v != o.via.rend(); ++v) source += " through " + (*v)->name;
        }
      g.bond_warnings.push_back("power bond " + n->name + "." + b.name + " has no partner: its input " + n->name + "." +
                                n->ports[n->inputs[b.input]].name + " comes from " + source +
                                ", which is not the conjugate output of a subsystem it feeds back; its energy is not "
                                "checked against another subsystem (a subsystem in between must declare that it passes "
                                "the value on: PortSpec::through)");
    }

  // Output bounds.
  for (const auto& ob : manifest_.monitor.bounds) {
    Node* n = find_node(ob.subsystem, ob.pointer);
    if (!n) continue;
    int pi = find_port(n, ob.port, Direction::output, ob.pointer);
    if (pi < 0) continue;
    const PortSpec& ps = n->ports[pi];
    const std::size_t first = ob.first, count = ob.count ? ob.count : ps.size;
    if (first >= ps.size || count > ps.size - first) {
      error(ob.pointer, "elements [" + std::to_string(first) + ", " + std::to_string(first + count) + ") out of range: " +
                            ob.subsystem + "." + ob.port + " has " + std::to_string(ps.size) + " elements");
      continue;
    }
    for (std::size_t e = first; e < first + count; ++e)
      n->bounds.push_back({n->output_offset[pi] + e, ob.min, ob.max,
                           ob.subsystem + "." + ob.port + (ps.size > 1 ? "[" + std::to_string(e) + "]" : "")});
  }

  // Gauss–Seidel order.
  std::vector<bool> ordered(g.nodes.size(), false);
  for (std::size_t i = 0; i < manifest_.coupling.order.size(); ++i) {
    const auto& name = manifest_.coupling.order[i];
    if (!by_name.count(name)) {
      if (std::find(sub_names.begin(), sub_names.end(), name) == sub_names.end()) {
        std::string msg = "unknown subsystem \"" + name + "\"";
        if (auto c = closest(name, sub_names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
        error("/coupling/order/" + std::to_string(i), msg + "; subsystems: " + list(sub_names));
      }
    } else if (ordered[static_cast<std::size_t>(by_name[name]->index)]) {
      error("/coupling/order/" + std::to_string(i), "subsystem \"" + name + "\" is listed twice");
    } else {
      g.order.push_back(by_name[name]);
      ordered[static_cast<std::size_t>(by_name[name]->index)] = true;
    }
  }
  for (auto& n : g.nodes)
    if (!ordered[static_cast<std::size_t>(n->index)]) g.order.push_back(n.get());

  // The communication delay each paired bond's paths add (one connection per subsystem passed,
  // plus the last): Jacobi, a macro step per connection; Gauss–Seidel, a macro step per
  // connection that reads a subsystem later in the order.
  auto order_pos = [&](const Node* x) { return std::find(g.order.begin(), g.order.end(), x) - g.order.begin(); };
  auto path_delay = [&](const Node* from, const std::vector<Node*>& via, const Node* to) {
    std::vector<const Node*> chain{from};
    for (auto v = via.rbegin(); v != via.rend(); ++v) chain.push_back(*v);
    chain.push_back(to);
    std::string text = chain.front()->name;
    int steps = 0;
    for (std::size_t k = 1; k < chain.size(); ++k) {
      text += " -> " + chain[k]->name;
      if (manifest_.coupling.scheme == Scheme::jacobi) ++steps;
      else if (manifest_.coupling.scheme == Scheme::gauss_seidel && order_pos(chain[k - 1]) > order_pos(chain[k])) ++steps;
    }
    if (manifest_.coupling.scheme == Scheme::multirate)
      return text + ": " + std::to_string(chain.size() - 1) + " connection" + (chain.size() > 2 ? "s" : "") +
             " (multirate: each delays by up to its source's step)";
    return text + ": " + std::to_string(steps) + " macro step" + (steps == 1 ? "" : "s") + " (" +
           number_text(steps * manifest_.coupling.macro_step) + " s)";
  };
  for (const BondPair& p : g.bond_pairs)
    g.bond_delays.push_back(p.name() + ": " + path_delay(p.a, p.via_ab, p.b) + "; " + path_delay(p.b, p.via_ba, p.a));

  // Recorded columns.
  auto add_port_columns = [&](Node* n, std::size_t pi) {
    const PortSpec& p = n->ports[pi];
    for (std::size_t e = 0; e < p.size; ++e) {
      std::string col = n->name + "." + p.name;
      if (p.size > 1) col += "." + (e < p.elements.size() ? p.elements[e] : std::to_string(e));
      n->record_cols.push_back(g.columns.size());
      n->record_elem.push_back(n->output_offset[pi] + e);
      g.columns.push_back(col);
    }
  };
  if (manifest_.record.variables.empty()) {
    for (auto& n : g.nodes)
      for (std::size_t i = 0; i < n->ports.size(); ++i)
        if (n->ports[i].direction == Direction::output) add_port_columns(n.get(), i);
  } else {
    for (std::size_t i = 0; i < manifest_.record.variables.size(); ++i) {
      const auto& v = manifest_.record.variables[i];
      const std::string ptr = "/record/variables/" + std::to_string(i);
      auto dot = v.find('.');
      Node* n = find_node(v.substr(0, dot), ptr);
      if (!n) continue;
      int pi = find_port(n, v.substr(dot + 1), Direction::output, ptr);
      if (pi >= 0) add_port_columns(n, std::size_t(pi));
    }
  }

  if (!diags.empty() || !manifest_.problems.empty()) {
    std::vector<Diagnostic> all = manifest_.problems;
    all.insert(all.end(), diags.begin(), diags.end());
    attribute_to_variables(all, manifest_);
    throw ManifestError(all);
  }
}

}  // namespace stride::host
