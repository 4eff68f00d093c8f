// Formulations that know their constraint error, and mechanisms described as engineers draw
// them, on Andrews' squeezer (tests/manifests/squeezer.json, written by
// scripts/squeezer_manifest.py): seven bodies, ten revolutes, a driving torque and a spring,
// against the solution the IVP test set publishes at t = 0.03 s (PSIDE at 1e-14):
//  - ali3p is second order towards it, with the redundant spatial description, the planar one
//    and a minimal spatial one giving the same motion;
//  - ali1 converges at small steps (it stopped at its round-off floor before), is first order,
//    and a run whose constraint residuals pass their bounds ends "inaccurate" (exit 1);
//  - ali3p names a Newton divergence as such, with the advice that helps;
//  - redundant rows are found at assembly and named, a joint given twice is a warning naming
//    both, an assembly that moves bodies says which joint did not close and by how much;
//    absurd geometry is a validate error; a 1000-body chain validates, a 10^4-body one runs into
//    a clear error naming its size.
#include <doctest/doctest.h>

#include <array>
#include <cmath>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "multibody_run.hpp"
#include "shipped_plugins.hpp"
#include "stride_run.hpp"
#include "files.hpp"

using stride::json;
using stride_test::run_command;
using stride_test::run_stride;

namespace {

using stride_test::contains;

class NoInputs final : public stride::Inputs {
  std::span<const double> evaluate(std::size_t, double) override { throw std::logic_error("no inputs"); }
};

const char* kSqueezer = "tests/manifests/squeezer.json";

json squeezer_manifest() {
  std::ifstream f(std::string(STRIDE_SOURCE_DIR) + "/" + kSqueezer);
  REQUIRE(f.good());
  return json::parse(f);
}
json squeezer(bool planar) {
  json d = squeezer_manifest()["subsystems"]["squeezer"]["parameters"]["description"];
  if (planar) d["planar"] = true;
  return d;
}
// The three loop-closing pins at E as two in-plane point_on_plane joints each: a spatial
// description without redundant equations.
json squeezer_minimal() {
  json d = squeezer(false), joints = json::array();
  for (const json& j : d["joints"]) {
    const std::string name = j["name"];
    if (name != "E_triangle" && name != "E_EG" && name != "E_HE") {
      joints.push_back(j);
      continue;
    }
    for (int k = 0; k < 2; ++k)
      joints.push_back({{"name", name + (k ? "_y" : "_x")}, {"type", "point_on_plane"}, {"bodies", j["bodies"]},
                        {"point", j["point"]}, {"axis", k ? json{0, 1, 0} : json{1, 0, 0}}});
  }
  d["joints"] = joints;
  return d;
}

// Hairer & Wanner's angles (beta, Theta, gamma, Phi, delta, Omega, epsilon) at t = 0 and the
// published values at t = 0.03 s.
constexpr double kStart[7] = {-0.0617138900142764496358948458001, 0.0, 0.455279819163070380255912382449,
                              0.222668390165885884674473185609,   0.487364979543842550225598953530,
                              -0.222668390165885884674473185609,  1.23054744454982119249735015568};
constexpr double kEnd[7] = {0.1581077119629904e+2, -0.1575637105984298e+2, 0.4082224013073101e-1, -0.5347301163226948,
                            0.5244099658805304,    0.5347301163226948,     0.1048080741042263e+1};

// The seven bodies' turns from where they were placed (crank, coupler, triangle, EG, GA, HE,
// AH: every body is placed unrotated, so its Euler parameters are (cos φ/2, 0, 0, sin φ/2)),
// unwrapped from step to step, and Hairer & Wanner's angles from them.
struct Turns {
  double phi[7] = {0, 0, 0, 0, 0, 0, 0};
  void update(const stride_test::MultibodyRun& r) {
    for (int b = 0; b < 7; ++b) {
      const double x = 2.0 * std::atan2(r.out("poses", 7 * b + 6), r.out("poses", 7 * b + 3));
      phi[b] = x + 2.0 * std::numbers::pi * std::round((phi[b] - x) / (2.0 * std::numbers::pi));
    }
  }
  std::array<double, 7> angles() const {
    return {kStart[0] + phi[0], kStart[1] + phi[1] - phi[0], kStart[2] + phi[2], kStart[3] + phi[3] - phi[4],
            kStart[4] + phi[4], kStart[5] + phi[5] - phi[6], kStart[6] + phi[6]};
  }
  // The largest |angle − published| at t = 0.03 s.
  double error() const {
    const auto a = angles();
    double e = 0.0;
    for (int k = 0; k < 7; ++k) e = std::max(e, std::abs(a[std::size_t(k)] - kEnd[k]));
    return e;
  }
};

// Runs the squeezer to 0.03 s; the largest angle error against the published solution.
double squeezer_error(const json& description, const std::string& formulation, const json& parameters, double h,
                      Turns* out = nullptr, json* stats = nullptr) {
  NoInputs in;
  stride_test::MultibodyRun run("mechanism", {{"description", description}}, formulation, parameters, in);
  Turns turns;
  const long steps = std::lround(0.03 / h);
  for (long k = 0; k < steps; ++k) {
    run.step(h);
    turns.update(run);
  }
  if (out) *out = turns;
  if (stats) *stats = run.stats();
  return turns.error();
}

}  // namespace

