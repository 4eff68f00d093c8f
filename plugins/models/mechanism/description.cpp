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

}  // namespace

Description read_description(const json& d, const std::string& base) {
  Checker chk;
  Description out;
  if (!chk.object(d, base, {"gravity", "bodies", "joints", "couplers", "forces", "actuators", "coupling", "points", "contacts", "static_equilibrium", "doc"}, {"bodies"}))
    chk.raise();
  out.gravity = chk.vec3(d, base, "gravity", Vec3::Zero()).value_or(Vec3::Zero());
  out.pressure = chk.string(d, base, "coupling", {"force", "pressure"}).value_or("force") == "pressure";
  if (d.contains("static_equilibrium")) {
    if (!d["static_equilibrium"].is_boolean())
      chk.error(base + "/static_equilibrium", "expected true or false, found " + found(d["static_equilibrium"]));
    else
      out.static_equilibrium = d["static_equilibrium"].get<bool>();
  }

  std::map<std::string, int> body_index{{"ground", kGround}};
  // Bodies.
  const json& bodies = d["bodies"];
  if (!bodies.is_array() || bodies.empty()) {
    chk.error(base + "/bodies", "expected a non-empty list of bodies, found " + found(bodies));
    chk.raise();
  }
  for (std::size_t k = 0; k < bodies.size(); ++k) {
    const std::string p = base + "/bodies/" + std::to_string(k);
    const json& b = bodies[k];
    if (!chk.object(b, p, {"name", "mass", "inertia", "position", "orientation", "velocity", "angular_velocity", "doc"},
                    {"name", "mass", "inertia", "position"}))
      continue;
    Body body;
    body.name = chk.string(b, p, "name").value_or("");
    if (body.name.empty() || body.name == "ground")
      chk.error(p + "/name", "expected a body name other than \"\" and \"ground\", found " + found(b["name"]));
    else if (!body_index.emplace(body.name, int(out.bodies.size())).second)
      chk.error(p + "/name", "body name \"" + body.name + "\" is used twice");
    body.mass = chk.number(b, p, "mass", 0.0, 0.0, 1e12, true).value_or(1.0);
    // Inertia: [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] (tensor components, kg m²).
    const json& I = b["inertia"];
    if (!I.is_array() || (I.size() != 3 && I.size() != 6) ||
        !std::all_of(I.begin(), I.end(), [](const json& x) { return x.is_number() && std::abs(x.get<double>()) <= 1e12; })) {
      chk.error(p + "/inertia", "expected [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] in kg*m^2, each of magnitude at most 1e12, found " + found(I));
    } else {
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
        chk.error(p + "/inertia", "expected a positive-definite inertia tensor, found principal moments " + Checker::fmt(ev[0]) +
                                      ", " + Checker::fmt(ev[1]) + ", " + Checker::fmt(ev[2]) + " kg*m^2");
      else if (ev[0] + ev[1] < ev[2] * (1.0 - 1e-9))
        chk.error(p + "/inertia", "principal moments " + Checker::fmt(ev[0]) + ", " + Checker::fmt(ev[1]) + ", " + Checker::fmt(ev[2]) +
                                      " kg*m^2 violate the triangle inequality (no rigid body has them)");
      body.inertia = J;
    }
    body.r0 = chk.vec3(b, p, "position", Vec3::Zero()).value_or(Vec3::Zero());
    body.v0 = chk.vec3(b, p, "velocity", Vec3::Zero()).value_or(Vec3::Zero());
    body.w0 = chk.vec3(b, p, "angular_velocity", Vec3::Zero()).value_or(Vec3::Zero());
    // Orientation: {"axis": [..], "angle": rad} or Euler parameters [e0, e1, e2, e3].
    if (b.contains("orientation")) {
      const json& o = b["orientation"];
      const std::string po = p + "/orientation";
      if (o.is_array() && o.size() == 4 && std::all_of(o.begin(), o.end(), [](const json& x) { return x.is_number(); })) {
        Vec4 e(o[0].get<double>(), o[1].get<double>(), o[2].get<double>(), o[3].get<double>());
        if (!(e.norm() > 1e-12) || !std::isfinite(e.norm())) chk.error(po, "expected Euler parameters of non-zero length, found " + found(o));
        else body.p0 = e.normalized();
      } else if (o.is_object()) {
        if (chk.object(o, po, {"axis", "angle"}, {"axis", "angle"})) {
          auto axis = chk.vec3(o, po, "axis", std::nullopt, true);
          auto angle = chk.number(o, po, "angle", std::nullopt);
          if (axis && angle) body.p0 = axis_angle(*axis, *angle);
        }
      } else {
        chk.error(po, "expected {\"axis\": [x, y, z], \"angle\": radians} or Euler parameters [e0, e1, e2, e3], found " + found(o));
      }
    }
    out.bodies.push_back(body);
  }
  if (!chk.ok()) chk.raise();

  std::vector<std::string> body_names{"ground"};
  for (const auto& b : out.bodies) body_names.push_back(b.name);
  auto body_of = [&](const json& v, const std::string& ptr) -> std::optional<int> {
    if (v.is_string()) {
      auto it = body_index.find(v.get<std::string>());
      if (it != body_index.end()) return it->second;
    }
    std::string all;
    for (const auto& n : body_names) all += (all.empty() ? "" : ", ") + n;
    chk.error(ptr, "expected a body name (one of " + all + "), found " + found(v));
    return std::nullopt;
  };
  auto two_bodies = [&](const json& o, const std::string& p) -> std::optional<std::pair<int, int>> {
    const json& b = o["bodies"];
    if (!b.is_array() || b.size() != 2) {
      chk.error(p + "/bodies", "expected two body names [i, j], found " + found(b));
      return std::nullopt;
    }
    auto i = body_of(b[0], p + "/bodies/0"), j = body_of(b[1], p + "/bodies/1");
    if (!i || !j) return std::nullopt;
    if (*i == *j) {
      chk.error(p + "/bodies", "expected two different bodies, found " + found(b));
      return std::nullopt;
    }
    return std::make_pair(*i, *j);
  };
  // Global point/direction -> probe on body b in the description's configuration.
  auto point_on = [&](int b, const Vec3& x) {
    Probe pr{b, x, true};
    if (b != kGround) pr.s = rotation(out.bodies[std::size_t(b)].p0).transpose() * (x - out.bodies[std::size_t(b)].r0);
    return pr;
  };
  auto direction_on = [&](int b, const Vec3& a) {
    Probe pr{b, a, false};
    if (b != kGround) pr.s = rotation(out.bodies[std::size_t(b)].p0).transpose() * a;
    return pr;
  };
  auto diff = [](Probe a, Probe b) { return Difference{a, b, true}; };
  auto single = [](Probe a) { return Difference{a, Probe{}, false}; };
  auto pair_of = [&](const json& o, const std::string& p) -> std::optional<PointPair> {
    auto bs = two_bodies(o, p);
    const json& pts = o.contains("points") ? o["points"] : json();
    if (!pts.is_array() || pts.size() != 2) {
      chk.error(p + "/points", "expected two points [[x, y, z], [x, y, z]] (global, on body i and body j), found " + found(pts));
      return std::nullopt;
    }
    json wrap = {{"0", pts[0]}, {"1", pts[1]}};
    auto x0 = chk.vec3(wrap, p + "/points", "0", std::nullopt), x1 = chk.vec3(wrap, p + "/points", "1", std::nullopt);
    if (!bs || !x0 || !x1) return std::nullopt;
    if ((*x1 - *x0).norm() < 1e-9) {
      chk.error(p + "/points", "the two points coincide (the element's direction is undefined), found " + found(pts));
      return std::nullopt;
    }
    return PointPair{point_on(bs->first, *x0), point_on(bs->second, *x1)};
  };

  // Joints.
  std::map<std::string, int> joint_index;
  if (d.contains("joints") && !d["joints"].is_array()) chk.error(base + "/joints", "expected a list of joints, found " + found(d["joints"]));
  const json joints = d.contains("joints") && d["joints"].is_array() ? d["joints"] : json::array();
  const std::vector<std::string> types{"revolute", "prismatic", "spherical", "universal", "cylindrical", "fixed", "point_on_plane", "distance"};
  for (std::size_t k = 0; k < joints.size(); ++k) {
    const std::string p = base + "/joints/" + std::to_string(k);
    const json& o = joints[k];
    if (!chk.object(o, p, {"name", "type", "bodies", "point", "point_j", "axis", "axis_j", "doc"}, {"name", "type", "bodies", "point"}))
      continue;
    Joint j;
    j.pointer = p;
    j.name = chk.string(o, p, "name").value_or("");
    if (!joint_index.emplace(j.name, int(out.joints.size())).second) chk.error(p + "/name", "joint name \"" + j.name + "\" is used twice");
    auto type = chk.string(o, p, "type", types);
    auto bs = two_bodies(o, p);
    auto P = chk.vec3(o, p, "point", std::nullopt);
    auto Pj = chk.vec3(o, p, "point_j", P);
    const bool needs_axis = type && *type != "spherical" && *type != "distance";
    if (needs_axis && !o.contains("axis")) chk.error(p + "/axis", "a " + *type + " joint needs an axis");
    auto a = chk.vec3(o, p, "axis", Vec3::UnitZ(), true);
    auto aj = chk.vec3(o, p, "axis_j", std::nullopt, true);
    if (type && *type == "universal" && !aj) chk.error(p + "/axis_j", "a universal joint needs axis_j, the cross axis on body j");
    if (!type || !bs || !P || !Pj || !a) continue;
    j.type = JointType(std::find(types.begin(), types.end(), *type) - types.begin());
    j.body_i = bs->first;
    j.body_j = bs->second;
    Vec3 b, c;
    perpendiculars(*a, b, c);
    const Probe Pi = point_on(j.body_i, *P), Pjp = point_on(j.body_j, *Pj);
    const Probe ai = direction_on(j.body_i, *a), bi = direction_on(j.body_i, b);
    const Probe bj = direction_on(j.body_j, b), cj = direction_on(j.body_j, c), aj_ = direction_on(j.body_j, *a);
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
        if (std::abs(u.dot(*a)) > 1e-9) chk.error(p + "/axis_j", "expected an axis perpendicular to axis, found " + found(o["axis_j"]));
        spherical();
        j.rows.push_back({single(ai), single(direction_on(j.body_j, u)), 0.0});
        break;
      }
      case JointType::cylindrical: parallel(), on_line(); break;
      case JointType::prismatic: parallel(), on_line(), no_twist(); break;
      case JointType::fixed: spherical(), parallel(), no_twist(); break;
      case JointType::point_on_plane: j.rows.push_back({d_ij, single(aj_), 0.0}); break;
      case JointType::distance: {
        const double L = (*Pj - *P).norm();
        if (L < 1e-9) chk.error(p + "/point_j", "a distance joint needs point_j away from point, found " + found(o.value("point_j", json())));
        j.rows.push_back({d_ij, d_ij, L * L});
        break;
      }
    }
    j.axis_i = ai;
    j.ref_i = bi;
    j.ref_j = bj;
    j.has_angle = j.type == JointType::revolute || j.type == JointType::cylindrical;
    j.has_displacement = j.type == JointType::prismatic || j.type == JointType::cylindrical;
    j.displacement = {diff(Pjp, Pi), single(ai), (*Pj - *P).dot(*a)};
    out.joints.push_back(std::move(j));
  }

  auto joint_of = [&](const json& v, const std::string& ptr) -> std::optional<int> {
    if (v.is_string()) {
      auto it = joint_index.find(v.get<std::string>());
      if (it != joint_index.end()) return it->second;
    }
    std::string all;
    for (const auto& [n, i] : joint_index) all += (all.empty() ? "" : ", ") + n;
    chk.error(ptr, "expected a joint name (one of " + all + "), found " + found(v));
    return std::nullopt;
  };
  auto coordinate_joint = [&](int j, const std::string& ptr) {
    const Joint& jt = out.joints[std::size_t(j)];
    if (jt.has_angle == jt.has_displacement)
      chk.error(ptr, "joint \"" + jt.name + "\" has no single joint coordinate (expected a revolute or prismatic joint)");
  };

  // Couplers.
  const json couplers = d.value("couplers", json::array());
  if (!couplers.is_array()) chk.error(base + "/couplers", "expected a list of couplers, found " + found(couplers));
  for (std::size_t k = 0; couplers.is_array() && k < couplers.size(); ++k) {
    const std::string p = base + "/couplers/" + std::to_string(k);
    const json& o = couplers[k];
    if (!chk.object(o, p, {"name", "joints", "coefficients", "doc"}, {"joints", "coefficients"})) continue;
    Coupler c;
    c.pointer = p;
    c.name = o.value("name", "coupler" + std::to_string(k));
    const json& js = o["joints"];
    const json& cs = o["coefficients"];
    if (!js.is_array() || js.empty()) {
      chk.error(p + "/joints", "expected a list of joint names, found " + found(js));
      continue;
    }
    if (!cs.is_array() || cs.size() != js.size() ||
        !std::all_of(cs.begin(), cs.end(), [](const json& x) { return x.is_number() && std::isfinite(x.get<double>()); })) {
      chk.error(p + "/coefficients", "expected " + std::to_string(js.size()) + " finite numbers (one per joint), found " + found(cs));
      continue;
    }
    for (std::size_t i = 0; i < js.size(); ++i)
      if (auto j = joint_of(js[i], p + "/joints/" + std::to_string(i))) {
        coordinate_joint(*j, p + "/joints/" + std::to_string(i));
        c.joints.push_back(*j);
        c.coefficients.push_back(cs[i].get<double>());
      }
    out.couplers.push_back(std::move(c));
  }

  // Force elements.
  const json forces = d.value("forces", json::array());
  if (!forces.is_array()) chk.error(base + "/forces", "expected a list of force elements, found " + found(forces));
  for (std::size_t k = 0; forces.is_array() && k < forces.size(); ++k) {
    const std::string p = base + "/forces/" + std::to_string(k);
    const json& o = forces[k];
    if (!o.is_object()) {
      chk.error(p, "expected an object, found " + found(o));
      continue;
    }
    auto type = chk.string(o, p, "type", {"spring_damper", "joint_spring_damper", "joint_effort", "plugin"});
    if (!type) {
      if (!o.contains("type")) chk.error(p + "/type", "required key \"type\" is missing");
      continue;
    }
    if (*type == "spring_damper") {
      if (!chk.object(o, p, {"type", "name", "bodies", "points", "stiffness", "damping", "length", "preload", "doc"}, {"bodies", "points"}))
        continue;
      auto at = pair_of(o, p);
      SpringDamper s;
      s.stiffness = chk.number(o, p, "stiffness", 0.0, 0.0).value_or(0.0);
      s.damping = chk.number(o, p, "damping", 0.0, 0.0).value_or(0.0);
      s.preload = chk.number(o, p, "preload", 0.0).value_or(0.0);
      if (!at) continue;
      s.at = *at;
      s.length = chk.number(o, p, "length", std::nullopt, 0.0).value_or(-1.0);
      if (s.length < 0) {  // free length: the distance in the description's configuration
        const auto& pts = o["points"];
        s.length = (Vec3(pts[1][0].get<double>(), pts[1][1].get<double>(), pts[1][2].get<double>()) -
                    Vec3(pts[0][0].get<double>(), pts[0][1].get<double>(), pts[0][2].get<double>()))
                       .norm();
      }
      out.springs.push_back(s);
    } else if (*type == "joint_spring_damper" || *type == "joint_effort") {
      const bool sd = *type == "joint_spring_damper";
      if (!chk.object(o, p,
                      sd ? std::vector<std::string>{"type", "name", "joint", "stiffness", "damping", "position", "preload", "doc"}
                         : std::vector<std::string>{"type", "name", "joint", "table", "input", "doc"},
                      {"joint"}))
        continue;
      auto j = joint_of(o["joint"], p + "/joint");
      if (!j) continue;
      coordinate_joint(*j, p + "/joint");
      JointEffort e;
      e.joint = *j;
      if (sd) {
        e.law = JointEffort::Law::spring_damper;
        e.stiffness = chk.number(o, p, "stiffness", 0.0, 0.0).value_or(0.0);
        e.damping = chk.number(o, p, "damping", 0.0, 0.0).value_or(0.0);
        e.position = chk.number(o, p, "position", 0.0).value_or(0.0);
        e.preload = chk.number(o, p, "preload", 0.0).value_or(0.0);
      } else if (o.contains("table") == o.contains("input")) {
        chk.error(p, "a joint_effort needs exactly one of \"table\" ({\"t\": [...], \"values\": [...]}) and \"input\" (an element name of the input port joint_efforts)");
        continue;
      } else if (o.contains("table")) {
        e.law = JointEffort::Law::table;
        const json& t = o["table"];
        const std::string pt = p + "/table";
        if (!chk.object(t, pt, {"t", "values"}, {"t", "values"})) continue;
        const bool nums = t["t"].is_array() && t["values"].is_array() && t["t"].size() == t["values"].size() && !t["t"].empty();
        if (!nums) {
          chk.error(pt, "expected lists t and values of the same non-zero length, found " + found(t));
          continue;
        }
        for (std::size_t i = 0; i < t["t"].size(); ++i) {
          const json &ti = t["t"][i], &vi = t["values"][i];
          if (!ti.is_number() || !std::isfinite(ti.get<double>()) || (i > 0 && ti.get<double>() < e.times.back())) {
            chk.error(pt + "/t/" + std::to_string(i), "expected a finite time not before the previous one, found " + found(ti));
            break;
          }
          if (!vi.is_number() || !std::isfinite(vi.get<double>())) {
            chk.error(pt + "/values/" + std::to_string(i), "expected a finite number, found " + found(vi));
            break;
          }
          e.times.push_back(ti.get<double>());
          e.values.push_back(vi.get<double>());
        }
      } else {
        e.law = JointEffort::Law::input;
        auto name = chk.string(o, p, "input");
        if (!name) continue;
        e.input = out.effort_inputs.size();
        out.effort_inputs.push_back(*name);
      }
      out.efforts.push_back(std::move(e));
    } else {
      if (!chk.object(o, p, {"type", "name", "plugin", "body", "point", "parameters", "doc"}, {"plugin", "body", "point"})) continue;
      ExternalForce f;
      f.pointer = p;
      f.plugin = chk.string(o, p, "plugin").value_or("");
      f.name = o.value("name", f.plugin + std::to_string(k));
      auto b = body_of(o["body"], p + "/body");
      auto x = chk.vec3(o, p, "point", std::nullopt);
      f.parameters = o.value("parameters", json::object());
      if (!f.parameters.is_object()) chk.error(p + "/parameters", "expected an object, found " + found(f.parameters));
      if (!b || !x) continue;
      if (*b == kGround) {
        chk.error(p + "/body", "a force element acts on a moving body, found \"ground\"");
        continue;
      }
      f.body = *b;
      f.s = point_on(*b, *x).s;
      out.external.push_back(std::move(f));
    }
  }

  // Actuators.
  const json acts = d.value("actuators", json::array());
  if (!acts.is_array()) chk.error(base + "/actuators", "expected a list of actuators, found " + found(acts));
  for (std::size_t k = 0; acts.is_array() && k < acts.size(); ++k) {
    const std::string p = base + "/actuators/" + std::to_string(k);
    const json& o = acts[k];
    if (!chk.object(o, p, {"name", "bodies", "points", "piston_area", "friction", "doc"}, {"bodies", "points"})) continue;
    Actuator a;
    a.name = o.value("name", "a" + std::to_string(k + 1));
    a.area = chk.number(o, p, "piston_area", 65e-4, 0.0, INFINITY, true).value_or(1.0);
    a.friction = chk.number(o, p, "friction", 1e5, 0.0).value_or(0.0);
    if (auto at = pair_of(o, p)) {
      a.at = *at;
      out.actuators.push_back(a);
    }
  }

  // Contacts.
  const json cts = d.value("contacts", json::array());
  if (!cts.is_array()) chk.error(base + "/contacts", "expected a list of contacts, found " + found(cts));
  for (std::size_t k = 0; cts.is_array() && k < cts.size(); ++k) {
    const std::string p = base + "/contacts/" + std::to_string(k);
    const json& o = cts[k];
    if (!chk.object(o, p, {"name", "body", "point", "radius", "normal", "plane_point", "friction", "stiffness", "relaxation", "doc"},
                    {"body", "point"}))
      continue;
    Contact c;
    c.name = o.value("name", "contact" + std::to_string(k));
    auto b = body_of(o["body"], p + "/body");
    auto x = chk.vec3(o, p, "point", std::nullopt);
    auto nrm = chk.vec3(o, p, "normal", Vec3::UnitY(), true);
    c.plane_point = chk.vec3(o, p, "plane_point", Vec3::Zero()).value_or(Vec3::Zero());
    c.radius = chk.number(o, p, "radius", 0.0, 0.0).value_or(0.0);
    c.friction = chk.number(o, p, "friction", 0.0, 0.0).value_or(0.0);
    c.stiffness = chk.number(o, p, "stiffness", 1e9, 0.0, INFINITY, true).value_or(1e9);
    c.relaxation = chk.number(o, p, "relaxation", 0.0, 0.0).value_or(0.0);
    if (!b || !x || !nrm) continue;
    if (*b == kGround) {
      chk.error(p + "/body", "a contact needs a moving body, found \"ground\"");
      continue;
    }
    c.centre = point_on(*b, *x);
    c.normal = *nrm;
    perpendiculars(c.normal, c.t1, c.t2);
    out.contacts.push_back(c);
  }

  // Output points.
  const json pts = d.value("points", json::array());
  if (!pts.is_array()) chk.error(base + "/points", "expected a list of output points, found " + found(pts));
  std::vector<std::string> port_names{"s", "s_dot", "s_ddot", "M_eff", "f_eff", "energy", "poses", "f_h", "p1", "p2", "flow1", "flow2", "joint_efforts"};
  for (std::size_t k = 0; pts.is_array() && k < pts.size(); ++k) {
    const std::string p = base + "/points/" + std::to_string(k);
    const json& o = pts[k];
    if (!chk.object(o, p, {"name", "body", "point", "doc"}, {"name", "body", "point"})) continue;
    auto name = chk.string(o, p, "name");
    auto b = body_of(o["body"], p + "/body");
    auto x = chk.vec3(o, p, "point", std::nullopt);
    if (!name || !b || !x) continue;
    if (std::find(port_names.begin(), port_names.end(), *name) != port_names.end() ||
        std::find(port_names.begin(), port_names.end(), *name + "_dot") != port_names.end())
      chk.error(p + "/name", "output point name \"" + *name + "\" clashes with a port name (" + *name + " or " + *name + "_dot)");
    port_names.push_back(*name);
    port_names.push_back(*name + "_dot");
    out.points.push_back({*name, point_on(*b, *x)});
  }
  if (!chk.ok()) chk.raise();
  return out;
}

}  // namespace stride::mechanism
