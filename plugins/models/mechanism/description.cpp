// Reading and checking a mechanism description (description.hpp). All problems are collected;
// the first is thrown as a ParameterError with its pointer, the others are listed in its message.
#include "description.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <sstream>

#include "mesh_file.hpp"

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
                                                           : "a number in " + std::string(open_lo ? "(" : "[") +
                                                                 (std::isinf(lo) ? "-inf" : fmt(lo)) + ", " +
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
    if (!v.is_string() ||
        (!choices.empty() && std::find(choices.begin(), choices.end(), v.get<std::string>()) == choices.end())) {
      error(ptr + "/" + key,
            "expected " + (choices.empty() ? std::string("a string") : "one of " + allowed) + ", found " + found(v));
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
  DescriptionReader(const json& d, const std::string& base, std::string mesh_folder)
      : d_(d), base_(base), mesh_folder_(std::move(mesh_folder)) {}

  Description read() {
    if (!chk_.object(d_, base_,
                     {"gravity", "bodies", "rotors", "joints", "couplers", "forces", "actuators", "coupling", "points",
                      "contacts", "drives", "motions", "sensors", "static_equilibrium", "planar", "size", "doc"},
                     {"bodies"}))
      chk_.raise();
    read_settings();
    read_extent();
    read_bodies();
    if (!chk_.ok()) chk_.raise();
    read_rotors();  // before anything converts points to body coordinates: rotors move centres
    if (!chk_.ok()) chk_.raise();
    read_joints();
    if (planar_) add_body_planes();
    warn_duplicate_joints();
    read_couplers();
    read_forces();
    read_actuators();
    read_contacts();
    read_points();
    read_drives();
    read_motions();
    read_sensors();
    check_geometry(d_, base_);
    if (!chk_.ok()) chk_.raise();
    return std::move(out_);
  }

 private:
  const json& d_;
  const std::string base_;
  Checker chk_;
  Description out_;
  std::map<std::string, int> body_index_{{"ground", kGround}};
  // Ports named so far: the fixed ones, then output points and sensors.
  std::vector<std::string> port_names_{"s", "s_dot", "s_ddot", "M_eff", "f_eff", "energy", "poses", "f_h", "p1", "p2",
                                       "flow1", "flow2", "joint_efforts", "drive_torque", "drive_speed"};
  std::map<std::string, int> joint_index_;
  std::map<std::string, int> rotor_index_;
  std::string mesh_folder_;
  bool planar_ = false;
  double size_ = 1e4;  // m: every point of the description lies within this distance of the origin

  // A list section: absent is empty, anything else but a list is an error.
  json list(const std::string& key, const std::string& what) {
    const json v = d_.value(key, json::array());
    if (!v.is_array()) chk_.error(base_ + "/" + key, "expected a list of " + what + ", found " + found(v));
    return v.is_array() ? v : json::array();
  }

  void read_settings() {
    read_planar();
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
    if (!chk_.object(
            b, p,
            {"name", "mass", "inertia", "position", "orientation", "velocity", "angular_velocity", "shape", "doc"},
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
    if (b.contains("shape")) read_shape(b["shape"], p + "/shape", body);
    out_.bodies.push_back(body);
  }

  // Shape (drawing only): {"type": "box", "size": [lx, ly, lz]}, {"type": "cylinder", "radius":
  // r, "length": l, "axis": [..]}, {"type": "sphere", "radius": r} or {"type": "mesh", "file":
  // "part.stl" (STL or OBJ; relative to mesh_folder), "scale": s (file units to m, default 1)},
  // with an optional "centre" (default: the body's position; for a mesh, where the file's origin
  // goes); global coordinates and axes in the placed configuration.
  void read_shape(const json& o, const std::string& p, Body& body) {
    static const std::vector<std::string> types{"box", "cylinder", "sphere", "mesh"};
    if (!chk_.object(o, p, {"type", "size", "radius", "length", "axis", "file", "scale", "centre", "doc"}, {"type"}))
      return;
    const auto type = chk_.string(o, p, "type", types);
    if (!type) return;
    Shape& s = body.shape;
    s.centre = chk_.vec3(o, p, "centre", body.r0).value_or(body.r0);
    const std::vector<std::string> allowed = *type == "box"      ? std::vector<std::string>{"size"}
                                             : *type == "sphere" ? std::vector<std::string>{"radius"}
                                             : *type == "mesh"   ? std::vector<std::string>{"file", "scale"}
                                                                 : std::vector<std::string>{"radius", "length", "axis"};
    for (const char* key : {"size", "radius", "length", "axis", "file", "scale"})
      if (o.contains(key) && std::find(allowed.begin(), allowed.end(), key) == allowed.end())
        chk_.error(p + "/" + key,
                   std::string("a ") + *type + " has no \"" + key + "\" (it takes " + found(json(allowed)) + ")");
    for (const auto& key : allowed)
      if (key != "axis" && key != "scale" && !o.contains(key))
        chk_.error(p + "/" + key, "a " + *type + " needs \"" + key + "\"");
    if (*type == "box") {
      s.type = Shape::Type::box;
      const auto size = chk_.vec3(o, p, "size", std::nullopt);
      if (size && !(size->minCoeff() > 0.0))
        chk_.error(p + "/size", "expected three positive edge lengths in m, found " + found(o["size"]));
      if (size) s.size = *size;
      return;
    }
    if (*type == "mesh") return read_mesh(o, p, s);
    s.radius = chk_.number(o, p, "radius", std::nullopt, 0.0, 1e6, true).value_or(0.0);
    s.type = *type == "sphere" ? Shape::Type::sphere : Shape::Type::cylinder;
    if (s.type == Shape::Type::cylinder) {
      s.length = chk_.number(o, p, "length", std::nullopt, 0.0, 1e6, true).value_or(0.0);
      s.axis = chk_.vec3(o, p, "axis", Vec3::UnitZ(), true).value_or(Vec3::UnitZ());
    }
  }

  void read_mesh(const json& o, const std::string& p, Shape& s) {
    s.type = Shape::Type::mesh;
    const double scale = chk_.number(o, p, "scale", 1.0, 0.0, 1e6, true).value_or(1.0);
    if (!o.contains("file")) return;
    if (!o["file"].is_string() || o["file"].get<std::string>().empty()) {
      chk_.error(p + "/file", "expected the name of an .stl or .obj file, found " + found(o["file"]));
      return;
    }
    std::filesystem::path file = o["file"].get<std::string>();
    if (file.is_relative()) {
      if (mesh_folder_.empty()) {
        chk_.error(p + "/file",
                   "a relative mesh file in a description given inline: set the mechanism's "
                   "mesh_folder (relative to the manifest's folder), or give the file's absolute path");
        return;
      }
      file = std::filesystem::path(mesh_folder_) / file;
    }
    try {
      s.triangles = read_mesh_file(file.string(), scale);
    } catch (const std::exception& e) {
      chk_.error(p + "/file", e.what());
    }
  }

  // Inertia: [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] (tensor components, kg m²).
  void read_inertia(const json& I, const std::string& p, Body& body) {
    if (!I.is_array() || (I.size() != 3 && I.size() != 6) || !std::all_of(I.begin(), I.end(), [](const json& x) {
          return x.is_number() && std::abs(x.get<double>()) <= 1e12;
        })) {
      chk_.error(p,
                 "expected [Ixx, Iyy, Izz] or [Ixx, Iyy, Izz, Ixy, Ixz, Iyz] in kg*m^2, each of magnitude at most "
                 "1e12, found " +
                     found(I));
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
      chk_.error(p, "principal moments " + Checker::fmt(ev[0]) + ", " + Checker::fmt(ev[1]) + ", " +
                        Checker::fmt(ev[2]) + " kg*m^2 violate the triangle inequality (no rigid body has them)");
    body.inertia = J;
  }

  // Orientation: {"axis": [..], "angle": rad} or Euler parameters [e0, e1, e2, e3].
  void read_orientation(const json& o, const std::string& po, Body& body) {
    if (o.is_array() && o.size() == 4 && std::all_of(o.begin(), o.end(), [](const json& x) { return x.is_number(); })) {
      Vec4 e(o[0].get<double>(), o[1].get<double>(), o[2].get<double>(), o[3].get<double>());
      if (!(e.norm() > 1e-12) || !std::isfinite(e.norm()))
        chk_.error(po, "expected Euler parameters of non-zero length, found " + found(o));
      else body.p0 = e.normalized();
    } else if (o.is_object()) {
      if (chk_.object(o, po, {"axis", "angle"}, {"axis", "angle"})) {
        auto axis = chk_.vec3(o, po, "axis", std::nullopt, true);
        auto angle = chk_.number(o, po, "angle", std::nullopt);
        if (axis && angle) body.p0 = axis_angle(*axis, *angle);
      }
    } else {
      chk_.error(po, "expected {\"axis\": [x, y, z], \"angle\": radians} or Euler parameters [e0, e1, e2, e3], found " +
                         found(o));
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
    if (b != kGround)
      pr.s = rotation(out_.bodies[std::size_t(b)].p0).transpose() * (x - out_.bodies[std::size_t(b)].r0);
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
      chk_.error(p + "/points",
                 "expected two points [[x, y, z], [x, y, z]] (global, on body i and body j), found " + found(pts));
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

  void read_rotors() {
    const json rs = list("rotors", "rotors");
    for (std::size_t k = 0; k < rs.size(); ++k) read_rotor(rs[k], base_ + "/rotors/" + std::to_string(k));
  }

  void read_rotor(const json& o, const std::string& p) {
    if (!chk_.object(o, p, {"name", "body", "point", "axis", "mass", "inertia", "spin_rate", "doc"},
                     {"name", "body", "point", "axis", "mass", "inertia"}))
      return;
    Rotor r;
    r.name = chk_.string(o, p, "name").value_or("");
    if (r.name.empty() || body_index_.count(r.name) || !rotor_index_.emplace(r.name, int(out_.rotors.size())).second)
      chk_.error(p + "/name", "expected a rotor name used by no body or other rotor, found " + found(o["name"]));
    auto b = body_of(o["body"], p + "/body");
    auto x = chk_.vec3(o, p, "point", std::nullopt);
    auto a = chk_.vec3(o, p, "axis", std::nullopt, true);
    r.mass = chk_.number(o, p, "mass", 0.0, 0.0, 1e12).value_or(0.0);
    r.rate0 = chk_.number(o, p, "spin_rate", 0.0).value_or(0.0);
    const json& I = o["inertia"];
    if (!I.is_array() || I.size() != 2 || !I[0].is_number() || !I[1].is_number() || !(I[0].get<double>() >= 0.0) ||
        !(I[1].get<double>() > 0.0) || I[0].get<double>() > 1e12 || I[1].get<double>() > 1e12) {
      chk_.error(p + "/inertia",
                 "expected [across the axis, about the axis] in kg*m^2, the second positive, found " + found(I));
      return;
    }
    r.transverse = I[0].get<double>();
    r.spin = I[1].get<double>();
    if (r.spin > 2.0 * r.transverse * (1.0 + 1e-9) && r.transverse > 0.0)
      chk_.error(p + "/inertia",
                 "an axisymmetric body has I_axis <= 2 I_across (a thin disc has equality), found " + found(I));
    if (!b || !x || !a) return;
    if (*b == kGround) return chk_.error(p + "/body", "a rotor turns on a moving body, found \"ground\"");
    r.body = *b;
    merge_into_carrier(r, *x, *a);
    out_.rotors.push_back(r);
  }

  // The carrier takes the rotor's mass and its inertia across the axis: centre of mass and
  // inertia of the pair (parallel axes), in the carrier's axes; then the rotor's centre and
  // axis in those axes about the new centre.
  void merge_into_carrier(Rotor& r, const Vec3& x, const Vec3& a) {
    Body& B = out_.bodies[std::size_t(r.body)];
    const Mat3 A0t = rotation(B.p0).transpose();
    const double M = B.mass + r.mass;
    const Vec3 c = (B.mass * B.r0 + r.mass * x) / M;
    const Vec3 db = A0t * (B.r0 - c), dr = A0t * (x - c), ab = A0t * a;
    auto shift = [](double m, const Vec3& d) {
      return Mat3(m * (d.squaredNorm() * Mat3::Identity() - d * d.transpose()));
    };
    B.inertia =
        B.inertia + shift(B.mass, db) + r.transverse * (Mat3::Identity() - ab * ab.transpose()) + shift(r.mass, dr);
    B.mass = M;
    B.r0 = c;
    r.axis_b = ab;
    r.centre_b = dr;
  }

  std::optional<int> rotor_named(const json& v) const {
    if (!v.is_string()) return std::nullopt;
    auto it = rotor_index_.find(v.get<std::string>());
    return it == rotor_index_.end() ? std::nullopt : std::optional<int>(it->second);
  }

  void read_joints() {
    if (d_.contains("joints") && !d_["joints"].is_array())
      chk_.error(base_ + "/joints", "expected a list of joints, found " + found(d_["joints"]));
    const json joints = d_.contains("joints") && d_["joints"].is_array() ? d_["joints"] : json::array();
    for (std::size_t k = 0; k < joints.size(); ++k) read_joint(joints[k], base_ + "/joints/" + std::to_string(k));
  }

  void read_joint(const json& o, const std::string& p) {
    static const std::vector<std::string> types{"revolute",    "prismatic", "spherical",      "universal",
                                                "cylindrical", "fixed",     "point_on_plane", "distance"};
    if (!chk_.object(o, p, {"name", "type", "bodies", "point", "point_j", "axis", "axis_j", "doc"},
                     {"name", "type", "bodies", "point"}))
      return;
    Joint j;
    j.pointer = p;
    j.name = chk_.string(o, p, "name").value_or("");
    if (!joint_index_.emplace(j.name, int(out_.joints.size())).second)
      chk_.error(p + "/name", "joint name \"" + j.name + "\" is used twice");
    auto type = chk_.string(o, p, "type", types);
    auto bs = two_bodies(o, p);
    auto P = chk_.vec3(o, p, "point", std::nullopt);
    auto Pj = chk_.vec3(o, p, "point_j", P);
    const bool needs_axis = type && *type != "spherical" && *type != "distance";
    if (needs_axis && !o.contains("axis")) chk_.error(p + "/axis", "a " + *type + " joint needs an axis");
    auto a = chk_.vec3(o, p, "axis", Vec3::UnitZ(), true);
    auto aj = chk_.vec3(o, p, "axis_j", std::nullopt, true);
    if (type && *type == "universal" && !aj)
      chk_.error(p + "/axis_j", "a universal joint needs axis_j, the cross axis on body j");
    if (!type || !bs || !P || !Pj || !a) return;
    j.type = JointType(std::find(types.begin(), types.end(), *type) - types.begin());
    j.body_i = bs->first;
    j.body_j = bs->second;
    j.point = *P;
    joint_rows(j, o, p, *P, *Pj, *a, aj);
    if (planar_) planar_rows(j, p, *a);
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
        if (std::abs(u.dot(a)) > 1e-9)
          chk_.error(p + "/axis_j", "expected an axis perpendicular to axis, found " + found(o["axis_j"]));
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
        if (L < 1e-9)
          chk_.error(p + "/point_j",
                     "a distance joint needs point_j away from point, found " + found(o.value("point_j", json())));
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

  // "planar": true: every body moves in a plane normal to z (its own, through where it is
  // placed), held by three equations per body (add_body_planes), and the joints keep only their
  // in-plane equations, so a planar mechanism has no redundant ones.
  void read_planar() {
    if (!d_.contains("planar")) return;
    if (!d_["planar"].is_boolean())
      chk_.error(base_ + "/planar", "expected true or false, found " + found(d_["planar"]));
    else planar_ = d_["planar"].get<bool>();
  }

  // A joint's in-plane equations (its rows from joint_rows replaced): a pin gives two, a slider
  // two (across its axis, and no turn), a fixed joint three, a distance one.
  void planar_rows(Joint& j, const std::string& p, const Vec3& a) {
    const Vec3 z = Vec3::UnitZ(), x = Vec3::UnitX(), y = Vec3::UnitY();
    const bool along_z = a.cross(z).norm() < 1e-9, in_plane = std::abs(a.dot(z)) < 1e-9;
    auto pin = [&] { j.rows.resize(2); };  // the x and y rows of the point coincidence come first
    switch (j.type) {
      case JointType::revolute:
        if (!along_z)
          chk_.error(p + "/axis", "a revolute of a planar mechanism turns about the plane's normal [0, 0, 1], found " +
                                      Checker::fmt(a.x()) + ", " + Checker::fmt(a.y()) + ", " + Checker::fmt(a.z()));
        pin();
        break;
      case JointType::spherical: pin(); break;
      case JointType::fixed:
        pin();
        j.rows.push_back({single(direction_on(j.body_i, x)), single(direction_on(j.body_j, y)), 0.0});
        break;
      case JointType::prismatic: {
        if (!in_plane)
          chk_.error(p + "/axis",
                     "a prismatic joint of a planar mechanism slides in the plane (an axis normal to [0, 0, 1])");
        const Vec3 c = z.cross(a).normalized();
        const Probe cj = direction_on(j.body_j, c);
        const Difference d_ij = j.rows[2].d1;  // the on_line rows' P_i − P_j
        j.rows = {{d_ij, single(cj), 0.0}, {single(direction_on(j.body_i, a)), single(cj), 0.0}};
        break;
      }
      case JointType::distance: break;
      case JointType::point_on_plane:
        if (!in_plane)
          chk_.error(p + "/axis",
                     "a point_on_plane joint of a planar mechanism needs a normal in the plane (normal to [0, 0, 1])");
        break;
      default:
        chk_.error(p + "/type",
                   "a planar mechanism takes revolute (about [0, 0, 1]), prismatic (in the plane), spherical, fixed, "
                   "point_on_plane and distance joints");
    }
  }

  // Per body: its centre of mass keeps its z, and its z axis stays along z (two rows).
  void add_body_planes() {
    for (std::size_t b = 0; b < out_.bodies.size(); ++b) {
      Joint j;
      j.name = "plane of " + out_.bodies[b].name;
      j.pointer = base_ + "/planar";
      j.type = JointType::fixed;  // no joint coordinate
      j.body_i = kGround;
      j.body_j = int(b);
      const Vec3 r0 = out_.bodies[b].r0;
      const Probe up = direction_on(int(b), Vec3::UnitZ());
      j.rows.push_back(
          {diff(point_on(int(b), r0), Probe{kGround, r0, true}), single(Probe{kGround, Vec3::UnitZ(), false}), 0.0});
      j.rows.push_back({single(up), single(Probe{kGround, Vec3::UnitX(), false}), 0.0});
      j.rows.push_back({single(up), single(Probe{kGround, Vec3::UnitY(), false}), 0.0});
      out_.joints.push_back(std::move(j));
    }
  }

  // Two joints of one type between the same bodies at the same point (and axis) are one joint
  // given twice: valid (its equations are redundant, the formulations leave them out) but
  // almost never meant.
  void warn_duplicate_joints() {
    const json joints = d_.contains("joints") && d_["joints"].is_array() ? d_["joints"] : json::array();
    std::map<std::string, std::size_t> seen;  // a joint's type, bodies, points and axes as text -> its index
    for (std::size_t k = 0; k < joints.size(); ++k) {
      const json& o = joints[k];
      if (!o.is_object() || !o.contains("bodies") || !o["bodies"].is_array() || o["bodies"].size() != 2) continue;
      json b = o["bodies"];
      if (b[1] < b[0]) std::swap(b[0], b[1]);
      const std::string key = o.value("type", json()).dump() + b.dump() + o.value("point", json()).dump() +
                              o.value("point_j", o.value("point", json())).dump() + o.value("axis", json()).dump() +
                              o.value("axis_j", json()).dump();
      const auto [it, fresh] = seen.emplace(key, k);
      if (fresh) continue;
      const json& first = joints[it->second];
      out_.warnings.push_back("joints \"" + first.value("name", std::string("?")) + "\" (" + base_ + "/joints/" +
                              std::to_string(it->second) + ") and \"" + o.value("name", std::string("?")) + "\" (" +
                              base_ + "/joints/" + std::to_string(k) +
                              ") are one joint given twice (same type, bodies, point and axis): its equations are "
                              "redundant, and the formulations use one copy");
    }
  }

  // "size": the distance from the origin (m) that every point of the description lies within.
  void read_extent() { size_ = chk_.number(d_, base_, "size", 1e4, 0.0, 1e12, true).value_or(1e4); }

  // Geometry that cannot be meant: a point beyond the mechanism's size (where round-off of the
  // coordinates exceeds the joints' tolerances), a direction of huge length. Every key of the
  // description that holds a point or a direction, at any depth.
  void check_geometry(const json& v, const std::string& p) {
    static const std::vector<std::string> points{"position", "point", "point_j", "points", "plane_point"};
    static const std::vector<std::string> directions{"axis", "axis_j", "normal"};
    if (v.is_array()) {
      for (std::size_t k = 0; k < v.size(); ++k) check_geometry(v[k], p + "/" + std::to_string(k));
      return;
    }
    if (!v.is_object()) return;
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string key = it.key(), at = p + "/" + key;
      if (key == "parameters") continue;  // a force element's own, checked by it
      const bool is_point = std::find(points.begin(), points.end(), key) != points.end();
      const bool is_direction = std::find(directions.begin(), directions.end(), key) != directions.end();
      if (is_point) check_points(it.value(), at);
      else if (is_direction) check_direction(it.value(), at);
      else check_geometry(it.value(), at);
    }
  }
  void check_points(const json& v, const std::string& p) {
    if (v.is_array() && !v.empty() && v[0].is_array()) {
      for (std::size_t k = 0; k < v.size(); ++k) check_points(v[k], p + "/" + std::to_string(k));
      return;
    }
    if (v.is_array() && !v.empty() && v[0].is_object()) return check_geometry(v, p);  // the output points
    if (!v.is_array() || v.size() != 3 || !std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); }))
      return;
    const Vec3 x(v[0].get<double>(), v[1].get<double>(), v[2].get<double>());
    if (x.allFinite() && x.stableNorm() > size_)
      chk_.error(p, "expected a point within " + Checker::fmt(size_) +
                        " m of the origin (the mechanism's \"size\"), found " + found(v) + " at " +
                        Checker::fmt(x.stableNorm()) + " m");
  }
  void check_direction(const json& v, const std::string& p) {
    if (!v.is_array() || v.size() != 3 || !std::all_of(v.begin(), v.end(), [](const json& x) { return x.is_number(); }))
      return;
    const Vec3 x(v[0].get<double>(), v[1].get<double>(), v[2].get<double>());
    if (x.allFinite() && !(x.stableNorm() <= 1e6))
      chk_.error(p,
                 "expected a direction of length at most 1e6 (any length gives the same direction; one this long is a "
                 "typing error), found " +
                     found(v));
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
      chk_.error(ptr,
                 "joint \"" + jt.name + "\" has no single joint coordinate (expected a revolute or prismatic joint)");
  }

  void read_couplers() {
    const json couplers = list("couplers", "couplers");
    for (std::size_t k = 0; k < couplers.size(); ++k)
      read_coupler(couplers[k], base_ + "/couplers/" + std::to_string(k), k);
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
    if (!cs.is_array() || cs.size() != js.size() || !std::all_of(cs.begin(), cs.end(), [](const json& x) {
          return x.is_number() && std::isfinite(x.get<double>());
        })) {
      chk_.error(p + "/coefficients",
                 "expected " + std::to_string(js.size()) + " finite numbers (one per joint), found " + found(cs));
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
      else if (*type == "joint_spring_damper" || *type == "joint_effort")
        read_joint_effort(o, p, *type == "joint_spring_damper");
      else read_force_plugin(o, p, k);
    }
  }

  void read_spring_damper(const json& o, const std::string& p) {
    if (!chk_.object(o, p, {"type", "name", "bodies", "points", "stiffness", "damping", "length", "preload", "doc"},
                     {"bodies", "points"}))
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
    if (!chk_.object(
            o, p,
            sd ? std::vector<std::string>{"type", "name", "joint", "stiffness", "damping", "position", "preload", "doc"}
               : std::vector<std::string>{"type", "name", "joint", "value", "table", "input", "doc"},
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
    } else if (int(o.contains("value")) + int(o.contains("table")) + int(o.contains("input")) != 1) {
      chk_.error(p,
                 "a joint_effort needs exactly one of \"value\" (a constant, N*m or N), \"table\" ({\"t\": [...], "
                 "\"values\": [...]}) and \"input\" (an element name of the input port joint_efforts)");
      return;
    } else if (o.contains("value")) {
      e.law = JointEffort::Law::table;  // a table of one row holds its value at every time
      const auto v = chk_.number(o, p, "value", std::nullopt);
      if (!v) return;
      e.times = {0.0};
      e.values = {*v};
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
    const bool nums =
        t["t"].is_array() && t["values"].is_array() && t["t"].size() == t["values"].size() && !t["t"].empty();
    if (!nums) {
      chk_.error(pt, "expected lists t and values of the same non-zero length, found " + found(t));
      return false;
    }
    for (std::size_t i = 0; i < t["t"].size(); ++i) {
      const json &ti = t["t"][i], &vi = t["values"][i];
      if (!ti.is_number() || !std::isfinite(ti.get<double>()) || (i > 0 && ti.get<double>() < e.times.back())) {
        chk_.error(pt + "/t/" + std::to_string(i),
                   "expected a finite time not before the previous one, found " + found(ti));
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
    if (!chk_.object(o, p, {"type", "name", "plugin", "body", "point", "parameters", "doc"},
                     {"plugin", "body", "point"}))
      return;
    ExternalForce f;
    f.pointer = p;
    f.plugin = chk_.string(o, p, "plugin").value_or("");
    f.name = o.value("name", f.plugin + std::to_string(k));
    if (auto r = rotor_named(o["body"])) {  // on a rotor: attached to its carrier, seeing its spin
      f.rotor = *r;
      f.body = out_.rotors[std::size_t(*r)].body;
    }
    auto b = f.rotor >= 0 ? std::optional<int>(f.body) : body_of(o["body"], p + "/body");
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
      if (!chk_.object(o, p, {"name", "bodies", "points", "piston_area", "friction", "doc"}, {"bodies", "points"}))
        continue;
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
    std::vector<std::string>& port_names = port_names_;
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
        chk_.error(p + "/name",
                   "output point name \"" + *name + "\" clashes with a port name (" + *name + " or " + *name + "_dot)");
      port_names.push_back(*name);
      port_names.push_back(*name + "_dot");
      out_.points.push_back({*name, point_on(*b, *x), *frame});
    }
  }

  void read_drives() {
    const json ds = list("drives", "drives");
    for (std::size_t k = 0; k < ds.size(); ++k) {
      const std::string p = base_ + "/drives/" + std::to_string(k);
      const json& o = ds[k];
      if (!chk_.object(o, p, {"name", "joint", "rotor", "reaction", "ratio", "doc"}, {})) continue;
      Drive dr;
      dr.name = o.value("name", "drive" + std::to_string(k));
      dr.ratio = chk_.number(o, p, "ratio", 1.0, 0.0, 1e6, true).value_or(1.0);
      if (o.contains("joint") == o.contains("rotor")) {
        chk_.error(p, "a drive turns exactly one of \"joint\" (a revolute joint) and \"rotor\"");
        continue;
      }
      if (o.contains("rotor")) {
        auto r = rotor_named(o["rotor"]);
        if (!r) {
          chk_.error(p + "/rotor", "expected a rotor name, found " + found(o["rotor"]));
          continue;
        }
        dr.rotor = *r;
        dr.reaction = out_.rotors[std::size_t(*r)].body;
        if (o.contains("reaction"))
          if (auto b = body_of(o["reaction"], p + "/reaction")) dr.reaction = *b;
        out_.drives.push_back(dr);
        continue;
      }
      if (o.contains("reaction"))
        chk_.error(p + "/reaction", "a joint drive reacts on the joint's first body; \"reaction\" is for rotor drives");
      auto j = joint_of(o["joint"], p + "/joint");
      if (!j) continue;
      const Joint& jt = out_.joints[std::size_t(*j)];
      if (jt.type != JointType::revolute) {
        chk_.error(p + "/joint", "a drive turns a revolute joint; joint \"" + jt.name + "\" is not one");
        continue;
      }
      dr.joint = *j;
      out_.drives.push_back(dr);
    }
  }

  void read_motions() {
    const json ms = list("motions", "prescribed motions");
    for (std::size_t k = 0; k < ms.size(); ++k) {
      const std::string p = base_ + "/motions/" + std::to_string(k);
      const json& o = ms[k];
      if (!chk_.object(o, p, {"name", "joint", "table", "doc"}, {"joint", "table"})) continue;
      Motion m;
      m.pointer = p;
      m.name = o.value("name", "motion" + std::to_string(k));
      auto j = joint_of(o["joint"], p + "/joint");
      if (!j) continue;
      coordinate_joint(*j, p + "/joint");
      for (const auto& other : out_.motions)
        if (other.joint == *j)
          chk_.error(p + "/joint", "joint \"" + out_.joints[std::size_t(*j)].name + "\" has a motion already");
      m.joint = *j;
      JointEffort e;  // the same table reader as a joint effort's
      if (!read_effort_table(o["table"], p + "/table", e)) continue;
      m.times = std::move(e.times);
      m.values = std::move(e.values);
      out_.motions.push_back(std::move(m));
    }
  }

  void read_sensors() {
    const json ss = list("sensors", "sensors");
    for (std::size_t k = 0; k < ss.size(); ++k) read_sensor(ss[k], base_ + "/sensors/" + std::to_string(k));
  }

  void read_sensor(const json& o, const std::string& p) {
    static const std::vector<std::string> kinds{"joint_position", "joint_velocity", "roll", "pitch", "yaw"};
    if (!chk_.object(o, p, {"name", "type", "joint", "rotor", "body", "forward", "up", "doc"}, {"name", "type"}))
      return;
    Sensor s;
    auto name = chk_.string(o, p, "name");
    auto type = chk_.string(o, p, "type", kinds);
    if (!name || !type) return;
    s.name = *name;
    if (s.name.empty() || std::find(port_names_.begin(), port_names_.end(), s.name) != port_names_.end())
      chk_.error(p + "/name", "sensor name \"" + s.name + "\" is empty or clashes with a port name");
    port_names_.push_back(s.name);
    s.kind = Sensor::Kind(std::find(kinds.begin(), kinds.end(), *type) - kinds.begin());
    if (s.kind == Sensor::Kind::joint_position || s.kind == Sensor::Kind::joint_velocity) {
      if (o.contains("rotor")) {
        if (auto r = rotor_named(o["rotor"])) s.rotor = *r;
        else chk_.error(p + "/rotor", "expected a rotor name, found " + found(o["rotor"]));
        out_.sensors.push_back(s);
        return;
      }
      if (!o.contains("joint")) return chk_.error(p + "/joint", "a " + *type + " sensor needs a joint or a rotor");
      if (auto j = joint_of(o["joint"], p + "/joint")) {
        coordinate_joint(*j, p + "/joint");
        s.joint = *j;
      }
      out_.sensors.push_back(s);
      return;
    }
    if (!o.contains("body")) return chk_.error(p + "/body", "an attitude sensor needs a body");
    auto b = body_of(o["body"], p + "/body");
    auto f = chk_.vec3(o, p, "forward", Vec3::UnitX(), true);
    auto u = chk_.vec3(o, p, "up", Vec3::UnitY(), true);
    if (!b || !f || !u) return;
    if (*b == kGround) return chk_.error(p + "/body", "an attitude sensor needs a moving body, found \"ground\"");
    if (std::abs(f->dot(*u)) > 1e-9) return chk_.error(p + "/up", "expected a direction perpendicular to forward");
    s.ground_forward = *f;
    s.ground_up = *u;
    s.forward = direction_on(*b, *f);
    s.left = direction_on(*b, u->cross(*f));
    s.up = direction_on(*b, *u);
    out_.sensors.push_back(s);
  }
};

}  // namespace

Description read_description(const json& d, const std::string& base, const std::string& mesh_folder) {
  return DescriptionReader(d, base, mesh_folder).read();
}

}  // namespace stride::mechanism
