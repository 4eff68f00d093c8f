// A library from a future SDK (ABI 999) with a static constructor that leaves a mark: it
// creates the file named by STRIDE_TEST_CONSTRUCTOR_MARK. The host must refuse the library
// from its handshake section without loading it, so the file is never created.
#include <cstdio>
#include <cstdlib>

#include <stride/stride.hpp>

namespace {

struct Mark {
  Mark() {
    if (const char* f = std::getenv("STRIDE_TEST_CONSTRUCTOR_MARK"))
      if (std::FILE* out = std::fopen(f, "w")) std::fclose(out);
  }
} mark;

class Future final : public stride::Extrapolator {
 public:
  void reset(std::size_t) override {}
  void push(double, std::span<const double>) override {}
  void evaluate(double, std::span<double> u) const override {
    for (double& v : u) v = 0.0;
  }
};

}  // namespace

STRIDE_HANDSHAKE_SECTION(999)

extern "C" STRIDE_EXPORT const StrideHandshake* stride_plugin() {
  static const StrideHandshake handshake{999u, static_cast<std::uint32_t>(sizeof(StrideHandshake)), STRIDE_FINGERPRINT,
                                         nullptr};
  return &handshake;
}
