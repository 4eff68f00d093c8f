// The manifest's "coupling" section (scheme, macro step, iteration, adaptive macro step) and the
// checks of every time and size it implies, read apart from the other sections.
#include <algorithm>
#include <cmath>
#include <limits>

#include "input/manifest_coupling.hpp"

namespace stride::host {

namespace {

// obj[key] into `out` when it is a finite number in [lo, hi] (or (lo, hi]); else an error.
void in_range(DocumentChecker& chk, const json& obj, const std::string& p, const char* key, double lo, bool lo_open,
              double hi, const char* what, double& out) {
  if (!obj.contains(key)) return;
  const json& v = obj[key];
  const double x = v.is_number() ? v.get<double>() : std::nan("");
  if (!v.is_number() || !std::isfinite(x) || (lo_open ? x <= lo : x < lo) || x > hi)
    chk.error(p + "/" + key, std::string("expected ") + what + ", found " + type_name(v));
  else out = x;
}

// /coupling/iteration (after the scheme and align are read).
void read_iteration(DocumentChecker& chk, const json& it, CouplingConfig& c) {
  const std::string p = "/coupling/iteration";
  if (!chk.object(it, p, {"max_iterations", "relaxation", "tolerance", "absolute_tolerance", "unconverged"}, {}))
    return;
  IterationConfig& ic = c.iteration;
  ic.enabled = true;
  if (c.scheme == Scheme::multirate)
    chk.error(p,
              "iterative coupling repeats the macro steps of the \"jacobi\" and \"gauss_seidel\" schemes; "
              "\"multirate\" has none (remove /coupling/iteration or change /coupling/scheme)");
  if (!c.align)
    chk.error(
        p, "iterative coupling needs every subsystem to land on the communication points: set /coupling/align to true");
  if (it.contains("max_iterations")) {
    const json& v = it["max_iterations"];
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1000)
      chk.error(
          p + "/max_iterations",
          "expected an integer from 1 to 1000 (passes per macro step, the first included), found " + type_name(v));
    else ic.max_iterations = static_cast<int>(v.get<long long>());
  }
  in_range(chk, it, p, "relaxation", 0.0, true, 2.0,
           "a relaxation factor in (0, 2] (1: no relaxation, < 1: under-relaxation)", ic.relaxation);
  in_range(chk, it, p, "tolerance", 0.0, false, 1.0, "a relative tolerance in [0, 1]", ic.tolerance);
  in_range(chk, it, p, "absolute_tolerance", 0.0, false, std::numeric_limits<double>::max(),
           "a non-negative absolute tolerance (in each connection's unit)", ic.absolute_tolerance);
  if (auto u = chk.string(it, p, "unconverged", {"accept", "stop"})) ic.stop_unconverged = *u == "stop";
}

// /coupling/step_control (after the macro step, the scheme, align and iteration are read).
void read_step_control(DocumentChecker& chk, const json& it, CouplingConfig& c) {
  const std::string p = "/coupling/step_control";
  if (!chk.object(it, p, {"tolerance", "absolute_tolerance", "safety", "min_step", "max_step", "reject"}, {})) return;
  StepControlConfig& sc = c.step_control;
  sc.enabled = true;
  if (c.scheme == Scheme::multirate)
    chk.error(p,
              "the adaptive macro step sets the macro steps of the \"jacobi\" and \"gauss_seidel\" schemes; "
              "\"multirate\" has none (remove /coupling/step_control or change /coupling/scheme)");
  if (!c.align)
    chk.error(p,
              "the adaptive macro step needs every subsystem to land on the communication points: set /coupling/align "
              "to true");
  if (c.iteration.enabled)
    chk.error(
        p, "the adaptive macro step and iterative coupling (/coupling/iteration) cannot be combined: use one of them");
  if (it.contains("reject")) {
    if (!it["reject"].is_boolean())
      chk.error(p + "/reject", "expected true or false, found " + type_name(it["reject"]));
    else sc.reject = it["reject"].get<bool>();
  }
  if (sc.reject && c.scheme == Scheme::gauss_seidel)
    chk.error(p + "/reject",
              "repeating a rejected macro step is implemented for \"jacobi\" only (Gauss–Seidel hands values on "
              "inside the step); set it to false or use \"jacobi\"");
  in_range(chk, it, p, "tolerance", 0.0, true, 1.0,
           "a relative tolerance in (0, 1] (energy residual per macro step over the energy through the bond)",
           sc.tolerance);
  in_range(chk, it, p, "safety", 0.0, true, 1.0, "a safety factor in (0, 1]", sc.safety);
  sc.absolute_tolerance = chk.quantity(it, p, "absolute_tolerance", "a positive energy residual per macro step in J",
                                       "J", true, sc.absolute_tolerance)
                              .value_or(sc.absolute_tolerance);
  if (c.macro_step <= 0) return;  // reported already
  auto min = chk.quantity(it, p, "min_step", "a positive smallest macro step in s", "s", true, c.macro_step / 100);
  auto max = chk.quantity(it, p, "max_step", "a positive largest macro step in s", "s", true, 10 * c.macro_step);
  if (min && *min > c.macro_step)
    chk.error(p + "/min_step",
              "expected a smallest macro step of at most /coupling/macro_step = " + number_text(c.macro_step) +
                  " s (the first step), found " + number_text(*min) + " s");
  else if (min) sc.min_step = *min;
  if (max && *max < c.macro_step)
    chk.error(p + "/max_step",
              "expected a largest macro step of at least /coupling/macro_step = " + number_text(c.macro_step) +
                  " s (the first step), found " + number_text(*max) + " s");
  else if (max) sc.max_step = *max;
}

// Steps that cannot mean what they say. A macro step longer than the run is one exchange at
// most. Under Jacobi and Gauss–Seidel with align, a subsystem step longer than the macro step
// would be cut to it (the subsystem would take other steps than its own): an error; one that
// does not divide it ends each macro step with a shorter step: a warning naming the steps.
void check_step_lengths(Manifest& m, DocumentChecker& chk) {
  const CouplingConfig& c = m.coupling;
  const double span = c.end - c.start;
  auto num = [](double x) { return number_text(x); };
  if (c.macro_step > span * (1 + 1e-12)) {
    chk.error("/coupling/macro_step",
              "expected a macro step of at most the run's length (/coupling/end - /coupling/start = " + num(span) +
                  " s), found " + num(c.macro_step) + " s: the subsystems would exchange values at most once");
    return;
  }
  if (c.scheme == Scheme::multirate || !c.align || c.step_control.enabled) return;
  const double H = c.macro_step;
  for (const auto& s : m.subsystems) {
    if (s.step <= 0) continue;
    if (s.step > H * (1 + 1e-12)) {
      chk.error(s.pointer + "/step",
                "expected a step of at most /coupling/macro_step = " + num(H) + " s, found " + num(s.step) +
                    " s: under " + (c.scheme == Scheme::jacobi ? "jacobi" : "gauss_seidel") +
                    " every step ends at a communication point, so the subsystem would take steps of " + num(H) +
                    " s, not the " + num(s.step) +
                    " s it declares; set /coupling/align to false to let its steps overshoot, "
                    "or make the steps agree");
      continue;
    }
    const double n = H / s.step, whole = std::floor(n + 1e-9);
    if (n - whole <= 1e-9 * std::max(1.0, n)) continue;
    m.warnings.push_back(s.pointer + "/step: " + num(s.step) + " s does not divide /coupling/macro_step = " + num(H) +
                         " s: each macro step is " + num(whole) + " step" + (whole == 1 ? "" : "s") + " of " +
                         num(s.step) + " s and one of " + num(H - whole * s.step) + " s");
  }
}

}  // namespace

