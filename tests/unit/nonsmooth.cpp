// Nonsmooth multibody (BENCHMARKS.md §6): the "mlcp" formulation, its MLCP solvers and the
// nonsmooth example models (block_incline, ball_ground, four_bar):
//  - the PGS and block-pivoting solvers agree on random well-posed box MLCPs with friction
//    coupling and pass the residual check, which detects a perturbed solution;
//  - a block on an incline sticks when tan θ ≤ μ and otherwise slides with
//    s̈ = g (sin θ − μ cos θ) (velocity against the analytic one, both solvers);
//  - a ball rests without drift, lands without bounce (inelastic impact) and rolls at the speed
//    conservation of angular momentum about the contact point predicts;
//  - a four-bar with a redundant constraint runs and follows the non-redundant one (ali3p);
//  - without contacts the nonsmooth interface model equals Eq. 17-19 (crane, ali3p), and with
//    contacts it is M̃ = m, f̃ = m g (sin θ − μ cos θ) for a sliding block.
#include <doctest/doctest.h>

#include "multibody_run.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include <stride/host/graph/adapters.hpp>
#include <stride/host/load/registry.hpp>

#include "../../plugins/common/crane.hpp"
#include "../../plugins/common/mlcp_solvers.hpp"

using stride::json;
using stride::host::PluginRegistry;

namespace {

constexpr double g = 9.81;

using stride_test::registry;

// Constant input values, one vector per input port.
class Constant final : public stride::Inputs {
 public:
  explicit Constant(std::vector<std::vector<double>> v = {}) : v_(std::move(v)) {}
  std::span<const double> evaluate(std::size_t port, double) override { return v_.at(port); }

 private:
  std::vector<std::vector<double>> v_;
};

using Run = stride_test::MultibodyRun;

// A random box MLCP: H = BᵀB / r + I (symmetric positive definite), rows bilateral, normal
// ([0, ∞)), box or friction (bounded by μ times an earlier normal row).
stride::mlcp::Problem random_problem(std::mt19937& rng) {
  std::uniform_int_distribution<int> size(2, 12), kind(0, 3);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int r = size(rng);
  stride::mlcp::Problem P;
  P.resize(r);
  Eigen::MatrixXd B(r, r);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < r; ++j) B(i, j) = normal(rng);
  P.H = B.transpose() * B / r + Eigen::MatrixXd::Identity(r, r);
  for (int i = 0; i < r; ++i) P.b[i] = 3.0 * normal(rng);
  int last_normal = -1;
  for (int i = 0; i < r; ++i) {
    const int k = kind(rng);
    if (k == 1 || (k == 3 && last_normal < 0)) {
      P.lo[i] = 0.0;
      last_normal = i;
    } else if (k == 2) {
      P.lo[i] = -unit(rng);
      P.hi[i] = unit(rng);
    } else if (k == 3) {
      P.coupled[std::size_t(i)] = last_normal;
      P.mu[i] = 0.8 * unit(rng);
    }
  }
  return P;
}

}  // namespace

TEST_CASE("the PGS and block-pivoting MLCP solvers agree on random well-posed problems") {
  std::mt19937 rng(20240611);
  double worst_diff = 0.0, worst_res = 0.0;
  long max_sweeps = 0, max_pivots = 0;
  int at_bounds = 0, coupled = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const stride::mlcp::Problem P = random_problem(rng);
    const auto r = P.rows();
    stride::mlcp::Pgs pgs;
    stride::mlcp::Bpp bpp;
    stride::mlcp::Residual residual;
    pgs.reset(r);
    bpp.reset(r);
    residual.reset(r);
    Eigen::VectorXd a = Eigen::VectorXd::Zero(r), b = Eigen::VectorXd::Zero(r);
    const long sweeps = pgs.solve(P, a, 100000, 1e-14);
    long pivots = 0;
    const bool ok = bpp.solve(P, b, 1000, 1e-13, pivots);
    CAPTURE(trial);
    CHECK(pgs.converged());
    CHECK(ok);
    const double ra = residual(P, a), rb = residual(P, b);
    CHECK(ra < 1e-10);
    CHECK(rb < 1e-10);
    const double diff = (a - b).lpNorm<Eigen::Infinity>() / std::max(1.0, b.lpNorm<Eigen::Infinity>());
    CHECK(diff < 1e-9);
    worst_diff = std::max(worst_diff, diff);
    worst_res = std::max({worst_res, ra, rb});
    max_sweeps = std::max(max_sweeps, sweeps);
    max_pivots = std::max(max_pivots, pivots);
    for (Eigen::Index k = 0; k < r; ++k) {
      at_bounds += b[k] == P.lower(k, b) || b[k] == P.upper(k, b);
      coupled += P.coupled[std::size_t(k)] >= 0 && b[k] != 0.0;
    }
    // The residual check can fail: move one row off the solution.
    Eigen::VectorXd c = b;
    c[trial % r] += 1e-3;
    CHECK(residual(P, c) > 1e-4);
  }
  MESSAGE("50 random box MLCPs (r = 2..12): max |lambda_pgs - lambda_bpp| / max(1, |lambda|) = "
          << worst_diff << ", max residual " << worst_res << ", max PGS sweeps " << max_sweeps << ", max pivots "
          << max_pivots << "; rows at a bound " << at_bounds << ", loaded friction rows " << coupled);
  CHECK(at_bounds > 50);  // the problems really exercise the bounds
  CHECK(coupled > 10);
}

