// Stepping an experiment from outside run() (run/simulation.hpp): the way an FMU wrapper will.
//  1. Stopping on the way at points of the macro grid changes nothing: a Simulation advanced in
//     pieces ends bit for bit where one advanced at once does (Jacobi, Gauss–Seidel; multirate,
//     which cuts the steps before a stop, within round-off), and where run() wrote its last
//     row of results.csv (which reads back exactly). Stops off the grid are communication points
//     of their own: the two-mass test sampled at them follows its analytical solution (Eq. 3)
//     within the paper's 10 % position error (Eq. 7), as run() does (tests/unit/two_mass.cpp).
//  2. The run state is the Simulation's, not the experiment's: a second Simulation of the same
//     experiment, made after the first ended, repeats it bit for bit (every plugin initialized
//     again); one made while another is alive is refused.
//  3. Stepping allocates nothing (crane1_rim.json: the host and those plugins).
//  4. Outputs nobody reads (Inputs::output_read): run() tells the subsystems which outputs it
//     reads; the cylinder then skips its energy-balance outputs and the RIM its s_ddot, and
//     every output that is read is the same to the bit as when all are computed. An output
//     that is recorded is computed, and a Simulation told so refuses to give an unread one.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "../../plugins/common/two_mass.hpp"
#include "allocation_counter.hpp"
#include "run/simulation.hpp"
#include "shipped_plugins.hpp"
#include "stride/host/run/run.hpp"
#include "stride_run.hpp"

using namespace stride::host;

namespace {

const std::string kTwoMass = STRIDE_SOURCE_DIR "/manifests/two_mass.json";
const std::string kCrane = STRIDE_SOURCE_DIR "/manifests/crane1_rim.json";

std::vector<double> outputs(const Simulation& sim, const std::vector<std::string>& names) {
  std::vector<double> v;
  for (const auto& n : names)
    for (double x : sim.outputs(n)) v.push_back(x);
  return v;
}

// The outputs at `end` of a Simulation advanced through `stops` (then to end).
std::vector<double> advanced(Experiment& ex, const std::vector<double>& stops, double end,
                             const std::vector<std::string>& names) {
  Simulation sim(ex);
  sim.initialize();
  for (double t : stops) {
    sim.advance_to(t);
    CHECK(sim.time() == doctest::Approx(t).epsilon(1e-12));
  }
  sim.advance_to(end);
  CHECK(sim.time() == end);
  return outputs(sim, names);
}

}  // namespace

TEST_CASE("simulation: advancing in pieces on the macro grid ends where advancing at once does") {
  const std::vector<std::string> names{"fast.x", "fast.v", "slow.x", "slow.v"};
  for (const std::string scheme : {"jacobi", "gauss_seidel", "multirate"}) {
    CAPTURE(scheme);
    const std::vector<std::string> sets{"/coupling/scheme=\"" + scheme + "\"", "/coupling/end=3"};
    Experiment once(load_manifest(kTwoMass, sets), stride_test::registry());
    Experiment pieces(load_manifest(kTwoMass, sets), stride_test::registry());
    const auto a = advanced(once, {}, 3.0, names);
    const auto b = advanced(pieces, {0.1, 1.0, 2.0}, 3.0, names);
    if (scheme == "multirate") {
      for (std::size_t i = 0; i < a.size(); ++i) CHECK(b[i] == doctest::Approx(a[i]).epsilon(1e-9));
    } else {
      CHECK(a == b);
    }
  }
}

