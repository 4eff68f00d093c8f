// Adaptive macro step (coupling.step_control): the macro step set by the energy residual of the
// power bonds, against the monolithic crane (Peiret 2018 Eq. 42) and the fixed-step limits of
// direct ZOH coupling; what the manifest reader refuses.
#include <doctest/doctest.h>

#include <string>

#include "stride_run.hpp"

using namespace stride_test;

namespace {

double max_difference(const Table& a, const std::string& ca, const Table& b, const std::string& cb) {
  std::size_t n = 0;
  const double e = largest_difference(a, ca, b, cb, &n);
  REQUIRE(n > 900);  // the 10-s run recorded every 10 ms in both
  return e;
}

CommandResult validate(const std::string& manifest, const std::vector<std::string>& sets) {
  std::string cmd = std::string("'") + STRIDE_EXE + "' validate '" + STRIDE_SOURCE_DIR + "/" + manifest + "'";
  for (const auto& s : sets) cmd += " --set '" + s + "'";
  return run_command(cmd);
}

// The single crane, direct ZOH (Algorithm 1): the crane steps once per macro step up to 50 ms.
std::vector<std::string> controlled(const std::string& first, const std::string& control) {
  return {"/coupling/macro_step=" + first, "/subsystems/crane/step=0.05", "/coupling/step_control=" + control};
}

}  // namespace

TEST_CASE("step control: ZOH on the single crane stays accurate where a fixed step beyond the limit diverges") {
  const Run mono = run_stride("manifests/crane1_monolithic.json", {}, "sc_mono");
  REQUIRE(mono.status() == "completed");

  // Fixed 20 ms: beyond the ZOH limit (13.5 ms, h c / M_eff = 0.65), the run diverges; fixed
  // 10 ms is 0.81 mm off in 1000 macro steps (coupling test).
  const Run fixed = run_stride("manifests/crane1_zoh.json", {"/variables/h_M=0.02"}, "sc_fixed20");
  CHECK(fixed.status() == "diverged");

  // Non-iterative control from the same 20 ms first step, up to 50 ms: completes, within a
  // few mm (measured 3.1 mm, 554 steps: a step that probes above the limit is kept).
  const Run ctl = run_stride("manifests/crane1_zoh.json",
                             controlled("0.02", R"({"tolerance": 0.01, "absolute_tolerance": 1, "max_step": 0.05})"), "sc_ctl");
  REQUIRE(ctl.status() == "completed");
  const json& sc = ctl.summary["step_control"];
  const double e = max_difference(ctl.table, "crane.s", mono.table, "reference.s");
  MESSAGE("non-iterative: " << sc["macro_steps"] << " macro steps (" << sc["smallest_step"] << " to " << sc["largest_step"]
                            << " s), max |s1 - s1_monolithic| = " << e * 1e3 << " mm");
  CHECK(e < 5e-3);
  CHECK(sc["macro_steps"].get<long>() < 1000);
  CHECK(sc["smallest_step"].get<double>() < 0.0135);  // it went below the stability limit
  CHECK(sc["largest_step"].get<double>() == doctest::Approx(0.05));  // and to max_step at rest
  CHECK(sc["rejected_steps"].get<long>() == 0);

  // With rejection (steps over the tolerance repeated from snapshots): within 1 mm (measured
  // 0.48 mm) in fewer macro steps than the fixed 10 ms takes for 0.81 mm.
  const Run rej = run_stride("manifests/crane1_zoh.json",
                             controlled("0.02", R"({"tolerance": 0.001, "absolute_tolerance": 0.1, "max_step": 0.05, "reject": true})"),
                             "sc_rej");
  REQUIRE(rej.status() == "completed");
  const json& sr = rej.summary["step_control"];
  const double er = max_difference(rej.table, "crane.s", mono.table, "reference.s");
  MESSAGE("rejecting: " << sr["macro_steps"] << " macro steps, " << sr["rejected_steps"] << " repeated, max |ds1| = " << er * 1e3 << " mm");
  CHECK(er < 1e-3);
  CHECK(sr["macro_steps"].get<long>() < 1000);
  CHECK(sr["rejected_steps"].get<long>() > 0);
  CHECK(sr["steps_over_tolerance"].get<long>() == 0);  // only at min_step may one pass
  // steps.csv: a row per attempt; the accepted steps add up to the run.
  const Table steps = read_csv(scratch() / "sc_rej" / "steps.csv");
  REQUIRE(steps.rows() == sr["macro_steps"].get<std::size_t>() + sr["rejected_steps"].get<std::size_t>());
  double sum = 0;
  for (std::size_t i = 0; i < steps.rows(); ++i)
    if (steps["accepted"][i] == 1) {
      sum += steps["macro_step"][i];
      CHECK(steps["residual_over_tolerance"][i] <= 1);
    }
  CHECK(sum == doctest::Approx(10.0).epsilon(1e-12));
  // The rows of results.csv are those of accepted steps: every 10 ms once, in order.
  const auto& t = rej.table["time"];
  REQUIRE(t.size() == 1001);
  for (std::size_t i = 1; i < t.size(); ++i) CHECK(t[i] == doctest::Approx(0.01 * double(i)).epsilon(1e-9));
}

