// Functional Mock-up Units (FMI 2.0 and 3.0) as Stride subsystems. Internal to the host.
//
// Order: load_fmu(file) unpacks the archive into a private temporary folder, reads
// modelDescription.xml, loads the platform binary and checks the required functions; the
// resulting FmuPlugin declares the FMU's parameters like a plugin does. Its create() makes one
// FMU instance per subsystem: co-simulation FMUs step themselves (Subsystem); model-exchange
// FMUs are ODE systems stepped by a Stride integrator, with time events, state events located
// by bisection, event iteration and completed-step handling.
//
// The temporary folder is removed when the last object using the FMU is destroyed, and only by
// the process that created it (runs fork; a child never removes its parent's folder).
// remove_temporary_fmu_folders() removes the folders this process created, for processes that
// end by _exit (sweep workers).
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <stride/stride.hpp>

namespace boost::dll {
class shared_library;
}

namespace stride::host::fmi {

// A broken FMU: the message names the file and what is wrong.
class FmuError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class VarType { real, integer, boolean, string, enumeration };

struct Variable {
  std::string name;
  unsigned value_reference = 0;
  VarType type = VarType::real;
  std::string causality = "local";
  std::string variability = "continuous";
  std::string description;
  std::string unit;  // after the declared type, "" when none; SI for ports when converted (below)
  // Ports whose unit Stride does not know but the FMU defines with a <BaseUnit>: the port is in
  // the SI unit and value_SI = value_FMU * unit_factor + unit_offset; fmu_unit is the FMU's name.
  std::string fmu_unit;
  double unit_factor = 1.0, unit_offset = 0.0;
  json start;        // null when none
  std::optional<double> min, max;
  std::size_t size = 1;  // FMI 3 arrays: the product of the fixed dimensions
  // Outputs only: depends on inputs at the same time (ModelStructure).
  bool feedthrough = false;
};

struct ModelDescription {
  int version = 2;  // 2 or 3
  std::string fmi_version, model_name, token, description, generation_tool;
  bool has_cs = false, has_me = false;
  std::string cs_identifier, me_identifier;
  bool can_variable_step = true;
  bool cs_can_get_set_state = false, me_can_get_set_state = false;  // canGetAndSetFMUstate per interface
  std::size_t state_count = 0, event_indicator_count = 0;
  std::vector<Variable> variables;
};

// Reads and checks modelDescription.xml (throws FmuError naming `label`).
ModelDescription read_model_description(const std::filesystem::path& xml, const std::string& label);

// The platform folder name under binaries/ of this host ("linux64" / "x86_64-linux").
std::string platform_folder(int version);

struct Fmu;  // the unpacked archive, its description and its loaded binaries

// An FMU seen as a subsystem plugin: info() lists its parameters; create() makes an instance.
class FmuPlugin final : public Plugin {
 public:
  explicit FmuPlugin(std::shared_ptr<const Fmu> fmu);
  ~FmuPlugin() override;
  const PluginInfo& info() const override { return info_; }
  // A co-simulation FMU (or, for describe, a model-exchange FMU without an integrator).
  std::unique_ptr<Subsystem> create_subsystem(const Params& p) const override;

  const ModelDescription& description() const;
  std::vector<PortSpec> ports() const;
  // The interface chosen for a subsystem: model exchange when an integrator is named.
  // Throws std::invalid_argument when the FMU does not provide it.
  std::unique_ptr<Subsystem> create(const Params& p, const std::string& instance_name,
                                    std::shared_ptr<Integrator> integrator) const;
  std::shared_ptr<boost::dll::shared_library> library(bool model_exchange) const;

 private:
  std::shared_ptr<const Fmu> fmu_;
  PluginInfo info_;
  mutable bool probed_cs_ = false, probed_me_ = false;  // instantiation tried in a child process
};

// Unpacks and checks `file`; throws FmuError with the reason.
std::shared_ptr<FmuPlugin> load_fmu(const std::filesystem::path& file);

// Removes the temporary folders of every FMU this process unpacked (for _exit paths).
void remove_temporary_fmu_folders() noexcept;

}  // namespace stride::host::fmi