TEST_CASE("block on an incline: sticks when tan(theta) <= mu, otherwise slides with g (sin - mu cos)") {
  Constant none;
  struct Case {
    double theta, mu, v0;
  };
  const double h = 1e-3;
  for (const char* solver : {"pgs", "bpp"}) {
    for (const Case c : {Case{0.4, 0.5, 0.0}, Case{0.4, std::tan(0.4), 0.0}, Case{std::numbers::pi / 6, 0.3, 0.0},
                         Case{std::numbers::pi / 4, 0.0, 0.0}, Case{0.3, 0.5, 1.0}, Case{0.3, 0.2, -0.5}}) {
      CAPTURE(std::string(solver));
      CAPTURE(c.theta);
      CAPTURE(c.mu);
      CAPTURE(c.v0);
      Run run("block_incline", {{"angle", c.theta}, {"mu", c.mu}, {"v0", c.v0}}, "mlcp", {{"solver", solver}}, none);
      const double sn = std::sin(c.theta), cs = std::cos(c.theta);
      double v = c.v0, err = 0.0, gap_dev = 0.0;
      const double gap0 = run.out("gap");
      for (int k = 0; k < 1000; ++k) {
        // Analytic velocity on the step grid (exact for piecewise constant acceleration): the
        // friction impulse per unit mass that would stop the block within the step is
        // F = −v − h g sin θ; it sticks if |F| ≤ μ h g cos θ, else slides against F's sign.
        const double F = -v - h * g * sn, F_max = c.mu * h * g * cs;
        if (std::abs(F) <= F_max) v = 0.0;
        else v += h * g * (F < 0.0 ? sn - c.mu * cs : sn + c.mu * cs);
        run.step(h);
        err = std::max(err, std::abs(run.out("s_dot") - v));
        gap_dev = std::max(gap_dev, std::abs(run.out("gap") - gap0));
      }
      const json st = run.stats();
      MESSAGE(std::string(solver) << " theta=" << c.theta << " mu=" << c.mu << " v0=" << c.v0 << ": s_dot(1 s) = " << run.out("s_dot")
                     << " m/s, max |s_dot - analytic| = " << err << ", max |gap - gap0| = " << gap_dev << " m, max residual "
                     << st["max_residual"] << ", fallbacks " << st["fallbacks"]);
      CHECK(err < 1e-6);
      CHECK(gap_dev < 1e-9);
      CHECK(st["failed_solves"] == 0);
      CHECK(st["max_residual"].get<double>() < 1e-10);
    }
  }
  // Slightly less friction than tan(theta): it must slide (the stick check can fail).
  Run slide("block_incline", {{"angle", 0.4}, {"mu", std::tan(0.4) - 0.01}}, "mlcp", json::object(), none);
  for (int k = 0; k < 1000; ++k) slide.step(h);
  CHECK(slide.out("s_dot") == doctest::Approx(0.01 * g * std::cos(0.4)).epsilon(1e-6));
}

