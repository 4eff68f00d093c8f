// Sources whose output y is the number of runs this process has initialized them in: a
// global that outlives a run, the state PluginInfo::process_per_run is for. In a sweep,
// test_run_counter (which declares it) must read 1 in every run; test_run_counter_undeclared
// counts the runs a sweep worker has done.
#include "../common/ramp.hpp"

namespace {

int g_runs = 0;  // on purpose: state kept between runs

template <bool Declared>
class RunCounter final : public stride_test::Ramp {
 public:
  static stride::PluginInfo describe() {
    auto i = stride_test::ramp_info(Declared ? "test_run_counter" : "test_run_counter_undeclared",
                                    "Test source: y = the number of runs initialized in this process", false);
    i.process_per_run = Declared;
    return i;
  }
  explicit RunCounter(const stride::Params& p) : Ramp(p) {}
  void initialize(double t0) override {
    Ramp::initialize(t0);
    runs_ = ++g_runs;
  }
  void outputs(std::span<double> y) override { y[0] = runs_; }

 private:
  int runs_ = 0;
};

}  // namespace

#ifdef STRIDE_TEST_UNDECLARED
STRIDE_PLUGIN(RunCounter<false>)
#else
STRIDE_PLUGIN(RunCounter<true>)
#endif
