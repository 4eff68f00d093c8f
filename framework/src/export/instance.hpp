// One instance of an exported experiment inside an importing process: the FMU's resources
// folder (manifest.json, stride_export.json, plugins/) made into an Experiment stepped by a
// Simulation (run/simulation.hpp). The FMI entry points (fmi2_binary.cpp) are a state machine
// around it. Internal to the host.
//
//   ExportedInstance x(resources, token);  // reads, checks the token, loads the plugins, builds
//   x.set(vr, v);                          // a parameter (before initialize(): the experiment is
//                                          // built again with it), or an input element: held
//                                          // from time() on (any time)
//   x.get(vr);                             // in initialization mode: the outputs of the initial
//                                          // state, before the subsystems equilibrate with the
//                                          // inputs (Simulation::initial_outputs)
//   x.initialize(start);                   // the experiment initialized with the inputs set:
//                                          // initialization mode ends
//   x.do_step(t, h);                       // Simulation::advance_to(t + h), on the grid when
//                                          // t + h is within round-off of a grid point
//   x.get(vr);                             // an output element at time()
//
// Throws std::runtime_error (or ManifestError, Stop) with the reason; after a failed step the
// caller refuses further steps. Each instance has its own registry, plugin objects and run
// state: instances in one process share nothing but the loaded libraries' code. One thread per
// instance.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>

#include "export/interface.hpp"
#include "run/simulation.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/load/registry.hpp"


namespace stride::host::fmu_export {

class ExportedInstance {
 public:
  // The subsystems' messages go to `log` (the importer's logger) instead of stderr.
  using MessageSink = std::function<void(LogLevel, const std::string&)>;
  ExportedInstance(const std::filesystem::path& resources, const std::string& token, MessageSink log = {});
  ~ExportedInstance();
  void initialize(double start);
  void do_step(double t, double h);
  double time() const;
  double start() const;
  double end() const;
  bool initialized() const { return initialized_; }
  // Throws std::out_of_range naming the value reference when it is none of the FMU's (or, for
  // set, an output).
  double get(std::uint32_t vr);
  // FMI 3 arrays: every element of the port behind vr, appended.
  void get_all(std::uint32_t vr, std::vector<double>& out);
  // An input element, or (FMI 3) every element of an array input from values[0..size).
  void set(std::uint32_t vr, std::span<const double> values);
  // FMU state (fmi2GetFMUstate / fmi3GetFMUState): after initialization, where the run can
  // save its state (Simulation::can_save). Throws std::runtime_error with the reason.
  struct State {
    Simulation::Saved run;
    std::map<std::string, std::vector<double>> inputs;
  };
  bool can_save_state() const;
  void save(State& s);
  void restore(const State& s);
  // Elements value reference vr stands for.
  std::size_t size(std::uint32_t vr) const { return binding(vr).size; }

 private:
  const PortBinding& binding(std::uint32_t vr) const;
  // Initialization mode: a Simulation's initial outputs with the inputs set so far.
  void initialization_mode_view();
  void fresh_simulation();
  void build();
  PluginRegistry registry_;
  std::unique_ptr<Experiment> experiment_;
  std::unique_ptr<Simulation> sim_;
  std::map<std::uint32_t, PortBinding> bindings_;
  std::map<std::string, std::vector<double>> inputs_;  // port -> its value, as set
  std::map<std::uint32_t, double> parameters_;          // value reference -> the value set
  std::filesystem::path manifest_;
  MessageSink log_;
  bool rebuild_ = false;                               // a parameter changed since build()
  bool initialized_ = false;                           // initialization mode has ended
  bool inputs_changed_ = true;                         // since sim_'s initial outputs
};

// The folder of a resourceLocation URI ("file:///a/b/resources/" or "file:/a/b", FMI 2; a plain
// path, FMI 3); percent escapes decoded. Throws std::runtime_error for another scheme.
std::filesystem::path folder_of_uri(const std::string& uri);

}  // namespace stride::host::fmu_export
