/* The FMI 3.0 C API (Functional Mock-up Interface 3.0, Modelica Association), declared here
 * from the text of the standard (section 2.2): the types and the function types of what
 * Stride calls for co-simulation and model-exchange FMUs. Written for Stride; usable from C and C++. */
#ifndef STRIDE_FMI3_H
#define STRIDE_FMI3_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef void* fmi3Instance;
typedef void* fmi3InstanceEnvironment;
typedef void* fmi3FMUState;
typedef uint32_t fmi3ValueReference;
typedef double fmi3Float64;
typedef float fmi3Float32;
typedef int8_t fmi3Int8;
typedef uint8_t fmi3UInt8;
typedef int16_t fmi3Int16;
typedef uint16_t fmi3UInt16;
typedef int32_t fmi3Int32;
typedef uint32_t fmi3UInt32;
typedef int64_t fmi3Int64;
typedef uint64_t fmi3UInt64;
typedef bool fmi3Boolean;
typedef char fmi3Char;
typedef const fmi3Char* fmi3String;
typedef uint8_t fmi3Byte;
typedef const fmi3Byte* fmi3Binary;

typedef enum { fmi3OK, fmi3Warning, fmi3Discard, fmi3Error, fmi3Fatal } fmi3Status;

typedef void (*fmi3LogMessageCallback)(fmi3InstanceEnvironment, fmi3Status status, fmi3String category,
                                       fmi3String message);
typedef void (*fmi3IntermediateUpdateCallback)(fmi3InstanceEnvironment, fmi3Float64 intermediateUpdateTime,
                                               fmi3Boolean intermediateVariableSetRequested,
                                               fmi3Boolean intermediateVariableGetAllowed,
                                               fmi3Boolean intermediateStepFinished, fmi3Boolean canReturnEarly,
                                               fmi3Boolean* earlyReturnRequested,
                                               fmi3Float64* earlyReturnTime);

typedef const char* fmi3GetVersionTYPE(void);
typedef fmi3Instance fmi3InstantiateCoSimulationTYPE(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible,
    fmi3Boolean loggingOn, fmi3Boolean eventModeUsed, fmi3Boolean earlyReturnAllowed,
    const fmi3ValueReference requiredIntermediateVariables[], size_t nRequiredIntermediateVariables,
    fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
    fmi3IntermediateUpdateCallback intermediateUpdate);
typedef void fmi3FreeInstanceTYPE(fmi3Instance);
typedef fmi3Status fmi3EnterInitializationModeTYPE(fmi3Instance, fmi3Boolean toleranceDefined, fmi3Float64 tolerance,
                                                   fmi3Float64 startTime, fmi3Boolean stopTimeDefined,
                                                   fmi3Float64 stopTime);
typedef fmi3Status fmi3ExitInitializationModeTYPE(fmi3Instance);
typedef fmi3Status fmi3TerminateTYPE(fmi3Instance);
typedef fmi3Status fmi3GetFloat64TYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Float64[], size_t);
typedef fmi3Status fmi3SetFloat64TYPE(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Float64[], size_t);
typedef fmi3Status fmi3GetInt32TYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Int32[], size_t);
typedef fmi3Status fmi3SetInt32TYPE(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Int32[], size_t);
typedef fmi3Status fmi3GetBooleanTYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Boolean[], size_t);
typedef fmi3Status fmi3SetBooleanTYPE(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Boolean[], size_t);
typedef fmi3Status fmi3SetStringTYPE(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3String[], size_t);
typedef fmi3Status fmi3GetStringTYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3String[], size_t);
#define STRIDE_FMI3_ACCESSORS(T)                                                                               \
  typedef fmi3Status fmi3Get##T##TYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3##T[], size_t); \
  typedef fmi3Status fmi3Set##T##TYPE(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3##T[], size_t);
