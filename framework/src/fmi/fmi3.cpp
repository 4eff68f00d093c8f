// FMI 3.0 instances, co-simulation or model exchange, behind Instance (instance.hpp).
#include <algorithm>
#include <cmath>

#include "fmi/instance.hpp"

namespace stride::host::fmi {

namespace {

const char* const kStatus3[] = {"fmi3OK", "fmi3Warning", "fmi3Discard", "fmi3Error", "fmi3Fatal"};

extern "C" void stride_fmi3_logger(fmi3InstanceEnvironment env, fmi3Status status, fmi3String category,
                                   fmi3String message) {
  if (env) static_cast<LogSink*>(env)->log(int(status), category, message);
}

class Fmi3Instance final : public Instance {
 public:
  Fmi3Instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p, const std::string& name)
      : Instance(std::move(fmu), model_exchange, p, name), api_(me_ ? fmu_->me3 : fmu_->cs3) {
    resources_ = (fmu_->folder->path() / "resources").string() + "/";
    instantiate();
  }
  ~Fmi3Instance() override { release(); }

  void start(double t0) override {
    if (started_) {
      release();
      instantiate();
    }
    started_ = true;
    check(api_.enter_initialization(c_, false, 0.0, t0, false, 0.0), "fmi3EnterInitializationMode", t0);
    set_parameters(t0);
    check(api_.exit_initialization(c_), "fmi3ExitInitializationMode", t0);
  }

  void set_inputs(Inputs& inputs, double t) override {
    for (std::size_t k = 0; k < io_.in.size(); ++k) {
      const std::span<const double> value = to_fmu(io_.in[k], inputs.at(k, t), scratch_);
      const fmi3ValueReference vr = io_.in[k].vr;
      const std::size_t n = value.size();
      switch (io_.in[k].type) {
        case VarType::real: check(api_.set_float64(c_, &vr, 1, value.data(), n), "fmi3SetFloat64", t); break;
        case VarType::integer:
        case VarType::enumeration:
          for (std::size_t i = 0; i < n; ++i)
            int_scratch_[i] = fmi3Int32(std::lround(std::clamp(value[i], -2147483648.0, 2147483647.0)));
          check(api_.set_int32(c_, &vr, 1, int_scratch_.data(), n), "fmi3SetInt32", t);
          break;
        case VarType::boolean:
          for (std::size_t i = 0; i < n; ++i) bool_scratch_[i] = value[i] > 0.5;
          check(api_.set_boolean(c_, &vr, 1, bool_scratch_.get(), n), "fmi3SetBoolean", t);
          break;
        case VarType::string: break;
      }
    }
  }

  void get_outputs(std::span<double> y, double t) override {
    for (std::size_t k = 0; k < io_.out.size(); ++k) {
      const fmi3ValueReference vr = io_.out[k].vr;
      const std::size_t at = io_.out[k].offset;
      const std::size_t n = io_.out[k].size;
      switch (io_.out[k].type) {
        case VarType::real:
          check(api_.get_float64(c_, &vr, 1, &y[at], n), "fmi3GetFloat64", t);
          from_fmu(io_.out[k], y);
          break;
        case VarType::integer:
        case VarType::enumeration:
          check(api_.get_int32(c_, &vr, 1, int_scratch_.data(), n), "fmi3GetInt32", t);
          for (std::size_t i = 0; i < n; ++i) y[at + i] = double(int_scratch_[i]);
          break;
        case VarType::boolean:
          check(api_.get_boolean(c_, &vr, 1, bool_scratch_.get(), n), "fmi3GetBoolean", t);
          for (std::size_t i = 0; i < n; ++i) y[at + i] = bool_scratch_[i] ? 1.0 : 0.0;
          break;
        case VarType::string:
          for (std::size_t i = 0; i < n; ++i) y[at + i] = 0.0;
          break;
      }
    }
  }

  CsStep do_step(double t, double h) override {
    fmi3Boolean event = false, terminate = false, early = false;
    fmi3Float64 last = t;
    const fmi3Status s =
        check(api_.do_step(c_, t, h, no_earlier_state(), &event, &terminate, &early, &last), "fmi3DoStep", t);
    if (terminate) return {last, false, true};
    if (s == fmi3Discard || early) return {last, true, false};
    return {t + h, false, false};
  }
  const char* do_step_name() const override { return "fmi3DoStep"; }
  const char* last_time_name() const override { return "lastSuccessfulTime"; }

  void set_time(double t) override { check(api_.set_time(c_, t), "fmi3SetTime", t); }
  void set_states(std::span<const double> x, double t) override {
    check(api_.set_states(c_, x.data(), x.size()), "fmi3SetContinuousStates", t);
  }
  void derivatives(std::span<double> dx, double t) override {
    check(api_.get_derivatives(c_, dx.data(), dx.size()), "fmi3GetContinuousStateDerivatives", t);
  }
  void indicators(std::span<double> z, double t) override {
    check(api_.get_event_indicators(c_, z.data(), z.size()), "fmi3GetEventIndicators", t);
  }
  void states(std::span<double> x, double t) override {
    check(api_.get_states(c_, x.data(), x.size()), "fmi3GetContinuousStates", t);
  }
  void completed_step(double t, bool& enter, bool& terminate) override {
    fmi3Boolean e = false, x = false;
    check(api_.completed_integrator_step(c_, no_earlier_state(), &e, &x), "fmi3CompletedIntegratorStep", t);
    enter = e, terminate = x;
  }
  void enter_event_mode(double t) override { check(api_.enter_event_mode(c_), "fmi3EnterEventMode", t); }
  Discrete update_discrete(double t) override {
    fmi3Boolean again = false, terminate = false, nominals = false, values = false, defined = false;
    fmi3Float64 next = 0.0;
    check(api_.update_discrete_states(c_, &again, &terminate, &nominals, &values, &defined, &next), "fmi3UpdateDiscreteStates", t);
    return {again, terminate, values, defined, next};
  }
  void enter_continuous_time_mode(double t) override {
    check(api_.enter_continuous_time_mode(c_), "fmi3EnterContinuousTimeMode", t);
  }

