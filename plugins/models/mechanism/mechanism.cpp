// `mechanism`: a spatial multibody model assembled from a JSON description (description.hpp).
// Coordinates per body q_b = [r, p] (centre of mass, Euler parameters), velocities v_b = q̇_b,
// with the normalization pᵀp − 1 = 0 as one constraint per body (spatial.hpp). Joints are
// scalar constraints Φ = d1·d2 − c between body points and directions; couplers are linear
// relations between joint coordinates. Actuators are point-to-point interface velocities
// w_i = ṡ = D_i v like the crane models' (same ports, so `rim`, `cylinder` and every coupling
// manifest apply).
//
// The Euler-parameter mass matrix 4 Gᵀ J' G is singular along p; M adds κ p pᵀ there. That term
// lies in the range of the normalization row's gradient (2 pᵀ), so it only changes that
// constraint's multiplier: v̇, M̃ and f̃ are those of the true dynamics.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include <stride/nonsmooth.hpp>

#include "assembly.hpp"
#include "description.hpp"
#include "force_elements.hpp"
#include "geometry.hpp"

namespace {

using namespace stride;
using namespace stride::mechanism;

// A probe evaluated at (q, v): value, velocity, bias (acceleration with v̇ = 0) and ∂/∂p.
struct ProbeValue {
  Vec3 x = Vec3::Zero(), xd = Vec3::Zero(), xb = Vec3::Zero();
  Mat34 Jp = Mat34::Zero();
};

class Mechanism final : public NonsmoothModel {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "mechanism";
    i.kind = Kind::subsystem;
    i.form = Form::multibody;
    i.version = "1.0";
    i.description =
        "Spatial mechanism from a JSON description: rigid bodies in Euler parameters, joints, couplers, force "
        "elements, point-to-point actuators";
    i.parameters = {
        object_param("description", json::object(),
                     "bodies, joints, couplers, forces, actuators, points (docs/reference/mechanism.md); or use "
                     "description_file"),
        path_param("description_file", "",
                   "a JSON file holding the description instead (absolute, or relative to the manifest's folder); "
                   "errors name this file"),
        path_param("mesh_folder", "",
                   "where the mesh files of \"shape\": {\"type\": \"mesh\"} are (relative to the manifest's folder; "
                   "default: the description file's folder)"),
        real_param("assembly_tolerance", 1e-10, "m", "Newton projection onto Phi = 0: tolerance on max|Phi|", 1e-15,
                   1e-2),
        integer_param("assembly_iterations", 50,
                      "Newton projection: iterations before the assembly is declared impossible", 1, 1000),
        real_param("assembly_move_tolerance", 1e-6, "1",
                   "a warning names the joint with the largest initial residual when the assembly moves a body by more "
                   "than this (m) or turns it by more (rad)",
                   0.0, 1e300),
    };
    return i;
  }

  explicit Mechanism(const Params& prm) : d_(load(prm)) {
    file_ = prm.string("description_file");
    base_ = file_.empty() ? "/description" : "";
    try {
      build(prm);
    } catch (const ParameterError& e) {
      if (file_.empty()) throw;
      throw ParameterError(e.pointer(), e.what(), file_);
    }
  }

 private:
  void build(const Params& prm) {
    nb_ = d_.bodies.size();
    nr_ = d_.rotors.size();
    n_ = 7 * nb_ + nr_;  // rotor spin angles after the bodies' coordinates
    m_ = nb_;
    for (const auto& j : d_.joints) m_ += j.rows.size();
    m_ += d_.couplers.size();
    m_ += d_.motions.size();
    for (const auto& dr : d_.drives) {
      JointEffort e;
      e.joint = dr.joint;
      drive_efforts_.push_back(e);
    }
    p_ = d_.actuators.size();
    kappa_.resize(nb_);
    for (std::size_t b = 0; b < nb_; ++b) kappa_[b] = 4.0 * d_.bodies[b].inertia.trace() / 3.0;
    D_.setZero(Eigen::Index(p_), Eigen::Index(n_));
    s_.setZero(Eigen::Index(p_));
    sd_.setZero(Eigen::Index(p_));
    bias_.setZero(Eigen::Index(p_));
    qw_.setZero(Eigen::Index(n_));
    vw_.setZero(Eigen::Index(n_));
    f0_.setZero(Eigen::Index(n_));
    fp_.setZero(Eigen::Index(n_));
    lam_.setZero(Eigen::Index(p_));
    forces_ = load_force_elements(d_);
    memo_.resize(d_.external.size());
    rotations_.resize(nb_);
    auto same = [](const Probe& x, const Probe& y) { return x.body == y.body && x.s == y.s && x.point == y.point; };
    for (const auto& j : d_.joints) {
      same_d1_.emplace_back(j.rows.size(), false);
      for (std::size_t k = 1; k < j.rows.size(); ++k) {
        const Difference &x = j.rows[k].d1, &y = j.rows[k - 1].d1;
        same_d1_.back()[k] = same(x.a, y.a) && x.has_b == y.has_b && (!x.has_b || same(x.b, y.b));
      }
    }
    assemble(prm.real("assembly_tolerance"), int(prm.integer("assembly_iterations")),
             prm.real("assembly_move_tolerance"));
    if (d_.static_equilibrium) {
      q_assembled_ = q0_;
      settle(int(prm.integer("assembly_iterations")));
      report_["static_equilibrium"] = static_report_;
    }
  }

 public:
  // The description from the parameter, or from the file it names (then every pointer is
  // relative to that file's document and the error names the file).
  static Description load(const Params& prm) {
    const json& inline_d = prm.values().at("description");
    const std::string file = prm.string("description_file");
    if (file.empty()) {
      if (inline_d.empty())
        throw ParameterError("/description", "expected a mechanism description (or a description_file), found {}");
      return read_description(inline_d, "/description", prm.string("mesh_folder"));
    }
    if (!inline_d.empty())
      throw ParameterError("/description_file", "give either description or description_file, found both");
    std::error_code ec;
    const auto size = std::filesystem::file_size(file, ec);
    if (ec || !std::filesystem::is_regular_file(file, ec))
      throw ParameterError("/description_file", "expected a readable JSON file, found \"" + file + "\" (" +
                                                    (ec ? ec.message() : std::string("not a regular file")) + ")");
    if (size > (std::uintmax_t(16) << 20))
      throw ParameterError("/description_file", "file \"" + file + "\" is larger than 16 MiB");
    std::ifstream in(file);
    json d = json::parse(in, nullptr, false);
    if (d.is_discarded()) throw ParameterError("", "not valid JSON", file);
    try {
      const std::string meshes = prm.string("mesh_folder");
      return read_description(d, "", meshes.empty() ? std::filesystem::path(file).parent_path().string() : meshes);
    } catch (const ParameterError& e) {
      throw ParameterError(e.pointer(), e.what(), file);
    }
  }

  // ---- Ports --------------------------------------------------------------------------------
  std::vector<PortSpec> ports() const override {
    std::vector<PortSpec> ps;
    auto names = [this](const std::string& suffix) {
      std::vector<std::string> e;
      for (const auto& a : d_.actuators) e.push_back(a.name + suffix);
      return e;
    };
    auto with = [](PortSpec s, std::vector<std::string> e) {
      s.elements = std::move(e);
      return s;
    };
    if (p_ > 0) {
      if (d_.pressure) {
        ps.push_back(with(
            bonded(input("p1", p_, "Pa", "pressure of chamber 1 (shrinks as s grows)"), BondRole::effort, "chamber1"),
            names("_p1")));
        ps.push_back(
            with(bonded(input("p2", p_, "Pa", "pressure of chamber 2 (grows with s)"), BondRole::effort, "chamber2"),
                 names("_p2")));
      } else {
        ps.push_back(with(
            bonded(input("f_h", p_, "N", "actuator forces, positive along increasing s"), BondRole::effort, "actuator"),
            names("")));
      }
    }
    if (!d_.effort_inputs.empty())
      ps.push_back(with(input("joint_efforts", d_.effort_inputs.size(), "1",
                              "joint torques (N*m) or forces (N) of the joint_effort elements"),
                        d_.effort_inputs));
    std::vector<std::string> drives;
    for (const auto& dr : d_.drives) drives.push_back(dr.name);
    if (!d_.drives.empty())
      ps.push_back(with(bonded(input("drive_torque", d_.drives.size(), "N*m", "torque at each drive's input shaft"),
                               BondRole::effort, "drive"),
                        drives));
    if (p_ > 0) {
      ps.push_back(with(output("s", p_, "m", "actuator lengths"), names("")));
      PortSpec sd = with(output("s_dot", p_, "m/s", "actuator elongation rates (interface velocities)"), names("_dot"));
      if (!d_.pressure) sd = bonded(std::move(sd), BondRole::flow, "actuator");
      ps.push_back(std::move(sd));
      ps.push_back(
          with(output("s_ddot", p_, "m/s^2", "actuator accelerations with the current input", true), names("_ddot")));
      std::vector<std::string> me;
      for (const auto& a : d_.actuators)
        for (const auto& b : d_.actuators) me.push_back(a.name + "_" + b.name);
      ps.push_back(with(
          output("M_eff", p_ * p_, "kg", "effective mass of the reduced interface model (Eq. 17), row-major"), me));
      ps.push_back(
          with(output("f_eff", p_, "N", "effective force of the reduced interface model (Eq. 18)"), names("")));
    }
    ps.push_back(output("energy", 1, "J", "mechanical energy: kinetic, gravity, springs"));
    std::vector<std::string> pe;
    for (const auto& b : d_.bodies)
      for (const char* c : {"x", "y", "z", "e0", "e1", "e2", "e3"}) pe.push_back(b.name + "_" + c);
    ps.push_back(
        with(output("poses", 7 * nb_, "1", "per body: centre of mass x, y, z (m) and Euler parameters e0..e3"), pe));
    for (const auto& pt : d_.points) {
      const std::string rel = pt.frame == kGround ? ""
                                                  : " relative to body " + d_.bodies[std::size_t(pt.frame)].name +
                                                        " (where the description placed it)";
      ps.push_back(with(output(pt.name, 3, "m", "position of output point " + pt.name + rel), {"x", "y", "z"}));
      ps.push_back(
          with(output(pt.name + "_dot", 3, "m/s", "velocity of output point " + pt.name + rel), {"x", "y", "z"}));
    }
    if (p_ > 0 && d_.pressure) {
      ps.push_back(with(
          bonded(output("flow1", p_, "m^3/s", "-a_p s_dot: volume rate out of chamber 1"), BondRole::flow, "chamber1"),
          names("_flow1")));
      ps.push_back(with(
          bonded(output("flow2", p_, "m^3/s", "a_p s_dot: volume rate into chamber 2"), BondRole::flow, "chamber2"),
          names("_flow2")));
    }
    if (!d_.drives.empty())
      ps.push_back(with(bonded(output("drive_speed", d_.drives.size(), "rad/s",
                                      "speed of each drive's input shaft: ratio * joint rate"),
                               BondRole::flow, "drive"),
                        drives));
    for (const auto& sn : d_.sensors) ps.push_back(sensor_port(sn));
    return ps;
  }

