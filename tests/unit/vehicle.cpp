// What the mechanism description offers vehicles, and the ODE events the engine uses, each
// against an independent reference:
//  - a rotor (spin angle a coordinate of its own) moves like the same wheel as a body on a
//    revolute joint (a second formulation of one gyroscope), and conserves its energy;
//  - K = -dQ/dq and C = -dQ/dv with rotors, a rotor drive, a prescribed motion: forward
//    differences of the whole generalized force;
//  - a drive spins a flywheel as its closed form says, drive_speed = ratio * spin rate;
//  - a prescribed joint motion follows its table, its rate the table's slope;
//  - attitude sensors return the ISO 8855 yaw, pitch and roll a body was placed at;
//  - ODE events: a bouncing ball's bounces at their closed-form times, the step on its grid.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <numbers>

#include "multibody_run.hpp"
#include "core/event_outputs.hpp"
#include "shipped_plugins.hpp"
#include "../../plugins/models/mechanism/spatial.hpp"

using stride::json;
using namespace stride::mechanism;

namespace {

using stride_test::registry;

class Constant final : public stride::Inputs {
 public:
  explicit Constant(std::vector<double> v) : v_(std::move(v)) {}
  std::span<const double> evaluate(std::size_t, double) override { return v_; }

 private:
  std::vector<double> v_;
};

class NoInputs final : public stride::Inputs {
  std::span<const double> evaluate(std::size_t, double) override { throw std::logic_error("no inputs"); }
};

// A gyroscope: a fork on a spherical joint at the origin, its wheel (disc, axis along the fork)
// 0.2 m out, spinning at 60 rad/s; the fork starts horizontal, so gravity makes it precess.
json gyroscope(bool as_rotor) {
  const double mw = 1.5, It = 0.006, Is = 0.011;
  json d = {{"gravity", {0.0, -9.81, 0.0}},
            {"bodies", {{{"name", "fork"}, {"mass", 0.5}, {"inertia", {0.0005, 0.002, 0.002}}, {"position", {0.1, 0.0, 0.0}}}}},
            {"joints", {{{"name", "pivot"}, {"type", "spherical"}, {"bodies", {"ground", "fork"}}, {"point", {0.0, 0.0, 0.0}}}}},
            {"points", {{{"name", "tip"}, {"body", "fork"}, {"point", {0.2, 0.0, 0.0}}}}}};
  if (as_rotor) {
    d["rotors"] = {{{"name", "wheel"}, {"body", "fork"}, {"point", {0.2, 0.0, 0.0}}, {"axis", {1.0, 0.0, 0.0}}, {"mass", mw},
                    {"inertia", {It, Is}}, {"spin_rate", 60.0}}};
  } else {
    d["bodies"].push_back({{"name", "wheel"}, {"mass", mw}, {"inertia", {Is, It, It}}, {"position", {0.2, 0.0, 0.0}},
                           {"angular_velocity", {60.0, 0.0, 0.0}}});
    d["joints"].push_back({{"name", "hub"}, {"type", "revolute"}, {"bodies", {"fork", "wheel"}}, {"point", {0.2, 0.0, 0.0}},
                           {"axis", {1.0, 0.0, 0.0}}});
  }
  return d;
}

}  // namespace

TEST_CASE("rotor: a spinning wheel as a rotor precesses like the same wheel as a body on a revolute joint") {
  // Both formulations of one gyroscope converge to one motion: their difference falls with h^2.
  NoInputs none;
  auto difference = [&](double h, double& turned, double& drift) {
    stride_test::MultibodyRun rotor("mechanism", {{"description", gyroscope(true)}}, "ali3p", json::object(), none);
    stride_test::MultibodyRun body("mechanism", {{"description", gyroscope(false)}}, "ali3p", json::object(), none);
    const double e0 = rotor.out("energy");
    CHECK(std::abs(e0 - body.out("energy")) < 1e-9 * std::abs(e0));
    double largest = 0.0;
    drift = 0.0;
    for (int k = 0; k < int(std::lround(1.0 / h)); ++k) {  // 1 s: the fork precesses about 2.5 rad
      rotor.step(h);
      body.step(h);
      for (std::size_t i = 0; i < 3; ++i) largest = std::max(largest, std::abs(rotor.out("tip", i) - body.out("tip", i)));
      drift = std::max(drift, std::abs(rotor.out("energy") - e0) / std::abs(e0));
    }
    turned = std::atan2(rotor.out("tip", 2), rotor.out("tip", 0));
    return largest;
  };
  double turned, drift, turned2, drift2;
  const double d1 = difference(1e-3, turned, drift), d2 = difference(5e-4, turned2, drift2);
  MESSAGE("precession " << turned << " rad in 1 s; tip of rotor and body models apart by " << d1 << " m (h = 1 ms), " << d2
                        << " m (0.5 ms); energy drift of the rotor model " << drift << ", " << drift2);
  CHECK(std::abs(turned) > 1.0);       // it precesses (gravity torque over spin angular momentum)
  CHECK(d1 < 1e-4);                    // 0.2 m arm
  CHECK(d2 < d1 / 3.0);                // second order: the same limit
  CHECK(drift < 1e-5);                 // no dissipation in the rotor's terms
}

