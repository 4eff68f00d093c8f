// A shared library in the plugin folder that is not a plugin: it defines a class but no
// STRIDE_PLUGIN entry point. The host must refuse it ("missing entry point").
#include <stride/stride.hpp>

namespace {

class Forgotten final : public stride::Extrapolator {
 public:
  void reset(std::size_t) override {}
  void push(double, std::span<const double>) override {}
  void evaluate(double, std::span<double> u) const override {
    for (double& v : u) v = 1.0;
  }
};

}  // namespace

extern "C" STRIDE_EXPORT stride::Extrapolator* make_forgotten() { return new Forgotten; }
