// FMI 3.0 instances, co-simulation or model exchange, behind Instance (instance.hpp).
#include <algorithm>
#include <cmath>
#include <tuple>
#include <type_traits>

#include "fmi/instance.hpp"
#include "fmi/values.hpp"

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
    std::apply([&](auto&... v) { (v.resize(io_.scratch_size), ...); }, buffers_);
    instantiate();
  }
  ~Fmi3Instance() override { release(); }

  void start(double t0, bool leave_initialization) override {
    if (started_) {
      release();
      instantiate();
    }
    started_ = true;
    configure(t0);
    const auto tolerance = fmu_->md.experiment.tolerance;  // the FMU's own solver's (co-simulation)
    check(api_.enter_initialization(c_, tolerance.has_value(), tolerance.value_or(0.0), t0, false, 0.0),
          "fmi3EnterInitializationMode", t0);
    set_parameters(false, t0);
    if (leave_initialization) end_initialization(t0);
  }
  void end_initialization(double t0) override {
    check(api_.exit_initialization(c_), "fmi3ExitInitializationMode", t0);
  }

  void set_numbers(const Io& io, std::span<const double> u, double t) override {
    switch (io.type) {
      case VarType::float64: check(api_.set_float64(c_, &io.vr, 1, u.data(), u.size()), "fmi3SetFloat64", t); break;
      case VarType::float32: set_as<fmi3Float32>(api_.set_float32, "fmi3SetFloat32", io, u, t); break;
      case VarType::int8: set_as<fmi3Int8>(api_.set_int8, "fmi3SetInt8", io, u, t); break;
      case VarType::uint8: set_as<fmi3UInt8>(api_.set_uint8, "fmi3SetUInt8", io, u, t); break;
      case VarType::int16: set_as<fmi3Int16>(api_.set_int16, "fmi3SetInt16", io, u, t); break;
      case VarType::uint16: set_as<fmi3UInt16>(api_.set_uint16, "fmi3SetUInt16", io, u, t); break;
      case VarType::int32: set_as<fmi3Int32>(api_.set_int32, "fmi3SetInt32", io, u, t); break;
      case VarType::uint32: set_as<fmi3UInt32>(api_.set_uint32, "fmi3SetUInt32", io, u, t); break;
      case VarType::int64:
      case VarType::enumeration: set_as<fmi3Int64>(api_.set_int64, "fmi3SetInt64", io, u, t); break;
      case VarType::uint64: set_as<fmi3UInt64>(api_.set_uint64, "fmi3SetUInt64", io, u, t); break;
      case VarType::boolean:
        for (std::size_t i = 0; i < u.size(); ++i) bools_[i] = u[i] > 0.5;
        check(api_.set_boolean(c_, &io.vr, 1, bools_.get(), u.size()), "fmi3SetBoolean", t);
        break;
      default: throw PluginError(fmu_->label, "variable \"" + io.name() + "\" is not a number");
    }
  }
  void get_numbers(const Io& io, std::span<double> y, double t) override {
    switch (io.type) {
      case VarType::float64: check(api_.get_float64(c_, &io.vr, 1, y.data(), y.size()), "fmi3GetFloat64", t); break;
      case VarType::float32: get_as<fmi3Float32>(api_.get_float32, "fmi3GetFloat32", io, y, t); break;
      case VarType::int8: get_as<fmi3Int8>(api_.get_int8, "fmi3GetInt8", io, y, t); break;
      case VarType::uint8: get_as<fmi3UInt8>(api_.get_uint8, "fmi3GetUInt8", io, y, t); break;
      case VarType::int16: get_as<fmi3Int16>(api_.get_int16, "fmi3GetInt16", io, y, t); break;
      case VarType::uint16: get_as<fmi3UInt16>(api_.get_uint16, "fmi3GetUInt16", io, y, t); break;
      case VarType::int32: get_as<fmi3Int32>(api_.get_int32, "fmi3GetInt32", io, y, t); break;
      case VarType::uint32: get_as<fmi3UInt32>(api_.get_uint32, "fmi3GetUInt32", io, y, t); break;
      case VarType::int64:
      case VarType::enumeration: get_as<fmi3Int64>(api_.get_int64, "fmi3GetInt64", io, y, t); break;
      case VarType::uint64: get_as<fmi3UInt64>(api_.get_uint64, "fmi3GetUInt64", io, y, t); break;
      case VarType::boolean:
        check(api_.get_boolean(c_, &io.vr, 1, bools_.get(), y.size()), "fmi3GetBoolean", t);
        for (std::size_t i = 0; i < y.size(); ++i) y[i] = bools_[i] ? 1.0 : 0.0;
        break;
      default: throw PluginError(fmu_->label, "variable \"" + io.name() + "\" is not a number");
    }
  }
  std::vector<std::string> get_strings(const Io& io, double t) override {
    need(api_.get_string, "fmi3GetString", io);
    std::vector<fmi3String> texts(io.size, nullptr);
    check(api_.get_string(c_, &io.vr, 1, texts.data(), texts.size()), "fmi3GetString", t);
    std::vector<std::string> out;
    for (fmi3String s : texts) out.emplace_back(s ? s : "");
    return out;
  }
  std::vector<std::vector<std::uint8_t>> get_binaries(const Io& io, double t) override {
    need(api_.get_binary, "fmi3GetBinary", io);
    std::vector<fmi3Binary> data(io.size, nullptr);
    std::vector<std::size_t> sizes(io.size, 0);
    check(api_.get_binary(c_, &io.vr, 1, sizes.data(), data.data(), data.size()), "fmi3GetBinary", t);
    std::vector<std::vector<std::uint8_t>> out;
    for (std::size_t i = 0; i < data.size(); ++i) out.emplace_back(data[i], data[i] + (data[i] ? sizes[i] : 0));
    return out;
  }
  void set_texts(const Io& io, const std::vector<std::string>& values, double t) override {
    if (io.type == VarType::string) {
      need(api_.set_string, "fmi3SetString", io);
      std::vector<fmi3String> x;
      for (const std::string& v : values) x.push_back(v.c_str());
      check(api_.set_string(c_, &io.vr, 1, x.data(), x.size()), "fmi3SetString", t);
      return;
    }
    need(api_.set_binary, "fmi3SetBinary", io);
    std::vector<fmi3Binary> x;
    std::vector<std::size_t> sizes;
    for (const std::string& v : values)
      x.push_back(reinterpret_cast<const fmi3Byte*>(v.data())), sizes.push_back(v.size());
    check(api_.set_binary(c_, &io.vr, 1, sizes.data(), x.data(), x.size()), "fmi3SetBinary", t);
  }

  CsStep do_step(double t, double h) override {
    fmi3Boolean event = false, terminate = false, early = false;
    fmi3Float64 last = t;
    const fmi3Status s =
        check(api_.do_step(c_, t, h, no_earlier_state(), &event, &terminate, &early, &last), "fmi3DoStep", t);
    if (terminate) return {last, false, true};
    if (event) return {early ? last : t + h, early, false, true};
    if (s == fmi3Discard || early) return {last, true, false};
    return {t + h, false, false};
  }
  void enter_step_mode(double t) override { check(api_.enter_step_mode(c_), "fmi3EnterStepMode", t); }
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
    check(api_.update_discrete_states(c_, &again, &terminate, &nominals, &values, &defined, &next),
          "fmi3UpdateDiscreteStates", t);
    return {again, terminate, values, defined, next};
  }
  void enter_continuous_time_mode(double t) override {
    check(api_.enter_continuous_time_mode(c_), "fmi3EnterContinuousTimeMode", t);
  }
  std::size_t reported_states() override {
    std::size_t n = shape_.states;
    if (api_.number_of_states) check(api_.number_of_states(c_, &n), "fmi3GetNumberOfContinuousStates", 0.0);
    return n;
  }
  std::size_t reported_indicators() override {
    std::size_t n = shape_.indicators;
    if (api_.number_of_indicators) check(api_.number_of_indicators(c_, &n), "fmi3GetNumberOfEventIndicators", 0.0);
    return n;
  }

  void save(FmuState& s, double t) override {
    s.adopt(release_state_);
    check(api_.get_fmu_state(c_, &s.handle), "fmi3GetFMUState", t);
    if (!peeking_) may_restore_ = true;
  }
  void restore(const FmuState& s, double t) override {
    if (!s.of(release_state_)) throw PluginError(fmu_->label, "an FMU state of another instance cannot be restored");
    check(api_.set_fmu_state(c_, s.handle), "fmi3SetFMUState", t);
  }

 private:
  // Structural parameters the manifest gives are set in configuration mode.
  void configure(double t) {
    const auto& given = params_.values();
    const bool any = std::any_of(fmu_->md.variables.begin(), fmu_->md.variables.end(), [&](const Variable& v) {
      return v.causality == "structuralParameter" && given.contains(v.name) && given[v.name] != v.start;
    });
    if (!any) return;
    if (!api_.enter_configuration || !api_.exit_configuration)
      throw PluginError(fmu_->label,
                        "the binary lacks fmi3EnterConfigurationMode, needed to set structural parameters");
    check(api_.enter_configuration(c_), "fmi3EnterConfigurationMode", t);
    set_parameters(true, t);
    check(api_.exit_configuration(c_), "fmi3ExitConfigurationMode", t);
  }

  // Throws on fmi3Error / fmi3Fatal with the FMU's own messages; returns the status otherwise.
  fmi3Status check(fmi3Status s, const char* fn, double t) {
    if (s == fmi3Error || s == fmi3Fatal || s < fmi3OK || s > fmi3Fatal) {
      if (s == fmi3Fatal) fatal_ = true, release_state_.reset();  // no call after fmi3Fatal
      throw PluginError(fmu_->label, std::string(fn) + " returned " +
                                         (s >= 0 && s <= 4 ? kStatus3[s] : "an unknown status") +
                                         " at t = " + fmt_time(t) + log_.tail());
    }
    return s;
  }
  void instantiate() {
    const auto& md = fmu_->md;
    event_mode_used_ = !me_ && md.cs_event_mode;
    const auto cs = [&] {
      return api_.instantiate(log_.instance.c_str(), md.token.c_str(), resources_.c_str(), false, false,
                              event_mode_used_, event_mode_used_, nullptr, 0, &log_, stride_fmi3_logger, nullptr);
    };
    c_ = me_ ? api_.instantiate_me(log_.instance.c_str(), md.token.c_str(), resources_.c_str(), false, false, &log_,
                                   stride_fmi3_logger)
             : cs();
    if (!c_ && event_mode_used_) {
      // hasEventMode declares that the FMU can use event mode, not that it must: one that
      // refuses it handles its events inside fmi3DoStep.
      event_mode_used_ = false;
      c_ = cs();
      if (c_) {
        log_.log(1, "stride",
                 "the FMU refused eventModeUsed = true at instantiation (it declares hasEventMode): run "
                 "without event mode, its events handled inside fmi3DoStep");
        log_.recent.clear();  // its refusal is no error of this instance
      }
    }
    if (!c_)
      throw PluginError(fmu_->label, std::string(me_ ? "fmi3InstantiateModelExchange" : "fmi3InstantiateCoSimulation") +
                                         " returned NULL (the FMU refused to create an instance)" + log_.tail());
    fatal_ = false;
    if (can_save_state())
      release_state_ =
          std::make_shared<const StateRelease>([api = &api_, c = c_](void* h) { api->free_fmu_state(c, &h); });
  }
  void release() noexcept {
    release_state_.reset();
    if (c_ && !fatal_) api_.free_instance(c_);  // after fmi3Fatal no function may be called
    c_ = nullptr;
  }
  // A function the FMU must have for the variable `io`.
  template <class F>
  void need(F* fn, const char* name, const Io& io) const {
    if (!fn)
      throw PluginError(fmu_->label,
                        std::string("the binary lacks ") + name + ", needed for variable \"" + io.name() + "\"");
  }
  template <class T, class F>
  void set_as(F* fn, const char* name, const Io& io, std::span<const double> u, double t) {
    need(fn, name, io);
    T* buf = std::get<std::vector<T>>(buffers_).data();
    for (std::size_t i = 0; i < u.size(); ++i) {
      if constexpr (std::is_floating_point_v<T>) buf[i] = static_cast<T>(u[i]);
      else buf[i] = to_integer<T>(u[i], fmu_->label, io.name());
    }
    check(fn(c_, &io.vr, 1, buf, u.size()), name, t);
  }
  template <class T, class F>
  void get_as(F* fn, const char* name, const Io& io, std::span<double> y, double t) {
    need(fn, name, io);
    T* buf = std::get<std::vector<T>>(buffers_).data();
    check(fn(c_, &io.vr, 1, buf, y.size()), name, t);
    for (std::size_t i = 0; i < y.size(); ++i) {
      if constexpr (std::is_floating_point_v<T>) y[i] = static_cast<double>(buf[i]);
      else y[i] = from_integer<T>(buf[i], fmu_->label, io.name());
    }
  }
  // A parameter's or start value's elements, set with the type's function.
  template <class T, class F>
  void set_list(F* fn, const char* name, const Variable& v, std::size_t n, const json& value, double t) {
    const Io io = io_of(v, n);
    need(fn, name, io);
    const std::vector<T> xs = json_values<T>(value, n);
    check(fn(c_, &v.value_reference, 1, xs.data(), xs.size()), name, t);
  }
  void set_value(const Variable& v, std::size_t n, const json& value, double t) override {
    switch (v.type) {
      case VarType::float64: set_list<fmi3Float64>(api_.set_float64, "fmi3SetFloat64", v, n, value, t); break;
      case VarType::float32: set_list<fmi3Float32>(api_.set_float32, "fmi3SetFloat32", v, n, value, t); break;
      case VarType::int8: set_list<fmi3Int8>(api_.set_int8, "fmi3SetInt8", v, n, value, t); break;
      case VarType::uint8: set_list<fmi3UInt8>(api_.set_uint8, "fmi3SetUInt8", v, n, value, t); break;
      case VarType::int16: set_list<fmi3Int16>(api_.set_int16, "fmi3SetInt16", v, n, value, t); break;
      case VarType::uint16: set_list<fmi3UInt16>(api_.set_uint16, "fmi3SetUInt16", v, n, value, t); break;
      case VarType::int32: set_list<fmi3Int32>(api_.set_int32, "fmi3SetInt32", v, n, value, t); break;
      case VarType::uint32: set_list<fmi3UInt32>(api_.set_uint32, "fmi3SetUInt32", v, n, value, t); break;
      case VarType::int64:
      case VarType::enumeration: set_list<fmi3Int64>(api_.set_int64, "fmi3SetInt64", v, n, value, t); break;
      case VarType::uint64: set_list<fmi3UInt64>(api_.set_uint64, "fmi3SetUInt64", v, n, value, t); break;
      case VarType::boolean: {
        const std::vector<bool> xs = json_values<bool>(value, n);
        const std::unique_ptr<fmi3Boolean[]> b = std::make_unique<fmi3Boolean[]>(xs.size() + 1);
        std::copy(xs.begin(), xs.end(), b.get());
        check(api_.set_boolean(c_, &v.value_reference, 1, b.get(), xs.size()), "fmi3SetBoolean", t);
        break;
      }
      case VarType::string: set_strings(v, n, value, t); break;
      case VarType::binary: set_binaries(v, n, value, t); break;
      case VarType::clock: throw PluginError(fmu_->label, "clock \"" + v.name + "\" cannot be set");
    }
  }
  void set_strings(const Variable& v, std::size_t n, const json& value, double t) {
    need(api_.set_string, "fmi3SetString", io_of(v, n));
    const std::vector<std::string> texts = json_values<std::string>(value, n);
    std::vector<fmi3String> ptrs;
    for (const auto& s : texts) ptrs.push_back(s.c_str());
    check(api_.set_string(c_, &v.value_reference, 1, ptrs.data(), ptrs.size()), "fmi3SetString", t);
  }
  void set_binaries(const Variable& v, std::size_t n, const json& value, double t) {
    need(api_.set_binary, "fmi3SetBinary", io_of(v, n));
    std::vector<std::vector<std::uint8_t>> data;
    for (const auto& hex : json_values<std::string>(value, n)) data.push_back(from_hex(hex));
    std::vector<fmi3Binary> ptrs;
    std::vector<std::size_t> sizes;
    for (const auto& d : data) ptrs.push_back(d.data()), sizes.push_back(d.size());
    check(api_.set_binary(c_, &v.value_reference, 1, sizes.data(), ptrs.data(), ptrs.size()), "fmi3SetBinary", t);
  }

  const Fmi3Api& api_;
  // Retyped values of one port.
  std::tuple<std::vector<fmi3Float32>, std::vector<fmi3Int8>, std::vector<fmi3UInt8>, std::vector<fmi3Int16>,
             std::vector<fmi3UInt16>, std::vector<fmi3Int32>, std::vector<fmi3UInt32>, std::vector<fmi3Int64>,
             std::vector<fmi3UInt64>>
      buffers_;
  std::unique_ptr<fmi3Boolean[]> bools_ = std::make_unique<fmi3Boolean[]>(io_.scratch_size);
  std::string resources_;
  fmi3Instance c_ = nullptr;
};

}  // namespace

std::unique_ptr<Instance> make_fmi3_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                             const std::string& name) {
  return std::make_unique<Fmi3Instance>(std::move(fmu), model_exchange, p, name);
}

}  // namespace stride::host::fmi
