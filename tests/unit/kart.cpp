// The kart of González et al. 2011 Sect. 4 and its parts, on short horizons, against
// independent references:
//  - magic_formula_tyre: its forces are the Magic Formula's closed-form curves (pure slip), with
//    the peak where the formula puts it and the slope B C D at zero slip; the signs of every
//    force and moment; combined slip reduces both forces inside the friction circle;
//  - a driven (and a braked) wheel on a carriage at constant speed settles at the slip where the
//    closed-form Magic Formula balances the torque (root found here, not by the plugin);
//  - engine_gearbox driving a flywheel: the driveline energy balance (engine work = crank energy
//    + converter loss + flywheel energy);
//  - the kart at the speed where the engine torque, through converter, gearbox and final drive,
//    equals drag and rolling resistance (solved here from the published equations) holds it.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>

#include "multibody_run.hpp"
#include "shipped_plugins.hpp"
#include "stride_run.hpp"

using stride::json;

namespace {

using stride_test::registry;

class Constant final : public stride::Inputs {
 public:
  explicit Constant(std::vector<double> v) : v_(std::move(v)) {}
  std::span<const double> evaluate(std::size_t, double) override { return v_; }
  std::vector<double> v_;
};

// Pacejka's Magic Formula, D = 1.
double magic(double B, double C, double E, double s) {
  const double Bs = B * s;
  return std::sin(C * std::atan(Bs - E * (Bs - std::atan(Bs))));
}

// Root of g on [a, b] (g(a), g(b) of opposite signs).
double bisect(const std::function<double(double)>& g, double a, double b) {
  double ga = g(a);
  for (int i = 0; i < 200; ++i) {
    const double m = 0.5 * (a + b), gm = g(m);
    if ((gm > 0) == (ga > 0)) a = m, ga = gm;
    else b = m;
  }
  return 0.5 * (a + b);
}

const json kTyre = {{"radius", 0.14},  {"vertical_stiffness", 8e4}, {"vertical_damping", 200.0}, {"mu_x", 1.4}, {"B_x", 12.0},
                    {"C_x", 1.65},     {"E_x", -0.5},               {"mu_y", 1.3},               {"B_y", 20.0}, {"C_y", 1.3},
                    {"E_y", 0.2},      {"rolling_resistance", 0.015}, {"rolling_speed", 0.1},    {"slip_speed", 0.5},
                    {"axis", {0.0, 0.0, -1.0}}};

// A wheel (rotor) on a hub body; no gravity: the hub's generalized force is the tyre's.
struct TyreProbe {
  std::shared_ptr<stride::MultibodyModel> model;
  Eigen::VectorXd q, v, f;
  explicit TyreProbe(const json& tyre) {
    json d = {{"bodies", {{{"name", "hub"}, {"mass", 10.0}, {"inertia", {0.1, 0.1, 0.1}}, {"position", {0.0, 0.14, 0.0}}}}},
              {"rotors", {{{"name", "wheel"}, {"body", "hub"}, {"point", {0.0, 0.14, 0.0}}, {"axis", {0.0, 0.0, -1.0}}, {"mass", 3.0},
                           {"inertia", {0.03, 0.05}}}}},
              {"forces", {{{"type", "plugin"}, {"plugin", "magic_formula_tyre"}, {"body", "wheel"}, {"point", {0.0, 0.14, 0.0}},
                           {"parameters", tyre}}}}};
    model = registry().create_model("mechanism", {{"description", d}});
    const auto n = Eigen::Index(model->sizes().n);
    q.resize(n), v.resize(n), f.resize(n);
    model->initial_state(0.0, q, v);
  }
  // Hub centre at height y moving at (vx, 0, vz) (vz > 0: to the right), wheel spin rate w.
  void at(double y, double vx, double vz, double w) {
    q[1] = y;
    v.setZero();
    v[0] = vx, v[2] = vz, v[7] = w;
    model->applied_forces(0.0, q, v, f);
  }
  double Fx() const { return f[0]; }
  double Fy_left() const { return -f[2]; }
  double Fz() const { return f[1]; }
  double spin_torque() const { return f[7]; }
};

}  // namespace

