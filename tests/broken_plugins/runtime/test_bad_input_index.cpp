// A programming error in reading inputs: from t = fail_at on, outputs() reads input index 1 of
// a subsystem that declares one input. The host must end the run with status "failed", name
// the subsystem and the index, and keep the rows written so far.
#include <stride/stride.hpp>

namespace {

class TestBadInputIndex final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "test_bad_input_index";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::stepper;
    i.version = "1.0";
    i.description = "Test plugin that reads an input index it never declared once t reaches fail_at";
    i.parameters = {stride::real_param("fail_at", 0.5, "s", "time from which the undeclared input is read")};
    return i;
  }
  explicit TestBadInputIndex(const stride::Params& p) : fail_at_(p.real("fail_at")) {}

  std::vector<stride::PortSpec> ports() const override {
    return {stride::input("u", 1, "m", "input"), stride::output("y", 1, "m", "u", true)};
  }
  void initialize(double t0) override { t_ = t0; }
  double step(double t, double h) override { return t_ = t + h; }
  void outputs(std::span<double> y) override { y[0] = inputs().at(t_ >= fail_at_ ? 1 : 0, t_)[0]; }

 private:
  double fail_at_;
  double t_ = 0.0;
};

}  // namespace

STRIDE_PLUGIN(TestBadInputIndex)
