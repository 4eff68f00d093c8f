// A ramp y = slope·t that writes messages (stride/log.hpp) the tests count, and takes the
// table, matrix and integer-list parameter types:
//   info    once at initialize, and at every step number listed in `marks`;
//   debug   every step;
//   warning every step that ends with y above `limit`;
//   error   once, the first step that ends at or after `error_at`.
// Outputs: y = slope·t, z = curve(t) (table, linear between rows), g = row sums of `gains`.
#include <stride/stride.hpp>

#include <algorithm>

namespace {

class TestLog final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "test_log";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::stepper;
    i.version = "1.2.3";
    i.description = "Test ramp that logs, with table, matrix and integer-list parameters";
    i.parameters = {
        stride::real_param("slope", 1.0, "m/s", "rate of the ramp"),
        stride::real_param("limit", 0.5, "m", "a warning every step that ends with y above it"),
        stride::real_param("error_at", 1e9, "s", "an error once, at the first step ending at or after it"),
        stride::integer_list_param("marks", {}, "step numbers (from 1) that write an info message", 1, 1000),
        stride::matrix_param("gains", stride::json::array({stride::json::array({1.0, 0.0}), stride::json::array({0.0, 1.0})}),
                             "1", "output g is the row sums", -1e3, 1e3),
        stride::table_param("curve", stride::json::array({stride::json::array({0.0, 0.0}), stride::json::array({1.0, 1.0})}),
                            {"s", "m"}, "output z(t), linear between rows", -1e3, 1e3),
    };
    return i;
  }
  explicit TestLog(const stride::Params& p)
      : slope_(p.real("slope")),
        limit_(p.real("limit")),
        error_at_(p.real("error_at")),
        marks_(p.integers("marks")),
        gains_(p.matrix("gains")),
        curve_(p.table("curve")) {}

  std::vector<stride::PortSpec> ports() const override {
    return {stride::output("y", 1, "m", "slope·t"), stride::output("z", 1, "m", "curve(t)"),
            stride::output("g", static_cast<std::size_t>(gains_.rows()), "1", "row sums of gains")};
  }
  void initialize(double t0) override {
    t_ = t0;
    log_info("starts at t0 = {} s with slope {} m/s", t0, slope_);
  }
  double step(double t, double h) override {
    t_ = t + h;
    ++steps_;
    log_debug("step {} to t = {} s", steps_, t_);
    if (std::find(marks_.begin(), marks_.end(), steps_) != marks_.end()) log_info("mark at step {}", steps_);
    if (slope_ * t_ > limit_) log_warning("y = {} m is above the limit {} m", slope_ * t_, limit_);
    if (!error_said_ && t_ >= error_at_) {
      error_said_ = true;
      log_error("passed error_at = {} s", error_at_);
    }
    return t_;
  }
  void outputs(std::span<double> y) override {
    y[0] = slope_ * t_;
    y[1] = curve_(t_);
    for (Eigen::Index i = 0; i < gains_.rows(); ++i) y[2 + static_cast<std::size_t>(i)] = gains_.row(i).sum();
  }

 private:
  double slope_, limit_, error_at_;
  std::vector<long> marks_;
  Eigen::MatrixXd gains_;
  stride::Table curve_;
  double t_ = 0.0;
  long steps_ = 0;
  bool error_said_ = false;
};

}  // namespace

STRIDE_PLUGIN(TestLog)