TEST_CASE("ball on the ground: resting contact, inelastic landing, rolling") {
  Constant none;
  const double h = 1e-3, m = 1.0, k = 1e9, r = 0.1;
  SUBCASE("resting contact keeps its static penetration m g / k over 1 s") {
    for (const char* solver : {"pgs", "bpp"}) {
      Run run("ball_ground", {{"height", 0.0}, {"mass", m}, {"stiffness", k}}, "mlcp", {{"solver", solver}}, none);
      double drift = 0.0, vmax = 0.0, pen = 0.0;
      for (int i = 0; i < 1000; ++i) {
        run.step(h);
        drift = std::max(drift, std::abs(run.out("gap") + m * g / k));
        vmax = std::max({vmax, std::abs(run.out("vy")), std::abs(run.out("vx"))});
        pen = std::max(pen, -run.out("gap"));
      }
      MESSAGE(std::string(solver) << " resting ball, 1 s: max |gap + m g/k| = " << drift << " m, max penetration " << pen
                     << " m (static m g/k = " << m * g / k << "), max |v| = " << vmax << " m/s");
      CHECK(drift < 1e-12);
      CHECK(pen < 1e-7);
      CHECK(vmax < 1e-9);
    }
  }
  SUBCASE("a dropped ball lands without bounce and ends up rolling at 5/7 vx0") {
    Run run("ball_ground", {{"height", 0.5}, {"vx0", 1.0}, {"mu", 0.5}, {"radius", r}}, "mlcp", {{"solver", "bpp"}}, none);
    double pen = 0.0, t_land = -1.0, rise = 0.0, drift = 0.0;
    for (int i = 0; i < 1000; ++i) {
      run.step(h);
      pen = std::max(pen, -run.out("gap"));
      if (run.t > 0.5) drift = std::max(drift, std::abs(run.out("gap") + m * g / k));
      if (t_land < 0.0 && run.out("gap") < 1e-6) t_land = run.t;
      if (t_land >= 0.0) rise = std::max(rise, run.out("gap"));
    }
    const double t_fall = std::sqrt(2.0 * 0.5 / g);
    MESSAGE("dropped ball: landed at " << t_land << " s (free fall " << t_fall << " s), max penetration " << pen
                                       << " m, max gap after landing " << rise << " m, max |gap + m g/k| over 0.5-1 s " << drift
                                       << " m, vx(1 s) = " << run.out("vx")
                                       << " m/s, slip " << run.out("slip") << " m/s");
    CHECK(t_land == doctest::Approx(t_fall).epsilon(2e-3));
    CHECK(pen < 1e-5);  // impulse m v / (h k) at the landing step, 3.1e-6 m
    CHECK(rise < 1e-9);  // inelastic: no bounce
    CHECK(drift < 1e-12);  // resting: static penetration, no drift
    CHECK(run.out("vx") == doctest::Approx(5.0 / 7.0).epsilon(1e-9));
    CHECK(std::abs(run.out("slip")) < 1e-9);
    CHECK(run.stats()["failed_solves"] == 0);
  }
}