TEST_CASE("Andrews' squeezer: ali3p is second order towards the published solution, whatever the description") {
  const json ali3p = {{"alpha", 1e11}};
  Turns redundant, planar, minimal;
  json st;
  const double e1 = squeezer_error(squeezer(false), "ali3p", ali3p, 1e-4, &redundant, &st);
  const double e2 = squeezer_error(squeezer(false), "ali3p", ali3p, 5e-5);
  const double e3 = squeezer_error(squeezer(false), "ali3p", ali3p, 2.5e-5);
  squeezer_error(squeezer(true), "ali3p", ali3p, 1e-4, &planar);
  squeezer_error(squeezer_minimal(), "ali3p", ali3p, 1e-4, &minimal);
  double spread = 0.0;
  for (int k = 0; k < 7; ++k)
    spread = std::max({spread, std::abs(planar.angles()[std::size_t(k)] - redundant.angles()[std::size_t(k)]),
                       std::abs(minimal.angles()[std::size_t(k)] - redundant.angles()[std::size_t(k)])});
  MESSAGE("ali3p (alpha 1e11), largest angle error at t = 0.03 s against the published solution: " << e1 << " / " << e2 << " / " << e3
          << " rad at h = 1e-4 / 5e-5 / 2.5e-5 s (orders " << std::log2(e1 / e2) << ", " << std::log2(e2 / e3)
          << "); beta = " << redundant.angles()[0] << " rad at 1e-4 (published " << kEnd[0]
          << "); spatial revolutes (9 redundant equations) vs planar vs minimal spatial: " << spread << " rad; residuals "
          << st["constraint_residuals"].dump());
  CHECK(e1 < 2e-2);
  CHECK(e3 < 1e-3);
  CHECK(std::log2(e1 / e2) > 1.8);
  CHECK(std::log2(e2 / e3) > 1.8);
  CHECK(spread < 1e-5);
  CHECK(st["constraint_residuals"]["position"]["max"].get<double>() < 1e-10);
}

TEST_CASE("Andrews' squeezer: ali1 converges on the stiff closed loop, and is first order") {
  // |Φ̈ + 2ξωΦ̇ + ω²Φ| of its iteration reaches 1e5 m/s² here: the absolute tolerance 1e-9 alone is
  // below its round-off, which stopped every run at h <= 5e-5 s with "did not converge".
  const json ali1 = {{"omega", 1000}};
  json st;
  double e1 = 0, e2 = 0;
  CHECK_NOTHROW(e1 = squeezer_error(squeezer(true), "ali1", ali1, 1e-5, nullptr, &st));
  CHECK_NOTHROW(e2 = squeezer_error(squeezer(true), "ali1", ali1, 2.5e-6));
  const double order = std::log2(e1 / e2) / 2.0;
  MESSAGE("ali1 (omega 1000), largest angle error at t = 0.03 s: " << e1 << " / " << e2 << " rad at h = 1e-5 / 2.5e-6 s (order "
          << order << "); residuals " << st["constraint_residuals"].dump());
  CHECK(e1 < 5e-2);
  CHECK(order > 0.6);  // first order: semi-implicit Euler, no projections
  CHECK(order < 1.4);
  // The drift is what it is: |p|² − 1 passes its bound, and the formulation says so.
  CHECK(st["constraint_residuals"]["normalization"]["max"].get<double>() > 1e-4);
}

