// A source of signals for inputs that have no other partner: constants, steps, ramps, sines,
// tables with chosen interpolation and extrapolation, and the columns of a CSV file in the input
// format of fmusim and FMPy (time in the first column, variable names in the header, a repeated
// time for a jump). Each output is one signal (a vector for constants and tables of several
// columns). The source ends its steps where a signal jumps or kinks, so that its outputs are
// exact there (signals.hpp).
//
//   "src": {"plugin": "signal", "step": 0.01, "parameters": {
//     "outputs": {"u": {"constant": 2},
//                 "f": {"steps": [[1, 10], [2, 0]], "unit": "N"},
//                 "r": {"ramp": {"height": 1, "duration": 2, "start": 0.5}},
//                 "w": {"sine": {"amplitude": 1, "frequency": 0.5}},
//                 "p": {"table": [[0, 1e5], [1, 2e5]], "interpolation": "linear", "extrapolation": "periodic"}},
//     "csv": "inputs.csv", "csv_options": {"interpolation": "linear", "hold": ["Int32_input"]}}}
#include <fstream>
#include <map>
#include <set>
#include <memory>
#include <sstream>

#include <stride/stride.hpp>

#include "signals.hpp"

namespace {

using namespace stride;
using namespace stride::signals;

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

double number_at(const json& j, const std::string& ptr) {
  if (!j.is_number() || !std::isfinite(j.get<double>()))
    throw ParameterError(ptr, "expected a number, found " + j.dump());
  return j.get<double>();
}
double field(const json& spec, const char* name, double def, const std::string& ptr) {
  return spec.contains(name) ? number_at(spec[name], ptr + "/" + name) : def;
}

template <class E>
E choice(const json& spec, const char* key, const std::map<std::string, E>& allowed, E def, const std::string& ptr) {
  if (!spec.contains(key)) return def;
  const json& v = spec[key];
  std::string names;
  for (const auto& [name, e] : allowed) {
    if (v.is_string() && v.get<std::string>() == name) return e;
    names += (names.empty() ? "" : ", ") + quoted(name);
  }
  throw ParameterError(ptr + "/" + key, "expected one of " + names + ", found " + v.dump());
}
const std::map<std::string, Interpolation> kInterpolations = {{"linear", Interpolation::linear},
                                                              {"previous", Interpolation::previous}};
const std::map<std::string, Extrapolation> kExtrapolations = {
    {"hold", Extrapolation::hold}, {"linear", Extrapolation::linear}, {"periodic", Extrapolation::periodic}};

// Rows [t, v...] of one width, t non-decreasing, at most two rows of one time (a jump).
void check_rows(const std::vector<std::vector<double>>& rows, const std::string& what) {
  if (rows.empty()) throw std::invalid_argument(what + ": expected at least one row");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (rows[i].size() != rows[0].size() || rows[i].size() < 2)
      throw std::invalid_argument(what + ": row " + std::to_string(i) + " has " + std::to_string(rows[i].size()) +
                                  " numbers; expected [t, value, ...] as long as row 0");
    if (i > 0 && rows[i][0] < rows[i - 1][0])
      throw std::invalid_argument(what + ": row " + std::to_string(i) +
                                  " goes back in time (t = " + std::to_string(rows[i][0]) + ")");
    if (i > 1 && rows[i][0] == rows[i - 2][0])
      throw std::invalid_argument(what + ": three rows at t = " + std::to_string(rows[i][0]) + " (two make a jump)");
  }
}

std::vector<std::vector<double>> rows_of(const json& table, const std::string& ptr) {
  if (!table.is_array()) throw ParameterError(ptr, "expected rows [t, value, ...], found " + table.dump());
  std::vector<std::vector<double>> rows;
  for (std::size_t i = 0; i < table.size(); ++i) {
    const json& r = table[i];
    if (!r.is_array())
      throw ParameterError(ptr + "/" + std::to_string(i), "expected a row [t, value, ...], found " + r.dump());
    rows.emplace_back();
    for (std::size_t k = 0; k < r.size(); ++k)
      rows.back().push_back(number_at(r[k], ptr + "/" + std::to_string(i) + "/" + std::to_string(k)));
  }
  try {
    check_rows(rows, "the table");
  } catch (const std::invalid_argument& e) {
    throw ParameterError(ptr, e.what());
  }
  return rows;
}

