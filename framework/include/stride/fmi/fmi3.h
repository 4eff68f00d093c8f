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
typedef fmi3Status fmi3GetBinaryTYPE(fmi3Instance, const fmi3ValueReference[], size_t, size_t valueSizes[],
                                     fmi3Binary[], size_t);
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
                                                      fmi3Boolean loggingOn,
                                                      fmi3InstanceEnvironment instanceEnvironment,
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

/* The rest of the interface (FMI 3.0 section 2.2), which Stride's exported FMUs define to
 * answer with an error: serialized FMU state, partial derivatives, dependencies, clocks,
 * discrete states, output derivatives and scheduled execution. */
typedef fmi3Boolean fmi3Clock;
typedef enum { fmi3Independent, fmi3Constant, fmi3Fixed, fmi3Tunable, fmi3Discrete, fmi3Dependent } fmi3DependencyKind;
typedef enum { fmi3IntervalNotYetKnown, fmi3IntervalUnchanged, fmi3IntervalChanged } fmi3IntervalQualifier;
typedef void (*fmi3ClockUpdateCallback)(fmi3InstanceEnvironment);
typedef void (*fmi3LockPreemptionCallback)(void);
typedef void (*fmi3UnlockPreemptionCallback)(void);
typedef fmi3Instance fmi3InstantiateScheduledExecutionTYPE(
    fmi3String instanceName, fmi3String instantiationToken, fmi3String resourcePath, fmi3Boolean visible,
    fmi3Boolean loggingOn, fmi3InstanceEnvironment instanceEnvironment, fmi3LogMessageCallback logMessage,
    fmi3ClockUpdateCallback clockUpdate, fmi3LockPreemptionCallback lockPreemption,
    fmi3UnlockPreemptionCallback unlockPreemption);
typedef fmi3Status fmi3SetDebugLoggingTYPE(fmi3Instance, fmi3Boolean loggingOn, size_t nCategories,
                                           const fmi3String categories[]);
typedef fmi3Status fmi3ResetTYPE(fmi3Instance);
typedef fmi3Status fmi3GetClockTYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Clock[]);
typedef fmi3Status fmi3SetClockTYPE(fmi3Instance, const fmi3ValueReference[], size_t, const fmi3Clock[]);
typedef fmi3Status fmi3GetNumberOfVariableDependenciesTYPE(fmi3Instance, fmi3ValueReference, size_t* nDependencies);
typedef fmi3Status fmi3GetVariableDependenciesTYPE(fmi3Instance, fmi3ValueReference dependent,
                                                   size_t elementIndicesOfDependent[],
                                                   fmi3ValueReference independents[],
                                                   size_t elementIndicesOfIndependents[],
                                                   fmi3DependencyKind dependencyKinds[], size_t nDependencies);
typedef fmi3Status fmi3SerializedFMUStateSizeTYPE(fmi3Instance, fmi3FMUState, size_t* size);
typedef fmi3Status fmi3SerializeFMUStateTYPE(fmi3Instance, fmi3FMUState, fmi3Byte serializedState[], size_t size);
typedef fmi3Status fmi3DeserializeFMUStateTYPE(fmi3Instance, const fmi3Byte serializedState[], size_t size,
                                               fmi3FMUState*);
typedef fmi3Status fmi3GetDirectionalDerivativeTYPE(fmi3Instance, const fmi3ValueReference unknowns[], size_t nUnknowns,
                                                    const fmi3ValueReference knowns[], size_t nKnowns,
                                                    const fmi3Float64 seed[], size_t nSeed, fmi3Float64 sensitivity[],
                                                    size_t nSensitivity);
typedef fmi3GetDirectionalDerivativeTYPE fmi3GetAdjointDerivativeTYPE;
typedef fmi3Status fmi3GetIntervalDecimalTYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Float64 intervals[],
                                              fmi3IntervalQualifier qualifiers[]);
typedef fmi3Status fmi3GetIntervalFractionTYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3UInt64 counters[],
                                               fmi3UInt64 resolutions[], fmi3IntervalQualifier qualifiers[]);
typedef fmi3Status fmi3GetShiftDecimalTYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3Float64 shifts[]);
typedef fmi3Status fmi3GetShiftFractionTYPE(fmi3Instance, const fmi3ValueReference[], size_t, fmi3UInt64 counters[],
                                            fmi3UInt64 resolutions[]);