TEST_CASE("four-bar with a redundant constraint: the regularized MLCP step copes") {
  Constant none;
  const json redundant = {{"redundant", true}, {"theta0", 0.5}}, minimal = {{"redundant", false}, {"theta0", 0.5}};
  const double h = 2e-4;
  // The redundancy is real (S = Φ_q M⁻¹ Φ_qᵀ is singular); the smooth formulations solve with
  // the independent rows, and give the motion of the minimal model.
  {
    Run ali3p("four_bar", redundant, "ali3p", json::object(), none);
    Run ref("four_bar", minimal, "ali3p", json::object(), none);
    double dtheta = 0.0;
    for (int i = 0; i < 5000; ++i) {
      ali3p.step(h);
      ref.step(h);
      dtheta = std::max(dtheta, std::abs(ali3p.out("theta") - ref.out("theta")));
    }
    MESSAGE("ali3p, redundant four-bar vs minimal, 1 s: max |theta difference| = " << dtheta << " rad");
    CHECK(dtheta < 1e-8);
  }
  for (const char* solver : {"bpp", "pgs"}) {
    Run mlcp("four_bar", redundant, "mlcp", {{"solver", solver}, {"stiffness", 1e10}, {"relaxation", 0.0}, {"iterations", 5000}}, none);
    Run ref("four_bar", minimal, "ali3p", json::object(), none);
    double dtheta = 0.0, viol = 0.0, e_drift = 0.0, theta_min = 1.0;
    const double e0 = ref.out("energy");
    for (int i = 0; i < 5000; ++i) {
      mlcp.step(h);
      ref.step(h);
      dtheta = std::max(dtheta, std::abs(std::remainder(mlcp.out("theta") - ref.out("theta"), 2.0 * std::numbers::pi)));
      viol = std::max(viol, mlcp.out("constraint_violation"));
      e_drift = std::max(e_drift, std::abs(mlcp.out("energy") - e0) / std::abs(e0));
      theta_min = std::min(theta_min, ref.out("theta"));  // the crank passes -pi/2 (hanging down)
    }
    const json st = mlcp.stats();
    MESSAGE(std::string(solver) << " redundant four-bar, 1 s, h = " << h << ": max |theta - theta_ali3p(non-redundant)| = " << dtheta
                   << " rad, max constraint violation " << viol << " m, max |E - E0|/E0 = " << e_drift
                   << ", max residual " << st["max_residual"] << ", fallbacks " << st["fallbacks"] << ", min theta "
                   << theta_min);
    CHECK(theta_min < -1.0);  // it really swung down
    CHECK(st["failed_solves"] == 0);
    CHECK(viol < 1e-5);
    CHECK(dtheta < 1e-2);
    CHECK(e_drift < 1e-2);
  }
}

TEST_CASE("a solver that misses the residual tolerance falls back to the other; if both miss, the step fails") {
  Constant none;
  const json model = {{"redundant", true}};
  // One PGS sweep cannot solve the coupled bilateral rows: the direct solver takes over.
  Run fallback("four_bar", model, "mlcp", {{"solver", "pgs"}, {"iterations", 1}, {"stiffness", 1e10}}, none);
  for (int i = 0; i < 100; ++i) fallback.step(1e-3);
  const json st = fallback.stats();
  MESSAGE("pgs (1 sweep) -> bpp on the redundant four-bar: " << st["fallbacks"] << " fallbacks in 100 steps, max residual "
                                                             << st["max_residual"]);
  CHECK(st["fallbacks"].get<long>() > 50);
  CHECK(st["failed_solves"] == 0);
  CHECK(st["max_residual"].get<double>() <= 1e-10);
  // An unreachable tolerance: both solvers miss it, the step throws and the failure is counted.
  Run fail("four_bar", model, "mlcp", {{"solver", "bpp"}, {"tolerance", 1e-16}, {"iterations", 3}, {"stiffness", 1e10}}, none);
  bool thrown = false;
  for (int i = 0; i < 100 && !thrown; ++i) {
    try {
      fail.step(1e-3);
    } catch (const stride::StepFailure& e) {
      thrown = true;
      MESSAGE("unreachable tolerance: " << std::string(e.what()));
    }
  }
  CHECK(thrown);
  CHECK(fail.stats()["failed_solves"] == 1);
}

