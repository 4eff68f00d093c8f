// An FMU as a subsystem plugin: its parameters and ports from the model description, and the
// instance of the interface a subsystem asks for (see fmu.hpp).
#include "fmi/fmu.hpp"

#include <boost/dll/shared_library.hpp>

#include "fmi/binary.hpp"
#include "fmi/co_simulation.hpp"
#include "fmi/model_exchange.hpp"
#include "fmi/probe.hpp"
#include "fmi/unpack.hpp"
#include "stride/host/load/registry.hpp"  // PluginError
#include "stride/host/input/json_input.hpp"
#include "input/units.hpp"

namespace stride::host::fmi {
namespace fs = std::filesystem;

namespace {

std::vector<ParamSpec> parameter_specs(const ModelDescription& md) {
  std::vector<ParamSpec> out;
  for (const auto& v : md.variables) {
    if (v.causality != "parameter") continue;
    ParamSpec s;
    s.name = v.name;
    switch (v.type) {
      case VarType::real: s.type = v.size > 1 ? ParamType::real_list : ParamType::real; break;
      case VarType::integer:
      case VarType::enumeration: s.type = ParamType::integer; break;
      case VarType::boolean: s.type = ParamType::boolean; break;
      case VarType::string: s.type = ParamType::string; break;
    }
    s.default_value = v.start;
    s.unit = v.type == VarType::real ? (v.unit.empty() ? "1" : v.unit) : "";
    s.min = v.min;
    s.max = v.max;
    s.doc = (v.description.empty() ? std::string("FMU parameter") : v.description) + " (" + v.variability +
            ", value reference " + std::to_string(v.value_reference) +
            (v.size > 1 ? ", " + std::to_string(v.size) + " values" : std::string()) + ")";
    out.push_back(std::move(s));
  }
  return out;
}

std::string port_doc(const Variable& v) {
  const char* type = v.type == VarType::real ? "real" : v.type == VarType::boolean ? "boolean (0 or 1)" : "integer";
  std::string d =
      (v.description.empty() ? std::string() : v.description + "; ") + type + ", value reference " + std::to_string(v.value_reference);
  if (!v.fmu_unit.empty())
    d += "; in the FMU: " + v.fmu_unit + " = " + number_text(v.unit_factor) + " " + v.unit +
         (v.unit_offset != 0.0 ? " + " + number_text(v.unit_offset) : std::string()) + ", converted";
  return d;
}

std::vector<PortSpec> port_specs(const ModelDescription& md) {
  std::vector<PortSpec> out;
  auto unit = [](const Variable& v) { return v.type == VarType::real ? (v.unit.empty() ? "1" : v.unit) : "1"; };
  for (const auto& v : md.variables)
    if (v.causality == "input") {
      if (v.type == VarType::string) throw FmuError("input \"" + v.name + "\" is a String: Stride exchanges numbers only");
      out.push_back(input(v.name, v.size, unit(v), port_doc(v)));
    }
  for (const auto& v : md.variables)
    if (v.causality == "output") {
      if (v.type == VarType::string) throw FmuError("output \"" + v.name + "\" is a String: Stride exchanges numbers only");
      out.push_back(output(v.name, v.size, unit(v), port_doc(v), v.feedthrough));
    }
  return out;
}

std::unique_ptr<Subsystem> make_subsystem(const std::shared_ptr<const Fmu>& fmu, std::vector<PortSpec> ports, const Params& p,
                                          const std::string& name, std::shared_ptr<Integrator> integrator, bool model_exchange) {
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
  info_.description = "FMU \"" + md.model_name + "\" (" +
                      (md.has_cs && md.has_me ? std::string("co-simulation and model exchange")
                       : md.has_cs            ? std::string("co-simulation")
                                              : std::string("model exchange")) +
                      (md.description.empty() ? "" : "): " + md.description);
  if (md.description.empty()) info_.description += ")";
  info_.parameters = parameter_specs(md);
  info_.process_per_run = md.only_once_per_process;  // a sweep gives each run a fresh process
  (void)port_specs(md);  // String ports are refused at load time
}
FmuPlugin::~FmuPlugin() = default;

const ModelDescription& FmuPlugin::description() const { return fmu_->md; }
std::vector<PortSpec> FmuPlugin::ports() const { return port_specs(fmu_->md); }

std::unique_ptr<Subsystem> FmuPlugin::create_subsystem(const Params& p) const {
  return create(p, fmu_->md.model_name, nullptr);
}

std::unique_ptr<Subsystem> FmuPlugin::create(const Params& p, const std::string& name,
                                             std::shared_ptr<Integrator> integrator) const {
  const auto& md = fmu_->md;
  const bool model_exchange = integrator || !md.has_cs;
  if (model_exchange && !md.has_me) throw std::invalid_argument("the FMU has no model-exchange interface: remove the integrator");
  for (const auto& v : md.variables)
    if (v.causality == "parameter" && v.size > 1 && p.values().contains(v.name) && p.values()[v.name].is_array() &&
        p.values()[v.name].size() != v.size)
      throw ParameterError("/" + pointer_escape(v.name), "expected a list of " + std::to_string(v.size) +
                                                         " numbers (the FMU's array), found " +
                                                         std::to_string(p.values()[v.name].size()));
  if (md.only_once_per_process)
    if (const std::string other = fmu_->instances.first(); !other.empty())
      throw PluginError(fmu_->label, "the FMU declares canBeInstantiatedOnlyOncePerProcess=\"true\" and subsystem \"" + other +
                                         "\" already has its instance: the subsystems of a run share one process, so only one "
                                         "of them can use this FMU");
  // Every instantiation: a binary may crash on the second one only.
  probe_instantiation(fmu_, model_exchange);
  return make_subsystem(fmu_, ports(), p, name, std::move(integrator), model_exchange);
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