  MultibodySizes sizes() const override { return {n_, m_, p_}; }
  // v_dot enters s_ddot only; M_eff and f_eff are the actuators'.
  bool outputs_need_dynamics() const override { return p_ > 0; }
  void initial_state(double, VectorRef q, VectorRef v) override {
    q = q0_;
    v = v0_;
  }

  // ---- Dynamics -----------------------------------------------------------------------------
  void mass_matrix(ConstVectorRef q, MatrixRef M) override {
    M.setZero();
    for (std::size_t b = 0; b < nb_; ++b) {
      const auto o = Eigen::Index(7 * b);
      const Vec4 p = q.segment<4>(o + 3);
      const Mat34 G = G_matrix(p);
      M.block<3, 3>(o, o).diagonal().setConstant(d_.bodies[b].mass);
      M.block<4, 4>(o + 3, o + 3) = 4.0 * G.transpose() * d_.bodies[b].inertia * G + kappa_[b] * p * p.transpose();
    }
    // Rotor k: ½ I_s s², s = θ̇ + gᵀ ṗ_carrier, g = 2 G(p)ᵀ a.
    for (std::size_t k = 0; k < nr_; ++k) {
      const Rotor& r = d_.rotors[k];
      const auto o = Eigen::Index(7 * std::size_t(r.body) + 3), i = rotor_index(k);
      const Vec4 g = 2.0 * G_matrix(q.segment<4>(o)).transpose() * r.axis_b;
      M.block<4, 4>(o, o) += r.spin * g * g.transpose();
      M.block<4, 1>(o, i) += r.spin * g;
      M.block<1, 4>(i, o) += r.spin * g.transpose();
      M(i, i) += r.spin;
    }
  }
  void coriolis(ConstVectorRef q, ConstVectorRef v, VectorRef c) override {
    for (std::size_t b = 0; b < nb_; ++b) {
      const auto o = Eigen::Index(7 * b);
      c.segment<3>(o).setZero();
      c.segment<4>(o + 3) = body_coriolis(b, q, v);
    }
    // Rotor k (Lagrange's equations of ½ I_s s²): 4 I_s s G(ṗ)ᵀ a on the carrier, none on θ.
    for (std::size_t k = 0; k < nr_; ++k) {
      const Rotor& r = d_.rotors[k];
      const auto o = Eigen::Index(7 * std::size_t(r.body) + 3);
      c[rotor_index(k)] = 0.0;
      c.segment<4>(o) += 4.0 * r.spin * rotor_spin(k, q, v) * (H_matrix(r.axis_b) * v.segment<4>(o));
    }
  }
  void applied_forces(double t, ConstVectorRef q, ConstVectorRef v, VectorRef f) override {
    f.setZero();
    for (std::size_t b = 0; b < nb_; ++b) f.segment<3>(Eigen::Index(7 * b)) = d_.bodies[b].mass * d_.gravity;
    for (const auto& s : d_.springs) spring_force(s, q, v, f);
    for (const auto& e : d_.efforts) effort_force(e, effort_law(e, t, q, v), q, v, f);
    for (auto& fe : forces_) add_element_force(fe, t, q, v, f);
    for (std::size_t k = 0; k < d_.drives.size(); ++k) drive_force(k, drive_torque(k, t), q, f);
  }

  // K = −∂Q/∂q, C = −∂Q/∂v: every force term by forward differences over the coordinates of
  // the bodies it acts on only (gravity has none), steps as the formulations' own.
  bool force_derivatives(double t, ConstVectorRef q, ConstVectorRef v, MatrixRef K, MatrixRef C) override {
    K.setZero();
    C.setZero();
    qw_ = q;
    vw_ = v;
    // c = 8 G(ṗ)ᵀ J G(p) ṗ with G(p) ṗ = −G(ṗ) p and G(x)ᵀ w = H(w) x.
    for (std::size_t b = 0; b < nb_; ++b) {
      const auto o = Eigen::Index(7 * b + 3);
      const Vec4 p = q.segment<4>(o), pd = v.segment<4>(o);
      const Mat34 Gd = G_matrix(pd), GdJ = d_.bodies[b].inertia * Gd;
      const Vec3 w = d_.bodies[b].inertia * (G_matrix(p) * pd);
      Eigen::Matrix4d H;
      H << 0.0, -w.transpose(), w, -skew(w);
      K.block<4, 4>(o, o) -= 8.0 * Gd.transpose() * GdJ;
      C.block<4, 4>(o, o) += 8.0 * (H + GdJ.transpose() * G_matrix(p));
    }
    rotor_coriolis_derivatives(q, v, K, C);
    for (const auto& s : d_.springs) spring_derivatives(s, q, v, K, C);
    for (const auto& e : d_.efforts) {
      const bool by_state = e.law == JointEffort::Law::spring_damper;
      const double tau = by_state ? 0.0 : effort_law(e, t, q, v);
      const Joint& j = d_.joints[std::size_t(e.joint)];
      if (!by_state && !(j.has_displacement && !j.has_angle)) {
        torque_derivatives(j, tau, q, K);
        continue;
      }
      Bodies B = bodies(j);
      // A torque about a joint axis (a direction) reads the bodies' Euler parameters only.
      B.orientation_only = !(j.has_displacement && !j.has_angle);
      differentiate(B, by_state && e.damping != 0.0, q, v, K, C,
                    [&](ConstVectorRef qq, ConstVectorRef vv, VectorRef f) {
                      effort_force(e, by_state ? effort_law(e, t, qq, vv) : tau, qq, vv, f);
                    });
    }
    for (auto& fe : forces_) {
      if (fe.derivatives) {
        element_derivatives(fe, t, q, v, K, C);
        continue;
      }
      const ExternalForce& x = d_.external[fe.index];
      Bodies B{x.body};
      if (x.rotor >= 0) B.spin = rotor_index(std::size_t(x.rotor));
      differentiate(B, true, q, v, K, C,
                    [&](ConstVectorRef qq, ConstVectorRef vv, VectorRef f) { add_element_force(fe, t, qq, vv, f); });
    }
    for (std::size_t k = 0; k < d_.drives.size(); ++k) {
      const Drive& dr = d_.drives[k];
      const double tau = drive_torque(k, t);
      Bodies B;
      if (dr.rotor >= 0) B.add(d_.rotors[std::size_t(dr.rotor)].body), B.add(dr.reaction);
      else B = bodies(d_.joints[std::size_t(dr.joint)]);
      differentiate(B, false, q, v, K, C,
                    [&](ConstVectorRef qq, ConstVectorRef, VectorRef f) { drive_force(k, tau, qq, f); });
    }
    // D_iᵀ λ_i: λ_i from the inputs, with pressures less the friction on ṡ.
    if (p_ > 0) interface_forces(t, q, v, lam_);
    for (std::size_t k = 0; k < p_; ++k) {
      const Actuator& a = d_.actuators[k];
      double s, sd;
      pair(a.at, q, v, s, sd, nullptr, nullptr);
      const bool friction = d_.pressure && a.friction != 0.0;
      // λ held, less the friction on ṡ: a spring-damper along the actuator without stiffness.
      SpringDamper along{a.at};
      along.preload = lam_[Eigen::Index(k)] + (friction ? a.friction * sd : 0.0);
      along.damping = friction ? a.friction : 0.0;
      spring_derivatives(along, q, v, K, C);
    }
    return true;
  }

  // ---- Interface ----------------------------------------------------------------------------
  void interface_forces(double t, ConstVectorRef q, ConstVectorRef v, VectorRef lambda_i) override {
    if (p_ == 0) return;
    if (d_.pressure) {
      const auto p1 = inputs().at(0, t);
      for (std::size_t k = 0; k < p_; ++k) lambda_i[Eigen::Index(k)] = p1[k];
      const auto p2 = inputs().at(1, t);
      for (std::size_t k = 0; k < p_; ++k) {
        double s, sd;
        pair(d_.actuators[k].at, q, v, s, sd, nullptr, nullptr);
        lambda_i[Eigen::Index(k)] =
            (p2[k] - lambda_i[Eigen::Index(k)]) * d_.actuators[k].area - d_.actuators[k].friction * sd;
      }
    } else {
      const auto fh = inputs().at(0, t);
      for (std::size_t k = 0; k < p_; ++k) lambda_i[Eigen::Index(k)] = fh[k];
    }
  }
  void interface_jacobian(ConstVectorRef q, MatrixRef D_i) override {
    D_i.setZero();
    for (std::size_t k = 0; k < p_; ++k) {
      double s, sd;
      pair(d_.actuators[k].at, q, q, s, sd, nullptr, nullptr, 1.0, &D_i, Eigen::Index(k));
    }
  }
  void interface_bias(ConstVectorRef q, ConstVectorRef v, VectorRef b_i) override {
    for (std::size_t k = 0; k < p_; ++k) {
      double s, sd;
      pair(d_.actuators[k].at, q, v, s, sd, nullptr, &b_i[Eigen::Index(k)]);
    }
  }

