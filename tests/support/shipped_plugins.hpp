// The plugins of this build, loaded once per test executable.
#pragma once

#include <cstdio>

#include <stride/host/load/registry.hpp>

namespace stride_test {

inline stride::host::PluginRegistry& registry() {
  static stride::host::PluginRegistry r = [] {
    stride::host::PluginRegistry reg;
    reg.scan(stride::host::PluginRegistry::default_search_path());
    for (const auto& f : reg.refusals()) std::fprintf(stderr, "refused %s: %s\n", f.file.c_str(), f.reason.c_str());
    return reg;
  }();
  return r;
}

#ifdef STRIDE_TEST_RUNTIME_DIR
// The plugins of this build and the test plugins of tests/broken_plugins/runtime (for the test
// executables tests/broken_plugins/CMakeLists.txt gives that folder).
inline const stride::host::PluginRegistry& registry_with_test_plugins() {
  static const stride::host::PluginRegistry r = [] {
    stride::host::PluginRegistry reg;
    reg.scan({STRIDE_BUILD_PLUGIN_DIR, STRIDE_TEST_RUNTIME_DIR});
    return reg;
  }();
  return r;
}
#endif

}  // namespace stride_test
