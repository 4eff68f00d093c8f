#include "run/summary.hpp"

#include <cmath>
#include <filesystem>

namespace stride::host {
namespace {

json statistics_of(const NodeState& n) {
  try {
    return n.sub->statistics();
  } catch (const std::exception& e) {
    return json{{"error", e.what()}};
  } catch (...) {
    return json{{"error", "an exception that is not a std::exception"}};
  }
}

}  // namespace

Accuracy accuracy_of(const NodeState& n) {
  try {
    return n.sub->accuracy();
  } catch (...) {
    return {false, "its accuracy could not be judged (accuracy() threw)"};
  }
}

namespace {

json message_counts(const RunLog::Counts& said) {
  return {{"warnings", said.warnings}, {"errors", said.errors}, {"left_out", said.suppressed}};
}

// Energy balance (Rahikainen 2020 §2.3.2, system level): for each subsystem that reports its
// stored energy, the change over the run against the energy that entered through its power
// bonds; the difference was made or lost inside it (sources, dissipation, integration error).
struct EnergyTotals {
  double energy = 0, change = 0, bond_in = 0;
  bool known = true;
};

// A subsystem's report, stored energy and energy balance.
void add_energy(json& j, const NodeState& n, EnergyTotals& total) {
  double bond_in = 0;
  for (auto& b : n.bonds) bond_in += b.energy;
  try {
    json r = n.sub->report();
    if (!r.empty()) j["report"] = r;
    const double e = n.sub->energy();
    if (!std::isfinite(e)) {
      total.known = false;
      return;
    }
    j["energy_J"] = e;
    total.energy += e;
    if (!std::isfinite(n.energy0)) {
      total.known = false;
      return;
    }
    j["energy_balance"] = {{"initial_J", n.energy0},
                           {"change_J", e - n.energy0},
                           {"bond_energy_in_J", bond_in},
                           {"internal_J", e - n.energy0 - bond_in}};
    total.change += e - n.energy0;
    total.bond_in += bond_in;
  } catch (const std::exception& e) {
    j["report_error"] = e.what();
    total.known = false;
  } catch (...) {
    j["report_error"] = "an exception that is not a std::exception";
    total.known = false;
  }
}

json subsystems(const RunState& state, EnergyTotals& total) {
  json subs = json::object();
  for (const NodeState& n : state.nodes) {
    const Node& d = *n.node;
    json j;
    j["plugin"] = d.plugin;
    j["step"] = d.step;
    j["steps"] = n.steps;
    // The steps it took, which differ from `step` where a communication point or event cut them.
    if (n.steps > 0)
      j["steps_taken"] = {{"count", n.steps}, {"smallest", n.smallest_step}, {"largest", n.largest_step}};
    j["time_reached"] = n.t;
    j["statistics"] = statistics_of(n);
    if (const Accuracy a = accuracy_of(n); !a.within) j["accuracy"] = {{"within", false}, {"reason", a.reason}};
    add_energy(j, n, total);
    j["messages"] = message_counts(state.graph.log->counts(d.name));
    if (!n.bonds.empty()) {
      json bonds = json::array();
      for (std::size_t i = 0; i < n.bonds.size(); ++i)
        bonds.push_back({{"bond", d.bonds[i].name}, {"energy_in_J", n.bonds[i].energy}});
      j["bonds"] = bonds;
    }
    subs[d.name] = j;
  }
  return subs;
}

json log_entry(const RunLog& log) {
  const RunLog::Counts all = log.total();
  const LogConfig& lc = log.config();
  json j = {{"file", "log.txt"},         {"level", to_string(lc.level)}, {"stderr_level", to_string(lc.stderr_level)},
            {"repeats", lc.repeats},     {"warnings", all.warnings},     {"errors", all.errors},
            {"left_out", all.suppressed}};
  if (auto e = log.error(); !e.empty()) j["error"] = e;
  return j;
}

json connections(const RunState& state) {
  json conns = json::array();
  for (const LinkState& l : state.links) {
    const Link& d = *l.link;
    json c{{"from", d.config.from_text}, {"to", d.config.to_text}, {"extrapolator", d.config.extrapolator.plugin}};
    const NodeState& dst = *l.dst;
    for (std::size_t i = 0; i < dst.bonds.size(); ++i)
      if (dst.bonds[i].input == d.dst_input && dst.bonds[i].element == d.dst_offset)
        c["bond"] = dst.node->bonds[i].name, c["energy_J"] = dst.bonds[i].energy;
    if (const std::size_t i = d.src->output_port_at(d.src_offset); i < d.src->ports.size())
      c["direct_feedthrough"] = d.src->ports[i].feedthrough;
    if (const RunLog::Counts said = state.graph.log->counts("connection " + d.config.pointer);
        said.warnings + said.errors + said.suppressed > 0)
      c["messages"] = message_counts(said);
    conns.push_back(c);
  }
  return conns;
}

// Wall time per simulated second (below 1: faster than real time); the time reached counts, so a
// run that stopped early is not flattered.
void add_real_time_factor(json& s, const RunResult& res, double start) {
  if (const double simulated = res.end_time_reached - start; simulated > 0.0)
    s["real_time_factor"] = res.wall_time / simulated;
}

}  // namespace

json column_units(const Experiment& ex) {
  json units = json::object();
  for (const auto& c : ex.columns())
    if (std::string u = ex.column_unit(c); !u.empty()) units[c] = u;
  return units;
}

json run_summary(const Experiment& ex, const RunState* run, const RunResult& res, std::size_t rows) {
  const Manifest& m = ex.manifest();
  json s;
  s["status"] = to_string(res.status);
  if (!res.message.empty()) s["message"] = res.message;
  s["manifest"] = std::filesystem::absolute(m.file).string();
  s["start_time"] = m.coupling.start;
  s["end_time"] = m.coupling.end;
  s["end_time_reached"] = res.end_time_reached;
  s["wall_time_s"] = res.wall_time;
  add_real_time_factor(s, res, m.coupling.start);
  s["coupling"] = m.document.value("coupling", json::object());
  s["results"] = "results.csv";
  s["rows"] = rows;
  s["column_units"] = column_units(ex);
  if (!run) {
    s["log"] = log_entry(*ex.graph().log);
    return s;
  }
  const RunState& state = *run;
  EnergyTotals total;
  s["subsystems"] = subsystems(state, total);  // (plugins may log from report())
  s["log"] = log_entry(*state.graph.log);
  if (total.known && !state.nodes.empty()) {
    s["total_subsystem_energy_J"] = total.energy;
    // Every subsystem reports energy: the whole system's change against what crossed its
    // bonds (the energy residuals of coupled bonds plus any bond left unpaired).
    s["energy_balance"] = {
        {"change_J", total.change}, {"bond_energy_in_J", total.bond_in}, {"internal_J", total.change - total.bond_in}};
  }
  s["connections"] = connections(state);
  json pairs = json::array();
  double total_residual = 0;
  for (const PairState& p : state.pairs) {
    const BondPair& b = *p.pair;
    pairs.push_back({{"bond", b.name()},
                     {"energy_in_J", {{b.a->name, *p.energy_a}, {b.b->name, *p.energy_b}}},
                     {"residual_J", p.residual()}});
    total_residual += p.residual();
  }
  s["power_bonds"] = pairs;
  if (!state.pairs.empty()) s["energy_residual_J"] = total_residual;
  s["accuracy"] = state.coupling_errors.summary(state);
  return s;
}

}  // namespace stride::host
