// Iterative coupling (/coupling/iteration): every macro step repeated from snapshots of every
// subsystem until the interface values at its end converge.
//  1. Two-mass problem (González 2011, Sect. 3): every macro step converges, and the result is
//     closer to the analytical solution (Eq. 3) than plain Jacobi's.
//  2. Stiff coupling (m2 = m1, so the coupling spring dominates both masses): plain Jacobi
//     diverges; iterative Jacobi, plain or under-relaxed, follows the analytical solution.
//  3. The converged result does not depend on the scheme: Jacobi and Gauss–Seidel iterate to
//     the same interface (a second formulation of the same fixed point).
//  4. One pass is plain Jacobi, bit for bit.
//  5. FMUs: the slow mass as an FMU (FMI 2 and FMI 3, model exchange and co-simulation) saves
//     and restores its state through fmi2GetFMUstate / fmi3GetFMUState and gives the
//     all-plugin result.
//  6. What cannot iterate is refused before running; a macro step that does not converge is
//     reported, and ends the run when asked to.
#include <doctest/doctest.h>

#include "stride_run.hpp"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "../../plugins/common/two_mass.hpp"

namespace {

using namespace stride_test;
namespace twomass = stride::two_mass;

const std::string kTwoMass = "manifests/two_mass.json";
const std::vector<std::string> kIterate = {"/coupling/iteration={\"max_iterations\": 50, \"tolerance\": 1e-10, "
                                           "\"absolute_tolerance\": 1e-12}"};

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The stiff variant: AR2 = -10 gives m2 = 1 kg = m1 (k2 = 19.5 N/m couples two equal masses).
// Both masses take RK4 steps of 10 ms, so that what is measured is the coupling at H.
std::vector<std::string> stiff(double H) {
  const std::string h = std::to_string(H);
  return {"/subsystems/fast/parameters/AR2=-10", "/subsystems/slow/parameters/AR2=-10", "/coupling/macro_step=" + h,
          "/subsystems/slow/step=0.01", "/subsystems/slow/integrator={\"plugin\": \"rk4\"}", "/coupling/end=20"};
}

// Largest position error of both masses against Eq. 3 over the recorded rows.
double error_vs_exact(const Table& t, const twomass::Ratios& r) {
  const twomass::ExactSolution exact(twomass::derive(r));
  double e = 0.0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const twomass::State s = exact.at(t["time"][i]);
    e = std::max({e, std::abs(t["fast.x"][i] - s.x1), std::abs(t["slow.x"][i] - s.x2)});
  }
  return e;
}

double largest_abs(const Table& t, const std::string& c) {
  double m = 0.0;
  for (double v : t[c]) m = std::max(m, std::abs(v));
  return m;
}

CommandResult stride_cmd(const std::string& args) { return run_command(std::string("'") + STRIDE_EXE + "' " + args); }
std::string manifest_path(const std::string& m) { return (fs::path(STRIDE_SOURCE_DIR) / m).string(); }

}  // namespace

TEST_CASE("iteration: two-mass problem converges every macro step and beats plain Jacobi against Eq. 3") {
  const std::vector<std::string> base = {"/coupling/end=20"};
  const Run plain = run_stride(kTwoMass, base, "tm_plain");
  const Run iter = run_stride(kTwoMass, with(base, kIterate), "tm_iter");
  REQUIRE(plain.status() == "completed");
  REQUIRE(iter.status() == "completed");
  const json& s = iter.summary["iteration"];
  CHECK(s["macro_steps"] == 200);
  CHECK(s["unconverged_macro_steps"] == 0);
  CHECK(s["most_passes_in_a_macro_step"].get<int>() <= 50);
  const double e_plain = error_vs_exact(plain.table, twomass::Ratios{});
  const double e_iter = error_vs_exact(iter.table, twomass::Ratios{});
  MESSAGE("two-mass, H = 0.1 s, 20 s: max position error plain Jacobi " << e_plain << " m, iterative " << e_iter
                                                                         << " m, mean passes " << s["mean_passes_per_macro_step"]);
  CHECK(e_iter < 0.25 * e_plain);
  // One row per macro step in iterations.csv, every one converged.
  const Table log = read_csv(scratch() / "tm_iter" / "iterations.csv");
  REQUIRE(log.rows() == 200);
  for (double c : log["converged"]) CHECK(c == 1.0);
  CHECK(log["time"].back() == doctest::Approx(20.0));
}

