// The SDK as a plugin author sees it: install the SDK into a temporary prefix, build every
// example of examples/ against it in one separate CMake project (examples/CMakeLists.txt, one
// configure, one build), load the new plugins through STRIDE_PLUGIN_PATH, run each example's
// manifest from a folder that is not the manifest's, and check each plugin against something
// independent of it: closed-form solutions, measured orders of convergence, energy
// conservation, and shipped plugins doing the same job.
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <numbers>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <unsupported/Eigen/MatrixFunctions>

#include <stride/host/load/registry.hpp>

#include "allocation_counter.hpp"
#include "stride_run.hpp"
#include "files.hpp"

using namespace stride_test;

namespace {

// The shell listings of docs/plugin-tutorial.md, in order, as one script.
std::string tutorial_commands() {
  std::istringstream in(slurp(fs::path(STRIDE_SOURCE_DIR) / "docs" / "plugin-tutorial.md"));
  std::string line, script;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside && line == "```sh") {
      inside = true;
    } else if (inside && line.rfind("```", 0) == 0) {
      inside = false;
    } else if (inside) {
      script += line + "\n";
    }
  }
  return script;
}

// The SDK installed and the examples built, once per process, by the tutorial's own commands
// run verbatim (bash -e) as a plugin author would: from a folder holding the checkout's
// `examples` and its built `build` tree, with HOME a fresh folder (the prefix is $HOME/stride)
// and the installed `stride` found on the PATH. Every test case starts here.
struct Examples {
  bool built = false;
  std::string log;  // the failing command's output
  fs::path prefix, plugins;
};

const Examples& examples() {
  static const Examples e = [] {
    Examples x;
    const fs::path root = scratch() / "out_of_tree", home = root / "home";
    fs::create_directories(home);
    fs::create_directory_symlink(fs::path(STRIDE_SOURCE_DIR) / "examples", root / "examples");
    fs::create_directory_symlink(STRIDE_BINARY_DIR, root / "build");
    x.prefix = home / "stride";
    x.plugins = root / "build-examples" / "plugins";
    const std::string script = tutorial_commands();
    {
      std::ofstream(root / "tutorial.sh") << "set -euo pipefail\n" << script;
    }
    // PATH without the build tree: the tutorial's `stride` is the installed one.
    const std::string cmd = "cd '" + root.string() + "' && env -u STRIDE_PLUGIN_PATH HOME='" + home.string() +
                            "' PATH=/usr/local/bin:/usr/bin:/bin bash tutorial.sh";
    const CommandResult r = run_command(cmd);
    x.log = "tutorial.sh:\n" + script + "\n" + r.output;
    if (r.exit_code != 0 || r.output.find("bogacki_shampine") == std::string::npos) return x;
    // Inherited by every `stride` the tests start.
    ::setenv("STRIDE_PLUGIN_PATH", x.plugins.c_str(), 1);
    x.built = true;
    return x;
  }();
  INFO(e.log);
  REQUIRE(e.built);
  return e;
}

// `stride run` of examples/<manifest> from the build folder (not the manifest's folder).
Run run_example(const std::string& manifest, const std::vector<std::string>& sets, const std::string& tag) {
  examples();
  Run r = run_stride("examples/" + manifest, sets, tag);
  INFO(manifest << ": " << r.message());
  REQUIRE(r.exit_code == 0);
  REQUIRE(r.status() == "completed");
  return r;
}

// One input value for every port and time: what a connection gives a system under test here.
class ConstantInputs final : public stride::Inputs {
 public:
  double value = 0.0;
  std::span<const double> evaluate(std::size_t, double) override { return {&value, 1}; }
};

