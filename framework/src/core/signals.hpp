// Names of the signals a run or a probed FMU can end by, for reports.
#pragma once

#include <string>

namespace stride::host {

// "SIGINT", "SIGSEGV", ... (or "signal N").
std::string signal_name(int signal);

}  // namespace stride::host
