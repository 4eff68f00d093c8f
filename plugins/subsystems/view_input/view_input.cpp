// Sliders and buttons on the page of `stride run --view` as outputs (docs/viewer.md, "Live"):
// a person drives a run from the browser (the log crane's valves in
// manifests/real_time/log_crane_view.json).
//
//   "panel": {"plugin": "view_input", "step": 0.016, "parameters": {"controls": [
//     {"name": "lift_valve", "unit": "1", "min": -1, "max": 1, "initial": 0},
//     {"name": "horn", "kind": "button"}]}}
//
// One output per control, in order. Values reach the plugin through the host's board of live
// controls (stride/view_board.hpp, shared memory filled by the server thread of `--view`, which
// clamps them to [min, max] and refuses values that are not finite). At the start of each step
// from t the plugin reads every control's latest value (two atomic loads each: the step never
// waits for the page) and outputs it at t + h, held until a newer one; so a value set while the
// run goes appears at the communication point after the one it arrived before, and a value set
// before the run started (the page open while the plugins initialize) is the output at t0. Without a board
// (no `--view`: a batch run, a sweep, a test) the outputs hold their initial values. A button is
// max while pressed and min otherwise (0 and 1 unless given). statistics: updates_received (values
// the page stored for these controls since `stride run` started), board ("attached" or "none"), and
// with a board the server's counts for the whole page: page_messages_refused, page_values_clamped.
#include <algorithm>
#include <cmath>
#include <set>

#include <stride/stride.hpp>
#include <stride/view_board.hpp>

namespace {

using namespace stride;

struct ControlSpec {
  std::string name, unit = "1";
  bool button = false;
  double min = 0.0, max = 1.0, initial = 0.0;
};

double number_at(const json& c, const std::string& key, const std::string& p) {
  if (!c[key].is_number() || !std::isfinite(c[key].get<double>()))
    throw ParameterError(p + "/" + key, "expected a finite number, found " + c[key].dump());
  return c[key].get<double>();
}

std::string string_at(const json& c, const std::string& key, const std::string& p, std::size_t longest) {
  if (!c[key].is_string() || c[key].get<std::string>().size() >= longest)
    throw ParameterError(
        p + "/" + key, "expected a string of fewer than " + std::to_string(longest) + " bytes, found " + c[key].dump());
  return c[key].get<std::string>();
}

// One control of the list at /controls/i.
ControlSpec control_of(const json& c, const std::string& p) {
  if (!c.is_object()) throw ParameterError(p, "expected an object {\"name\", \"unit\", \"min\", \"max\", ...}");
  for (auto it = c.begin(); it != c.end(); ++it)
    if (std::set<std::string>{"name", "unit", "min", "max", "initial", "kind"}.count(it.key()) == 0)
      throw ParameterError(p + "/" + it.key(), "unknown key; allowed: name, unit, min, max, initial, kind");
  if (!c.contains("name")) throw ParameterError(p + "/name", "expected the control's name (a non-empty string)");
  ControlSpec s;
  s.name = string_at(c, "name", p, view_board::kNameSize);
  if (s.name.empty()) throw ParameterError(p + "/name", "expected the control's name (a non-empty string)");
  if (c.contains("unit")) s.unit = string_at(c, "unit", p, view_board::kUnitSize);
  if (c.contains("kind")) {
    const std::string kind = string_at(c, "kind", p, 16);
    if (kind != "slider" && kind != "button")
      throw ParameterError(p + "/kind", "expected \"slider\" or \"button\", found \"" + kind + "\"");
    s.button = kind == "button";
  }
  if (!s.button && (!c.contains("min") || !c.contains("max")))
    throw ParameterError(p + (c.contains("min") ? "/max" : "/min"), "a slider needs its range: \"min\" and \"max\"");
  if (c.contains("min")) s.min = number_at(c, "min", p);
  if (c.contains("max")) s.max = number_at(c, "max", p);
  if (!(s.max > s.min))
    throw ParameterError(p + "/max",
                         "expected max > min, found [" + json(s.min).dump() + ", " + json(s.max).dump() + "]");
  s.initial = c.contains("initial") ? number_at(c, "initial", p) : std::clamp(0.0, s.min, s.max);
  if (s.initial < s.min || s.initial > s.max)
    throw ParameterError(p + "/initial", "expected a value in [min, max] = [" + json(s.min).dump() + ", " +
                                             json(s.max).dump() + "], found " + json(s.initial).dump());
  return s;
}

std::vector<ControlSpec> controls_of(const json& list) {
  if (!list.is_array() || list.empty())
    throw ParameterError("/controls", "expected at least one control [{\"name\", \"unit\", \"min\", \"max\", ...}]");
  std::vector<ControlSpec> out;
  std::set<std::string> names;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string p = "/controls/" + std::to_string(i);
    out.push_back(control_of(list[i], p));
    if (!names.insert(out.back().name).second)
      throw ParameterError(p + "/name", "\"" + out.back().name + "\" is declared twice");
  }
  return out;
}

