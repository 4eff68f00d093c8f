// An ODE system whose states() contradicts itself, by the parameter `mistake`: a second entry
// for its one state, a nominal value of zero, or a unit UDUNITS-2 cannot read. The host must
// refuse it when the subsystem is created, naming the plugin and the state.
#include <stride/stride.hpp>

namespace {

class BadStates final : public stride::OdeSystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "test_bad_states";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::ode;
    i.version = "1.0";
    i.description = "Test ODE x' = -x whose state declaration is wrong on purpose";
    i.parameters = {stride::choice_param("mistake", "count", {"count", "nominal", "unit", "none"}, "what is wrong")};
    return i;
  }
  explicit BadStates(const stride::Params& p) : mistake_(p.string("mistake")) {}
  std::vector<stride::PortSpec> ports() const override { return {stride::output("x", 1, "m")}; }
  std::size_t state_size() const override { return 1; }
  void initial_state(double, std::span<double> x) override { x[0] = 1.0; }
  void derivatives(double, std::span<const double> x, std::span<double> f) override { f[0] = -x[0]; }
  void outputs(double, std::span<const double> x, std::span<double> y) override { y[0] = x[0]; }
  std::vector<stride::StateSpec> states() const override {
    if (mistake_ == "count") return {{"x", "m", 1.0}, {"v", "m/s", 1.0}};
    if (mistake_ == "nominal") return {{"x", "m", 0.0}};
    if (mistake_ == "unit") return {{"x", "meter_per_fortnight", 1.0}};
    return {{"x", "m", 1.0}};
  }

 private:
  std::string mistake_;
};

}  // namespace

STRIDE_PLUGIN(BadStates)