// Underdamped response of m x'' + c x' + k x = F0 sin(w t + phi), x(0) = x0, x'(0) = v0:
// steady state x_p = a sin(wt + phi) + b cos(wt + phi) plus a decaying homogeneous part.
struct Oscillator {
  double m, c, k, F0, w, x0, v0, phi;
  double a, b, zeta_wn, wd, A, B;
  Oscillator(double m_, double c_, double k_, double F0_, double w_, double x0_, double v0_, double phi_ = 0.0)
      : m(m_), c(c_), k(k_), F0(F0_), w(w_), x0(x0_), v0(v0_), phi(phi_) {
    const double d = (k - m * w * w) * (k - m * w * w) + (c * w) * (c * w);
    a = F0 * (k - m * w * w) / d;
    b = -F0 * c * w / d;
    zeta_wn = c / (2 * m);
    wd = std::sqrt(k / m - zeta_wn * zeta_wn);
    A = x0 - (a * std::sin(phi) + b * std::cos(phi));
    B = (v0 - (a * w * std::cos(phi) - b * w * std::sin(phi)) + zeta_wn * A) / wd;
  }
  double x(double t) const {
    const double s = std::sin(w * t + phi), co = std::cos(w * t + phi);
    return a * s + b * co + std::exp(-zeta_wn * t) * (A * std::cos(wd * t) + B * std::sin(wd * t));
  }
  double v(double t) const {
    const double e = std::exp(-zeta_wn * t), s = std::sin(w * t + phi), co = std::cos(w * t + phi);
    return a * w * co - b * w * s +
           e * ((-zeta_wn * A + wd * B) * std::cos(wd * t) + (-zeta_wn * B - wd * A) * std::sin(wd * t));
  }
};
// The oscillator of the example manifests that use damped_oscillator; the extrapolator's
// manifest drives it with a cosine (phase π/2).
const Oscillator manifest_oscillator(1.0, 0.8, 40.0, 5.0, 4.0, 0.1, 0.0);
const Oscillator cosine_oscillator(1.0, 0.8, 40.0, 5.0, 4.0, 0.1, 0.0, std::numbers::pi / 2);

// Largest |x − exact| over a run of the oscillator.
double oscillator_error(const Table& t, const Oscillator& exact = manifest_oscillator) {
  double e = 0.0;
  const auto& time = t["time"];
  const auto& x = t["oscillator.x"];
  for (std::size_t i = 0; i < time.size(); ++i) e = std::max(e, std::abs(x[i] - exact.x(time[i])));
  return e;
}

// The large-amplitude pendulum θ'' = −(g/L) sin θ, θ(0) = θ0, θ'(0) = 0, in closed form:
// sin(θ/2) = k sn(K(k) − ω0 t; k), k = sin(θ0/2), ω0 = √(g/L), period 4 K(k) / ω0.
// K and sn by the arithmetic-geometric mean (Abramowitz & Stegun 17.6, 16.4).
struct Pendulum {
  double k, w0, K;
  static constexpr int levels = 12;
  Pendulum(double theta0, double g, double L) : k(std::sin(theta0 / 2)), w0(std::sqrt(g / L)) {
    double a = 1.0, b = std::sqrt(1 - k * k);
    for (int i = 0; i < levels; ++i) {
      const double an = 0.5 * (a + b);
      b = std::sqrt(a * b);
      a = an;
    }
    K = std::numbers::pi / (2 * a);
  }
  double sn(double u) const {
    double a[levels + 1], c[levels + 1];
    a[0] = 1.0, c[0] = k;
    double b = std::sqrt(1 - k * k);
    int n = 0;
    while (n < levels && std::abs(c[n]) > 1e-16) {
      a[n + 1] = 0.5 * (a[n] + b);
      c[n + 1] = 0.5 * (a[n] - b);
      b = std::sqrt(a[n] * b);
      ++n;
    }
    double phi = std::ldexp(a[n] * u, n);
    for (; n > 0; --n) phi = 0.5 * (phi + std::asin(c[n] / a[n] * std::sin(phi)));
    return std::sin(phi);
  }
  double theta(double t) const { return 2 * std::asin(k * sn(K - w0 * t)); }
  double period() const { return 4 * K / w0; }
};
const double theta0 = std::numbers::pi / 3;  // the pendulum manifests: 60°, m = L = 1, g = 9.81
const Pendulum exact_pendulum(theta0, 9.81, 1.0);

