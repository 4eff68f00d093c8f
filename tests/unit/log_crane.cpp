// Contacts between two moving bodies in the `mechanism` plugin and the hydraulic log crane of
// the nonsmooth interface model abstract (manifests/log_crane), on short horizons:
//  - a sphere on one body against a cylinder or a plane of another: the normal row of the
//    contact Jacobian is the rate of the gap (central differences of the gap along the motion),
//    the friction rows are the relative velocity of the touching material points;
//  - a log squeezed between two jaws by a known force F: held when μ ≥ m g / (2 F) (the
//    friction limit by hand), sliding with g − 2 μ F / m below it;
//  - a contact surface given wrongly is an error naming the JSON pointer and what was expected.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

#include "multibody_run.hpp"
#include "shipped_plugins.hpp"

#include <stride/nonsmooth.hpp>

#include "../../plugins/models/mechanism/spatial.hpp"

using stride::json;
using namespace stride::mechanism;

namespace {

using stride_test::registry;

class NoInputs final : public stride::Inputs {
  std::span<const double> evaluate(std::size_t, double) override { throw std::logic_error("no inputs"); }
};

// q + ε v with the Euler parameters renormalized (the gap is a function of the pose).
Eigen::VectorXd advance(const Eigen::VectorXd& q, const Eigen::VectorXd& v, double eps) {
  Eigen::VectorXd x = q + eps * v;
  for (Eigen::Index b = 0; b < x.size() / 7; ++b) x.segment<4>(7 * b + 3).normalize();
  return x;
}

}  // namespace

TEST_CASE(
    "contact between two moving bodies: the normal row is the gap rate, the friction rows the slip of the touching "
    "points") {
  // Body "ball" (a sphere of radius 0.05 m) near a log (cylinder of radius 0.2 m about its body
  // x axis) and near a plate (plane with normal along its body y axis), every body tilted and
  // all moving: random velocities that keep |p| = 1 to first order.
  const json d = json::parse(R"({
    "bodies": [
      {"name": "ball", "mass": 1.0, "inertia": [1.0, 2.0, 2.5], "position": [0.05, 0.27, 0.1], "orientation": {"axis": [1, 2, 3], "angle": 0.4}},
      {"name": "log", "mass": 500.0, "inertia": [10, 900, 900], "position": [0, 0, 0], "orientation": {"axis": [0, 1, 1], "angle": 0.3}},
      {"name": "plate", "mass": 5.0, "inertia": [1.0, 2.0, 2.5], "position": [0.3, 0.5, -0.2], "orientation": {"axis": [1, 0, 1], "angle": -0.2}}],
    "contacts": [
      {"name": "on_log", "body": "ball", "point": [0.05, 0.27, 0.1], "radius": 0.05, "friction": 0.5,
       "surface": {"body": "log", "shape": "cylinder", "point": [0, 0, 0], "axis": [1, 0.2, 0.1], "radius": 0.2}},
      {"name": "on_plate", "body": "ball", "point": [0.05, 0.27, 0.1], "radius": 0.05, "friction": 0.5,
       "surface": {"body": "plate", "shape": "plane", "point": [0.3, 0.5, -0.2], "normal": [0.1, -1, 0.2]}}]})");
  auto model = registry().create_model("mechanism", {{"description", d}});
  auto* ns = dynamic_cast<stride::NonsmoothModel*>(model.get());
  REQUIRE(ns != nullptr);
  const auto n = Eigen::Index(model->sizes().n);
  Eigen::VectorXd q(n), v(n);
  model->initial_state(0.0, q, v);
  std::mt19937 rng(7);
  std::normal_distribution<double> N01;
  for (Eigen::Index b = 0; b < n / 7; ++b) {
    v.segment<3>(7 * b) = Vec3(N01(rng), N01(rng), N01(rng));
    const Vec3 w(N01(rng), N01(rng), N01(rng));
    v.segment<4>(7 * b + 3) = 0.5 * E_matrix(q.segment<4>(7 * b + 3)).transpose() * w;
  }
  const Eigen::Index rows = 6;
  Eigen::MatrixXd J(rows, n), Jp(rows, n);
  Eigen::VectorXd gap(rows), gp(rows), gm(rows), mu(rows);
  ns->contacts(0.0, q, v, J, gap, mu);
  const double eps = 1e-6;
  ns->contacts(0.0, advance(q, v, eps), v, Jp, gp, mu);
  ns->contacts(0.0, advance(q, v, -eps), v, Jp, gm, mu);
  for (Eigen::Index k : {0, 3}) {
    const double rate = (gp[k] - gm[k]) / (2 * eps), row = J.row(k).dot(v);
    MESSAGE("contact " << k / 3 << ": gap " << gap[k] << " m, J_n v = " << row << " m/s, central difference " << rate);
    CHECK(row == doctest::Approx(rate).epsilon(1e-7));
    CHECK(mu[k] == 0.0);
    CHECK(mu[k + 1] == 0.5);
  }
  // The cylinder's gap by hand: distance of the ball's centre from the axis, less both radii.
  const Vec3 c = q.segment<3>(0),
             a = rotation(q.segment<4>(10)) *
                 (rotation(axis_angle(Vec3(0, 1, 1), 0.3)).transpose() * Vec3(1, 0.2, 0.1).normalized());
  const Vec3 e = c - q.segment<3>(7);
  CHECK(gap[0] == doctest::Approx((e - e.dot(a) * a).norm() - 0.25).epsilon(1e-12));
  // Friction rows: the touching points' relative velocity along each direction, from finite
  // differences of the two material points (fixed in their bodies) along the motion.
  auto material = [&](int body, const Vec3& x, const Eigen::VectorXd& qq) {
    const Vec3 s = rotation(q.segment<4>(7 * body + 3)).transpose() * (x - q.segment<3>(7 * body));
    return Vec3(qq.segment<3>(7 * body) + rotation(qq.segment<4>(7 * body + 3)) * s);
  };
  const Vec3 n0 = (e - e.dot(a) * a).normalized(), xi = c - 0.05 * n0, xj = xi - gap[0] * n0;
  const Eigen::VectorXd qp = advance(q, v, eps), qm = advance(q, v, -eps);
  const Vec3 slip = (material(0, xi, qp) - material(0, xi, qm) - material(1, xj, qp) + material(1, xj, qm)) / (2 * eps);
  for (Eigen::Index k : {1, 2}) {
    const Vec3 t = k == 1 ? a : a.cross(n0);
    MESSAGE("friction row " << k << ": J_t v = " << J.row(k).dot(v) << " m/s, slip of the touching points "
                            << slip.dot(t));
    CHECK(J.row(k).dot(v) == doctest::Approx(slip.dot(t)).epsilon(1e-7));
  }
}

