// The builder's add_subsystems: each subsystem's plugin objects, its ports and its bonds.
#include <cmath>

#include "fmi/model.hpp"
#include "graph/builder_detail.hpp"
#include "input/units.hpp"
#include "stride/host/graph/adapters.hpp"

namespace stride::host {
using namespace builder_detail;

namespace {

// A port wider than this is a plugin's mistake, not a model (the largest shipped port has 9).
constexpr std::size_t kMaxPortSize = 1'000'000;

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

// ---- add_subsystems -------------------------------------------------------------------------

void GraphBuilder::add_subsystems() {
  for (const SubsystemConfig& sc : manifest_.subsystems) add_subsystem(sc);
}

bool GraphBuilder::add_subsystem(SubsystemConfig sc) {
  // An FMU is unpacked and checked here, then resolved like a plugin named by its file.
  const FmuModel* fmu = nullptr;
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
  if (fmu) {
    add_fmu_port_terms(node, *fmu, fmu_params);
  } else {  // the inputs of an exported experiment that nothing feeds start at 0
    for (std::size_t k : node.inputs) node.input_start.push_back(std::vector<double>(node.ports[k].size, 0.0));
  }
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
                                        const FmuModel& fmu, json& fmu_params) {
  // Co-simulation FMUs step themselves; with an integrator, the model-exchange interface.
  if (sc.formulation) error(sc.formulation->pointer, "an FMU takes no formulation");
  const ModelCapabilities can = fmu.capabilities();
  if (sc.integrator && !can.model_exchange) {
    error(sc.integrator->pointer,
          "the FMU has no model-exchange interface, so it takes no integrator (it steps itself)");
    return false;
  }
  if (!sc.integrator && !can.co_simulation && can.continuous_states) {
    error(sc.pointer + "/integrator",
          "the FMU is for model exchange only and has continuous states: name an integrator; available: " +
              listed(names_of(Kind::integrator)));
    return false;
  }
  if (sc.integrator) {
    if (!resolve(*sc.integrator, Kind::integrator, sc.integrator->pointer)) return false;
    node.plugin += " + " + sc.integrator->plugin;
  }
  node.fmu = true;
  if (!sc.integrator && !can.variable_step && !fixed_step_ok(sc)) return false;
  // Variables the record names beside the FMU's outputs: read like outputs.
  const std::vector<std::string> observed = recorded_fmu_variables(sc.name, fmu);
  node.sub = created(sc.pointer + "/fmu", [&]() -> std::shared_ptr<Subsystem> {
    const Params prm = reg_.make_params(p, sc.plugin.parameters);
    fmu_params = prm.values();
    std::shared_ptr<Integrator> integ;
    if (sc.integrator) {
      integ = reg_.create_integrator(sc.integrator->plugin, in_manifest(*sc.integrator));
      integ->bind_logger(logger_for(node, "integrator", sc.integrator->plugin));
    }
    auto keep = p.fmu;  // the binary and the unpacked folder outlive the instance
    auto lib = fmu.binary(bool(integ));
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

// What the FMU's model says of the ports of this instance, once its ports are declared: the
// model's names of single array elements ("u[1]"), each input's value while nothing feeds it
// (its start value, or the manifest's), the String and Binary ports.
void GraphBuilder::add_fmu_port_terms(Node& node, const FmuModel& fmu, const json& fmu_params) {
  for (const ArrayElementName& e : fmu.element_names())
    if (const int k = node.port_index(e.port); k >= 0) node.element_names[e.name] = {std::size_t(k), e.element};
  for (std::size_t k : node.inputs) node.input_start.push_back(fmu.input_start(node.ports[k].name, fmu_params));
  node.text_ports = fmu.text_ports(fmu_params);
}

// A co-simulation FMU that cannot change its step size (canHandleVariableCommunicationStepSize
// false) is refused here, not at the step that would change it: every step it is given has one
// length when macro steps are fixed, a multiple of the (aligned) step, and fill the span.
bool GraphBuilder::fixed_step_ok(const SubsystemConfig& sc) {
  const CouplingConfig& c = manifest_.coupling;
  const std::string why =
      "the FMU cannot change its communication step size (canHandleVariableCommunicationStepSize=\"false\"), ";
  auto multiple = [](double a, double b) { return std::abs(a / b - std::round(a / b)) <= 1e-9 * std::max(1.0, a / b); };
  if (c.step_control.enabled) {
    error("/coupling/step_control", why + "but an adaptive macro step changes it; use a fixed macro step");
    return false;
  }
  const double macro = c.macro_step, span = c.end - c.start;
  const double h = c.align && sc.step > 0 ? std::min(sc.step, macro) : sc.step > 0 ? sc.step : macro;
  if (c.align && !multiple(macro, h)) {
    error(sc.pointer + "/step", why + "but steps of " + number_text(h) + " s in macro steps of " + number_text(macro) +
                                    " s end with a step of " + format_text("{}", macro - std::floor(macro / h) * h) +
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
              "\" is an ODE system: name an integrator; available: " + listed(names_of(Kind::integrator)));
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
              "\" is a multibody model: name a formulation; available: " + listed(names_of(Kind::formulation)));
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

}  // namespace stride::host