TEST_CASE("nonsmooth interface model: equals Eq. 17-19 without contacts, M = m and f = m g (sin - mu cos) when sliding") {
  // Crane in dependent coordinates (3 bilateral constraints, no contacts): the active set is
  // every bilateral row and C_α = 1/(h² k) → 0 as the stiffness grows.
  const stride::crane::Geometry geo;
  const Eigen::Vector2d q(0.7, 4.2), v(0.3, -1.1);
  stride::crane::Vector5d x, u;
  stride::crane::dependent_from_independent(geo, q, v, x, u);
  for (int p : {1, 2}) {
    Constant in(std::vector<std::vector<double>>{{1234.0, -567.0}});
    auto model = registry().create_model("crane_dependent", {{"actuators", p}});
    model->bind(in);
    auto smooth = registry().create_formulation("ali3p", json::object());
    Eigen::VectorXd xd = x, ud = u;
    smooth->reset(*model, 0.0, xd, ud);
    Eigen::MatrixXd Ms(p, p), Mn(p, p);
    Eigen::VectorXd fs(p), fn(p), as(5), an(5);
    smooth->effective(*model, 0.0, xd, ud, Ms, fs);
    smooth->acceleration(*model, 0.0, xd, ud, as);
    double prev = 0.0;
    for (double k : {1e12, 1e14, 1e16}) {
      auto ns = registry().create_formulation("mlcp", {{"stiffness", k}, {"initial_step", 1e-2}});
      ns->reset(*model, 0.0, xd, ud);
      ns->effective(*model, 0.0, xd, ud, Mn, fn);
      ns->acceleration(*model, 0.0, xd, ud, an);
      const double em = (Ms - Mn).norm() / Ms.norm(), ef = (fs - fn).norm() / fs.norm(), ea = (as - an).norm() / as.norm();
      MESSAGE("crane p=" << p << ", k = " << k << ": M_eff rel diff " << em << ", f_eff rel diff " << ef
                         << ", acceleration rel diff " << ea << " (M_eff(0,0) = " << Ms(0, 0) << " kg)");
      if (k == 1e16) {
        CHECK(em < 1e-8);
        CHECK(ef < 1e-8);
        CHECK(ea < 1e-8);
      }
      if (prev > 0.0) CHECK(prev / em > 50.0);  // the difference is the regularization, O(1/k)
      prev = em;
    }
    // After steps of the MLCP (bilateral rows only), at the state it reached.
    auto ns = registry().create_formulation("mlcp", {{"stiffness", 1e16}});
    Eigen::VectorXd qs = x, vs = u;
    ns->reset(*model, 0.0, qs, vs);
    for (int i = 0; i < 10; ++i) ns->step(*model, i * 1e-2, 1e-2, qs, vs);
    ns->effective(*model, 0.1, qs, vs, Mn, fn);
    smooth->effective(*model, 0.1, qs, vs, Ms, fs);
    CHECK((Ms - Mn).norm() / Ms.norm() < 1e-8);
    CHECK((fs - fn).norm() / fs.norm() < 1e-8);
  }

  // Block on an incline with an interface force along it: sliding (friction at its bound) the
  // friction impulse is an applied force, M̃ = m, f̃ = m g (sin θ − μ cos θ); sticking, the
  // friction row is active and M̃ is only bounded by the friction regularization.
  const double theta = std::numbers::pi / 6, m = 2.0, h = 1e-3;
  for (const char* solver : {"pgs", "bpp"}) {
    Constant push(std::vector<std::vector<double>>{{0.0}});
    Run slide("block_incline", {{"angle", theta}, {"mu", 0.3}, {"mass", m}, {"actuated", true}}, "mlcp", {{"solver", solver}}, push);
    Run stick("block_incline", {{"angle", theta}, {"mu", 0.7}, {"mass", m}, {"actuated", true}}, "mlcp", {{"solver", solver}}, push);
    for (int i = 0; i < 100; ++i) slide.step(h), stick.step(h);
    const double f_slide = m * g * (std::sin(theta) - 0.3 * std::cos(theta));
    MESSAGE(std::string(solver) << " sliding block: M_eff = " << slide.out("M_eff") << " kg, f_eff = " << slide.out("f_eff")
                   << " N (analytic " << f_slide << "); sticking block: M_eff = " << stick.out("M_eff") << " kg");
    CHECK(slide.out("M_eff") == doctest::Approx(m).epsilon(1e-12));
    CHECK(slide.out("f_eff") == doctest::Approx(f_slide).epsilon(1e-8));
    CHECK(stick.out("M_eff") > 1e4 * m);
    CHECK(slide.out("s_dot") == doctest::Approx(0.1 * f_slide / m).epsilon(1e-8));
  }
}