// One output's signal from its specification (exactly one kind among the keys).
std::unique_ptr<Signal> make_signal(const json& spec, const std::string& ptr) {
  if (!spec.is_object()) throw ParameterError(ptr, "expected an object with one of constant, steps, ramp, sine, table");
  for (auto it = spec.begin(); it != spec.end(); ++it)
    if (!std::set<std::string>{"constant", "steps", "initial", "ramp", "sine", "table", "interpolation",
                               "extrapolation", "unit"}
             .count(it.key()))
      throw ParameterError(ptr + "/" + it.key(),
                           "unknown key; allowed: constant, steps (with initial), ramp, sine, table "
                           "(with interpolation, extrapolation), unit");
  if (spec.contains("constant")) {
    const json& c = spec["constant"];
    std::vector<double> v;
    if (c.is_array())
      for (std::size_t k = 0; k < c.size(); ++k) v.push_back(number_at(c[k], ptr + "/constant/" + std::to_string(k)));
    else
      v.push_back(number_at(c, ptr + "/constant"));
    if (v.empty()) throw ParameterError(ptr + "/constant", "expected a number or a non-empty list");
    return std::make_unique<Constant>(v);
  }
  if (spec.contains("steps")) {
    auto rows = rows_of(spec["steps"], ptr + "/steps");
    rows.insert(rows.begin(), std::vector<double>(rows[0].size(), field(spec, "initial", 0.0, ptr)));
    rows[0][0] = rows[1][0];  // the initial value until the first step: a jump there
    return std::make_unique<Tabulated>(rows, Interpolation::previous, Extrapolation::hold);
  }
  if (spec.contains("ramp")) {
    const json& r = spec["ramp"];
    const std::string p = ptr + "/ramp";
    const double duration = field(r, "duration", 0.0, p);
    if (duration < 0) throw ParameterError(p + "/duration", "expected a duration of 0 s or more");
    return std::make_unique<Ramp>(field(r, "height", 1.0, p), duration, field(r, "offset", 0.0, p),
                                  field(r, "start", 0.0, p));
  }
  if (spec.contains("sine")) {
    const json& s = spec["sine"];
    const std::string p = ptr + "/sine";
    return std::make_unique<Sine>(field(s, "amplitude", 1.0, p), field(s, "frequency", 1.0, p),
                                  field(s, "phase", 0.0, p), field(s, "offset", 0.0, p), field(s, "start", 0.0, p));
  }
  if (spec.contains("table"))
    return std::make_unique<Tabulated>(rows_of(spec["table"], ptr + "/table"),
                                   choice(spec, "interpolation", kInterpolations, Interpolation::linear, ptr),
                                   choice(spec, "extrapolation", kExtrapolations, Extrapolation::hold, ptr));
  throw ParameterError(ptr, "expected one of constant, steps, ramp, sine, table");
}

