// A source y = slope·t whose steps take wall time: every step sleeps `step_wall` s, and the
// step that starts at or after `stall_at` (once) sleeps `stall` s more, so that a real-time run
// misses that communication point's deadline on purpose (tests/unit/real_time.cpp).
#include <chrono>
#include <thread>

#include "../common/ramp.hpp"

namespace {

class TestSlow final : public stride_test::Ramp {
 public:
  static stride::PluginInfo describe() {
    auto i = stride_test::ramp_info("test_slow", "Test source y = slope·t whose steps take wall time", false);
    i.parameters.push_back(stride::real_param("step_wall", 0.0, "s", "wall time every step takes", 0.0, 10.0));
    i.parameters.push_back(stride::real_param("stall_at", 1e300, "s", "the step from this time on stalls once", 0.0));
    i.parameters.push_back(stride::real_param("stall", 0.0, "s", "extra wall time of that step", 0.0, 10.0));
    return i;
  }
  explicit TestSlow(const stride::Params& p)
      : Ramp(p), step_wall_(p.real("step_wall")), stall_at_(p.real("stall_at")), stall_(p.real("stall")) {}
  double step(double t, double h) override {
    double wall = step_wall_;
    if (!stalled_ && t >= stall_at_ - 1e-12) stalled_ = true, wall += stall_;
    if (wall > 0) std::this_thread::sleep_for(std::chrono::duration<double>(wall));
    return Ramp::step(t, h);
  }

 private:
  double step_wall_, stall_at_, stall_;
  bool stalled_ = false;
};

}  // namespace

STRIDE_PLUGIN(TestSlow)
