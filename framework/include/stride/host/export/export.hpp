// `stride export`: a whole experiment, or one subsystem of it, as one FMI 2.0 or 3.0
// co-simulation FMU.
//
//   export_fmu(manifest, out, fmi, subsystem):
//     subsystem given: the manifest cut to that subsystem alone (its plugin, parameters,
//       integrator or formulation, step; the variables, coupling times and its monitors), so
//       that every input port of it is an input of the FMU
//     read and build the experiment (every check of `validate`; an input no connection feeds is
//     an input of the FMU), refusing an SSP system (a JSON manifest only)
//     interface (export/interface.hpp): output ports and unconnected inputs, all of them or
//       those listed under "exports", as variables "subsystem.port"
//     modelDescription.xml from it, checked against the FMI rules (export/fmi_rules.hpp)
//     archive (written beside `out`, renamed onto it when complete):
//       modelDescription.xml
//       binaries/<platform>/<modelIdentifier>.so   the host's FMU binary (lib/stride/fmu/stride_fmu2.so,
//                                               stride_fmu3.so; FMI 3: ports as arrays)
//       resources/manifest.json                 the manifest, without "output" and "plugin_paths"
//       resources/stride_export.json            value references -> ports, and the GUID
//       resources/plugins/*.so                  the plugin libraries the manifest names
//       resources/fmus/<subsystem>.fmu          its FMU subsystems (the packed manifest names them so)
// The binary finds everything relative to the resource location the importer passes: the FMU
// can be moved and needs no STRIDE_PLUGIN_PATH. Throws ManifestError (the manifest) or
// std::runtime_error (what cannot be exported or written), leaving no file at `out`.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace stride::host {

struct ExportReport {
  std::string model_identifier;
  std::size_t inputs = 0, outputs = 0, parameters = 0;  // variables (FMI 2: scalars)
  std::size_t plugins = 0;
};

// `stride export --ssp`: a manifest (or an SSP system) as an SSP 1.0 package that read_ssp()
// reads back as the same manifest:
//   SystemStructure.ssd   one component per subsystem: an FMU (its file under resources/, its
//                         variables as connectors, its scalar parameters as an inline parameter
//                         set) or a Stride plugin (type application/x-stride-plugin, its ports
//                         as connectors); steps, integrators, formulations and other values in
//                         Stride's annotation (org.stride.manifest); connections with their
//                         transformation and unit conversion; the coupling, recording and
//                         monitors in the system's annotation, the macro step also as
//                         OMSimulator's fixed-step master; the units used; start and stop time
//   resources/*.fmu       the FMUs
// With `fmi` 2 or 3, every plugin subsystem is first exported alone as an FMU of that version
// (export_fmu with its name), so that every component is an FMU and the system opens in any SSP
// importer. Throws ManifestError (the manifest, or a connection of port elements, which SSP 1.0
// cannot express) or std::runtime_error, leaving no file at `out`.
struct SspReport {
  std::size_t components = 0, connections = 0, parameters = 0, fmus = 0;
};
SspReport export_ssp(const std::filesystem::path& manifest, const std::filesystem::path& out, int fmi = 0);

ExportReport export_fmu(const std::filesystem::path& manifest, const std::filesystem::path& out, int fmi_version = 2,
                        const std::string& subsystem = {});

}  // namespace stride::host
