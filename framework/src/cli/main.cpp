// The `stride` command: run, validate, sweep, plugins.
// Exit codes: 0 success, 1 the simulation diverged, failed or was interrupted, 2 bad input.
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include <CLI/CLI.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "stride/host/cli/commands.hpp"
#include "stride/host/export/export.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/run/output.hpp"
#include "stride/host/run/supervise.hpp"
#include "stride/host/sweep/sweep.hpp"
#include "fmi/fmu.hpp"
#include "sweep/mpi/sweep_mpi.hpp"

namespace {

using namespace stride;
using namespace stride::host;


// An FMU's String and Binary variables: no ports, yet connected (String to String, Binary to
// Binary, element by element) and recorded by name.
void describe_text_variables(const fmi::FmuPlugin& fmu, const json& params) {
  const auto vars = fmu.text_variables(params);
  if (vars.empty()) return;
  std::cout << "String and Binary variables (connected String to String, Binary to Binary; recorded by name):\n";
  for (const auto& v : vars) {
    const std::string role = v.causality == "input" ? "in  " : v.causality == "output" ? "out " : v.causality + " ";
    std::cout << "  " << role << v.name << " [" << v.size << " x " << v.type << "]" << (v.feedthrough ? " feedthrough" : "")
              << "\n      " << v.doc << "\n";
  }
}

int describe(const PluginRegistry& reg, const std::string& name, const std::vector<std::string>& sets, bool as_json) {
  const LoadedPlugin* p = nullptr;
  json params;
  try {
    p = &find_plugin(reg, name);
    params = describe_parameters(*p, sets);
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  const auto& info = p->info();
  if (as_json) {
    std::cout << plugin_description_json(reg, *p, params).dump(2) << "\n";
    return 0;
  }
  std::string err;
  std::optional<std::vector<PortSpec>> ports;
  if (info.kind == Kind::subsystem) ports = ports_for(reg, *p, params, err);
  std::cout << info.name << " " << info.version << " (" << to_string(info.kind);
  if (info.kind == Kind::subsystem) std::cout << ", " << to_string(info.form);
  std::cout << ")\n  " << info.description << "\n  file: " << p->file.string() << "\n";
  if (info.process_per_run) std::cout << "  keeps state between runs: a sweep gives each of its runs a fresh process\n";
  std::cout << "parameters:\n";
  if (info.parameters.empty()) std::cout << "  (none)\n";
  for (const auto& s : info.parameters) {
    std::cout << "  " << s.name << " : " << to_string(s.type);
    if (!s.unit.empty() && s.unit != "1") std::cout << " [" << s.unit << "]";
    if (!s.column_units.empty()) {
      // Tables: "[x: m, y: m^3/s]", or y_1, y_2, ... for several columns.
      std::cout << " [x: " << s.column_units[0];
      for (std::size_t c = 1; c < s.column_units.size(); ++c)
        std::cout << ", y" << (s.column_units.size() > 2 ? "_" + std::to_string(c) : std::string()) << ": " << s.column_units[c];
      std::cout << "]";
    }
    std::cout << " = " << (s.default_value.is_null() ? "(required)" : s.default_value.dump());
    if (s.min || s.max)
      std::cout << "  in [" << (s.min ? bound_json(s, *s.min).dump() : "-inf") << ", "
                << (s.max ? bound_json(s, *s.max).dump() : "inf") << "]";
    if (!s.choices.empty()) std::cout << "  one of " << json(s.choices).dump();
    std::cout << "\n      " << s.doc << "\n";
  }
  if (info.kind == Kind::subsystem) {
    std::string with;
    for (auto it = params.begin(); it != params.end(); ++it) with += (with.empty() ? "" : ", ") + it.key() + " = " + it.value().dump();
    std::cout << "ports (" << (with.empty() ? std::string("default parameters") : with + ", defaults for the rest") << "):\n";
    if (!ports) std::cout << "  (could not instantiate: " << err << ")\n";
    else if (ports->empty()) std::cout << "  (none)\n";
    else
      for (const auto& s : *ports) {
        std::cout << "  " << (s.direction == Direction::input ? "in  " : "out ") << s.name << " [" << s.size << " x "
                  << (s.unit.empty() ? "1" : s.unit) << "]";
        if (s.direction == Direction::output && s.feedthrough) std::cout << " feedthrough";
        if (s.role != BondRole::none) std::cout << " bond " << s.bond << " (" << to_string(s.role) << ")";
        std::cout << "\n      " << s.doc << "\n";
      }
  }
  if (p->fmu) describe_text_variables(*p->fmu, params);
  return 0;
}

int list_plugins(const PluginRegistry& reg, bool as_json) {
  if (as_json) {
    std::cout << plugin_list_json(reg).dump(2) << "\n";
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
  std::cout << "searched, in order:\n";
  for (const auto& f : reg.searched()) std::cout << "  " << f.string() << "\n";
  std::cout << "(more folders: STRIDE_PLUGIN_PATH=DIR[:DIR...], or a manifest's \"plugin_paths\")\n";
  return 0;
}

// `stride export`: exit 2 for an invalid manifest or what cannot be exported (or held by an
// SSP), 0 with the summary `write` prints.
template <class Write>
int exporting(Write&& write) {
  try {
    write();
    return 0;
  } catch (const ManifestError& e) {
    std::cerr << "error: the manifest is not valid (" << e.diagnostics().size() << " problem"
              << (e.diagnostics().size() == 1 ? "" : "s") << "):\n";
    for (const auto& d : e.diagnostics()) std::cerr << "  " << d.str() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
  }
  return 2;
}

int export_command(const std::string& manifest, const std::string& out, int fmi_version,
                   const std::string& subsystem) {
  return exporting([&] {
    const ExportReport r = export_fmu(manifest, out, fmi_version, subsystem);
    std::cout << out << ": FMI " << fmi_version << ".0 co-simulation FMU \"" << r.model_identifier << "\" ("
              << r.inputs << " inputs, " << r.outputs << " outputs, " << r.parameters << " parameters, " << r.plugins
              << " plugin libraries packed)\n";
  });
}

int export_ssp_command(const std::string& manifest, const std::string& out, int fmi) {
  return exporting([&] {
    const SspReport r = export_ssp(manifest, out, fmi);
    std::cout << out << ": SSP 1.0 package (" << r.components << " components, " << r.connections << " connections, "
              << r.parameters << " parameters, " << r.fmus << " FMUs packed)\n";
  });
}

// Started by mpirun (Open MPI, or a PMI/PMIx launcher): a sweep spreads over the ranks.
bool launched_by_mpi() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMIX_RANK") || std::getenv("PMI_SIZE");
}

// The command line: the subcommands and the options they fill.
struct CommandLine {
  CLI::App app{"Stride: multirate co-simulation of multiphysics systems"};
  std::string manifest_path, out_dir, plugin_name, sweep_path;
  std::vector<std::string> sets, describe_sets;
  bool quiet = false, as_json = false, in_process = false;
  double grace = 3.0;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  SweepOptions sweep_opt;
  CLI::App *run_cmd = nullptr, *validate_cmd = nullptr, *sweep_cmd = nullptr, *plugins_cmd = nullptr,
           *describe_cmd = nullptr, *export_cmd = nullptr;
  std::string fmu_out, export_subsystem, ssp_out;
  bool ssp_fmus = false;
  int fmi_version = 2;

  CommandLine() {
    app.require_subcommand(1);
    add_run();
    validate_cmd = app.add_subcommand("validate", "check a manifest without running it");
    validate_cmd->add_option("manifest", manifest_path, "manifest (JSON), an FMU, or an SSP system (.ssp, .ssd)")->required();
    validate_cmd->add_option("--set", sets, "override a manifest value: /json/pointer=value")->take_all();
    add_sweep();
    export_cmd = app.add_subcommand("export", "pack an experiment as an FMI 2.0 or 3.0 co-simulation FMU");
    export_cmd->add_option("manifest", manifest_path, "manifest (JSON)")->required();
    export_cmd->add_option("-o,--out", fmu_out, "the FMU file to write");
    export_cmd->add_option("--ssp", ssp_out,
                           "write the manifest (or SSP system) as an SSP 1.0 package instead of an FMU");
    export_cmd->add_flag("--fmus", ssp_fmus,
                         "with --ssp: export every plugin subsystem as an FMU (of --fmi) so that every component is "
                         "an FMU");
    export_cmd->add_option("--fmi", fmi_version, "FMI version: 2 (default) or 3")->check(CLI::IsMember({2, 3}));
    export_cmd->add_option("--subsystem", export_subsystem,
                           "export this subsystem alone (its inputs become the FMU's inputs); default: the whole "
                           "experiment");
    plugins_cmd = app.add_subcommand("plugins", "list the plugins found on the search path");
    plugins_cmd->add_flag("--json", as_json, "machine-readable output");
    describe_cmd = plugins_cmd->add_subcommand("describe", "parameters and ports of one plugin");
    describe_cmd->add_option("name", plugin_name, "plugin name")->required();
    describe_cmd->add_flag("--json", as_json, "machine-readable output");
    describe_cmd->add_option("--set", describe_sets, "NAME=VALUE: a parameter value for the ports shown (repeatable)");
  }

  void add_run() {
    run_cmd = app.add_subcommand("run", "run an experiment described by a manifest");
    run_cmd->add_option("manifest", manifest_path, "manifest (JSON), an FMU to run on its default experiment, or an SSP system (.ssp, .ssd)")->required();
    run_cmd->add_option("--out", out_dir, "output folder (default: the manifest's \"output\")");
    run_cmd->add_option("--set", sets, "override a manifest value: /json/pointer=value")->take_all();
    run_cmd->add_flag("--quiet", quiet, "no progress report");
    run_cmd->add_option("--grace", grace, "seconds a plugin may take to return after Ctrl-C before the run is stopped")
        ->check(CLI::Range(0.0, 3600.0));
    run_cmd->add_flag(
        "--in-process", in_process,
        "run in this process instead of a supervised child (for debuggers; a crash then loses the summary)");
  }

  void add_sweep() {
    sweep_cmd =
        app.add_subcommand("sweep", "run a grid of manifest variants in parallel and find the largest stable step");
    sweep_cmd->add_option("sweep", sweep_path, "sweep description (JSON)")->required();
    sweep_cmd->add_option("--jobs", jobs, "runs at a time (default: all cores)")->check(CLI::Range(1, 1024));
    sweep_cmd->add_option("--max-runs", sweep_opt.max_runs, "largest grid run without asking (default 10000)")
        ->check(CLI::Range(1.0, 1e12));
    sweep_cmd->add_option("--grace", sweep_opt.grace, "seconds a run may take to stop after Ctrl-C")
        ->check(CLI::Range(0.0, 3600.0));
    sweep_cmd->add_flag(
        "--process-per-run", sweep_opt.process_per_run,
        "start a fresh process for every run instead of reusing workers (for plugins that keep globals)");
  }
};

// `stride sweep`, here or (started by mpirun) spread over the ranks.
int sweep_command(int argc, char** argv, CommandLine& cl) {
  cl.sweep_opt.jobs = cl.jobs;
  if (launched_by_mpi()) {
    return sweep_under_mpirun(argc, argv, cl.sweep_path, cl.sweep_opt);
  }
  return run_sweep(cl.sweep_path, cl.sweep_opt);
}

// `stride validate`: what was checked and what the run will do that the manifest does not say.
int validate_report(const std::string& manifest_path, const Experiment& ex, const PluginRegistry& reg) {
  std::cout << manifest_path << ": valid (" << ex.subsystem_count() << " subsystems, " << ex.connection_count()
            << " connections, " << ex.columns().size() << " recorded columns)\n";
  for (const auto& c : converted_values(ex.manifest(), reg)) std::cout << "  value converted: " << c.str() << "\n";
  for (const auto& c : ex.manifest().from_fmus) std::cout << "  " << c << "\n";
  for (const auto& n : ex.manifest().notes) std::cout << "  note: " << n << "\n";
  for (const auto& c : ex.unit_conversions()) std::cout << "  unit conversion: " << c << "\n";
  for (const auto& c : ex.unconnected_inputs()) std::cout << "  unconnected FMU input, kept at its start value: " << c << "\n";
  for (const auto& c : ex.bond_delays()) std::cout << "  power bond " << c << "\n";
  for (const auto& c : ex.bond_warnings()) std::cout << "  warning: " << c << "\n";
  for (const auto& c : ex.manifest().warnings) std::cout << "  warning: " << c << "\n";
  for (const auto& c : ex.feedthrough_connections())
    std::cout << "  direct feedthrough: " << c << " (the source output depends on its inputs at the same time)\n";
  return 0;
}

// `stride run`: the folder marked, then the run in a supervised child (or here, --in-process).
int run_command(const CommandLine& cl, Experiment& ex) {
  RunOptions opt;
  opt.progress = !cl.quiet;
  std::unique_ptr<OutputFolder> folder;
  try {
    folder = std::make_unique<OutputFolder>(
        cl.out_dir.empty() ? ex.manifest().output : std::filesystem::path(cl.out_dir), running_summary(ex));
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
  if (cl.in_process) {
    RunBeacon* beacon = make_beacon();
    opt.stop = install_run_signals(beacon);
    opt.beacon = beacon;
    RunResult r = run(ex, opt);
    report(r.summary);
    if (!r.summary_error.empty()) std::cerr << "error: " << r.summary_error << "\n";
    return r.summary_error.empty() ? exit_code_of(r.summary) : 1;
  }
  try {
    return run_supervised(ex, opt, cl.grace, report).exit_code;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

int main(int argc, char** argv) {
  note_inherited_signals();
  use_fmu_default_experiments();
  CommandLine cl;
  try {
    cl.app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = cl.app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  if (cl.sweep_cmd->parsed()) return sweep_command(argc, argv, cl);
  if (cl.export_cmd->parsed() && !cl.ssp_out.empty()) return export_ssp_command(cl.manifest_path, cl.ssp_out, cl.ssp_fmus ? cl.fmi_version : 0);
  if (cl.export_cmd->parsed() && cl.fmu_out.empty()) {
    std::cerr << "error: export: give the FMU to write (-o FILE.fmu) or the SSP package (--ssp FILE.ssp)\n";
    return 2;
  }
  if (cl.export_cmd->parsed()) return export_command(cl.manifest_path, cl.fmu_out, cl.fmi_version, cl.export_subsystem);

  PluginRegistry reg;
  if (cl.plugins_cmd->parsed()) {
    load_plugins(reg, {}, false);
    if (cl.describe_cmd->parsed()) return describe(reg, cl.plugin_name, cl.describe_sets, cl.as_json);
    return list_plugins(reg, cl.as_json);
  }

  std::unique_ptr<Experiment> ex;
  try {
    ex = experiment_of(reg, cl.manifest_path, cl.sets);
  } catch (const ManifestError& e) {
    std::cerr << "error: the manifest is not valid (" << e.diagnostics().size() << " problem"
              << (e.diagnostics().size() == 1 ? "" : "s") << "):\n";
    for (const auto& d : e.diagnostics()) std::cerr << "  " << d.str() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  }
  if (cl.validate_cmd->parsed()) return validate_report(cl.manifest_path, *ex, reg);
  return run_command(cl, *ex);
}
