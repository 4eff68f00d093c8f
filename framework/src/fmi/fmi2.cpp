// FMI 2.0 instances, co-simulation or model exchange, behind Instance (instance.hpp).
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>

#include "fmi/instance.hpp"
#include "fmi/values.hpp"

namespace stride::host::fmi {

namespace {

const char* const kStatusName2[] = {"fmi2OK", "fmi2Warning", "fmi2Discard", "fmi2Error", "fmi2Fatal", "fmi2Pending"};

extern "C" void stride_fmi2_logger(fmi2ComponentEnvironment env, fmi2String, fmi2Status status, fmi2String category,
                                   fmi2String message, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, message);
  std::vsnprintf(buf, sizeof buf, message ? message : "", ap);
  va_end(ap);
  if (env) static_cast<LogSink*>(env)->log(int(status), category, buf);
}

class Fmi2Instance final : public Instance {
 public:
  Fmi2Instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& params, const std::string& name)
      : Instance(std::move(fmu), model_exchange, params, name), api_(me_ ? fmu_->me2 : fmu_->cs2) {
    callbacks_ = fmi2CallbackFunctions{stride_fmi2_logger, std::calloc, std::free, nullptr, &log_};
    resources_ = "file://" + (fmu_->folder->path() / "resources").string();
    instantiate();
  }
  ~Fmi2Instance() override { release(); }

  void start(double t0, bool leave_initialization) override {
    if (started_) {
      release();
      instantiate();
    }
    started_ = true;
    const auto tolerance = fmu_->md.experiment.tolerance;  // the FMU's own solver's (co-simulation)
    check(api_.setup_experiment(c_, tolerance ? fmi2True : fmi2False, tolerance.value_or(0.0), t0, fmi2False, 0.0),
          "fmi2SetupExperiment", t0);
    set_parameters(false, t0);
    check(api_.enter_initialization(c_), "fmi2EnterInitializationMode", t0);
    if (leave_initialization) end_initialization(t0);
  }
  void end_initialization(double t0) override {
    check(api_.exit_initialization(c_), "fmi2ExitInitializationMode", t0);
  }

  void set_numbers(const Io& io, std::span<const double> u, double t) override {
    const fmi2ValueReference vr = io.vr;
    if (!io.vrs.empty()) {  // a structured array: Real elements
      check(api_.set_real(c_, io.vrs.data(), io.vrs.size(), u.data()), "fmi2SetReal", t);
      return;
    }
    switch (io.type) {
      case VarType::float64: check(api_.set_real(c_, &vr, 1, u.data()), "fmi2SetReal", t); break;
      case VarType::int32:
      case VarType::enumeration: {
        const fmi2Integer i = to_integer<fmi2Integer>(u[0], fmu_->label, io.name());
        check(api_.set_integer(c_, &vr, 1, &i), "fmi2SetInteger", t);
        break;
      }
      case VarType::boolean: {
        const fmi2Boolean b = u[0] > 0.5 ? fmi2True : fmi2False;
        check(api_.set_boolean(c_, &vr, 1, &b), "fmi2SetBoolean", t);
        break;
      }
      default: throw PluginError(fmu_->label, "variable \"" + io.name() + "\" is not a number");
    }
  }
  void get_numbers(const Io& io, std::span<double> y, double t) override {
    const fmi2ValueReference vr = io.vr;
    if (!io.vrs.empty()) {
      check(api_.get_real(c_, io.vrs.data(), io.vrs.size(), y.data()), "fmi2GetReal", t);
      return;
    }
    switch (io.type) {
      case VarType::float64: check(api_.get_real(c_, &vr, 1, y.data()), "fmi2GetReal", t); break;
      case VarType::int32:
      case VarType::enumeration: {
        fmi2Integer i = 0;
        check(api_.get_integer(c_, &vr, 1, &i), "fmi2GetInteger", t);
        y[0] = double(i);
        break;
      }
      case VarType::boolean: {
        fmi2Boolean b = 0;
        check(api_.get_boolean(c_, &vr, 1, &b), "fmi2GetBoolean", t);
        y[0] = b ? 1.0 : 0.0;
        break;
      }
      default: throw PluginError(fmu_->label, "variable \"" + io.name() + "\" is not a number");
    }
  }
  std::vector<std::string> get_strings(const Io& io, double t) override {
    const fmi2ValueReference vr = io.vr;
    fmi2String s = nullptr;
    check(api_.get_string(c_, &vr, 1, &s), "fmi2GetString", t);
    return {s ? std::string(s) : std::string()};
  }
  std::vector<std::vector<std::uint8_t>> get_binaries(const Io& io, double) override {
    throw PluginError(fmu_->label, "variable \"" + io.name() + "\": FMI 2 has no Binary variables");
  }
  void set_texts(const Io& io, const std::vector<std::string>& values, double t) override {
    if (io.type != VarType::string || values.size() != 1)
      throw PluginError(fmu_->label, "variable \"" + io.name() + "\" is not a scalar String");
    const fmi2ValueReference vr = io.vr;
    const fmi2String x = values.front().c_str();
    check(api_.set_string(c_, &vr, 1, &x), "fmi2SetString", t);
  }

