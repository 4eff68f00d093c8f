// What a plugin declares about itself: name, kind, version, parameters and ports.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "stride/abi.hpp"
#include "stride/log.hpp"

namespace stride {

using json = nlohmann::json;

enum class Kind { subsystem, integrator, formulation, extrapolator };

// How a subsystem plugin is advanced in time:
//  stepper   - it steps itself (Subsystem);
//  ode       - it is an OdeSystem, stepped by the integrator plugin named in the manifest;
//  multibody - it is a MultibodyModel, stepped by the formulation plugin named in the manifest.
enum class Form { stepper, ode, multibody };

// `object` (appended, so the values of the others are unchanged): any JSON object, checked by
// the plugin itself, which reports a problem by throwing ParameterError.
// `path`: a file or folder name; a relative one is resolved by the host against the folder of
// the manifest it was written in (so a manifest runs from any working directory). "" stays "".
// `table` (Params::table): rows [x, y_1, ..., y_k] with x strictly increasing, k >= 1, every row
// as long as the first; min/max bound the y values.
// `matrix` (Params::matrix): rows of numbers, at least one, all of one length; min/max bound
// every element.
// `integer_list` (Params::integers): integers; min/max bound every element.
// `object_list` (appended): a JSON array of objects, in order (a JSON object's keys have none),
// each checked by the plugin itself (ParameterError), e.g. the udp plugin's [{name, unit}, ...].
enum class ParamType {
  real,
  integer,
  boolean,
  string,
  real_list,
  object,
  path,
  table,
  matrix,
  integer_list,
  string_list,
  object_list
};

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::real;
  json default_value;  // null: the parameter is required
  std::string unit;    // SI, "1" for dimensionless, "" for non-numeric; read by UDUNITS-2 at load
  std::optional<double> min, max;     // inclusive bounds (numbers and list elements)
  std::vector<std::string> choices;   // allowed values of a string parameter
  std::string doc;
  // Tables: the unit of x, then of each y column (so also the number of columns the host
  // requires); empty: any number of y columns, unit `unit` for all.
  std::vector<std::string> column_units;
};

// A table parameter (ParamType::table): y columns over strictly increasing x.
struct Table {
  std::vector<double> x;
  std::vector<std::vector<double>> y;  // y[c][i]: column c at x[i]
  std::size_t columns() const { return y.size(); }
  // Column c at xq, linear between rows, the first or last value beyond the ends. Does not
  // allocate.
  double operator()(double xq, std::size_t c = 0) const {
    const std::vector<double>& v = y.at(c);
    if (x.empty()) throw std::out_of_range("empty table");
    if (!(xq > x.front())) return v.front();
    if (!(xq < x.back())) return v.back();
    const std::size_t i = static_cast<std::size_t>(std::upper_bound(x.begin(), x.end(), xq) - x.begin());
    const double w = (xq - x[i - 1]) / (x[i] - x[i - 1]);
    return v[i - 1] + w * (v[i] - v[i - 1]);
  }
};

enum class Direction { input, output };

// Power-bond role of a port (Rahikainen 2020 §2.3.2). A subsystem's effort input pairs with
// its flow output of the same bond name (and a flow input with an effort output): the power
// entering the subsystem through the bond is u_effort·y_flow, or -y_effort·u_flow.
enum class BondRole { none, effort, flow };

struct PortSpec {
  std::string name;
  Direction direction = Direction::output;
  std::size_t size = 1;
  std::string unit;  // SI unit (UDUNITS-2 syntax); connections convert between units of one quantity
  // Outputs only: the output at time t depends algebraically on inputs at time t.
  bool feedthrough = false;
  BondRole role = BondRole::none;
  std::string bond;  // name of the power bond, unique within the subsystem
  // Outputs only: the name of an input this output passes on (a filter, a sensor, a delay on a
  // force or a velocity). Power bonds pair across such a subsystem, and `validate` reports the
  // communication delay the extra connection adds. Sizes must match.
  std::string through;
  std::string doc;
  std::vector<std::string> elements;  // optional element names (CSV: <sub>.<port>.<element>)
};