TEST_CASE("rotors, drives and motions: K = -dQ/dq and C = -dQ/dv equal forward differences of the whole generalized force") {
  std::ifstream f(std::string(STRIDE_SOURCE_DIR) + "/manifests/kart/kart_engine.json");
  REQUIRE(f.good());
  json desc = json::parse(f)["subsystems"]["kart"]["parameters"]["description"];
  desc["static_equilibrium"] = false;
  Constant torque({120.0});
  auto model = registry().create_model("mechanism", {{"description", desc}});
  model->bind(torque);
  const auto n = Eigen::Index(model->sizes().n);
  Eigen::VectorXd q(n), v(n);
  model->initial_state(0.0, q, v);
  std::srand(11);
  v += 0.3 * Eigen::VectorXd::Random(n);  // rolling plus a disturbance: slips, spins, pitch rates
  q += 0.002 * Eigen::VectorXd::Random(n);
  const double t = 0.5;
  Eigen::VectorXd fa(n), c(n), Q0(n), Qp(n);
  Eigen::MatrixXd K(n, n), C(n, n), K_ref(n, n), C_ref(n, n);
  auto Q = [&](const Eigen::VectorXd& qq, const Eigen::VectorXd& vv, Eigen::VectorXd& out) {
    model->applied_forces(t, qq, vv, fa);
    model->coriolis(qq, vv, c);
    out = fa - c;
  };
  Q(q, v, Q0);
  for (Eigen::Index j = 0; j < n; ++j) {
    Eigen::VectorXd x = q;
    const double d = 1e-7 * std::max(1.0, std::abs(q[j]));
    x[j] += d;
    Q(x, v, Qp);
    K_ref.col(j) = (Q0 - Qp) / d;
    x = v;
    const double dv = 1e-7 * std::max(1.0, std::abs(v[j]));
    x[j] += dv;
    Q(q, x, Qp);
    C_ref.col(j) = (Q0 - Qp) / dv;
  }
  REQUIRE(model->force_derivatives(t, q, v, K, C));
  const double rk = (K - K_ref).norm() / K_ref.norm(), rc = (C - C_ref).norm() / C_ref.norm();
  MESSAGE("kart, " << n << " coordinates: K rel diff " << rk << ", C rel diff " << rc);
  CHECK(rk < 1e-6);
  CHECK(rc < 1e-6);
}

TEST_CASE("drive: a constant torque through a ratio spins a flywheel rotor as its closed form says") {
  // Carrier fixed to the ground; rotor I_s = 0.5 kg m^2; ratio 2, input torque 3 N m:
  // spin rate 2 * 3 / 0.5 * t, drive_speed = ratio * rate, energy = 1/2 I_s rate^2.
  json d = {{"bodies", {{{"name", "frame"}, {"mass", 10.0}, {"inertia", {1.0, 1.0, 1.0}}, {"position", {0.0, 0.0, 0.0}}}}},
            {"rotors", {{{"name", "flywheel"}, {"body", "frame"}, {"point", {0.0, 0.0, 0.3}}, {"axis", {0.0, 0.0, 1.0}}, {"mass", 5.0},
                         {"inertia", {0.3, 0.5}}}}},
            {"joints", {{{"name", "base"}, {"type", "fixed"}, {"bodies", {"ground", "frame"}}, {"point", {0.0, 0.0, 0.0}}, {"axis", {0.0, 0.0, 1.0}}}}},
            {"drives", {{{"name", "motor"}, {"rotor", "flywheel"}, {"ratio", 2.0}}}},
            {"sensors", {{{"name", "spin"}, {"type", "joint_velocity"}, {"rotor", "flywheel"}}}}};
  Constant torque({3.0});
  stride_test::MultibodyRun run("mechanism", {{"description", d}}, "ali3p", json::object(), torque);
  for (int k = 0; k < 500; ++k) run.step(2e-3);
  const double rate = 2.0 * 3.0 / 0.5 * 1.0;
  MESSAGE("spin " << run.out("spin") << " rad/s (closed form " << rate << "), drive_speed " << run.out("drive_speed"));
  CHECK(run.out("spin") == doctest::Approx(rate).epsilon(1e-9));
  CHECK(run.out("drive_speed") == doctest::Approx(2.0 * rate).epsilon(1e-9));
  CHECK(run.out("energy") == doctest::Approx(0.5 * 0.5 * rate * rate).epsilon(1e-9));
}