  // ---- Constraints: normalization per body, joint rows, couplers ----------------------------
  void constraints(double t, ConstVectorRef q, VectorRef phi) override {
    Eigen::Index r = 0;
    for (std::size_t b = 0; b < nb_; ++b) phi[r++] = q.segment<4>(Eigen::Index(7 * b + 3)).squaredNorm() - 1.0;
    for (std::size_t i = 0; i < d_.joints.size(); ++i) {
      DiffValue a;
      for (std::size_t k = 0; k < d_.joints[i].rows.size(); ++k)
        phi[r++] = dot(d_.joints[i].rows[k], q, q, nullptr, 0, nullptr, &a, same_d1_[i][k]);
    }
    for (const auto& c : d_.couplers) {
      double s = 0.0;
      for (std::size_t k = 0; k < c.joints.size(); ++k) {
        double x, xd;
        coordinate(d_.joints[std::size_t(c.joints[k])], q, q, x, xd, nullptr, nullptr);
        s += c.coefficients[k] * x;
      }
      phi[r++] = s;
    }
    for (const auto& mo : d_.motions) {
      double x, xd;
      coordinate(d_.joints[std::size_t(mo.joint)], q, q, x, xd, nullptr, nullptr);
      phi[r++] = x - motion_value(mo, t);
    }
  }
  // Φ_t: only the prescribed motions depend on t.
  void constraint_rate(double t, ConstVectorRef, VectorRef phi_t) override {
    phi_t.setZero();
    Eigen::Index r = phi_t.size() - Eigen::Index(d_.motions.size());
    for (const auto& mo : d_.motions) phi_t[r++] = -motion_rate(mo, t);
  }
  void constraint_jacobian(double, ConstVectorRef q, MatrixRef phi_q) override {
    phi_q.setZero();
    Eigen::Index r = 0;
    for (std::size_t b = 0; b < nb_; ++b, ++r)
      phi_q.block<1, 4>(r, Eigen::Index(7 * b + 3)) = 2.0 * q.segment<4>(Eigen::Index(7 * b + 3)).transpose();
    for (std::size_t i = 0; i < d_.joints.size(); ++i) {
      DiffValue a;
      for (std::size_t k = 0; k < d_.joints[i].rows.size(); ++k)
        dot(d_.joints[i].rows[k], q, q, &phi_q, r++, nullptr, &a, same_d1_[i][k]);
    }
    for (const auto& c : d_.couplers) {
      for (std::size_t k = 0; k < c.joints.size(); ++k) {
        double x, xd;
        coordinate(d_.joints[std::size_t(c.joints[k])], q, q, x, xd, nullptr, nullptr, c.coefficients[k], &phi_q, r);
      }
      ++r;
    }
    for (const auto& mo : d_.motions) {
      double x, xd;
      coordinate(d_.joints[std::size_t(mo.joint)], q, q, x, xd, nullptr, nullptr, 1.0, &phi_q, r++);
    }
  }
  void constraint_bias(double, ConstVectorRef q, ConstVectorRef v, VectorRef b) override {
    Eigen::Index r = 0;
    for (std::size_t k = 0; k < nb_; ++k) b[r++] = 2.0 * v.segment<4>(Eigen::Index(7 * k + 3)).squaredNorm();
    for (std::size_t i = 0; i < d_.joints.size(); ++i) {
      DiffValue a;
      for (std::size_t k = 0; k < d_.joints[i].rows.size(); ++k) {
        double bias;
        dot(d_.joints[i].rows[k], q, v, nullptr, 0, &bias, &a, same_d1_[i][k]);
        b[r++] = bias;
      }
    }
    for (const auto& c : d_.couplers) {
      double s = 0.0;
      for (std::size_t k = 0; k < c.joints.size(); ++k) {
        double x, xd, bias;
        coordinate(d_.joints[std::size_t(c.joints[k])], q, v, x, xd, nullptr, &bias);
        s += c.coefficients[k] * bias;
      }
      b[r++] = s;
    }
    // x − f(t): f is linear between nodes, so Φ_tt = 0 and Φ_qt = 0 (the joint coordinate does
    // not depend on t).
    for (const auto& mo : d_.motions) {
      double x, xd, bias;
      coordinate(d_.joints[std::size_t(mo.joint)], q, v, x, xd, nullptr, &bias);
      b[r++] = bias;
    }
  }

