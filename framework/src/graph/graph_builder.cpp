// The graph builder: construction, build() and finish(), and what every phase shares (plugin
// references with their versions and parameters, loggers, messages). The phases live in the
// builder_*.cpp files beside it (graph/builder_detail.hpp lists them).
#include "graph/graph_builder.hpp"

#include <algorithm>
#include <functional>
#include <optional>
#include <set>

#include "graph/builder_detail.hpp"
#include "input/plugin_version.hpp"
#include "core/run_log.hpp"
#include "stride/host/graph/adapters.hpp"

namespace stride::host {
namespace builder_detail {

std::string describe_port(const PortSpec& p) {
  return p.name + " (" + (p.direction == Direction::input ? "input" : "output") + ", " + std::to_string(p.size) +
         " x " + (p.unit.empty() ? "1" : p.unit) + ")";
}

std::string describe_port(const TextPortSpec& t) {
  return t.name + " (" + t.causality + ", " + std::to_string(t.size) + " x " + t.type() + ")";
}

}  // namespace builder_detail

using namespace builder_detail;

GraphBuilder::GraphBuilder(const Manifest& manifest, const PluginRegistry& registry)
    : manifest_(manifest), reg_(registry), file_(manifest.file.string()), graph_(std::make_unique<Graph>()) {
  graph_->log = std::make_unique<RunLog>(manifest_.log);
  // Never reallocated: links and nodes point into both.
  graph_->nodes.reserve(manifest_.subsystems.size());
  graph_->links.reserve(manifest_.connections.size());
  for (const auto& sc : manifest_.subsystems) sub_names_.push_back(sc.name);
}

GraphBuilder::~GraphBuilder() = default;

std::unique_ptr<Graph> GraphBuilder::build(const Manifest& manifest, const PluginRegistry& registry) {
  GraphBuilder b(manifest, registry);
  b.add_subsystems();
  b.add_connections();
  b.check_unconnected_inputs();
  b.add_power_bonds();
  b.add_bounds();
  b.order_subsystems();
  b.mark_source_first();
  b.describe_bond_delays();
  b.check_algebraic_loops();
  b.add_record_columns();
  return b.finish();
}

std::unique_ptr<Graph> GraphBuilder::finish() {
  if (!diags_.empty() || !manifest_.problems.empty()) {
    std::vector<Diagnostic> all = manifest_.problems;
    all.insert(all.end(), diags_.begin(), diags_.end());
    attribute_to_variables(all, manifest_);
    throw ManifestError(all);
  }
  return std::move(graph_);
}

// ---- Shared by the phases -------------------------------------------------------------------

void GraphBuilder::error(const std::string& pointer, std::string message) {
  diags_.push_back({file_, pointer, std::move(message)});
}

std::vector<std::string> GraphBuilder::names_of(Kind kind) const {
  std::vector<std::string> v;
  for (auto* p : reg_.plugins(kind)) v.push_back(p->info().name);
  return v;
}

// A plugin's parameters with its path parameters (ParamType::path) resolved against the folder
// of the manifest they were written in.
json GraphBuilder::in_manifest(const PluginRef& ref) const {
  const LoadedPlugin* p = reg_.find(ref.plugin);
  if (!p || !ref.parameters.is_object() || manifest_.file.empty()) return ref.parameters;
  json out = ref.parameters;
  namespace fs = std::filesystem;
  const fs::path base = fs::absolute(manifest_.file).parent_path();
  for (const auto& s : p->info().parameters) {
    if (s.type != ParamType::path || !out.contains(s.name) || !out[s.name].is_string()) continue;
    const std::string v = out[s.name].get<std::string>();
    if (!v.empty() && fs::path(v).is_relative()) out[s.name] = (base / v).lexically_normal().string();
  }
  return out;
}

// Messages of a subsystem's plugin objects carry its name and time; an integrator's or a
// formulation's also the plugin's role.
Logger& GraphBuilder::logger_for(const Node& n, const std::string& role, const std::string& plugin) {
  return graph_->log->sink(role.empty() ? n.name : n.name + " (" + role + " " + plugin + ")", n.name,
                           n.plugin_inputs->clock());
}

const LoadedPlugin* GraphBuilder::resolve(const PluginRef& ref, Kind kind, const std::string& pointer) {
  const LoadedPlugin* p = reg_.find(ref.plugin);
  if (!p) {
    auto avail = names_of(kind);
    std::string msg = std::string("unknown ") + to_string(kind) + " plugin \"" + ref.plugin + "\"";
    if (auto note = refused_note(reg_, ref.plugin); !note.empty()) msg += note;
    else if (auto c = closest(ref.plugin, avail); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
    error(pointer, msg + "; available: " + listed(avail) + searched_note(reg_));
    return nullptr;
  }
  if (p->info().kind != kind) {
    error(pointer, "expected " + with_article(to_string(kind)) + " plugin, found \"" + ref.plugin + "\", which is " +
                       with_article(to_string(p->info().kind)) + "; available: " + listed(names_of(kind)));
    return nullptr;
  }
  const bool version = version_ok(ref, *p);
  const bool parameters = parameters_ok(ref, *p);
  return version && parameters ? p : nullptr;
}

bool GraphBuilder::version_ok(const PluginRef& ref, const LoadedPlugin& p) {
  if (ref.version.empty()) return true;
  std::vector<VersionClause> required;
  parse_requirement(ref.version, required);  // well formed: checked with the manifest
  const std::string& found = p.info().version;
  if (auto v = parse_version(found); !v) {
    error(ref.version_pointer, "plugin \"" + ref.plugin + "\" declares version \"" + found +
                                   "\", which is not dotted integers, so the requirement \"" + ref.version +
                                   "\" cannot be checked (" + p.file.string() + ")");
    return false;
  } else if (!satisfies(*v, required)) {
    error(ref.version_pointer, "plugin \"" + ref.plugin + "\" is version " + found + ", which does not satisfy \"" +
                                   ref.version + "\" (" + p.file.string() + ")");
    return false;
  }
  return true;
}

bool GraphBuilder::parameters_ok(const PluginRef& ref, const LoadedPlugin& p) {
  bool ok = true;
  const auto& specs = p.info().parameters;
  std::vector<std::string> spec_names;
  for (const auto& s : specs) spec_names.push_back(s.name);
  const std::string pp = ref.pointer + "/parameters";
  for (auto it = ref.parameters.begin(); it != ref.parameters.end(); ++it) {
    auto s = std::find_if(specs.begin(), specs.end(), [&](const ParamSpec& x) { return x.name == it.key(); });
    if (s == specs.end()) {
      std::string msg = "plugin \"" + ref.plugin + "\" has no parameter \"" + it.key() + "\"";
      if (auto c = closest(it.key(), spec_names); !c.empty()) msg += " (did you mean \"" + c + "\"?)";
      error(pp + "/" + it.key(), msg + "; parameters: " + listed(spec_names));
      ok = false;
    } else {
      json value = it.value();  // make_params reads it again through the same accept_param
      std::string where;
      if (auto e = accept_param(*s, value, &where); !e.empty()) {
        error(pp + "/" + pointer_escape(it.key()) + where, e);
        ok = false;
      }
    }
  }
  for (const auto& s : specs)
    if (s.default_value.is_null() && !ref.parameters.contains(s.name)) {
      error(pp + "/" + s.name,
            "required parameter \"" + s.name + "\" of plugin \"" + ref.plugin + "\" is missing (" + s.doc + ")");
      ok = false;
    }
  return ok;
}

}  // namespace stride::host