  void save(FmuState& s, double t) override {
    s.adopt(release_state_);
    check(api_.get_fmu_state(c_, &s.handle), "fmi3GetFMUState", t);
    may_restore_ = true;
  }
  void restore(const FmuState& s, double t) override {
    if (!s.of(release_state_)) throw PluginError(fmu_->label, "an FMU state of another instance cannot be restored");
    check(api_.set_fmu_state(c_, s.handle), "fmi3SetFMUState", t);
  }

 private:
  // Throws on fmi3Error / fmi3Fatal with the FMU's own messages; returns the status otherwise.
  fmi3Status check(fmi3Status s, const char* fn, double t) {
    if (s == fmi3Error || s == fmi3Fatal || s < fmi3OK || s > fmi3Fatal) {
      if (s == fmi3Fatal) fatal_ = true, release_state_.reset();  // no call after fmi3Fatal
      throw PluginError(fmu_->label, std::string(fn) + " returned " + (s >= 0 && s <= 4 ? kStatus3[s] : "an unknown status") +
                                         " at t = " + fmt_time(t) + log_.tail());
    }
    return s;
  }
  void instantiate() {
    const auto& md = fmu_->md;
    c_ = me_ ? api_.instantiate_me(log_.instance.c_str(), md.token.c_str(), resources_.c_str(), false, false, &log_,
                                   stride_fmi3_logger)
             : api_.instantiate(log_.instance.c_str(), md.token.c_str(), resources_.c_str(), false, false, false, false,
                                nullptr, 0, &log_, stride_fmi3_logger, nullptr);
    if (!c_)
      throw PluginError(fmu_->label, std::string(me_ ? "fmi3InstantiateModelExchange" : "fmi3InstantiateCoSimulation") +
                                         " returned NULL (the FMU refused to create an instance)" + log_.tail());
    fatal_ = false;
    if (can_save_state())
      release_state_ = std::make_shared<const StateRelease>([api = &api_, c = c_](void* h) { api->free_fmu_state(c, &h); });
  }
  void release() noexcept {
    release_state_.reset();
    if (c_ && !fatal_) api_.free_instance(c_);  // after fmi3Fatal no function may be called
    c_ = nullptr;
  }
  void set_parameters(double t) {
    for (const auto& v : fmu_->md.variables) {
      if (v.causality != "parameter" || !params_.values().contains(v.name)) continue;
      set_parameter(v, params_.values()[v.name], t);
    }
  }
  void set_parameter(const Variable& v, const json& val, double t) {
    const fmi3ValueReference vr = v.value_reference;
    switch (v.type) {
      case VarType::real: {
        if (val.is_array()) {
          const std::vector<double> xs = val.get<std::vector<double>>();
          check(api_.set_float64(c_, &vr, 1, xs.data(), xs.size()), "fmi3SetFloat64", t);
          break;
        }
        const fmi3Float64 x = val.get<double>();
        check(api_.set_float64(c_, &vr, 1, &x, 1), "fmi3SetFloat64", t);
        break;
      }
      case VarType::integer:
      case VarType::enumeration: {
        const fmi3Int32 x = fmi3Int32(val.get<long>());
        check(api_.set_int32(c_, &vr, 1, &x, 1), "fmi3SetInt32", t);
        break;
      }
      case VarType::boolean: {
        const fmi3Boolean x = val.get<bool>();
        check(api_.set_boolean(c_, &vr, 1, &x, 1), "fmi3SetBoolean", t);
        break;
      }
      case VarType::string: {
        if (!api_.set_string) throw PluginError(fmu_->label, "the binary lacks fmi3SetString, needed for parameter \"" + v.name + "\"");
        const std::string text = val.get<std::string>();
        const fmi3String x = text.c_str();
        check(api_.set_string(c_, &vr, 1, &x, 1), "fmi3SetString", t);
        break;
      }
    }
  }

  const Fmi3Api& api_;
  std::vector<fmi3Int32> int_scratch_ = std::vector<fmi3Int32>(io_.scratch_size);
  std::unique_ptr<fmi3Boolean[]> bool_scratch_ = std::make_unique<fmi3Boolean[]>(io_.scratch_size);
  std::string resources_;
  fmi3Instance c_ = nullptr;
};

}  // namespace

std::unique_ptr<Instance> make_fmi3_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name) {
  return std::make_unique<Fmi3Instance>(std::move(fmu), model_exchange, p, name);
}

}  // namespace stride::host::fmi
