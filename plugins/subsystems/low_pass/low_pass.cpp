// First-order low-pass filter τ ẏ = u − y on a vector signal (a force or pressure sensor, an
// anti-aliasing filter between a fast and a slow subsystem). Its output passes the input on
// (PortSpec::through), so a power bond that runs through it still pairs its two ends and the
// energy residual keeps guarding the run; the residual then includes what the filter changes.
#include <stride/stride.hpp>

namespace {

using namespace stride;

class LowPass final : public OdeSystem {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "low_pass";
    i.kind = Kind::subsystem;
    i.form = Form::ode;
    i.version = "1.0.0";
    i.description = "First-order low-pass filter tau dy/dt = u - y on a vector signal; passes power bonds on";
    i.parameters = {
        real_param("tau", 1e-3, "s", "time constant", 1e-12, 1e6),
        integer_param("size", 1, "elements of u and y", 1, 10000),
        [] {
          ParamSpec s;
          s.name = "unit";
          s.type = ParamType::string;
          s.default_value = "1";
          s.doc = "unit of u and y (the connected ports' unit)";
          return s;
        }(),
        bool_param("in_power_path", true,
                   "y passes u on in a power bond (PortSpec::through); false for a signal outside any bond"),
        real_list_param("y0", {}, "1", "initial output (empty: zero; one value: every element)"),
    };
    return i;
  }

  explicit LowPass(const Params& p)
      : tau_(p.real("tau")), n_(static_cast<std::size_t>(p.integer("size"))), unit_(p.string("unit")),
        through_(p.boolean("in_power_path")), y0_(p.reals("y0")) {
    if (y0_.size() > 1 && y0_.size() != n_)
      throw ParameterError("/y0", "expected an empty list, one value or " + std::to_string(n_) + " values, found " +
                                      std::to_string(y0_.size()));
  }

  std::vector<PortSpec> ports() const override {
    PortSpec y = output("y", n_, unit_, "filtered signal");
    return {input("u", n_, unit_, "signal to filter"), through_ ? passing(y, "u") : y};
  }
  std::size_t state_size() const override { return n_; }
  void initial_state(double, std::span<double> x) override {
    for (std::size_t i = 0; i < n_; ++i) x[i] = y0_.empty() ? 0.0 : y0_.size() == 1 ? y0_[0] : y0_[i];
  }
  void derivatives(double t, std::span<const double> x, std::span<double> dxdt) override {
    const auto u = inputs().at(0, t);
    for (std::size_t i = 0; i < n_; ++i) dxdt[i] = (u[i] - x[i]) / tau_;
  }
  bool jacobian(double, std::span<const double>, Eigen::Ref<Eigen::MatrixXd> J) override {
    J.setZero();
    for (std::size_t i = 0; i < n_; ++i) J(static_cast<long>(i), static_cast<long>(i)) = -1.0 / tau_;
    return true;
  }
  void outputs(double, std::span<const double> x, std::span<double> y) override {
    for (std::size_t i = 0; i < n_; ++i) y[i] = x[i];
  }
  // x is the whole state.
  bool can_save_state() const override { return true; }

 private:
  double tau_;
  std::size_t n_;
  std::string unit_;
  bool through_;
  std::vector<double> y0_;
};

}  // namespace

STRIDE_PLUGIN(LowPass)