TEST_CASE("magic_formula_tyre: pure-slip forces are the Magic Formula's closed forms, with its peak, slope and signs") {
  TyreProbe tp(kTyre);
  const double r0 = 0.14, k = 8e4, delta = 0.006, Fz = k * delta, r_e = r0 - delta / 3, V = 10.0, v_ref = std::hypot(V, 0.5);
  // Longitudinal: kappa = (w r_e - V) / v_ref.
  double worst = 0.0, peak = 0.0, kappa_peak = 0.0;
  for (double kappa = -1.0; kappa <= 1.0; kappa += 0.0005) {
    tp.at(r0 - delta, V, 0.0, (V + kappa * v_ref) / r_e);
    CHECK(tp.Fz() == doctest::Approx(Fz).epsilon(1e-12));
    worst = std::max(worst, std::abs(tp.Fx() - 1.4 * Fz * magic(12.0, 1.65, -0.5, kappa)));
    if (tp.Fx() > peak) peak = tp.Fx(), kappa_peak = kappa;
  }
  // The peak: C atan(B k - E (B k - atan B k)) = pi/2, solved for k here.
  const double k_star = bisect([](double x) { const double Bx = 12 * x; return 1.65 * std::atan(Bx + 0.5 * (Bx - std::atan(Bx))) - M_PI / 2; }, 0.0, 1.0);
  tp.at(r0 - delta, V, 0.0, (V + 1e-6 * v_ref) / r_e);
  const double slope = tp.Fx() / 1e-6;
  MESSAGE("Fx: largest deviation from the closed form " << worst << " N of D = " << 1.4 * Fz << " N; peak " << peak << " N at kappa "
                                                        << kappa_peak << " (closed form " << k_star << "); slope " << slope
                                                        << " N (B C D = " << 12 * 1.65 * 1.4 * Fz << " N)");
  CHECK(worst < 1e-9 * Fz);
  CHECK(peak == doctest::Approx(1.4 * Fz).epsilon(1e-5));  // on a grid of 0.0005 in kappa
  CHECK(std::abs(kappa_peak - k_star) < 0.0005);
  CHECK(slope == doctest::Approx(12 * 1.65 * 1.4 * Fz).epsilon(1e-4));
  // Lateral: alpha = atan(V_y / v_ref), the force against the sideslip.
  worst = 0.0;
  for (double alpha = -0.5; alpha <= 0.5; alpha += 0.001) {
    const double vleft = std::tan(alpha) * v_ref;  // moving left at vleft: z velocity -vleft
    tp.at(r0 - delta, V, -vleft, V / r_e);
    worst = std::max(worst, std::abs(tp.Fy_left() + 1.3 * Fz * magic(20.0, 1.3, 0.2, alpha)));
    if (alpha > 0.01) CHECK(tp.Fy_left() < 0.0);
  }
  MESSAGE("Fy: largest deviation from the closed form " << worst << " N");
  CHECK(worst < 1e-9 * Fz);
}

