// The `stride` command: run, validate, sweep, plugins.
// Exit codes: 0 success, 1 the simulation diverged, failed or was interrupted, 2 bad input.
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>

#include <CLI/CLI.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "fmu.hpp"
#include "stride/host/experiment.hpp"
#include "stride/host/output.hpp"
#include "stride/host/supervise.hpp"
#include "stride/host/sweep.hpp"

namespace {

using namespace stride;
using namespace stride::host;


void warn_refusals(const PluginRegistry& reg) {
  for (const auto& r : reg.refusals())
    std::cerr << "warning: plugin library " << r.file.string() << " refused: " << r.reason << "\n";
}

void load_plugins(PluginRegistry& reg, const std::vector<std::filesystem::path>& extra, bool warn) {
  auto dirs = PluginRegistry::default_search_path();
  dirs.insert(dirs.end(), extra.begin(), extra.end());
  reg.scan(dirs);
  if (warn) warn_refusals(reg);
}

// The experiment of a manifest with only the plugins it names, found through the index of the
// plugin folders. A name the index does not find, or any problem in the manifest, loads every
// plugin and builds again: the diagnostics then list everything that is available.
std::unique_ptr<Experiment> build_experiment(PluginRegistry& reg, Manifest m) {
  if (m.problems.empty()) {
    auto dirs = PluginRegistry::default_search_path();
    dirs.insert(dirs.end(), m.plugin_paths.begin(), m.plugin_paths.end());
    if (reg.load_named(dirs, plugin_names(m))) {
      try {
        auto ex = std::make_unique<Experiment>(m, reg);
        warn_refusals(reg);
        return ex;
      } catch (const ManifestError&) {
      }
    }
  }
  reg = PluginRegistry{};
  load_plugins(reg, m.plugin_paths, true);
  return std::make_unique<Experiment>(std::move(m), reg);
}

// A bound as the parameter's type writes it: 4 for an integer, 4.0 for a real.
json bound_json(const ParamSpec& p, double b) {
  if (p.type == ParamType::integer && std::abs(b) < 9e15 && b == std::floor(b)) return static_cast<long long>(b);
  return b;
}

json param_json(const ParamSpec& p) {
  json j{{"name", p.name}, {"type", to_string(p.type)}, {"default", p.default_value}, {"unit", p.unit}, {"doc", p.doc}};
  if (p.min) j["min"] = bound_json(p, *p.min);
  if (p.max) j["max"] = bound_json(p, *p.max);
  if (!p.choices.empty()) j["choices"] = p.choices;
  return j;
}

json port_json(const PortSpec& p) {
  json j{{"name", p.name},
         {"direction", p.direction == Direction::input ? "input" : "output"},
         {"size", p.size},
         {"unit", p.unit},
         {"doc", p.doc}};
  if (p.direction == Direction::output) j["feedthrough"] = p.feedthrough;
  if (p.role != BondRole::none) j["bond"] = {{"name", p.bond}, {"role", to_string(p.role)}};
  if (!p.elements.empty()) j["elements"] = p.elements;
  return j;
}

// Ports of a subsystem plugin with default parameters (ports may depend on parameters).
std::optional<std::vector<PortSpec>> default_ports(const PluginRegistry& reg, const LoadedPlugin& p, std::string& err) {
  try {
    if (p.fmu) return p.fmu->ports();  // from modelDescription.xml, without an instance
    switch (p.info().form) {
      case Form::stepper: return reg.create_subsystem(p.info().name, json::object())->ports();
      case Form::ode: return reg.create_ode(p.info().name, json::object())->ports();
      case Form::multibody:
#if __has_include(<stride/multibody.hpp>)
        return reg.create_model(p.info().name, json::object())->ports();
#else
        return std::nullopt;
#endif
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  return std::nullopt;
}

int describe(const PluginRegistry& reg, const std::string& name, bool as_json) {
  const LoadedPlugin* p = reg.find(name);
  // An FMU file: its parameters and ports, like a plugin's.
  if (!p && name.size() > 4 && name.compare(name.size() - 4, 4, ".fmu") == 0) {
    std::string why;
    p = reg.load_fmu(name, why);
    if (!p) {
      std::cerr << "error: " << why << "\n";
      return 2;
    }
  }
  if (!p) {
    std::vector<std::string> names;
    for (auto* q : reg.plugins()) names.push_back(q->info().name);
    std::cerr << "error: unknown plugin \"" << name << "\"";
    if (auto note = refused_note(reg, name); !note.empty()) std::cerr << note;
    else if (auto c = closest(name, names); !c.empty()) std::cerr << " (did you mean \"" << c << "\"?)";
    std::cerr << "; run `stride plugins` for the list\n";
    return 2;
  }
  const auto& info = p->info();
  std::string err;
  std::optional<std::vector<PortSpec>> ports;
  if (info.kind == Kind::subsystem) ports = default_ports(reg, *p, err);
  if (as_json) {
    json j{{"name", info.name}, {"kind", to_string(info.kind)}, {"version", info.version},
           {"description", info.description}, {"file", p->file.string()}, {"parameters", json::array()}};
    if (info.kind == Kind::subsystem) j["form"] = to_string(info.form);
    for (const auto& s : info.parameters) j["parameters"].push_back(param_json(s));
    if (ports) {
      j["ports"] = json::array();
      for (const auto& s : *ports) j["ports"].push_back(port_json(s));
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << info.name << " " << info.version << " (" << to_string(info.kind);
  if (info.kind == Kind::subsystem) std::cout << ", " << to_string(info.form);
  std::cout << ")\n  " << info.description << "\n  file: " << p->file.string() << "\n";
  std::cout << "parameters:\n";
  if (info.parameters.empty()) std::cout << "  (none)\n";
  for (const auto& s : info.parameters) {
    std::cout << "  " << s.name << " : " << to_string(s.type);
    if (!s.unit.empty() && s.unit != "1") std::cout << " [" << s.unit << "]";
    std::cout << " = " << (s.default_value.is_null() ? "(required)" : s.default_value.dump());
    if (s.min || s.max)
      std::cout << "  in [" << (s.min ? bound_json(s, *s.min).dump() : "-inf") << ", "
                << (s.max ? bound_json(s, *s.max).dump() : "inf") << "]";
    if (!s.choices.empty()) std::cout << "  one of " << json(s.choices).dump();
    std::cout << "\n      " << s.doc << "\n";
  }
  if (info.kind == Kind::subsystem) {
    std::cout << "ports (default parameters):\n";
    if (!ports) std::cout << "  (could not instantiate: " << err << ")\n";
    else
      for (const auto& s : *ports) {
        std::cout << "  " << (s.direction == Direction::input ? "in  " : "out ") << s.name << " [" << s.size << " x "
                  << (s.unit.empty() ? "1" : s.unit) << "]";
        if (s.direction == Direction::output && s.feedthrough) std::cout << " feedthrough";
        if (s.role != BondRole::none) std::cout << " bond " << s.bond << " (" << to_string(s.role) << ")";
        std::cout << "\n      " << s.doc << "\n";
      }
  }
  return 0;
}

int list_plugins(const PluginRegistry& reg, bool as_json) {
  if (as_json) {
    json j{{"plugins", json::array()}, {"refused", json::array()}};
    for (auto* p : reg.plugins())
      j["plugins"].push_back({{"name", p->info().name}, {"kind", to_string(p->info().kind)},
                              {"version", p->info().version}, {"description", p->info().description},
                              {"file", p->file.string()}});
    for (const auto& r : reg.refusals()) j["refused"].push_back({{"file", r.file.string()}, {"reason", r.reason}});
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  for (Kind k : {Kind::subsystem, Kind::formulation, Kind::integrator, Kind::extrapolator}) {
    auto ps = reg.plugins(k);
    std::cout << to_string(k) << "s:\n";
    if (ps.empty()) std::cout << "  (none)\n";
    for (auto* p : ps) {
      std::string n = p->info().name;
      n.resize(std::max<std::size_t>(n.size(), 26), ' ');
      std::cout << "  " << n << " " << p->info().version << "  " << p->info().description << "\n";
    }
  }
  if (!reg.refusals().empty()) {
    std::cout << "refused libraries:\n";
    for (const auto& r : reg.refusals()) std::cout << "  " << r.file.string() << ": " << r.reason << "\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  note_inherited_signals();
  CLI::App app{"Stride: multirate co-simulation of multiphysics systems"};
  app.require_subcommand(1);

  std::string manifest_path, out_dir, plugin_name;
  std::vector<std::string> sets;
  bool quiet = false, as_json = false;

  auto* run_cmd = app.add_subcommand("run", "run an experiment described by a manifest");
  run_cmd->add_option("manifest", manifest_path, "manifest (JSON)")->required();
  run_cmd->add_option("--out", out_dir, "output folder (default: the manifest's \"output\")");
  run_cmd->add_option("--set", sets, "override a manifest value: /json/pointer=value")->take_all();
  run_cmd->add_flag("--quiet", quiet, "no progress report");
  double grace = 3.0;
  bool in_process = false;
  run_cmd->add_option("--grace", grace, "seconds a plugin may take to return after Ctrl-C before the run is stopped")
      ->check(CLI::Range(0.0, 3600.0));
  run_cmd->add_flag("--in-process", in_process,
                    "run in this process instead of a supervised child (for debuggers; a crash then loses the summary)");

  auto* validate_cmd = app.add_subcommand("validate", "check a manifest without running it");
  validate_cmd->add_option("manifest", manifest_path, "manifest (JSON)")->required();
  validate_cmd->add_option("--set", sets, "override a manifest value: /json/pointer=value")->take_all();

  std::string sweep_path;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  auto* sweep_cmd = app.add_subcommand("sweep", "run a grid of manifest variants in parallel and find the largest stable step");
  sweep_cmd->add_option("sweep", sweep_path, "sweep description (JSON)")->required();
  sweep_cmd->add_option("--jobs", jobs, "runs at a time (default: all cores)")->check(CLI::Range(1, 1024));
  SweepOptions sweep_opt;
  sweep_cmd->add_option("--max-runs", sweep_opt.max_runs, "largest grid run without asking (default 10000)")
      ->check(CLI::Range(1.0, 1e12));
  sweep_cmd->add_option("--grace", sweep_opt.grace, "seconds a run may take to stop after Ctrl-C")->check(CLI::Range(0.0, 3600.0));

  auto* plugins_cmd = app.add_subcommand("plugins", "list the plugins found on the search path");
  plugins_cmd->add_flag("--json", as_json, "machine-readable output");
  auto* describe_cmd = plugins_cmd->add_subcommand("describe", "parameters and ports of one plugin");
  describe_cmd->add_option("name", plugin_name, "plugin name")->required();
  describe_cmd->add_flag("--json", as_json, "machine-readable output");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }

  if (sweep_cmd->parsed()) {
    sweep_opt.jobs = jobs;
    return run_sweep(sweep_path, sweep_opt);
  }

  PluginRegistry reg;
  if (plugins_cmd->parsed()) {
    load_plugins(reg, {}, false);
    if (describe_cmd->parsed()) return describe(reg, plugin_name, as_json);
    return list_plugins(reg, as_json);
  }

  std::unique_ptr<Experiment> ex;
  try {
    ex = build_experiment(reg, read_manifest(manifest_path, sets));
  } catch (const ManifestError& e) {
    std::cerr << "error: the manifest is not valid (" << e.diagnostics().size() << " problem"
              << (e.diagnostics().size() == 1 ? "" : "s") << "):\n";
    for (const auto& d : e.diagnostics()) std::cerr << "  " << d.str() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }

  if (validate_cmd->parsed()) {
    std::cout << manifest_path << ": valid (" << ex->subsystem_count() << " subsystems, "
              << ex->connection_count() << " connections, " << ex->columns().size() << " recorded columns)\n";
    for (const auto& c : ex->unit_conversions()) std::cout << "  unit conversion: " << c << "\n";
    for (const auto& c : ex->feedthrough_connections())
      std::cout << "  direct feedthrough: " << c << " (the source output depends on its inputs at the same time)\n";
    return 0;
  }

  RunOptions opt;
  opt.progress = !quiet;
  std::unique_ptr<OutputFolder> folder;
  try {
    folder = std::make_unique<OutputFolder>(out_dir.empty() ? ex->manifest().output : std::filesystem::path(out_dir),
                                            running_summary(*ex));
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  opt.folder = folder.get();
  auto report = [&](const json& s) {
    std::cerr << "status: " << s.value("status", "?") << ", t = " << s.value("end_time_reached", 0.0) << " s";
    if (s.contains("wall_time_s")) std::cerr << ", wall " << s.value("wall_time_s", 0.0) << " s";
    std::cerr << ", results in " << folder->path().string() << "\n";
    if (s.contains("message")) std::cerr << "cause: " << s.value("message", "") << "\n";
  };
  // The run itself, in this process: the caller (a supervisor, or --in-process) handles the rest.
  auto run_here = [&](const volatile int* stop, RunBeacon* beacon) {
    opt.stop = stop;
    opt.beacon = beacon;
    RunResult r = run(*ex, opt);
    report(r.summary);
    if (!r.summary_error.empty()) {
      std::cerr << "error: " << r.summary_error << "\n";
      return kExitSummaryNotWritten;
    }
    return exit_code_of(r.summary);
  };
  if (in_process) {
    RunBeacon* beacon = make_beacon();
    const int rc = run_here(install_run_signals(beacon), beacon);
    return rc == kExitSummaryNotWritten ? 1 : rc;
  }

  RunBeacon* beacon = make_beacon();
  block_supervisor_signals();
  std::signal(SIGPIPE, SIG_IGN);  // the supervisor's own stderr may be gone; it still writes the summary
  std::fflush(nullptr);
  std::cout.flush();
  const pid_t child = ::fork();
  if (child < 0) {
    std::cerr << "error: cannot start the run process: " << std::strerror(errno) << "\n";
    return 1;
  }
  if (child == 0) {
    const int rc = run_here(install_run_signals(beacon), beacon);
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  Supervisor supervisor(grace);
  supervisor.add(child);
  const auto ended = supervisor.wait();
  const ChildEnd end = ended ? ended->second : ChildEnd{};
  if (WIFEXITED(end.wait_status) && WEXITSTATUS(end.wait_status) == kExitSummaryNotWritten) return 1;
  const json s = conclude(folder->path(), end, *beacon);
  if (!s.contains("wall_time_s")) report(s);  // written here: the run process could not say it
  if (s.contains("summary_error")) std::cerr << "error: " << s.value("summary_error", "") << "\n";
  return exit_code_of(s);
}