  // ---- Outputs and energy -------------------------------------------------------------------
  void outputs(const MultibodyState& st, std::span<double> y) override {
    std::size_t o = 0;
    if (p_ > 0) {
      interface_jacobian(st.q, D_);
      for (std::size_t k = 0; k < p_; ++k) {
        double s, sd, b;
        pair(d_.actuators[k].at, st.q, st.v, s, sd, nullptr, &b);
        s_[Eigen::Index(k)] = s;
        sd_[Eigen::Index(k)] = sd;
        bias_[Eigen::Index(k)] = b;
      }
      for (std::size_t k = 0; k < p_; ++k) y[o++] = s_[Eigen::Index(k)];
      for (std::size_t k = 0; k < p_; ++k) y[o++] = sd_[Eigen::Index(k)];
      for (std::size_t k = 0; k < p_; ++k) y[o++] = D_.row(Eigen::Index(k)).dot(st.v_dot) + bias_[Eigen::Index(k)];
      for (Eigen::Index i = 0; i < Eigen::Index(p_); ++i)
        for (Eigen::Index j = 0; j < Eigen::Index(p_); ++j) y[o++] = st.M_eff(i, j);
      for (std::size_t k = 0; k < p_; ++k) y[o++] = st.f_eff[Eigen::Index(k)];
    }
    y[o++] = energy_at(st.t, st.q, st.v);
    for (std::size_t k = 0; k < 7 * nb_; ++k) y[o++] = st.q[Eigen::Index(k)];
    for (const auto& pt : d_.points) {
      const ProbeValue P = eval(pt.at, st.q, st.v);
      Vec3 x = P.x, xd = P.xd;
      if (pt.frame != kGround) relative_to_frame(pt.frame, st.q, st.v, x, xd);
      for (int i = 0; i < 3; ++i) y[o++] = x[i];
      for (int i = 0; i < 3; ++i) y[o++] = xd[i];
    }
    if (p_ > 0 && d_.pressure) {
      for (std::size_t k = 0; k < p_; ++k) y[o++] = -d_.actuators[k].area * sd_[Eigen::Index(k)];
      for (std::size_t k = 0; k < p_; ++k) y[o++] = d_.actuators[k].area * sd_[Eigen::Index(k)];
    }
    for (const auto& dr : d_.drives) {
      double x, xd;
      if (dr.rotor >= 0) xd = st.v[rotor_index(std::size_t(dr.rotor))];
      else coordinate(d_.joints[std::size_t(dr.joint)], st.q, st.v, x, xd, nullptr, nullptr);
      y[o++] = dr.ratio * xd;
    }
    for (const auto& sn : d_.sensors) y[o++] = sensor_value(sn, st.q, st.v);
  }

  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    double e = 0.0;
    for (std::size_t b = 0; b < nb_; ++b) {
      const auto o = Eigen::Index(7 * b);
      const Body& B = d_.bodies[b];
      const Vec3 w = 2.0 * G_matrix(q.segment<4>(o + 3)) * v.segment<4>(o + 3);
      e += 0.5 * B.mass * v.segment<3>(o).squaredNorm() + 0.5 * w.dot(B.inertia * w) -
           B.mass * d_.gravity.dot(q.segment<3>(o));
    }
    for (std::size_t k = 0; k < nr_; ++k) {
      const double sr = rotor_spin(k, q, v);
      e += 0.5 * d_.rotors[k].spin * sr * sr;
    }
    for (const auto& s : d_.springs) {
      double len, rate;
      pair(s.at, q, v, len, rate, nullptr, nullptr);
      e += 0.5 * s.stiffness * (len - s.length) * (len - s.length) - s.preload * len;
    }
    for (const auto& ef : d_.efforts)
      if (ef.law == JointEffort::Law::spring_damper) {
        double x, xd;
        coordinate(d_.joints[std::size_t(ef.joint)], q, v, x, xd, nullptr, nullptr);
        e += 0.5 * ef.stiffness * (x - ef.position) * (x - ef.position) - ef.preload * x;
      }
    return e;
  }

  json report() const override { return report_; }

  // What the description and the assembly found worth a warning is said here, once the host has
  // bound the logger (validate does too), so it reaches stderr and log.txt.
  void bind_logger(Logger& logger) override {
    NonsmoothModel::bind_logger(logger);
    for (const auto& w : d_.warnings) log_warning("{}", w);
    for (const auto& w : warnings_) log_warning("{}", w);
  }

  // Rows of Φ in order: one normalization per body, the joints' rows, one per coupler, one per
  // prescribed motion.
  std::vector<ConstraintLabel> constraint_labels() const override {
    std::vector<ConstraintLabel> l;
    l.reserve(m_);
    for (const auto& b : d_.bodies) l.push_back({"body \"" + b.name + "\"", ConstraintKind::normalization});
    for (const auto& j : d_.joints)
      l.insert(l.end(), j.rows.size(), {"joint \"" + j.name + "\"", ConstraintKind::position});
    for (const auto& c : d_.couplers) l.push_back({"coupler \"" + c.name + "\"", ConstraintKind::position});
    for (const auto& mo : d_.motions) l.push_back({"motion \"" + mo.name + "\"", ConstraintKind::position});
    return l;
  }

  // ---- Unilateral contacts (mlcp): per contact a normal row and two friction rows ------------
  std::vector<ContactRow> contact_rows() const override {
    std::vector<ContactRow> rows;
    for (const auto& c : d_.contacts) {
      const std::size_t normal = rows.size();
      rows.push_back({ContactKind::normal, 0, c.stiffness, c.relaxation});
      rows.push_back({ContactKind::friction, normal, c.friction_stiffness, c.relaxation});
      rows.push_back({ContactKind::friction, normal, c.friction_stiffness, c.relaxation});
    }
    return rows;
  }
  void contacts(double, ConstVectorRef q, ConstVectorRef v, MatrixRef J, VectorRef gap, VectorRef mu) override {
    J.setZero();
    Eigen::Index r = 0;
    for (const auto& c : d_.contacts) {
      if (c.surface.shape != ContactSurface::Shape::ground_plane) {
        surface_contact(c, q, v, J, gap, mu, r);
        r += 3;
        continue;
      }
      const ProbeValue C = eval(c.centre, q, v);
      gap[r] = (C.x - c.plane_point).dot(c.normal) - c.radius;
      mu[r] = 0.0;
      add_gradient(J, r, c.centre, C, c.normal);
      // Slip of the sphere's lowest point: ċ + ω × (−ρ n), so t·slip = t·ċ − ρ (n × t)·ω.
      const Eigen::Index o = Eigen::Index(7 * std::size_t(c.centre.body) + 3);
      const Mat34 E2 = 2.0 * E_matrix(q.segment<4>(o));
      for (const Vec3& t : {c.t1, c.t2}) {
        ++r;
        gap[r] = 0.0;
        mu[r] = c.friction;
        add_gradient(J, r, c.centre, C, t);
        J.block<1, 4>(r, o) -= c.radius * c.normal.cross(t).transpose() * E2;
      }
      ++r;
    }
  }

 private:
  // Sphere (centre c on body i, radius ρ) against a plane or cylinder fixed to body j: normal n
  // (from the surface towards the sphere), gap g, friction directions t1, t2 (cylinder: along
  // its axis and around it). Each row is w·(v_i(x_i) − v_j(x_j)) at the material points
  // x_i = c − ρ n of the sphere and x_j = x_i − g n of the surface; for w = n that is ġ.
  void surface_contact(const Contact& c, ConstVectorRef q, ConstVectorRef v, MatrixRef J, VectorRef gap, VectorRef mu,
                       Eigen::Index r) const {
    const ContactSurface& S = c.surface;
    const ProbeValue C = eval(c.centre, q, v, jacobian);
    const Vec3 X = eval(S.point, q, v, value).x, d = eval(S.direction, q, v, value).x;
    Vec3 w[3];
    double g = 0.0;
    if (S.shape == ContactSurface::Shape::cylinder) {
      const Vec3 e = C.x - X, radial = e - e.dot(d) * d;
      const double rho = radial.norm();
      if (!(rho > 1e-12 * std::max(1.0, S.radius)))
        throw StepFailure("contact \"" + c.name +
                          "\": the sphere's centre is on the cylinder's axis (no normal direction)");
      w[0] = radial / rho;
      w[1] = d;
      w[2] = d.cross(w[0]);
      g = rho - S.radius - c.radius;
    } else {
      w[0] = d;
      w[1] = eval(S.t1, q, v, value).x;
      w[2] = eval(S.t2, q, v, value).x;
      g = (C.x - X).dot(d) - c.radius;
    }
    const Vec3 xj = C.x - (c.radius + g) * w[0];
    const auto oi = Eigen::Index(7 * std::size_t(c.centre.body) + 3);
    const Mat34 E2 = 2.0 * E_matrix(q.segment<4>(oi));
    ProbeValue Pj;
    Probe pj{S.body, xj, true};
    if (S.body != kGround) {
      const auto oj = Eigen::Index(7 * std::size_t(S.body));
      const Vec4 p = q.segment<4>(oj + 3);
      pj.s = body_rotation(S.body, p).transpose() * (xj - q.segment<3>(oj));
      Pj.Jp = rotation_jacobian(p, pj.s);
    }
    for (int k = 0; k < 3; ++k) {
      gap[r + k] = k == 0 ? g : 0.0;
      mu[r + k] = k == 0 ? 0.0 : c.friction;
      add_gradient(J, r + k, c.centre, C, w[k]);
      if (k > 0) J.block<1, 4>(r + k, oi) -= c.radius * w[0].cross(w[k]).transpose() * E2;
      add_gradient(J, r + k, pj, Pj, -w[k]);
    }
  }

  // An output point relative to its frame body j: R0 Aᵀ (x − r) + r0 and its rate
  // R0 Aᵀ (ẋ − ṙ − ω × (x − r)), with r0, R0 where the description placed body j.
  void relative_to_frame(int j, ConstVectorRef q, ConstVectorRef v, Vec3& x, Vec3& xd) const {
    const auto o = Eigen::Index(7 * std::size_t(j));
    const Body& B = d_.bodies[std::size_t(j)];
    const Vec4 p = q.segment<4>(o + 3);
    const Mat3 RA = rotation(B.p0) * body_rotation(j, p).transpose();
    const Vec3 e = x - q.segment<3>(o), w = 2.0 * E_matrix(p) * v.segment<4>(o + 3);
    xd = RA * (xd - v.segment<3>(o) - w.cross(e));
    x = RA * e + B.r0;
  }

  // ---- Kinematic primitives -----------------------------------------------------------------
  // What an evaluation needs: the value always; the p-Jacobian, the velocity, the bias on request
  // (constraints need values only, their Jacobian no velocities: this is the innermost loop).
  enum Need : unsigned { value = 0, jacobian = 1, velocity = 2, bias_term = 4, all = 7 };
  ProbeValue eval(const Probe& pr, ConstVectorRef q, ConstVectorRef v, unsigned need = all) const {
    ProbeValue r;
    if (pr.body == kGround) {
      r.x = pr.s;
      return r;
    }
    const auto o = Eigen::Index(7 * std::size_t(pr.body));
    const Vec4 p = q.segment<4>(o + 3);
    r.x = body_rotation(pr.body, p) * pr.s;
    if (need & (jacobian | velocity)) r.Jp = rotation_jacobian(p, pr.s);
    if (need & velocity) r.xd = r.Jp * v.segment<4>(o + 3);
    if (need & bias_term) {
      const Vec4 pd = v.segment<4>(o + 3);
      r.xb = rotation_bias(pd, pr.s);
    }
    if (pr.point) {
      r.x += q.segment<3>(o);
      if (need & velocity) r.xd += v.segment<3>(o);
    }
    return r;
  }
  // A(p) of the body, kept while the body's p stays the same (every joint row asks again).
  const Mat3& body_rotation(int body, const Vec4& p) const {
    RotationMemo& r = rotations_[std::size_t(body)];
    if (!(r.valid && r.p == p)) r.A = rotation(p), r.p = p, r.valid = true;
    return r.A;
  }
  // row(r) of J += sign * wᵀ ∂x/∂q for the probe.
  static void add_gradient(MatrixRef J, Eigen::Index r, const Probe& pr, const ProbeValue& pv, const Vec3& w) {
    if (pr.body == kGround) return;
    const auto o = Eigen::Index(7 * std::size_t(pr.body));
    if (pr.point) J.block<1, 3>(r, o) += w.transpose();
    J.block<1, 4>(r, o + 3) += w.transpose() * pv.Jp;
  }
  // Generalized force of a global force F at the probe: f += (∂x/∂q)ᵀ F.
  static void add_force(VectorRef f, const Probe& pr, const ProbeValue& pv, const Vec3& F) {
    if (pr.body == kGround) return;
    const auto o = Eigen::Index(7 * std::size_t(pr.body));
    if (pr.point) f.segment<3>(o) += F;
    f.segment<4>(o + 3) += pv.Jp.transpose() * F;
  }
  struct DiffValue {
    ProbeValue a, b;
    Vec3 x, xd, xb;
  };
  DiffValue eval(const Difference& d, ConstVectorRef q, ConstVectorRef v, unsigned need = all) const {
    DiffValue r;
    r.a = eval(d.a, q, v, need);
    r.x = r.a.x, r.xd = r.a.xd, r.xb = r.a.xb;
    if (d.has_b) {
      r.b = eval(d.b, q, v, need);
      r.x -= r.b.x, r.xd -= r.b.xd, r.xb -= r.b.xb;
    }
    return r;
  }
  static void add_force(VectorRef f, const Difference& d, const DiffValue& dv, const Vec3& F) {
    add_force(f, d.a, dv.a, F);
    if (d.has_b) add_force(f, d.b, dv.b, -F);
  }
  static void add_gradient(MatrixRef J, Eigen::Index r, const Difference& d, const DiffValue& dv, const Vec3& w) {
    add_gradient(J, r, d.a, dv.a, w);
    if (d.has_b) add_gradient(J, r, d.b, dv.b, -w);
  }

  // Φ = d1·d2 − c; optionally its gradient into row r of J, or its bias (Φ̈ at v̇ = 0). With
  // `d1`, d1's value is kept there, and taken from there with `reuse` (the joint's previous
  // row had the same d1, evaluated with the same q, v and needs).
  double dot(const DotRow& row, ConstVectorRef q, ConstVectorRef v, MatrixRef* J, Eigen::Index r, double* bias,
             DiffValue* d1 = nullptr, bool reuse = false) const {
    const unsigned need = (J ? jacobian : value) | (bias ? velocity | bias_term : value);
    DiffValue own;
    DiffValue& a = d1 ? *d1 : own;
    if (!(d1 && reuse)) a = eval(row.d1, q, v, need);
    const DiffValue b = eval(row.d2, q, v, need);
    if (J) {
      add_gradient(*J, r, row.d1, a, b.x);
      add_gradient(*J, r, row.d2, b, a.x);
    }
    if (bias) *bias = a.xb.dot(b.x) + 2.0 * a.xd.dot(b.xd) + a.x.dot(b.xb);
    return a.x.dot(b.x) - row.c;
  }

  // Point-to-point length s = |P_to − P_from| and rate; optionally adds F along +s to the
  // generalized forces, the gradient (times `scale`) into row r of J, or the bias s̈ at v̇ = 0.
  void pair(const PointPair& pp, ConstVectorRef q, ConstVectorRef v, double& s, double& sd, VectorRef* f, double* bias,
            double F = 0.0, MatrixRef* J = nullptr, Eigen::Index r = 0) const {
    const unsigned need = velocity | (f || J ? jacobian : value) | (bias ? bias_term : value);
    const ProbeValue a = eval(pp.from, q, v, need), b = eval(pp.to, q, v, need);
    const Vec3 d = b.x - a.x, dd = b.xd - a.xd;
    s = d.norm();
    const Vec3 u = d / s;
    sd = u.dot(dd);
    if (f) {
      add_force(*f, pp.to, b, F * u);
      add_force(*f, pp.from, a, -F * u);
    }
    if (J) {
      add_gradient(*J, r, pp.to, b, F * u);
      add_gradient(*J, r, pp.from, a, -F * u);
    }
    if (bias) *bias = u.dot(b.xb - a.xb) + (dd.squaredNorm() - sd * sd) / s;
  }

  // Joint coordinate x (revolute: angle of j relative to i about the axis; prismatic:
  // displacement) and rate; optionally adds τ Jᵀ to f, scale·J into row r of Jm, or the bias.
  void coordinate(const Joint& j, ConstVectorRef q, ConstVectorRef v, double& x, double& xd, VectorRef* f, double* bias,
                  double tau = 0.0, MatrixRef* Jm = nullptr, Eigen::Index r = 0) const {
    if (j.has_displacement && !j.has_angle) {
      x = dot(j.displacement, q, v, nullptr, 0, bias);
      const DiffValue a = eval(j.displacement.d1, q, v), b = eval(j.displacement.d2, q, v);
      xd = a.xd.dot(b.x) + a.x.dot(b.xd);
      if (Jm) {
        add_gradient(*Jm, r, j.displacement.d1, a, tau * b.x);
        add_gradient(*Jm, r, j.displacement.d2, b, tau * a.x);
      }
      if (f) {
        add_force(*f, j.displacement.d1, a, tau * b.x);
        add_force(*f, j.displacement.d2, b, tau * a.x);
      }
      return;
    }
    const ProbeValue ai = eval(j.axis_i, q, v, value), bi = eval(j.ref_i, q, v, value), bj = eval(j.ref_j, q, v, value);
    x = std::atan2(ai.x.dot(bi.x.cross(bj.x)), bi.x.dot(bj.x));
    Vec3 wi = Vec3::Zero(), wj = Vec3::Zero();
    if (j.body_i != kGround)
      wi = 2.0 * E_matrix(q.segment<4>(Eigen::Index(7 * std::size_t(j.body_i) + 3))) *
           v.segment<4>(Eigen::Index(7 * std::size_t(j.body_i) + 3));
    if (j.body_j != kGround)
      wj = 2.0 * E_matrix(q.segment<4>(Eigen::Index(7 * std::size_t(j.body_j) + 3))) *
           v.segment<4>(Eigen::Index(7 * std::size_t(j.body_j) + 3));
    xd = ai.x.dot(wj - wi);
    if (bias) *bias = wi.cross(ai.x).dot(wj - wi);
    auto add = [&](int body, double sign) {
      if (body == kGround) return;
      const auto o = Eigen::Index(7 * std::size_t(body) + 3);
      const Eigen::Matrix<double, 1, 4> g = sign * 2.0 * ai.x.transpose() * E_matrix(q.segment<4>(o));
      if (Jm) Jm->block<1, 4>(r, o) += tau * g;
      if (f) f->segment<4>(o) += tau * g.transpose();
    };
    add(j.body_j, 1.0);
    add(j.body_i, -1.0);
  }

  // ---- Force terms (each adds its generalized force to f) ------------------------------------
  Vec4 body_coriolis(std::size_t b, ConstVectorRef q, ConstVectorRef v) const {
    const auto o = Eigen::Index(7 * b);
    const Vec4 p = q.segment<4>(o + 3), pd = v.segment<4>(o + 3);
    return 8.0 * G_matrix(pd).transpose() * (d_.bodies[b].inertia * (G_matrix(p) * pd));
  }
  void spring_force(const SpringDamper& s, ConstVectorRef q, ConstVectorRef v, VectorRef f) const {
    double len, rate;
    pair(s.at, q, v, len, rate, nullptr, nullptr);
    const double F = s.preload - s.stiffness * (len - s.length) - s.damping * rate;
    pair(s.at, q, v, len, rate, &f, nullptr, F);
  }
  // K += −∂Q/∂q, C += −∂Q/∂v of a spring-damper, in closed form. With d = x_to − x_from,
  // s = |d|, u = d/s, P = I − u uᵀ, F = preload − k (s − L) − c u·ḋ and f = F u on `to`
  // (−f on `from`):
  //   ∂f/∂d = −k u uᵀ + (F/s) P − (c/s) u (P ḋ)ᵀ,   ∂f/∂ḋ = −c u uᵀ;
  //   Q = Gᵀ f with G = ∂d/∂q (the ends' Jacobians [I, Jp(p)], `from` negated); ḋ = G v, and
  //   ∂ḋ/∂q = [0, Jp(ṗ)] since Jp is linear in p; ∂(Jp(p)ᵀ f)/∂p has columns Jp(e_j)ᵀ f.
  //   K −= Gᵀ (∂f/∂d G + ∂f/∂ḋ Ġ) + Σ ±[Jp(e_j)ᵀ f]_j,   C −= Gᵀ ∂f/∂ḋ G.
  void spring_derivatives(const SpringDamper& sd, ConstVectorRef q, ConstVectorRef v, MatrixRef K, MatrixRef C) const {
    struct End {
      int body;
      double sign;
      Vec3 s;
      bool point;
      Eigen::Matrix<double, 3, 7> J, Jd;  // ∂x/∂q_b and ∂ẋ/∂q_b
    };
    std::array<End, 2> ends{End{sd.at.to.body, 1.0, sd.at.to.s, sd.at.to.point, {}, {}},
                            End{sd.at.from.body, -1.0, sd.at.from.s, sd.at.from.point, {}, {}}};
    Vec3 d = Vec3::Zero(), dd = Vec3::Zero();
    for (End& e : ends) {
      const ProbeValue P = eval(Probe{e.body, e.s, e.point}, q, v);
      d += e.sign * P.x;
      dd += e.sign * P.xd;
      if (e.body == kGround) continue;
      const auto o = Eigen::Index(7 * std::size_t(e.body));
      e.J.setZero();
      e.Jd.setZero();
      if (e.point) e.J.leftCols<3>().setIdentity();
      e.J.rightCols<4>() = P.Jp;
      e.Jd.rightCols<4>() = rotation_jacobian(Vec4(v.segment<4>(o + 3)), e.s);
    }
    const double len = d.norm();
    const Vec3 u = d / len;
    const Mat3 Pu = Mat3::Identity() - u * u.transpose();
    const double F = sd.preload - sd.stiffness * (len - sd.length) - sd.damping * u.dot(dd);
    const Mat3 Ad = -sd.stiffness * u * u.transpose() + (F / len) * Pu - (sd.damping / len) * u * (Pu * dd).transpose();
    const Mat3 Bd = -sd.damping * u * u.transpose();
    const Vec3 f = F * u;
    for (const End& a : ends) {
      if (a.body == kGround) continue;
      const auto oa = Eigen::Index(7 * std::size_t(a.body));
      for (const End& b : ends) {
        if (b.body == kGround) continue;
        const auto ob = Eigen::Index(7 * std::size_t(b.body));
        const double sab = a.sign * b.sign;
        K.block<7, 7>(oa, ob) -= sab * a.J.transpose() * (Ad * b.J + Bd * b.Jd);
        C.block<7, 7>(oa, ob) -= sab * a.J.transpose() * Bd * b.J;
      }
      for (int j = 0; j < 4; ++j)
        K.block<4, 1>(oa + 3, oa + 3 + j) -= a.sign * rotation_jacobian(Vec4::Unit(j), a.s).transpose() * f;
    }
  }

  // The joint effort's torque or force at (t, q, v).
  double effort_law(const JointEffort& e, double t, ConstVectorRef q, ConstVectorRef v) {
    switch (e.law) {
      case JointEffort::Law::spring_damper: {
        double x, xd;
        coordinate(d_.joints[std::size_t(e.joint)], q, v, x, xd, nullptr, nullptr);
        return e.preload - e.stiffness * (x - e.position) - e.damping * xd;
      }
      case JointEffort::Law::table: return table(e, t);
      case JointEffort::Law::input: return static_solve_ ? 0.0 : inputs().at(effort_port(), t)[e.input];
    }
    return 0.0;
  }
  // −∂/∂q of a torque τ (held) about a joint's axis a = A(p_k) s (effort_force): on each body b,
  // f_b = ±2τ E(p_b)ᵀ a, so ∂f_b/∂p_b = ±2τ [E(e_c)ᵀ a]_c (E is linear) and
  // ∂f_b/∂p_k = ±2τ E(p_b)ᵀ ∂(A s)/∂p_k.
  void torque_derivatives(const Joint& j, double tau, ConstVectorRef q, MatrixRef K) const {
    const Probe& ax = j.axis_i;
    const Vec3 a = eval(ax, q, q, value).x;
    const bool turning = ax.body != kGround;
    const auto ok = Eigen::Index(7 * std::size_t(turning ? ax.body : 0) + 3);
    const Mat34 a_p = turning ? rotation_jacobian(q.segment<4>(ok), ax.s) : Mat34::Zero();
    for (const auto& [body, sign] : {std::pair{j.body_j, 1.0}, std::pair{j.body_i, -1.0}}) {
      if (body == kGround) continue;
      const auto o = Eigen::Index(7 * std::size_t(body) + 3);
      const double c = sign * 2.0 * tau;
      for (int k = 0; k < 4; ++k) K.block<4, 1>(o, o + k) -= c * E_matrix(Vec4::Unit(k)).transpose() * a;
      if (turning) K.block<4, 4>(o, ok) -= c * E_matrix(q.segment<4>(o)).transpose() * a_p;
    }
  }
  // τ times the gradient of the joint coordinate (the angle's needs the axis only).
  void effort_force(const JointEffort& e, double tau, ConstVectorRef q, ConstVectorRef v, VectorRef f) const {
    const Joint& j = d_.joints[std::size_t(e.joint)];
    if (j.has_displacement && !j.has_angle) {
      double x, xd;
      coordinate(j, q, v, x, xd, &f, nullptr, tau);
      return;
    }
    const Vec3 a = eval(j.axis_i, q, v, value).x;
    for (const auto& [body, sign] : {std::pair{j.body_j, 1.0}, std::pair{j.body_i, -1.0}}) {
      if (body == kGround) continue;
      const auto o = Eigen::Index(7 * std::size_t(body) + 3);
      f.segment<4>(o) += tau * (sign * 2.0 * a.transpose() * E_matrix(q.segment<4>(o))).transpose();
    }
  }
  // Generalized force of a force element on its body: [F; J_pᵀ F + 2 Eᵀ τ], and on a rotor's
  // spin angle τ·a (the element sees the rotor's angular velocity ω + θ̇ a).
  // A force element depends only on its body's (and rotor's) state: its last value is kept for
  // the same (t, q_b, v_b, θ̇) (the forces are asked again at a point just evaluated).
  const Eigen::Matrix<double, 8, 1>& element_force(const LoadedForce& fe, double t, ConstVectorRef q,
                                                   ConstVectorRef v) const {
    const ExternalForce& x = d_.external[fe.index];
    const auto o = Eigen::Index(7 * std::size_t(x.body));
    const double spin = x.rotor >= 0 ? v[rotor_index(std::size_t(x.rotor))] : 0.0;
    Memo& memo = memo_[fe.index];
    if (memo.valid && memo.t == t && memo.spin == spin && memo.q == q.segment<7>(o) && memo.v == v.segment<7>(o))
      return memo.f;
    const ElementState s = element_state(x, t, q, v);
    Wrench w;
    fe.element->evaluate(s.st, w);
    if (!w.force.allFinite() || !w.torque.allFinite())
      throw StepFailure(format_text("force element \"{}\" returned a non-finite wrench at t = {} s", x.name, t));
    memo.f = generalized(s, w);
    memo.t = t, memo.q = q.segment<7>(o), memo.v = v.segment<7>(o), memo.spin = spin, memo.valid = true;
    return memo.f;
  }
  // The attachment state a force element sees, with what carries its wrench to the coordinates:
  // ∂x/∂p and E(p) of its body, and the rotor's axis (zero without a rotor).
  struct ElementState {
    ForceState st;
    Mat34 Jp, E;
    Vec3 a;
  };
  ElementState element_state(const ExternalForce& x, double t, ConstVectorRef q, ConstVectorRef v) const {
    const auto o = Eigen::Index(7 * std::size_t(x.body));
    const double spin = x.rotor >= 0 ? v[rotor_index(std::size_t(x.rotor))] : 0.0;
    const ProbeValue P = eval(Probe{x.body, x.s, true}, q, v, jacobian | velocity);  // no bias: the wrench reads none
    const Vec4 p = q.segment<4>(o + 3), pd = v.segment<4>(o + 3);
    const Mat34 E = E_matrix(p);
    const Mat3& A = body_rotation(x.body, p);
    const Vec3 a = x.rotor >= 0 ? Vec3(A * d_.rotors[std::size_t(x.rotor)].axis_b) : Vec3::Zero();
    return {ForceState{t, P.x, P.xd, A, 2.0 * E * pd + spin * a}, P.Jp, E, a};
  }
  // [F; J_pᵀ F + 2 Eᵀ τ; τ·a]
  static Eigen::Matrix<double, 8, 1> generalized(const ElementState& s, const Wrench& w) {
    Eigen::Matrix<double, 8, 1> f;
    f.head<3>() = w.force;
    f.segment<4>(3) = s.Jp.transpose() * w.force + 2.0 * s.E.transpose() * w.torque;
    f[7] = w.torque.dot(s.a);
    return f;
  }
  void add_element_force(const LoadedForce& fe, double t, ConstVectorRef q, ConstVectorRef v, VectorRef f) const {
    const ExternalForce& x = d_.external[fe.index];
    const auto& g = element_force(fe, t, q, v);
    f.segment<7>(Eigen::Index(7 * std::size_t(x.body))) += g.head<7>();
    if (x.rotor >= 0) f[rotor_index(std::size_t(x.rotor))] += g[7];
  }

  // ---- Rotors ---------------------------------------------------------------------------------
  Eigen::Index rotor_index(std::size_t k) const { return Eigen::Index(7 * nb_ + k); }
  // G(x)ᵀ w = H(w) x.
  static Eigen::Matrix4d H_matrix(const Vec3& w) {
    Eigen::Matrix4d H;
    H << 0.0, -w.transpose(), w, -skew(w);
    return H;
  }
  // s = θ̇ + a·ω_carrier (body axes: ω' = 2 G(p) ṗ).
  double rotor_spin(std::size_t k, ConstVectorRef q, ConstVectorRef v) const {
    const Rotor& r = d_.rotors[k];
    const auto o = Eigen::Index(7 * std::size_t(r.body) + 3);
    return v[rotor_index(k)] + 2.0 * r.axis_b.dot(G_matrix(q.segment<4>(o)) * v.segment<4>(o));
  }
  // −∂/∂q, −∂/∂v of −c for the rotors' c_p = 4 I_s s H(a) ṗ, s = θ̇ + gᵀṗ, g = 2 G(p)ᵀ a,
  // ∂s/∂p = −2 aᵀ G(ṗ): C_pp = 4 I_s (H ṗ gᵀ + s H), C_pθ = 4 I_s H ṗ, K_pp = −8 I_s H ṗ aᵀ G(ṗ).
  void rotor_coriolis_derivatives(ConstVectorRef q, ConstVectorRef v, MatrixRef K, MatrixRef C) const {
    for (std::size_t k = 0; k < nr_; ++k) {
      const Rotor& r = d_.rotors[k];
      const auto o = Eigen::Index(7 * std::size_t(r.body) + 3), i = rotor_index(k);
      const Vec4 pd = v.segment<4>(o);
      const Eigen::Matrix4d H = H_matrix(r.axis_b);
      const Vec4 Hpd = H * pd, g = 2.0 * G_matrix(q.segment<4>(o)).transpose() * r.axis_b;
      const double s_r = rotor_spin(k, q, v);
      C.block<4, 4>(o, o) += 4.0 * r.spin * (Hpd * g.transpose() + s_r * H);
      C.block<4, 1>(o, i) += 4.0 * r.spin * Hpd;
      K.block<4, 4>(o, o) -= 8.0 * r.spin * Hpd * (r.axis_b.transpose() * G_matrix(pd));
    }
  }
  // A drive's torque on its joint, or on its rotor with the reaction on the mounting body.
  void drive_force(std::size_t k, double tau, ConstVectorRef q, VectorRef f) const {
    const Drive& dr = d_.drives[k];
    if (dr.rotor < 0) {
      effort_force(drive_efforts_[k], tau, q, q, f);
      return;
    }
    const Rotor& r = d_.rotors[std::size_t(dr.rotor)];
    f[rotor_index(std::size_t(dr.rotor))] += tau;
    if (dr.reaction == r.body) return;  // the carrier's share and the reaction cancel
    const auto oc = Eigen::Index(7 * std::size_t(r.body) + 3);
    const Vec4 pc = q.segment<4>(oc);
    const Vec3 a = rotation(pc) * r.axis_b;
    f.segment<4>(oc) += 2.0 * E_matrix(pc).transpose() * (tau * a);
    if (dr.reaction == kGround) return;
    const auto orr = Eigen::Index(7 * std::size_t(dr.reaction) + 3);
    f.segment<4>(orr) -= 2.0 * E_matrix(Vec4(q.segment<4>(orr))).transpose() * (tau * a);
  }

  // The bodies a force term acts on (ground left out, each once).
  struct Bodies {
    std::array<int, 6> b{};
    int n = 0;
    Eigen::Index spin = -1;  // a rotor's coordinate the term depends on through its rate
    bool orientation_only = false;  // the term reads the bodies' Euler parameters, not their positions
    Bodies() = default;
    explicit Bodies(int body) { add(body); }
    void add(int body) {
      if (body == kGround) return;
      for (int i = 0; i < n; ++i)
        if (b[std::size_t(i)] == body) return;
      b[std::size_t(n++)] = body;
    }
  };
  static Bodies bodies(const PointPair& pp) {
    Bodies B;
    B.add(pp.from.body), B.add(pp.to.body);
    return B;
  }
  static Bodies bodies(const Joint& j) {
    Bodies B;
    B.add(j.body_i), B.add(j.body_j);
    if (j.has_displacement && !j.has_angle) {
      for (const Difference* d : {&j.displacement.d1, &j.displacement.d2}) {
        B.add(d->a.body);
        if (d->has_b) B.add(d->b.body);
      }
    } else {
      B.add(j.axis_i.body), B.add(j.ref_i.body), B.add(j.ref_j.body);
    }
    return B;
  }
  // Adds −∂/∂q (and, if it depends on v, −∂/∂v) of one force term to K (C): forward
  // differences over the coordinates of its bodies. qw_, vw_ hold q, v on entry and exit.
  template <class Term>
  void differentiate(const Bodies& B, bool velocity_dependent, ConstVectorRef q, ConstVectorRef v, MatrixRef K,
                     MatrixRef C, Term&& term) {
    auto clear = [&](Eigen::VectorXd& f) {
      for (int i = 0; i < B.n; ++i) f.segment<7>(Eigen::Index(7 * B.b[std::size_t(i)])).setZero();
      if (B.spin >= 0) f[B.spin] = 0.0;
    };
    clear(f0_);
    term(q, v, f0_);
    auto column = [&](MatrixRef J, Eigen::Index col, double d) {
      clear(fp_);
      term(qw_, vw_, fp_);
      for (int i = 0; i < B.n; ++i) {
        const auto o = Eigen::Index(7 * B.b[std::size_t(i)]);
        J.block<7, 1>(o, col) += (f0_.segment<7>(o) - fp_.segment<7>(o)) / d;
      }
      if (B.spin >= 0) J(B.spin, col) += (f0_[B.spin] - fp_[B.spin]) / d;
    };
    // The spin angle enters no force (the forces see the rotor's rate, not its angle).
    if (velocity_dependent && B.spin >= 0) {
      const double dv = 1e-7 * std::max(1.0, std::abs(v[B.spin]));
      vw_[B.spin] = v[B.spin] + dv;
      column(C, B.spin, dv);
      vw_[B.spin] = v[B.spin];
    }
    for (int i = 0; i < B.n; ++i)
      for (Eigen::Index j = 7 * B.b[std::size_t(i)] + (B.orientation_only ? 3 : 0), e = 7 * B.b[std::size_t(i)] + 7;
           j < e; ++j) {
        const double d = 1e-7 * std::max(1.0, std::abs(q[j]));
        qw_[j] = q[j] + d;
        column(K, j, d);
        qw_[j] = q[j];
        if (!velocity_dependent) continue;
        const double dv = 1e-7 * std::max(1.0, std::abs(v[j]));
        vw_[j] = v[j] + dv;
        column(C, j, dv);
        vw_[j] = v[j];
      }
  }

  // −∂/∂q, −∂/∂v of an element's generalized force g = Gᵀ W (element_force) when the element
  // gives its wrench's Jacobian J = ∂W/∂S: ∂g/∂q = Gᵀ J ∂S/∂q + (∂Gᵀ/∂q) W, with the
  // state S = (x, ẋ, δθ, ω) of the body's coordinates q_b = (r, p) and rates (ṙ, ṗ, θ̇):
  //   x = r + A(p) s,  ẋ = ṙ + J_p(p) ṗ,  δθ = 2 E(p) δp / |p|²,  ω = 2 E(p) ṗ + θ̇ A(p) ā.
  // A(p) = |p|² R(p/|p|) is quadratic and J_p(p), E(p) linear in p, so ∂(J_p(p) ṗ)/∂p = J_p(ṗ)
  // and ∂(E(p) ṗ)/∂p = −E(ṗ) (E(p) ṗ = −E(ṗ) p); δθ is the rotation of R (E(p) p = 0 takes
  // out the change of |p|).
  void element_derivatives(const LoadedForce& fe, double t, ConstVectorRef q, ConstVectorRef v, MatrixRef K,
                           MatrixRef C) {
    const ExternalForce& x = d_.external[fe.index];
    const ElementState s0 = element_state(x, t, q, v);
    Wrench w;
    WrenchJacobian J;
    fe.derivatives->evaluate_derivatives(s0.st, w, J);
    if (!w.force.allFinite() || !w.torque.allFinite() || !J.allFinite())
      throw StepFailure(
          format_text("force element \"{}\" returned a non-finite wrench or wrench derivative at t = {} s", x.name, t));
    const auto o = Eigen::Index(7 * std::size_t(x.body));
    const Vec4 p = q.segment<4>(o + 3), pd = v.segment<4>(o + 3);
    const bool rotor = x.rotor >= 0;
    const Vec3 axis = rotor ? d_.rotors[std::size_t(x.rotor)].axis_b : Vec3::Zero();
    const double spin = rotor ? v[rotor_index(std::size_t(x.rotor))] : 0.0;
    const Mat34 theta_p = (2.0 / p.squaredNorm()) * s0.E;  // ∂δθ/∂p
    const Mat34 axis_p = rotor ? rotation_jacobian(p, axis) : Mat34::Zero();  // ∂(A ā)/∂p
    const Mat34 omega_p = -2.0 * E_matrix(pd) + spin * axis_p;
    const auto J_x = J.block<6, 3>(0, 0), J_xd = J.block<6, 3>(0, 3), J_th = J.block<6, 3>(0, 6),
               J_w = J.block<6, 3>(0, 9);
    // ∂W/∂(r, p) and ∂W/∂(ṙ, ṗ, θ̇).
    Eigen::Matrix<double, 6, 7> Wq;
    Eigen::Matrix<double, 6, 8> Wv;
    Wq.leftCols<3>() = J_x;
    Wq.rightCols<4>() = J_x * s0.Jp + J_xd * rotation_jacobian(pd, x.s) + J_th * theta_p + J_w * omega_p;
    Wv.leftCols<3>() = J_xd;
    Wv.middleCols<4>(3) = J_xd * s0.Jp + J_w * (2.0 * s0.E);
    Wv.col(7) = J_w * s0.a;
    // g = [F; J_pᵀ F + 2 Eᵀ T; aᵀ T]: its rows from ∂W, then (∂Gᵀ/∂p) W.
    Eigen::Matrix<double, 8, 7> gq;
    Eigen::Matrix<double, 8, 8> gv;
    gq.topRows<3>() = Wq.topRows<3>();
    gq.middleRows<4>(3) = s0.Jp.transpose() * Wq.topRows<3>() + 2.0 * s0.E.transpose() * Wq.bottomRows<3>();
    gq.row(7) = s0.a.transpose() * Wq.bottomRows<3>();
    gv.topRows<3>() = Wv.topRows<3>();
    gv.middleRows<4>(3) = s0.Jp.transpose() * Wv.topRows<3>() + 2.0 * s0.E.transpose() * Wv.bottomRows<3>();
    gv.row(7) = s0.a.transpose() * Wv.bottomRows<3>();
    for (int j = 0; j < 4; ++j)
      gq.block<4, 1>(3, 3 + j) += rotation_jacobian(Vec4::Unit(j), x.s).transpose() * w.force +
                                  2.0 * E_matrix(Vec4::Unit(j)).transpose() * w.torque;
    if (rotor) gq.block<1, 4>(7, 3) += w.torque.transpose() * axis_p;
    K.block(o, o, 7, 7) -= gq.topRows<7>();
    C.block(o, o, 7, 7) -= gv.topLeftCorner<7, 7>();
    if (rotor) {
      const Eigen::Index spin_index = rotor_index(std::size_t(x.rotor));
      K.block<1, 7>(spin_index, o) -= gq.row(7);
      C.block<1, 7>(spin_index, o) -= gv.block<1, 7>(7, 0);
      C.block<7, 1>(o, spin_index) -= gv.block<7, 1>(0, 7);
      C(spin_index, spin_index) -= gv(7, 7);
    }
  }

  static double table(const JointEffort& e, double t) {
    if (t <= e.times.front()) return e.values.front();
    if (t >= e.times.back()) return e.values.back();
    const auto it = std::upper_bound(e.times.begin(), e.times.end(), t);
    const std::size_t k = std::size_t(it - e.times.begin());
    const double t0 = e.times[k - 1], t1 = e.times[k];
    return t1 > t0 ? e.values[k - 1] + (e.values[k] - e.values[k - 1]) * (t - t0) / (t1 - t0) : e.values[k];
  }
  std::size_t effort_port() const { return p_ == 0 ? 0 : (d_.pressure ? 2 : 1); }
  std::size_t drive_port() const { return effort_port() + (d_.effort_inputs.empty() ? 0 : 1); }

  // ---- Drives, prescribed motions, sensors ----------------------------------------------------
  // The torque a drive puts on its joint: ratio times the input shaft's (none while settling).
  double drive_torque(std::size_t k, double t) {
    return static_solve_ ? 0.0 : d_.drives[k].ratio * inputs().at(drive_port(), t)[k];
  }
  static double motion_value(const Motion& m, double t) {
    if (t <= m.times.front()) return m.values.front();
    if (t >= m.times.back()) return m.values.back();
    const std::size_t k = std::size_t(std::upper_bound(m.times.begin(), m.times.end(), t) - m.times.begin());
    const double t0 = m.times[k - 1], t1 = m.times[k];
    return t1 > t0 ? m.values[k - 1] + (m.values[k] - m.values[k - 1]) * (t - t0) / (t1 - t0) : m.values[k];
  }
  // df/dt of the piecewise-linear table: the slope of the segment t lies in (0 outside; at a
  // node, the slope of the segment that starts there).
  static double motion_rate(const Motion& m, double t) {
    if (t < m.times.front() || t >= m.times.back()) return 0.0;
    const std::size_t k = std::size_t(std::upper_bound(m.times.begin(), m.times.end(), t) - m.times.begin());
    const double t0 = m.times[k - 1], t1 = m.times[k];
    return t1 > t0 ? (m.values[k] - m.values[k - 1]) / (t1 - t0) : 0.0;
  }
  PortSpec sensor_port(const Sensor& sn) const {
    using K = Sensor::Kind;
    const bool linear = (sn.kind == K::joint_position || sn.kind == K::joint_velocity) && sn.rotor < 0 &&
                        !d_.joints[std::size_t(sn.joint)].has_angle;
    switch (sn.kind) {
      case K::joint_position: return output(sn.name, 1, linear ? "m" : "rad", "joint coordinate (sensor)");
      case K::joint_velocity: return output(sn.name, 1, linear ? "m/s" : "rad/s", "joint rate (sensor)");
      case K::roll: return output(sn.name, 1, "rad", "roll angle, ISO 8855 z-y-x, right side down positive (sensor)");
      case K::pitch: return output(sn.name, 1, "rad", "pitch angle, ISO 8855 z-y-x, nose down positive (sensor)");
      case K::yaw: return output(sn.name, 1, "rad", "yaw angle, ISO 8855 z-y-x, to the left positive (sensor)");
    }
    return output(sn.name, 1, "1");
  }
  // R = Rz(yaw) Ry(pitch) Rx(roll) in the ground frame (F, L = U x F, U): the body's forward
  // axis f has f·U = −sin(pitch), f·L / f·F = tan(yaw); its left and up axes l, u give
  // tan(roll) = l·U / u·U.
  double sensor_value(const Sensor& sn, ConstVectorRef q, ConstVectorRef v) const {
    using K = Sensor::Kind;
    if (sn.kind == K::joint_position || sn.kind == K::joint_velocity) {
      if (sn.rotor >= 0) {
        const Eigen::Index i = rotor_index(std::size_t(sn.rotor));
        return sn.kind == K::joint_position ? q[i] : v[i];
      }
      double x, xd;
      coordinate(d_.joints[std::size_t(sn.joint)], q, v, x, xd, nullptr, nullptr);
      return sn.kind == K::joint_position ? x : xd;
    }
    const Vec3 f = eval(sn.forward, q, v, value).x, U = sn.ground_up, F = sn.ground_forward;
    switch (sn.kind) {
      case K::pitch: return std::asin(std::clamp(-f.dot(U), -1.0, 1.0));
      case K::yaw: return std::atan2(f.dot(U.cross(F)), f.dot(F));
      default: return std::atan2(eval(sn.left, q, v, value).x.dot(U), eval(sn.up, q, v, value).x.dot(U));
    }
  }

  // ---- Consistent initial conditions: Newton projection onto Φ = 0, then Φ_q v = 0 -----------
  // Minimum-norm Newton steps over the independent rows of the sparse Φ_q (assembly.hpp); the
  // rows that depend on others are found there and named (report and a warning), and so is a
  // projection that moves a body by more than `move_tolerance`.
  void assemble(double tol, int max_it, double move_tolerance) {
    const auto n = Eigen::Index(n_), m = Eigen::Index(m_);
    q0_.setZero(n);
    v0_.setZero(n);
    for (std::size_t b = 0; b < nb_; ++b) {
      const Body& B = d_.bodies[b];
      const auto o = Eigen::Index(7 * b);
      q0_.segment<3>(o) = B.r0;
      q0_.segment<4>(o + 3) = B.p0;
      v0_.segment<3>(o) = B.v0;
      v0_.segment<4>(o + 3) = 0.5 * E_matrix(B.p0).transpose() * B.w0;
    }
    for (std::size_t k = 0; k < nr_; ++k) v0_[rotor_index(k)] = d_.rotors[k].rate0;
    Eigen::VectorXd phi(m);
    const Eigen::VectorXd start = q0_;
    constraints(0.0, q0_, phi);
    const Eigen::VectorXd phi_start = phi;
    const double phi0 = phi.cwiseAbs().maxCoeff();
    int it = 0;
    ConstraintRank rank;
    for (; it < max_it && phi.cwiseAbs().maxCoeff() > tol; ++it) {
      factorize_jacobian(q0_, rank);
      q0_ -= rank.solve(phi);
      constraints(0.0, q0_, phi);
    }
    const double phi1 = phi.cwiseAbs().maxCoeff();
    if (!(phi1 <= tol)) {
      const auto [where, what] = largest_residual(phi);
      throw ParameterError(where, format_text("the assembly cannot close: after {} Newton iterations the constraint "
                                              "residual is {}, largest at {} (expected at most {}); check the joint "
                                              "points and axes",
                                              it, phi1, what, tol));
    }
    factorize_jacobian(q0_, rank);
    // Φ_q v + Φ_t = 0: the prescribed motions' rates are part of the consistent velocities.
    Eigen::VectorXd phi_t(m);
    constraint_rate(0.0, q0_, phi_t);
    const Eigen::VectorXd vin = v0_, Jv_in = rank.jacobian() * v0_ + phi_t;
    v0_ -= rank.solve(Jv_in);
    report_assembly(rank, start, phi_start, phi0, phi1, it, vin, Jv_in, phi_t, move_tolerance);
  }

  // Φ_q at q, factorized; its triplets are gathered row block by row block over the bodies each
  // row touches (a dense Φ_q of a long chain would not fit).
  void factorize_jacobian(ConstVectorRef q, ConstraintRank& rank) {
    std::vector<Eigen::Triplet<double>> t;
    t.reserve(std::size_t(15 * m_));
    Eigen::Index r = 0;
    for (std::size_t b = 0; b < nb_; ++b, ++r)
      for (Eigen::Index k = 0; k < 4; ++k)
        t.emplace_back(r, Eigen::Index(7 * b + 3) + k, 2.0 * q[Eigen::Index(7 * b + 3) + k]);
    std::size_t rows = 1;
    for (const auto& j : d_.joints) rows = std::max(rows, j.rows.size());
    Eigen::MatrixXd block = Eigen::MatrixXd::Zero(Eigen::Index(rows), Eigen::Index(n_));
    MatrixRef J(block);
    // Moves the rows of `block` into the triplets as rows r, r + 1, ... over the bodies' columns.
    auto gather = [&](const std::vector<int>& bs, std::size_t count) {
      for (std::size_t k = 0; k < count; ++k)
        for (int b : bs)
          for (Eigen::Index c = 7 * b, e = c + 7; c < e; ++c)
            if (double& x = block(Eigen::Index(k), c); x != 0.0) t.emplace_back(r + Eigen::Index(k), c, x), x = 0.0;
      r += Eigen::Index(count);
    };
    auto bodies_of = [](const Bodies& B) { return std::vector<int>(B.b.begin(), B.b.begin() + B.n); };
    for (std::size_t i = 0; i < d_.joints.size(); ++i) {
      DiffValue a;
      for (std::size_t k = 0; k < d_.joints[i].rows.size(); ++k)
        dot(d_.joints[i].rows[k], q, q, &J, Eigen::Index(k), nullptr, &a, same_d1_[i][k]);
      gather(bodies_of(bodies(d_.joints[i])), d_.joints[i].rows.size());
    }
    for (const auto& c : d_.couplers) {
      std::vector<int> bs;
      for (std::size_t k = 0; k < c.joints.size(); ++k) {
        const Joint& j = d_.joints[std::size_t(c.joints[k])];
        double x, xd;
        coordinate(j, q, q, x, xd, nullptr, nullptr, c.coefficients[k], &J, 0);
        for (int b : bodies_of(bodies(j)))
          if (std::find(bs.begin(), bs.end(), b) == bs.end()) bs.push_back(b);
      }
      gather(bs, 1);
    }
    for (const auto& mo : d_.motions) {
      const Joint& j = d_.joints[std::size_t(mo.joint)];
      double x, xd;
      coordinate(j, q, q, x, xd, nullptr, nullptr, 1.0, &J, 0);
      gather(bodies_of(bodies(j)), 1);
    }
    if (!rank.compute(Eigen::Index(m_), Eigen::Index(n_), t))
      throw ParameterError(base_ + "/joints",
                           "the constraint Jacobian could not be factorized (a number in it is not finite)");
  }

  // The pointer and name of the joint (or coupler) with the largest |Φ|; the normalization
  // rows only follow the others.
  std::pair<std::string, std::string> largest_residual(const Eigen::VectorXd& phi) const {
    std::string where = base_ + "/joints", what = "the joints";
    double worst = -1.0;
    Eigen::Index r = Eigen::Index(nb_);
    for (const auto& j : d_.joints)
      for (std::size_t k = 0; k < j.rows.size(); ++k, ++r)
        if (std::abs(phi[r]) > worst) worst = std::abs(phi[r]), where = j.pointer, what = "joint \"" + j.name + "\"";
    for (const auto& c : d_.couplers) {
      if (std::abs(phi[r]) > worst) worst = std::abs(phi[r]), where = c.pointer, what = "coupler \"" + c.name + "\"";
      ++r;
    }
    return {where, what};
  }

  // report_ and the warnings of the assembly: rows that depend on others (by joint), and bodies
  // the projection moved further than `move_tolerance` (m, or rad for a turn).
  void report_assembly(const ConstraintRank& rank, const Eigen::VectorXd& start, const Eigen::VectorXd& phi_start,
                       double phi0, double phi1, int it, const Eigen::VectorXd& vin, const Eigen::VectorXd& Jv_in,
                       const Eigen::VectorXd& phi_t, double move_tolerance) {
    const Eigen::Index r = rank.rank(), n = Eigen::Index(n_);
    double max_dr = 0.0, max_dp = 0.0, max_turn = 0.0;
    std::size_t moved = 0, turned = 0;
    for (std::size_t b = 0; b < nb_; ++b) {
      const auto o = Eigen::Index(7 * b);
      const double dr = (q0_ - start).segment<3>(o).norm(), dp = (q0_ - start).segment<4>(o + 3).norm();
      const double turn = 4.0 * std::asin(std::min(1.0, 0.5 * dp));  // the chord of unit 4-vectors, twice the angle
      if (dr > max_dr) max_dr = dr, moved = b;
      if (turn > max_turn) max_turn = turn, turned = b;
      max_dp = std::max(max_dp, dp);
    }
    const std::vector<ConstraintLabel> labels = constraint_labels();
    json redundant = json::array();
    std::string listed;
    for (Eigen::Index row : rank.dependent()) {
      const std::string& source = labels[std::size_t(row)].source;
      if (!redundant.empty() && redundant.back()["source"] == source) {
        redundant.back()["rows"] = redundant.back()["rows"].get<int>() + 1;
        continue;
      }
      redundant.push_back({{"source", source}, {"rows", 1}});
    }
    for (const auto& x : redundant)
      listed += (listed.empty() ? "" : ", ") + x["source"].get<std::string>() + " (" +
                std::to_string(x["rows"].get<int>()) + ")";
    json bodies = json::array();
    for (const auto& b : d_.bodies) bodies.push_back(b.name);
    report_ = {{"bodies", bodies},
               {"geometry", geometry_report(d_)},
               {"coordinates", n_},
               {"constraints", m_},
               {"constraint_rank", r},
               {"redundant_constraints", Eigen::Index(m_) - r},
               {"degrees_of_freedom", n - r},
               {"initial_assembly",
                {{"newton_iterations", it},
                 {"residual_before", phi0},
                 {"residual_after", phi1},
                 {"max_position_change", max_dr},
                 {"max_euler_parameter_change", max_dp},
                 {"velocity_residual_before", Jv_in.size() ? Jv_in.cwiseAbs().maxCoeff() : 0.0},
                 {"velocity_residual_after", m_ ? (rank.jacobian() * v0_ + phi_t).cwiseAbs().maxCoeff() : 0.0},
                 {"velocity_change", (v0_ - vin).norm()}}}};
    if (!redundant.empty()) {
      report_["redundant_rows"] = redundant;
      warnings_.push_back(format_text("{} of the {} constraint equations depend on the others and are left out of the "
                                      "solution (equations per source: ",
                                      m_ - std::size_t(r), m_) +
                          listed +
                          "): a joint given twice, or a planar mechanism described with spatial joints "
                          "(\"planar\": true gives it no out-of-plane equations)");
    }
    if (max_dr > move_tolerance || max_turn > move_tolerance) {
      const auto [where, what] = largest_residual(phi_start);
      double worst = 0.0;
      for (Eigen::Index k = Eigen::Index(nb_); k < phi_start.size(); ++k)
        worst = std::max(worst, std::abs(phi_start[k]));
      warnings_.push_back(format_text(
          "the initial assembly moved body \"{}\" by {} m and turned body \"{}\" by {} rad, "
          "more than assembly_move_tolerance = {}: the description does not close where its "
          "bodies are placed; the largest initial residual, {}, is at {} ({}): check its "
          "points and axes",
          d_.bodies[moved].name, max_dr, d_.bodies[turned].name, max_turn, move_tolerance, worst, what, where));
      report_["initial_assembly"]["max_turn"] = max_turn;
    }
    json fe = json::array();
    for (const auto& f : forces_)
      fe.push_back({{"name", d_.external[f.index].name},
                    {"plugin", d_.external[f.index].plugin},
                    {"report", f.element->report()}});
    if (!fe.empty()) report_["force_elements"] = fe;
  }

  // Static equilibrium with the actuators locked: unknowns x = [q, λ, μ], residual
  //   f(0, q, 0) + Φ_qᵀ λ + D_iᵀ μ = 0,   Φ(q) = 0,   s(q) = s(q_start);
  // Newton with a finite-difference ∂f/∂q and minimum-norm steps (directions nothing resists,
  // like a vehicle's horizontal position on level ground, stay where they are).
  void settle(int max_it) {
    const auto n = Eigen::Index(n_), m = Eigen::Index(m_), p = Eigen::Index(p_);
    static_solve_ = true;
    const Eigen::VectorXd zero = Eigen::VectorXd::Zero(n);
    Eigen::VectorXd q = q0_, s0(p), s(p), f(n), f2(n), phi(m), R(n + m + p), x(n + m + p);
    Eigen::MatrixXd Jq(m, n), D(p, n), Jn(n + m + p, n + m + p);
    auto lengths = [&](const Eigen::VectorXd& qq, Eigen::VectorXd& out) {
      for (std::size_t k = 0; k < p_; ++k) {
        double sd;
        pair(d_.actuators[k].at, qq, zero, out[Eigen::Index(k)], sd, nullptr, nullptr);
      }
    };
    lengths(q, s0);
    Eigen::VectorXd lam = Eigen::VectorXd::Zero(m), mu = Eigen::VectorXd::Zero(p);
    auto residual = [&](const Eigen::VectorXd& qq, Eigen::VectorXd& out) {
      applied_forces(0.0, qq, zero, f);
      constraint_jacobian(0.0, qq, Jq);
      interface_jacobian(qq, D);
      out.head(n) = f + Jq.transpose() * lam + D.transpose() * mu;
      constraints(0.0, qq, phi);
      out.segment(n, m) = phi;
      lengths(qq, s);
      out.tail(p) = s - s0;
    };
    double weight = 0.0;
    for (const auto& b : d_.bodies) weight += b.mass * d_.gravity.norm();
    weight = std::max(weight, 1.0);
    int it = 0;
    double res = 0.0;
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;
    for (; it < max_it; ++it) {
      residual(q, R);
      res = std::max(R.head(n).cwiseAbs().maxCoeff() / weight, R.tail(m + p).cwiseAbs().maxCoeff());
      if (res < 1e-10) break;
      Jn.setZero();
      const Eigen::VectorXd R0 = R;
      for (Eigen::Index j = 0; j < n; ++j) {
        const double dq = 1e-7 * std::max(1.0, std::abs(q[j]));
        Eigen::VectorXd qp = q;
        qp[j] += dq;
        residual(qp, R);
        Jn.col(j) = (R - R0) / dq;
      }
      constraint_jacobian(0.0, q, Jq);
      interface_jacobian(q, D);
      Jn.block(0, n, n, m) = Jq.transpose();
      Jn.block(0, n + m, n, p) = D.transpose();
      // Rows scaled so forces and lengths weigh alike.
      Eigen::VectorXd Rs = R0;
      Rs.head(n) /= weight;
      Jn.topRows(n) /= weight;
      cod.setThreshold(1e-12);
      cod.compute(Jn);
      x = cod.solve(Rs);
      q -= x.head(n);
      lam -= x.segment(n, m);
      mu -= x.tail(p);
    }
    static_solve_ = false;
    if (!(res < 1e-8))
      throw ParameterError(
          base_ + "/static_equilibrium",
          format_text("no static equilibrium found: after {} Newton iterations the relative force residual is {}", it,
                      res));
    q0_ = q;
    settled_velocities();
    static_report_ = {{"newton_iterations", it}, {"relative_residual", res},
                      {"actuator_forces", std::vector<double>(mu.data(), mu.data() + p)},
                      {"max_position_change", (q - q_assembled_).cwiseAbs().maxCoeff()}};
  }

  // The description's velocities at the settled configuration (its rotation rates through the
  // settled Euler parameters), projected onto Φ_q v + Φ_t = 0: a vehicle can settle on its
  // suspension and start rolling.
  void settled_velocities() {
    const auto m = Eigen::Index(m_);
    for (std::size_t b = 0; b < nb_; ++b) {
      const auto o = Eigen::Index(7 * b);
      v0_.segment<3>(o) = d_.bodies[b].v0;
      v0_.segment<4>(o + 3) = 0.5 * E_matrix(Vec4(q0_.segment<4>(o + 3))).transpose() * d_.bodies[b].w0;
    }
    for (std::size_t k = 0; k < nr_; ++k) v0_[rotor_index(k)] = d_.rotors[k].rate0;
    Eigen::MatrixXd J(m, Eigen::Index(n_));
    Eigen::VectorXd phi_t(m);
    constraint_jacobian(0.0, q0_, J);
    constraint_rate(0.0, q0_, phi_t);
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod;
    cod.setThreshold(1e-10);
    cod.compute(J);
    v0_ -= cod.solve(J * v0_ + phi_t);
  }

  // Last evaluation of each force element (a pure function of t and its body's q, v).
  struct Memo {
    bool valid = false;
    double t = 0.0, spin = 0.0;
    Eigen::Matrix<double, 7, 1> q, v;
    Eigen::Matrix<double, 8, 1> f;
  };
  mutable std::vector<Memo> memo_;
  struct RotationMemo {
    bool valid = false;
    Vec4 p;
    Mat3 A;
  };
  mutable std::vector<RotationMemo> rotations_;
  std::vector<std::vector<bool>> same_d1_;  // per joint row: d1 equals the previous row's

  std::string file_, base_;  // description file ("" when inline) and the pointer prefix
  bool static_solve_ = false;
  Eigen::VectorXd q_assembled_;
  std::vector<std::string> warnings_;  // of the description and the assembly, said once a logger is bound
  json static_report_;

  Description d_;
  std::size_t nb_ = 0, nr_ = 0, n_ = 0, m_ = 0, p_ = 0;
  std::vector<double> kappa_;
  std::vector<LoadedForce> forces_;
  std::vector<JointEffort> drive_efforts_;  // per drive: its joint, for effort_force()
  Eigen::VectorXd q0_, v0_;
  Eigen::VectorXd qw_, vw_, f0_, fp_, lam_;  // force_derivatives() work
  Eigen::MatrixXd D_;
  Eigen::VectorXd s_, sd_, bias_;
  json report_;
};

}  // namespace

STRIDE_PLUGIN(Mechanism)
