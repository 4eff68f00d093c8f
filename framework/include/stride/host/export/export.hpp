// `stride export`: a whole experiment as one FMI 2.0 or 3.0 co-simulation FMU.
//
//   export_fmu(manifest, out):
//     read and build the experiment (every check of `validate`), refusing what cannot be packed
//     (FMU subsystems, an SSP system)
//     interface: every output port of every subsystem an output variable "subsystem.port"
//     modelDescription.xml from it, checked against the FMI rules (export/fmi_rules.hpp)
//     archive (written beside `out`, renamed onto it when complete):
//       modelDescription.xml
//       binaries/<platform>/<modelIdentifier>.so   the host's FMU binary (lib/stride/fmu/stride_fmu2.so,
//                                               stride_fmu3.so; FMI 3: ports as arrays)
//       resources/manifest.json                 the manifest, without "output" and "plugin_paths"
//       resources/stride_export.json            value references -> ports, and the GUID
//       resources/plugins/*.so                  the plugin libraries the manifest names
// The binary finds everything relative to the resource location the importer passes: the FMU
// can be moved and needs no STRIDE_PLUGIN_PATH. Throws ManifestError (the manifest) or
// std::runtime_error (what cannot be exported or written), leaving no file at `out`.
#pragma once

#include <filesystem>
#include <string>

namespace stride::host {

struct ExportReport {
  std::string model_identifier;
  std::size_t outputs = 0;
  std::size_t plugins = 0;
};

ExportReport export_fmu(const std::filesystem::path& manifest, const std::filesystem::path& out, int fmi_version = 2);

}  // namespace stride::host
