// FMI 1.0 instances, co-simulation or model exchange, behind Instance (instance.hpp): the FMI 1.0
// call sequence mapped onto the calls of the co-simulation and model-exchange algorithms.
//
// Co-simulation: fmiInstantiateSlave (the unpacked folder as fmuLocation, the MIME type, no
// timeout, not visible, not interactive), the parameters and start values, fmiInitializeSlave(t0,
// no stop time) in start(); fmiDoStep(t, h, newStep = true) per step (fmiDiscard: the step ends at
// fmiLastSuccessfulTime; fmiPending, an asynchronous step, is refused); fmiTerminateSlave and
// fmiFreeSlaveInstance when the instance ends. FMI 1.0 has no initialization mode to hold open:
// an FMU with inputs is initialized in start() and gets its inputs before each step.
// Model exchange: fmiInstantiateModel, the parameters and start values, fmiSetTime(t0),
// fmiInitialize(tolerance of the default experiment, &eventInfo) in start(); the event
// information of fmiInitialize is the first round of event iteration, the others are
// fmiEventUpdate(intermediateResults = false) until iterationConverged; FMI 1.0 has no event or
// continuous-time mode to enter; fmiCompletedIntegratorStep's callEventUpdate is a step event;
// fmiTerminate and fmiFreeModelInstance when the instance ends. After fmiError neither terminate
// function is called, after fmiFatal nothing.
//
// The FMI 1.0 logger has no environment pointer: messages are routed by the component (and,
// while the FMU instantiates, by the thread) to the instance's LogSink.
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>

#include "fmi/instance.hpp"
#include "fmi/values.hpp"

namespace stride::host::fmi {

namespace {

const char* const kStatusName1[] = {"fmiOK", "fmiWarning", "fmiDiscard", "fmiError", "fmiFatal", "fmiPending"};
constexpr int kPending = 5;  // FMI 1.0 co-simulation's fmiPending (not in the combined header's enum)

// The log sinks of the live components, and the one of an instantiation under way on this thread.
std::mutex sinks_mutex;
std::map<fmi1Component, LogSink*>& sinks() {
  static std::map<fmi1Component, LogSink*> m;
  return m;
}
thread_local LogSink* instantiating = nullptr;

extern "C" void stride_fmi1_logger(fmi1Component c, fmi1String instance, fmi1Status status, fmi1String category,
                                   fmi1String message, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, message);
  std::vsnprintf(buf, sizeof buf, message ? message : "", ap);
  va_end(ap);
  LogSink* sink = nullptr;
  {
    std::lock_guard<std::mutex> lock(sinks_mutex);
    auto it = sinks().find(c);
    if (it != sinks().end()) sink = it->second;
  }
  if (!sink) sink = instantiating;
  if (sink) sink->log(int(status), category, buf);
  else std::cerr << "fmu \"" << (instance ? instance : "") << "\": " << buf << "\n";
}

class Fmi1Instance final : public Instance {
 public:
  Fmi1Instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& params, const std::string& name)
      : Instance(std::move(fmu), model_exchange, params, name), api_(fmu_->api1) {
    callbacks_ = fmi1CallbackFunctions{stride_fmi1_logger, std::calloc, std::free, nullptr};
    location_ = "file://" + fmu_->folder->path().string();
    instantiate();
  }
  ~Fmi1Instance() override { release(); }

  void start(double t0, bool) override {
    if (started_) {
      release();
      instantiate();
    }
    started_ = true;
    set_parameters(false, t0);
    if (me_) {
      check(api_.set_time(c_, t0), "fmiSetTime", t0);
      const auto tolerance = fmu_->md.experiment.tolerance;
      initial_ = fmi1EventInfo{};
      check(api_.initialize(c_, tolerance ? fmi1True : fmi1False, tolerance.value_or(0.0), &initial_), "fmiInitialize",
            t0);
      initial_pending_ = true;
    } else {
      check(api_.initialize_slave(c_, t0, fmi1False, 0.0), "fmiInitializeSlave", t0);
    }
    initialized_ = true;
  }
  void end_initialization(double) override {}  // initialized in start()