class ViewInput final : public Subsystem {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "view_input";
    i.kind = Kind::subsystem;
    i.form = Form::stepper;
    i.version = "1.0.0";
    i.description =
        "Sliders and buttons on the page of `stride run --view` as outputs (initial values without a browser)";
    i.parameters = {object_list_param(
        "controls", nullptr,
        "one output per control, in order: [{\"name\", \"unit\" (default \"1\"), \"min\", \"max\" (a slider's range; "
        "a button's values when released and pressed, default 0 and 1), \"initial\" (default 0, or the nearest "
        "bound), \"kind\": \"slider\" (default) or \"button\"}]")};
    return i;
  }

  explicit ViewInput(const Params& p) : specs_(controls_of(p.values().at("controls"))) {
    values_.resize(specs_.size());
    seen_.assign(specs_.size(), 0);
    board_ = view_board::attach();
    if (!board_) return;
    for (const auto& s : specs_) {
      view_board::Control* c = view_board::enroll(*board_, s.name, s.unit, s.button, s.min, s.max, s.initial);
      if (!c) throw std::runtime_error("the page's board of controls is full (at most 64 controls)");
      controls_.push_back(c);
    }
  }
  ~ViewInput() override { view_board::detach(board_); }
  ViewInput(const ViewInput&) = delete;
  ViewInput& operator=(const ViewInput&) = delete;

  std::vector<PortSpec> ports() const override {
    std::vector<PortSpec> out;
    for (const auto& s : specs_)
      out.push_back(output(s.name, 1, s.unit, s.button ? "a button on the page" : "a slider on the page"));
    return out;
  }

  // The page may have set values before the run started: they are the outputs at t0.
  void initialize(double /*t0*/) override {
    updates_ = 0;
    for (std::size_t i = 0; i < specs_.size(); ++i) values_[i] = specs_[i].initial;
    for (std::size_t i = 0; i < controls_.size(); ++i) {
      seen_[i] = controls_[i]->updates.load(std::memory_order_acquire);
      values_[i] = controls_[i]->value.load(std::memory_order_relaxed);
      updates_ += static_cast<long>(seen_[i]);
    }
  }

  double step(double t, double h) override {
    for (std::size_t i = 0; i < controls_.size(); ++i) {
      const std::uint64_t n = controls_[i]->updates.load(std::memory_order_acquire);
      if (n == seen_[i]) continue;
      updates_ += static_cast<long>(n - seen_[i]);
      seen_[i] = n;
      values_[i] = controls_[i]->value.load(std::memory_order_relaxed);
    }
    return t + h;
  }

  void outputs(std::span<double> y) override {
    for (std::size_t i = 0; i < values_.size(); ++i) y[i] = values_[i];
  }

  json statistics() const override {
    json s = {{"updates_received", updates_}, {"board", board_ ? "attached" : "none"}};
    if (board_) {  // counted by the server for the whole page
      s["page_messages_refused"] = board_->refused.load(std::memory_order_relaxed);
      s["page_values_clamped"] = board_->clamped.load(std::memory_order_relaxed);
    }
    return s;
  }

 private:
  std::vector<ControlSpec> specs_;
  std::vector<double> values_;
  std::vector<std::uint64_t> seen_;
  std::vector<view_board::Control*> controls_;
  view_board::Board* board_ = nullptr;
  long updates_ = 0;
};

}  // namespace

STRIDE_PLUGIN(ViewInput)