TEST_CASE("magic_formula_tyre: signs of every force and moment; combined slip inside the friction circle; off the ground nothing") {
  TyreProbe tp(kTyre);
  const double r0 = 0.14, delta = 0.006, Fz = 8e4 * delta, r_e = r0 - delta / 3, V = 10.0;
  tp.at(r0 - delta, V, 0.0, 1.05 * V / r_e);  // driving slip
  CHECK(tp.Fx() > 0.0);
  CHECK(tp.spin_torque() < 0.0);  // the ground holds the wheel back
  tp.at(r0 - delta, V, 0.0, 0.9 * V / r_e);   // braking slip
  CHECK(tp.Fx() < 0.0);
  CHECK(tp.spin_torque() > 0.0);
  tp.at(r0 - delta, V, 0.0, V / r_e);         // free rolling: only rolling resistance, against the spin
  CHECK(std::abs(tp.Fx()) < 1e-9);
  CHECK(tp.spin_torque() == doctest::Approx(-0.015 * Fz * (r0 - delta) * std::tanh(V / 0.1)).epsilon(1e-12));
  tp.at(r0 - delta, -V, 0.0, -V / r_e);       // rolling backwards: resistance turns round
  CHECK(tp.spin_torque() > 0.0);
  tp.at(r0 - delta, V, 0.5, V / r_e);         // sliding to the right: pushed to the left
  CHECK(tp.Fy_left() > 0.0);
  // Vertical: the spring and the damper, never pulling.
  tp.at(r0 - delta, V, 0.0, V / r_e);
  const double still = tp.Fz();
  tp.v[1] = -0.1;
  tp.model->applied_forces(0.0, tp.q, tp.v, tp.f);
  CHECK(tp.Fz() == doctest::Approx(still + 200.0 * 0.1).epsilon(1e-12));
  tp.v[1] = 10.0;
  tp.model->applied_forces(0.0, tp.q, tp.v, tp.f);
  CHECK(tp.Fz() == 0.0);
  tp.at(r0 + 0.01, V, 0.0, 2.0 * V / r_e);    // in the air
  CHECK(tp.f.norm() == 0.0);
  // Combined slip: each force below its pure-slip value, inside the friction ellipse.
  tp.at(r0 - delta, V, 0.0, 1.06 * V / r_e);
  const double fx_pure = tp.Fx();
  tp.at(r0 - delta, V, -0.8, V / r_e);
  const double fy_pure = tp.Fy_left();
  tp.at(r0 - delta, V, -0.8, 1.06 * V / r_e);
  MESSAGE("combined: Fx " << tp.Fx() << " (pure " << fx_pure << "), Fy " << tp.Fy_left() << " (pure " << fy_pure << ") N");
  CHECK(std::abs(tp.Fx()) < std::abs(fx_pure));
  CHECK(std::abs(tp.Fy_left()) < std::abs(fy_pure));
  CHECK(std::hypot(tp.Fx() / (1.4 * Fz), tp.Fy_left() / (1.3 * Fz)) <= 1.0);
}

TEST_CASE("a driven and a braked wheel at constant speed settle at the slip where the Magic Formula balances the torque") {
  // A carriage moves at V along x (prescribed), a hub slides on it vertically (weight on the
  // tyre), the wheel turns on the hub, driven (or braked) through a drive. Steady spin:
  // T = r_l F_x(kappa) + f_r F_z r_l tanh(w r_e / v_rr), F_z = (m_hub + m_wheel) g.
  const double V = 8.0, m_hub = 37.0, m_w = 3.0, g = 9.81, Fz = (m_hub + m_w) * g, r0 = 0.14, k = 8e4;
  const double r_l = r0 - Fz / k, r_e = r0 - Fz / k / 3, v_ref = std::hypot(V, 0.5);
  for (double T : {60.0, -45.0}) {
    json d = {{"gravity", {0.0, -g, 0.0}},
              {"bodies", {{{"name", "cart"}, {"mass", 20.0}, {"inertia", {1.0, 1.0, 1.0}}, {"position", {0.0, 0.5, 0.0}}, {"velocity", {V, 0.0, 0.0}}},
                          {{"name", "hub"}, {"mass", m_hub}, {"inertia", {0.5, 0.5, 0.5}}, {"position", {0.0, r_l, 0.0}}, {"velocity", {V, 0.0, 0.0}}}}},
              {"rotors", {{{"name", "wheel"}, {"body", "hub"}, {"point", {0.0, r_l, 0.0}}, {"axis", {0.0, 0.0, -1.0}}, {"mass", m_w},
                           {"inertia", {0.03, 0.05}}, {"spin_rate", V / r_e}}}},
              {"joints", {{{"name", "track"}, {"type", "prismatic"}, {"bodies", {"ground", "cart"}}, {"point", {0.0, 0.5, 0.0}}, {"axis", {1.0, 0.0, 0.0}}},
                          {{"name", "slide"}, {"type", "prismatic"}, {"bodies", {"cart", "hub"}}, {"point", {0.0, r_l, 0.0}}, {"axis", {0.0, 1.0, 0.0}}}}},
              {"motions", {{{"joint", "track"}, {"table", {{"t", {0.0, 10.0}}, {"values", {0.0, 10.0 * V}}}}}}},
              {"forces", {{{"type", "plugin"}, {"plugin", "magic_formula_tyre"}, {"body", "wheel"}, {"point", {0.0, r_l, 0.0}}, {"parameters", kTyre}}}},
              {"drives", {{{"rotor", "wheel"}, {"ratio", 1.0}}}},
              {"sensors", {{{"name", "spin"}, {"type", "joint_velocity"}, {"rotor", "wheel"}}}}};
    Constant torque({T});
    stride_test::MultibodyRun run("mechanism", {{"description", d}}, "ali3p", json::object(), torque);
    for (int i = 0; i < 1500; ++i) run.step(1e-3);
    const double target = (T - 0.015 * Fz * r_l) / (r_l * 1.4 * Fz);  // F_x / D at the steady slip
    const double kappa = bisect([&](double x) { return magic(12.0, 1.65, -0.5, x) - target; }, -0.1, 0.1);
    const double w = (V + kappa * v_ref) / r_e;
    MESSAGE("T = " << T << " N m: spin " << run.out("spin") << " rad/s, closed form " << w << " (kappa " << kappa << ")");
    CHECK(run.out("spin") == doctest::Approx(w).epsilon(1e-7));
  }
}