TEST_CASE("prescribed motion: a pendulum's joint follows its table, its rate the slope (Phi_t)") {
  json d = {{"gravity", {0.0, -9.81, 0.0}},
            {"bodies", {{{"name", "arm"}, {"mass", 2.0}, {"inertia", {0.01, 0.1, 0.1}}, {"position", {0.5, 0.0, 0.0}}}}},
            {"joints", {{{"name", "pin"}, {"type", "revolute"}, {"bodies", {"ground", "arm"}}, {"point", {0.0, 0.0, 0.0}}, {"axis", {0.0, 0.0, 1.0}}}}},
            {"motions", {{{"joint", "pin"}, {"table", {{"t", {0.0, 0.2, 1.0}}, {"values", {0.0, 0.0, 0.8}}}}}}},
            {"sensors", {{{"name", "angle"}, {"type", "joint_position"}, {"joint", "pin"}},
                         {{"name", "rate"}, {"type", "joint_velocity"}, {"joint", "pin"}}}}};
  NoInputs none;
  stride_test::MultibodyRun run("mechanism", {{"description", d}}, "ali3p", json::object(), none);
  double worst = 0.0, worst_rate = 0.0;
  for (int k = 1; k <= 1000; ++k) {
    run.step(1e-3);
    const double t = 1e-3 * k, f = t <= 0.2 ? 0.0 : 0.8 * (t - 0.2) / 0.8, fd = t < 0.2 ? 0.0 : 1.0;
    worst = std::max(worst, std::abs(run.out("angle") - f));
    if (std::abs(t - 0.2) > 0.0015 && t < 0.9985) worst_rate = std::max(worst_rate, std::abs(run.out("rate") - fd));  // away from the kinks
  }
  MESSAGE("largest |angle - f(t)| " << worst << " rad, |rate - f'(t)| " << worst_rate << " rad/s");
  CHECK(worst < 1e-9);
  CHECK(worst_rate < 1e-6);
}

TEST_CASE("attitude sensors: the ISO 8855 yaw, pitch and roll a body was placed at, nose down positive") {
  // Ground frame: forward x, up y (left = up x forward = -z). R = Rz(yaw) Ry(pitch) Rx(roll)
  // about up, left, forward.
  const double yaw = 0.3, pitch = -0.2, roll = 0.1;
  const Vec3 F = Vec3::UnitX(), U = Vec3::UnitY(), L = U.cross(F);
  const Eigen::Matrix3d R = (Eigen::AngleAxisd(yaw, U) * Eigen::AngleAxisd(pitch, L) * Eigen::AngleAxisd(roll, F)).toRotationMatrix();
  const Vec4 p = euler_parameters(R);
  json d = {{"bodies", {{{"name", "car"}, {"mass", 1.0}, {"inertia", {1.0, 1.0, 1.0}}, {"position", {0.0, 0.0, 0.0}},
                         {"orientation", {p[0], p[1], p[2], p[3]}}}}},
            {"sensors", {{{"name", "yaw"}, {"type", "yaw"}, {"body", "car"}},
                         {{"name", "pitch"}, {"type", "pitch"}, {"body", "car"}},
                         {{"name", "roll"}, {"type", "roll"}, {"body", "car"}}}}};
  // The sensors read the body's axes as they are at the start: place the body level, then
  // compare against a second body turned by R.
  json level = d;
  level["bodies"][0].erase("orientation");
  NoInputs none;
  auto model = registry().create_model("mechanism", {{"description", level}});
  model->bind(none);
  const auto n = Eigen::Index(model->sizes().n);
  Eigen::VectorXd q(n), v(n), vd = Eigen::VectorXd::Zero(n), fe(0);
  model->initial_state(0.0, q, v);
  q.segment<4>(3) = p;
  Eigen::MatrixXd Me(0, 0);
  std::vector<double> y(4 + 7 + 3);
  model->outputs(stride::MultibodyState{0.0, q, v, vd, Me, fe, fe}, y);
  MESSAGE("yaw " << y[8] << ", pitch " << y[9] << ", roll " << y[10]);
  CHECK(y[8] == doctest::Approx(yaw).epsilon(1e-12));
  CHECK(y[9] == doctest::Approx(pitch).epsilon(1e-12));
  CHECK(y[10] == doctest::Approx(roll).epsilon(1e-12));
  // Nose up (forward axis rising) is a negative pitch.
  const Vec3 nose = R * F;
  CHECK((nose.dot(U) > 0) == (y[9] < 0));
}