// Every number that sets a time or a size, against Limits: a step must advance time at
// every t of the run, and the counts it implies must be feasible.
void check_sizes(Manifest& m, DocumentChecker& chk) {
  const CouplingConfig& c = m.coupling;
  if (!(c.end > c.start) || c.macro_step <= 0) return;  // reported already
  const double span = c.end - c.start;
  if (!std::isfinite(span)) {
    chk.error("/coupling/end", "the run from " + number_text(c.start) + " s to " + number_text(c.end) +
                                   " s is longer than a double can hold");
    return;
  }
  const double scale = std::max(std::abs(c.start), std::abs(c.end));
  const double spacing = std::nextafter(scale, INFINITY) - scale;
  auto number = [](double x) { return number_text(x); };
  auto step_ok = [&](const std::string& ptr, const std::string& what, double h) {
    if (h < Limits::time_resolution * spacing) {
      chk.error(ptr, "expected " + what + " of at least " + number(Limits::time_resolution * spacing) + " s: at t = " +
                         number(scale) + " s consecutive doubles are " + number(spacing) + " s apart, so a step of " +
                         number(h) + " s cannot advance time reliably (check /coupling/start and /coupling/end)");
      return false;
    }
    const double count = span / std::min(h, span);
    if (count > Limits::max_steps * (1 + 1e-12)) {
      chk.error(ptr, "expected at most " + number(Limits::max_steps) + " steps over the run of " + number(span) +
                         " s; " + what + " of " + number(h) + " s takes " + number(std::ceil(count)));
      return false;
    }
    return true;
  };
  step_ok("/coupling/macro_step", "a macro step", c.macro_step);
  check_step_lengths(m, chk);
  if (c.step_control.enabled && c.step_control.min_step > 0)
    step_ok("/coupling/step_control/min_step", "a smallest macro step", c.step_control.min_step);
  const double interval = m.record.interval > 0 ? m.record.interval : std::min(c.macro_step, span);
  const std::string interval_ptr = m.record.interval > 0 ? "/record/interval" : "/coupling/macro_step";
  if (step_ok(interval_ptr, "a record interval", interval) && span / interval + 1 > Limits::max_rows)
    chk.error(interval_ptr, "expected at most " + number(Limits::max_rows) +
                                " rows in results.csv; a record interval of " + number(interval) + " s over " +
                                number(span) + " s gives " + number(std::floor(span / interval) + 1) +
                                " (record less often)");
  for (const auto& s : m.subsystems) {
    if (s.step <= 0 || !step_ok(s.pointer + "/step", "a step", s.step)) continue;
    // Rows a step spans are filled before they can be written: a step across a million rows
    // would hold them all in memory.
    const double widest =
        std::min(c.scheme != Scheme::multirate && c.align ? std::min(s.step, c.macro_step) : s.step, span);
    if (widest / interval > Limits::max_buffered_rows)
      chk.error(s.pointer + "/step",
                "a step of " + number(s.step) + " s spans " + number(std::floor(widest / interval)) +
                    " record intervals of " + number(interval) + " s, more than the " +
                    number(Limits::max_buffered_rows) +
                    " rows held while a step is under way; record less often or take shorter steps");
  }
}

