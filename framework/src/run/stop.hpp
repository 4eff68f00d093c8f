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

}  // namespace stride::host
