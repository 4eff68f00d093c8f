#include "run/coupling_error.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <utility>

#include "run/run_state.hpp"

namespace stride::host {

void CouplingErrors::size_for(const RunState& state) {
  links_.assign(state.links.size(), Connection{});
  pair_scale_.assign(state.pairs.size(), 0.0);
  std::size_t widest = 0;
  for (const LinkState& l : state.links) widest = std::max(widest, l.width);
  predicted_.assign(widest, 0.0);
}

void CouplingErrors::reached(const RunState& state) {
  for (std::size_t i = 0; i < state.pairs.size(); ++i)
    pair_scale_[i] = std::max({pair_scale_[i], std::abs(*state.pairs[i].energy_a), std::abs(*state.pairs[i].energy_b)});
}

namespace {

// A ratio against a scale; null (NaN) where the scale is zero.
double relative(double v, double scale) {
  return scale > 0 ? v / scale : std::numeric_limits<double>::quiet_NaN();
}

json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Three significant digits, for a message.
std::string short_number(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g", v);
  return b;
}

// The unit of what a connection carries, in its reader's terms ("1" where the port has none).
std::string unit_of(const LinkState& l) {
  const Node& d = *l.dst->node;
  const std::string& u = d.ports[d.inputs[l.dst_input]].unit;
  return u.empty() ? "1" : u;
}

// Reading order of the accuracy block and of its entries (summary.json is otherwise sorted).
const std::vector<std::string> kBlockOrder = {"status",
                                              "warning",
                                              "rms_relative_coupling_error",
                                              "max_relative_coupling_error",
                                              "max_relative_energy_residual",
                                              "large_rms_relative",
                                              "coupling_error",
                                              "power_bonds"};
const std::vector<std::string> kConnectionOrder = {"from",         "to",  "unit",     "points", "rms_relative", "rms",
                                                   "max_relative", "max", "max_at_s", "scale",  "note"};
const std::vector<std::string> kBondOrder = {"bond", "relative", "residual_J", "scale_J"};

nlohmann::ordered_json ordered(const json& j, const std::vector<std::string>& first) {
  nlohmann::ordered_json o = nlohmann::ordered_json::object();
  for (const std::string& k : first)
    if (j.contains(k)) o[k] = nlohmann::ordered_json(j[k]);
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!o.contains(it.key())) o[it.key()] = nlohmann::ordered_json(*it);
  return o;
}

}  // namespace

json CouplingErrors::summary(const RunState& state) const {
  json conns = json::array();
  double worst = 0.0, worst_rms = 0.0;
  bool any = false;
  const LinkState* worst_link = nullptr;  // the largest RMS relative
  for (const LinkState& l : state.links) {
    const Connection& c = links_[static_cast<std::size_t>(l.index)];
    const double rms = c.points ? std::sqrt(c.sum_sq / static_cast<double>(c.points)) : 0.0;
    json j{{"from", l.link->config.from_text}, {"to", l.link->config.to_text}, {"points", c.points}};
    if (estimate) j["scale"] = c.scale, j["unit"] = unit_of(l);
    if (!estimate) {
      j["note"] = "not estimated (/monitor/coupling_error is false)";
    } else if (c.points > 0) {
      j["max"] = number(c.max);
      j["max_at_s"] = number(c.max_at);
      j["rms"] = number(rms);
      j["max_relative"] = number(relative(c.max, c.scale));
      j["rms_relative"] = number(relative(rms, c.scale));
      if (c.scale > 0) {
        worst = std::max(worst, c.max / c.scale);
        if (rms / c.scale >= worst_rms) worst_rms = rms / c.scale, worst_link = &l;
        any = true;
      }
    } else {
      j["note"] = "the reader reads each sample after it is pushed (interpolation): no prediction to score";
    }
    conns.push_back(j);
  }
  json bonds = json::array();
  double worst_bond = 0.0;
  bool any_bond = false;
  for (std::size_t i = 0; i < state.pairs.size(); ++i) {
    const PairState& p = state.pairs[i];
    const double r = p.residual();
    const double scale = std::max({pair_scale_[i], std::abs(*p.energy_a), std::abs(*p.energy_b)});
    bonds.push_back({{"bond", p.pair->name()},
                     {"residual_J", number(r)},
                     {"scale_J", number(scale)},
                     {"relative", number(relative(std::abs(r), scale))}});
    if (scale > 0 && std::isfinite(r)) worst_bond = std::max(worst_bond, std::abs(r) / scale), any_bond = true;
  }
  json s{{"coupling_error", conns}, {"power_bonds", bonds}};
  s["max_relative_coupling_error"] = any ? json(worst) : json(nullptr);
  s["rms_relative_coupling_error"] = any ? json(worst_rms) : json(nullptr);
  s["max_relative_energy_residual"] = any_bond ? json(worst_bond) : json(nullptr);
  s["large_rms_relative"] = kLargeRmsRelative;
  s["status"] = !any                             ? "not_estimated"
                : worst_rms >= kLargeRmsRelative ? "coupling_error_large"
                                                 : "coupling_error_small";
  if (any && worst_rms >= kLargeRmsRelative) {
    const Connection& c = links_[static_cast<std::size_t>(worst_link->index)];
    const std::string unit = unit_of(*worst_link);
    s["warning"] = "the coupling error is of the order of the signal: on " + worst_link->link->config.from_text +
                   " -> " + worst_link->link->config.to_text + " the RMS local coupling error is " +
                   short_number(std::sqrt(c.sum_sq / static_cast<double>(c.points))) + " " + unit + ", " +
                   short_number(worst_rms) + " of the signal's largest magnitude " + short_number(c.scale) + " " +
                   unit + " (" + short_number(kLargeRmsRelative) +
                   " or more); a shorter macro step or a higher extrapolation order lowers it";
  }
  return s;
}

nlohmann::ordered_json CouplingErrors::in_reading_order(const json& accuracy) {
  nlohmann::ordered_json o = ordered(accuracy, kBlockOrder);
  for (const auto& [key, order] : {std::pair{"coupling_error", &kConnectionOrder}, {"power_bonds", &kBondOrder}})
    if (accuracy.contains(key) && accuracy[key].is_array()) {
      o[key] = nlohmann::ordered_json::array();
      for (const json& e : accuracy[key]) o[key].push_back(ordered(e, *order));
    }
  return o;
}

}  // namespace stride::host
