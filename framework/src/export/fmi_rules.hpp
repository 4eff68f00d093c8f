// Our own check of a modelDescription.xml (FMI 2.0 or 3.0) against the rules the standard
// states in its text and tables, for the descriptions Stride writes (and any other): the
// required attributes, unique names and value references, units declared before use, the
// allowed combinations of causality, variability and initial, start values where required
// (and only there) and within min/max, array dimensions, and a ModelStructure that lists every
// output and initial unknown with dependencies on known variables only, one independent
// variable (FMI 3); and the binary against the description. Internal to the host.
//
// Order: model_description_xml() (model_description.hpp) -> model_description_problems() ->
// the exporter refuses to pack a description with any problem. Any thread.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <vector>

namespace stride::host::fmu_export {

// Every problem found, each "line N: what is wrong" (naming the variable or element); empty
// when the description follows the rules checked.
std::vector<std::string> model_description_problems(const std::string& xml_text);

// The functions an ELF shared library defines and exports (its dynamic symbol table), read from
// the file without loading it. Throws std::runtime_error naming the file if it is not one.
std::set<std::string> exported_functions(const std::filesystem::path& binary);

// The description and its binary together (FMI 2.0 section 2.1.1, FMI 3.0 section 2.2): every
// function of the interface for each interface declared (<ModelExchange>, <CoSimulation>,
// <ScheduledExecution>), even those that only answer with an error, and each capability
// declared (FMU state, serialization, derivatives, event mode, ...) backed by the functions
// that serve it. `exported`: what exported_functions() found in `binary_name`.
std::vector<std::string> binary_problems(const std::string& xml_text, const std::set<std::string>& exported,
                                         const std::string& binary_name);

}  // namespace stride::host::fmu_export
