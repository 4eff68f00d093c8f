#include "stride/host/api/commands.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <iostream>

#include "fmi/default_experiment.hpp"
#include "fmi/fmu.hpp"
#include "stride/host/ssp/ssp.hpp"
#include "stride/host/input/json_input.hpp"
#include "stride/host/run/output.hpp"
#include "stride/host/run/supervise.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

void warn_refusals(const PluginRegistry& reg) {
  for (const auto& r : reg.refusals())
    std::cerr << "warning: plugin library " << r.file.string() << " refused: " << r.reason << "\n";
}

json param_json(const ParamSpec& p) {
  json j{{"name", p.name}, {"type", to_string(p.type)}, {"default", p.default_value}, {"unit", p.unit}, {"doc", p.doc}};
  if (p.min) j["min"] = bound_json(p, *p.min);
  if (p.max) j["max"] = bound_json(p, *p.max);
  if (!p.choices.empty()) j["choices"] = p.choices;
  if (!p.column_units.empty()) j["column_units"] = p.column_units;
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

}  // namespace

void use_fmu_default_experiments() { set_document_completion(&fmi::complete_from_fmus); }

void load_plugins(PluginRegistry& reg, const std::vector<fs::path>& extra, bool warn) {
  auto dirs = PluginRegistry::default_search_path();
  dirs.insert(dirs.end(), extra.begin(), extra.end());
  reg.scan(dirs);
  if (warn) warn_refusals(reg);
}

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

Manifest manifest_of(const std::string& path, const std::vector<std::string>& overrides,
                     const ssp::SystemChoice& choice) {
  const bool fmu = path.size() > 4 && path.compare(path.size() - 4, 4, ".fmu") == 0;
  if ((fmu || !ssp::is_ssp_file(path)) && (!choice.ssd.empty() || !choice.parameter_set.empty()))
    throw ManifestError(
        {{path, "", "--ssd and --parameter-set choose within an SSP system, not a manifest or an FMU"}});
  if (fmu) return read_manifest_text(fmi::fmu_manifest(path).dump(2), path, overrides);
  if (!ssp::is_ssp_file(path)) return read_manifest(path, overrides);
  ssp::SspManifest s = ssp::read_ssp(path, choice);
  Manifest m = read_manifest_text(s.text, path, overrides);
  ssp::attribute_to_ssp(m.problems, s.origins);
  m.origins = std::move(s.origins);
  m.notes = std::move(s.notes);
  m.keep = std::move(s.keep);
  return m;
}

std::unique_ptr<Experiment> experiment_of(PluginRegistry& reg, const std::string& path,
                                          const std::vector<std::string>& overrides, const ssp::SystemChoice& choice) {
  Manifest m = manifest_of(path, overrides, choice);
  const auto origins = m.origins;
  try {
    return build_experiment(reg, std::move(m));
  } catch (const ManifestError& e) {
    if (origins.empty()) throw;
    std::vector<Diagnostic> d = e.diagnostics();
    ssp::attribute_to_ssp(d, origins);
    throw ManifestError(std::move(d));
  }
}

std::vector<ConvertedValue> converted_values(const Manifest& m, const PluginRegistry& reg) {
  std::vector<ConvertedValue> out = m.converted;
  for (ConvertedValue& c : converted_parameters(m, reg)) out.push_back(std::move(c));
  return out;
}