TEST_CASE("iteration: stiff coupling where plain Jacobi diverges converges to the analytical solution") {
  twomass::Ratios r;
  r.AR2 = -10.0;
  const Run plain = run_stride(kTwoMass, stiff(0.1), "stiff_plain");
  REQUIRE(plain.status() == "completed");  // no monitor: it runs to the end, growing without bound
  const double grown = largest_abs(plain.table, "fast.x");
  MESSAGE("plain Jacobi, H = 0.1 s: |x1| reaches " << grown << " m in 20 s (the solution stays below 11 m)");
  CHECK(grown > 1e3);

  // Iterated, the inputs inside a macro step are straight lines between converged interface
  // values: the error against Eq. 3 falls with H², four times per halving.
  std::vector<double> errors;
  for (double H : {0.1, 0.05, 0.025}) {
    const Run iter = run_stride(kTwoMass, with(stiff(H), kIterate), "stiff_iter_" + std::to_string(H));
    REQUIRE(iter.status() == "completed");
    CHECK(iter.summary["iteration"]["unconverged_macro_steps"] == 0);
    errors.push_back(error_vs_exact(iter.table, r));
    MESSAGE("iterative Jacobi, H = " << H << " s: max position error " << errors.back() << " m against Eq. 3, mean passes "
                                     << iter.summary["iteration"]["mean_passes_per_macro_step"]);
  }
  CHECK(errors[0] / errors[1] == doctest::Approx(4.0).epsilon(0.1));
  CHECK(errors[1] / errors[2] == doctest::Approx(4.0).epsilon(0.1));
  CHECK(errors[2] < 0.15);
  const Run iter = run_stride(kTwoMass, with(stiff(0.1), kIterate), "stiff_iter");

  // Under-relaxation reaches the same interface, in more passes.
  const Run relaxed = run_stride(
      kTwoMass,
      with(stiff(0.1), {"/coupling/iteration={\"max_iterations\": 200, \"relaxation\": 0.5, \"tolerance\": 1e-10, "
                        "\"absolute_tolerance\": 1e-12}"}),
      "stiff_relaxed");
  REQUIRE(relaxed.status() == "completed");
  CHECK(relaxed.summary["iteration"]["unconverged_macro_steps"] == 0);
  CHECK(relaxed.summary["iteration"]["passes"].get<long>() > iter.summary["iteration"]["passes"].get<long>());
  CHECK(largest_difference(relaxed.table, "fast.x", iter.table, "fast.x") < 1e-7);
  CHECK(largest_difference(relaxed.table, "slow.x", iter.table, "slow.x") < 1e-7);
}

TEST_CASE("iteration: Jacobi and Gauss-Seidel iterate to the same interface") {
  const Run jac = run_stride(kTwoMass, with(stiff(0.1), kIterate), "fp_jacobi");
  const Run gs = run_stride(kTwoMass, with(with(stiff(0.1), kIterate), {"/coupling/scheme=\"gauss_seidel\""}), "fp_gs");
  REQUIRE(jac.status() == "completed");
  REQUIRE(gs.status() == "completed");
  CHECK(gs.summary["iteration"]["unconverged_macro_steps"] == 0);
  // Gauss–Seidel relaxes only the connection back up the order: fewer passes.
  CHECK(gs.summary["iteration"]["passes"].get<long>() < jac.summary["iteration"]["passes"].get<long>());
  for (const char* c : {"fast.x", "fast.v", "slow.x", "slow.v"}) {
    CAPTURE(c);
    CHECK(largest_difference(gs.table, c, jac.table, c) < 1e-7);
  }
}

TEST_CASE("iteration: one pass per macro step is plain Jacobi, bit for bit") {
  const std::vector<std::string> base = {"/coupling/end=10", "/subsystems/slow/integrator={\"plugin\": \"rk4\"}"};
  const Run plain = run_stride(kTwoMass, base, "one_plain");
  const Run once = run_stride(kTwoMass, with(base, {"/coupling/iteration={\"max_iterations\": 1}"}), "one_iter");
  REQUIRE(plain.status() == "completed");
  REQUIRE(once.status() == "completed");
  REQUIRE(plain.table.rows() == once.table.rows());
  for (const auto& c : plain.table.names) {
    CAPTURE(c);
    CHECK(largest_difference(once.table, c, plain.table, c) == 0.0);
  }
}