TEST_CASE("log squeezed between two jaws: held when mu >= m g / (2 F), otherwise it slides with g - 2 mu F / m") {
  // Log: 500 kg, radius 0.2 m, axis along z. Two jaws on prismatic joints along x, each pushed
  // onto the log by F = 5 kN (a constant joint force), each touching it at two places
  // (z = ±0.6 m, at the height of the axis, normals horizontal). Held by friction alone: the
  // limit is m g = 2 μ F, μ* = m g / (2 F) = 0.4905. Two descriptions of the same contact:
  //  - "points on the log": point contacts fixed to the jaws against the log's cylinder;
  //  - "log on plates": spheres of the log's radius on its axis against planes of the jaws
  //    (the geometry stays exact while the log slides down the jaw faces).
  const double m = 500.0, R = 0.2, F = 5000.0, g = 9.81, mu_star = m * g / (2 * F), k = 1e8;
  auto run = [&](bool plates, double mu, double T, double h) {
    const double c = F / (2 * k);  // static compression of each contact
    json contacts = json::array();
    for (int side : {-1, 1})
      for (double z : {-0.6, 0.6}) {
        const std::string jaw = side < 0 ? "jaw_left" : "jaw_right";
        json ct = {{"friction", mu}, {"stiffness", k}, {"friction_stiffness", 1e12}};
        if (plates) {
          ct["body"] = "log", ct["point"] = {0.0, 0.0, z}, ct["radius"] = R;
          ct["surface"] = {
              {"body", jaw}, {"shape", "plane"}, {"point", {side * (R - c), 0.0, z}}, {"normal", {-side, 0, 0}}};
        } else {
          ct["body"] = jaw, ct["point"] = {side * (R - c), 0.0, z};
          ct["surface"] = {
              {"body", "log"}, {"shape", "cylinder"}, {"point", {0, 0, 0}}, {"axis", {0, 0, 1}}, {"radius", R}};
        }
        contacts.push_back(ct);
      }
    const double x0 = R - c + 0.05;  // jaw centres of mass 5 cm behind their faces
    json d = {{"gravity", {0, -g, 0}},
              {"bodies",
               {{{"name", "log"}, {"mass", m}, {"inertia", {900, 900, 0.5 * m * R * R}}, {"position", {0, 0, 0}}},
                {{"name", "jaw_left"}, {"mass", 20.0}, {"inertia", {1, 1, 1}}, {"position", {-x0, 0, 0}}},
                {{"name", "jaw_right"}, {"mass", 20.0}, {"inertia", {1, 1, 1}}, {"position", {x0, 0, 0}}}}},
              {"joints",
               {{{"name", "left_guide"},
                 {"type", "prismatic"},
                 {"bodies", {"ground", "jaw_left"}},
                 {"point", {-x0, 0, 0}},
                 {"axis", {1, 0, 0}}},
                {{"name", "right_guide"},
                 {"type", "prismatic"},
                 {"bodies", {"ground", "jaw_right"}},
                 {"point", {x0, 0, 0}},
                 {"axis", {-1, 0, 0}}}}},
              {"forces",
               {{{"type", "joint_effort"}, {"joint", "left_guide"}, {"table", {{"t", {0.0}}, {"values", {F}}}}},
                {{"type", "joint_effort"}, {"joint", "right_guide"}, {"table", {{"t", {0.0}}, {"values", {F}}}}}}},
              {"contacts", contacts},
              {"points", {{{"name", "centre"}, {"body", "log"}, {"point", {0, 0, 0}}}}}};
    NoInputs in;
    stride_test::MultibodyRun r("mechanism", {{"description", d}}, "mlcp", {{"solver", "bpp"}, {"initial_step", h}},
                                in);
    const int steps = int(std::lround(T / h));
    for (int i = 0; i < steps; ++i) r.step(h);
    CHECK(r.stats()["failed_solves"] == 0);
    return std::pair{r.out("centre", 1), r.out("centre", 0)};
  };
  const double h = 1e-3;
  for (bool plates : {false, true})
    for (double f : {1.05, 2.0}) {
      const auto [y, x] = run(plates, f * mu_star, 0.5, h);
      MESSAGE(std::string(plates ? "log on plates" : "points on the log")
              << ", mu = " << f << " mu* = " << f * mu_star << ": log centre after 0.5 s at y = " << y
              << " m, x = " << x << " m");
      CHECK(std::abs(y) < 1e-6);  // held: the creep of the friction rows F_t / (k_t h) is 1.2e-6 m/s
      CHECK(std::abs(x) < 1e-9);
    }
  const double T = 0.3;
  for (double f : {0.5, 0.9}) {
    const double mu = f * mu_star, a = g - 2 * mu * F / m,
                 y_hand = -0.5 * a * T * (T + h);  // semi-implicit Euler: T (T + h)
    const auto [y, x] = run(true, mu, T, h);
    MESSAGE("log on plates, mu = " << f << " mu* = " << mu << ": log centre after " << T << " s at y = " << y
                                   << " m, by hand -a T (T + h) / 2 = " << y_hand << " m");
    CHECK(y == doctest::Approx(y_hand).epsilon(1e-3));
    CHECK(std::abs(x) < 1e-9);
  }
}