// A CSV file: a header of names (quoted or not), the first one time, then rows of numbers
// (true/false for Booleans).
struct Csv {
  std::vector<std::string> names;
  std::vector<std::vector<double>> rows;
};
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  std::stringstream ss(line);
  while (std::getline(ss, cell, ',')) {
    const auto a = cell.find_first_not_of(" \t\r\""), b = cell.find_last_not_of(" \t\r\"");
    out.push_back(a == std::string::npos ? "" : cell.substr(a, b - a + 1));
  }
  return out;
}
double csv_number(const std::string& cell, const std::string& where) {
  if (cell == "true" || cell == "True") return 1.0;
  if (cell == "false" || cell == "False") return 0.0;
  std::size_t used = 0;
  double x = 0;
  try {
    x = std::stod(cell, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != cell.size() || !std::isfinite(x))
    throw std::invalid_argument(where + ": \"" + cell + "\" is not a number");
  return x;
}
Csv read_csv(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw ParameterError("", "cannot be read", file);
  Csv csv;
  std::string line;
  if (!std::getline(in, line))
    throw ParameterError("", "is empty (expected a header: time, then variable names)", file);
  csv.names = split(line);
  if (csv.names.size() < 2)
    throw ParameterError("", "line 1: expected a header: time, then at least one variable name", file);
  for (std::size_t n = 2; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const auto cells = split(line);
    if (cells.size() != csv.names.size())
      throw ParameterError("",
                           "line " + std::to_string(n) + ": " + std::to_string(cells.size()) +
                               " values, the header has " + std::to_string(csv.names.size()),
                           file);
    csv.rows.emplace_back();
    try {
      for (std::size_t k = 0; k < cells.size(); ++k)
        csv.rows.back().push_back(csv_number(cells[k], "line " + std::to_string(n)));
    } catch (const std::invalid_argument& e) {
      throw ParameterError("", e.what(), file);
    }
  }
  try {
    check_rows(csv.rows, "the rows");
  } catch (const std::invalid_argument& e) {
    throw ParameterError("", e.what(), file);
  }
  return csv;
}

struct Output {
  std::string name, unit;
  std::unique_ptr<Signal> signal;
};

class SignalSource final : public Subsystem {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "signal";
    i.kind = Kind::subsystem;
    i.form = Form::stepper;
    i.version = "1.0.0";
    i.description =
        "Signals for inputs without a partner: constants, steps, ramps, sines, tables, CSV columns (fmusim/FMPy input "
        "format)";
    i.parameters = {
        object_param("outputs", json::object(),
                     "output name -> {constant | steps (+ initial) | ramp {height, duration, offset, start} | "
                     "sine {amplitude, frequency, phase, offset, start} | table [[t, v...]] (+ interpolation "
                     "linear|previous, extrapolation hold|linear|periodic)}, and unit"),
        path_param("csv", "",
                   "a CSV file: time in the first column, one output per further column named by the header"),
        object_param("csv_options", json::object(),
                     "interpolation (linear|previous), extrapolation (hold|linear|periodic), hold: [columns held "
                     "at their previous value, as fmusim and FMPy hold discrete inputs], units: {column: unit}")};
    return i;
  }

  explicit SignalSource(const Params& p) {
    const json& outs = p.values().at("outputs");
    for (auto it = outs.begin(); it != outs.end(); ++it) {
      const std::string ptr = "/outputs/" + it.key();
      outputs_.push_back({it.key(), it->value("unit", std::string("1")), make_signal(*it, ptr)});
    }
    if (!p.string("csv").empty()) add_csv(p.string("csv"), p.values().at("csv_options"));
    if (outputs_.empty())
      throw ParameterError("/outputs", "expected at least one output (in \"outputs\" or a \"csv\" file)");
  }

  std::vector<PortSpec> ports() const override {
    std::vector<PortSpec> out;
    for (const auto& o : outputs_) out.push_back(output(o.name, o.signal->size(), o.unit, "signal"));
    return out;
  }
  void initialize(double t0) override { t_ = t0; }
  // Steps end where a signal jumps or kinks.
  double step(double t, double h) override {
    double end = t + h;
    for (const auto& o : outputs_) end = std::min(end, o.signal->breaks_after(t));
    t_ = end > t ? end : t + h;
    return t_;
  }
  void outputs(std::span<double> y) override {
    std::size_t at = 0;
    for (const auto& o : outputs_) {
      o.signal->value(t_, y.subspan(at, o.signal->size()));
      at += o.signal->size();
    }
  }
  bool can_save_state() const override { return true; }
  void save_state(std::unique_ptr<SavedState>& slot) override { save_value(slot, t_); }
  void restore_state(const SavedState& s) override { t_ = saved_value<double>(s); }

 private:
  // One output per column after time, named by the header.
  void add_csv(const std::string& file, const json& options) {
    for (auto it = options.begin(); it != options.end(); ++it)
      if (!std::set<std::string>{"interpolation", "extrapolation", "hold", "units"}.count(it.key()))
        throw ParameterError("/csv_options/" + it.key(),
                             "unknown key; allowed: interpolation, extrapolation, hold, units");
    const Csv csv = read_csv(file);
    const auto interpolation = choice(options, "interpolation", kInterpolations, Interpolation::linear, "/csv_options");
    const auto extrapolation = choice(options, "extrapolation", kExtrapolations, Extrapolation::hold, "/csv_options");
    const json hold = options.value("hold", json::array()), units = options.value("units", json::object());
    for (std::size_t k = 1; k < csv.names.size(); ++k) {
      std::vector<std::vector<double>> rows;
      for (const auto& r : csv.rows) rows.push_back({r[0], r[k]});
      const bool held = std::find(hold.begin(), hold.end(), csv.names[k]) != hold.end();
      const std::string unit = units.contains(csv.names[k]) && units[csv.names[k]].is_string()
                                   ? units[csv.names[k]].get<std::string>()
                                   : "1";
      outputs_.push_back(
          {csv.names[k], unit,
           std::make_unique<Tabulated>(rows, held ? Interpolation::previous : interpolation, extrapolation)});
    }
  }

  std::vector<Output> outputs_;
  double t_ = 0.0;
};

}  // namespace

STRIDE_PLUGIN(SignalSource)