TEST_CASE("iteration: FMUs save and restore their state (FMI 2 and 3, model exchange and co-simulation)") {
  const std::string fmus = std::string(STRIDE_BINARY_DIR) + "/fmus/";
  const Run plugins = run_stride(kTwoMass, with(stiff(0.1), kIterate), "fmu_ref");
  REQUIRE(plugins.status() == "completed");
  // m2 = 1 kg, k3 = m2 ω2², k2 from two_mass.hpp for AR2 = -10.
  const twomass::Parameters p = [] {
    twomass::Ratios r;
    r.AR2 = -10.0;
    return twomass::derive(r);
  }();
  const std::string params = json{{"m", p.m2}, {"k", p.k3}, {"d", 0.0}, {"k2", p.k2}, {"x0", p.x2_0}, {"v0", 0.0}}.dump();
  struct Case {
    const char* fmu;
    bool model_exchange;
  };
  for (const Case& c : {Case{"oscillator.fmu", true}, Case{"oscillator.fmu", false}, Case{"oscillator3.fmu", true},
                        Case{"oscillator3.fmu", false}}) {
    CAPTURE(c.fmu);
    CAPTURE(c.model_exchange);
    std::vector<std::string> sets = with(stiff(0.1), kIterate);
    sets.push_back("/subsystems/slow={\"fmu\": \"" + fmus + c.fmu + "\", \"parameters\": " + params +
                   ", \"step\": 0.01" + (c.model_exchange ? ", \"integrator\": {\"plugin\": \"rk4\"}" : "") + "}");
    sets.push_back("/connections/0/to=\"slow.x_other\"");
    const Run r = run_stride(kTwoMass, sets, std::string("fmu_") + c.fmu + (c.model_exchange ? "_me" : "_cs"));
    REQUIRE(r.status() == "completed");
    CHECK(r.summary["iteration"]["unconverged_macro_steps"] == 0);
    double d = 0.0;
    for (const char* col : {"fast.x", "slow.x"}) d = std::max(d, largest_difference(r.table, col, plugins.table, col));
    const std::string what = std::string(c.fmu) + (c.model_exchange ? " (model exchange, rk4)" : " (co-simulation, inputs held)");
    MESSAGE(what << ": largest position difference from the all-plugin run " << d << " m");
    // Model exchange with the same RK4 is the plugin's arithmetic; co-simulation holds the
    // input over each 10 ms step (its midpoint value) and integrates with its own RK4.
    CHECK(d < (c.model_exchange ? 1e-6 : 2e-2));
  }
}

TEST_CASE("iteration: refused before running where it cannot work") {
  struct Case {
    std::vector<std::string> sets;
    std::string pointer, words;
  };
  const std::vector<Case> cases = {
      {{"/coupling/scheme=\"multirate\"", "/coupling/iteration={}"}, "/coupling/iteration", "multirate"},
      {{"/coupling/align=false", "/coupling/iteration={}"}, "/coupling/iteration", "align"},
      {{"/coupling/iteration={\"max_iterations\": 0}"}, "/coupling/iteration/max_iterations", "from 1 to 1000"},
      {{"/coupling/iteration={\"max_iterations\": 2.5}"}, "/coupling/iteration/max_iterations", "integer"},
      {{"/coupling/iteration={\"relaxation\": 0}"}, "/coupling/iteration/relaxation", "(0, 2]"},
      {{"/coupling/iteration={\"relaxation\": 3}"}, "/coupling/iteration/relaxation", "(0, 2]"},
      {{"/coupling/iteration={\"tolerance\": -1}"}, "/coupling/iteration/tolerance", "[0, 1]"},
      {{"/coupling/iteration={\"unconverged\": \"ignore\"}"}, "/coupling/iteration/unconverged", "\"accept\", \"stop\""},
      {{"/coupling/iteration={\"tolerence\": 1e-6}"}, "/coupling/iteration/tolerence", "did you mean \"tolerance\""},
      {{"/coupling/iteration=[1]"}, "/coupling/iteration", "expected an object"},
  };
  for (const Case& c : cases) {
    std::string args = "validate '" + manifest_path(kTwoMass) + "'";
    for (const auto& s : c.sets) args += " --set '" + s + "'";
    const CommandResult r = stride_cmd(args);
    CAPTURE(args);
    CAPTURE(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find(c.pointer) != std::string::npos);
    CHECK(r.output.find(c.words) != std::string::npos);
  }
  // A subsystem without snapshots: an FMU whose model description does not declare
  // canGetAndSetFMUstate.
  const std::string fixed = std::string(STRIDE_BINARY_DIR) + "/tests/fmus/fixed_step.fmu";
  const CommandResult r = stride_cmd("validate '" + manifest_path(kTwoMass) + "' --set '/subsystems/slow={\"fmu\": \"" + fixed +
                               "\", \"step\": 0.1}' --set '/connections/0/to=\"slow.x_other\"' --set "
                               "'/coupling/iteration={}'");
  CAPTURE(r.output);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("/subsystems/slow") != std::string::npos);
  CHECK(r.output.find("cannot save and restore its state") != std::string::npos);
  CHECK(r.output.find("canGetAndSetFMUstate") != std::string::npos);
}

