// An FMU as a subsystem plugin: its parameters and ports from the model description, and the
// instance of the interface a subsystem asks for (see fmu.hpp).
#include "fmi/fmu.hpp"

#include <boost/dll/shared_library.hpp>

#include "fmi/binary.hpp"
#include "fmi/co_simulation.hpp"
#include "fmi/instance.hpp"
#include "fmi/model_exchange.hpp"
#include "fmi/probe.hpp"
#include "fmi/unpack.hpp"
#include "fmi/values.hpp"  // from_hex
#include "stride/host/core/plugin_error.hpp"
#include "stride/host/input/json_input.hpp"
#include "input/units.hpp"

namespace stride::host::fmi {
namespace fs = std::filesystem;

namespace {

// A variable in the host's terms (model.hpp).
ModelVariable host_terms(const Variable& v) {
  ModelVariable m;
  m.name = v.name;
  m.aliases = v.aliases;
  m.causality = v.causality;
  m.array = !v.dimensions.empty();
  m.start = v.start;
  m.kind = is_real(v.type)              ? ValueKind::real
           : v.type == VarType::boolean ? ValueKind::boolean
           : v.type == VarType::string  ? ValueKind::text
           : v.type == VarType::binary  ? ValueKind::binary
                                        : ValueKind::integer;
  m.observable = observable(v);
  m.text_recordable = text_recordable(v);
  return m;
}

// The ParamType of a parameter or start value, none when Stride cannot set it.
std::optional<ParamType> param_type(const Variable& v) {
  const bool array = !v.dimensions.empty();
  switch (v.type) {
    case VarType::float64:
    case VarType::float32: return array ? ParamType::real_list : ParamType::real;
    case VarType::boolean: return array ? ParamType::integer_list : ParamType::boolean;  // lists: 0 or 1 each
    case VarType::string:
    case VarType::binary: return array ? ParamType::string_list : ParamType::string;
    case VarType::clock: return std::nullopt;
    default: return array ? ParamType::integer_list : ParamType::integer;
  }
}

std::string role_of(const Variable& v) {
  if (v.causality == "structuralParameter") return "structural parameter: sizes arrays";
  if (v.is_parameter()) return "parameter";
  if (v.causality == "input") return "start value of an input";
  return v.causality == "output" ? "start value of an output" : "start value";
}

// What the manifest's "parameters" may set: parameters, structural parameters, and the start
// values of inputs, states and outputs that take one.
std::vector<ParamSpec> parameter_specs(const ModelDescription& md) {
  std::vector<ParamSpec> out;
  for (const auto& v : md.variables) {
    const auto type = param_type(v);
    if (!(v.is_parameter() || v.has_settable_start()) || !type || v.start.is_null()) continue;
    ParamSpec s;
    s.name = v.name;
    s.type = *type;
    s.default_value = v.start;
    s.unit = is_real(v.type) ? (v.unit.empty() ? "1" : v.unit) : "";
    s.min = v.min;
    s.max = v.max;
    if (is_numeric(v.type) && !is_real(v.type)) {
      const auto [lo, hi] = integer_range(v.type);
      s.min = std::max(lo, s.min.value_or(lo));
      s.max = std::min(hi, s.max.value_or(hi));
    }
    if (v.causality == "structuralParameter") s.min = std::max(0.0, *s.min), s.max = std::min(1e6, *s.max);
    s.doc = (v.description.empty() ? "FMU " + role_of(v) : v.description + " (" + role_of(v) + ")") + "; " +
            type_name(v.type, md.version) + (v.type == VarType::binary ? " as hexadecimal text" : "") + ", " +
            v.variability + ", value reference " + std::to_string(v.value_reference) +
            (!v.dimensions.empty() ? ", " + std::to_string(v.size) + " values" : std::string()) +
            (v.items.empty() ? std::string() : "; " + v.items);
    out.push_back(std::move(s));
  }
  return out;
}

// Array values the manifest gives have the arrays' lengths (which structural parameters set).
void check_arrays(const ModelDescription& md, const json& given) {
  const Shape s = shape(md, given);
  for (std::size_t i = 0; i < md.variables.size(); ++i) {
    const Variable& v = md.variables[i];
    auto it = given.find(v.name);
    if (v.dimensions.empty() || it == given.end() || !it->is_array() || it->size() == s.size[i] || *it == v.start)
      continue;
    throw ParameterError("/" + pointer_escape(v.name), "expected a list of " + std::to_string(s.size[i]) +
                                                           " values (the FMU's array), found " +
                                                           std::to_string(it->size()));
  }
}

// String and Binary values the manifest gives reach the FMU whole: a String holds no NUL (the
// C string would end there), a Binary is hexadecimal text; each element of an array too.
void check_texts(const ModelDescription& md, const json& given) {
  for (const Variable& v : md.variables) {
    auto it = given.find(v.name);
    if (it == given.end() || *it == v.start || (v.type != VarType::string && v.type != VarType::binary)) continue;
    const bool list = it->is_array();
    for (std::size_t i = 0; i < (list ? it->size() : 1); ++i) {
      const json& x = list ? (*it)[i] : *it;
      if (!x.is_string()) continue;  // the parameter check names it
      const std::string& text = x.get_ref<const std::string&>();
      const std::string at = "/" + pointer_escape(v.name) + (list ? "/" + std::to_string(i) : std::string());
      if (v.type == VarType::string && text.find('\0') != std::string::npos)
        throw ParameterError(at,
                             "expected a String without NUL characters (the FMU reads a C string, which would end at "
                             "the first one), found one at offset " +
                                 std::to_string(text.find('\0')));
      if (v.type == VarType::binary) try {
          from_hex(text);
        } catch (const std::invalid_argument& e) {
          throw ParameterError(at, std::string("expected a Binary as hexadecimal text: ") + e.what());
        }
    }
  }
}

std::unique_ptr<Subsystem> make_subsystem(const std::shared_ptr<const Fmu>& fmu, std::vector<PortSpec> ports,
                                          const Params& p, const std::string& name,
                                          std::shared_ptr<Integrator> integrator, bool model_exchange) {
  if (model_exchange) return make_model_exchange(fmu, std::move(ports), p, name, std::move(integrator));
  return make_co_simulation(fmu, std::move(ports), p, name);
}

}  // namespace

FmuPlugin::FmuPlugin(std::shared_ptr<const Fmu> fmu) : fmu_(std::move(fmu)) {
  const auto& md = fmu_->md;
  info_.name = fmu_->label;
  info_.kind = Kind::subsystem;
  info_.form = md.has_cs ? Form::stepper : Form::ode;
  info_.version = "FMI " + md.fmi_version;
  const std::string cs = md.cs_event_mode ? "co-simulation with event mode" : "co-simulation";
  info_.description = "FMU \"" + md.model_name + "\" (" +
                      (md.has_cs && md.has_me ? cs + " and model exchange"
                       : md.has_cs            ? cs
                                              : std::string("model exchange")) +
                      (md.description.empty() ? "" : "): " + md.description);
  if (md.description.empty()) info_.description += ")";
  info_.parameters = parameter_specs(md);
  info_.process_per_run = md.only_once_per_process;  // a sweep gives each run a fresh process
  for (const Variable& v : md.variables) variables_.push_back(host_terms(v));
}

const ModelVariable* FmuPlugin::variable(const std::string& name) const {
  const Variable* v = fmu_->md.find(name);
  return v ? &variables_[static_cast<std::size_t>(v - fmu_->md.variables.data())] : nullptr;
}

ModelCapabilities FmuPlugin::capabilities() const {
  const ModelDescription& md = fmu_->md;
  return {md.has_cs, md.has_me, md.can_variable_step, md.has_states()};
}

std::vector<ArrayElementName> FmuPlugin::element_names() const {
  std::vector<ArrayElementName> out;
  for (const ElementName& e : fmi::element_names(fmu_->md)) out.push_back({e.name, e.port, e.element});
  return out;
}
FmuPlugin::~FmuPlugin() = default;

const ModelDescription& FmuPlugin::description() const { return fmu_->md; }
std::vector<PortSpec> FmuPlugin::ports(const json& parameters, const std::vector<std::string>& observed) const {
  return port_specs(fmu_->md, shape(fmu_->md, parameters.is_object() ? parameters : json::object()), observed);
}

std::vector<TextPortSpec> FmuPlugin::text_ports(const json& parameters) const {
  const auto& md = fmu_->md;
  const json given = parameters.is_object() ? parameters : json::object();
  const Shape s = shape(md, given);
  std::vector<TextPortSpec> out;
  for (std::size_t i = 0; i < md.variables.size(); ++i) {
    const Variable& v = md.variables[i];
    if (v.type != VarType::string && v.type != VarType::binary) continue;
    TextPortSpec t;
    t.name = v.name;
    t.aliases = v.aliases;
    t.binary = v.type == VarType::binary;
    t.causality = v.causality;
    t.array = !v.dimensions.empty();
    t.size = s.size[i];
    t.feedthrough = v.causality == "output" && v.feedthrough;
    t.doc = v.description.empty() ? std::string() : v.description + "; ";
    t.doc += "value reference " + std::to_string(v.value_reference);
    if (t.binary) t.doc += "; recorded as hexadecimal text";
    if (!v.start.is_null()) t.doc += "; start " + v.start.dump(-1, ' ', true);
    t.start = given.contains(v.name) ? given[v.name] : v.start;
    if (t.array) {  // as many elements as this shape has, those not given empty
      json sized = json::array();
      for (std::size_t e = 0; e < t.size; ++e)
        sized.push_back(t.start.is_array() && e < t.start.size() ? t.start[e] : json(""));
      t.start = std::move(sized);
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::unique_ptr<Subsystem> FmuPlugin::create_subsystem(const Params& p) const {
  return create(p, fmu_->md.model_name, nullptr, {}, fmu_->md.experiment.start.value_or(0.0));
}

std::unique_ptr<Subsystem> FmuPlugin::create(const Params& p, const std::string& name,
                                             std::shared_ptr<Integrator> integrator,
                                             const std::vector<std::string>& observed, double t0) const {
  const auto& md = fmu_->md;
  const bool model_exchange = integrator || !md.has_cs;
  if (model_exchange && !md.has_me)
    throw std::invalid_argument("the FMU has no model-exchange interface: remove the integrator");
  check_arrays(md, p.values());
  check_texts(md, p.values());
  if (md.only_once_per_process)
    if (const std::string other = fmu_->instances.first(); !other.empty())
      throw PluginError(fmu_->label,
                        "the FMU declares canBeInstantiatedOnlyOncePerProcess=\"true\" and subsystem \"" + other +
                            "\" already has its instance: the subsystems of a run share one process, so only one "
                            "of them can use this FMU");
  // Every instantiation: a binary may crash on the second one only.
  probe_instantiation(fmu_, model_exchange, p, name, t0);
  return make_subsystem(fmu_, ports(p.values(), observed), p, name, std::move(integrator), model_exchange);
}

std::vector<double> FmuPlugin::input_start(const std::string& port, const json& parameters) const {
  const Variable* v = fmu_->md.find(port);
  const json given = parameters.is_object() ? parameters : json::object();
  if (!v)  // an FMI 2 structured array: each element's start by its own name, else the FMU's
    for (const ElementName& e : fmi::element_names(fmu_->md)) {
      if (e.port != port || e.element != 0) continue;
      const auto& vars = fmu_->md.variables;
      const std::vector<std::size_t> run = structured_array(fmu_->md, std::size_t(fmu_->md.find(e.name) - vars.data()));
      std::vector<double> out;
      for (std::size_t j : run) {
        const json& x = given.contains(vars[j].name) ? given[vars[j].name] : vars[j].start;
        out.push_back(x.is_number() ? x.get<double>() : 0.0);
      }
      return out;
    }
  const Shape s = shape(fmu_->md, parameters.is_object() ? parameters : json::object());
  const std::size_t n = v ? s.size[std::size_t(v - fmu_->md.variables.data())] : 1;
  std::vector<double> out(n, 0.0);
  const json& value = parameters.is_object() && parameters.contains(port) ? parameters[port] : v ? v->start : json();
  auto number = [](const json& x) {
    return x.is_boolean() ? double(x.get<bool>()) : x.is_number() ? x.get<double>() : 0.0;
  };
  for (std::size_t i = 0; i < n; ++i)
    out[i] = number(value.is_array() ? (i < value.size() ? value[i] : json()) : value);
  return out;
}

std::shared_ptr<boost::dll::shared_library> FmuPlugin::library(bool model_exchange) const {
  return model_exchange && fmu_->me_lib ? fmu_->me_lib : fmu_->cs_lib ? fmu_->cs_lib : fmu_->me_lib;
}

std::shared_ptr<FmuPlugin> load_fmu(const fs::path& file) {
  auto fmu = std::make_shared<Fmu>();
  fmu->file = file;
  fmu->label = file.string();
  std::error_code ec;
  if (!fs::exists(file, ec)) throw FmuError(fmu->label + ": no such file");
  if (!fs::is_regular_file(file, ec)) throw FmuError(fmu->label + ": not a regular file");
  fmu->folder = std::make_shared<TempFolder>();
  unpack(file, fmu->folder->path(), fmu->label);
  fmu->md = read_model_description(fmu->folder->path() / "modelDescription.xml", fmu->label);
  load_binaries(*fmu);
  try {
    return std::make_shared<FmuPlugin>(fmu);
  } catch (const FmuError& e) {
    throw FmuError(fmu->label + ": " + e.what());
  }
}

void remove_temporary_fmu_folders() noexcept { remove_temporary_folders(); }

}  // namespace stride::host::fmi
