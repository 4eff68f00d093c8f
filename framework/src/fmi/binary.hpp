// An unpacked FMU: its folder, its description and its loaded binaries with the FMI functions
// Stride calls, looked up once. Internal to the host.
//
// load_binaries(fmu) loads binaries/<platform>/<modelIdentifier>.so of each declared interface
// (one library when both share an identifier) and looks up every function the interface needs
// (FMI 1.0: each named <modelIdentifier>_fmi<Function>); a missing binary or function throws
// FmuError naming them all.
#pragma once

#include <algorithm>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fmi/model_description.hpp"
#include "fmi/unpack.hpp"
#include "stride/fmi/fmi2.h"
#include "stride/fmi/fmi3.h"
extern "C" {
#include "stride/fmi/fmi1Functions.h"  // the Modelica Association's header (2-clause BSD, licence beside it)
}

namespace boost::dll {
class shared_library;
}

namespace stride::host::fmi {

// FMI 1.0: one interface per FMU, so one table, co-simulation or model exchange.
struct Fmi1Api {
  fmi1GetRealTYPE* get_real = nullptr;
  fmi1SetRealTYPE* set_real = nullptr;
  fmi1GetIntegerTYPE* get_integer = nullptr;
  fmi1SetIntegerTYPE* set_integer = nullptr;
  fmi1GetBooleanTYPE* get_boolean = nullptr;
  fmi1SetBooleanTYPE* set_boolean = nullptr;
  fmi1SetStringTYPE* set_string = nullptr;
  fmi1GetStringTYPE* get_string = nullptr;  // optional until a String is recorded
  // co-simulation
  fmi1InstantiateSlaveTYPE* instantiate_slave = nullptr;
  fmi1InitializeSlaveTYPE* initialize_slave = nullptr;
  fmi1TerminateSlaveTYPE* terminate_slave = nullptr;
  fmi1FreeSlaveInstanceTYPE* free_slave = nullptr;
  fmi1DoStepTYPE* do_step = nullptr;
  fmi1GetRealStatusTYPE* get_real_status = nullptr;  // optional
  // model exchange
  fmi1InstantiateModelTYPE* instantiate_model = nullptr;
  fmi1FreeModelInstanceTYPE* free_model = nullptr;
  fmi1SetTimeTYPE* set_time = nullptr;
  fmi1SetContinuousStatesTYPE* set_states = nullptr;
  fmi1CompletedIntegratorStepTYPE* completed_integrator_step = nullptr;
  fmi1InitializeTYPE* initialize = nullptr;
  fmi1GetDerivativesTYPE* get_derivatives = nullptr;
  fmi1GetEventIndicatorsTYPE* get_event_indicators = nullptr;
  fmi1EventUpdateTYPE* event_update = nullptr;
  fmi1GetContinuousStatesTYPE* get_states = nullptr;
  fmi1TerminateTYPE* terminate = nullptr;
};

struct Fmi2Api {
  fmi2InstantiateTYPE* instantiate = nullptr;
  fmi2FreeInstanceTYPE* free_instance = nullptr;
  fmi2SetupExperimentTYPE* setup_experiment = nullptr;
  fmi2EnterInitializationModeTYPE* enter_initialization = nullptr;
  fmi2ExitInitializationModeTYPE* exit_initialization = nullptr;
  fmi2TerminateTYPE* terminate = nullptr;
  fmi2GetRealTYPE* get_real = nullptr;
  fmi2SetRealTYPE* set_real = nullptr;
  fmi2GetIntegerTYPE* get_integer = nullptr;
  fmi2SetIntegerTYPE* set_integer = nullptr;
  fmi2GetBooleanTYPE* get_boolean = nullptr;
  fmi2SetBooleanTYPE* set_boolean = nullptr;
  fmi2SetStringTYPE* set_string = nullptr;
  fmi2GetStringTYPE* get_string = nullptr;  // optional until a String is recorded
  // canGetAndSetFMUstate
  fmi2GetFMUstateTYPE* get_fmu_state = nullptr;
  fmi2SetFMUstateTYPE* set_fmu_state = nullptr;
  fmi2FreeFMUstateTYPE* free_fmu_state = nullptr;
  // co-simulation
  fmi2DoStepTYPE* do_step = nullptr;
  fmi2GetRealStatusTYPE* get_real_status = nullptr;        // optional
  fmi2GetBooleanStatusTYPE* get_boolean_status = nullptr;  // optional
  // model exchange
  fmi2SetTimeTYPE* set_time = nullptr;
  fmi2SetContinuousStatesTYPE* set_states = nullptr;
  fmi2GetDerivativesTYPE* get_derivatives = nullptr;
  fmi2GetEventIndicatorsTYPE* get_event_indicators = nullptr;
  fmi2GetContinuousStatesTYPE* get_states = nullptr;
  fmi2EnterEventModeTYPE* enter_event_mode = nullptr;
  fmi2NewDiscreteStatesTYPE* new_discrete_states = nullptr;
  fmi2EnterContinuousTimeModeTYPE* enter_continuous_time_mode = nullptr;
  fmi2CompletedIntegratorStepTYPE* completed_integrator_step = nullptr;
};

struct Fmi3Api {
  fmi3InstantiateCoSimulationTYPE* instantiate = nullptr;      // co-simulation
  fmi3InstantiateModelExchangeTYPE* instantiate_me = nullptr;  // model exchange
  fmi3FreeInstanceTYPE* free_instance = nullptr;
  fmi3EnterInitializationModeTYPE* enter_initialization = nullptr;
  fmi3ExitInitializationModeTYPE* exit_initialization = nullptr;
  fmi3TerminateTYPE* terminate = nullptr;
  fmi3GetFloat64TYPE* get_float64 = nullptr;
  fmi3SetFloat64TYPE* set_float64 = nullptr;
  fmi3GetInt32TYPE* get_int32 = nullptr;
  fmi3SetInt32TYPE* set_int32 = nullptr;
  fmi3GetBooleanTYPE* get_boolean = nullptr;
  fmi3SetBooleanTYPE* set_boolean = nullptr;
  fmi3SetStringTYPE* set_string = nullptr;
  fmi3DoStepTYPE* do_step = nullptr;
  // The other types: optional until a variable of the type is used (then missing is an error).
  fmi3GetStringTYPE* get_string = nullptr;
  fmi3GetFloat32TYPE* get_float32 = nullptr;
  fmi3SetFloat32TYPE* set_float32 = nullptr;
  fmi3GetInt8TYPE* get_int8 = nullptr;
  fmi3SetInt8TYPE* set_int8 = nullptr;
  fmi3GetUInt8TYPE* get_uint8 = nullptr;
  fmi3SetUInt8TYPE* set_uint8 = nullptr;
  fmi3GetInt16TYPE* get_int16 = nullptr;
  fmi3SetInt16TYPE* set_int16 = nullptr;
  fmi3GetUInt16TYPE* get_uint16 = nullptr;
  fmi3SetUInt16TYPE* set_uint16 = nullptr;
  fmi3GetUInt32TYPE* get_uint32 = nullptr;
  fmi3SetUInt32TYPE* set_uint32 = nullptr;
  fmi3GetInt64TYPE* get_int64 = nullptr;
  fmi3SetInt64TYPE* set_int64 = nullptr;
  fmi3GetUInt64TYPE* get_uint64 = nullptr;
  fmi3SetUInt64TYPE* set_uint64 = nullptr;
  fmi3GetBinaryTYPE* get_binary = nullptr;
  fmi3SetBinaryTYPE* set_binary = nullptr;
  fmi3EnterConfigurationModeTYPE* enter_configuration = nullptr;  // structural parameters
  fmi3ExitConfigurationModeTYPE* exit_configuration = nullptr;
  // canGetAndSetFMUState
  fmi3GetFMUStateTYPE* get_fmu_state = nullptr;
  fmi3SetFMUStateTYPE* set_fmu_state = nullptr;
  fmi3FreeFMUStateTYPE* free_fmu_state = nullptr;
  // model exchange
  fmi3SetTimeTYPE* set_time = nullptr;
  fmi3SetContinuousStatesTYPE* set_states = nullptr;
  fmi3GetContinuousStateDerivativesTYPE* get_derivatives = nullptr;
  fmi3GetEventIndicatorsTYPE* get_event_indicators = nullptr;
  fmi3GetContinuousStatesTYPE* get_states = nullptr;
  fmi3EnterEventModeTYPE* enter_event_mode = nullptr;
  fmi3UpdateDiscreteStatesTYPE* update_discrete_states = nullptr;
  fmi3EnterContinuousTimeModeTYPE* enter_continuous_time_mode = nullptr;
  fmi3CompletedIntegratorStepTYPE* completed_integrator_step = nullptr;
  fmi3EnterStepModeTYPE* enter_step_mode = nullptr;  // co-simulation with event mode
  fmi3GetNumberOfContinuousStatesTYPE* number_of_states = nullptr;      // optional
  fmi3GetNumberOfEventIndicatorsTYPE* number_of_indicators = nullptr;  // optional
};

struct Fmu {
  std::filesystem::path file;
  std::string label;  // the file as the user wrote it, for messages
  std::shared_ptr<TempFolder> folder;
  ModelDescription md;
  std::shared_ptr<boost::dll::shared_library> cs_lib, me_lib;
  Fmi1Api api1;
  Fmi2Api cs2, me2;
  Fmi3Api cs3, me3;

  // The names of the instances alive in this process (canBeInstantiatedOnlyOncePerProcess).
  class Instances {
   public:
    void add(const std::string& name) {
      std::lock_guard<std::mutex> lock(mutex_);
      names_.push_back(name);
    }
    void remove(const std::string& name) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (auto it = std::find(names_.begin(), names_.end(), name); it != names_.end()) names_.erase(it);
    }
    std::string first() const {
      std::lock_guard<std::mutex> lock(mutex_);
      return names_.empty() ? std::string() : names_.front();
    }

   private:
    mutable std::mutex mutex_;
    std::vector<std::string> names_;
  };
  mutable Instances instances;
};

// Loads the binaries of fmu.md's interfaces from fmu.folder and looks up their functions.
void load_binaries(Fmu& fmu);

}  // namespace stride::host::fmi
