// Power bonds across a subsystem in between: a low-pass filter on the cylinder force of the
// single crane (Peiret 2018 Sect. 5.1, manifests/crane1_zoh.json). The filter declares that its
// output passes its input on (PortSpec::through), so the bond crane <-> cylinder still pairs,
// validate reports the delay each path adds, and the energy residual keeps guarding the run.
#include <doctest/doctest.h>

#include "stride_run.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace {

using namespace stride_test;

std::vector<std::string> filtered(bool in_power_path) {
  return {"/subsystems/filter={\"plugin\": \"low_pass\", \"parameters\": {\"tau\": 0.001, \"unit\": \"N\", \"in_power_path\": " +
              std::string(in_power_path ? "true" : "false") + "}, \"step\": 0.001, \"integrator\": {\"plugin\": \"rk4\"}}",
          "/connections/3={\"from\": \"cylinder.f_h\", \"to\": \"filter.u\"}",
          "/connections/4={\"from\": \"filter.y\", \"to\": \"crane.f_h\"}"};
}

std::string validate(const std::vector<std::string>& sets) {
  std::string cmd = std::string("'") + STRIDE_EXE + "' validate '" + STRIDE_SOURCE_DIR + "/manifests/crane1_zoh.json'";
  for (const auto& s : sets) cmd += " --set '" + s + "'";
  const CommandResult r = run_command(cmd);
  CHECK(r.exit_code == 0);
  return r.output;
}

std::vector<std::string> with_all(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

double s_error(const Run& r, const Table& mono) {
  std::size_t common = 0;
  const double e = largest_difference(r.table, "crane.s", mono, "reference.s", &common);
  REQUIRE(common > 100);
  return e;
}

}  // namespace

TEST_CASE("bonds: validate pairs a bond across a filter and reports the delay of each path") {
  const std::string direct = validate({});
  CHECK(direct.find("power bond crane.actuator <-> cylinder.actuator: crane -> cylinder: 1 macro step (0.01 s); "
                    "cylinder -> crane: 1 macro step (0.01 s)") != std::string::npos);
  const std::string through = validate(filtered(true));
  CAPTURE(through);
  CHECK(through.find("power bond crane.actuator <-> cylinder.actuator: crane -> cylinder: 1 macro step (0.01 s); "
                     "cylinder -> filter -> crane: 2 macro steps (0.02 s)") != std::string::npos);
  CHECK(through.find("warning") == std::string::npos);
  // Gauss–Seidel in the order cylinder, filter, crane: only crane -> cylinder reads back.
  const std::string gs = validate(with_all(filtered(true), {"/coupling/scheme=\"gauss_seidel\"",
                                                            "/coupling/order=[\"cylinder\", \"filter\", \"crane\"]"}));
  CHECK(gs.find("crane -> cylinder: 1 macro step (0.01 s); cylinder -> filter -> crane: 0 macro steps (0 s)") != std::string::npos);
  // A filter that does not pass the bond on leaves both ends without a partner: said, not silent.
  const std::string lost = validate(filtered(false));
  CHECK(lost.find("warning: power bond crane.actuator has no partner: its input crane.f_h comes from filter.y") !=
        std::string::npos);
  CHECK(lost.find("warning: power bond cylinder.actuator has no partner") != std::string::npos);
}

TEST_CASE("bonds: the energy residual still guards the filtered crane") {
  const Run mono = run_stride("manifests/crane1_monolithic.json", {}, "bonds_mono");
  REQUIRE(mono.status() == "completed");
  // Jacobi adds two macro steps of delay on the force path: the oscillation grows and the
  // residual monitor of the manifest (1 kJ) stops the run.
  const Run jacobi = run_stride("manifests/crane1_zoh.json", filtered(true), "bonds_jacobi");
  CHECK(jacobi.status() == "diverged");
  CHECK(jacobi.message().find("energy residual of power bond crane.actuator <-> cylinder.actuator") != std::string::npos);
  // Multirate (each subsystem publishes after every step) completes; the filter's lag shows in
  // both the accuracy and the residual, against the unfiltered run.
  const std::vector<std::string> multirate = {"/coupling/scheme=\"multirate\""};
  const Run plain = run_stride("manifests/crane1_zoh.json", multirate, "bonds_plain_mr");
  const Run filt = run_stride("manifests/crane1_zoh.json", with_all(filtered(true), multirate), "bonds_filtered_mr");
  REQUIRE(plain.status() == "completed");
  REQUIRE(filt.status() == "completed");
  REQUIRE(filt.summary["power_bonds"].size() == 1);
  const double r_plain = std::abs(plain.summary["energy_residual_J"].get<double>());
  const double r_filt = std::abs(filt.summary["energy_residual_J"].get<double>());
  const double e_plain = s_error(plain, mono.table), e_filt = s_error(filt, mono.table);
  MESSAGE("multirate, h_M = 10 ms: unfiltered |residual| " << r_plain << " J, s1 within " << e_plain * 1e3
                                                           << " mm; filtered (tau = 1 ms) " << r_filt << " J, " << e_filt * 1e3 << " mm");
  CHECK(r_filt > r_plain);
  CHECK(e_filt > e_plain);
  CHECK(e_filt < 1e-2);
}

TEST_CASE("energy: the cylinder's balance closes against its valve and friction powers") {
  // Stored energy U (compression of the fluid, Cylinder::energy_density) changes by what the
  // valve delivers, minus friction, minus the work on the crane through the bond; the host's
  // internal_J = ΔU − bond energy in must equal ∫ (valve_power − friction_power) dt, integrated
  // here from the recorded outputs at every cylinder step.
  const Run r = run_stride("manifests/crane1_zoh.json",
                           {"/coupling/end=8", "/record/interval=0.0002",
                            "/record/variables=[\"cylinder.valve_power\", \"cylinder.friction_power\"]"},
                           "energy_balance");
  REQUIRE(r.status() == "completed");
  const auto& t = r.table["time"];
  const auto& valve = r.table["cylinder.valve_power"];
  const auto& friction = r.table["cylinder.friction_power"];
  REQUIRE(t.size() == 40001);
  double supplied = 0.0;
  for (std::size_t i = 0; i + 1 < t.size(); ++i)
    supplied += 0.5 * ((valve[i] - friction[i]) + (valve[i + 1] - friction[i + 1])) * (t[i + 1] - t[i]);
  const json& cyl = r.summary["subsystems"]["cylinder"];
  const double internal = cyl["energy_balance"]["internal_J"].get<double>();
  std::printf("  cylinder: U %.3f -> %.3f J, internal %.4f J, integrated valve - friction %.4f J\n",
              cyl["energy_balance"]["initial_J"].get<double>(), cyl["energy_J"].get<double>(), internal, supplied);
  CHECK(supplied > 100.0);  // the manoeuvre lifts the crane: the supply does real work
  CHECK(std::abs(internal - supplied) < 1e-4 * supplied);
  // Every subsystem reports its energy, so the run has a whole-system balance.
  REQUIRE(r.summary.contains("energy_balance"));
  const double system_internal = r.summary["energy_balance"]["internal_J"].get<double>();
  const double crane_internal = r.summary["subsystems"]["crane"]["energy_balance"]["internal_J"].get<double>();
  CHECK(system_internal == doctest::Approx(internal + crane_internal).epsilon(1e-9));
}
