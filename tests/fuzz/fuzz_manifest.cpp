// Fuzz target: what `stride validate` does with a manifest. The input is the manifest's text,
// optionally preceded by lines "--set POINTER=VALUE" (the command line's overrides). Reading
// the document, the overrides, the structure checks and building the experiment (every plugin
// object created with the fuzzed parameters and checked) must end in a ManifestError or a valid
// experiment, never in a crash, a sanitizer report, a hang or unbounded memory.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/load/registry.hpp"

using namespace stride::host;

namespace {

const PluginRegistry& registry() {
  static PluginRegistry reg = [] {
    PluginRegistry r;
    r.scan({STRIDE_BUILD_PLUGIN_DIR});
    return r;
  }();
  return reg;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> overrides;
  while (text.rfind("--set ", 0) == 0) {
    const auto eol = text.find('\n');
    overrides.push_back(text.substr(6, eol == std::string::npos ? std::string::npos : eol - 6));
    text.erase(0, eol == std::string::npos ? text.size() : eol + 1);
  }
  // Relative paths (plugin_paths, output, tables) resolve against the shipped manifests.
  const std::string file = STRIDE_SOURCE_DIR "/manifests/fuzz.json";
  try {
    Manifest m = read_manifest_text(text, file, overrides);
    Experiment ex(std::move(m), registry());
    (void)ex.columns();
    (void)ex.feedthrough_connections();
    (void)running_summary(ex).dump();
  } catch (const ManifestError& e) {
    for (const auto& d : e.diagnostics()) (void)d.str();
  } catch (const std::exception&) {
    // Any other error is reported by `stride` as "error: ..." with exit 2: also acceptable.
  }
  return 0;
}