namespace {

namespace fs = std::filesystem;

json kart_manifest() {
  std::ifstream f(std::string(STRIDE_SOURCE_DIR) + "/manifests/kart/kart_engine.json");
  REQUIRE(f.good());
  return json::parse(f);
}

stride_test::Run run_manifest(const json& m, const std::string& tag) {
  const fs::path file = stride_test::scratch() / (tag + ".json");
  fs::create_directories(file.parent_path());
  std::ofstream(file) << m.dump(1);
  return stride_test::run_stride(file.string(), {}, tag);
}

// Crossley-Cook with the constants of the Modelica Standard Library's ComponentsThrottleControl
// (theta deg, P_m bar, N rad/s, masses g), written out again here.
double cc_pumping(double N, double p) { return -0.366 + 0.08979 * N * p - 0.0337 * N * p * p + 0.0001 * N * N * p; }
double cc_throttle(double th, double p) {
  const double f = 2.821 - 0.05231 * th + 0.10299 * th * th - 0.00063 * th * th * th;
  return f * (p <= 0.5 ? 1.0 : 2.0 * std::sqrt(p - p * p));
}
double cc_torque(double m_a, double N) {
  const double afr = 14.6, s = 15.0;
  return -181.3 + 379.36 * m_a + 21.91 * afr - 0.85 * afr * afr + 0.26 * s - 0.0028 * s * s + 0.027 * N - 0.000107 * N * N +
         0.00048 * N * s + 2.55 * s * m_a - 0.05 * s * s * m_a;
}
// sf_car's converter in its own units: speed ratio, K (rpm per sqrt(lbf ft)), torque ratio.
const std::vector<std::array<double, 3>> kSfCar = {
    {0.0, 137.465208993806, 2.232}, {0.1, 137.065019156852, 2.075}, {0.2, 135.864449645989, 1.975}, {0.3, 135.664354727512, 1.846},
    {0.4, 137.565256453045, 1.720}, {0.5, 140.366585311725, 1.564}, {0.6, 145.268910814415, 1.409}, {0.7, 152.872517716547, 1.254},
    {0.8, 162.977311099644, 1.096}, {0.81, 164.277928069745, 1.080}, {0.82, 166.178829795278, 1.061}, {0.83, 167.979684061573, 1.043},
    {0.84, 170.080680705583, 1.028}, {0.85, 172.781962105024, 1.012}, {0.86, 175.383196045227, 1.002}, {0.87, 179.585189333248, 1.002},
    {0.88, 183.587087702791, 1.001}, {0.89, 189.890077634821, 0.998}, {0.90, 197.693779455430, 0.999}, {0.92, 215.902417036852, 1.001},
    {0.94, 244.515990379085, 1.002}};
// Turbine torque (N m) of sf_car's converter with K scaled, impeller at w_e, turbine at w_t
// (rad/s), below the coupling point.
double converter_turbine(double w_e, double w_t, double scale) {
  const double sr = w_t / w_e;
  REQUIRE(sr < 0.94);  // within sf_car's table
  std::size_t i = 1;
  while (i + 1 < kSfCar.size() && kSfCar[i][0] < sr) ++i;
  const double u = (sr - kSfCar[i - 1][0]) / (kSfCar[i][0] - kSfCar[i - 1][0]);
  const double K = scale * (kSfCar[i - 1][1] + u * (kSfCar[i][1] - kSfCar[i - 1][1]));
  const double TR = kSfCar[i - 1][2] + u * (kSfCar[i][2] - kSfCar[i - 1][2]);
  const double rpm = w_e * 60.0 / (2.0 * M_PI);
  return TR * (rpm / K) * (rpm / K) * 1.3558179483314004;  // lbf ft -> N m
}

}  // namespace

