// System Structure and Parameterization (SSP 1.0) packages as Stride manifests, both ways.
//
// Reading: read_ssp(path) takes an .ssp archive (unpacked into a private temporary folder that
// lives as long as the process needs it), an .ssd file beside its FMUs, or a folder holding
// them, and turns the SystemStructure.ssd (or the .ssd the choice names) into a manifest document: components (FMUs,
// and as a Stride extension plugins: type "application/x-stride-plugin", source the plugin's name), connectors,
// connections with linear transformations and unit conversion (or its suppression), parameter
// bindings from .ssv files and .ssm mappings (inline or referenced, with prefixes, at system and
// component level), the default experiment, and the co-simulation step from the annotations
// Stride, OMSimulator and libcosim write. Everything else that would change the result is
// refused, naming the element's path and line in the XML; what is only ignored (graphics,
// names a binding sets on no parameter) is listed as a note. A binding sets parameters and the
// start values of inputs (and of outputs and states that take one), as the manifest's
// "parameters" do. An element's bindings are alternative parameter sets, as in libcosim: the
// first applies, or the one whose <ParameterSet name> the choice names.
//
// The Open Simulation Platform's OspSystemStructure.xml (what libcosim users have) is read too,
// as a file or in a folder without an .ssd: simulators (FMUs) with their initial values and step
// sizes, variable connections, linear transformation functions, start time and base step.
//
// Writing: write_ssp() (export/export.hpp) writes a manifest whose subsystems are FMUs as an SSP.
//
// Threading: one call at a time per document; different documents may be read concurrently.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "stride/host/input/json_input.hpp"

namespace stride::host::ssp {

// The namespaces of SSP 1.0.
inline constexpr const char* kSsd = "http://ssp-standard.org/SSP1/SystemStructureDescription";
inline constexpr const char* kSsc = "http://ssp-standard.org/SSP1/SystemStructureCommon";
inline constexpr const char* kSsv = "http://ssp-standard.org/SSP1/SystemStructureParameterValues";
inline constexpr const char* kSsm = "http://ssp-standard.org/SSP1/SystemStructureParameterMapping";
// The annotation type of Stride's own settings: a JSON object, the text of a <stride:Manifest>
// element (namespace kStrideNamespace) inside the annotation, since SSP 1.0 allows elements
// only there. The JSON as the annotation's own text (what Stride wrote before) is read too.
inline constexpr const char* kStrideAnnotation = "org.stride.manifest";
inline constexpr const char* kStrideNamespace = "urn:stride:ssp:manifest";
inline constexpr const char* kStrideElement = "Manifest";
// The component type of a Stride plugin (an extension of the standard's types).
inline constexpr const char* kStridePluginType = "application/x-stride-plugin";

struct SspManifest {
  std::string text;  // the manifest document (JSON)
  // Manifest pointers and where in the XML they come from ("SystemStructure.ssd:12:
  // /System[root]/Elements/Component[gain]"), longest match first when looked up.
  std::map<std::string, std::string> origins;
  std::vector<std::string> notes;    // what was ignored or chosen, for `validate`
  std::shared_ptr<const void> keep;  // the unpacked archive, alive while the run needs it
};

// .ssp, .ssd, an .xml system structure (SSP or OSP) or a folder: a system, not a JSON manifest.
bool is_ssp_file(const std::filesystem::path& path);

// Which system of a package or folder, and which parameter set.
struct SystemChoice {
  std::string ssd;            // one of several .ssd files ("Variant" or "Variant.ssd"); "": SystemStructure.ssd
  std::string parameter_set;  // the <ParameterSet name> applied on every element that has one; "": the first
};

// Reads and checks the system (throws ManifestError: each diagnostic names the XML file and the
// element's path and line).
SspManifest read_ssp(const std::filesystem::path& path, const SystemChoice& choice = {});

// Adds to each diagnostic whose pointer comes from the SSP the element it was read from.
void attribute_to_ssp(std::vector<Diagnostic>& diagnostics, const std::map<std::string, std::string>& origins);

}  // namespace stride::host::ssp
