// Reading and checking a mechanism description (description.hpp). All problems are collected;
// the first is thrown as a ParameterError with its pointer, the others are listed in its message.
#include "description.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

namespace stride::mechanism {
namespace {

std::string found(const json& v) {
  std::string s = v.dump();
  if (s.size() > 80) s = s.substr(0, 77) + "...";
  return s;
}

class Checker {
 public:
  void error(const std::string& ptr, const std::string& msg) { problems_.push_back({ptr, msg}); }
  bool ok() const { return problems_.empty(); }
  [[noreturn]] void raise() const {
    std::string msg = problems_.front().second;
    if (problems_.size() > 1) {
      msg += " (and " + std::to_string(problems_.size() - 1) + " more:";
      for (std::size_t k = 1; k < problems_.size() && k < 8; ++k)
        msg += " " + problems_[k].first + ": " + problems_[k].second + ";";
      msg += ")";
    }
    throw ParameterError(problems_.front().first, msg);
  }

  bool object(const json& v, const std::string& ptr, const std::vector<std::string>& allowed,
              const std::vector<std::string>& required) {
    if (!v.is_object()) {
      error(ptr, "expected an object, found " + found(v));
      return false;
    }
    for (auto it = v.begin(); it != v.end(); ++it)
      if (std::find(allowed.begin(), allowed.end(), it.key()) == allowed.end()) {
        std::string all;
        for (const auto& a : allowed) all += (all.empty() ? "" : ", ") + a;
        error(ptr + "/" + it.key(), "unknown key \"" + it.key() + "\"; allowed keys: " + all);
      }
    bool ok = true;
    for (const auto& r : required)
      if (!v.contains(r)) {
        error(ptr + "/" + r, "required key \"" + r + "\" is missing");
        ok = false;
      }
    return ok;
  }

  std::optional<double> number(const json& o, const std::string& ptr, const std::string& key, std::optional<double> def,
                               double lo = -INFINITY, double hi = INFINITY, bool open_lo = false) {
    if (!o.contains(key)) return def;
    const json& v = o[key];
    const bool good = v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() <= hi &&
                      (open_lo ? v.get<double>() > lo : v.get<double>() >= lo);
    if (!good) {
      std::string range = std::isinf(lo) && std::isinf(hi) ? "a finite number"
                          : "a number in " + std::string(open_lo ? "(" : "[") + (std::isinf(lo) ? "-inf" : fmt(lo)) + ", " +
                                (std::isinf(hi) ? "inf" : fmt(hi)) + "]";
      error(ptr + "/" + key, "expected " + range + ", found " + found(v));
      return std::nullopt;
    }
    return v.get<double>();
  }

  std::optional<Vec3> vec3(const json& o, const std::string& ptr, const std::string& key, std::optional<Vec3> def,
                           bool unit = false) {
    if (!o.contains(key)) return def;
    const json& v = o[key];
    if (!v.is_array() || v.size() != 3 || !std::all_of(v.begin(), v.end(), [](const json& x) {
          return x.is_number() && std::isfinite(x.get<double>());
        })) {
      error(ptr + "/" + key, "expected a list of 3 finite numbers, found " + found(v));
      return std::nullopt;
    }
    Vec3 x(v[0].get<double>(), v[1].get<double>(), v[2].get<double>());
    if (unit) {
      if (x.norm() < 1e-12) {
        error(ptr + "/" + key, "expected a direction (a vector of non-zero length), found " + found(v));
        return std::nullopt;
      }
      x.normalize();
    }
    return x;
  }

  std::optional<std::string> string(const json& o, const std::string& ptr, const std::string& key,
                                    const std::vector<std::string>& choices = {}) {
    if (!o.contains(key)) return std::nullopt;
    const json& v = o[key];
    std::string allowed;
    for (const auto& c : choices) allowed += (allowed.empty() ? "\"" : ", \"") + c + "\"";
    if (!allowed.empty()) allowed += "\"";
    if (!v.is_string() || (!choices.empty() && std::find(choices.begin(), choices.end(), v.get<std::string>()) == choices.end())) {
      error(ptr + "/" + key, "expected " + (choices.empty() ? std::string("a string") : "one of " + allowed) + ", found " + found(v));
      return std::nullopt;
    }
    return v.get<std::string>();
  }

