// Loading an FMU's binaries and looking up its functions (see binary.hpp).
#include "fmi/binary.hpp"

#include <algorithm>
#include <vector>

#include <dlfcn.h>

#include <boost/dll/shared_library.hpp>

namespace stride::host::fmi {
namespace fs = std::filesystem;

namespace {

// Looks up functions, collecting the names of the missing required ones.
struct Lookup {
  boost::dll::shared_library& lib;
  std::vector<std::string> missing;
  template <class T>
  void operator()(T*& fn, const char* name, bool required = true) {
    void* p = lib.is_loaded() ? ::dlsym(lib.native(), name) : nullptr;
    fn = reinterpret_cast<T*>(p);
    if (!p && required) missing.push_back(name);
  }
  void require(const std::string& label, const std::string& what) const {
    if (missing.empty()) return;
    std::string names;
    for (const auto& m : missing) names += (names.empty() ? "" : ", ") + m;
    throw FmuError(label + ": the " + what + " binary lacks required function" + (missing.size() > 1 ? "s " : " ") +
                   names);
  }
};

std::shared_ptr<boost::dll::shared_library> load_binary(const fs::path& dir, const ModelDescription& md,
                                                        const std::string& id, const std::string& label) {
  const std::string platform = platform_folder(md.version);
  const fs::path bin = dir / "binaries" / platform / (id + ".so");
  std::error_code ec;
  if (!fs::is_regular_file(bin, ec)) {
    std::string have;
    for (const auto& e : fs::directory_iterator(dir / "binaries", ec))
      have += (have.empty() ? "" : ", ") + e.path().filename().string();
    throw FmuError(label + ": no binary for this platform: binaries/" + platform + "/" + id +
                   ".so is missing (the FMU has " +
                   (have.empty() ? std::string("no binaries") : "binaries for: " + have) + ")");
  }
  // Resolved inside the unpacked folder (no link leads out of it).
  std::error_code ec_root, ec_bin;
  const fs::path root = fs::canonical(dir, ec_root), real = fs::canonical(bin, ec_bin);
  if (ec_root || ec_bin || std::mismatch(root.begin(), root.end(), real.begin(), real.end()).first != root.end())
    throw FmuError(label + ": binaries/" + platform + "/" + id + ".so resolves outside the FMU (" + real.string() +
                   ")");
  auto lib = std::make_shared<boost::dll::shared_library>();
  lib->load(real, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    const char* why = ::dlerror();
    throw FmuError(label + ": binaries/" + platform + "/" + id + ".so cannot be loaded: " + (why ? why : ec.message()));
  }
  return lib;
}

void lookup_common2(Lookup& l, Fmi2Api& a, bool state) {
  l(a.get_fmu_state, "fmi2GetFMUstate", state);
  l(a.set_fmu_state, "fmi2SetFMUstate", state);
  l(a.free_fmu_state, "fmi2FreeFMUstate", state);
  l(a.instantiate, "fmi2Instantiate");
  l(a.free_instance, "fmi2FreeInstance");
  l(a.setup_experiment, "fmi2SetupExperiment");
  l(a.enter_initialization, "fmi2EnterInitializationMode");
  l(a.exit_initialization, "fmi2ExitInitializationMode");
  l(a.terminate, "fmi2Terminate");
  l(a.get_real, "fmi2GetReal");
  l(a.set_real, "fmi2SetReal");
  l(a.get_integer, "fmi2GetInteger");
  l(a.set_integer, "fmi2SetInteger");
  l(a.get_boolean, "fmi2GetBoolean");
  l(a.set_boolean, "fmi2SetBoolean");
  l(a.set_string, "fmi2SetString");
  l(a.get_string, "fmi2GetString", false);
}

void lookup_common3(Lookup& l, Fmi3Api& a, bool state) {
  l(a.get_fmu_state, "fmi3GetFMUState", state);
  l(a.set_fmu_state, "fmi3SetFMUState", state);
  l(a.free_fmu_state, "fmi3FreeFMUState", state);
  l(a.free_instance, "fmi3FreeInstance");
  l(a.enter_initialization, "fmi3EnterInitializationMode");
  l(a.exit_initialization, "fmi3ExitInitializationMode");
  l(a.terminate, "fmi3Terminate");
  l(a.get_float64, "fmi3GetFloat64");
  l(a.set_float64, "fmi3SetFloat64");
  l(a.get_int32, "fmi3GetInt32");
  l(a.set_int32, "fmi3SetInt32");
  l(a.get_boolean, "fmi3GetBoolean");
  l(a.set_boolean, "fmi3SetBoolean");
  l(a.set_string, "fmi3SetString", false);  // needed only for String parameters
  l(a.get_string, "fmi3GetString", false);
  l(a.get_float32, "fmi3GetFloat32", false);
  l(a.set_float32, "fmi3SetFloat32", false);
  l(a.get_int8, "fmi3GetInt8", false);
  l(a.set_int8, "fmi3SetInt8", false);
  l(a.get_uint8, "fmi3GetUInt8", false);
  l(a.set_uint8, "fmi3SetUInt8", false);
  l(a.get_int16, "fmi3GetInt16", false);
  l(a.set_int16, "fmi3SetInt16", false);
  l(a.get_uint16, "fmi3GetUInt16", false);
  l(a.set_uint16, "fmi3SetUInt16", false);
  l(a.get_uint32, "fmi3GetUInt32", false);
  l(a.set_uint32, "fmi3SetUInt32", false);
  l(a.get_int64, "fmi3GetInt64", false);
  l(a.set_int64, "fmi3SetInt64", false);
  l(a.get_uint64, "fmi3GetUInt64", false);
  l(a.set_uint64, "fmi3SetUInt64", false);
  l(a.get_binary, "fmi3GetBinary", false);
  l(a.set_binary, "fmi3SetBinary", false);
  l(a.enter_configuration, "fmi3EnterConfigurationMode", false);
  l(a.exit_configuration, "fmi3ExitConfigurationMode", false);
}

// FMI 1.0: every function's name has the model identifier as its prefix.
void lookup1(Fmu& fmu) {
  const auto& md = fmu.md;
  Lookup l{md.has_cs ? *fmu.cs_lib : *fmu.me_lib, {}};
  const std::string prefix = (md.has_cs ? md.cs_identifier : md.me_identifier) + "_fmi";
  auto fn = [&](auto*& f, const char* name, bool required = true) { l(f, (prefix + name).c_str(), required); };
  auto& a = fmu.api1;
  fn(a.get_real, "GetReal");
  fn(a.set_real, "SetReal");
  fn(a.get_integer, "GetInteger");
  fn(a.set_integer, "SetInteger");
  fn(a.get_boolean, "GetBoolean");
  fn(a.set_boolean, "SetBoolean");
  fn(a.set_string, "SetString");
  fn(a.get_string, "GetString", false);
  if (md.has_cs) {
    fn(a.instantiate_slave, "InstantiateSlave");
    fn(a.initialize_slave, "InitializeSlave");
    fn(a.terminate_slave, "TerminateSlave");
    fn(a.free_slave, "FreeSlaveInstance");
    fn(a.do_step, "DoStep");
    fn(a.get_real_status, "GetRealStatus", false);
  } else {
    fn(a.instantiate_model, "InstantiateModel");
    fn(a.free_model, "FreeModelInstance");
    fn(a.set_time, "SetTime");
    fn(a.set_states, "SetContinuousStates");
    fn(a.completed_integrator_step, "CompletedIntegratorStep");
    fn(a.initialize, "Initialize");
    fn(a.get_derivatives, "GetDerivatives");
    fn(a.get_event_indicators, "GetEventIndicators");
    fn(a.event_update, "EventUpdate");
    fn(a.get_states, "GetContinuousStates");
    fn(a.terminate, "Terminate");
  }
  l.require(fmu.label, md.has_cs ? "co-simulation" : "model-exchange");
}

void lookup_cs(Fmu& fmu) {
  const auto& md = fmu.md;
  Lookup l{*fmu.cs_lib, {}};
  if (md.version == 2) {
    lookup_common2(l, fmu.cs2, md.cs_can_get_set_state);
    l(fmu.cs2.do_step, "fmi2DoStep");
    l(fmu.cs2.get_real_status, "fmi2GetRealStatus", false);
    l(fmu.cs2.get_boolean_status, "fmi2GetBooleanStatus", false);
  } else {
    lookup_common3(l, fmu.cs3, md.cs_can_get_set_state);
    l(fmu.cs3.instantiate, "fmi3InstantiateCoSimulation");
    l(fmu.cs3.do_step, "fmi3DoStep");
    if (md.cs_event_mode) {
      l(fmu.cs3.enter_event_mode, "fmi3EnterEventMode");
      l(fmu.cs3.update_discrete_states, "fmi3UpdateDiscreteStates");
      l(fmu.cs3.enter_step_mode, "fmi3EnterStepMode");
    }
  }
  l.require(fmu.label, "co-simulation");
}

void lookup_me2(Fmu& fmu) {
  Lookup l{*fmu.me_lib, {}};
  auto& a = fmu.me2;
  lookup_common2(l, a, fmu.md.me_can_get_set_state);
  l(a.set_time, "fmi2SetTime");
  l(a.set_states, "fmi2SetContinuousStates");
  l(a.get_derivatives, "fmi2GetDerivatives");
  l(a.get_event_indicators, "fmi2GetEventIndicators");
  l(a.get_states, "fmi2GetContinuousStates");
  l(a.enter_event_mode, "fmi2EnterEventMode");
  l(a.new_discrete_states, "fmi2NewDiscreteStates");
  l(a.enter_continuous_time_mode, "fmi2EnterContinuousTimeMode");
  l(a.completed_integrator_step, "fmi2CompletedIntegratorStep");
  l.require(fmu.label, "model-exchange");
}

void lookup_me3(Fmu& fmu) {
  Lookup l{*fmu.me_lib, {}};
  auto& a = fmu.me3;
  lookup_common3(l, a, fmu.md.me_can_get_set_state);
  l(a.instantiate_me, "fmi3InstantiateModelExchange");
  l(a.set_time, "fmi3SetTime");
  l(a.set_states, "fmi3SetContinuousStates");
  l(a.get_derivatives, "fmi3GetContinuousStateDerivatives");
  l(a.get_event_indicators, "fmi3GetEventIndicators");
  l(a.get_states, "fmi3GetContinuousStates");
  l(a.enter_event_mode, "fmi3EnterEventMode");
  l(a.update_discrete_states, "fmi3UpdateDiscreteStates");
  l(a.enter_continuous_time_mode, "fmi3EnterContinuousTimeMode");
  l(a.completed_integrator_step, "fmi3CompletedIntegratorStep");
  l(a.number_of_states, "fmi3GetNumberOfContinuousStates", false);
  l(a.number_of_indicators, "fmi3GetNumberOfEventIndicators", false);
  l.require(fmu.label, "model-exchange");
}

}  // namespace

void load_binaries(Fmu& fmu) {
  const auto& md = fmu.md;
  const fs::path& dir = fmu.folder->path();
  if (md.has_cs) {
    fmu.cs_lib = load_binary(dir, md, md.cs_identifier, fmu.label);
    if (md.version > 1) lookup_cs(fmu);
  }
  if (md.has_me)
    fmu.me_lib = md.has_cs && md.me_identifier == md.cs_identifier ? fmu.cs_lib
                                                                   : load_binary(dir, md, md.me_identifier, fmu.label);
  if (md.version == 1) return lookup1(fmu);
  if (!md.has_me) return;
  if (md.version == 3) lookup_me3(fmu);
  else lookup_me2(fmu);
}

}  // namespace stride::host::fmi