  void set_numbers(const Io& io, std::span<const double> u, double t) override {
    const fmi1ValueReference vr = io.vr;
    if (!io.vrs.empty()) {  // a structured array: Real elements
      check(api_.set_real(c_, io.vrs.data(), io.vrs.size(), u.data()), "fmiSetReal", t);
      return;
    }
    switch (io.type) {
      case VarType::float64: check(api_.set_real(c_, &vr, 1, u.data()), "fmiSetReal", t); break;
      case VarType::int32:
      case VarType::enumeration: {
        const fmi1Integer i = to_integer<fmi1Integer>(u[0], fmu_->label, io.name());
        check(api_.set_integer(c_, &vr, 1, &i), "fmiSetInteger", t);
        break;
      }
      case VarType::boolean: {
        const fmi1Boolean b = u[0] > 0.5 ? fmi1True : fmi1False;
        check(api_.set_boolean(c_, &vr, 1, &b), "fmiSetBoolean", t);
        break;
      }
      default: throw PluginError(fmu_->label, "variable \"" + io.name() + "\" is not a number");
    }
  }
  void get_numbers(const Io& io, std::span<double> y, double t) override {
    const fmi1ValueReference vr = io.vr;
    if (!io.vrs.empty()) {
      check(api_.get_real(c_, io.vrs.data(), io.vrs.size(), y.data()), "fmiGetReal", t);
      return;
    }
    switch (io.type) {
      case VarType::float64: check(api_.get_real(c_, &vr, 1, y.data()), "fmiGetReal", t); break;
      case VarType::int32:
      case VarType::enumeration: {
        fmi1Integer i = 0;
        check(api_.get_integer(c_, &vr, 1, &i), "fmiGetInteger", t);
        y[0] = double(i);
        break;
      }
      case VarType::boolean: {
        fmi1Boolean b = fmi1False;
        check(api_.get_boolean(c_, &vr, 1, &b), "fmiGetBoolean", t);
        y[0] = b ? 1.0 : 0.0;
        break;
      }
      default: throw PluginError(fmu_->label, "variable \"" + io.name() + "\" is not a number");
    }
  }
  std::vector<std::string> get_strings(const Io& io, double t) override {
    if (!api_.get_string)
      throw PluginError(fmu_->label, "the binary lacks fmiGetString, needed to read \"" + io.name() + "\"");
    const fmi1ValueReference vr = io.vr;
    fmi1String s = nullptr;
    check(api_.get_string(c_, &vr, 1, &s), "fmiGetString", t);
    return {s ? std::string(s) : std::string()};
  }
  std::vector<std::vector<std::uint8_t>> get_binaries(const Io& io, double) override {
    throw PluginError(fmu_->label, "variable \"" + io.name() + "\": FMI 1.0 has no Binary variables");
  }
  void set_texts(const Io& io, const std::vector<std::string>& values, double t) override {
    if (io.type != VarType::string || values.size() != 1)
      throw PluginError(fmu_->label, "variable \"" + io.name() + "\" is not a scalar String");
    const fmi1ValueReference vr = io.vr;
    const fmi1String x = values.front().c_str();
    check(api_.set_string(c_, &vr, 1, &x), "fmiSetString", t);
  }

  CsStep do_step(double t, double h) override {
    const fmi1Status s = check(api_.do_step(c_, t, h, fmi1True), "fmiDoStep", t);
    if (int(s) == kPending)
      throw PluginError(fmu_->label, "fmiDoStep returned fmiPending (asynchronous steps are not supported)");
    if (s != fmi1Discard) return {t + h, false, false};
    // The FMU stopped early and reports how far it came (a shorter step is within "at most h").
    fmi1Real reached = t;
    if (api_.get_real_status) check(api_.get_real_status(c_, fmi1LastSuccessfulTime, &reached), "fmiGetRealStatus", t);
    return {reached, true, false};
  }
  const char* do_step_name() const override { return "fmiDoStep"; }
  void enter_step_mode(double) override {}  // FMI 1.0 has no event mode in co-simulation
  const char* last_time_name() const override { return "fmiLastSuccessfulTime"; }

  void set_time(double t) override { check(api_.set_time(c_, t), "fmiSetTime", t); }
  void set_states(std::span<const double> x, double t) override {
    check(api_.set_states(c_, x.data(), x.size()), "fmiSetContinuousStates", t);
  }
  void derivatives(std::span<double> dx, double t) override {
    check(api_.get_derivatives(c_, dx.data(), dx.size()), "fmiGetDerivatives", t);
  }
  void indicators(std::span<double> z, double t) override {
    check(api_.get_event_indicators(c_, z.data(), z.size()), "fmiGetEventIndicators", t);
  }
  void states(std::span<double> x, double t) override {
    check(api_.get_states(c_, x.data(), x.size()), "fmiGetContinuousStates", t);
  }
  void completed_step(double t, bool& enter, bool& terminate) override {
    fmi1Boolean call_event_update = fmi1False;
    check(api_.completed_integrator_step(c_, &call_event_update), "fmiCompletedIntegratorStep", t);
    enter = call_event_update != fmi1False, terminate = false;
  }
  void enter_event_mode(double) override {}  // FMI 1.0: events are handled by fmiEventUpdate alone
  // The first round after initialization is fmiInitialize's own when its iteration converged.
  Discrete update_discrete(double t) override {
    fmi1EventInfo info{};
    if (initial_pending_ && initial_.iterationConverged) info = initial_;
    else check(api_.event_update(c_, fmi1False, &info), "fmiEventUpdate", t);
    initial_pending_ = false;
    return {info.iterationConverged == fmi1False, info.terminateSimulation != fmi1False,
            info.stateValuesChanged != fmi1False, info.upcomingTimeEvent != fmi1False, info.nextEventTime};
  }
  void enter_continuous_time_mode(double) override {}
  std::size_t reported_states() override { return shape_.states; }
  std::size_t reported_indicators() override { return shape_.indicators; }

