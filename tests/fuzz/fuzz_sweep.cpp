// Fuzz target: reading a sweep file (`stride sweep`). Every input must end in a SweepSpec or a
// ManifestError with pointers, never in a crash, a sanitizer report or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string>

#include "stride/host/input/json_input.hpp"
#include "stride/host/sweep/sweep.hpp"

using namespace stride::host;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const SweepSpec spec = parse_sweep(text, STRIDE_SOURCE_DIR "/manifests/sweeps/fuzz.json");
    (void)spec.runs;
  } catch (const ManifestError& e) {
    for (const auto& d : e.diagnostics()) (void)d.str();
  } catch (const std::exception&) {
  }
  return 0;
}
