// A source y = slope·t whose step() misbehaves once t reaches fail_at, in the ways a plugin
// can take a host down: a throw of something that is not a std::exception, a call to exit(),
// a crash, an abort, a step that never returns (and ignores signals), a message that is not
// UTF-8. The host must end every one of these with a summary and the rows written before.
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "../common/ramp.hpp"

namespace {

class TestFault final : public stride_test::Ramp {
 public:
  static stride::PluginInfo describe() {
    auto i = stride_test::ramp_info("test_fault", "Test source whose step() fails in a chosen way from fail_at on", true);
    i.parameters.push_back(stride::choice_param(
        "fault", "throw_int", {"throw_int", "throw_cstring", "exit0", "segfault", "abort", "hang", "bad_utf8"},
        "how step() fails"));
    return i;
  }
  explicit TestFault(const stride::Params& p) : Ramp(p), fault_(p.string("fault")) {}
  double step(double t, double h) override {
    if (t + h >= fail_at_) {
      if (fault_ == "throw_int") throw 42;
      if (fault_ == "throw_cstring") throw "a C string";
      if (fault_ == "exit0") std::exit(0);
      if (fault_ == "segfault") std::raise(SIGSEGV);
      if (fault_ == "abort") std::abort();
      if (fault_ == "hang") {
        // Tells a waiting test that the step now hangs (STRIDE_TEST_HANG_MARK names a file).
        if (const char* f = std::getenv("STRIDE_TEST_HANG_MARK"))
          if (std::FILE* out = std::fopen(f, "w")) std::fclose(out);
        for (;;) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (fault_ == "bad_utf8") throw std::runtime_error("invalid byte \xff\xfe in a message");
    }
    return Ramp::step(t, h);
  }

 private:
  std::string fault_;
};

}  // namespace

STRIDE_PLUGIN(TestFault)