TEST_CASE("engine and gearbox driving a flywheel: engine work = crank energy + converter loss + flywheel energy") {
  // The gearbox output turns a flywheel of 3.4 kg m^2 (the kart's mass at the rear wheel's
  // radius) through a drive of ratio 1; a throttle step and upshifts in 1.5 s.
  json m = kart_manifest();
  auto& eng = m["subsystems"]["engine"]["parameters"];
  eng["throttle"] = json::array({{0.0, 12.0}, {0.3, 18.0}});
  eng["upshift"] = json::array({{0.0, 25.0, 60.0, 100.0}});
  eng["downshift"] = json::array({{0.0, 10.0, 20.0, 40.0}});
  eng["engine_speed0"] = 120.0;
  m["subsystems"]["kart"]["parameters"]["description"] = {
      {"bodies", {{{"name", "frame"}, {"mass", 10.0}, {"inertia", {1.0, 1.0, 1.0}}, {"position", {0.0, 0.0, 0.0}}}}},
      {"rotors", {{{"name", "flywheel"}, {"body", "frame"}, {"point", {0.0, 0.0, 0.0}}, {"axis", {0.0, 0.0, 1.0}}, {"mass", 20.0},
                   {"inertia", {2.0, 3.4}}}}},
      {"joints", {{{"name", "base"}, {"type", "fixed"}, {"bodies", {"ground", "frame"}}, {"point", {0.0, 0.0, 0.0}}, {"axis", {0.0, 0.0, 1.0}}}}},
      {"drives", {{{"name", "shaft"}, {"rotor", "flywheel"}, {"ratio", 1.0}}}}};
  m["variables"]["h_mbs"] = 1e-4;
  m["coupling"]["end"] = 1.5;
  m["record"] = {{"interval", 0.01}, {"variables", {"engine.work", "engine.engine_speed", "kart.energy", "kart.drive_speed"}}};
  const auto r = run_manifest(m, "flywheel");
  REQUIRE(r.status() == "completed");
  const auto& t = r.table;
  const std::size_t e = t.rows() - 1;
  const double J = 0.14, w0 = t["engine.engine_speed"][0], w1 = t["engine.engine_speed"][e];
  const double W = t["engine.work.engine"][e], loss = t["engine.work.converter_loss"][e], out = t["engine.work.delivered"][e];
  const double crank = 0.5 * J * (w1 * w1 - w0 * w0), fly = t["kart.energy"][e] - t["kart.energy"][0];
  const auto shifts = r.summary["subsystems"]["engine"]["report"]["shifts"];
  MESSAGE("engine work " << W << " J = crank " << crank << " + converter " << loss << " + delivered " << out << " (residual "
                         << W - crank - loss - out << " J); flywheel gained " << fly << " J; shifts " << shifts.dump());
  CHECK(shifts.size() >= 1);
  CHECK(loss > 0.0);
  CHECK(std::abs(W - crank - loss - out) < 1e-6 * W);  // inside the engine: integration error only
  CHECK(std::abs(out - fly) < 2e-3 * out);              // across the co-simulation interface (h = 0.1 ms)
}