TEST_CASE("contact surfaces given wrongly: the error names the pointer, what was expected and what was found") {
  const json base = json::parse(R"({
    "bodies": [{"name": "ball", "mass": 1.0, "inertia": [1, 1, 1], "position": [0, 1, 0]},
               {"name": "log", "mass": 500.0, "inertia": [900, 900, 10], "position": [0, 0, 0]}],
    "contacts": [{"body": "ball", "point": [0, 1, 0], "friction": 0.5,
                  "surface": {"body": "log", "shape": "cylinder", "point": [0, 0, 0], "axis": [0, 0, 1], "radius": 0.2}}],
    "points": [{"name": "p", "body": "ball", "point": [0, 1, 0], "frame": "log"}]})");
  struct Case {
    std::function<void(json&)> spoil;
    std::string pointer, text;
  };
  const std::vector<Case> cases = {
      {[](json& d) { d["contacts"][0]["surface"]["body"] = "logg"; }, "/description/contacts/0/surface/body",
       "one of ground, ball, log"},
      {[](json& d) { d["contacts"][0]["surface"]["body"] = "ball"; }, "/description/contacts/0/surface/body",
       "other than the contact's own body"},
      {[](json& d) { d["contacts"][0]["surface"]["shape"] = "cone"; }, "/description/contacts/0/surface/shape",
       "\"plane\", \"cylinder\""},
      {[](json& d) { d["contacts"][0]["surface"].erase("radius"); }, "/description/contacts/0/surface/radius",
       "needs \"radius\""},
      {[](json& d) { d["contacts"][0]["surface"]["radius"] = -1; }, "/description/contacts/0/surface/radius",
       "found -1"},
      {[](json& d) {
         d["contacts"][0]["surface"]["axis"] = {0, 0, 0};
       },
       "/description/contacts/0/surface/axis", "non-zero length"},
      {[](json& d) {
         d["contacts"][0]["surface"]["normal"] = {0, 1, 0};
       },
       "/description/contacts/0/surface/normal", "has no \"normal\""},
      {[](json& d) {
         d["contacts"][0]["normal"] = {0, 1, 0};
       },
       "/description/contacts/0/normal", "from \"surface\""},
      {[](json& d) { d["contacts"][0]["friction_stiffness"] = 0; }, "/description/contacts/0/friction_stiffness",
       "(0, inf]"},
      {[](json& d) { d["points"][0]["frame"] = 3; }, "/description/points/0/frame", "expected a body name"},
  };
  for (const auto& c : cases) {
    json d = base;
    c.spoil(d);
    CAPTURE(d.dump());
    try {
      registry().create_model("mechanism", {{"description", d}});
      FAIL("accepted");
    } catch (const stride::ParameterError& e) {
      CAPTURE(e.what());
      CHECK(e.pointer() == c.pointer);
      CHECK(std::string(e.what()).find(c.text) != std::string::npos);
    }
  }
  // The good one: the output point relative to the log is where the description put it.
  auto model = registry().create_model("mechanism", {{"description", base}});
  CHECK(model->sizes().n == 14);
}