struct PendulumCheck {
  double theta_error = 0, energy_drift = 0, period = 0, M_eff_error = 0, f_eff_error = 0;
};
// θ against the closed form; the energy's largest departure from its initial value; the period
// from the first and last upward zero crossings of θ (linear interpolation there, where θ'' = 0);
// M̃ and f̃ against the closed forms along the circle: w = ẋ = L cos θ θ', so with no force
// M̃ = m / cos²θ and f̃ = M̃ ẍ = (m / cos²θ)(−g sin θ cos θ − L sin θ θ'²).
PendulumCheck check_pendulum(const Table& t) {
  PendulumCheck c;
  const auto& time = t["time"];
  const auto& th = t["pendulum.theta"];
  const auto& E = t["pendulum.energy"];
  const auto& xd = t["pendulum.x_dot"];
  const auto& M = t["pendulum.M_eff"];
  const auto& f = t["pendulum.f_eff"];
  double first = -1, last = -1;
  int crossings = 0;
  for (std::size_t i = 0; i < time.size(); ++i) {
    c.theta_error = std::max(c.theta_error, std::abs(th[i] - exact_pendulum.theta(time[i])));
    c.energy_drift = std::max(c.energy_drift, std::abs(E[i] - E[0]));
    const double ct = std::cos(th[i]), st = std::sin(th[i]), w = xd[i] / ct;
    c.M_eff_error = std::max(c.M_eff_error, std::abs(M[i] - 1.0 / (ct * ct)) * ct * ct);
    c.f_eff_error = std::max(c.f_eff_error, std::abs(f[i] - (-9.81 * st * ct - st * w * w) / (ct * ct)));
    if (i > 0 && th[i - 1] < 0 && th[i] >= 0) {
      const double tc = time[i - 1] + (time[i] - time[i - 1]) * (-th[i - 1]) / (th[i] - th[i - 1]);
      if (first < 0) first = tc;
      last = tc;
      ++crossings;
    }
  }
  if (crossings > 1) c.period = (last - first) / (crossings - 1);
  return c;
}

}  // namespace

TEST_CASE("out of tree: the SDK installs, every example builds against it and the host accepts each plugin") {
  const Examples& e = examples();
  CHECK(fs::exists(e.prefix / "include" / "stride" / "stride.hpp"));
  CHECK(fs::exists(e.prefix / "lib" / "cmake" / "StrideSDK" / "StrideSDKConfig.cmake"));
  CHECK(fs::exists(e.prefix / "lib" / "cmake" / "StrideSDK" / "StrideSDKPlugin.cmake"));
  CHECK(fs::exists(e.prefix / "bin" / "stride"));
  // The product only: no library built for the tests (they have folders of their own).
  for (const auto& f : fs::recursive_directory_iterator(e.prefix / "lib" / "stride")) {
    CAPTURE(f.path());
    CHECK(f.path().filename().string().find("test") == std::string::npos);
  }
  CHECK(fs::exists(e.prefix / "lib" / "stride" / "plugins" / "forces" / "stride_force_terramechanics_wheel.so"));
  struct Expected {
    const char* name;
    const char* kind;
    const char* form;  // subsystems only
    std::size_t parameters;
  };
  for (const Expected& x : {Expected{"damped_oscillator", "subsystem", "ode", 5}, Expected{"harmonic_force", "subsystem", "stepper", 3},
                            Expected{"pi_controller", "subsystem", "stepper", 3},
                            Expected{"bogacki_shampine", "integrator", "", 4}, Expected{"quadratic", "extrapolator", "", 1},
                            Expected{"pendulum", "subsystem", "multibody", 5}, Expected{"baumgarte_rk4", "formulation", "", 2}}) {
    CAPTURE(x.name);
    CHECK(fs::exists(e.plugins / ("stride_" + std::string(x.name) + ".so")));
    const CommandResult r = run_command("'" STRIDE_EXE "' plugins describe " + std::string(x.name) + " --json");
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    const json d = json::parse(r.output);
    CHECK(d.at("kind") == x.kind);
    if (*x.form) CHECK(d.at("form") == x.form);
    CHECK(d.at("parameters").size() == x.parameters);
  }
}

TEST_CASE("out of tree: ODE subsystem and stepper (damped_oscillator, harmonic_force) against the analytical solution") {
  const Run r = run_example("damped_oscillator/damped_oscillator.json", {}, "damped_oscillator");
  const Table& t = r.table;
  CHECK(t.names == std::vector<std::string>{"time", "force.force", "oscillator.x", "oscillator.v"});
  double err_v = 0, err_f = 0, max_x = 0;
  for (std::size_t i = 0; i < t.rows(); ++i) {
    const double time = t["time"][i];
    err_f = std::max(err_f, std::abs(t["force.force"][i] - 5.0 * std::sin(4.0 * time)));
    err_v = std::max(err_v, std::abs(t["oscillator.v"][i] - manifest_oscillator.v(time)));
    max_x = std::max(max_x, std::abs(t["oscillator.x"][i]));
  }
  const double err_x = oscillator_error(t);
  MESSAGE("damped_oscillator (rk4, 1 ms): max |x - exact| = " << err_x << " m, max |v - exact| = " << err_v << " m/s");
  CHECK(t.rows() == 1001);
  CHECK(t["time"].back() == doctest::Approx(10.0));
  CHECK(err_f < 1e-9);
  CHECK(max_x > 0.1);  // the forced response is not trivially small
  CHECK(err_x < 1e-6);
  CHECK(err_v < 1e-5);
  // The oscillator's energy in the summary is ½mv² + ½kx² at the end.
  const double xe = manifest_oscillator.x(10.0), ve = manifest_oscillator.v(10.0);
  CHECK(r.summary.at("subsystems").at("oscillator").at("energy_J").get<double>() ==
        doctest::Approx(0.5 * ve * ve + 0.5 * 40.0 * xe * xe).epsilon(1e-5));
  CHECK(r.summary.at("subsystems").at("force").at("statistics").at("steps") == 1000);
}