TEST_CASE("kart: at the speed where engine torque through the driveline equals drag and rolling resistance, it stays") {
  // Steady state at V = 20 m/s in third gear, solved here from the published equations:
  // axle torque = r_l (drag + f_r m g); slip of the rear tyres from the Magic Formula; turbine
  // torque = output torque / gear; the converter's impeller speed; the throttle at which the
  // Crossley-Cook torque (charge of one intake event at the pumping rate) equals the impeller's.
  json m = kart_manifest();
  json& desc = m["subsystems"]["kart"]["parameters"]["description"];
  const auto& eng = m["subsystems"]["engine"]["parameters"];
  double mass = 0.0;
  for (const auto& b : desc["bodies"]) mass += b["mass"].get<double>();
  for (const auto& r : desc["rotors"]) mass += r["mass"].get<double>();
  json tyre_r, tyre_f;
  double drag_area = 0.0;
  for (const auto& f : desc["forces"]) {
    if (f.value("name", "") == "tyre_rl") tyre_r = f["parameters"];
    if (f.value("name", "") == "tyre_fl") tyre_f = f["parameters"];
    if (f.value("plugin", "") == "aerodynamic_drag") drag_area = f["parameters"]["drag_area"];
  }
  const double g = 9.81, V = 20.0, fr = tyre_r["rolling_resistance"], ratio_final = desc["drives"][0]["ratio"];
  const double gear = eng["gear_ratios"][2], scale = eng["converter_capacity_scale"];
  const double drag = 0.5 * 1.2 * drag_area * V * V;
  const double Fz_r = 0.58 * mass * g / 2, Fz_f = 0.42 * mass * g / 2;  // the generator's static shares
  const double r0r = tyre_r["radius"], r0f = tyre_f["radius"], kr = tyre_r["vertical_stiffness"], kf = tyre_f["vertical_stiffness"];
  const double rl_r = r0r - Fz_r / kr, re_r = r0r - Fz_r / kr / 3, re_f = r0f - Fz_f / kf / 3;
  const double Fx_r = (drag + 2 * fr * Fz_f) / 2;  // each rear tyre; a front one carries -f_r F_z
  const double kappa = bisect([&](double x) { return tyre_r["mu_x"].get<double>() * Fz_r * magic(tyre_r["B_x"], tyre_r["C_x"], tyre_r["E_x"], x) - Fx_r; }, 0.0, 0.1);
  const double w_axle = (V + kappa * std::hypot(V, tyre_r["slip_speed"].get<double>())) / re_r;
  const double T_out = rl_r * (drag + fr * mass * g) / ratio_final, w_t = gear * ratio_final * w_axle;
  const double w_e = bisect([&](double w) { return converter_turbine(w, w_t, scale) - T_out / gear; }, w_t / 0.93, 3.0 * w_t);
  const double sr = w_t / w_e;
  REQUIRE(sr < 0.94);  // within sf_car's table
  std::size_t i = 1;
  while (kSfCar[i][0] < sr) ++i;
  const double TR = kSfCar[i - 1][2] + (sr - kSfCar[i - 1][0]) / (kSfCar[i][0] - kSfCar[i - 1][0]) * (kSfCar[i][2] - kSfCar[i - 1][2]);
  const double T_p = T_out / gear / TR;
  auto engine_torque = [&](double th) {
    const double p = bisect([&](double pm) { return cc_throttle(th, pm) - cc_pumping(w_e, pm); }, 1e-6, 1.0);
    return cc_torque(cc_pumping(w_e, p) * M_PI / w_e, w_e);
  };
  const double theta = bisect([&](double th) { return engine_torque(th) - T_p; }, 5.0, 40.0);
  MESSAGE("steady state at " << V << " m/s: drag " << drag << " N, axle " << w_axle << " rad/s (rear slip " << kappa << "), output torque "
                             << T_out << " N m, engine " << w_e << " rad/s (speed ratio " << sr << "), throttle " << theta << " deg");
  // The kart at that state: rolling at V, engine at w_e, throttle held, no shifts.
  for (auto& b : desc["bodies"]) b["velocity"] = {V, 0.0, 0.0};
  for (auto& r : desc["rotors"]) r["spin_rate"] = r["name"] == "rear_axle" ? w_axle : V / re_f;
  auto& e = m["subsystems"]["engine"]["parameters"];
  e["throttle"] = json::array({{0.0, theta}});
  e["engine_speed0"] = w_e;
  e["initial_gear"] = 3;
  e["upshift"] = json::array({{0.0, 1e4, 1e4, 1e4}});
  e["downshift"] = json::array({{0.0, 0.0, 0.5, 1.0}});
  m["variables"]["h_mbs"] = 1e-3;
  m["variables"]["sync"] = "fastest_first";
  m["variables"]["order_mbs"] = 1;
  m["coupling"]["end"] = 1.3;
  m["record"] = {{"interval", 0.01}, {"variables", {"kart.cg_dot", "engine.engine_speed", "engine.shaft_torque"}}};
  const auto r = run_manifest(m, "steady_speed");
  REQUIRE(r.status() == "completed");
  const auto& v = r.table["kart.cg_dot.x"];
  const auto& we = r.table["engine.engine_speed"];
  const std::size_t a = 30, b = 130;  // 0.3 s (the pitch settling from rest) to 1.3 s
  const double accel = (v[b] - v[a]) / (0.01 * double(b - a)), resist = (drag + fr * mass * g) / mass;
  MESSAGE("simulated: speed " << v[a] << " -> " << v[b] << " m/s (mean acceleration " << accel << " m/s^2; the resistances alone "
                               << -resist << "), engine " << we[b] << " rad/s (steady state " << w_e << ")");
  CHECK(std::abs(accel) < 0.01 * resist);
  CHECK(std::abs(we[b] - w_e) < 0.01 * w_e);
}

