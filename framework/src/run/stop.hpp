// Why a run ends before its end time: thrown by the masters, the monitors and the results
// writer, caught by run() (or by whoever steps a Simulation), which reports it. Internal to
// the host.
#pragma once

#include <string>

#include "stride/host/run/run.hpp"
#include "stride/log.hpp"

namespace stride::host {

struct Stop {
  RunStatus status;
  std::string message;
};

// Numbers in messages: 6 significant digits (%g), as the plugins' messages have them, so that
// 1e-7 does not print as 0.000000.
inline std::string number_text(double x) { return format_text("{}", x); }

}  // namespace stride::host
