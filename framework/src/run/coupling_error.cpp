#include "run/coupling_error.hpp"

#include <algorithm>
#include <cmath>
#include <span>

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

}  // namespace

json CouplingErrors::summary(const RunState& state) const {
  json conns = json::array();
  double worst = 0.0, worst_rms = 0.0;
  bool any = false;
  for (const LinkState& l : state.links) {
    const Connection& c = links_[static_cast<std::size_t>(l.index)];
    const double rms = c.points ? std::sqrt(c.sum_sq / static_cast<double>(c.points)) : 0.0;
    json j{{"from", l.link->config.from_text}, {"to", l.link->config.to_text}, {"points", c.points}};
    if (estimate) j["scale"] = c.scale;
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
        worst_rms = std::max(worst_rms, rms / c.scale);
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
  return s;
}

}  // namespace stride::host