  CsStep do_step(double t, double h) override {
    const fmi2Status s = check(api_.do_step(c_, t, h, no_earlier_state()), "fmi2DoStep", t);
    if (s == fmi2Discard) {
      // The FMU stopped early: it reports how far it came (a shorter step is within "at most
      // h"), and whether it wants the simulation to end (fmi2Terminated).
      fmi2Real reached = t;
      if (api_.get_real_status)
        check(api_.get_real_status(c_, fmi2LastSuccessfulTime, &reached), "fmi2GetRealStatus", t);
      fmi2Boolean terminated = fmi2False;
      if (api_.get_boolean_status && api_.get_boolean_status(c_, fmi2Terminated, &terminated) != fmi2OK)
        terminated = fmi2False;
      return {reached, true, terminated == fmi2True};
    }
    if (s == fmi2Pending)
      throw PluginError(fmu_->label, "fmi2DoStep returned fmi2Pending (asynchronous steps are not supported)");
    return {t + h, false, false};
  }
  const char* do_step_name() const override { return "fmi2DoStep"; }
  void enter_step_mode(double) override {}  // FMI 2 has no event mode in co-simulation
  const char* last_time_name() const override { return "fmi2LastSuccessfulTime"; }

  void set_time(double t) override { check(api_.set_time(c_, t), "fmi2SetTime", t); }
  void set_states(std::span<const double> x, double t) override {
    check(api_.set_states(c_, x.data(), x.size()), "fmi2SetContinuousStates", t);
  }
  void derivatives(std::span<double> dx, double t) override {
    check(api_.get_derivatives(c_, dx.data(), dx.size()), "fmi2GetDerivatives", t);
  }
  void indicators(std::span<double> z, double t) override {
    check(api_.get_event_indicators(c_, z.data(), z.size()), "fmi2GetEventIndicators", t);
  }
  void states(std::span<double> x, double t) override {
    check(api_.get_states(c_, x.data(), x.size()), "fmi2GetContinuousStates", t);
  }
  void completed_step(double t, bool& enter, bool& terminate) override {
    fmi2Boolean e = fmi2False, x = fmi2False;
    check(api_.completed_integrator_step(c_, no_earlier_state(), &e, &x), "fmi2CompletedIntegratorStep", t);
    enter = e, terminate = x;
  }
  void enter_event_mode(double t) override { check(api_.enter_event_mode(c_), "fmi2EnterEventMode", t); }
  Discrete update_discrete(double t) override {
    fmi2EventInfo info{};
    check(api_.new_discrete_states(c_, &info), "fmi2NewDiscreteStates", t);
    return {bool(info.newDiscreteStatesNeeded), bool(info.terminateSimulation),
            bool(info.valuesOfContinuousStatesChanged), bool(info.nextEventTimeDefined), info.nextEventTime};
  }
  void enter_continuous_time_mode(double t) override {
    check(api_.enter_continuous_time_mode(c_), "fmi2EnterContinuousTimeMode", t);
  }
  std::size_t reported_states() override { return shape_.states; }
  std::size_t reported_indicators() override { return shape_.indicators; }

