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

}  // namespace stride_test
