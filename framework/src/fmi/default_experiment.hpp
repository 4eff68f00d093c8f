// An FMU's <DefaultExperiment> where a manifest does not say, and the manifest of
// `stride run model.fmu`. Internal to the host.
//
// complete_from_fmus() runs on the manifest's document after its --set overrides: for every
// subsystem that names an FMU it reads the FMU's model description (only that entry of the
// archive) and fills in what the document leaves out: /coupling/start, /coupling/end and
// /coupling/macro_step (the FMUs' start time and stop time where they agree, the smallest step
// size), a "coupling" object with the Jacobi scheme when there is none, and each FMU subsystem's
// "step" (its own step size, else the macro step). An FMU that cannot be read is left for the
// graph builder to report. What it filled in is listed in `filled` ("/coupling/end = 10 (from
// BouncingBall.fmu)").
//
// fmu_manifest(file) is the manifest of one FMU run alone on its default experiment (like
// fmusim): co-simulation when the FMU has it, else model exchange with CVODE at the experiment's
// tolerance (no integrator when it has no continuous states); its inputs keep their start
// values and every output is recorded.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <stride/stride.hpp>

namespace stride::host::fmi {

void complete_from_fmus(json& document, const std::filesystem::path& base, std::vector<std::string>& filled);

// Throws FmuError when the FMU cannot be read.
json fmu_manifest(const std::filesystem::path& file);

}  // namespace stride::host::fmi