TEST_CASE("step control: what the manifest reader and the graph refuse") {
  auto c = validate("manifests/crane1_zoh.json", {R"(/coupling/step_control={"min_step": 0.5})"});
  CHECK(c.exit_code == 2);
  CHECK(c.output.find("/coupling/step_control/min_step") != std::string::npos);
  CHECK(c.output.find("at most /coupling/macro_step") != std::string::npos);
  c = validate("manifests/crane1_zoh.json", {R"(/coupling/step_control={"tolerance": -1, "safety": 2, "max_step": "1 ms"})"});
  CHECK(c.exit_code == 2);
  CHECK(c.output.find("/coupling/step_control/tolerance") != std::string::npos);
  CHECK(c.output.find("/coupling/step_control/safety") != std::string::npos);
  CHECK(c.output.find("/coupling/step_control/max_step") != std::string::npos);
  c = validate("manifests/crane1_zoh.json", {R"(/coupling/step_control={"tolerance": 0.01, "extra": 1})"});
  CHECK(c.exit_code == 2);
  CHECK(c.output.find("/coupling/step_control/extra") != std::string::npos);
  c = validate("manifests/crane1_zoh.json", {"/coupling/scheme=multirate", "/coupling/step_control={}"});
  CHECK(c.exit_code == 2);
  CHECK(c.output.find("\"multirate\" has none") != std::string::npos);
  c = validate("manifests/crane1_zoh.json", {"/coupling/scheme=gauss_seidel", R"(/coupling/step_control={"reject": true})"});
  CHECK(c.exit_code == 2);
  CHECK(c.output.find("/coupling/step_control/reject") != std::string::npos);
  c = validate("manifests/crane1_zoh.json", {R"(/coupling/step_control={"reject": "yes"})"});
  CHECK(c.exit_code == 2);
  CHECK(c.output.find("expected true or false") != std::string::npos);
  c = validate("manifests/crane1_zoh.json", {"/coupling/iteration={}", "/coupling/step_control={}"});
  CHECK(c.exit_code == 2);
  CHECK(c.output.find("cannot be combined") != std::string::npos);
  // The two-mass test exchanges positions, not power: no bond to control by.
  c = validate("manifests/two_mass.json", {"/coupling/step_control={}"});
  CHECK(c.exit_code == 2);
  CHECK(c.output.find("/coupling/step_control") != std::string::npos);
  CHECK(c.output.find("no two subsystems here exchange power") != std::string::npos);
  // Units are read: "50 ms" is 0.05 s.
  c = validate("manifests/crane1_zoh.json", {R"(/coupling/step_control={"max_step": "50 ms", "absolute_tolerance": "1 kJ"})"});
  CHECK(c.exit_code == 0);
  MESSAGE(c.output);
}