TEST_CASE("gripping crane: with the jaws sticking, the interface model is the crane with the load added to the tip mass") {
  // The load held by sticking friction and two closed jaws moves with R, so M̃ and f̃ of the
  // nonsmooth interface model must equal Eq. 17-19 for the crane with m_h + m_L at R (ali3p),
  // up to the contact regularization.
  const double m_L = 100.0, m_h = stride::crane::Geometry{}.m_h;
  Constant in(std::vector<std::vector<double>>{{0.0, 0.0}});
  Run rigid("crane_dependent", {{"actuators", 2}, {"m_h", m_h + m_L}}, "ali3p", json::object(), in);
  const auto offset = [](const Run& r, const std::string& port) {
    std::size_t o = 0;
    for (const auto& p : r.ports) {
      if (p.direction != stride::Direction::output) continue;
      if (p.name == port) return o;
      o += p.size;
    }
    return o;
  };
  // Same grip force 1e4 N per jaw (rigid: k delta; prismatic: the closing force), stiffer and
  // stiffer jaws: the difference is the jaw compliance C = 1/(h^2 k) in the active set, O(1/k).
  // With the sliding jaw on its prismatic joint, the jaw mass m_J moves with R too.
  const double m_J = 10.0;
  Run rigid_j("crane_dependent", {{"actuators", 2}, {"m_h", m_h + m_L + m_J}}, "ali3p", json::object(), in);
  for (const char* joint : {"rigid", "prismatic"}) {
    const bool prismatic = std::string(joint) == "prismatic";
    const Run& ref = prismatic ? rigid_j : rigid;
    double prev = 0.0;
    for (double k : {1e7, 1e9, 1e11}) {
      json params = {{"load_mass", m_L}, {"grip_stiffness", k}, {"jaw_joint", joint}};
      if (prismatic)
        params["jaw_mass"] = m_J, params["closing_force"] = 1e4;
      else
        params["preload"] = 1e4 / k;
      Run grip("gripping_crane", params, "mlcp", {{"solver", "bpp"}, {"initial_step", 1e-2}}, in);
      std::size_t o_g = offset(grip, "M_eff"), o_r = offset(ref, "M_eff");
      double em = 0.0, ef = 0.0;
      for (int i = 0; i < 4; ++i) em = std::max(em, std::abs(grip.y[o_g + i] - ref.y[o_r + i]) / std::abs(ref.y[o_r]));
      o_g = offset(grip, "f_eff"), o_r = offset(ref, "f_eff");
      for (int i = 0; i < 2; ++i) ef = std::max(ef, std::abs(grip.y[o_g + i] - ref.y[o_r + i]) / std::abs(ref.y[o_r]));
      MESSAGE("gripping crane (" << std::string(joint) << " jaws) at t0, jaw stiffness " << k << " N/m, vs crane with all gripped mass at R: M_eff rel diff "
                                 << em << ", f_eff rel diff " << ef << " (f_eff1 = " << ref.y[o_r] << " N)");
      if (k == 1e9) CHECK(prev / em > 50.0);
      prev = em;
      // The squeeze of the jaws (the prismatic jaw's closing force F on R and on the jaw, or
      // the rigid jaws' preload k δ) is internal: the active contact rows carry the force their
      // compression already holds, so f̃ is the crane's at every stiffness (it was off by
      // O(F/k), 20 % at 1e7, while those rows only constrained accelerations).
      CHECK(ef < 1e-5);
      if (k == 1e11) CHECK(em < 1e-5);  // what is left: friction and bilateral regularization (k = 1e12)
    }
  }
  // Opening the jaws (no preload, the load hangs free of them): the load is no longer carried.
  Run open("gripping_crane", {{"load_mass", m_L}, {"jaw_joint", "rigid"}, {"preload", -1e-3}}, "mlcp", {{"initial_step", 1e-2}}, in);
  Run bare("crane_dependent", {{"actuators", 2}}, "ali3p", json::object(), in);
  CHECK(open.out("f_eff") == doctest::Approx(bare.out("f_eff")).epsilon(1e-5));
  CHECK(std::abs(open.out("f_eff") - bare.out("f_eff")) < 1e-3 * std::abs(open.out("f_eff") - rigid.out("f_eff")));
}

