// Why a run ends before its end time: thrown by the masters, the monitors and the results
// writer, caught by run() (or by whoever steps a Simulation), which reports it. Internal to
// the host.
#pragma once

#include <string>

#include "stride/host/input/json_input.hpp"  // number_text, for the messages
#include "stride/host/run/run.hpp"
#include "stride/log.hpp"

namespace stride::host {

struct Stop {
  RunStatus status;
  std::string message;
};

// Numbers in the run's messages: 6 significant digits (%g), as the plugins' messages have them,
// so that a time reached by adding steps reads 0.6, not 0.6000000000000001. (Files and tables
// write every digit: number_text, json_input.hpp.)
inline std::string message_number(double x) { return format_text("{}", x); }

}  // namespace stride::host