TEST_CASE("a run past its constraint-residual bounds ends inaccurate (exit 1), never completed") {
  const auto r = run_stride(kSqueezer, {"/subsystems/squeezer/formulation=ali1"}, "squeezer_ali1");
  CHECK(r.exit_code == 1);
  CHECK(r.status() == "inaccurate");
  CHECK(r.summary["end_time_reached"].get<double>() == doctest::Approx(0.03));
  const json& sq = r.summary["subsystems"]["squeezer"];
  CHECK(sq["accuracy"]["within"] == false);
  const json& res = sq["statistics"]["formulation"]["constraint_residuals"];
  MESSAGE("ali1 at h = 1e-4 s: " << r.message() << "\nresiduals " << res.dump());
  CHECK(res["normalization"]["max"].get<double>() > res["normalization"]["bound"].get<double>());
  CHECK(res["normalization"]["source"].get<std::string>().rfind("body \"", 0) == 0);
  CHECK(contains(r.message(), "normalization constraint residual reached"));
  CHECK(contains(r.message(), "(max_normalization_residual)"));
  CHECK(contains(r.message(), "reduce the step, raise omega, or use ali3p"));
  CHECK_FALSE(contains(r.message(), "000000"));  // numbers as %g
  // The same mechanism with ali3p at a penalty its Newton iteration converges with.
  const auto ok = run_stride(kSqueezer, {}, "squeezer_ali3p");
  CHECK(ok.exit_code == 0);
  CHECK(ok.status() == "completed");
  CHECK_FALSE(ok.summary["subsystems"]["squeezer"].contains("accuracy"));
}

TEST_CASE("ali3p names a Newton divergence as such and advises a smaller step or alpha") {
  // alpha h²/4 = 2500 against rotational masses of 1e-6: the default penalty is too stiff here.
  std::string why;
  try {
    squeezer_error(squeezer(true), "ali3p", json::object(), 1e-4);
  } catch (const stride::StepFailure& e) {
    why = e.what();
  }
  MESSAGE(why);
  CHECK(contains(why, "the Newton iteration diverges at t = 0.01"));
  CHECK(contains(why, "reduce the step or alpha"));
  CHECK(contains(why, "alpha h^2/4 = 2500"));
  CHECK_FALSE(contains(why, "000000"));
}

TEST_CASE("redundant constraints: found at assembly and named; the formulations solve with the independent ones") {
  NoInputs in;
  auto spatial = stride_test::registry().create_model("mechanism", {{"description", squeezer(false)}});
  auto planar = stride_test::registry().create_model("mechanism", {{"description", squeezer(true)}});
  const json rs = spatial->report(), rp = planar->report();
  MESSAGE("spatial revolutes: " << rs["constraints"] << " equations, rank " << rs["constraint_rank"] << ", redundant "
                                << rs["redundant_rows"].dump() << "; planar: " << rp["constraints"] << " equations, rank "
                                << rp["constraint_rank"]);
  CHECK(rs["constraints"] == 57);
  CHECK(rs["redundant_constraints"] == 9);
  CHECK(rs["degrees_of_freedom"] == 1);
  CHECK(rs["redundant_rows"].size() == 3);  // the three loops' closing joints, 3 out-of-plane equations each
  for (const json& x : rs["redundant_rows"]) CHECK(x["rows"] == 3);
  CHECK(rp["constraints"] == 48);
  CHECK(rp["redundant_constraints"] == 0);
  CHECK(rp["degrees_of_freedom"] == 1);
  // validate says it.
  const auto v = run_command(std::string("'") + STRIDE_EXE + "' validate '" + STRIDE_SOURCE_DIR + "/" + kSqueezer + "'");
  CHECK(v.exit_code == 0);
  CHECK(contains(v.output, "9 of the 57 constraint equations depend on the others"));
  CHECK(contains(v.output, "joint \"E_triangle\" (3)"));

  // A joint given twice: a warning naming both, and the same motion as with one copy (ali3p and
  // ali1; a 1-DOF pendulum swinging from 1 rad).
  json once = {{"gravity", {0, -9.81, 0}},
               {"bodies", {{{"name", "rod"}, {"mass", 2.0}, {"inertia", {0.1, 0.1, 0.1}}, {"position", {0.5, 0, 0}}}}},
               {"joints", {{{"name", "A"}, {"type", "revolute"}, {"bodies", {"ground", "rod"}}, {"point", {0, 0, 0}}, {"axis", {0, 0, 1}}}}}};
  json twice = once;
  twice["joints"].push_back(once["joints"][0]);
  twice["joints"][1]["name"] = "A_again";
  auto model = stride_test::registry().create_model("mechanism", {{"description", twice}});
  CHECK(model->report()["redundant_constraints"] == 5);
  for (const char* form : {"ali3p", "ali1"}) {
    stride_test::MultibodyRun a("mechanism", {{"description", once}}, form, json::object(), in);
    stride_test::MultibodyRun b("mechanism", {{"description", twice}}, form, json::object(), in);
    double d = 0.0;
    for (int k = 0; k < 500; ++k) {
      a.step(1e-3), b.step(1e-3);
      for (int i = 0; i < 7; ++i) d = std::max(d, std::abs(a.out("poses", std::size_t(i)) - b.out("poses", std::size_t(i))));
    }
    MESSAGE(std::string(form) << ": pendulum with its revolute given twice vs once, 0.5 s: largest pose difference " << d);
    CHECK(d < 1e-8);
  }
  const stride_test::fs::path file = stride_test::scratch() / "twice.json";
  stride_test::fs::create_directories(file.parent_path());
  json m = squeezer_manifest();
  m["subsystems"]["squeezer"]["parameters"]["description"] = twice;
  m["record"]["variables"] = {"squeezer.energy"};
  std::ofstream(file) << m.dump();
  const auto w = run_command(std::string("'") + STRIDE_EXE + "' validate '" + file.string() + "'");
  MESSAGE(w.output);
  CHECK(w.exit_code == 0);
  CHECK(contains(w.output, "joints \"A\" (/description/joints/0) and \"A_again\" (/description/joints/1) are one joint given twice"));
}