STRIDE_FMI3_ACCESSORS(Float32)
STRIDE_FMI3_ACCESSORS(Int8)
STRIDE_FMI3_ACCESSORS(UInt8)
STRIDE_FMI3_ACCESSORS(Int16)
STRIDE_FMI3_ACCESSORS(UInt16)
STRIDE_FMI3_ACCESSORS(UInt32)
STRIDE_FMI3_ACCESSORS(Int64)
STRIDE_FMI3_ACCESSORS(UInt64)
#undef STRIDE_FMI3_ACCESSORS
typedef fmi3Status fmi3GetBinaryTYPE(fmi3Instance, const fmi3ValueReference[], size_t, size_t valueSizes[], fmi3Binary[],
                                     size_t);
typedef fmi3Status fmi3SetBinaryTYPE(fmi3Instance, const fmi3ValueReference[], size_t, const size_t valueSizes[],
                                     const fmi3Binary[], size_t);
/* Structural parameters are set in configuration mode, before initialization. */
typedef fmi3Status fmi3EnterConfigurationModeTYPE(fmi3Instance);
typedef fmi3Status fmi3ExitConfigurationModeTYPE(fmi3Instance);
typedef fmi3Status fmi3GetFMUStateTYPE(fmi3Instance, fmi3FMUState*);
typedef fmi3Status fmi3SetFMUStateTYPE(fmi3Instance, fmi3FMUState);
typedef fmi3Status fmi3FreeFMUStateTYPE(fmi3Instance, fmi3FMUState*);
typedef fmi3Status fmi3DoStepTYPE(fmi3Instance, fmi3Float64 currentCommunicationPoint,
                                  fmi3Float64 communicationStepSize, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                  fmi3Boolean* eventHandlingNeeded, fmi3Boolean* terminateSimulation,
                                  fmi3Boolean* earlyReturn, fmi3Float64* lastSuccessfulTime);
/* Co-simulation with event mode (eventModeUsed): from event mode back to step mode. */
typedef fmi3Status fmi3EnterStepModeTYPE(fmi3Instance);

/* Model exchange. */
typedef fmi3Instance fmi3InstantiateModelExchangeTYPE(fmi3String instanceName, fmi3String instantiationToken,
                                                      fmi3String resourcePath, fmi3Boolean visible,
                                                      fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment,
                                                      fmi3LogMessageCallback logMessage);
typedef fmi3Status fmi3EnterEventModeTYPE(fmi3Instance);
typedef fmi3Status fmi3UpdateDiscreteStatesTYPE(fmi3Instance, fmi3Boolean* discreteStatesNeedUpdate,
                                                fmi3Boolean* terminateSimulation,
                                                fmi3Boolean* nominalsOfContinuousStatesChanged,
                                                fmi3Boolean* valuesOfContinuousStatesChanged,
                                                fmi3Boolean* nextEventTimeDefined, fmi3Float64* nextEventTime);
typedef fmi3Status fmi3EnterContinuousTimeModeTYPE(fmi3Instance);
typedef fmi3Status fmi3CompletedIntegratorStepTYPE(fmi3Instance, fmi3Boolean noSetFMUStatePriorToCurrentPoint,
                                                   fmi3Boolean* enterEventMode, fmi3Boolean* terminateSimulation);
typedef fmi3Status fmi3SetTimeTYPE(fmi3Instance, fmi3Float64 time);
typedef fmi3Status fmi3SetContinuousStatesTYPE(fmi3Instance, const fmi3Float64[], size_t);
typedef fmi3Status fmi3GetContinuousStateDerivativesTYPE(fmi3Instance, fmi3Float64[], size_t);
typedef fmi3Status fmi3GetEventIndicatorsTYPE(fmi3Instance, fmi3Float64[], size_t);
typedef fmi3Status fmi3GetContinuousStatesTYPE(fmi3Instance, fmi3Float64[], size_t);
typedef fmi3Status fmi3GetNumberOfContinuousStatesTYPE(fmi3Instance, size_t*);
typedef fmi3Status fmi3GetNumberOfEventIndicatorsTYPE(fmi3Instance, size_t*);

#ifdef __cplusplus
}
#endif

#endif