typedef fmi3Status fmi3SetIntervalDecimalTYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                              const fmi3Float64 intervals[]);
typedef fmi3Status fmi3SetIntervalFractionTYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                               const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]);
typedef fmi3Status fmi3SetShiftDecimalTYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                           const fmi3Float64 shifts[]);
typedef fmi3Status fmi3SetShiftFractionTYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                            const fmi3UInt64 counters[], const fmi3UInt64 resolutions[]);
typedef fmi3Status fmi3EvaluateDiscreteStatesTYPE(fmi3Instance);
typedef fmi3Status fmi3GetNominalsOfContinuousStatesTYPE(fmi3Instance, fmi3Float64 nominals[], size_t);
typedef fmi3Status fmi3GetOutputDerivativesTYPE(fmi3Instance, const fmi3ValueReference[], size_t,
                                                const fmi3Int32 orders[], fmi3Float64 values[], size_t nValues);
typedef fmi3Status fmi3ActivateModelPartitionTYPE(fmi3Instance, fmi3ValueReference clockReference,
                                                  fmi3Float64 activationTime);

/* Every function of the FMI 3.0 interface by section of the standard (fmi3FunctionTypes.h:
 * common functions, model exchange, co-simulation, scheduled execution), X(name) each: an FMU's
 * binary exports the common functions and those of each interface it declares, even those it
 * only answers with an error (the rule check of exported FMUs and their tests read these). */
/* clang-format off */
#define STRIDE_FMI3_COMMON_FUNCTIONS(X)                                                                     \
  X(fmi3GetVersion) X(fmi3SetDebugLogging) X(fmi3InstantiateModelExchange) X(fmi3InstantiateCoSimulation)   \
  X(fmi3InstantiateScheduledExecution) X(fmi3FreeInstance) X(fmi3EnterInitializationMode)                  \
  X(fmi3ExitInitializationMode) X(fmi3EnterEventMode) X(fmi3Terminate) X(fmi3Reset) X(fmi3GetFloat32)       \
  X(fmi3GetFloat64) X(fmi3GetInt8) X(fmi3GetUInt8) X(fmi3GetInt16) X(fmi3GetUInt16) X(fmi3GetInt32)         \
  X(fmi3GetUInt32) X(fmi3GetInt64) X(fmi3GetUInt64) X(fmi3GetBoolean) X(fmi3GetString) X(fmi3GetBinary)     \
  X(fmi3GetClock) X(fmi3SetFloat32) X(fmi3SetFloat64) X(fmi3SetInt8) X(fmi3SetUInt8) X(fmi3SetInt16)        \
  X(fmi3SetUInt16) X(fmi3SetInt32) X(fmi3SetUInt32) X(fmi3SetInt64) X(fmi3SetUInt64) X(fmi3SetBoolean)      \
  X(fmi3SetString) X(fmi3SetBinary) X(fmi3SetClock) X(fmi3GetNumberOfVariableDependencies)                 \
  X(fmi3GetVariableDependencies) X(fmi3GetFMUState) X(fmi3SetFMUState) X(fmi3FreeFMUState)                 \
  X(fmi3SerializedFMUStateSize) X(fmi3SerializeFMUState) X(fmi3DeserializeFMUState)                        \
  X(fmi3GetDirectionalDerivative) X(fmi3GetAdjointDerivative) X(fmi3EnterConfigurationMode)                \
  X(fmi3ExitConfigurationMode) X(fmi3GetIntervalDecimal) X(fmi3GetIntervalFraction) X(fmi3GetShiftDecimal) \
  X(fmi3GetShiftFraction) X(fmi3SetIntervalDecimal) X(fmi3SetIntervalFraction) X(fmi3SetShiftDecimal)      \
  X(fmi3SetShiftFraction) X(fmi3EvaluateDiscreteStates) X(fmi3UpdateDiscreteStates)
#define STRIDE_FMI3_ME_FUNCTIONS(X)                                                                          \
  X(fmi3EnterContinuousTimeMode) X(fmi3CompletedIntegratorStep) X(fmi3SetTime) X(fmi3SetContinuousStates)   \
  X(fmi3GetContinuousStateDerivatives) X(fmi3GetEventIndicators) X(fmi3GetContinuousStates)                 \
  X(fmi3GetNominalsOfContinuousStates) X(fmi3GetNumberOfEventIndicators) X(fmi3GetNumberOfContinuousStates)
#define STRIDE_FMI3_CS_FUNCTIONS(X) X(fmi3EnterStepMode) X(fmi3GetOutputDerivatives) X(fmi3DoStep)
#define STRIDE_FMI3_SE_FUNCTIONS(X) X(fmi3ActivateModelPartition)
/* clang-format on */

#ifdef __cplusplus
}
#endif

#endif
