// `stride export` of a whole experiment (see stride/host/export/export.hpp).
#include <dlfcn.h>
#include <link.h>

#include <boost/dll/runtime_symbol_info.hpp>
#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "export/archive.hpp"
#include "export/fmi_rules.hpp"
#include "input/units.hpp"
#include "export/interface.hpp"
#include "stride/host/api/commands.hpp"
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

// The shared libraries `binary` needs beyond the C library, as the dynamic loader finds them
// here (ldd): packed beside it, where it looks first (RPATH $ORIGIN), so that the FMU runs where
// pugixml, UDUNITS-2 (with its expat) or this libstdc++ are not installed.
std::vector<fs::path> needed_libraries(const fs::path& binary) {
  std::string quoted = "'";
  for (char c : binary.string()) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  quoted += "'";
  FILE* p = popen(("ldd " + quoted + " 2>/dev/null").c_str(), "r");
  if (!p) throw std::runtime_error("cannot run ldd on " + binary.string());
  std::vector<fs::path> out;
  char line[4096];
  while (std::fgets(line, sizeof line, p)) {
    const std::string l = line;
    const auto arrow = l.find(" => /");
    if (arrow == std::string::npos) continue;
    const std::string name = l.substr(l.find_first_not_of(" \t"), arrow - l.find_first_not_of(" \t"));
    const auto end = l.find(" (", arrow);
    const fs::path file = l.substr(arrow + 4, end == std::string::npos ? std::string::npos : end - arrow - 4);
    static const char* system[] = {"libc.so", "libm.so", "ld-linux", "libpthread.so", "libdl.so", "librt.so",
                                   "libresolv.so", "libutil.so"};
    bool c_library = false;
    for (const char* s : system) c_library = c_library || name.rfind(s, 0) == 0;
    if (!c_library) out.push_back(file);
  }
  if (pclose(p) != 0) throw std::runtime_error("ldd " + binary.string() + " failed");
  return out;
}

// The description and the binary against the FMI rules (export/fmi_rules.hpp): nothing that
// breaks one is packed.
void check_fmi_rules(const std::string& xml, const fs::path& binary) {
  auto problems = fmu_export::model_description_problems(xml);
  for (std::string& p : fmu_export::binary_problems(xml, fmu_export::exported_functions(binary), binary.string()))
    problems.push_back(std::move(p));
  if (problems.empty()) return;
  std::string s = "the model description and its binary break the FMI rules:";
  for (const auto& p : problems) s += "\n  " + p;
  throw std::runtime_error(s);
}

