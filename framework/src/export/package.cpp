// `stride export` of a whole experiment (see stride/host/export/export.hpp).
#include <boost/dll/runtime_symbol_info.hpp>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "export/archive.hpp"
#include "export/fmi_rules.hpp"
#include "export/interface.hpp"
#include "stride/host/cli/commands.hpp"
#include "stride/host/export/export.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

// The model identifier: the manifest's file name (or the subsystem's name) as a C identifier.
std::string identifier_of(const std::string& name) {
  std::string id;
  for (char c : name) id += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (id.empty() || std::isdigit(static_cast<unsigned char>(id[0]))) id = "m_" + id;
  return id;
}

fs::path fmu_binary(int fmi_version) {
  const std::string name = "stride_fmu" + std::to_string(fmi_version) + ".so";
  std::error_code ec;
  const fs::path beside =
      boost::dll::program_location(ec).parent_path().parent_path() / "lib" / "stride" / "fmu" / name;
  if (!ec && fs::exists(beside)) return beside;
  const fs::path build = fs::path(STRIDE_BUILD_PLUGIN_DIR).parent_path() / "fmu" / name;
  if (fs::exists(build)) return build;
  throw std::runtime_error("the FMU binary " + name + " is in neither " + beside.string() + " nor " + build.string());
}

// The manifest as written, keys in their order (the subsystems' order is the graph's).
nlohmann::ordered_json manifest_document(const fs::path& manifest) {
  std::ifstream in(manifest);
  if (!in) throw std::runtime_error("cannot read " + manifest.string());
  nlohmann::ordered_json d = nlohmann::ordered_json::parse(in);
  if (!d.is_object() || !d.contains("subsystems") || !d["subsystems"].is_object())
    throw std::runtime_error(manifest.string() + ": expected a manifest object with \"subsystems\"");
  for (const auto& [name, s] : d["subsystems"].items())
    if (s.is_object() && s.contains("fmu"))
      throw std::runtime_error(
          manifest.string() + ": /subsystems/" + name +
          "/fmu: subsystems that are FMUs are not packed into an exported FMU (not supported yet)");
  return d;
}

// Subsystem `name` of the manifest `d` alone: its plugin, parameters, integrator or formulation
// and step, the variables they may name, the coupling's times and step, the monitors of its
// ports; no connection, so that every input is an input of the FMU.
nlohmann::ordered_json subsystem_document(const nlohmann::ordered_json& d, const fs::path& manifest,
                                          const std::string& name) {
  if (!d["subsystems"].contains(name)) {
    std::string names;
    for (const auto& [n, s] : d["subsystems"].items()) names += (names.empty() ? "" : ", ") + n;
    throw std::runtime_error(manifest.string() + ": /subsystems has no subsystem \"" + name +
                             "\" to export (it has " + names + ")");
  }
  nlohmann::ordered_json one = {{"format", d.value("format", 1)},
                                {"title", name + " of " + manifest.filename().string()}};
  for (const char* key : {"variables", "plugin_paths", "log"})
    if (d.contains(key)) one[key] = d[key];
  one["subsystems"] = {{name, d["subsystems"][name]}};
  one["connections"] = nlohmann::ordered_json::array();
  one["coupling"] = d["coupling"];
  if (d.contains("monitor") && d["monitor"].is_object()) {
    nlohmann::ordered_json mo = d["monitor"];
    if (mo.contains("bounds") && mo["bounds"].is_object()) {
      nlohmann::ordered_json kept = nlohmann::ordered_json::object();
      for (const auto& [port, b] : mo["bounds"].items())
        if (port.rfind(name + ".", 0) == 0) kept[port] = b;
      mo["bounds"] = kept;
    }
    one["monitor"] = mo;
  }
  return one;
}

// What the FMU packs: without "output" and "plugin_paths" (its plugins are beside it).
nlohmann::ordered_json packed(nlohmann::ordered_json d) {
  d.erase("output");
  d.erase("plugin_paths");
  return d;
}

}  // namespace

ExportReport export_fmu(const fs::path& manifest, const fs::path& out, int fmi_version,
                        const std::string& subsystem) {
  if (fmi_version != 2 && fmi_version != 3)
    throw std::runtime_error("FMI version " + std::to_string(fmi_version) + ": Stride exports FMI 2.0 and 3.0");
  if (manifest.extension() != ".json")
    throw std::runtime_error(manifest.string() +
                             ": only a JSON manifest can be exported (an SSP system is not packed)");
  Manifest m = read_manifest(manifest);  // a document that cannot be read: ManifestError
  nlohmann::ordered_json document = manifest_document(manifest);
  if (!subsystem.empty()) {
    document = subsystem_document(document, manifest, subsystem);
    m = read_manifest_text(document.dump(2), manifest);
  }
  m.external_inputs = true;
  PluginRegistry reg;
  const std::unique_ptr<Experiment> ex = build_experiment(reg, std::move(m));
  const nlohmann::ordered_json packed_document = packed(document);
  ExportReport report;
  report.model_identifier = identifier_of(subsystem.empty() ? manifest.stem().string() : subsystem);
  fmu_export::ExperimentInterface iface =
      fmu_export::experiment_interface(*ex, reg, fmi_version, report.model_identifier, !subsystem.empty());
  if (!subsystem.empty())
    iface.model.description = "the subsystem " + subsystem + " (plugin " + ex->manifest().subsystems.front().plugin.plugin +
                              ") of " + manifest.filename().string() + ", exported by Stride";
  iface.model.token = fmu_export::content_token(packed_document.dump() + fmu_export::interface_json(iface).dump());
  const std::string xml = fmu_export::model_description_xml(iface.model);
  const auto problems = fmu_export::model_description_problems(xml);
  if (!problems.empty()) {
    std::string s = "the model description breaks the FMI rules:";
    for (const auto& p : problems) s += "\n  " + p;
    throw std::runtime_error(s);
  }
  Archive a(out);
  a.text("modelDescription.xml", xml);
  const std::string platform = fmi_version == 2 ? "linux64" : "x86_64-linux";
  a.file("binaries/" + platform + "/" + report.model_identifier + ".so", fmu_binary(fmi_version));
  a.text("resources/manifest.json", packed_document.dump(2) + "\n");
  a.text("resources/stride_export.json", fmu_export::interface_json(iface).dump(2) + "\n");
  std::set<fs::path> files;
  for (const std::string& name : plugin_names(ex->manifest())) {
    const LoadedPlugin* p = reg.find(name);
    if (!p || p->fmu) throw std::runtime_error("plugin \"" + name + "\" has no library to pack");
    files.insert(p->file);
  }
  for (const fs::path& f : files) a.file("resources/plugins/" + f.filename().string(), f);
  a.finish();
  for (const fmu_export::PortBinding& b : iface.bindings)
    ++(!b.parameter.empty() ? report.parameters : b.input ? report.inputs : report.outputs);
  report.plugins = files.size();
  return report;
}

}  // namespace stride::host