inline PortSpec input(std::string name, std::size_t size, std::string unit, std::string doc = {}) {
  PortSpec p;
  p.name = std::move(name);
  p.direction = Direction::input;
  p.size = size;
  p.unit = std::move(unit);
  p.doc = std::move(doc);
  return p;
}
inline PortSpec output(std::string name, std::size_t size, std::string unit, std::string doc = {},
                       bool feedthrough = false) {
  PortSpec p;
  p.name = std::move(name);
  p.direction = Direction::output;
  p.size = size;
  p.unit = std::move(unit);
  p.doc = std::move(doc);
  p.feedthrough = feedthrough;
  return p;
}
inline PortSpec bonded(PortSpec p, BondRole role, std::string bond) {
  p.role = role;
  p.bond = std::move(bond);
  return p;
}
// An output that passes the input `input` on (see PortSpec::through).
inline PortSpec passing(PortSpec p, std::string input) {
  p.through = std::move(input);
  return p;
}

struct PluginInfo {
  std::string name;  // unique across all loaded plugins
  Kind kind = Kind::subsystem;
  Form form = Form::stepper;  // subsystems only
  std::string version;
  std::string description;  // one line
  std::vector<ParamSpec> parameters;
  // A sweep runs its points one after another in long-lived worker processes: objects of a
  // run are destroyed before the next run creates its own, in the same process. A plugin may
  // keep globals only if they are constant or a cache that any run may see (a table filled
  // once, the same for every parameter value). A plugin that keeps anything else between runs
  // (a counter, a cache of the last parameters, a library with global state) sets this: every
  // run that uses it then gets a process of its own, as with `stride run`.
  bool process_per_run = false;
};

// Parameter values after the host has validated them against the ParamSpecs and filled in
// defaults: the getters cannot fail for a declared parameter of the right type.
class Params {
 public:
  Params() = default;
  explicit Params(json values) : values_(std::move(values)) {}
  double real(std::string_view n) const { return at(n).get<double>(); }
  long integer(std::string_view n) const { return at(n).get<long>(); }
  bool boolean(std::string_view n) const { return at(n).get<bool>(); }
  std::string string(std::string_view n) const { return at(n).get<std::string>(); }
  std::vector<double> reals(std::string_view n) const { return at(n).get<std::vector<double>>(); }
  std::vector<long> integers(std::string_view n) const { return at(n).get<std::vector<long>>(); }
  Eigen::MatrixXd matrix(std::string_view n) const {
    const json& rows = at(n);
    const auto r = static_cast<Eigen::Index>(rows.size());
    const auto c = static_cast<Eigen::Index>(rows.empty() ? 0 : rows[0].size());
    Eigen::MatrixXd m(r, c);
    for (Eigen::Index i = 0; i < r; ++i)
      for (Eigen::Index j = 0; j < c; ++j)
        m(i, j) = rows[static_cast<std::size_t>(i)].at(static_cast<std::size_t>(j)).get<double>();
    return m;
  }
  Table table(std::string_view n) const {
    const json& rows = at(n);
    Table t;
    const std::size_t k = rows.empty() ? 0 : rows[0].size() - 1;
    t.y.assign(k, {});
    for (const json& row : rows) {
      t.x.push_back(row.at(0).get<double>());
      for (std::size_t c = 0; c < k; ++c) t.y[c].push_back(row.at(c + 1).get<double>());
    }
    return t;
  }
  const json& values() const { return values_; }

 private:
  const json& at(std::string_view n) const {
    auto it = values_.find(std::string(n));
    if (it == values_.end()) throw std::out_of_range("undeclared parameter '" + std::string(n) + "'");
    return *it;
  }
  json values_ = json::object();
};

