// Files an SSD names by URI (FMUs, parameter sets, mappings): relative URIs resolved against the
// SSD's folder, percent-escapes decoded, and kept inside the unpacked package. Internal to the
// host.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "ssp/xml.hpp"

namespace stride::host::ssp {

// The file `uri` (written on element `at` of `ssd`) names; nullopt with a problem when it is not
// a relative URI, names a fragment of another document, leaves `root` or does not exist.
std::optional<std::filesystem::path> resolve_uri(const XmlFile& ssd, pugi::xml_node at, const std::string& uri,
                                                  const std::filesystem::path& root, std::vector<Diagnostic>& problems);

}  // namespace stride::host::ssp
