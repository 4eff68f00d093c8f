// Our own check of a modelDescription.xml (FMI 2.0 or 3.0) against the rules the standard
// states in its text and tables, for the descriptions Stride writes (and any other): the
// required attributes, unique names and value references, units declared before use, the
// allowed combinations of causality, variability and initial, start values where required
// (and only there) and within min/max, array dimensions, and a ModelStructure that lists every
// output and initial unknown with dependencies on known variables only. Internal to the host.
//
// Order: model_description_xml() (model_description.hpp) -> model_description_problems() ->
// the exporter refuses to pack a description with any problem. Any thread.
#pragma once

#include <string>
#include <vector>

namespace stride::host::fmu_export {

// Every problem found, each "line N: what is wrong" (naming the variable or element); empty
// when the description follows the rules checked.
std::vector<std::string> model_description_problems(const std::string& xml_text);

}  // namespace stride::host::fmu_export