TEST_CASE("out of tree: stepper with an input (pi_controller) against the exact discretization of the sampled loop") {
  // The plant m x'' + c x' + k x = u with u held over each sample T is exactly
  // x_{k+1} = Φ x_k + Γ u_k, [Φ Γ; 0 1] = exp([A B; 0 0] T) (zero-order-hold discretization).
  // The controller steps after the plant (Gauss–Seidel) and holds its new sample x_{k+1} over
  // the step: u_k = Kp e_k + I_k, I_{k+1} = I_k + Ki T e_{k+1} (backward rectangle), e = r − x.
  // Under Jacobi it reads the samples of t_k: I_{k+1} = I_k + Ki T e_k, and its output at t_k
  // still holds e_{k−1}: u_k = Kp e_{k−1} + I_k.
  const double m = 1, k = 40, c = 8, T = 0.01, ref = 0.05, kp = 20, ki = 100;
  Eigen::Matrix3d Z = Eigen::Matrix3d::Zero();
  Z.topLeftCorner<2, 2>() << 0, 1, -k / m, -c / m;
  Z(1, 2) = 1 / m;
  const Eigen::Matrix3d E = (Z * T).exp();
  const Eigen::Matrix2d Phi = E.topLeftCorner<2, 2>();
  const Eigen::Vector2d Gamma = E.topRightCorner<2, 1>();
  for (const bool gauss_seidel : {true, false}) {
    CAPTURE(gauss_seidel);
    const Run r = gauss_seidel ? run_example("pi_controller/pi_control.json", {}, "pi_control")
                               : run_example("pi_controller/pi_control.json", {"/coupling/scheme=\"jacobi\""}, "pi_jacobi");
    Eigen::Vector2d x(0.0, 0.0);
    double integral = 0, e_before = ref, err_x = 0, err_u = 0;
    const auto& xs = r.table["plant.x"];
    const auto& us = r.table["controller.u"];
    for (std::size_t i = 0; i < r.table.rows(); ++i) {
      const double e = ref - x[0], u = kp * (gauss_seidel ? e : e_before) + integral;
      err_x = std::max(err_x, std::abs(xs[i] - x[0]));
      err_u = std::max(err_u, std::abs(us[i] - u));
      x = Phi * x + Gamma * u;
      integral += ki * T * (gauss_seidel ? ref - x[0] : e);
      e_before = e;
    }
    MESSAGE("pi_controller, 10 ms samples, plant rk4 at 1 ms, " << (gauss_seidel ? "Gauss-Seidel" : "Jacobi")
            << ": max |x - exact discrete loop| = " << err_x << " m, max |u - exact| = " << err_u
            << " N; x(10 s) = " << xs.back() << " m (setpoint 0.05)");
    CHECK(r.table.rows() == 1001);
    CHECK(err_x < 1e-11);
    CHECK(err_u < 1e-9);
    // Integral action: no steady-state error, and the force settles at k r.
    CHECK(xs.back() == doctest::Approx(ref).epsilon(1e-6));
    CHECK(us.back() == doctest::Approx(k * ref).epsilon(1e-6));
    CHECK(r.summary.at("subsystems").at("controller").at("statistics").at("steps") == 1000);
  }
}