namespace {

// A ball dropped from 1 m, restitution 0.8: z = height is the event indicator; an upward
// crossing after a bounce is an event too, which changes nothing.
class Ball final : public stride::OdeSystem {
 public:
  std::vector<stride::PortSpec> ports() const override { return {stride::output("height", 1, "m")}; }
  std::size_t state_size() const override { return 2; }
  void initial_state(double, std::span<double> x) override { x[0] = 1.0, x[1] = 0.0; }
  void derivatives(double, std::span<const double> x, std::span<double> dx) override { dx[0] = x[1], dx[1] = -9.81; }
  void outputs(double, std::span<const double> x, std::span<double> y) override { y[0] = x[0]; }
  std::size_t event_indicator_count() const override { return 1; }
  void event_indicators(double, std::span<const double> x, std::span<double> z) override { z[0] = x[0]; }
  void handle_event(double t, std::span<double> x) override {
    if (x[1] >= 0.0) return;
    x[1] = -0.8 * x[1];
    bounces.push_back(t);
  }
  std::vector<double> bounces;
};

}  // namespace

TEST_CASE("ODE events: a bouncing ball's bounces at their closed-form times; the step stays on its grid") {
  auto ball = std::make_shared<Ball>();
  auto sub = stride::host::make_ode_subsystem(ball, registry().create_integrator("rk4", json::object()));
  NoInputs none;
  sub->bind(none);
  sub->initialize(0.0);
  sub->equilibrate(0.0);
  // Closed form: first contact at sqrt(2/g), then flights of 2 e^k v1 / g.
  const double g = 9.81, v1 = std::sqrt(2.0 * g);
  std::vector<double> expected{v1 / g};
  for (int k = 1; expected.back() < 3.0; ++k) expected.push_back(expected.back() + 2.0 * std::pow(0.8, k) * v1 / g);
  expected.pop_back();
  auto height = [&](double t) {  // h(t) from the closed-form bounces
    if (t < expected[0]) return 1.0 - g * t * t / 2;
    std::size_t k = 0;
    while (k + 1 < expected.size() && t >= expected[k + 1]) ++k;
    const double up = std::pow(0.8, double(k + 1)) * v1, s = t - expected[k];
    return up * s - g * s * s / 2;
  };
  // Recorded every 1 ms: the rows inside each 10-ms step are the outputs at the interpolated
  // states (exact for this quadratic flight), split at the bounces, never across one (linear
  // interpolation would be off by up to g h^2 / 8 = 1.2e-4 m, and far more across a bounce).
  auto* dense = dynamic_cast<stride::host::DenseOutputs*>(sub.get());
  REQUIRE(dense);
  dense->record_grid(0.0, 0.001);
  double t = 0.0, worst_row = 0.0;
  std::size_t rows = 0;
  for (int k = 1; k <= 300; ++k) {
    t = sub->step(t, 0.01);
    REQUIRE(t == doctest::Approx(0.01 * k).epsilon(1e-14));
    for (int j = 1; j <= 9; ++j) {
      const std::size_t row = static_cast<std::size_t>(10 * (k - 1) + j);
      const double* y = dense->outputs_at_row(row);
      REQUIRE(y);
      worst_row = std::max(worst_row, std::abs(y[0] - height(0.001 * double(row))));
      ++rows;
    }
    CHECK(dense->outputs_at_row(static_cast<std::size_t>(10 * k)) == nullptr);  // the step's end: its outputs
  }
  MESSAGE(rows << " rows inside steps, largest |h - h_exact| = " << worst_row << " m");
  CHECK(worst_row < 1e-9);
  REQUIRE(ball->bounces.size() == expected.size());
  double worst = 0.0;
  for (std::size_t k = 0; k < expected.size(); ++k) worst = std::max(worst, std::abs(ball->bounces[k] - expected[k]));
  MESSAGE(expected.size() << " bounces in 3 s, largest time error " << worst << " s; statistics " << sub->statistics().dump());
  CHECK(worst < 1e-10);
  CHECK(sub->statistics()["events"]["count"].get<long>() == long(2 * expected.size()));
}