  static std::string fmt(double x) {
    std::ostringstream o;
    o << x;
    return o.str();
  }

 private:
  std::vector<std::pair<std::string, std::string>> problems_;
};

// Two unit vectors perpendicular to `a` and to each other.
void perpendiculars(const Vec3& a, Vec3& b, Vec3& c) {
  const Vec3 t = std::abs(a.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  b = a.cross(t).normalized();
  c = a.cross(b);
}

// One reader per section of the description, in the order the sections depend on each other:
// bodies (everything names them), joints (couplers and joint efforts name them), then the rest.
class DescriptionReader {
 public:
  DescriptionReader(const json& d, const std::string& base) : d_(d), base_(base) {}

  Description read() {
    if (!chk_.object(d_, base_, {"gravity", "bodies", "joints", "couplers", "forces", "actuators", "coupling", "points", "contacts", "static_equilibrium", "doc"}, {"bodies"}))
      chk_.raise();
    read_settings();
    read_bodies();
    if (!chk_.ok()) chk_.raise();
    read_joints();
    read_couplers();
    read_forces();
    read_actuators();
    read_contacts();
    read_points();
    if (!chk_.ok()) chk_.raise();
    return std::move(out_);
  }

 private:
  const json& d_;
  const std::string base_;
  Checker chk_;
  Description out_;
  std::map<std::string, int> body_index_{{"ground", kGround}};
  std::map<std::string, int> joint_index_;

  // A list section: absent is empty, anything else but a list is an error.
  json list(const std::string& key, const std::string& what) {
    const json v = d_.value(key, json::array());
    if (!v.is_array()) chk_.error(base_ + "/" + key, "expected a list of " + what + ", found " + found(v));
    return v.is_array() ? v : json::array();
  }

  void read_settings() {
    out_.gravity = chk_.vec3(d_, base_, "gravity", Vec3::Zero()).value_or(Vec3::Zero());
    out_.pressure = chk_.string(d_, base_, "coupling", {"force", "pressure"}).value_or("force") == "pressure";
    if (d_.contains("static_equilibrium")) {
      if (!d_["static_equilibrium"].is_boolean())
        chk_.error(base_ + "/static_equilibrium", "expected true or false, found " + found(d_["static_equilibrium"]));
      else
        out_.static_equilibrium = d_["static_equilibrium"].get<bool>();
    }
  }

  void read_bodies() {
    const json& bodies = d_["bodies"];
    if (!bodies.is_array() || bodies.empty()) {
      chk_.error(base_ + "/bodies", "expected a non-empty list of bodies, found " + found(bodies));
      chk_.raise();
    }
    for (std::size_t k = 0; k < bodies.size(); ++k) read_body(bodies[k], base_ + "/bodies/" + std::to_string(k));
  }

  void read_body(const json& b, const std::string& p) {
    if (!chk_.object(b, p, {"name", "mass", "inertia", "position", "orientation", "velocity", "angular_velocity", "doc"},
                     {"name", "mass", "inertia", "position"}))
      return;
    Body body;
    body.name = chk_.string(b, p, "name").value_or("");
    if (body.name.empty() || body.name == "ground")
      chk_.error(p + "/name", "expected a body name other than \"\" and \"ground\", found " + found(b["name"]));
    else if (!body_index_.emplace(body.name, int(out_.bodies.size())).second)
      chk_.error(p + "/name", "body name \"" + body.name + "\" is used twice");
    body.mass = chk_.number(b, p, "mass", 0.0, 0.0, 1e12, true).value_or(1.0);
    read_inertia(b["inertia"], p + "/inertia", body);
    body.r0 = chk_.vec3(b, p, "position", Vec3::Zero()).value_or(Vec3::Zero());
    body.v0 = chk_.vec3(b, p, "velocity", Vec3::Zero()).value_or(Vec3::Zero());
    body.w0 = chk_.vec3(b, p, "angular_velocity", Vec3::Zero()).value_or(Vec3::Zero());
    if (b.contains("orientation")) read_orientation(b["orientation"], p + "/orientation", body);
    out_.bodies.push_back(body);
  }

  // Inertia: [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] (tensor components, kg m²).
  void read_inertia(const json& I, const std::string& p, Body& body) {
    if (!I.is_array() || (I.size() != 3 && I.size() != 6) ||
        !std::all_of(I.begin(), I.end(), [](const json& x) { return x.is_number() && std::abs(x.get<double>()) <= 1e12; })) {
      chk_.error(p, "expected [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] in kg*m^2, each of magnitude at most 1e12, found " + found(I));
      return;
    }
    Mat3 J = Mat3::Zero();
    for (int i = 0; i < 3; ++i) J(i, i) = I[std::size_t(i)].get<double>();
    if (I.size() == 6) {
      J(0, 1) = J(1, 0) = I[3].get<double>();
      J(0, 2) = J(2, 0) = I[4].get<double>();
      J(1, 2) = J(2, 1) = I[5].get<double>();
    }
    const Vec3 ev = Eigen::SelfAdjointEigenSolver<Mat3>(J).eigenvalues();
    // Principal moments of a real body are positive and satisfy the triangle inequality.
    if (ev.minCoeff() <= 0.0)
      chk_.error(p, "expected a positive-definite inertia tensor, found principal moments " + Checker::fmt(ev[0]) +
                        ", " + Checker::fmt(ev[1]) + ", " + Checker::fmt(ev[2]) + " kg*m^2");
    else if (ev[0] + ev[1] < ev[2] * (1.0 - 1e-9))
      chk_.error(p, "principal moments " + Checker::fmt(ev[0]) + ", " + Checker::fmt(ev[1]) + ", " + Checker::fmt(ev[2]) +
                        " kg*m^2 violate the triangle inequality (no rigid body has them)");
    body.inertia = J;
  }

  // Orientation: {"axis": [..], "angle": rad} or Euler parameters [e0, e1, e2, e3].
  void read_orientation(const json& o, const std::string& po, Body& body) {
    if (o.is_array() && o.size() == 4 && std::all_of(o.begin(), o.end(), [](const json& x) { return x.is_number(); })) {
      Vec4 e(o[0].get<double>(), o[1].get<double>(), o[2].get<double>(), o[3].get<double>());
      if (!(e.norm() > 1e-12) || !std::isfinite(e.norm())) chk_.error(po, "expected Euler parameters of non-zero length, found " + found(o));
      else body.p0 = e.normalized();
    } else if (o.is_object()) {
      if (chk_.object(o, po, {"axis", "angle"}, {"axis", "angle"})) {
        auto axis = chk_.vec3(o, po, "axis", std::nullopt, true);
        auto angle = chk_.number(o, po, "angle", std::nullopt);
        if (axis && angle) body.p0 = axis_angle(*axis, *angle);
      }
    } else {
      chk_.error(po, "expected {\"axis\": [x, y, z], \"angle\": radians} or Euler parameters [e0, e1, e2, e3], found " + found(o));
    }
  }

  std::optional<int> body_of(const json& v, const std::string& ptr) {
    if (v.is_string()) {
      auto it = body_index_.find(v.get<std::string>());
      if (it != body_index_.end()) return it->second;
    }
    std::string all = "ground";
    for (const auto& b : out_.bodies) all += ", " + b.name;
    chk_.error(ptr, "expected a body name (one of " + all + "), found " + found(v));
    return std::nullopt;
  }

  std::optional<std::pair<int, int>> two_bodies(const json& o, const std::string& p) {
    const json& b = o["bodies"];
    if (!b.is_array() || b.size() != 2) {
      chk_.error(p + "/bodies", "expected two body names [i, j], found " + found(b));
      return std::nullopt;
    }
    auto i = body_of(b[0], p + "/bodies/0"), j = body_of(b[1], p + "/bodies/1");
    if (!i || !j) return std::nullopt;
    if (*i == *j) {
      chk_.error(p + "/bodies", "expected two different bodies, found " + found(b));
      return std::nullopt;
    }
    return std::make_pair(*i, *j);
  }

  // Global point/direction -> probe on body b in the description's configuration.
  Probe point_on(int b, const Vec3& x) const {
    Probe pr{b, x, true};
    if (b != kGround) pr.s = rotation(out_.bodies[std::size_t(b)].p0).transpose() * (x - out_.bodies[std::size_t(b)].r0);
    return pr;
  }
  Probe direction_on(int b, const Vec3& a) const {
    Probe pr{b, a, false};
    if (b != kGround) pr.s = rotation(out_.bodies[std::size_t(b)].p0).transpose() * a;
    return pr;
  }
  static Difference diff(Probe a, Probe b) { return Difference{a, b, true}; }
  static Difference single(Probe a) { return Difference{a, Probe{}, false}; }

  std::optional<PointPair> pair_of(const json& o, const std::string& p) {
    auto bs = two_bodies(o, p);
    const json& pts = o.contains("points") ? o["points"] : json();
    if (!pts.is_array() || pts.size() != 2) {
      chk_.error(p + "/points", "expected two points [[x, y, z], [x, y, z]] (global, on body i and body j), found " + found(pts));
      return std::nullopt;
    }
    json wrap = {{"0", pts[0]}, {"1", pts[1]}};
    auto x0 = chk_.vec3(wrap, p + "/points", "0", std::nullopt), x1 = chk_.vec3(wrap, p + "/points", "1", std::nullopt);
    if (!bs || !x0 || !x1) return std::nullopt;
    if ((*x1 - *x0).norm() < 1e-9) {
      chk_.error(p + "/points", "the two points coincide (the element's direction is undefined), found " + found(pts));
      return std::nullopt;
    }
    return PointPair{point_on(bs->first, *x0), point_on(bs->second, *x1)};
  }

  void read_joints() {
    if (d_.contains("joints") && !d_["joints"].is_array()) chk_.error(base_ + "/joints", "expected a list of joints, found " + found(d_["joints"]));
    const json joints = d_.contains("joints") && d_["joints"].is_array() ? d_["joints"] : json::array();
    for (std::size_t k = 0; k < joints.size(); ++k) read_joint(joints[k], base_ + "/joints/" + std::to_string(k));
  }

  void read_joint(const json& o, const std::string& p) {
    static const std::vector<std::string> types{"revolute", "prismatic", "spherical", "universal", "cylindrical", "fixed", "point_on_plane", "distance"};
    if (!chk_.object(o, p, {"name", "type", "bodies", "point", "point_j", "axis", "axis_j", "doc"}, {"name", "type", "bodies", "point"}))
      return;
    Joint j;
    j.pointer = p;
    j.name = chk_.string(o, p, "name").value_or("");
    if (!joint_index_.emplace(j.name, int(out_.joints.size())).second) chk_.error(p + "/name", "joint name \"" + j.name + "\" is used twice");
    auto type = chk_.string(o, p, "type", types);
    auto bs = two_bodies(o, p);
    auto P = chk_.vec3(o, p, "point", std::nullopt);
    auto Pj = chk_.vec3(o, p, "point_j", P);
    const bool needs_axis = type && *type != "spherical" && *type != "distance";
    if (needs_axis && !o.contains("axis")) chk_.error(p + "/axis", "a " + *type + " joint needs an axis");
    auto a = chk_.vec3(o, p, "axis", Vec3::UnitZ(), true);
    auto aj = chk_.vec3(o, p, "axis_j", std::nullopt, true);
    if (type && *type == "universal" && !aj) chk_.error(p + "/axis_j", "a universal joint needs axis_j, the cross axis on body j");
    if (!type || !bs || !P || !Pj || !a) return;
    j.type = JointType(std::find(types.begin(), types.end(), *type) - types.begin());
    j.body_i = bs->first;
    j.body_j = bs->second;
    joint_rows(j, o, p, *P, *Pj, *a, aj);
    out_.joints.push_back(std::move(j));
  }

  // The constraint rows of a joint, and its coordinate (angle, displacement).
  void joint_rows(Joint& j, const json& o, const std::string& p, const Vec3& P, const Vec3& Pj, const Vec3& a,
                  const std::optional<Vec3>& aj) {
    Vec3 b, c;
    perpendiculars(a, b, c);
    const Probe Pi = point_on(j.body_i, P), Pjp = point_on(j.body_j, Pj);
    const Probe ai = direction_on(j.body_i, a), bi = direction_on(j.body_i, b);
    const Probe bj = direction_on(j.body_j, b), cj = direction_on(j.body_j, c), aj_ = direction_on(j.body_j, a);
    const Difference d_ij = diff(Pi, Pjp);
    auto spherical = [&] {
      for (int e = 0; e < 3; ++e) j.rows.push_back({d_ij, single(Probe{kGround, Vec3::Unit(e), false}), 0.0});
    };
    auto parallel = [&] {  // axis of i stays perpendicular to b_j, c_j
      j.rows.push_back({single(ai), single(bj), 0.0});
      j.rows.push_back({single(ai), single(cj), 0.0});
    };
    auto no_twist = [&] { j.rows.push_back({single(bi), single(cj), 0.0}); };
    auto on_line = [&] {  // P_i − P_j stays along the axis
      j.rows.push_back({d_ij, single(bj), 0.0});
      j.rows.push_back({d_ij, single(cj), 0.0});
    };
    switch (j.type) {
      case JointType::revolute: spherical(), parallel(); break;
      case JointType::spherical: spherical(); break;
      case JointType::universal: {
        const Vec3 u = *aj;
        if (std::abs(u.dot(a)) > 1e-9) chk_.error(p + "/axis_j", "expected an axis perpendicular to axis, found " + found(o["axis_j"]));
        spherical();
        j.rows.push_back({single(ai), single(direction_on(j.body_j, u)), 0.0});
        break;
      }
      case JointType::cylindrical: parallel(), on_line(); break;
      case JointType::prismatic: parallel(), on_line(), no_twist(); break;
      case JointType::fixed: spherical(), parallel(), no_twist(); break;
      case JointType::point_on_plane: j.rows.push_back({d_ij, single(aj_), 0.0}); break;
      case JointType::distance: {
        const double L = (Pj - P).norm();
        if (L < 1e-9) chk_.error(p + "/point_j", "a distance joint needs point_j away from point, found " + found(o.value("point_j", json())));
        j.rows.push_back({d_ij, d_ij, L * L});
        break;
      }
    }
    j.axis_i = ai;
    j.ref_i = bi;
    j.ref_j = bj;
    j.has_angle = j.type == JointType::revolute || j.type == JointType::cylindrical;
    j.has_displacement = j.type == JointType::prismatic || j.type == JointType::cylindrical;
    j.displacement = {diff(Pjp, Pi), single(ai), (Pj - P).dot(a)};
  }

  std::optional<int> joint_of(const json& v, const std::string& ptr) {
    if (v.is_string()) {
      auto it = joint_index_.find(v.get<std::string>());
      if (it != joint_index_.end()) return it->second;
    }
    std::string all;
    for (const auto& [n, i] : joint_index_) all += (all.empty() ? "" : ", ") + n;
    chk_.error(ptr, "expected a joint name (one of " + all + "), found " + found(v));
    return std::nullopt;
  }
  void coordinate_joint(int j, const std::string& ptr) {
    const Joint& jt = out_.joints[std::size_t(j)];
    if (jt.has_angle == jt.has_displacement)
      chk_.error(ptr, "joint \"" + jt.name + "\" has no single joint coordinate (expected a revolute or prismatic joint)");
  }

  void read_couplers() {
    const json couplers = list("couplers", "couplers");
    for (std::size_t k = 0; k < couplers.size(); ++k) read_coupler(couplers[k], base_ + "/couplers/" + std::to_string(k), k);
  }

  void read_coupler(const json& o, const std::string& p, std::size_t k) {
    if (!chk_.object(o, p, {"name", "joints", "coefficients", "doc"}, {"joints", "coefficients"})) return;
    Coupler c;
    c.pointer = p;
    c.name = o.value("name", "coupler" + std::to_string(k));
    const json& js = o["joints"];
    const json& cs = o["coefficients"];
    if (!js.is_array() || js.empty()) {
      chk_.error(p + "/joints", "expected a list of joint names, found " + found(js));
      return;
    }
    if (!cs.is_array() || cs.size() != js.size() ||
        !std::all_of(cs.begin(), cs.end(), [](const json& x) { return x.is_number() && std::isfinite(x.get<double>()); })) {
      chk_.error(p + "/coefficients", "expected " + std::to_string(js.size()) + " finite numbers (one per joint), found " + found(cs));
      return;
    }
    for (std::size_t i = 0; i < js.size(); ++i)
      if (auto j = joint_of(js[i], p + "/joints/" + std::to_string(i))) {
        coordinate_joint(*j, p + "/joints/" + std::to_string(i));
        c.joints.push_back(*j);
        c.coefficients.push_back(cs[i].get<double>());
      }
    out_.couplers.push_back(std::move(c));
  }

  void read_forces() {
    const json forces = list("forces", "force elements");
    for (std::size_t k = 0; k < forces.size(); ++k) {
      const std::string p = base_ + "/forces/" + std::to_string(k);
      const json& o = forces[k];
      if (!o.is_object()) {
        chk_.error(p, "expected an object, found " + found(o));
        continue;
      }
      auto type = chk_.string(o, p, "type", {"spring_damper", "joint_spring_damper", "joint_effort", "plugin"});
      if (!type) {
        if (!o.contains("type")) chk_.error(p + "/type", "required key \"type\" is missing");
        continue;
      }
      if (*type == "spring_damper") read_spring_damper(o, p);
      else if (*type == "joint_spring_damper" || *type == "joint_effort") read_joint_effort(o, p, *type == "joint_spring_damper");
      else read_force_plugin(o, p, k);
    }
  }

  void read_spring_damper(const json& o, const std::string& p) {
    if (!chk_.object(o, p, {"type", "name", "bodies", "points", "stiffness", "damping", "length", "preload", "doc"}, {"bodies", "points"}))
      return;
    auto at = pair_of(o, p);
    SpringDamper s;
    s.stiffness = chk_.number(o, p, "stiffness", 0.0, 0.0).value_or(0.0);
    s.damping = chk_.number(o, p, "damping", 0.0, 0.0).value_or(0.0);
    s.preload = chk_.number(o, p, "preload", 0.0).value_or(0.0);
    if (!at) return;
    s.at = *at;
    s.length = chk_.number(o, p, "length", std::nullopt, 0.0).value_or(-1.0);
    if (s.length < 0) {  // free length: the distance in the description's configuration
      const auto& pts = o["points"];
      s.length = (Vec3(pts[1][0].get<double>(), pts[1][1].get<double>(), pts[1][2].get<double>()) -
                  Vec3(pts[0][0].get<double>(), pts[0][1].get<double>(), pts[0][2].get<double>()))
                     .norm();
    }
    out_.springs.push_back(s);
  }

  void read_joint_effort(const json& o, const std::string& p, bool sd) {
    if (!chk_.object(o, p,
                     sd ? std::vector<std::string>{"type", "name", "joint", "stiffness", "damping", "position", "preload", "doc"}
                        : std::vector<std::string>{"type", "name", "joint", "table", "input", "doc"},
                     {"joint"}))
      return;
    auto j = joint_of(o["joint"], p + "/joint");
    if (!j) return;
    coordinate_joint(*j, p + "/joint");
    JointEffort e;
    e.joint = *j;
    if (sd) {
      e.law = JointEffort::Law::spring_damper;
      e.stiffness = chk_.number(o, p, "stiffness", 0.0, 0.0).value_or(0.0);
      e.damping = chk_.number(o, p, "damping", 0.0, 0.0).value_or(0.0);
      e.position = chk_.number(o, p, "position", 0.0).value_or(0.0);
      e.preload = chk_.number(o, p, "preload", 0.0).value_or(0.0);
    } else if (o.contains("table") == o.contains("input")) {
      chk_.error(p, "a joint_effort needs exactly one of \"table\" ({\"t\": [...], \"values\": [...]}) and \"input\" (an element name of the input port joint_efforts)");
      return;
    } else if (o.contains("table")) {
      e.law = JointEffort::Law::table;
      if (!read_effort_table(o["table"], p + "/table", e)) return;
    } else {
      e.law = JointEffort::Law::input;
      auto name = chk_.string(o, p, "input");
      if (!name) return;
      e.input = out_.effort_inputs.size();
      out_.effort_inputs.push_back(*name);
    }
    out_.efforts.push_back(std::move(e));
  }

  bool read_effort_table(const json& t, const std::string& pt, JointEffort& e) {
    if (!chk_.object(t, pt, {"t", "values"}, {"t", "values"})) return false;
    const bool nums = t["t"].is_array() && t["values"].is_array() && t["t"].size() == t["values"].size() && !t["t"].empty();
    if (!nums) {
      chk_.error(pt, "expected lists t and values of the same non-zero length, found " + found(t));
      return false;
    }
    for (std::size_t i = 0; i < t["t"].size(); ++i) {
      const json &ti = t["t"][i], &vi = t["values"][i];
      if (!ti.is_number() || !std::isfinite(ti.get<double>()) || (i > 0 && ti.get<double>() < e.times.back())) {
        chk_.error(pt + "/t/" + std::to_string(i), "expected a finite time not before the previous one, found " + found(ti));
        break;
      }
      if (!vi.is_number() || !std::isfinite(vi.get<double>())) {
        chk_.error(pt + "/values/" + std::to_string(i), "expected a finite number, found " + found(vi));
        break;
      }
      e.times.push_back(ti.get<double>());
      e.values.push_back(vi.get<double>());
    }
    return true;
  }

  void read_force_plugin(const json& o, const std::string& p, std::size_t k) {
    if (!chk_.object(o, p, {"type", "name", "plugin", "body", "point", "parameters", "doc"}, {"plugin", "body", "point"})) return;
    ExternalForce f;
    f.pointer = p;
    f.plugin = chk_.string(o, p, "plugin").value_or("");
    f.name = o.value("name", f.plugin + std::to_string(k));
    auto b = body_of(o["body"], p + "/body");
    auto x = chk_.vec3(o, p, "point", std::nullopt);
    f.parameters = o.value("parameters", json::object());
    if (!f.parameters.is_object()) chk_.error(p + "/parameters", "expected an object, found " + found(f.parameters));
    if (!b || !x) return;
    if (*b == kGround) {
      chk_.error(p + "/body", "a force element acts on a moving body, found \"ground\"");
      return;
    }
    f.body = *b;
    f.s = point_on(*b, *x).s;
    out_.external.push_back(std::move(f));
  }

  void read_actuators() {
    const json acts = list("actuators", "actuators");
    for (std::size_t k = 0; k < acts.size(); ++k) {
      const std::string p = base_ + "/actuators/" + std::to_string(k);
      const json& o = acts[k];
      if (!chk_.object(o, p, {"name", "bodies", "points", "piston_area", "friction", "doc"}, {"bodies", "points"})) continue;
      Actuator a;
      a.name = o.value("name", "a" + std::to_string(k + 1));
      a.area = chk_.number(o, p, "piston_area", 65e-4, 0.0, INFINITY, true).value_or(1.0);
      a.friction = chk_.number(o, p, "friction", 1e5, 0.0).value_or(0.0);
      if (auto at = pair_of(o, p)) {
        a.at = *at;
        out_.actuators.push_back(a);
      }
    }
  }

  void read_contacts() {
    const json cts = list("contacts", "contacts");
    for (std::size_t k = 0; k < cts.size(); ++k) read_contact(cts[k], base_ + "/contacts/" + std::to_string(k), k);
  }

  void read_contact(const json& o, const std::string& p, std::size_t k) {
    if (!chk_.object(o, p,
                     {"name", "body", "point", "radius", "normal", "plane_point", "friction", "stiffness", "relaxation",
                      "surface", "friction_stiffness", "doc"},
                     {"body", "point"}))
      return;
    Contact c;
    c.name = o.value("name", "contact" + std::to_string(k));
    auto b = body_of(o["body"], p + "/body");
    auto x = chk_.vec3(o, p, "point", std::nullopt);
    auto nrm = chk_.vec3(o, p, "normal", Vec3::UnitY(), true);
    c.plane_point = chk_.vec3(o, p, "plane_point", Vec3::Zero()).value_or(Vec3::Zero());
    c.radius = chk_.number(o, p, "radius", 0.0, 0.0).value_or(0.0);
    c.friction = chk_.number(o, p, "friction", 0.0, 0.0).value_or(0.0);
    c.stiffness = chk_.number(o, p, "stiffness", 1e9, 0.0, INFINITY, true).value_or(1e9);
    c.relaxation = chk_.number(o, p, "relaxation", 0.0, 0.0).value_or(0.0);
    c.friction_stiffness =
        chk_.number(o, p, "friction_stiffness", c.stiffness, 0.0, INFINITY, true).value_or(c.stiffness);
    if (!b || !x || !nrm) return;
    if (*b == kGround) {
      chk_.error(p + "/body", "a contact needs a moving body, found \"ground\"");
      return;
    }
    c.centre = point_on(*b, *x);
    c.normal = *nrm;
    perpendiculars(c.normal, c.t1, c.t2);
    if (o.contains("surface") && !read_contact_surface(o, p, *b, c)) return;
    out_.contacts.push_back(c);
  }

  // "surface": {"body": B, "shape": "plane", "point": [..], "normal": [..]} or
  // {"body": B, "shape": "cylinder", "point": [..] (on the axis), "axis": [..], "radius": R}, in
  // place of the ground plane (normal, plane_point); B may be "ground".
  bool read_contact_surface(const json& o, const std::string& p, int body, Contact& c) {
    const std::string ps = p + "/surface";
    for (const char* k : {"normal", "plane_point"})
      if (o.contains(k))
        chk_.error(p + "/" + k,
                   std::string("a contact with a surface takes its plane or cylinder from \"surface\", found \"") + k +
                       "\" as well");
    const json& sf = o["surface"];
    if (!chk_.object(sf, ps, {"body", "shape", "point", "normal", "axis", "radius", "doc"}, {"body", "shape", "point"}))
      return false;
    auto sb = body_of(sf["body"], ps + "/body");
    auto shape = chk_.string(sf, ps, "shape", {"plane", "cylinder"});
    auto X = chk_.vec3(sf, ps, "point", std::nullopt);
    if (!sb || !shape || !X) return false;
    if (*sb == body) {
      chk_.error(ps + "/body", "expected a body other than the contact's own body \"" +
                                   out_.bodies[std::size_t(body)].name + "\", found " + found(sf["body"]));
      return false;
    }
    const bool cyl = *shape == "cylinder";
    const char* dir = cyl ? "axis" : "normal";
    for (const char* k : {"normal", "axis", "radius"})
      if (sf.contains(k) && (std::string(k) == "radius" ? !cyl : std::string(k) != dir))
        chk_.error(ps + "/" + k, std::string("a ") + *shape + " surface has no \"" + k + "\" (" +
                                     (cyl ? "point, axis, radius" : "point, normal") + ")");
    if (!sf.contains(dir)) chk_.error(ps + "/" + dir, std::string("a ") + *shape + " surface needs \"" + dir + "\"");
    if (cyl && !sf.contains("radius")) chk_.error(ps + "/radius", "a cylinder surface needs \"radius\" (m)");
    auto d = chk_.vec3(sf, ps, dir, std::nullopt, true);
    auto R = cyl ? chk_.number(sf, ps, "radius", std::nullopt, 0.0) : std::optional<double>(0.0);
    if (!d || !R) return false;
    c.surface.shape = cyl ? ContactSurface::Shape::cylinder : ContactSurface::Shape::plane;
    c.surface.body = *sb;
    c.surface.point = point_on(*sb, *X);
    c.surface.direction = direction_on(*sb, *d);
    c.surface.radius = *R;
    Vec3 t1, t2;
    perpendiculars(*d, t1, t2);
    c.surface.t1 = direction_on(*sb, t1);
    c.surface.t2 = direction_on(*sb, t2);
    return true;
  }

  void read_points() {
    const json pts = list("points", "output points");
    std::vector<std::string> port_names{"s", "s_dot", "s_ddot", "M_eff", "f_eff", "energy", "poses", "f_h", "p1", "p2", "flow1", "flow2", "joint_efforts"};
    for (std::size_t k = 0; k < pts.size(); ++k) {
      const std::string p = base_ + "/points/" + std::to_string(k);
      const json& o = pts[k];
      if (!chk_.object(o, p, {"name", "body", "point", "frame", "doc"}, {"name", "body", "point"})) continue;
      auto name = chk_.string(o, p, "name");
      auto b = body_of(o["body"], p + "/body");
      auto x = chk_.vec3(o, p, "point", std::nullopt);
      auto frame = o.contains("frame") ? body_of(o["frame"], p + "/frame") : std::optional<int>(kGround);
      if (!name || !b || !x || !frame) continue;
      if (std::find(port_names.begin(), port_names.end(), *name) != port_names.end() ||
          std::find(port_names.begin(), port_names.end(), *name + "_dot") != port_names.end())
        chk_.error(p + "/name", "output point name \"" + *name + "\" clashes with a port name (" + *name + " or " + *name + "_dot)");
      port_names.push_back(*name);
      port_names.push_back(*name + "_dot");
      out_.points.push_back({*name, point_on(*b, *x), *frame});
    }
  }
};

}  // namespace

Description read_description(const json& d, const std::string& base) { return DescriptionReader(d, base).read(); }

}  // namespace stride::mechanism
