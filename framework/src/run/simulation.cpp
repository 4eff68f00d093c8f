#include "run/simulation.hpp"

#include <stdexcept>

namespace stride::host {

Simulation::Simulation(Experiment& experiment, const Options& o)
    : experiment_(experiment),
      state_(experiment.graph()),
      master_(state_, experiment.manifest().coupling, experiment.manifest().monitor.energy_residual_limit, o.stop,
              o.beacon) {
  if (o.outputs_read_by_run_only) state_.read_only_what_the_run_reads();
}

Simulation::~Simulation() = default;

void Simulation::observe(Observer& o) {
  if (scheme_) throw std::logic_error("observers are added before initialize()");
  master_.observe(o);
}

void Simulation::initialize() {
  if (scheme_) throw std::logic_error("the simulation is initialized already");
  scheme_ = make_coupling_scheme(master_, macro_log_);
  try {
    master_.initialize();
  } catch (...) {
    stopped_ = true;
    throw;
  }
}

void Simulation::advance_to(double t) {
  const CouplingConfig& c = experiment_.manifest().coupling;
  if (!scheme_) throw std::logic_error("advance_to() before initialize()");
  if (stopped_) throw std::logic_error("advance_to() after the run stopped");
  if (!(t <= c.end))
    throw std::invalid_argument("time " + number_text(t) + " s is past the end " + number_text(c.end) + " s");
  try {
    scheme_->advance(t);
    // Outputs() and the caller read every subsystem's outputs at the time reached.
    for (NodeState& n : state_.nodes) master_.fresh_outputs(n);
  } catch (...) {
    stopped_ = true;
    throw;
  }
}

std::span<const double> Simulation::outputs(const std::string& subsystem_port) const {
  const auto dot = subsystem_port.find('.');
  for (const NodeState& n : state_.nodes) {
    const Node& d = *n.node;
    if (dot == std::string::npos || d.name != subsystem_port.substr(0, dot)) continue;
    const int p = d.port_index(subsystem_port.substr(dot + 1));
    if (p >= 0 && d.ports[static_cast<std::size_t>(p)].direction == Direction::output) {
      const std::size_t at = d.output_offset[static_cast<std::size_t>(p)], size = d.ports[static_cast<std::size_t>(p)].size;
      for (std::size_t e = at; e < at + size; ++e)
        if (n.outputs_read && !n.outputs_read[e])
          throw std::logic_error("output \"" + subsystem_port + "\" is not computed: this simulation reads only what the run reads");
      return std::span<const double>(n.y).subspan(at, size);
    }
  }
  throw std::invalid_argument("no output \"" + subsystem_port + "\" (expected \"subsystem.port\")");
}

}  // namespace stride::host
