// The compiled part of the Python module `stride` (python/stride/__init__.py wraps it): the
// host library's own functions, with JSON passed as text (the Python side parses it with the
// json module, so nothing here converts values by hand).
//
// Every run happens in a child process forked from the interpreter and supervised here
// (run_supervised, the same as `stride run`): a plugin that crashes, calls exit() or hangs ends
// the child, never the interpreter. Ctrl-C during a run is forwarded to the child, which stops
// with status "interrupted"; the Python side then raises stride.Interrupted.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "stride/host/api/commands.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/run/output.hpp"
#include "stride/host/sweep/sweep.hpp"
#include "stride/host/view/view.hpp"

namespace py = pybind11;
namespace fs = std::filesystem;
using namespace stride;
using namespace stride::host;

namespace {

// Exception types of the module; created in PYBIND11_MODULE, alive as long as the module.
PyObject* g_manifest_error = nullptr;
PyObject* g_unknown_plugin = nullptr;
PyObject* g_output_error = nullptr;

// Raises ManifestError(message) with .diagnostics = [(file, pointer, message), ...].
void raise_manifest_error(const std::string& message, const std::vector<Diagnostic>& diags) {
  py::list ds;
  for (const auto& d : diags) ds.append(py::make_tuple(d.file, d.pointer, d.message));
  py::object e = py::reinterpret_borrow<py::object>(g_manifest_error)(message);
  e.attr("diagnostics") = ds;
  PyErr_SetObject(g_manifest_error, e.ptr());
}

// JSON text for the Python side; bytes that are not UTF-8 (a plugin's message) become U+FFFD.
std::string text(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

// The text `stride` prints for an invalid manifest (after "error: ").
std::string manifest_report(const ManifestError& e) {
  const auto& d = e.diagnostics();
  std::string s = "the manifest is not valid (" + std::to_string(d.size()) + " problem" + (d.size() == 1 ? "" : "s") + "):";
  for (const auto& x : d) s += "\n  " + x.str();
  return s;
}

std::unique_ptr<Experiment> experiment_of(PluginRegistry& reg, const fs::path& manifest, const std::vector<std::string>& sets) {
  return experiment_of(reg, manifest.string(), sets);
}

// Every manifest value written with a unit: [{"pointer", "written", "value", "unit"}].
json converted_values_json(const Manifest& m, const PluginRegistry& reg) {
  json out = json::array();
  for (const auto& c : converted_values(m, reg))
    out.push_back({{"pointer", c.pointer}, {"written", c.written}, {"value", c.value}, {"unit", c.unit}});
  return out;
}

std::string validate(const fs::path& manifest, const std::vector<std::string>& sets) {
  PluginRegistry reg;
  auto ex = experiment_of(reg, manifest, sets);
  json j{{"manifest", manifest.string()},
         {"subsystems", ex->subsystem_count()},
         {"connections", ex->connection_count()},
         {"columns", ex->columns()},
         {"unit_conversions", ex->unit_conversions()},
         {"converted_values", converted_values_json(ex->manifest(), reg)},
         {"power_bond_delays", ex->bond_delays()},
         {"power_bond_warnings", ex->bond_warnings()},
         {"feedthrough_loops", ex->feedthrough_loops()},
         {"feedthrough", ex->feedthrough_connections()},
         {"output", ex->manifest().output.string()},
         {"document", ex->manifest().document}};
  return text(j);
}

std::string run_manifest(const fs::path& manifest, const std::vector<std::string>& sets, const fs::path& out,
                         bool progress, double grace) {
  PluginRegistry reg;
  auto ex = experiment_of(reg, manifest, sets);
  // A Ctrl-C while the plugins loaded went to Python's handler: honour it before anything runs.
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  const OutputFolder folder(out.empty() ? ex->manifest().output : out, running_summary(*ex));
  RunOptions opt;
  opt.progress = progress;
  opt.folder = &folder;
  auto report = [&](const json& s) {
    if (!progress) return;
    std::cerr << "status: " << s.value("status", "?") << ", t = " << s.value("end_time_reached", 0.0) << " s"
              << ", results in " << folder.path().string() << "\n";
    if (s.contains("message")) std::cerr << "cause: " << s.value("message", "") << "\n";
  };
  SupervisedRun r;
  {
    py::gil_scoped_release unlocked;  // the run may take minutes; other Python threads go on
    r = run_supervised(*ex, opt, grace, report);
  }
  return text(json{{"output", folder.path().string()},
                   {"summary", r.summary},
                   {"exit_code", r.exit_code},
                   {"stop_signal", r.stop_signal}});
}

std::string run_sweep_file(const fs::path& file, int jobs, double max_runs, double grace, bool process_per_run) {
  SweepOptions opt;
  opt.jobs = jobs;
  opt.process_per_run = process_per_run;
  opt.max_runs = max_runs;
  opt.grace = grace;
  if (jobs < 1) throw std::invalid_argument("jobs must be at least 1, found " + std::to_string(jobs));
  if (!(max_runs >= 1)) throw std::invalid_argument("max_runs must be at least 1");
  if (!(grace >= 0 && grace <= 3600)) throw std::invalid_argument("grace must be in [0, 3600] s");
  SweepOutcome o;
  {
    py::gil_scoped_release unlocked;
    o = sweep(file, opt);
  }
  return text(json{{"output", o.output.string()}, {"finished", o.finished}, {"error", o.error}});
}

std::string plugins() {
  PluginRegistry reg;
  load_plugins(reg, {}, false);
  return text(plugin_list_json(reg));
}

// `sets`: "name=value" as `stride plugins describe NAME --set` takes them (the ports for those
// parameter values); a bad name or value raises ValueError.
std::string describe(const std::string& name, const std::vector<std::string>& sets) {
  PluginRegistry reg;
  load_plugins(reg, {}, false);
  const LoadedPlugin& p = find_plugin(reg, name);
  return text(plugin_description_json(reg, p, describe_parameters(p, sets)));
}

}  // namespace

PYBIND11_MODULE(_stride, m) {
  stride::host::use_fmu_default_experiments();
  m.doc() = "Stride host library (use the package `stride`, not this module)";
  static py::exception<ManifestError> manifest_error(m, "ManifestError", PyExc_ValueError);
  static py::exception<UnknownPlugin> unknown_plugin(m, "UnknownPluginError", PyExc_LookupError);
  static py::exception<OutputError> output_error(m, "OutputError", PyExc_OSError);
  g_manifest_error = manifest_error.ptr();
  g_unknown_plugin = unknown_plugin.ptr();
  g_output_error = output_error.ptr();
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const ManifestError& e) {
      raise_manifest_error(manifest_report(e), e.diagnostics());
    } catch (const SweepInputError& e) {
      raise_manifest_error(e.what(), e.diagnostics());
    } catch (const UnknownPlugin& e) {
      PyErr_SetString(g_unknown_plugin, e.what());
    } catch (const OutputError& e) {
      PyErr_SetString(g_output_error, e.what());
    }
  });

  m.def("set_home_plugin_folder", &PluginRegistry::set_home_plugin_folder, py::arg("folder"));
  m.def("default_search_path", &PluginRegistry::default_search_path);
  m.def("validate", &validate, py::arg("manifest"), py::arg("sets"));
  m.def("run", &run_manifest, py::arg("manifest"), py::arg("sets"), py::arg("out"), py::arg("progress"), py::arg("grace"));
  m.def("sweep", &run_sweep_file, py::arg("file"), py::arg("jobs"), py::arg("max_runs"), py::arg("grace"),
        py::arg("process_per_run"));
  m.def("plugins", &plugins);
  m.def("describe", &describe, py::arg("name"), py::arg("sets"));
  // stride.view(): the page of `stride view` served on a thread of the server's own (signals
  // stay with the interpreter) until the object is dropped.
  py::class_<ViewServer>(m, "ViewServer").def_property_readonly("url", &ViewServer::url);
  m.def(
      "view",
      [](const std::vector<fs::path>& folders, int port) {
        auto server = std::make_unique<ViewServer>(view_folders(folders), port);
        server->serve();
        return server;
      },
      py::arg("folders"), py::arg("port"));
}