TEST_CASE("simulation: stopped off the macro grid, the two-mass test follows Eq. 3 within 10 %") {
  namespace tm = stride::two_mass;
  const tm::Parameters p = tm::derive(tm::Ratios{});  // the shipped manifest's ratios
  const tm::ExactSolution exact(p);
  for (const std::string scheme : {"jacobi", "gauss_seidel", "multirate"}) {
    CAPTURE(scheme);
    Experiment ex(load_manifest(kTwoMass, {"/coupling/scheme=\"" + scheme + "\""}), stride_test::registry());
    Simulation sim(ex);
    sim.initialize();
    // Every 0.07 s over the 100 s (N = 100 fast cycles): 9 stops in 10 between grid points.
    std::vector<double> x1, x2, x1e, x2e;
    for (long k = 1; 0.07 * double(k) <= 100.0; ++k) {
      const double t = 0.07 * double(k);
      sim.advance_to(t);
      REQUIRE(sim.time() == doctest::Approx(t).epsilon(1e-12));
      x1.push_back(sim.outputs("fast.x")[0]);
      x2.push_back(sim.outputs("slow.x")[0]);
      const tm::State s = exact.at(sim.time());
      x1e.push_back(s.x1);
      x2e.push_back(s.x2);
    }
    const double dx1 = tm::position_error(x1, x1e, p.ratios.FR, 100.0);
    const double dx2 = tm::position_error(x2, x2e, p.ratios.FR, 100.0);
    MESSAGE(scheme << ": Eq. 7 x1 " << dx1 << ", x2 " << dx2);
    CHECK(dx1 < 0.1);
    CHECK(dx2 < 0.1);
  }
}

TEST_CASE("simulation: ends where run() wrote its last row") {
  const auto host = stride_test::run_stride("manifests/two_mass.json", {"/coupling/end=5"}, "simulation_two_mass");
  REQUIRE(host.status() == "completed");
  Experiment ex(load_manifest(kTwoMass, {"/coupling/end=5"}), stride_test::registry());
  const auto y = advanced(ex, {0.5, 2.0}, 5.0, {"fast.x", "slow.x"});
  const std::size_t last = host.table["time"].size() - 1;
  CHECK(host.table["time"][last] == 5.0);
  CHECK(y[0] == doctest::Approx(host.table["fast.x"][last]).epsilon(1e-11));
  CHECK(y[1] == doctest::Approx(host.table["slow.x"][last]).epsilon(1e-11));
}

TEST_CASE("simulation: a fresh one repeats the run bit for bit; two at once are refused") {
  Experiment ex(load_manifest(kCrane, {"/coupling/end=0.5"}), stride_test::registry());
  const std::vector<std::string> names{"crane.s", "cylinder.p1", "cylinder.p2", "rim.s"};
  std::vector<double> first;
  {
    Simulation sim(ex);
    CHECK_THROWS_AS(Simulation{ex}, std::logic_error);
    CHECK_THROWS_AS(sim.advance_to(0.1), std::logic_error);  // before initialize()
    sim.initialize();
    sim.advance_to(0.5);
    first = outputs(sim, names);
    CHECK_THROWS_AS(sim.advance_to(0.6), std::invalid_argument);  // past the end
    CHECK_THROWS_AS(sim.outputs("crane.nope"), std::invalid_argument);
    CHECK_THROWS_AS(sim.outputs("cylinder.s"), std::invalid_argument);  // an input
  }
  Simulation again(ex);
  again.initialize();
  again.advance_to(0.5);
  CHECK(outputs(again, names) == first);
  CHECK(first[0] != 0.0);
}

TEST_CASE("simulation: stepping allocates nothing") {
  for (const std::string scheme : {"jacobi", "gauss_seidel", "multirate"}) {
    CAPTURE(scheme);
    Experiment ex(load_manifest(kCrane, {"/coupling/scheme=\"" + scheme + "\"", "/coupling/end=1"}),
                  stride_test::registry());
    Simulation sim(ex);
    sim.initialize();
    sim.advance_to(0.1);  // first steps: plugins may size their work space
    const long before = stride_test::allocations.load();
    sim.advance_to(0.6);
    sim.advance_to(1.0);
    CHECK(stride_test::allocations.load() - before == 0);
    CHECK(sim.time() == 1.0);
  }
}