  void save(FmuState& s, double t) override {
    s.adopt(release_state_);
    check(api_.get_fmu_state(c_, &s.handle), "fmi2GetFMUstate", t);
    if (!peeking_) may_restore_ = true;
  }
  void restore(const FmuState& s, double t) override {
    if (!s.of(release_state_)) throw PluginError(fmu_->label, "an FMU state of another instance cannot be restored");
    check(api_.set_fmu_state(c_, s.handle), "fmi2SetFMUstate", t);
  }

 private:
  // Throws on fmi2Error / fmi2Fatal with the FMU's own messages; returns the status otherwise.
  fmi2Status check(fmi2Status s, const char* fn, double t) {
    if (s == fmi2Error || s == fmi2Fatal || s < fmi2OK || s > fmi2Pending) {
      if (s == fmi2Fatal) fatal_ = true, release_state_.reset();  // no call after fmi2Fatal
      throw PluginError(fmu_->label,
                        std::string(fn) + " returned " +
                            (s >= 0 && s <= 5 ? std::string(kStatusName2[s]) : "status " + std::to_string(int(s))) +
                            " at t = " + fmt_time(t) + log_.tail());
    }
    return s;
  }
  void instantiate() {
    const auto& md = fmu_->md;
    c_ = api_.instantiate(log_.instance.c_str(), me_ ? fmi2ModelExchange : fmi2CoSimulation, md.token.c_str(),
                          resources_.c_str(), &callbacks_, fmi2False, fmi2False);
    if (!c_)
      throw PluginError(fmu_->label,
                        "fmi2Instantiate returned NULL (the FMU refused to create an instance)" + log_.tail());
    fatal_ = false;
    if (can_save_state())
      release_state_ =
          std::make_shared<const StateRelease>([api = &api_, c = c_](void* h) { api->free_fmu_state(c, &h); });
  }
  void release() noexcept {
    release_state_.reset();
    if (!c_) return;
    if (!fatal_) api_.free_instance(c_);  // after fmi2Fatal no function may be called
    c_ = nullptr;
  }
  void set_value(const Variable& v, std::size_t, const json& value, double t) override {
    const fmi2ValueReference vr = v.value_reference;
    switch (v.type) {
      case VarType::float64: {
        const fmi2Real x = value.get<double>();
        check(api_.set_real(c_, &vr, 1, &x), "fmi2SetReal", t);
        break;
      }
      case VarType::boolean: {
        const fmi2Boolean x = json_values<bool>(value, 1)[0] ? fmi2True : fmi2False;
        check(api_.set_boolean(c_, &vr, 1, &x), "fmi2SetBoolean", t);
        break;
      }
      case VarType::string: {
        const std::string text = value.get<std::string>();
        const fmi2String x = text.c_str();
        check(api_.set_string(c_, &vr, 1, &x), "fmi2SetString", t);
        break;
      }
      default: {
        const fmi2Integer x = fmi2Integer(value.get<long long>());
        check(api_.set_integer(c_, &vr, 1, &x), "fmi2SetInteger", t);
        break;
      }
    }
  }

  const Fmi2Api& api_;
  fmi2CallbackFunctions callbacks_{};
  std::string resources_;
  fmi2Component c_ = nullptr;
};

}  // namespace

std::unique_ptr<Instance> make_fmi2_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name) {
  return std::make_unique<Fmi2Instance>(std::move(fmu), model_exchange, p, name);
}

}  // namespace stride::host::fmi