// "coupling", then its "iteration" and "step_control" (which depend on the rest of it).
void read_coupling(DocumentChecker& chk, const json& d, Manifest& m) {
  if (!d.contains("coupling")) return;
  const json& c = d["coupling"];
  const std::string p = "/coupling";
  CouplingConfig& cc = m.coupling;
  if (chk.object(c, p,
                 {"scheme", "macro_step", "start", "end", "order", "synchronization", "align", "initialization",
                  "iteration", "step_control"},
                 {"scheme", "macro_step", "end"})) {
    const auto scheme = chk.string(c, p, "scheme", {"jacobi", "gauss_seidel", "multirate"});
    if (scheme)
      cc.scheme = *scheme == "jacobi"         ? Scheme::jacobi
                  : *scheme == "gauss_seidel" ? Scheme::gauss_seidel
                                              : Scheme::multirate;
    cc.macro_step = chk.quantity(c, p, "macro_step", "a positive macro step in s", "s", true).value_or(0.0);
    cc.start = chk.quantity(c, p, "start", "a start time in s", "s", false, 0.0).value_or(0.0);
    if (auto end = chk.quantity(c, p, "end", "an end time in s", "s", false)) {
      cc.end = *end;
      if (*end <= cc.start)
        chk.error(p + "/end", "expected an end time after the start time " + json(cc.start).dump() + " s, found " +
                                  json(*end).dump());
    }
    if (auto sync = chk.string(c, p, "synchronization", {"slowest_first", "fastest_first"})) {
      cc.synchronization = *sync == "slowest_first" ? Synchronization::slowest_first : Synchronization::fastest_first;
      // Jacobi and Gauss-Seidel step every subsystem to each communication point; the order of
      // their steps is /coupling/order. Said, not refused: --set can change the scheme but
      // cannot remove a key.
      if (scheme && cc.scheme != Scheme::multirate)
        m.warnings.push_back(p + "/synchronization: orders the steps of the \"multirate\" scheme only; under \"" +
                             *scheme + "\" it changes nothing (/coupling/order is the Gauss-Seidel order)");
    }
    if (auto init = chk.string(c, p, "initialization", {"sequential", "exchange"}))
      cc.initialization = *init == "exchange" ? Initialization::exchange : Initialization::sequential;
    if (c.contains("align")) {
      if (!c["align"].is_boolean()) chk.error(p + "/align", "expected true or false, found " + type_name(c["align"]));
      else cc.align = c["align"].get<bool>();
      // Multirate has no communication points to land on: every subsystem takes its own steps.
      if (scheme && cc.scheme == Scheme::multirate)
        m.warnings.push_back(p +
                             "/align: cuts the steps of the \"jacobi\" and \"gauss_seidel\" schemes to land on "
                             "their communication points; under \"multirate\" every subsystem takes its own "
                             "steps and it changes nothing");
    }
    if (c.contains("order")) {
      if (!c["order"].is_array())
        chk.error(p + "/order", "expected an array of subsystem names, found " + type_name(c["order"]));
      else
        for (std::size_t i = 0; i < c["order"].size(); ++i) {
          if (!c["order"][i].is_string())
            chk.error(p + "/order/" + std::to_string(i),
                      "expected a subsystem name, found " + type_name(c["order"][i]));
          else cc.order.push_back(c["order"][i].get<std::string>());
        }
    }
  }
  if (!c.is_object()) return;
  if (c.contains("iteration")) read_iteration(chk, c["iteration"], cc);
  if (c.contains("step_control")) read_step_control(chk, c["step_control"], cc);
}

}  // namespace stride::host