namespace {
// y(t) and ẏ(t) given as functions (the plant of a controller test).
class Signals final : public stride::Inputs {
 public:
  std::function<double(double)> y, y_dot;
  std::span<const double> evaluate(std::size_t port, double t) override {
    v_[0] = port == 0 ? y(t) : y_dot(t);
    return {v_, 1};
  }

 private:
  double v_[1] = {0.0};
};
}  // namespace

TEST_CASE(
    "pd_controller: the sampled law by hand, the rate reference integrated from y(t0), saturation, no feedthrough") {
  // Rate reference r = 0.1 (t >= 0.5 s), y = 0.02 t^2, y_dot = 0.04 t, h = 0.1 s:
  //   x_k = y(0) + h sum_{i<k} r(t_i),  e_k = x_k - y(t_k),  rate error r(t_k) - y_dot(t_k),
  //   u_k = u0 + kff r + kp e_k + kd (r - y_dot), clamped to [-0.3, 0.2], the output from t_{k+1} on.
  const double kp = 2.0, kd = 0.5, kff = 1.5, u0 = 0.01, h = 0.1;
  auto c = registry().create_subsystem("pd_controller", {{"kp", kp},
                                                         {"kd", kd},
                                                         {"kff", kff},
                                                         {"u0", u0},
                                                         {"u_min", -0.3},
                                                         {"u_max", 0.2},
                                                         {"reference_is", "rate"},
                                                         {"reference_times", {0.0, 0.5, 0.5}},
                                                         {"reference_values", {0.0, 0.0, 0.1}},
                                                         {"input_unit", "m"}});
  Signals in;
  in.y = [](double t) { return 0.02 * t * t + 1.0; };
  in.y_dot = [](double t) { return 0.04 * t; };
  c->bind(in);
  c->initialize(0.0);
  std::vector<double> out(2);
  c->outputs(out);
  CHECK(out[0] == doctest::Approx(u0));
  double x = 1.0;  // y(t0)
  bool saturated = false;
  for (int k = 0; k < 40; ++k) {
    const double t = k * h, r = t > 0.5 + 1e-9 ? 0.1 : 0.0;  // the table jumps after its double node
    const double e = x - in.y(t), command = u0 + kff * r + kp * e + kd * (r - in.y_dot(t));
    const double u = std::clamp(command, -0.3, 0.2);
    saturated = saturated || u != command;
    CHECK(c->step(t, h) == doctest::Approx(t + h));
    c->outputs(out);
    CAPTURE(t);
    CHECK(out[0] == doctest::Approx(u).epsilon(1e-12));
    CHECK(out[1] == doctest::Approx(e).epsilon(1e-12));
    x += h * r;
  }
  CHECK(saturated);  // the run reached the limits
  CHECK(c->statistics()["saturated_steps"].get<long>() > 0);
  for (const auto& p : c->ports())
    if (p.direction == stride::Direction::output) CHECK_FALSE(p.feedthrough);
  // Bad limits are refused with the parameter named.
  CHECK_THROWS_WITH_AS(registry().create_subsystem("pd_controller", {{"u_min", 1.0}, {"u_max", -1.0}}),
                       doctest::Contains("u_min"), std::exception);
}