TEST_CASE("engine_gearbox: bad gearbox data are errors with their pointers") {
  auto error_of = [&](const json& params) {
    try {
      registry().create_ode("engine_gearbox", params);
    } catch (const stride::ParameterError& e) {
      return std::string(e.pointer()) + ": " + e.what();
    }
    return std::string("no error");
  };
  auto has = [](const std::string& s, const std::string& part) {
    INFO(s);
    CHECK(s.find(part) != std::string::npos);
  };
  has(error_of({{"gear_ratios", {2.0, -1.0}}, {"upshift", {{0.0, 50.0}}}, {"downshift", {{0.0, 20.0}}}}), "/gear_ratios/1: expected a positive gear ratio");
  has(error_of({{"gear_ratios", {2.0, 1.0}}, {"upshift", {{0.0, 50.0, 60.0}}}, {"downshift", {{0.0, 20.0}}}}), "/upshift: expected rows [theta, one speed per shift] with 1 speeds for 2 gears");
  has(error_of({{"gear_ratios", {2.0, 1.0}}, {"upshift", {{0.0, 50.0}}}, {"downshift", {{0.0, 60.0}}}}), "/downshift: the downshift to gear 1");
  has(error_of({{"initial_gear", 9}}), "/initial_gear: expected a gear in [1, 4]");
  has(error_of({{"converter", {{0.1, 12.0, 2.0}, {0.5, 13.0, 1.5}}}}), "/converter: expected speed ratios from 0");
  has(error_of({{"converter", {{0.0, 12.0, 2.0}, {0.5, 13.0, 2.5}}}}), "/converter/1: expected K > 0 and torque ratio * speed ratio <= 1");
}
