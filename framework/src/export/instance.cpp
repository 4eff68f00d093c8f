// One instance of an exported experiment (see instance.hpp).
#include "export/instance.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "graph/graph.hpp"
#include "input/units.hpp"
#include "core/run_log.hpp"
#include "run/simulation.hpp"
#include "run/stop.hpp"
#include "stride/host/input/manifest.hpp"

namespace stride::host::fmu_export {
namespace fs = std::filesystem;

namespace {

json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot read " + file.string() + " (the FMU's resources are incomplete)");
  try {
    return json::parse(in);
  } catch (const std::exception& e) {
    throw std::runtime_error(file.string() + ": " + e.what());
  }
}

std::string problems_text(const ManifestError& e) {
  std::string s = "the packed manifest is not valid:";
  for (const auto& d : e.diagnostics()) s += "\n  " + d.str();
  return s;
}

// A run that ends early (run/stop.hpp) as the error an FMI call reports.
template <class F>
void reporting_stop(F&& f) {
  try {
    f();
  } catch (const Stop& s) {
    throw std::runtime_error(std::string("the experiment stopped (") + to_string(s.status) + "): " + s.message);
  }
}

}  // namespace

fs::path folder_of_uri(const std::string& uri) {
  std::string path = uri;
  if (uri.rfind("file:", 0) == 0) {
    path = uri.substr(5);
    if (path.rfind("///", 0) == 0) path = path.substr(2);
    else if (path.rfind("//localhost/", 0) == 0) path = path.substr(11);
    else if (path.rfind("//", 0) == 0) throw std::runtime_error("resource location " + uri + " names another host");
  } else if (uri.find("://") != std::string::npos) {
    throw std::runtime_error("resource location " + uri + " is not a file URI");
  }
  std::string decoded;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && std::isxdigit(static_cast<unsigned char>(path[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(path[i + 2]))) {
      decoded += static_cast<char>(std::stoi(path.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      decoded += path[i];
    }
  }
  return decoded;
}

ExportedInstance::ExportedInstance(const fs::path& resources, const std::string& token, MessageSink log) {
  std::error_code ec;
  if (!fs::is_directory(resources, ec))
    throw std::runtime_error("the resources folder " + resources.string() + " does not exist");
  // The unit database the FMU carries, where the exporter packed one (before any unit is read).
  if (fs::exists(resources / "udunits" / "udunits2.xml", ec))
    set_unit_database((resources / "udunits" / "udunits2.xml").string());
  const json iface = read_json(resources / "stride_export.json");
  if (iface.value("token", std::string()) != token)
    throw std::runtime_error("the token \"" + token + "\" is not this FMU's (" + iface.value("token", std::string()) +
                             "): the modelDescription.xml and the binary's resources do not belong together");
  for (const PortBinding& b : bindings_of(iface)) bindings_[b.value_reference] = b;
  const fs::path plugins = resources / "plugins";
  if (!fs::is_directory(plugins, ec)) throw std::runtime_error("the FMU has no plugin folder " + plugins.string());
  registry_.scan({plugins});
  if (!registry_.refusals().empty())
    throw std::runtime_error("plugin library " + registry_.refusals().front().file.string() +
                             " refused: " + registry_.refusals().front().reason);
  manifest_ = resources / "manifest.json";
  log_ = std::move(log);
  for (const auto& [vr, b] : bindings_)
    if (!b.parameter.empty()) parameters_[vr] = b.start;
  build();
  for (const auto& [vr, b] : bindings_) {
    if (!b.parameter.empty()) continue;
    const Node* node = nullptr;
    for (const Node& n : experiment_->graph().nodes)
      if (b.port.rfind(n.name + ".", 0) == 0) node = &n;
    if (!node) throw std::runtime_error("value reference " + std::to_string(vr) + ": no subsystem for " + b.port);
    if (b.input) {
      const int p = node->port_index(b.port.substr(node->name.size() + 1));
      if (p < 0 || node->ports[static_cast<std::size_t>(p)].direction == Direction::output)
        throw std::runtime_error("value reference " + std::to_string(vr) + ": " + b.port + " is no input");
      for (std::size_t k = 0; k < node->inputs.size(); ++k)
        if (node->inputs[k] == static_cast<std::size_t>(p)) inputs_[b.port] = node->input_start[k];
    }
  }
}

ExportedInstance::~ExportedInstance() = default;

// The experiment from the packed manifest with the parameters set so far.
void ExportedInstance::build() {
  std::vector<std::string> overrides;
  for (const auto& [vr, value] : parameters_)
    overrides.push_back(bindings_.at(vr).parameter + "=" + json(value).dump());
  sim_.reset();
  experiment_.reset();
  try {
    Manifest m = read_manifest(manifest_, overrides);
    m.plugin_paths.clear();
    m.external_inputs = true;
    experiment_ = std::make_unique<Experiment>(std::move(m), registry_);
    if (log_) experiment_->graph().log->forward(log_);
  } catch (const ManifestError& e) {
    throw std::runtime_error(problems_text(e));
  }
  rebuild_ = false;
  inputs_changed_ = true;
}

double ExportedInstance::start() const { return experiment_->manifest().coupling.start; }
double ExportedInstance::end() const { return experiment_->manifest().coupling.end; }
double ExportedInstance::time() const { return initialized_ ? sim_->time() : start(); }

// A new Simulation (its plugins start again from the beginning) with the inputs set so far.
void ExportedInstance::fresh_simulation() {
  sim_.reset();
  sim_ = std::make_unique<Simulation>(*experiment_);
  for (const auto& [port, value] : inputs_) sim_->set_input(port, value);
}

void ExportedInstance::initialization_mode_view() {
  if (rebuild_) build();
  if (sim_ && !inputs_changed_) return;
  fresh_simulation();
  inputs_changed_ = false;
  try {
    reporting_stop([&] { sim_->initial_outputs(); });
  } catch (...) {
    sim_.reset();  // asked again, it fails again with its reason
    throw;
  }
}

void ExportedInstance::initialize(double start_time) {
  if (initialized_) throw std::logic_error("initialized already");
  if (std::abs(start_time - start()) > 1e-12 * std::max(1.0, std::abs(start())))
    throw std::runtime_error("the start time " + message_number(start_time) + " s is not the experiment's start " +
                             message_number(start()) + " s");
  if (rebuild_) build();
  fresh_simulation();
  reporting_stop([&] { sim_->initialize(); });
  for (const auto& [vr, b] : bindings_)
    if (!b.input && b.parameter.empty()) (void)sim_->outputs(b.port);  // every output binding names an output
  initialized_ = true;
}

void ExportedInstance::set(std::uint32_t vr, std::span<const double> values) {
  const PortBinding& b = binding(vr);
  if (!b.parameter.empty()) {
    if (initialized_)
      throw std::runtime_error("parameter " + b.port + " (value reference " + std::to_string(vr) +
                               ") is fixed: it is set before the end of initialization mode");
    if (values.size() != 1 || !std::isfinite(values[0]))
      throw std::runtime_error("parameter " + b.port + ": expected one finite number");
    if (parameters_.at(vr) != values[0]) rebuild_ = true;
    parameters_[vr] = values[0];
    return;
  }
  if (!b.input) throw std::out_of_range("value reference " + std::to_string(vr) + " is the output " + b.port);
  if (values.size() != b.size)
    throw std::runtime_error("value reference " + std::to_string(vr) + " (" + b.port + ") takes " +
                             std::to_string(b.size) + " values, " + std::to_string(values.size()) + " given");
  for (double v : values)
    if (!std::isfinite(v))
      throw std::runtime_error("value reference " + std::to_string(vr) + " (" + b.port + "): " + message_number(v) +
                               " is not a finite number");
  std::vector<double>& held = inputs_.at(b.port);
  std::copy(values.begin(), values.end(), held.begin() + static_cast<std::ptrdiff_t>(b.element));
  if (!initialized_) inputs_changed_ = true;
  else reporting_stop([&] { sim_->set_input(b.port, held); });
}

void ExportedInstance::do_step(double t, double h) {
  if (!initialized_) throw std::logic_error("doStep before the end of initialization");
  const CouplingConfig& c = experiment_->manifest().coupling;
  const double eps = 1e-9 * std::max({1.0, std::abs(t), std::abs(c.end)});
  if (!(h > 0)) throw std::runtime_error("communication step size " + message_number(h) + " s (expected > 0)");
  if (std::abs(t - sim_->time()) > eps)
    throw std::runtime_error("doStep from " + message_number(t) + " s, but the FMU is at " +
                             message_number(sim_->time()) + " s");
  // The importer's own sum t + h lands within round-off of the experiment's grid: take the grid
  // point, as the experiment run alone would.
  double target = t + h;
  if (c.macro_step > 0) {
    const double k = std::round((target - c.start) / c.macro_step);
    const double grid = c.start + k * c.macro_step;
    if (std::abs(grid - target) <= eps) target = grid;
  }
  if (target > c.end && target - c.end <= eps) target = c.end;
  if (target > c.end)
    throw std::runtime_error("doStep to " + message_number(target) + " s is past the experiment's end " +
                             message_number(c.end) + " s");
  reporting_stop([&] { sim_->advance_to(target); });
}

bool ExportedInstance::can_save_state() const { return initialized_ && sim_->can_save(); }

void ExportedInstance::save(State& s) {
  if (!initialized_) throw std::runtime_error("the state is saved from the end of initialization on");
  if (!sim_->can_save())
    throw std::runtime_error("this experiment's state cannot be saved (it needs Jacobi or Gauss-Seidel coupling "
                             "without iteration or step control, no connection, and subsystems that save their state)");
  reporting_stop([&] { sim_->save(s.run); });
  s.inputs = inputs_;
}

void ExportedInstance::restore(const State& s) {
  if (!initialized_) throw std::runtime_error("a state is restored from the end of initialization on");
  if (!sim_->can_save()) throw std::runtime_error("this experiment's state cannot be restored");
  reporting_stop([&] { sim_->restore(s.run); });
  inputs_ = s.inputs;
}

const PortBinding& ExportedInstance::binding(std::uint32_t vr) const {
  const auto it = bindings_.find(vr);
  if (it == bindings_.end())
    throw std::out_of_range("value reference " + std::to_string(vr) + " is not one of this FMU's");
  return it->second;
}

double ExportedInstance::get(std::uint32_t vr) {
  const PortBinding& b = binding(vr);
  if (!b.parameter.empty()) return parameters_.at(vr);
  if (b.input) return inputs_.at(b.port)[b.element];
  if (!initialized_) initialization_mode_view();
  else reporting_stop([&] { sim_->fresh_outputs(); });
  return sim_->outputs(b.port)[b.element];
}

void ExportedInstance::get_all(std::uint32_t vr, std::vector<double>& out) {
  const PortBinding& b = binding(vr);
  if (!b.parameter.empty()) {
    out.push_back(parameters_.at(vr));
    return;
  }
  if (!b.input && !initialized_) initialization_mode_view();
  if (!b.input && initialized_) reporting_stop([&] { sim_->fresh_outputs(); });
  const std::span<const double> y = b.input ? std::span<const double>(inputs_.at(b.port)) : sim_->outputs(b.port);
  out.insert(out.end(), y.begin() + static_cast<std::ptrdiff_t>(b.element),
             y.begin() + static_cast<std::ptrdiff_t>(b.element + b.size));
}

}  // namespace stride::host::fmu_export
