// Functional Mock-up Units (FMI 1.0, 2.0 and 3.0) as Stride subsystems. Internal to the host.
//
// Order: load_fmu(file) unpacks the archive into a private temporary folder (unpack.hpp), reads
// modelDescription.xml (model_description.hpp), loads the platform binary and checks the
// required functions (binary.hpp); the resulting FmuPlugin declares the FMU's parameters like a
// plugin does. Its create() makes one FMU instance per subsystem, its instantiation first tried
// in a child process (probe.hpp): co-simulation FMUs step themselves (co_simulation.hpp);
// model-exchange FMUs are ODE systems stepped by a Stride integrator, with time events, state
// events located by bisection, event iteration and completed-step handling
// (model_exchange.hpp). The three versions sit behind one adapter (instance.hpp; fmi1.cpp, fmi2.cpp,
// fmi3.cpp).
//
// The temporary folder is removed when the last object using the FMU is destroyed, and only by
// the process that created it (runs fork; a child never removes its parent's folder).
// remove_temporary_fmu_folders() removes the folders this process created, for processes that
// end by _exit (sweep workers).
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "fmi/model.hpp"
#include "fmi/model_description.hpp"

namespace boost::dll {
class shared_library;
}

namespace stride::host::fmi {

struct Fmu;  // the unpacked archive, its description and its loaded binaries (binary.hpp)

// An FMU seen as a subsystem plugin (info() lists its parameters) and, to the rest of the host,
// as an FmuModel (model.hpp).
class FmuPlugin final : public Plugin, public FmuModel {
 public:
  explicit FmuPlugin(std::shared_ptr<const Fmu> fmu);
  ~FmuPlugin() override;
  const PluginInfo& info() const override { return info_; }
  // A co-simulation FMU (or, for describe, a model-exchange FMU without an integrator).
  std::unique_ptr<Subsystem> create_subsystem(const Params& p) const override;

  const ModelDescription& description() const override;
  const std::vector<ModelVariable>& variables() const override { return variables_; }
  const ModelVariable* variable(const std::string& name) const override;
  ModelCapabilities capabilities() const override;
  std::vector<ArrayElementName> element_names() const override;
  std::vector<PortSpec> ports(const json& parameters = json::object(),
                              const std::vector<std::string>& observed = {}) const override;
  // String and Binary variables (inputs, outputs, parameters, others a record may name) as the
  // subsystem's ports beside its numeric ones.
  std::vector<TextPortSpec> text_ports(const json& parameters = json::object()) const override;
  // Model exchange when an integrator is named; instantiation and initialization at t0 are
  // probed first (probe.hpp).
  std::unique_ptr<Subsystem> create(const Params& p, const std::string& instance_name,
                                    std::shared_ptr<Integrator> integrator, const std::vector<std::string>& observed,
                                    double t0) const override;
  std::shared_ptr<const void> binary(bool model_exchange) const override { return library(model_exchange); }
  std::shared_ptr<boost::dll::shared_library> library(bool model_exchange) const;
  std::vector<double> input_start(const std::string& port, const json& parameters) const override;

 private:
  std::shared_ptr<const Fmu> fmu_;
  PluginInfo info_;
  std::vector<ModelVariable> variables_;  // one per model-description variable, same order
};

// Unpacks and checks `file`; throws FmuError with the reason.
std::shared_ptr<FmuPlugin> load_fmu(const std::filesystem::path& file);

// Removes the temporary folders of every FMU this process unpacked (for _exit paths).
void remove_temporary_fmu_folders() noexcept;

}  // namespace stride::host::fmi
