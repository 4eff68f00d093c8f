// The Open Simulation Platform's OspSystemStructure.xml (libcosim's system format) as a manifest
// document: simulators (FMUs, co-simulation) with their initial values and step sizes, variable
// connections, linear transformation functions between an output and inputs, the start time and
// the base step of the fixed-step (Jacobi) algorithm, and libcosim's start-up (outputs exchanged
// in initialization mode: /coupling/initialization "exchange"). Internal to the host.
//
// As libcosim does: values pass between variables without unit conversion, and a connection's
// direction comes from the variables' causalities, not from the order they are written in.
#pragma once

#include <memory>

#include "ssp/files.hpp"
#include "stride/host/ssp/ssp.hpp"

namespace stride::host::ssp {

inline constexpr const char* kOsp = "http://opensimulationplatform.com/MSMI/OSPSystemStructure";

bool is_osp(const XmlFile& file);  // the root element is OspSystemStructure
SspManifest read_osp(SystemFile system, std::unique_ptr<XmlFile> xml);

}  // namespace stride::host::ssp
