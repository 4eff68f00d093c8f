// An FMU as the rest of the host sees it: the one door of fmi/ (as libcosim's
// model_description.hpp and fmi/glue.cpp are for its FMI code). Its variables in the host's
// terms (a value kind, a causality, whether a step can read it), its capabilities, the start
// value of an input no connection feeds, and one create(). The graph builder works through this
// alone and names no FMI type; `stride export` and `plugins describe`, which speak FMI, reach
// the model description through description().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "core/text_signal.hpp"

namespace stride::host {

namespace fmi {
struct ModelDescription;
}

// What a variable holds: a number of one of three kinds, or text (String) or bytes (Binary),
// which travel as whole values and are recorded as text columns.
enum class ValueKind { real, integer, boolean, text, binary };

struct ModelVariable {
  std::string name;
  std::vector<std::string> aliases;  // other names of it (FMI 3)
  // The FMI causality word: input, output, parameter, structuralParameter,
  // calculatedParameter, local, independent.
  std::string causality;
  ValueKind kind = ValueKind::real;
  bool array = false;  // an FMI 3 array (its size may depend on structural parameters)
  json start;          // the FMU's start value (null when it has none)
  // A number other than an input or output (a local, state, derivative, parameter) that a
  // record or connection may read like an output after each step.
  bool observable = false;
  // A text or bytes variable other than an input, recordable as text columns.
  bool text_recordable = false;
  bool is_text() const { return kind == ValueKind::text || kind == ValueKind::binary; }
};

struct ModelCapabilities {
  bool co_simulation = false, model_exchange = false;
  bool variable_step = true;       // co-simulation: the communication step may change
  bool continuous_states = false;  // model exchange then needs an integrator
};

// An element of an FMI 2 structured array ("u[2]"): element `element` (from 0) of the port
// `port` the host makes of the array.
struct ArrayElementName {
  std::string name, port;
  std::size_t element = 0;
};

class FmuModel {
 public:
  virtual ~FmuModel() = default;

  // Every variable, in the order of modelDescription.xml; variable() finds one by its name or
  // an alias.
  virtual const std::vector<ModelVariable>& variables() const = 0;
  virtual const ModelVariable* variable(const std::string& name) const = 0;
  virtual ModelCapabilities capabilities() const = 0;
  virtual std::vector<ArrayElementName> element_names() const = 0;

  // The ports of a subsystem with these parameters (arrays sized by structural parameters),
  // and the `observed` variables as outputs after the FMU's own.
  virtual std::vector<PortSpec> ports(const json& parameters = json::object(),
                                      const std::vector<std::string>& observed = {}) const = 0;
  // The value of an input port while nothing feeds it: the manifest's value for it among the
  // parameters, else the FMU's start value, else 0 (Booleans as 0 or 1).
  virtual std::vector<double> input_start(const std::string& port, const json& parameters) const = 0;

  // One instance: model exchange stepped by `integrator` when one is given, else co-simulation.
  // Throws ParameterError (a value), std::invalid_argument (no such interface) or PluginError.
  virtual std::unique_ptr<Subsystem> create(const Params& p, const std::string& instance_name,
                                            std::shared_ptr<Integrator> integrator,
                                            const std::vector<std::string>& observed, double t0) const = 0;
  // Keeps the binary an instance of that interface runs in loaded while it is held.
  virtual std::shared_ptr<const void> binary(bool model_exchange) const = 0;

  // The String and Binary variables as ports for a subsystem with these parameters (arrays
  // sized by structural parameters, inputs' start values from them): for the graph, whose node
  // declares them when it is created, and `plugins describe`.
  virtual std::vector<TextPortSpec> text_ports(const json& parameters = json::object()) const = 0;

  // The FMI view, for the stages that write or describe FMI (export, describe, SSP).
  virtual const fmi::ModelDescription& description() const = 0;
};

}  // namespace stride::host
