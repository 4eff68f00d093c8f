// The accuracy block of summary.json (run/coupling_error.hpp): the local coupling error each
// connection estimates from its own extrapolator, without a reference.
//  1. Closed form: a ramp y = 2t through a hold is off by exactly 2H at every communication
//     point; a first-order Lagrange predictor is exact on it after its second sample; a
//     Gauss–Seidel forward connection (read after the push) scores nothing.
//  2. Two-mass problem (González 2011, analytical Eq. 3): over a few macro steps the ratio
//     estimate / true error (largest position error against the exact solution) stays in
//     [0.25, 4] and varies by less than 1.5x, and both fall with the macro step at the same
//     order (P + 1 for Lagrange order P).
//  3. Single crane, direct ZOH (Peiret 2018 Sect. 4.1): the same against the monolithic
//     reference (Eq. 42; true error: largest |s1 - s1_monolithic|), and the energy residual of the power bond in the block equals the
//     summary's own.
#include <doctest/doctest.h>

#include "stride_run.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "../../plugins/common/two_mass.hpp"

using stride_test::Run;
using stride_test::run_stride;

namespace {

const stride_test::json& connection_error(const Run& r, std::size_t i) {
  return r.summary.at("accuracy").at("coupling_error").at(i);
}

// Least-squares slope of log y against log x.
double slope(const std::vector<double>& x, const std::vector<double>& y) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  const double n = static_cast<double>(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double a = std::log(x[i]), b = std::log(y[i]);
    sx += a, sy += b, sxx += a * a, sxy += a * b;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

// Largest over smallest ratio estimate / truth: how far the band the ratio stays in is.
double spread(const std::vector<double>& estimate, const std::vector<double>& truth) {
  double lo = INFINITY, hi = 0;
  for (std::size_t i = 0; i < estimate.size(); ++i)
    lo = std::min(lo, estimate[i] / truth[i]), hi = std::max(hi, estimate[i] / truth[i]);
  return hi / lo;
}

}  // namespace

TEST_CASE("accuracy: a ramp through a hold is off by slope times H at every communication point") {
  // ramp_gain.json: src.y = 2 t, steps 0.01 s, H = 0.1 s, end 2 s (test plugins).
  const std::string plugins = std::string("/plugin_paths=[\"") + STRIDE_TEST_RUNTIME_DIR + "\"]";
  const std::vector<std::string> jacobi = {plugins, "/coupling/scheme=\"jacobi\""};
  Run r = run_stride("tests/manifests/ramp_gain.json", jacobi, "ramp_zoh");
  REQUIRE(r.status() == "completed");
  const auto& c = connection_error(r, 0);
  CHECK(c.at("points").get<long>() == 20);
  CHECK(c.at("max").get<double>() == doctest::Approx(0.2).epsilon(1e-9));
  CHECK(c.at("rms").get<double>() == doctest::Approx(0.2).epsilon(1e-9));
  CHECK(c.at("scale").get<double>() == doctest::Approx(4.0).epsilon(1e-12));
  CHECK(c.at("max_relative").get<double>() == doctest::Approx(0.05).epsilon(1e-9));
  CHECK(r.summary.at("accuracy").at("max_relative_coupling_error").get<double>() == doctest::Approx(0.05).epsilon(1e-9));

  // Linear prediction: exact on a ramp once it has two samples; only the first point (one
  // sample, a hold) is off by 2H.
  auto lin = jacobi;
  lin.push_back("/connections/0/extrapolator={\"plugin\": \"lagrange\", \"parameters\": {\"order\": 1}}");
  Run l = run_stride("tests/manifests/ramp_gain.json", lin, "ramp_linear");
  REQUIRE(l.status() == "completed");
  const auto& cl = connection_error(l, 0);
  CHECK(cl.at("points").get<long>() == 20);
  CHECK(cl.at("max").get<double>() == doctest::Approx(0.2).epsilon(1e-9));
  CHECK(cl.at("max_at_s").get<double>() == doctest::Approx(0.1));
  CHECK(cl.at("rms").get<double>() == doctest::Approx(0.2 / std::sqrt(20.0)).epsilon(1e-6));

  // Gauss–Seidel src -> amp: amp steps after src pushed; it never read a prediction.
  Run g = run_stride("tests/manifests/ramp_gain.json", {plugins}, "ramp_gs");
  REQUIRE(g.status() == "completed");
  CHECK(connection_error(g, 0).at("points").get<long>() == 0);
  CHECK(connection_error(g, 0).contains("note"));
  CHECK(g.summary.at("accuracy").at("max_relative_coupling_error").is_null());
}

TEST_CASE("accuracy: on the two-mass problem the estimate tracks the true error at the same order") {
  using namespace stride::two_mass;
  const ExactSolution exact(derive(Ratios{}));
  // Jacobi, slow step = H, 20 s (the range where two_mass.cpp measures order P + 1).
  for (int order : {0, 1}) {
    const std::vector<double> H = {0.1, 0.05, 0.025};
    std::vector<double> estimate, truth;
    for (double h : H) {
      const std::string hs = std::to_string(h), os = std::to_string(order);
      Run r = run_stride("manifests/two_mass.json",
                         {"/coupling/end=20", "/coupling/macro_step=" + hs, "/subsystems/slow/step=" + hs,
                          "/connections/0/extrapolator/parameters/order=" + os,
                          "/connections/1/extrapolator/parameters/order=" + os},
                         "two_mass_O" + os + "_" + hs);
      REQUIRE(r.status() == "completed");
      // The estimate: the larger of the two connections' max local error (positions, m).
      const double est =
          std::max(connection_error(r, 0).at("max").get<double>(), connection_error(r, 1).at("max").get<double>());
      // The truth: the largest error of either position against Eq. 3 over the run.
      const auto& t = r.table["time"];
      const auto& x1 = r.table["fast.x"];
      const auto& x2 = r.table["slow.x"];
      double err = 0;
      for (std::size_t i = 0; i < t.size(); ++i) {
        const State s = exact.at(t[i]);
        err = std::max({err, std::abs(x1[i] - s.x1), std::abs(x2[i] - s.x2)});
      }
      MESSAGE("two-mass Jacobi O" << order << ", H = " << h << " s: estimate " << est << " m, true " << err
                                  << " m, ratio " << est / err);
      estimate.push_back(est);
      truth.push_back(err);
      // Within a factor of 4 either way at every step tried.
      CHECK(est / err > 0.25);
      CHECK(est / err < 4.0);
    }
    CHECK(spread(estimate, truth) < 1.5);
    const double p_est = slope(H, estimate), p_true = slope(H, truth);
    MESSAGE("two-mass Jacobi O" << order << ": order of the estimate " << p_est << ", of the true error " << p_true);
    CHECK(std::abs(p_est - (order + 1)) < 0.3);
    CHECK(std::abs(p_est - p_true) < 0.3);
  }
}

TEST_CASE("accuracy: on the single crane (direct ZOH) the estimate tracks the error against the monolithic") {
  Run mono = run_stride("manifests/crane1_monolithic.json", {}, "crane1_monolithic");
  REQUIRE(mono.status() == "completed");
  const std::vector<double> H = {0.002, 0.004, 0.008};
  std::vector<double> estimate, truth;
  for (double h : H) {
    const std::string hs = std::to_string(h);
    Run r = run_stride("manifests/crane1_zoh.json", {"/variables/h_M=" + hs}, "crane1_zoh_" + hs);
    REQUIRE(r.status() == "completed");
    // Connection 0: crane.s -> cylinder.s (m); its truth: |s1 - s1_monolithic|.
    const double est = connection_error(r, 0).at("max").get<double>();
    const double err = stride_test::largest_difference(r.table, "crane.s", mono.table, "reference.s");
    MESSAGE("crane1 ZOH, h_M = " << h * 1e3 << " ms: estimate " << est * 1e3 << " mm, true " << err * 1e3
                                 << " mm, ratio " << est / err);
    estimate.push_back(est);
    truth.push_back(err);
    CHECK(est / err > 0.25);
    CHECK(est / err < 4.0);
    // The block's bond residual is the run's energy residual, scaled by the energy through it.
    const auto& b = r.summary.at("accuracy").at("power_bonds").at(0);
    CHECK(b.at("residual_J").get<double>() == r.summary.at("power_bonds").at(0).at("residual_J").get<double>());
    CHECK(b.at("scale_J").get<double>() > 0);
    CHECK(b.at("relative").get<double>() ==
          doctest::Approx(std::abs(b.at("residual_J").get<double>()) / b.at("scale_J").get<double>()));
  }
  CHECK(spread(estimate, truth) < 1.5);
  const double p_est = slope(H, estimate), p_true = slope(H, truth);
  MESSAGE("crane1 ZOH: order of the estimate " << p_est << ", of the true error " << p_true);
  CHECK(std::abs(p_est - p_true) < 0.3);
}

TEST_CASE("accuracy: /monitor/coupling_error false estimates nothing and changes nothing else") {
  // The estimate only observes: without it the same results to the bit and the same energy
  // residual; each connection says it was not estimated, the worst is null. Not a boolean:
  // a manifest error at its pointer.
  const std::string plugins = std::string("/plugin_paths=[\"") + STRIDE_TEST_RUNTIME_DIR + "\"]";
  const std::vector<std::string> jacobi = {plugins, "/coupling/scheme=\"jacobi\""};
  auto off = jacobi;
  off.push_back("/monitor={\"coupling_error\": false}");
  Run on = run_stride("tests/manifests/ramp_gain.json", jacobi, "estimate_on");
  Run none = run_stride("tests/manifests/ramp_gain.json", off, "estimate_off");
  REQUIRE(on.status() == "completed");
  REQUIRE(none.status() == "completed");
  REQUIRE(on.table.rows() == none.table.rows());
  for (const std::string col : {"time", "src.y", "amp.y"})
    for (std::size_t i = 0; i < on.table.rows(); ++i) CHECK(on.table[col][i] == none.table[col][i]);
  CHECK(connection_error(on, 0).at("points").get<long>() == 20);
  CHECK(connection_error(none, 0).at("points").get<long>() == 0);
  CHECK(connection_error(none, 0).at("note").get<std::string>() == "not estimated (/monitor/coupling_error is false)");
  CHECK(none.summary.at("accuracy").at("max_relative_coupling_error").is_null());

  Run crane_on = run_stride("manifests/crane1_rim.json", {"/coupling/end=1"}, "crane_estimate_on");
  Run crane_off = run_stride("manifests/crane1_rim.json", {"/coupling/end=1", "/monitor/coupling_error=false"}, "crane_estimate_off");
  REQUIRE(crane_on.status() == "completed");
  REQUIRE(crane_off.status() == "completed");
  CHECK(crane_off.table["crane.s"] == crane_on.table["crane.s"]);
  CHECK(crane_off.summary.at("accuracy").at("power_bonds") == crane_on.summary.at("accuracy").at("power_bonds"));

  auto bad = jacobi;
  bad.push_back("/monitor={\"coupling_error\": \"no\"}");
  const std::string cmd = std::string("'") + STRIDE_EXE + "' validate '" + STRIDE_SOURCE_DIR + "/tests/manifests/ramp_gain.json' --set '" +
                          bad[0] + "' --set '" + bad[2] + "' 2>&1";
  const stride_test::CommandResult v = stride_test::run_command(cmd);
  CHECK(v.exit_code == 2);
  CHECK(v.output.find("/monitor/coupling_error: expected true or false, found string \"no\"") != std::string::npos);
}

TEST_CASE("accuracy: the block reads in order, carries units and warns when the error is of the order of the signal") {
  // Two-mass problem, Jacobi O0, 20 s. The estimate is a fraction of the true error (0.32-0.47
  // for zero-order holds), so the verdict is checked against the true error: at H = 0.1 s the
  // largest |x1 - x1_exact| is a third of the amplitude (of the order of the signal), at
  // H = 0.025 s a few per cent.
  using namespace stride::two_mass;
  const Parameters p = derive(Ratios{});
  const ExactSolution exact(p);
  struct Verdict {
    std::string status;
    double true_relative;  // largest |x1 - x1_exact| over the largest |x1_exact|
    Run run;
  };
  auto at = [&](double H) {
    const std::string h = std::to_string(H);
    Verdict v{"", 0, run_stride("manifests/two_mass.json",
                                {"/coupling/macro_step=" + h, "/subsystems/slow/step=" + h, "/coupling/end=20"},
                                "verdict_" + h)};
    REQUIRE(v.run.status() == "completed");
    double e = 0, a = 0;
    for (std::size_t i = 0; i < v.run.table.rows(); ++i) {
      const double x = exact.at(v.run.table["time"][i]).x1;
      e = std::max(e, std::abs(v.run.table["fast.x"][i] - x)), a = std::max(a, std::abs(x));
    }
    v.true_relative = e / a;
    v.status = v.run.summary.at("accuracy").at("status").get<std::string>();
    return v;
  };
  const Verdict coarse = at(0.1), fine = at(0.025);
  MESSAGE("true error over the amplitude: H = 0.1 s " << coarse.true_relative << ", H = 0.025 s "
                                                      << fine.true_relative);
  CHECK(coarse.true_relative > 0.2);
  CHECK(coarse.status == "coupling_error_large");
  CHECK(fine.true_relative < 0.1);
  CHECK(fine.status == "coupling_error_small");
  CHECK_FALSE(fine.run.summary.at("accuracy").contains("warning"));

  const auto& a = coarse.run.summary.at("accuracy");
  CHECK(a.at("large_rms_relative").get<double>() == 0.05);
  CHECK(a.at("rms_relative_coupling_error").get<double>() >= 0.05);
  const std::string warning = a.at("warning").get<std::string>();
  CHECK(warning.find("the coupling error is of the order of the signal: on fast.x -> slow.x1 the RMS local coupling "
                     "error is ") != std::string::npos);
  CHECK(warning.find(" m, ") != std::string::npos);
  // Units: each connection's values in its reader's unit (the two masses' positions, m).
  for (const auto& c : a.at("coupling_error")) CHECK(c.at("unit").get<std::string>() == "m");
  // The status and the RMS come first in the file, the lists last; the rest stays sorted.
  std::ifstream f(stride_test::scratch() / "verdict_0.100000" / "summary.json");
  const std::string text{std::istreambuf_iterator<char>(f), {}};
  const std::vector<std::string> order = {"\"status\": \"coupling_error_large\"", "\"warning\"",
                                          "\"rms_relative_coupling_error\"", "\"max_relative_coupling_error\"",
                                          "\"coupling_error\": [",          "\"rms_relative\"",
                                          "\"power_bonds\"",                "\"connections\""};
  std::size_t last = 0;
  for (const std::string& key : order) {
    CAPTURE(key);
    const std::size_t k = text.find(key, last);
    REQUIRE(k != std::string::npos);
    last = k;
  }
  // The run prints the warning.
  const auto r = stride_test::run_command(std::string("'") + STRIDE_EXE + "' run '" + STRIDE_SOURCE_DIR +
                                          "/manifests/two_mass.json' --quiet --out '" +
                                          (stride_test::scratch() / "verdict_cli").string() +
                                          "' --set /coupling/end=20");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("warning: the coupling error is of the order of the signal: on fast.x -> slow.x1") !=
        std::string::npos);
}