TEST_CASE("assembly that tells: a loop that does not close where it is placed is named, with the distance") {
  // Pin E of H-E placed 0.1 mm off on body HE: the assembly closes the loop by moving bodies.
  json m = squeezer_manifest();
  json& d = m["subsystems"]["squeezer"]["parameters"]["description"];
  d["planar"] = true;
  for (json& j : d["joints"])
    if (j["name"] == "E_HE") j["point_j"] = {j["point"][0].get<double>() + 1e-4, j["point"][1], j["point"][2]};
  const stride_test::fs::path file = stride_test::scratch() / "gap.json";
  stride_test::fs::create_directories(file.parent_path());
  std::ofstream(file) << m.dump();
  const auto v = run_command(std::string("'") + STRIDE_EXE + "' validate '" + file.string() + "'");
  MESSAGE(v.output);
  CHECK(v.exit_code == 0);
  CHECK(contains(v.output, "the initial assembly moved body"));
  CHECK(contains(v.output, "the largest initial residual, 0.0001, is at joint \"E_HE\" (/description/joints/5)"));
  const auto r = run_command(std::string("'") + STRIDE_EXE + "' run '" + file.string() + "' --quiet --out '" +
                             (stride_test::scratch() / "gap_out").string() + "'");
  CHECK(contains(r.output, "the initial assembly moved body"));
  std::ifstream log(stride_test::scratch() / "gap_out" / "log.txt");
  const std::string text((std::istreambuf_iterator<char>(log)), std::istreambuf_iterator<char>());
  CHECK(contains(text, "the largest initial residual, 0.0001, is at joint \"E_HE\""));
  // Below the tolerance (1e-6 m by default) nothing is said; the tolerance is a parameter.
  m["subsystems"]["squeezer"]["parameters"]["assembly_move_tolerance"] = 1e-2;
  std::ofstream(file) << m.dump();
  CHECK_FALSE(contains(run_command(std::string("'") + STRIDE_EXE + "' validate '" + file.string() + "'").output, "moved body"));
}