TEST_CASE("out of tree: integrator (bogacki_shampine): third order at fixed step, error control in adaptive mode") {
  const std::string manifest = "bogacki_shampine/bogacki_shampine.json";
  // Fixed step: the error against the closed form falls by 2^3 per halving of h.
  std::vector<double> err;
  for (double h : {0.01, 0.005, 0.0025}) {
    const Run r = run_example(manifest,
                              {"/subsystems/oscillator/integrator/parameters/adaptive=false",
                               "/subsystems/oscillator/step=" + std::to_string(h)},
                              "bs3_fixed_" + std::to_string(err.size()));
    err.push_back(oscillator_error(r.table));
  }
  const double p1 = std::log2(err[0] / err[1]), p2 = std::log2(err[1] / err[2]);
  MESSAGE("bogacki_shampine fixed step h = 10, 5, 2.5 ms: max |x - exact| = " << err[0] << ", " << err[1] << ", " << err[2]
                                                                               << " m; orders " << p1 << ", " << p2);
  CHECK(p1 == doctest::Approx(3.0).epsilon(0.05));
  CHECK(p2 == doctest::Approx(3.0).epsilon(0.05));

  // Adaptive (the manifest as written, rtol 1e-8): accurate at a host step of 10 ms, where a
  // fixed step is not, by taking more internal steps; a looser tolerance takes fewer steps and
  // is less accurate.
  const Run tight = run_example(manifest, {}, "bs3_adaptive");
  const Run loose = run_example(manifest, {"/subsystems/oscillator/integrator/parameters/rtol=1e-5"}, "bs3_loose");
  const double e_tight = oscillator_error(tight.table), e_loose = oscillator_error(loose.table);
  const json st = tight.summary.at("subsystems").at("oscillator").at("statistics").at("integrator");
  const json sl = loose.summary.at("subsystems").at("oscillator").at("statistics").at("integrator");
  MESSAGE("bogacki_shampine adaptive, host step 10 ms: rtol 1e-8: max |x - exact| = "
          << e_tight << " m, " << st.dump() << "; rtol 1e-5: " << e_loose << " m, " << sl.dump());
  CHECK(e_tight < 1e-7);
  CHECK(e_tight < err[0] / 100);
  CHECK(e_loose > 10 * e_tight);
  CHECK(st.at("steps").get<long>() > 2000);  // more than the 1000 host steps
  CHECK(sl.at("steps").get<long>() < st.at("steps").get<long>());
}

TEST_CASE("out of tree: an example plugin's StepFailure ends the run cleanly with its message") {
  examples();
  // rtol 1e-8 needs about nine internal steps per 10 ms host step; two are allowed.
  const Run r = run_stride("examples/bogacki_shampine/bogacki_shampine.json",
                           {"/subsystems/oscillator/integrator/parameters/max_steps=2"}, "bs3_max_steps");
  CHECK(r.exit_code == 1);
  CHECK(r.status() == "diverged");
  CHECK(r.message().find("bogacki_shampine: cannot meet rtol") != std::string::npos);
  CHECK(r.table.rows() >= 1);  // the rows written so far stay readable
}

TEST_CASE("out of tree: extrapolator (quadratic): third order in the macro step, same as lagrange order 2") {
  const std::string manifest = "quadratic_extrapolator/quadratic_jacobi.json";
  // Jacobi: the oscillator extrapolates the force beyond the newest sample over each macro step.
  // The force is a cosine: its slope is zero at t = 0, so the first two macro steps, extrapolated
  // with fewer than three samples (a hold, then a line), add errors of third order too.
  auto macro = [](double H) {
    const std::string s = std::to_string(H);
    return std::vector<std::string>{"/coupling/macro_step=" + s, "/subsystems/force/step=" + s};
  };
  const Run r20 = run_example(manifest, {}, "quadratic_20ms");
  const Run r10 = run_example(manifest, macro(0.01), "quadratic_10ms");
  const Run r5 = run_example(manifest, macro(0.005), "quadratic_5ms");
  const double e20 = oscillator_error(r20.table, cosine_oscillator), e10 = oscillator_error(r10.table, cosine_oscillator),
               e5 = oscillator_error(r5.table, cosine_oscillator);
  const double p1 = std::log2(e20 / e10), p2 = std::log2(e10 / e5);
  MESSAGE("quadratic, Jacobi, H = 20, 10, 5 ms: max |x - exact| = " << e20 << ", " << e10 << ", " << e5 << " m; orders " << p1
                                                                     << ", " << p2);
  CHECK(p1 == doctest::Approx(3.0).epsilon(0.1));
  CHECK(p2 == doctest::Approx(3.0).epsilon(0.1));

  // The shipped lagrange extrapolator of order 2 is the same parabola: the same run to round-off,
  // extrapolating (Jacobi) and interpolating (Gauss-Seidel, the source a macro step ahead).
  const std::string lagrange = R"(/connections/0/extrapolator={"plugin": "lagrange", "parameters": {"order": 2}})";
  const std::vector<std::string> gs = {"/coupling/scheme=\"gauss_seidel\"", R"(/coupling/order=["force", "oscillator"])"};
  const Run l20 = run_example(manifest, {lagrange}, "lagrange2_20ms");
  std::vector<std::string> gs_lagrange = gs;
  gs_lagrange.push_back(lagrange);
  const Run q_gs = run_example(manifest, gs, "quadratic_gs");
  const Run l_gs = run_example(manifest, gs_lagrange, "lagrange2_gs");
  const double d_jacobi = largest_difference(r20.table, "oscillator.x", l20.table, "oscillator.x");
  const double d_gs = largest_difference(q_gs.table, "oscillator.x", l_gs.table, "oscillator.x");
  const double e_gs = oscillator_error(q_gs.table, cosine_oscillator);
  MESSAGE("quadratic vs lagrange order 2: max |x difference| = " << d_jacobi << " m (Jacobi), " << d_gs
                                                                  << " m (Gauss-Seidel); Gauss-Seidel error " << e_gs << " m");
  CHECK(d_jacobi < 1e-12);
  CHECK(d_gs < 1e-12);
  CHECK(e_gs < e20 / 4);  // interpolating is more accurate than extrapolating
}

