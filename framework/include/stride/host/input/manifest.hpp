// A manifest as read and checked: the configuration of subsystems, connections, coupling,
// recording, monitors, logging and output, before any plugin is loaded.
//
// Order: read_manifest (JSON, --set overrides, variables, structure) -> Experiment (graph/
// experiment.hpp) -> run (run/run.hpp). Structure problems are collected, not thrown one by one.
#pragma once

#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "stride/host/input/json_input.hpp"

namespace stride::host {

struct PluginRef {
  std::string plugin;
  json parameters = json::object();
  std::string pointer;  // where the reference is in the manifest
  // "version": a requirement on the plugin's version (">=1.2, <2"; plugin_version.hpp), "" for
  // none, and where it is written.
  std::string version;
  std::string version_pointer;
};

struct SubsystemConfig {
  std::string name;
  PluginRef plugin;
  std::filesystem::path fmu;  // an FMU instead of a plugin (relative paths resolved against the manifest)
  double step = 0.0;
  std::optional<PluginRef> integrator;   // for ode subsystems
  std::optional<PluginRef> formulation;  // for multibody subsystems
  std::string pointer;
};

// An endpoint "subsystem.port", "subsystem.port[i]" or "subsystem.port[i:j]" (elements i..j-1).
struct ConnectionConfig {
  std::string from_subsystem, from_port, to_subsystem, to_port;
  std::size_t from_first = 0, from_count = 0;  // count 0: the whole port
  std::size_t to_first = 0, to_count = 0;
  std::string from_text, to_text;  // as written
  PluginRef extrapolator;
  std::string pointer;
  // "transformation": {"factor": f, "offset": o}: the destination takes f x + o of the source's
  // value x (in the source's unit; then converted to the destination's unit), as an SSP
  // connection's LinearTransformation. "unit_conversion": false passes values in no unit.
  double factor = 1.0, offset = 0.0;
  bool unit_conversion = true;
};

enum class Scheme { jacobi, gauss_seidel, multirate };
enum class Synchronization { slowest_first, fastest_first };
// How the subsystems leave initialization at the start time. sequential: one after another in
// the order, each with the outputs of those before it (a plugin's equilibrate(), an FMU's exit
// from initialization mode). exchange: libcosim's and OMSimulator's start-up: every subsystem's
// outputs passed to the connected inputs while all are still in initialization mode, repeated
// until no output changes, then all leave together.
enum class Initialization { sequential, exchange };

// Iterative coupling (Jacobi and Gauss–Seidel): every macro step is repeated from snapshots of
// every subsystem until the interface values at its end stop changing. Repetition k > 0 feeds
// each input the straight line from its value at the macro step's start to the relaxed iterate
// u_k = u_{k-1} + ω (y_{k-1} - u_{k-1}) at its end (the first one uses the extrapolators).
struct IterationConfig {
  bool enabled = false;
  int max_iterations = 10;           // passes per macro step, the first included
  double relaxation = 1.0;           // ω
  double tolerance = 1e-6;           // converged when |y - u| <= absolute_tolerance + tolerance |y|
  double absolute_tolerance = 1e-9;  // for every element of every connection
  bool stop_unconverged = false;     // a macro step still apart after max_iterations ends the run
};

// Adaptive macro step (Jacobi and Gauss–Seidel, opt-in; Sadjina 2017, ECCO): after each macro
// step the energy residual δE it added to each paired power bond is compared with
// absolute_tolerance + tolerance·ΔE (ΔE: the energy that crossed the bond in the step, the
// larger of its two sides); the largest ratio ε sets the next step by a PI controller,
// H' = H·safety·ε^(-k_I)·(ε_prev/ε)^(k_P) with k_I = 0.15, k_P = 0.2 (a held input makes δE
// of order H²), H' within [H/5, 2H] and [min_step, max_step]. With reject (Jacobi, every
// subsystem able to save its state), a step with ε > 1 is repeated from snapshots with
// H·max(0.2, min(0.9, safety·ε^(-1/2))) until it passes or reaches min_step; without, steps
// are never repeated (non-iterative). The first macro step is coupling.macro_step; a subsystem
// steps at most its own step and lands on every communication point.
struct StepControlConfig {
  bool enabled = false;
  double tolerance = 0.01;
  double absolute_tolerance = 1e-3;  // J
  double safety = 0.9;
  double min_step = 0.0;  // s (default: macro_step / 100)
  double max_step = 0.0;  // s (default: 10 macro_step)
  bool reject = false;
};

struct CouplingConfig {
  Scheme scheme = Scheme::jacobi;
  double macro_step = 0.0;
  double start = 0.0;
  double end = 0.0;
  std::vector<std::string> order;  // Gauss–Seidel order
  Synchronization synchronization = Synchronization::slowest_first;
  // Jacobi/Gauss–Seidel: shorten a subsystem's last step in a macro step so it lands on the
  // communication point (true), or let it overshoot (false, unsynchronized grids).
  bool align = true;
  Initialization initialization = Initialization::sequential;
  IterationConfig iteration;
  StepControlConfig step_control;
};

struct RecordConfig {
  double interval = 0.0;               // 0: every macro step
  std::vector<std::string> variables;  // "sub.port"; empty: every output
  // At each event a step ends at, a row with the values just before it and one with those after,
  // at its time, as fmusim and FMPy write them (one recorded subsystem, no repeated macro steps).
  bool event_rows = false;
};

// Divergence monitors: declared bounds of outputs and a limit on the energy residual of any
// power bond (Rahikainen 2020 §2.3.2). Exceeding one ends the run with status "diverged".
struct OutputBound {
  std::string variable;  // "sub.port", "sub.port[i]" or "sub.port[i:j]"
  std::string subsystem, port;
  std::size_t first = 0, count = 0;  // count 0: the whole port
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::string pointer;
};
// Messages of plugins (stride/log.hpp), manifest "log": what is kept, what also goes to
// stderr, and how often one place in a plugin's source may write per run.
struct LogConfig {
  LogLevel level = LogLevel::info;
  LogLevel stderr_level = LogLevel::warning;
  long repeats = 10;
};

// Manifest "real_time" (and `stride run --real-time [FACTOR]`, which overrides the factor):
// every communication point held to the wall clock (run/real_time.hpp, docs/real-time.md).
struct RealTimeConfig {
  bool enabled = false;
  double factor = 1.0;           // simulated seconds per wall second; > 0 and finite
  double interval = 0.0;         // s of simulated time between the points held to the clock (0: every one)
  bool stop_on_overrun = false;  // "overrun": "stop" ends the run at the first missed deadline; "continue" counts it
  // "results": "background" (results.csv from a writer thread) or "synchronous" (written on the
  // stepping path, as in a batch run: for measuring what the thread saves).
  bool background_rows = true;
};

struct MonitorConfig {
  std::vector<OutputBound> bounds;
  double energy_residual_limit = std::numeric_limits<double>::infinity();  // J
  // Each connection's coupling error estimated at every push (summary.json "accuracy"); false:
  // not estimated, and nothing paid for it per push.
  bool coupling_error = true;
};

// Sizes a manifest may imply. A run beyond them would take days, fill the disk or run out of
// memory; a value that implies one is reported before anything runs.
struct Limits {
  static constexpr double max_steps = 1e10;          // per subsystem, and macro steps
  static constexpr double max_rows = 1e8;            // rows of results.csv
  static constexpr double max_buffered_rows = 1e6;   // rows spanned by one step (filled before written)
  static constexpr double time_resolution = 1e3;     // a step must span this many doubles at every t of the run
};

struct Manifest {
  std::filesystem::path file;
  json document;  // after --set overrides
  std::vector<std::filesystem::path> plugin_paths;
  std::vector<SubsystemConfig> subsystems;
  std::vector<ConnectionConfig> connections;
  CouplingConfig coupling;
  RecordConfig record;
  MonitorConfig monitor;
  LogConfig log;
  RealTimeConfig real_time;
  std::filesystem::path output;
  // "exports": the ports an exported FMU shows ("subsystem.port"; `stride export`): inputs no
  // connection feeds and outputs. Empty: every unconnected input and every output.
  std::vector<std::string> exports;
  // Set by `stride export` and inside an exported FMU, never by the document: an input no
  // connection feeds is an input of the FMU (its value set from outside, 0 until then) instead
  // of an error.
  bool external_inputs = false;
  // Problems found in the structure; read_manifest() leaves them here so that the plugin
  // checks run too and every problem is reported at once.
  std::vector<Diagnostic> problems;
  // Values written with a unit ("100 ms") and what they became (times, energies; parameters
  // are converted with their plugin's units, see accept_param).
  std::vector<ConvertedValue> converted;
  // What the manifest left out and the document completion filled in, for `validate`
  // ("/coupling/end = 10 (from the default experiment of ball.fmu)").
  std::vector<std::string> from_fmus;
  // Pointers where "$name" was replaced by a variable's value -> the variable's name.
  std::map<std::string, std::string> variable_uses;
  // Every subsystem name written, valid or not (so a bad subsystem is not also "unknown").
  std::vector<std::string> declared_subsystems;
  // A manifest made from another format (an SSP): where its values come from there (pointer ->
  // "file: line N: path", shown with the diagnostics), what was ignored or chosen (listed by
  // `validate`), and what must stay alive while it runs (the unpacked package).
  std::map<std::string, std::string> origins;
  std::vector<std::string> notes;
  // What the run will do that the manifest does not say outright (steps cut to fit a macro
  // step), listed by `validate` as warnings.
  std::vector<std::string> warnings;
  std::shared_ptr<const void> keep;
  // The structure of subsystems and connections is sound: graph-wide checks (unconnected
  // inputs, algebraic loops) can trust it.
  bool graph_complete = true;
};

// Reads and checks the structure of a manifest; `overrides` are "POINTER=VALUE" (VALUE is
// JSON, or a plain string when it does not parse). Throws ManifestError when there is any
// problem.
Manifest load_manifest(const std::filesystem::path& file, const std::vector<std::string>& overrides = {});
// The same, but throws only when the document cannot be read at all (missing, too large,
// invalid JSON, bad --set): structure problems are left in Manifest::problems for the
// Experiment, which reports them together with its own.
Manifest read_manifest(const std::filesystem::path& file, const std::vector<std::string>& overrides = {});
// The same from text (`file` labels the diagnostics; relative paths are resolved against its folder).
Manifest read_manifest_text(const std::string& text, const std::filesystem::path& file,
                            const std::vector<std::string>& overrides = {});

// A later stage may fill in what a manifest's document leaves out, after the --set overrides and
// before any check (fmi: the FMUs' default experiments), listing each value in `filled`. Set
// once at startup by the program (cli: use_fmu_default_experiments()); none by default.
using DocumentCompletion = void (*)(json& document, const std::filesystem::path& base,
                                    std::vector<std::string>& filled);
void set_document_completion(DocumentCompletion completion);

// Every plugin the manifest names (subsystems, integrators, formulations, extrapolators,
// including the default extrapolator), each once.
std::vector<std::string> plugin_names(const Manifest& m);

// Adds to each diagnostic at (or under) a place where a variable was substituted the
// variable's name and pointer, and one diagnostic at the variable itself.
void attribute_to_variables(std::vector<Diagnostic>& diags, const Manifest& m);

}  // namespace stride::host