TEST_CASE("absurd geometry is a validate error with its pointer; sizes far beyond a dense formulation are refused by size") {
  const std::string base = "/subsystems/squeezer/parameters/description";
  auto validate = [&](const std::string& set) {
    return run_command(std::string("'") + STRIDE_EXE + "' validate '" + STRIDE_SOURCE_DIR + "/" + kSqueezer + "' --set '" + set + "'");
  };
  const auto axis = validate(base + "/joints/0/axis=[0, 0, 1e308]");
  CHECK(axis.exit_code == 2);
  CHECK(contains(axis.output, base + "/joints/0/axis: expected a direction of length at most 1e6"));
  const auto far = validate(base + "/bodies/2/position=[1e200, 0, 0]");
  CHECK(far.exit_code == 2);
  CHECK(contains(far.output, base + "/bodies/2/position: expected a point within 10000 m of the origin"));
  const auto point = validate(base + "/forces/1/points/1=[0, 2e4, 0]");
  CHECK(contains(point.output, base + "/forces/1/points/1: expected a point within 10000 m"));
  const auto wider = validate(base + "/size=1e5");
  CHECK(wider.exit_code == 0);

  // A chain of N bodies (revolutes about z, hanging along x).
  auto chain = [](int N) {
    json bodies = json::array(), joints = json::array();
    for (int k = 0; k < N; ++k) {
      bodies.push_back({{"name", "b" + std::to_string(k)}, {"mass", 1.0}, {"inertia", {1e-3, 1e-3, 1e-3}}, {"position", {0.1 * (k + 0.5), 0, 0}}});
      joints.push_back({{"name", "j" + std::to_string(k)}, {"type", "revolute"},
                        {"bodies", {k ? "b" + std::to_string(k - 1) : std::string("ground"), "b" + std::to_string(k)}},
                        {"point", {0.1 * k, 0, 0}}, {"axis", {0, 0, 1}}});
    }
    json m = {{"format", 1},
              {"subsystems", {{"chain", {{"plugin", "mechanism"}, {"step", 1e-3}, {"formulation", "ali3p"},
                                         {"parameters", {{"description", {{"gravity", {0, -9.81, 0}}, {"bodies", bodies}, {"joints", joints}}}}}}}}},
              {"connections", json::array()},
              {"coupling", {{"scheme", "jacobi"}, {"macro_step", 1e-3}, {"end", 2e-3}}},
              {"record", {{"variables", {"chain.energy"}}}}};
    const stride_test::fs::path file = stride_test::scratch() / ("chain" + std::to_string(N) + ".json");
    stride_test::fs::create_directories(file.parent_path());
    std::ofstream(file) << m.dump();
    return file.string();
  };
  const auto v = run_command(std::string("'") + STRIDE_EXE + "' validate '" + chain(1000) + "'");
  CHECK(v.exit_code == 0);
  // 10^4 bodies: assembled and validated (sparse), refused by the formulation with its size.
  const std::string big = chain(10000);
  const auto r = run_command(std::string("'") + STRIDE_EXE + "' run '" + big + "' --quiet --out '" +
                             (stride_test::scratch() / "chain_out").string() + "'");
  MESSAGE(r.output);
  CHECK(r.exit_code == 1);
  CHECK(contains(r.output, "the model has n = 70000 coordinates and m = 60000 constraints: ali3p holds dense"));
}

TEST_CASE("a sweep counts an inaccurate run as stable (it reached its end) but never as usable") {
  const stride_test::fs::path dir = stride_test::scratch() / "sweep";
  stride_test::fs::create_directories(dir);
  const std::string manifest = std::string(STRIDE_SOURCE_DIR) + "/" + kSqueezer;
  const json spec = {{"format", 1},
                     {"manifest", manifest},
                     {"set", {{"/subsystems/squeezer/formulation", "ali1"}}},
                     {"reference", {{"manifest", manifest}, {"set", {{"/variables/h", 2.5e-5}}}, {"columns", {{"squeezer.F.x", "squeezer.F.x"}}}}},
                     {"axes", {{{"name", "h"}, {"pointers", {"/variables/h"}}, {"values", {5e-5, 1e-4}}}}},
                     {"step_axis", "h"},
                     {"usable_error", 1.0},  // every error is within it: only the status makes them unusable
                     {"output", (dir / "out").string()}};
  std::ofstream(dir / "sweep.json") << spec.dump();
  const auto r = run_command(std::string("'") + STRIDE_EXE + "' sweep '" + (dir / "sweep.json").string() + "' --jobs 1");
  MESSAGE(r.output);
  CHECK(r.exit_code == 0);
  std::ifstream csv(dir / "out" / "sweep.csv"), md(dir / "out" / "stability.md");
  const std::string table((std::istreambuf_iterator<char>(csv)), std::istreambuf_iterator<char>());
  const std::string stability((std::istreambuf_iterator<char>(md)), std::istreambuf_iterator<char>());
  CHECK(contains(table, ",inaccurate,"));
  CHECK_FALSE(contains(table, ",completed,"));
  CHECK(contains(stability, "| 0.0001 | none up to 0.0001 |"));  // stable to the largest step
  CHECK(contains(stability, "| none |"));                         // usable at none
}