TEST_CASE("out of tree: multibody model (pendulum) with the shipped ali3p formulation against the closed-form pendulum") {
  const Run r = run_example("pendulum/pendulum.json", {}, "pendulum_ali3p");
  const PendulumCheck c = check_pendulum(r.table);
  const json stats = r.summary.at("subsystems").at("pendulum").at("statistics").at("formulation");
  MESSAGE("pendulum + ali3p, h = 1 ms, 60 deg: max |theta - exact| = "
          << c.theta_error << " rad, period " << std::setprecision(9) << c.period << " s (exact " << exact_pendulum.period() << std::setprecision(6) << " s), energy drift "
          << c.energy_drift << " J, M_eff error " << c.M_eff_error << " kg (relative), f_eff error " << c.f_eff_error
          << " N, max |Phi| = " << stats.value("max_constraint_violation", -1.0));
  CHECK(c.period == doctest::Approx(exact_pendulum.period()).epsilon(1e-5));
  CHECK(c.period > 2 * std::numbers::pi / exact_pendulum.w0 * 1.05);  // 60°: 7 % longer than small-angle
  CHECK(c.theta_error < 1e-4);
  CHECK(c.energy_drift < 1e-4);  // of m g L (1 - cos 60°) = 4.9 J swinging
  CHECK(c.M_eff_error < 1e-9);
  CHECK(c.f_eff_error < 1e-8);
}

