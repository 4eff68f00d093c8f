// summary.json of a run: how it ended, what each subsystem and connection did, the energy
// balance and the power bonds' residuals. Internal to the host.
//
// It reads the run's state once the loop has ended (an observer of the run's end, not of
// its steps): the plugins' statistics(), report() and energy() are called here, and whatever
// they throw is reported in the summary instead. Allocates; one thread.
#pragma once

#include "run/run_state.hpp"
#include "core/run_log.hpp"
#include "stride/host/run/run.hpp"

namespace stride::host {

// What a subsystem says of its answer (Component::accuracy()); one that throws is judged
// outside its bounds.
Accuracy accuracy_of(const NodeState& n);

// The summary of a run that ended with `result` (status, message, end_time_reached,
// wall_time), `rows` rows of results.csv written; `state` null when the run could not even
// make its state (out of memory, another run of the experiment under way).
json run_summary(const Experiment& experiment, const RunState* state, const RunResult& result, std::size_t rows);

// The unit of each numeric column of results.csv ({"fast.x": "m", ...}; "1" where the port
// declares none): summary.json's "column_units", for readers that label axes (stride view).
json column_units(const Experiment& experiment);

}  // namespace stride::host
