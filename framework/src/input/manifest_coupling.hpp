// The manifest's "coupling" section and the checks of its times and sizes (input/manifest.cpp
// calls them in the order its problems are reported). Both add to `chk.diags`; nothing throws.
#pragma once

#include "stride/host/input/json_input.hpp"
#include "stride/host/input/manifest.hpp"

namespace stride::host {

// "coupling" of the document `d`, then its "iteration" and "step_control" (which depend on the
// rest of it), into m.coupling.
void read_coupling(DocumentChecker& chk, const json& d, Manifest& m);

// Every number that sets a time or a size, against Limits (after every section is read): steps
// that cannot mean what they say are errors, a step that does not divide the macro step a
// warning in m.warnings.
void check_sizes(Manifest& m, DocumentChecker& chk);

}  // namespace stride::host