TEST_CASE("iteration: a macro step that does not converge is reported, and stops the run when asked") {
  const std::vector<std::string> capped = {
      "/coupling/iteration={\"max_iterations\": 2, \"tolerance\": 0, \"absolute_tolerance\": 0}"};
  const Run accept = run_stride(kTwoMass, with(stiff(0.1), capped), "cap_accept");
  REQUIRE(accept.status() == "completed");
  CHECK(accept.summary["iteration"]["unconverged_macro_steps"] == 200);
  CHECK(accept.summary["iteration"]["passes"] == 400);

  const std::vector<std::string> stop = {
      "/coupling/iteration={\"max_iterations\": 2, \"tolerance\": 0, \"absolute_tolerance\": 0, \"unconverged\": \"stop\"}"};
  const Run stopped = run_stride(kTwoMass, with(stiff(0.1), stop), "cap_stop");
  CHECK(stopped.exit_code == 1);
  CHECK(stopped.status() == "diverged");
  CHECK(stopped.message().find("did not converge in 2 passes in the macro step from t = 0 to 0.1 s") !=
        std::string::npos);
  // Nothing of the unconverged macro step reached results.csv: the rows end at t = 0.
  REQUIRE(stopped.table.rows() == 1);
  CHECK(stopped.table["time"].back() == 0.0);
  CHECK(stopped.summary["end_time_reached"] == 0.0);
  const Table log = read_csv(scratch() / "cap_stop" / "iterations.csv");
  REQUIRE(log.rows() == 1);
  CHECK(log["converged"][0] == 0.0);
}

TEST_CASE("iteration: the hydraulic crane with direct coupling, past the step where plain Jacobi diverges") {
  // Peiret 2018 Sect. 5.1: with zero-order hold the single crane diverges from h_M = H = 15 ms
  // (tests/unit/coupling.cpp). Iterated, the direct coupling stays within a millimetre of the
  // monolithic reference (Eq. 42) up to 25 ms, in under three passes per macro step.
  const Run mono = run_stride("manifests/crane1_monolithic.json", {}, "crane_mono");
  REQUIRE(mono.status() == "completed");
  const std::string iterate = "/coupling/iteration={\"max_iterations\": 50, \"tolerance\": 1e-8, \"absolute_tolerance\": 1e-9}";
  const Run plain = run_stride("manifests/crane1_zoh.json", {"/variables/h_M=0.015"}, "crane_plain_15ms");
  CHECK(plain.status() == "diverged");
  for (double H : {0.01, 0.015, 0.025}) {
    const Run r = run_stride("manifests/crane1_zoh.json", {"/variables/h_M=" + std::to_string(H), iterate},
                             "crane_iter_" + std::to_string(H));
    REQUIRE(r.status() == "completed");
    CHECK(r.summary["iteration"]["unconverged_macro_steps"] == 0);
    std::size_t common = 0;
    const double e = largest_difference(r.table, "crane.s", mono.table, "reference.s", &common);
    REQUIRE(common > 100);
    MESSAGE("crane, direct coupling iterated at h_M = H = " << H * 1e3 << " ms: max |s1 - s1_monolithic| = " << e * 1e3
                                                          << " mm, mean passes " << r.summary["iteration"]["mean_passes_per_macro_step"]
                                                          << ", energy residual " << r.summary["energy_residual_J"] << " J");
    CHECK(e < 1e-3);
  }
}