TEST_CASE("rotors, drives, motions and sensors in a description: every error names its pointer") {
  const json base = {{"bodies", {{{"name", "frame"}, {"mass", 10.0}, {"inertia", {1.0, 1.0, 1.0}}, {"position", {0.0, 0.0, 0.0}}},
                                 {{"name", "arm"}, {"mass", 1.0}, {"inertia", {0.1, 0.1, 0.1}}, {"position", {1.0, 0.0, 0.0}}}}},
                     {"joints", {{{"name", "pin"}, {"type", "revolute"}, {"bodies", {"frame", "arm"}}, {"point", {0.5, 0.0, 0.0}}, {"axis", {0.0, 0.0, 1.0}}},
                                 {{"name", "ball"}, {"type", "spherical"}, {"bodies", {"ground", "frame"}}, {"point", {0.0, 0.0, 0.0}}}}}};
  auto error_of = [&](const std::string& section, const json& value) {
    json d = base;
    d[section] = value;
    try {
      registry().create_model("mechanism", {{"description", d}});
    } catch (const stride::ParameterError& e) {
      return std::string(e.pointer()) + ": " + e.what();
    }
    return std::string("no error");
  };
  auto has = [](const std::string& s, const std::string& part) {
    INFO(s);
    CHECK(s.find(part) != std::string::npos);
  };
  const json rotor = {{"name", "wheel"}, {"body", "arm"}, {"point", {1.0, 0.0, 0.0}}, {"axis", {0.0, 0.0, 1.0}}, {"mass", 1.0}, {"inertia", {0.1, 0.15}}};
  json r = rotor;
  r["inertia"] = {0.1, 0.3};
  has(error_of("rotors", json::array({r})), "/description/rotors/0/inertia: an axisymmetric body has I_axis <= 2 I_across");
  r = rotor;
  r["name"] = "frame";
  has(error_of("rotors", json::array({r})), "/description/rotors/0/name: expected a rotor name used by no body or other rotor");
  r = rotor;
  r["body"] = "ground";
  has(error_of("rotors", json::array({r})), "/description/rotors/0/body: a rotor turns on a moving body");
  has(error_of("drives", {{{"joint", "pin"}, {"rotor", "wheel"}}}), "/description/drives/0: a drive turns exactly one of");
  has(error_of("drives", {{{"joint", "ball"}}}), "/description/drives/0/joint: a drive turns a revolute joint");
  has(error_of("drives", {{{"joint", "pin"}, {"ratio", -2.0}}}), "/description/drives/0/ratio");
  has(error_of("motions", {{{"joint", "ball"}, {"table", {{"t", {0.0, 1.0}}, {"values", {0.0, 1.0}}}}}}), "/description/motions/0/joint");
  has(error_of("motions", {{{"joint", "pin"}, {"table", {{"t", {1.0, 0.0}}, {"values", {0.0, 1.0}}}}}}), "/description/motions/0/table/t/1");
  has(error_of("sensors", {{{"name", "energy"}, {"type", "pitch"}, {"body", "arm"}}}), "/description/sensors/0/name");
  has(error_of("sensors", {{{"name", "p"}, {"type", "pitch"}, {"body", "arm"}, {"up", {1.0, 0.0, 0.0}}}}), "/description/sensors/0/up: expected a direction perpendicular to forward");
  has(error_of("sensors", {{{"name", "p"}, {"type", "joint_velocity"}}}), "/description/sensors/0/joint: a joint_velocity sensor needs a joint or a rotor");
  has(error_of("sensors", {{{"name", "p"}, {"type", "tilt"}, {"body", "arm"}}}), "/description/sensors/0/type");
}