  void save(FmuState&, double) override { throw PluginError(fmu_->label, "FMI 1.0 FMUs cannot save their state"); }
  void restore(const FmuState&, double) override {
    throw PluginError(fmu_->label, "FMI 1.0 FMUs cannot restore a state");
  }

 private:
  // Throws on fmiError / fmiFatal with the FMU's own messages; returns the status otherwise.
  fmi1Status check(fmi1Status s, const char* fn, double t) {
    const int k = int(s);
    if (k == fmi1Error || k == fmi1Fatal || k < fmi1OK || k > kPending) {
      failed_ = true;
      if (k == fmi1Fatal) fatal_ = true;  // no call after fmiFatal
      throw PluginError(fmu_->label,
                        std::string(fn) + " returned " +
                            (k >= 0 && k <= kPending ? std::string(kStatusName1[k]) : "status " + std::to_string(k)) +
                            " at t = " + fmt_time(t) + log_.tail());
    }
    return s;
  }
  void instantiate() {
    const auto& md = fmu_->md;
    instantiating = &log_;
    if (me_) c_ = api_.instantiate_model(log_.instance.c_str(), md.token.c_str(), callbacks_, fmi1False);
    else
      c_ = api_.instantiate_slave(log_.instance.c_str(), md.token.c_str(), location_.c_str(), md.cs_mime_type.c_str(),
                                  0.0, fmi1False, fmi1False, callbacks_, fmi1False);
    instantiating = nullptr;
    const char* fn = me_ ? "fmiInstantiateModel" : "fmiInstantiateSlave";
    if (!c_)
      throw PluginError(fmu_->label,
                        std::string(fn) + " returned NULL (the FMU refused to create an instance)" + log_.tail());
    std::lock_guard<std::mutex> lock(sinks_mutex);
    sinks()[c_] = &log_;
    fatal_ = failed_ = initialized_ = false;
  }
  void release() noexcept {
    if (!c_) return;
    if (!fatal_) {
      if (initialized_ && !failed_) me_ ? void(api_.terminate(c_)) : void(api_.terminate_slave(c_));
      me_ ? api_.free_model(c_) : api_.free_slave(c_);
    }
    std::lock_guard<std::mutex> lock(sinks_mutex);
    sinks().erase(c_);
    c_ = nullptr;
  }
  // A parameter or start value; a negated alias is given the negated value.
  void set_value(const Variable& v, std::size_t, const json& value, double t) override {
    const fmi1ValueReference vr = v.value_reference;
    switch (v.type) {
      case VarType::float64: {
        const fmi1Real x = v.negated ? -value.get<double>() : value.get<double>();
        check(api_.set_real(c_, &vr, 1, &x), "fmiSetReal", t);
        break;
      }
      case VarType::boolean: {
        const fmi1Boolean x = json_values<bool>(value, 1)[0] != v.negated ? fmi1True : fmi1False;
        check(api_.set_boolean(c_, &vr, 1, &x), "fmiSetBoolean", t);
        break;
      }
      case VarType::string: {
        const std::string text = value.get<std::string>();
        const fmi1String x = text.c_str();
        check(api_.set_string(c_, &vr, 1, &x), "fmiSetString", t);
        break;
      }
      default: {
        const fmi1Integer x = fmi1Integer(v.negated ? -value.get<long long>() : value.get<long long>());
        check(api_.set_integer(c_, &vr, 1, &x), "fmiSetInteger", t);
        break;
      }
    }
  }

  const Fmi1Api& api_;
  fmi1CallbackFunctions callbacks_{};
  std::string location_;
  fmi1Component c_ = nullptr;
  fmi1EventInfo initial_{};  // fmiInitialize's event information
  bool initial_pending_ = false, initialized_ = false, failed_ = false;
};

}  // namespace

std::unique_ptr<Instance> make_fmi1_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name) {
  return std::make_unique<Fmi1Instance>(std::move(fmu), model_exchange, p, name);
}

}  // namespace stride::host::fmi