TEST_CASE("gripping crane: the sliding jaw stays on its prismatic joint and the jaws keep the load while the crane moves") {
  // Actuator forces that hold the crane (f_h = -f_eff at rest), then +-10 % on them: the crane
  // swings, the tip accelerates. Grip capacity 2 mu F = 1e4 N against the load weight 981 N plus
  // its inertia: the load must stick (no slip in y beyond the friction-row creep) and the jaw must
  // stay on its guide (prismatic row y_J - y_R = 0 up to the bilateral regularization). With
  // mu = 0.01 (capacity 200 N) the same run must let the load slide out.
  const auto run = [](double mu, double& drift, double& slip, double& tip, double& opening) {
    Constant rest(std::vector<std::vector<double>>{{0.0, 0.0}});
    const json model = {{"load_mass", 100.0}, {"mu", mu}, {"jaw_joint", "prismatic"}, {"jaw_mass", 10.0}, {"closing_force", 1e4}};
    Run probe("gripping_crane", model, "mlcp", {{"solver", "bpp"}, {"initial_step", 5e-3}}, rest);
    std::size_t o = 0;
    for (const auto& p : probe.ports) {
      if (p.direction != stride::Direction::output) continue;
      if (p.name == "f_eff") break;
      o += p.size;
    }
    Constant push(std::vector<std::vector<double>>{{-1.1 * probe.y[o], -0.9 * probe.y[o + 1]}});
    Run r("gripping_crane", model, "mlcp", {{"solver", "bpp"}, {"initial_step", 5e-3}}, push);
    const double rel0 = r.out("y_L") - r.out("y_R"), y0 = r.out("y_R"), open0 = r.out("jaw_opening");
    drift = slip = tip = opening = 0.0;
    for (int i = 0; i < 100; ++i) {
      r.step(5e-3);
      drift = std::max(drift, std::abs(r.out("joint_drift")));
      slip = std::max(slip, std::abs(r.out("y_L") - r.out("y_R") - rel0));
      tip = std::max(tip, std::abs(r.out("y_R") - y0));
      opening = std::max(opening, std::abs(r.out("jaw_opening") - open0));
    }
    CHECK(r.stats()["failed_solves"] == 0);
  };
  double drift, slip, tip, opening;
  run(0.5, drift, slip, tip, opening);
  MESSAGE("prismatic jaw, mu = 0.5, 0.5 s at h = 5 ms: max |y_J - y_R| = " << drift << " m, max load slip " << slip
                                                                         << " m, max jaw opening change " << opening
                                                                         << " m, max tip motion |dy_R| = " << tip << " m");
  CHECK(tip > 0.05);  // the crane really moved
  CHECK(drift < 1e-6);
  CHECK(slip < 1e-5);
  CHECK(opening < 5e-4);  // the jaw contacts stay compressed (static compression 2 F/k = 2 mm)
  run(0.01, drift, slip, tip, opening);
  MESSAGE("prismatic jaw, mu = 0.01: max load slip " << slip << " m, max |y_J - y_R| = " << drift << " m");
  CHECK(slip > 0.1);
  CHECK(drift < 1e-6);
}

TEST_CASE("gripping crane with two hydraulic cylinders: the nonsmooth interface model stays stable where ZOH diverges") {
  const auto run = [](const std::string& kind, double h_M) {
    const std::filesystem::path out = std::filesystem::path(STRIDE_BINARY_DIR) / "test_nonsmooth_out" /
                                      (kind + "_" + std::to_string(int(std::lround(h_M * 1e4))));
    const std::string cmd = std::string("'") + STRIDE_EXE + "' run '" + STRIDE_SOURCE_DIR +
                            "/manifests/nonsmooth_gripping_crane_" + kind + ".json' --quiet --out '" + out.string() +
                            "' --set /variables/h_M=" + std::to_string(h_M) + " --set /coupling/end=4 >/dev/null 2>&1";
    const int rc = std::system(cmd.c_str());
    std::ifstream f(out / "summary.json");
    const json s = json::parse(f);
    MESSAGE(kind << " h_M = " << h_M * 1e3 << " ms: " << s["status"].get<std::string>() << ", reached "
                 << s["end_time_reached"].get<double>() << " s (exit " << rc << ")");
    return s["status"].get<std::string>();
  };
  // Hydraulics at 0.2 ms; the multibody step 16 ms is the largest the extended abstract reports stable.
  CHECK(run("rim", 0.016) == "completed");
  CHECK(run("zoh", 0.016) == "diverged");
  CHECK(run("zoh", 0.002) == "completed");
}

// ---- The coupled pivoting and the condensed linear algebra (log crane, issue 25) ------------