// Input values seen by a subsystem, supplied by the host. Port index k is the k-th input port
// in the order the subsystem declared them. at() may be called for any time the subsystem is
// evaluating (inside or at the ends of its current step); the connection's extrapolator
// produces the value. The span stays valid until the next call for the same port.
//
// at() is inline: when the host already knows the port's value for an interval of times (a
// held sample, or the value just evaluated at that very time) it is returned without a call
// into the host, so reading an input costs a comparison and a load.
class Inputs {
 public:
  virtual ~Inputs() = default;
  std::span<const double> at(std::size_t port, double t) {
    if (port < known_count_) {
      const Known& k = known_[port];
      if (t >= k.from && t <= k.to) return {k.data, k.size};
    }
    return evaluate(port, t);
  }
  // Whether anything reads output element `element` (the outputs' elements in port order) in
  // this run: a connection, a power bond, a bound, results.csv, or a caller of the host's API
  // (which may read any). An output nobody reads need not be computed: its value is then left
  // as it was (finite, as the host checks). True for every element unless the host says
  // otherwise.
  bool output_read(std::size_t element) const { return element >= outputs_read_count_ || outputs_read_[element]; }

 protected:
  // The value of one input port for every time in [from, to]; empty when from > to.
  struct Known {
    double from = std::numeric_limits<double>::infinity();
    double to = -std::numeric_limits<double>::infinity();
    const double* data = nullptr;
    std::size_t size = 0;
  };
  // The host's table of known values, one per input port; it outlives every read.
  void set_known(Known* table, std::size_t count) {
    known_ = table;
    known_count_ = count;
  }
  // The value at t when it is not known already.
  virtual std::span<const double> evaluate(std::size_t port, double t) = 0;
  // The host's table of which output elements are read (output_read); none: all are.
  void set_outputs_read(const bool* read, std::size_t count) {
    outputs_read_ = read;
    outputs_read_count_ = count;
  }

 private:
  Known* known_ = nullptr;
  std::size_t known_count_ = 0;
  const bool* outputs_read_ = nullptr;
  std::size_t outputs_read_count_ = 0;
};

// What a component or formulation says about the accuracy of its answer so far, against bounds
// it checks itself (constraint residuals, an error estimate). A run that ends with any
// subsystem's answer outside them ends with status "inaccurate" (exit 1), never "completed".
struct Accuracy {
  bool within = true;
  // When not within: what was bounded, the largest value reached, where and when, the bound
  // and how to stay within it, in one sentence.
  std::string reason;
};

// Behaviour shared by everything that has ports. Messages: LogSource (log.hpp).
class Component : public LogSource {
 public:
  // Ports, declared once; they may depend on the parameters but never change afterwards.
  virtual std::vector<PortSpec> ports() const = 0;
  // Called by the host once, before anything else; the Inputs outlive the component.
  // Wrappers that own another component override it to bind that one too.
  virtual void bind(Inputs& inputs) { inputs_ = &inputs; }
  // Counters for summary.json (steps, evaluations, iterations, ...).
  virtual json statistics() const { return json::object(); }
  // Energy stored in the component (J) for whole-system balances; NaN when not modelled.
  virtual double energy() const { return std::numeric_limits<double>::quiet_NaN(); }
  // Whether the answer so far is within the bounds the component checks; asked by the host
  // after the last step (and whenever it writes a summary). Must not throw. Default: nothing
  // is checked.
  virtual Accuracy accuracy() const { return {}; }

 protected:
  Inputs& inputs() const {
    if (!inputs_) throw std::logic_error("component used before the host bound its inputs");
    return *inputs_;
  }
  // Inputs::output_read: whether anything reads this output element in this run (true before
  // the host bound the inputs).
  bool output_read(std::size_t element) const { return !inputs_ || inputs_->output_read(element); }

 private:
  Inputs* inputs_ = nullptr;
};

// A snapshot of a component's state, opaque to the host: what save_state() stores and
// restore_state() puts back (Subsystem, OdeSystem). Most components keep a copy of a value:
// SavedValue<T> with save_value() / saved_value() below.
class SavedState {
 public:
  virtual ~SavedState() = default;
};

template <class T>
class SavedValue final : public SavedState {
 public:
  explicit SavedValue(T v) : value(std::move(v)) {}
  T value;
};