#include "stride_run.hpp"

TEST_CASE(
    "log crane, interface model at h_M = 16 ms for 2.2 s: grasp and lift begin; impulses in their cones, the log held, "
    "energy balance") {
  // The shipped manifest and description, with one output point more: the grapple cylinder's
  // rod head in the barrel's frame, whose y is the stroke the holding force (a joint effort
  // table, not in the model's energy) works along. Recorded at every hydraulics step.
  // Read and written keeping the order of the keys: the host initializes the subsystems in
  // the order the manifest lists them (the RIM after the crane it takes its state from).
  namespace fs = std::filesystem;
  using ojson = nlohmann::ordered_json;
  const fs::path src = fs::path(STRIDE_SOURCE_DIR) / "manifests" / "log_crane";
  ojson m = ojson::parse(std::ifstream(src / "log_crane_im.json"));
  ojson d = ojson::parse(std::ifstream(src / "log_crane.description.json"));
  json table, head;
  for (const auto& f : d["forces"]) {
    if (f.value("name", "") == "grapple_valve") table = json::parse(f["table"].dump());
    if (f.value("name", "") == "grapple_cylinder") head = json::parse(f["points"][1].dump());
  }
  REQUIRE(table.is_object());
  d["points"].push_back(ojson::parse(
      json{{"name", "stroke"}, {"body", "grapple_rod"}, {"point", head}, {"frame", "grapple_barrel"}}.dump()));
  m["record"] = ojson::parse(
      json{{"interval", 0.0002},
           {"variables",
            {"crane.s", "crane.stroke", "crane.log_centre", "crane.log_in_grapple", "cylinder1.valve_power",
             "cylinder1.friction_power", "cylinder2.valve_power", "cylinder2.friction_power"}}}
          .dump());
  const fs::path dir = stride_test::scratch() / "log_crane_energy_input";
  fs::create_directories(dir);
  std::ofstream(dir / "log_crane_im.json") << m.dump(1);
  std::ofstream(dir / "log_crane.description.json") << d.dump(1);
  const auto r = stride_test::run_stride((dir / "log_crane_im.json").string(),
                                         {"/variables/h_M=0.016", "/coupling/end=2.2"}, "log_crane_energy");
  CAPTURE(r.message());
  REQUIRE(r.status() == "completed");
  const json& subs = r.summary["subsystems"];
  const json& form = subs["crane"]["statistics"]["formulation"];
  MESSAGE("contacts: " << form["contact_rows"] << " rows, " << form["active_contact_rows"]
                       << " active at the end; min normal impulse " << form["min_normal_impulse"]
                       << " N s, max |friction| / (mu normal) " << form["max_friction_ratio"] << ", max residual "
                       << form["max_residual"] << " m/s, " << form["bpp_pivots"] << " pivots");
  CHECK(form["failed_solves"] == 0);
  CHECK(form["min_normal_impulse"].get<double>() >= 0.0);
  CHECK(form["max_friction_ratio"].get<double>() <= 1.0 + 1e-9);
  CHECK(form["max_residual"].get<double>() <= 1e-10);
  CHECK(form["active_contact_rows"].get<int>() >= 16);  // the jaws' 8 contacts, sticking: 24 rows

  // The log leaves its bearers and is held: after the grasp (1.2 s) its centre moves in the
  // grapple's frame by less than the friction rows' creep allows.
  const auto& t = r.table["time"];
  const auto& ly = r.table["crane.log_centre.y"];
  double rel = 0.0;
  std::size_t grasped = 0;
  while (t[grasped] < 1.2) ++grasped;
  for (std::size_t i = grasped; i < t.size(); ++i)
    for (const char* c : {"crane.log_in_grapple.x", "crane.log_in_grapple.y", "crane.log_in_grapple.z"})
      rel = std::max(rel, std::abs(r.table[c][i] - r.table[c][grasped]));
  MESSAGE("log lifted by " << (ly.back() - ly.front()) * 1e3
                           << " mm by t = 2.2 s; largest motion in the grapple after the grasp " << rel * 1e3 << " mm");
  CHECK(ly.back() - ly.front() > 0.05);
  CHECK(rel < 1e-4);

  // Hydraulics: each cylinder's energy made or lost inside it equals the valve's power less the
  // friction's, integrated (the pressure equations' own energy identity).
  for (int k : {1, 2}) {
    const std::string c = "cylinder" + std::to_string(k);
    const auto& pv = r.table[c + ".valve_power"];
    const auto& pf = r.table[c + ".friction_power"];
    double in = 0.0, scale = 0.0;
    for (std::size_t i = 1; i < t.size(); ++i) {
      in += 0.5 * (pv[i] + pv[i - 1] - pf[i] - pf[i - 1]) * (t[i] - t[i - 1]);
      scale += std::abs(pv[i]) * (t[i] - t[i - 1]);
    }
    const double internal = subs[c]["energy_balance"]["internal_J"].get<double>();
    MESSAGE(c << ": internal energy " << internal << " J, integral of valve - friction power " << in
              << " J (valve energy " << scale << " J)");
    CHECK(std::abs(internal - in) < 1e-3 * scale);
  }
  // Multibody: energy change = work of the actuators (its bonds) + work of the grapple's holding
  // force − dissipation (dampers, inelastic contacts, friction): never more.
  const auto& x = r.table["crane.stroke.y"];
  double w_table = 0.0;
  const auto tau = [&](double s) {
    const auto& ts = table["t"];
    const auto& vs = table["values"];
    if (s <= ts[0].get<double>()) return vs[0].get<double>();
    for (std::size_t i = 1; i < ts.size(); ++i)
      if (s <= ts[i].get<double>())
        return vs[i - 1].get<double>() + (vs[i].get<double>() - vs[i - 1].get<double>()) *
                                             (s - ts[i - 1].get<double>()) /
                                             (ts[i].get<double>() - ts[i - 1].get<double>());
    return vs.back().get<double>();
  };
  for (std::size_t i = 1; i < t.size(); ++i)
    w_table += tau(t[i - 1]) * -(x[i] - x[i - 1]);  // the effort pushes the rod down, -y of the barrel
  const json& eb = subs["crane"]["energy_balance"];
  const double change = eb["change_J"], bonds = eb["bond_energy_in_J"], dissipated = bonds + w_table - change;
  double cyl_out = 0.0;
  for (int k : {1, 2})
    cyl_out -= subs["cylinder" + std::to_string(k)]["energy_balance"]["bond_energy_in_J"].get<double>();
  MESSAGE("crane: energy change " << change << " J, actuators' work " << bonds << " J (the cylinders gave " << cyl_out
                                  << " J), holding force's work " << w_table << " J: dissipated " << dissipated
                                  << " J");
  CHECK(dissipated >
        -1.0);  // elastic energy of the compliant contacts (F^2 / 2k, about 0.1 J each) is not in the model's energy
  // What the crane received through the held forces against what the cylinders gave through
  // the RIM: the coupling's energy error, first order in h_M.
  const auto exchange_error = [](const json& s) {
    const double in = s["crane"]["energy_balance"]["bond_energy_in_J"];
    double out = 0.0;
    for (const char* c : {"cylinder1", "cylinder2"}) out -= s[c]["energy_balance"]["bond_energy_in_J"].get<double>();
    return std::abs(in - out) / std::abs(in);
  };
  const auto r4 = stride_test::run_stride((dir / "log_crane_im.json").string(),
                                          {"/variables/h_M=0.004", "/coupling/end=2.2"}, "log_crane_energy_4ms");
  REQUIRE(r4.status() == "completed");
  const double e16 = exchange_error(subs), e4 = exchange_error(r4.summary["subsystems"]);
  MESSAGE("energy the crane received against what the cylinders gave: relative difference "
          << e16 << " at h_M = 16 ms, " << e4 << " at 4 ms");
  CHECK(e16 < 0.1);
  CHECK(e4 < 0.5 * e16);
}