TEST_CASE("simulation: a run that diverges stops with its reason, and goes no further") {
  // crane1_zoh.json at H = 16 ms: the energy residual of the crane-cylinder bond passes the
  // manifest's 1000 J near 5.2 s (docs/benchmark.md's ZOH scan: stable up to 13.5 ms).
  Experiment ex(load_manifest(STRIDE_SOURCE_DIR "/manifests/crane1_zoh.json", {"/variables/h_M=0.016"}),
                stride_test::registry());
  Simulation sim(ex);
  sim.initialize();
  try {
    sim.advance_to(10.0);
    FAIL("the run did not stop");
  } catch (const Stop& s) {
    CHECK(s.status == RunStatus::diverged);
    CHECK(s.message.find("energy residual of power bond crane.actuator <-> cylinder.actuator") == 0);
  }
  CHECK(sim.time() > 1.0);
  CHECK(sim.time() < 10.0);
  CHECK_THROWS_AS(sim.advance_to(10.0), std::logic_error);
}

TEST_CASE("simulation: outputs nobody reads are not computed; those read are the same to the bit") {
  const std::vector<std::string> sets{"/coupling/end=2.5"};
  Experiment ex(load_manifest(kCrane, sets), stride_test::registry());
  const std::vector<std::string> read{"crane.s",     "crane.s_dot",  "crane.M_eff", "crane.f_eff",
                                      "crane.x_R",   "rim.s",        "rim.s_dot",   "cylinder.f_h",
                                      "cylinder.p1", "cylinder.p2"};
  std::vector<double> every, valve;
  {
    Simulation sim(ex);
    sim.initialize();
    sim.advance_to(2.5);
    every = outputs(sim, read);
    valve = outputs(sim, {"cylinder.valve_power", "cylinder.friction_power", "rim.s_ddot"});
  }
  // Computed when everything may be read: the valve is open from 2 s (Eq. 30) and the crane moves.
  CHECK(valve[0] != 0.0);
  CHECK(valve[1] > 0.0);
  CHECK(std::isfinite(valve[2]));
  Simulation::Options only;
  only.outputs_read_by_run_only = true;
  Simulation sim(ex, only);
  sim.initialize();
  sim.advance_to(2.5);
  CHECK(outputs(sim, read) == every);
  CHECK_THROWS_AS(sim.outputs("cylinder.valve_power"), std::logic_error);
  CHECK_THROWS_AS(sim.outputs("rim.s_ddot"), std::logic_error);
  CHECK_THROWS_AS(sim.outputs("cylinder.kappa"), std::logic_error);  // computed, but no one reads it
}

TEST_CASE("simulation: run() computes a recorded output it would otherwise skip") {
  const auto host = stride_test::run_stride(
      "manifests/crane1_rim.json",
      {"/coupling/end=2.5", "/record/variables=[\"cylinder.valve_power\", \"cylinder.p1\", \"rim.s_ddot\"]"},
      "simulation_recorded_valve_power");
  REQUIRE(host.status() == "completed");
  Experiment ex(load_manifest(kCrane, {"/coupling/end=2.5"}), stride_test::registry());
  Simulation sim(ex);
  sim.initialize();
  sim.advance_to(2.5);
  const auto y = outputs(sim, {"cylinder.valve_power", "cylinder.p1", "rim.s_ddot"});
  const std::size_t last = host.table["time"].size() - 1;
  CHECK(host.table["time"][last] == 2.5);
  CHECK(y[0] != 0.0);
  CHECK(y[0] == doctest::Approx(host.table["cylinder.valve_power"][last]).epsilon(1e-11));
  CHECK(y[1] == doctest::Approx(host.table["cylinder.p1"][last]).epsilon(1e-11));
  CHECK(y[2] == doctest::Approx(host.table["rim.s_ddot"][last]).epsilon(1e-11).scale(1e-3));
}