// libzip as this process loaded it (by the soname fmi/unpack.cpp loads): what an exported FMU
// with FMUs packed inside needs to unpack them at run time, packed with what it needs in turn.
fs::path libzip_file() {
  void* h = ::dlopen(STRIDE_LIBZIP_SONAME, RTLD_LAZY | RTLD_LOCAL);
  link_map* map = nullptr;
  if (!h || ::dlinfo(h, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name || !*map->l_name)
    throw std::runtime_error(std::string("cannot find ") + STRIDE_LIBZIP_SONAME + " to pack: " + ::dlerror());
  return map->l_name;
}

// The shared libraries the binary loads at run time, beside it (binaries/<platform>/), once
// each: those it and the plugins (which it loads, so that its RPATH applies to theirs too) need,
// and libzip with what it needs only where FMUs packed inside are unpacked.
void pack_libraries(Archive& a, const std::string& folder, std::set<fs::path> loaded, bool unpacks_fmus) {
  std::map<std::string, fs::path> libraries;
  if (unpacks_fmus) {
    const fs::path zip = libzip_file();
    libraries.emplace(zip.filename().string(), zip);
    loaded.insert(zip);
  }
  for (const fs::path& f : loaded)
    for (const fs::path& lib : needed_libraries(f)) libraries.emplace(lib.filename().string(), lib);
  for (const auto& [name, lib] : libraries) a.file(folder + name, lib);
}

// The manifest as written, keys in their order (the subsystems' order is the graph's).
nlohmann::ordered_json manifest_document(const fs::path& manifest) {
  std::ifstream in(manifest);
  if (!in) throw std::runtime_error("cannot read " + manifest.string());
  nlohmann::ordered_json d = nlohmann::ordered_json::parse(in);
  if (!d.is_object() || !d.contains("subsystems") || !d["subsystems"].is_object())
    throw std::runtime_error(manifest.string() + ": expected a manifest object with \"subsystems\"");
  return d;
}

// The FMU subsystems' files, packed as resources/fmus/<subsystem>.fmu and named so in the
// packed manifest (relative to it: the FMU inside unpacks them where its resources are).
std::map<std::string, fs::path> nested_fmus(const Manifest& m, nlohmann::ordered_json& packed_document) {
  std::map<std::string, fs::path> out;
  for (const SubsystemConfig& sc : m.subsystems) {
    if (sc.fmu.empty()) continue;
    const std::string name = "fmus/" + sc.name + ".fmu";
    packed_document["subsystems"][sc.name]["fmu"] = name;
    out["resources/" + name] = sc.fmu;
  }
  return out;
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
  for (const char* key : {"plugin_paths", "log"})
    if (d.contains(key)) one[key] = d[key];
  one["subsystems"] = {{name, d["subsystems"][name]}};
  one["connections"] = nlohmann::ordered_json::array();
  one["coupling"] = d["coupling"];
  // Only the variables the subsystem and the coupling read ("$name"): those of the connections
  // left behind would be unused, which a manifest may not have.
  if (d.contains("variables") && d["variables"].is_object()) {
    std::set<std::string> read;
    const std::function<void(const nlohmann::ordered_json&)> walk = [&](const nlohmann::ordered_json& j) {
      if (j.is_string() && j.get_ref<const std::string&>().rfind('$', 0) == 0)
        read.insert(j.get<std::string>().substr(1));
      if (j.is_structured())
        for (const auto& e : j) walk(e);
    };
    walk(one);
    nlohmann::ordered_json vars = nlohmann::ordered_json::object();
    for (const auto& [v, value] : d["variables"].items())
      if (read.count(v)) vars[v] = value;
    if (!vars.empty()) one["variables"] = vars;
  }
  if (d.contains("monitor") && d["monitor"].is_object()) {
    nlohmann::ordered_json mo = d["monitor"];
    if (mo.contains("bounds") && mo["bounds"].is_object()) {
      nlohmann::ordered_json kept = nlohmann::ordered_json::object();
      for (const auto& [port, b] : mo["bounds"].items())
        if (port.rfind(name + ".", 0) == 0) kept[port] = b;
      mo["bounds"] = kept;
    }
    mo.erase("energy_residual_limit");  // a power bond pairs two subsystems: one alone has none
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
  nlohmann::ordered_json packed_document = packed(document);
  const std::map<std::string, fs::path> fmus = nested_fmus(ex->manifest(), packed_document);
  ExportReport report;
  report.model_identifier = identifier_of(subsystem.empty() ? manifest.stem().string() : subsystem);
  fmu_export::ExperimentInterface iface =
      fmu_export::experiment_interface(*ex, reg, fmi_version, report.model_identifier, !subsystem.empty());
  if (!subsystem.empty())
    iface.model.description = "the subsystem " + subsystem + " of " + manifest.filename().string() +
                              ", exported by Stride";
  iface.model.token = fmu_export::content_token(packed_document.dump() + fmu_export::interface_json(iface).dump());
  const std::string xml = fmu_export::model_description_xml(iface.model);
  const fs::path binary = fmu_binary(fmi_version);
  check_fmi_rules(xml, binary);
  Archive a(out);
  a.text("modelDescription.xml", xml);
  const std::string platform = fmi_version == 2 ? "linux64" : "x86_64-linux";
  a.file("binaries/" + platform + "/" + report.model_identifier + ".so", binary);
  // The unit database the host inside reads (set_unit_database), with the files it includes.
  const fs::path units = unit_database_file();
  if (!units.empty())
    for (const auto& f : fs::directory_iterator(units.parent_path()))
      if (f.path().extension() == ".xml") a.file("resources/udunits/" + f.path().filename().string(), f.path());
  a.text("resources/manifest.json", packed_document.dump(2) + "\n");
  a.text("resources/stride_export.json", fmu_export::interface_json(iface).dump(2) + "\n");
  std::set<fs::path> files;
  for (const std::string& name : plugin_names(ex->manifest())) {
    if (name.empty()) continue;  // an FMU subsystem
    const LoadedPlugin* p = reg.find(name);
    if (!p || p->fmu) throw std::runtime_error("plugin \"" + name + "\" has no library to pack");
    files.insert(p->file);
  }
  for (const auto& [name, file] : fmus) a.file(name, file);
  for (const fs::path& f : files) a.file("resources/plugins/" + f.filename().string(), f);
  report.plugins = files.size();
  files.insert(binary);
  pack_libraries(a, "binaries/" + platform + "/", files, !fmus.empty());
  a.finish();
  for (const fmu_export::PortBinding& b : iface.bindings)
    ++(!b.parameter.empty() ? report.parameters : b.input ? report.inputs : report.outputs);
  return report;
}

}  // namespace stride::host