TEST_CASE("out of tree: formulation (baumgarte_rk4): fourth order on the pendulum, exact on the shipped point_mass") {
  const std::string manifest = "baumgarte_rk4/pendulum_rk4.json";
  std::vector<double> err;
  PendulumCheck at10ms;
  double phi_max = -1;
  for (double h : {0.01, 0.005, 0.0025}) {
    const std::string s = std::to_string(h);
    const Run r = run_example(manifest, {"/coupling/macro_step=" + s, "/subsystems/pendulum/step=" + s, "/subsystems/push/step=" + s},
                              "pendulum_rk4_" + std::to_string(err.size()));
    const PendulumCheck c = check_pendulum(r.table);
    if (h == 0.01) {
      at10ms = c;
      phi_max = r.summary.at("subsystems").at("pendulum").at("statistics").at("formulation").at("max_constraint_violation");
    }
    err.push_back(c.theta_error);
  }
  const double p1 = std::log2(err[0] / err[1]), p2 = std::log2(err[1] / err[2]);
  MESSAGE("pendulum + baumgarte_rk4, h = 10, 5, 2.5 ms: max |theta - exact| = " << err[0] << ", " << err[1] << ", " << err[2]
                                                                                << " rad; orders " << p1 << ", " << p2);
  MESSAGE("  at 10 ms: period " << std::setprecision(9) << at10ms.period << " s (exact " << exact_pendulum.period()
                                << std::setprecision(6) << " s), energy drift "
                                << at10ms.energy_drift << " J, M_eff error " << at10ms.M_eff_error << ", f_eff error "
                                << at10ms.f_eff_error << " N, max |Phi| = " << phi_max << " m^2");
  CHECK(p1 == doctest::Approx(4.0).epsilon(0.1));
  CHECK(p2 == doctest::Approx(4.0).epsilon(0.1));
  CHECK(err[1] < 1e-4);
  CHECK(at10ms.period == doctest::Approx(exact_pendulum.period()).epsilon(1e-5));
  CHECK(at10ms.energy_drift < 1e-4);
  CHECK(at10ms.M_eff_error < 1e-6);
  // f̃ carries the Baumgarte correction m (2ξω Φ̇ + ω² Φ) of the remaining drift: ω² = 400/s².
  CHECK(at10ms.f_eff_error < 1e-3);
  CHECK(phi_max < 1e-5);

  // The same formulation on a shipped model, against its closed form and against the shipped
  // `independent` formulation: m s'' = f0 + F0 sin(ωt) gives
  // s = s0 + v0 t + f0 t²/(2m) + F0/(mω) (t − sin(ωt)/ω); M̃ = m and f̃ = f0 exactly.
  const double m = 2, f0 = -3, s0 = 0.5, v0 = 0.1, F0 = 5, w = 4;
  auto exact_s = [=](double t) { return s0 + v0 * t + f0 * t * t / (2 * m) + F0 / (m * w) * (t - std::sin(w * t) / w); };
  double e_rk4 = 0, e_ind = 0, e_M = 0, e_f = 0;
  const Run rk4 = run_example("baumgarte_rk4/point_mass_rk4.json", {}, "point_mass_rk4");
  const Run ind = run_example("baumgarte_rk4/point_mass_rk4.json", {"/subsystems/mass/formulation=\"independent\""}, "point_mass_independent");
  for (std::size_t i = 0; i < rk4.table.rows(); ++i) {
    const double t = rk4.table["time"][i];
    e_rk4 = std::max(e_rk4, std::abs(rk4.table["mass.s"][i] - exact_s(t)));
    e_M = std::max(e_M, std::abs(rk4.table["mass.M_eff"][i] - m));
    e_f = std::max(e_f, std::abs(rk4.table["mass.f_eff"][i] - f0));
  }
  for (std::size_t i = 0; i < ind.table.rows(); ++i)
    e_ind = std::max(e_ind, std::abs(ind.table["mass.s"][i] - exact_s(ind.table["time"][i])));
  const double d = largest_difference(rk4.table, "mass.s", ind.table, "mass.s");
  MESSAGE("point_mass, h = 10 ms, 5 s: max |s - exact| = " << e_rk4 << " m (baumgarte_rk4), " << e_ind
                                                           << " m (independent); largest difference " << d << " m");
  CHECK(rk4.table.rows() == 501);
  CHECK(e_rk4 < 2e-6);  // mostly the cubic interpolation of the force between samples
  CHECK(e_M < 1e-12);
  CHECK(e_f < 1e-12);
  CHECK(d <= e_ind + e_rk4);  // the two formulations agree within the first-order one's error
  CHECK(e_ind > 1000 * e_rk4);
}