const LoadedPlugin& find_plugin(const PluginRegistry& reg, const std::string& name) {
  if (const LoadedPlugin* p = reg.find(name)) return *p;
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".fmu") == 0) {
    std::string why;
    if (const LoadedPlugin* p = reg.load_fmu(name, why)) return *p;
    throw std::invalid_argument(why);
  }
  std::vector<std::string> names;
  for (auto* q : reg.plugins()) names.push_back(q->info().name);
  std::string msg = "unknown plugin \"" + name + "\"";
  if (auto note = refused_note(reg, name); !note.empty()) msg += note;
  else if (auto c = closest(name, names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
  throw UnknownPlugin(msg + searched_note(reg) + "; run `stride plugins` for the list");
}

std::optional<std::vector<PortSpec>> ports_for(const PluginRegistry& reg, const LoadedPlugin& p, const json& params,
                                               std::string& err) {
  try {
    if (p.fmu) return p.fmu->ports(params);  // from modelDescription.xml, without an instance
    switch (p.info().form) {
      case Form::stepper: return reg.create_subsystem(p.info().name, params)->ports();
      case Form::ode: return reg.create_ode(p.info().name, params)->ports();
      case Form::multibody:
#if __has_include(<stride/multibody.hpp>)
        return reg.create_model(p.info().name, params)->ports();
#else
        return std::nullopt;
#endif
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  return std::nullopt;
}

json bound_json(const ParamSpec& p, double b) {
  if ((p.type == ParamType::integer || p.type == ParamType::integer_list) && std::abs(b) < 9e15 && b == std::floor(b))
    return static_cast<long long>(b);
  return b;
}

json plugin_list_json(const PluginRegistry& reg) {
  json j{{"plugins", json::array()}, {"refused", json::array()}};
  for (auto* p : reg.plugins())
    j["plugins"].push_back({{"name", p->info().name},
                            {"kind", to_string(p->info().kind)},
                            {"version", p->info().version},
                            {"description", p->info().description},
                            {"file", p->file.string()}});
  for (const auto& r : reg.refusals()) j["refused"].push_back({{"file", r.file.string()}, {"reason", r.reason}});
  j["searched"] = json::array();
  for (const auto& f : reg.searched()) j["searched"].push_back(f.string());
  return j;
}

json describe_parameters(const LoadedPlugin& p, const std::vector<std::string>& assignments) {
  const auto& specs = p.info().parameters;
  json out = json::object();
  for (const auto& a : assignments) {
    const auto eq = a.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("--set " + a + ": expected NAME=VALUE with a parameter name, e.g. --set actuators=2");
    const std::string name = a.substr(0, eq), text = a.substr(eq + 1);
    auto spec = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& s) { return s.name == name; });
    if (spec == specs.end()) {
      std::vector<std::string> names;
      for (const auto& s : specs) names.push_back(s.name);
      std::string msg = "--set " + a + ": plugin \"" + p.info().name + "\" has no parameter \"" + name + "\"";
      if (auto c = closest(name, names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      throw std::invalid_argument(msg + "; parameters: " + listed(names));
    }
    json value = json::parse(text, nullptr, false);
    if (value.is_discarded()) value = text;
    if (auto err = check_param(*spec, value); !err.empty()) throw std::invalid_argument("--set " + a + ": " + err);
    out[name] = value;
  }
  return out;
}

json fmu_summary_json(const LoadedPlugin& p, const json& parameters) {
  if (!p.fmu) throw std::logic_error("fmu_summary_json: " + p.info().name + " is not an FMU");
  const fmi::ModelDescription& md = p.fmu->description();
  json interfaces = json::array();
  if (md.has_cs) interfaces.push_back("co-simulation");
  if (md.has_me) interfaces.push_back("model exchange");
  if (md.has_se) interfaces.push_back("scheduled execution");
  const fmi::Shape shape = fmi::shape(md, parameters);
  json experiment = json::object();
  const fmi::DefaultExperiment& e = md.experiment;
  for (const auto& [key, value] :
       {std::pair{"start", e.start}, {"stop", e.stop}, {"step", e.step}, {"tolerance", e.tolerance}})
    if (value) experiment[key] = *value;
  return {{"fmi_version", md.fmi_version},
          {"interfaces", interfaces},
          {"generation_tool", md.generation_tool.empty() ? json(nullptr) : json(md.generation_tool)},
          {"states", shape.states},
          {"event_indicators", shape.indicators},
          {"default_experiment", experiment}};
}

json plugin_description_json(const PluginRegistry& reg, const LoadedPlugin& p, const json& params) {
  const auto& info = p.info();
  json j{{"name", info.name},       {"kind", to_string(info.kind)},
         {"version", info.version}, {"description", info.description},
         {"file", p.file.string()}, {"parameters", json::array()}};
  if (info.kind == Kind::subsystem) j["form"] = to_string(info.form);
  j["process_per_run"] = info.process_per_run;
  for (const auto& s : info.parameters) j["parameters"].push_back(param_json(s));
  if (info.kind == Kind::subsystem) {
    std::string err;
    if (auto ports = ports_for(reg, p, params, err)) {
      j["ports"] = json::array();
      for (const auto& s : *ports) j["ports"].push_back(port_json(s));
    } else {
      j["ports_error"] = err;
    }
    if (!params.empty()) j["port_parameters"] = params;
  }
  if (p.fmu) {
    j["fmu"] = fmu_summary_json(p, params);
    j["text_variables"] = json::array();
    for (const TextPortSpec& v : p.fmu->text_ports(params)) {
      json t{{"name", v.name}, {"causality", v.causality}, {"type", v.type()}, {"size", v.size}, {"doc", v.doc}};
      if (v.causality == "output") t["feedthrough"] = v.feedthrough;
      j["text_variables"].push_back(std::move(t));
    }
  }
  return j;
}

SupervisedRun run_supervised(Experiment& ex, RunOptions opt, double grace,
                             const std::function<void(const json&)>& report, const std::function<void()>& forked) {
  if (!opt.folder) throw std::logic_error("run_supervised: no output folder");
  RunBeacon* beacon = make_beacon();
  sigset_t old_mask;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &old_mask);
  block_supervisor_signals();
  // The supervisor's own stderr may be gone; it still writes the summary.
  struct sigaction old_pipe {};
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old_pipe);
  auto restore = [&] {
    ::sigaction(SIGPIPE, &old_pipe, nullptr);
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    free_beacon(beacon);
  };
  std::fflush(nullptr);
  std::cout.flush();
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    const std::string why = std::strerror(errno);
    restore();
    throw std::runtime_error("cannot start the run process: " + why);
  }
  if (child == 0) {
    end_with_parent(parent, grace);
    opt.stop = install_run_signals(beacon);
    opt.beacon = beacon;
    int rc = 1;
    try {
      RunResult r = run(ex, opt);
      if (r.summary_error.empty()) note_parent_ended(r.summary, *opt.folder);
      report(r.summary);
      if (!r.summary_error.empty()) {
        std::cerr << "error: " << r.summary_error << "\n";
        rc = kExitSummaryNotWritten;
      } else {
        rc = exit_code_of(r.summary);
      }
    } catch (const std::exception& e) {
      std::cerr << "error: " << e.what() << "\n";
    }
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(rc);
  }
  if (forked) forked();
  Supervisor supervisor(grace);
  supervisor.add(child);
  const auto ended = supervisor.wait();
  const ChildEnd end = ended ? ended->second : ChildEnd{};
  SupervisedRun out;
  out.stop_signal = supervisor.stop_signal();
  if (WIFEXITED(end.wait_status) && WEXITSTATUS(end.wait_status) == kExitSummaryNotWritten) {
    // The run reported its outcome and why summary.json could not be written.
    out.summary = {{"status", "failed"}, {"summary_error", "the run process could not write summary.json"}};
    out.exit_code = 1;
    restore();
    return out;
  }
  out.summary = conclude(opt.folder->path(), end, *beacon);
  if (!out.summary.contains("wall_time_s")) report(out.summary);  // written here: the run process could not say it
  if (out.summary.contains("summary_error")) std::cerr << "error: " << out.summary.value("summary_error", "") << "\n";
  out.exit_code = exit_code_of(out.summary);
  restore();
  return out;
}

}  // namespace stride::host
