// A static gain y = k·u with direct feedthrough; size and unit of both ports are parameters,
// so manifests can provoke size and unit mismatches and algebraic loops with it.
#include <stride/stride.hpp>

namespace {

// Call order (stride::Subsystem): bind -> initialize -> outputs -> { step -> outputs }*.
// outputs() reads the input at the time reached, which is what feedthrough means.
class TestGain final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "test_gain";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::stepper;
    i.version = "1.0";
    i.description = "Test gain y = k·u with direct feedthrough";
    stride::ParamSpec unit;
    unit.name = "unit";
    unit.type = stride::ParamType::string;
    unit.default_value = "m";
    unit.doc = "SI unit of u and y";
    i.parameters = {stride::real_param("k", 1.0, "1", "gain", -1e3, 1e3),
                    stride::integer_param("size", 1, "elements of u and y", 1, 8), unit};
    return i;
  }
  explicit TestGain(const stride::Params& p)
      : k_(p.real("k")), size_(static_cast<std::size_t>(p.integer("size"))), unit_(p.string("unit")) {}

  std::vector<stride::PortSpec> ports() const override {
    return {stride::input("u", size_, unit_, "input"), stride::output("y", size_, unit_, "k·u", true)};
  }
  void initialize(double t0) override { t_ = t0; }
  double step(double t, double h) override {
    t_ = t + h;
    ++steps_;
    // The distinct step sizes handed in (bitwise), up to four: the host must not add round-off.
    bool seen = false;
    for (int i = 0; i < distinct_; ++i) seen |= steps_seen_[i] == h;
    if (!seen && distinct_ < 4) steps_seen_[distinct_++] = h;
    return t_;
  }
  void outputs(std::span<double> y) override {
    auto u = inputs().at(0, t_);
    for (std::size_t i = 0; i < size_; ++i) y[i] = k_ * u[i];
  }
  stride::json statistics() const override {
    stride::json sizes = stride::json::array();
    for (int i = 0; i < distinct_; ++i) sizes.push_back(steps_seen_[i]);
    return {{"steps", steps_}, {"step_sizes", sizes}};
  }

 private:
  double k_;
  std::size_t size_;
  std::string unit_;
  double t_ = 0.0;
  long steps_ = 0;
  double steps_seen_[4] = {};
  int distinct_ = 0;
};

}  // namespace

STRIDE_PLUGIN(TestGain)