TEST_CASE("out of tree: the example integrator, extrapolator and formulation do not allocate while stepping") {
  // The example libraries loaded into this process, through the host's registry.
  stride::host::PluginRegistry reg;
  reg.scan({examples().plugins});
  for (const auto& f : reg.refusals()) FAIL_CHECK("refused " << f.file << ": " << f.reason);

  SUBCASE("quadratic: push() and evaluate(), also once the ring wraps around") {
    auto e = reg.create_extrapolator("quadratic", {{"history", 8}});
    const long at_reset = stride_test::allocations.load();
    e->reset(3);
    CHECK(stride_test::allocations.load() > at_reset);  // the counter sees allocations inside plugins
    double y[3], u[3];
    const long before = stride_test::allocations.load();
    for (int k = 0; k < 50; ++k) {
      const double t = 0.01 * k;
      y[0] = t, y[1] = -t, y[2] = t * t;
      e->push(t, y);
      e->evaluate(t - 0.015, u);  // interpolation
      e->evaluate(t + 0.005, u);  // extrapolation
    }
    CHECK(stride_test::allocations.load() - before == 0);
    CHECK(u[2] == doctest::Approx(0.495 * 0.495));  // a parabola reproduces t² exactly
    // What the host never does, the plugin refuses with an exception the host reports.
    CHECK_THROWS_AS(e->push(0.2, y), std::invalid_argument);  // not after the newest sample
    e->reset(3);
    CHECK_THROWS_AS(e->evaluate(0.0, u), std::logic_error);  // before the first sample
  }

  SUBCASE("bogacki_shampine on damped_oscillator: step(), adaptive and fixed") {
    for (const bool adaptive : {true, false}) {
      CAPTURE(adaptive);
      ConstantInputs force;
      force.value = 1.0;
      auto sys = reg.create_ode("damped_oscillator", {{"x0", 0.1}});
      sys->bind(force);
      auto integ = reg.create_integrator("bogacki_shampine", {{"adaptive", adaptive}});
      std::vector<double> x(2);
      sys->initial_state(0.0, x);
      integ->reset(*sys, 0.0, x);
      double t = integ->step(*sys, 0.0, 0.05, x);
      const long before = stride_test::allocations.load();
      for (int k = 0; k < 40; ++k) t = integ->step(*sys, t, 0.05, x);
      CHECK(stride_test::allocations.load() - before == 0);
      CHECK(t == doctest::Approx(2.05));
    }
  }

  SUBCASE("baumgarte_rk4 on pendulum: step(), acceleration() and effective()") {
    ConstantInputs force;
    auto model = reg.create_model("pendulum", json::object());
    model->bind(force);
    auto form = reg.create_formulation("baumgarte_rk4", json::object());
    Eigen::VectorXd q(2), v(2), v_dot(2), f_eff(1);
    Eigen::MatrixXd M_eff(1, 1);
    model->initial_state(0.0, q, v);
    form->reset(*model, 0.0, q, v);
    double t = 0.0;
    const long before = stride_test::allocations.load();
    for (int k = 0; k < 40; ++k) {
      t = form->step(*model, t, 0.01, q, v);
      form->effective(*model, t, q, v, M_eff, f_eff);
      form->acceleration(*model, t, q, v, v_dot);
    }
    CHECK(stride_test::allocations.load() - before == 0);
    CHECK(q.norm() == doctest::Approx(1.0).epsilon(1e-6));  // still on the circle
  }
}

TEST_CASE("out of tree: the tutorial quotes every example file verbatim") {
  const fs::path root = STRIDE_SOURCE_DIR;
  const std::string tutorial = slurp(root / "docs" / "plugin-tutorial.md");
  REQUIRE_FALSE(tutorial.empty());
  for (const std::string file :
       {"CMakeLists.txt", "damped_oscillator/CMakeLists.txt", "damped_oscillator/damped_oscillator.cpp",
        "damped_oscillator/harmonic_force.cpp", "damped_oscillator/damped_oscillator.json", "pi_controller/pi_controller.cpp",
        "pi_controller/pi_control.json", "bogacki_shampine/bogacki_shampine.cpp",
        "bogacki_shampine/bogacki_shampine.json", "quadratic_extrapolator/quadratic.cpp", "quadratic_extrapolator/quadratic_jacobi.json",
        "pendulum/pendulum.cpp", "pendulum/pendulum.json", "baumgarte_rk4/baumgarte_rk4.cpp", "baumgarte_rk4/pendulum_rk4.json",
        "baumgarte_rk4/point_mass_rk4.json"}) {
    CAPTURE(file);
    const std::string code = slurp(root / "examples" / file);
    REQUIRE_FALSE(code.empty());
    CHECK(tutorial.find(code) != std::string::npos);
  }
}

// A plugin the host would refuse at load is refused when its project is configured, with the
// key of the build fingerprint that differs (here the C++ standard; with clang, the compiler).
TEST_CASE("out of tree: the SDK package refuses at configure time a build the host would refuse") {
  const Examples& e = examples();
  struct Case {
    std::string option, key;
  };
  std::vector<Case> cases{{"-DCMAKE_CXX_STANDARD=23", "cplusplus: host 202002L, this build 202100L"}};
  if (run_command("command -v clang++").exit_code == 0) {
    cases.push_back({"-DCMAKE_CXX_COMPILER=clang++", "compiler: host gcc-"});
  } else {
    MESSAGE("clang++ not installed: the compiler case is not tried");
  }
  int i = 0;
  for (const Case& c : cases) {
    CAPTURE(c.option);
    const fs::path build = scratch() / ("refused_" + std::to_string(i++));
    const CommandResult r = run_command("cmake -S '" STRIDE_SOURCE_DIR "/examples/pi_controller' -B '" +
                                        build.string() + "' -DCMAKE_PREFIX_PATH='" + e.prefix.string() + "' " +
                                        c.option);
    INFO(r.output);
    CHECK(r.exit_code != 0);
    CHECK(r.output.find("would be refused by the Stride host") != std::string::npos);
    CHECK(r.output.find(c.key) != std::string::npos);
  }
}