TEST_CASE("block pivoting with the friction bounds inside the pivoting solves the random problems PGS solves") {
  std::mt19937 rng(20240611);
  double worst_diff = 0.0;
  long max_pivots = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const stride::mlcp::Problem P = random_problem(rng);
    const auto r = P.rows();
    stride::mlcp::Pgs pgs;
    stride::mlcp::Bpp bpp;
    stride::mlcp::Residual residual;
    pgs.reset(r);
    bpp.reset(r);
    residual.reset(r);
    Eigen::VectorXd a = Eigen::VectorXd::Zero(r), b = Eigen::VectorXd::Zero(r);
    pgs.solve(P, a, 100000, 1e-14);
    long pivots = 0;
    const bool ok = bpp.solve_coupled(P, b, 1000, 1e-13, pivots);
    CAPTURE(trial);
    CHECK(ok);
    CHECK(residual(P, b) < 1e-10);
    const double diff = (a - b).lpNorm<Eigen::Infinity>() / std::max(1.0, b.lpNorm<Eigen::Infinity>());
    CHECK(diff < 1e-9);
    worst_diff = std::max(worst_diff, diff);
    max_pivots = std::max(max_pivots, pivots);
  }
  MESSAGE("coupled pivoting on the 50 random MLCPs: max |lambda_pgs - lambda| / max(1, |lambda|) = "
          << worst_diff << ", max pivots " << max_pivots);
}

TEST_CASE("condensed linear algebra: the same steps, M_eff, f_eff and accelerations as the dense MLCP") {
  // A second implementation of the same step (bilateral rows eliminated, M by blocks): equal to
  // round-off on the gripping crane (dense 5x5 block, prismatic jaw, sticking friction) while the
  // crane swings, and on the log crane (18 bodies, 42 contact rows) while its grapple closes on
  // the log and squeezes it.
  const auto compare = [](const std::string& what, const std::string& model, const json& mparams, json fparams,
                          stride::Inputs& in, double h, int steps, const std::vector<std::string>& ports) {
    json dense = fparams, condensed = fparams;
    condensed["linear_algebra"] = "condensed";
    Run a(model, mparams, "mlcp", dense, in), b(model, mparams, "mlcp", condensed, in);
    double worst = 0.0;
    for (int i = 0; i <= steps; ++i) {
      if (i > 0) a.step(h), b.step(h);
      std::size_t o = 0;
      for (const auto& p : a.ports) {
        if (p.direction != stride::Direction::output) continue;
        if (std::find(ports.begin(), ports.end(), p.name) != ports.end())
          for (std::size_t e = 0; e < p.size; ++e)
            worst = std::max(worst, std::abs(a.y[o + e] - b.y[o + e]) / std::max(1.0, std::abs(a.y[o + e])));
        o += p.size;
      }
    }
    MESSAGE(what << ", " << steps << " steps of " << h * 1e3 << " ms: largest relative difference dense - condensed "
                 << worst << " (pivots " << a.stats()["bpp_pivots"] << " / " << b.stats()["bpp_pivots"] << ")");
    CHECK(a.stats()["failed_solves"] == 0);
    CHECK(b.stats()["failed_solves"] == 0);
    CHECK(b.stats()["linear_algebra"] == "condensed");
    return worst;
  };
  const json grip = {
      {"load_mass", 100.0}, {"mu", 0.5}, {"jaw_joint", "prismatic"}, {"jaw_mass", 10.0}, {"closing_force", 1e4}};
  Constant push(std::vector<std::vector<double>>{{-1.1 * 1.6e4, -0.9 * 2.0e3}});
  CHECK(compare("gripping crane", "gripping_crane", grip, {{"solver", "bpp"}, {"initial_step", 5e-3}}, push, 5e-3, 100,
                {"s", "s_dot", "s_ddot", "M_eff", "f_eff", "y_L", "slip"}) < 1e-9);
  std::ifstream f(std::string(STRIDE_SOURCE_DIR) + "/manifests/log_crane/log_crane.description.json");
  REQUIRE(f.good());
  const json desc = json::parse(f);
  Constant hold(std::vector<std::vector<double>>{{5.45e4, -4.0e4}});
  const json mlcp = {{"solver", "bpp_coupled"},
                     {"stiffness", 1e16},
                     {"initial_step", 0.016},
                     {"max_pivots", 100},
                     {"iterations", 5000}};
  CHECK(compare("log crane, grapple closing", "mechanism", {{"description", desc}}, mlcp, hold, 0.016, 60,
                {"s", "s_dot", "s_ddot", "M_eff", "f_eff", "log_centre", "log_in_grapple"}) < 1e-7);
}
