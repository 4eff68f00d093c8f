// The error a plugin's code raised (its factory, a call into it, an FMU's function), reported
// with the plugin's name. Thrown by the loader and the FMU adapters; caught where a run or a
// command reports it.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace stride::host {

class PluginError : public std::runtime_error {
 public:
  PluginError(std::string plugin, const std::string& what)
      : std::runtime_error("plugin '" + plugin + "': " + what), plugin_(std::move(plugin)) {}
  const std::string& plugin() const { return plugin_; }

 private:
  std::string plugin_;
};

}  // namespace stride::host
