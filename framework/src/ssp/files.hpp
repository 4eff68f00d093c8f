// Files an SSD names by URI (FMUs, parameter sets, mappings): relative URIs resolved against the
// SSD's folder, percent-escapes decoded, and kept inside the unpacked package. Internal to the
// host.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "fmi/unpack.hpp"
#include "ssp/xml.hpp"
#include "stride/host/ssp/ssp.hpp"

namespace stride::host::ssp {

// The system file a path names: an .ssp archive (unpacked; SystemStructure.ssd or the chosen .ssd
// at its root), an .ssd or .xml file, or a folder (the chosen .ssd, else SystemStructure.ssd, else
// OspSystemStructure.xml, else its only .ssd). Throws ManifestError naming what is there when
// nothing fits.
struct SystemFile {
  std::filesystem::path file;                 // the XML to read
  std::string label;                          // as the user knows it: "crane.ssp:SystemStructure.ssd"
  std::filesystem::path root;                 // files it names may not leave this folder ("/" outside a package)
  std::shared_ptr<fmi::TempFolder> unpacked;  // the archive's files, alive while a run needs them
  std::string name;                           // the system's name for its output folder: the file's or folder's stem
};
SystemFile locate_system(const std::filesystem::path& path, const std::string& ssd_choice);

// What a reader of `system` hands back once it found no problem: the manifest document, where
// each pointer came from, the notes, and the unpacked files kept alive.
SspManifest finished(const SystemFile& system, const nlohmann::ordered_json& document,
                     std::map<std::string, std::string> origins, std::vector<std::string> notes);

// The file `uri` (written on element `at` of `ssd`) names; nullopt with a problem when it is not
// a relative URI, names a fragment of another document, leaves `root` or does not exist.
std::optional<std::filesystem::path> resolve_uri(const XmlFile& ssd, pugi::xml_node at, const std::string& uri,
                                                 const std::filesystem::path& root, std::vector<Diagnostic>& problems);

}  // namespace stride::host::ssp
