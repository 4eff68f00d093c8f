#include "run/simulation.hpp"

#include <algorithm>
#include <stdexcept>

namespace stride::host {

Simulation::Simulation(Experiment& experiment, const Options& o)
    : experiment_(experiment),
      state_(experiment.graph()),
      master_(state_, experiment.manifest().coupling, experiment.manifest().monitor.energy_residual_limit, o.stop,
              o.beacon) {
  if (o.outputs_read_by_run_only) state_.read_only_what_the_run_reads();
  state_.coupling_errors.estimate = experiment.manifest().monitor.coupling_error;
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

void Simulation::initial_outputs() {
  if (scheme_) throw std::logic_error("initial_outputs() after initialize()");
  stopped_ = true;  // nothing steps from here
  master_.initial_outputs();
}

void Simulation::advance_to(double t) {
  const CouplingConfig& c = experiment_.manifest().coupling;
  if (!scheme_) throw std::logic_error("advance_to() before initialize()");
  if (stopped_) throw std::logic_error("advance_to() after the run stopped");
  if (!(t <= c.end))
    throw std::invalid_argument("time " + number_text(t) + " s is past the end " + number_text(c.end) + " s");
  fresh_outputs();  // inputs set since: the outputs the steps start from
  try {
    scheme_->advance(t);
  } catch (...) {
    stopped_ = true;
    throw;
  }
  fresh_outputs();  // outputs() and the caller read every subsystem's outputs at the time reached
}

void Simulation::fresh_outputs() {
  if (!scheme_ || stopped_) return;
  try {
    for (NodeState& n : state_.nodes) master_.fresh_outputs(n);
  } catch (...) {
    stopped_ = true;
    throw;
  }
}

void Simulation::set_input(const std::string& subsystem_port, std::span<const double> values) {
  const auto dot = subsystem_port.find('.');
  for (NodeState& n : state_.nodes) {
    const Node& d = *n.node;
    if (dot == std::string::npos || d.name.size() != dot || subsystem_port.compare(0, dot, d.name) != 0) continue;
    for (std::size_t k = 0; k < d.inputs.size(); ++k) {
      const PortSpec& p = d.ports[d.inputs[k]];
      if (subsystem_port.compare(dot + 1, std::string::npos, p.name) != 0) continue;
      if (!d.in_links[k].empty())
        throw std::invalid_argument("input \"" + subsystem_port + "\" is fed by a connection; it cannot be set");
      if (values.size() != p.size)
        throw std::invalid_argument("input \"" + subsystem_port + "\" has " + std::to_string(p.size) +
                                    " elements, " + std::to_string(values.size()) + " values given");
      std::copy(values.begin(), values.end(), n.input_value[k].begin());
      n.known[k] = NodeInputs::Known{};  // read again: the held value changed
      n.inputs_renewed = true;
      n.y_stale = n.y_stale || scheme_ != nullptr;  // read again by fresh_outputs()
      return;
    }
  }
  throw std::invalid_argument("no input \"" + subsystem_port + "\" (expected \"subsystem.port\")");
}

bool Simulation::can_save() const {
  if (!scheme_ || stopped_ || !scheme_->position() || !state_.links.empty()) return false;
  for (const NodeState& n : state_.nodes)
    if (!n.sub->can_save_state()) return false;
  return true;
}

void Simulation::save(Saved& s) {
  if (!can_save()) throw std::logic_error("this run's state cannot be saved");
  s.position = *scheme_->position();
  s.nodes.resize(state_.nodes.size());
  s.inputs.resize(state_.nodes.size());
  s.renewed.resize(state_.nodes.size());
  for (NodeState& n : state_.nodes) {
    const auto i = static_cast<std::size_t>(n.index);
    master_.save(n, s.nodes[i]);
    s.inputs[i] = n.input_value;
    s.renewed[i] = n.inputs_renewed;
  }
}

void Simulation::restore(const Saved& s) {
  if (!can_save() || s.nodes.size() != state_.nodes.size())
    throw std::logic_error("this run's state cannot be restored");
  for (NodeState& n : state_.nodes) {
    const auto i = static_cast<std::size_t>(n.index);
    master_.restore(n, s.nodes[i]);
    for (std::size_t k = 0; k < n.input_value.size(); ++k) {
      std::copy(s.inputs[i][k].begin(), s.inputs[i][k].end(), n.input_value[k].begin());
      n.known[k] = NodeInputs::Known{};
    }
    n.inputs_renewed = s.renewed[i];
  }
  scheme_->resume(s.position);
}

std::span<const double> Simulation::outputs(const std::string& subsystem_port) const {
  const auto dot = subsystem_port.find('.');
  for (const NodeState& n : state_.nodes) {
    const Node& d = *n.node;
    if (dot == std::string::npos || d.name != subsystem_port.substr(0, dot)) continue;
    const int p = d.port_index(subsystem_port.substr(dot + 1));
    if (p >= 0 && d.ports[static_cast<std::size_t>(p)].direction == Direction::output) {
      const std::size_t at = d.output_offset[static_cast<std::size_t>(p)],
                        size = d.ports[static_cast<std::size_t>(p)].size;
      for (std::size_t e = at; e < at + size; ++e)
        if (n.outputs_read && !n.outputs_read[e])
          throw std::logic_error(
              "output \"" + subsystem_port +
              "\" is not read by the run, so it may not be computed (this simulation reads only what the run reads)");
      return std::span<const double>(n.y).subspan(at, size);
    }
  }
  throw std::invalid_argument("no output \"" + subsystem_port + "\" (expected \"subsystem.port\")");
}

}  // namespace stride::host