// Stores a copy of `v` in `slot`, reusing the slot's memory when it holds a SavedValue<T>.
template <class T>
void save_value(std::unique_ptr<SavedState>& slot, const T& v) {
  if (auto* s = dynamic_cast<SavedValue<T>*>(slot.get())) s->value = v;
  else slot = std::make_unique<SavedValue<T>>(v);
}
// The value save_value<T>() stored (std::bad_cast when the snapshot is of another type).
template <class T>
const T& saved_value(const SavedState& s) {
  return dynamic_cast<const SavedValue<T>&>(s).value;
}

// Unrecoverable failure of a step (Newton did not converge, state left its domain, ...).
// The host ends the run with status "diverged" and the message.
class StepFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What a subsystem models has come to its end (an FMU that asks to terminate the simulation):
// thrown by step() (or initialize()) when called at the time the subsystem reached, after it
// returned that time from its previous step. The host ends the run there with status
// "completed", the message and that time in summary.json, every row up to it kept.
class EndOfSimulation : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A problem in a plugin's parameters found when the plugin is created: `pointer` is the JSON
// pointer of the offending value relative to the plugin's parameters object (or, when `file` is
// not empty, inside that file), the message says what was expected and what was found. The
// host reports it with the manifest file and the full pointer.
class ParameterError : public std::invalid_argument {
 public:
  ParameterError(std::string pointer, const std::string& message, std::string file = {})
      : std::invalid_argument(message), pointer_(std::move(pointer)), file_(std::move(file)) {}
  const std::string& pointer() const { return pointer_; }
  const std::string& file() const { return file_; }

 private:
  std::string pointer_, file_;
};

class Subsystem;
class OdeSystem;
class Integrator;
class Extrapolator;
class MultibodyModel;
class Formulation;

// A plugin library's one object. Implement info() and the create function matching the kind
// (and form); the others are never called. The host calls info() right after loading and then
// any number of create functions, from one thread at a time; every object created is
// independent of the others (a run may create several of one plugin), and of the objects of
// earlier runs in the same process (see PluginInfo::process_per_run).
class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual const PluginInfo& info() const = 0;
  virtual std::unique_ptr<Subsystem> create_subsystem(const Params&) const { return nullptr; }
  virtual std::unique_ptr<OdeSystem> create_ode(const Params&) const { return nullptr; }
  virtual std::unique_ptr<MultibodyModel> create_model(const Params&) const { return nullptr; }
  virtual std::unique_ptr<Integrator> create_integrator(const Params&) const { return nullptr; }
  virtual std::unique_ptr<Formulation> create_formulation(const Params&) const { return nullptr; }
  virtual std::unique_ptr<Extrapolator> create_extrapolator(const Params&) const { return nullptr; }
  // Whether the class behind this plugin is of the kind (and, for subsystems, the form) that
  // info() declares; the host refuses a plugin at load when not. PluginFor answers from the
  // class's base; a hand-written Plugin that cannot tell answers true.
  virtual bool implements(Kind /*kind*/, Form /*form*/) const { return true; }
};

inline const char* to_string(Kind k) {
  switch (k) {
    case Kind::subsystem: return "subsystem";
    case Kind::integrator: return "integrator";
    case Kind::formulation: return "formulation";
    case Kind::extrapolator: return "extrapolator";
  }
  return "?";
}
inline const char* to_string(Form f) {
  switch (f) {
    case Form::stepper: return "stepper";
    case Form::ode: return "ode";
    case Form::multibody: return "multibody";
  }
  return "?";
}
inline const char* to_string(ParamType t) {
  switch (t) {
    case ParamType::real: return "real";
    case ParamType::integer: return "integer";
    case ParamType::boolean: return "boolean";
    case ParamType::string: return "string";
    case ParamType::real_list: return "real list";
    case ParamType::object: return "object";
    case ParamType::path: return "path";
    case ParamType::table: return "table";
    case ParamType::matrix: return "matrix";
    case ParamType::integer_list: return "integer list";
    case ParamType::string_list: return "string list";
    case ParamType::object_list: return "object list";
  }
  return "?";
}
inline const char* to_string(BondRole r) {
  switch (r) {
    case BondRole::none: return "none";
    case BondRole::effort: return "effort";
    case BondRole::flow: return "flow";
  }
  return "?";
}

}  // namespace stride
