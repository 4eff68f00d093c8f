// Ports, parameters and interface forces shared by the planar crane models
// (crane_independent, crane_dependent): Peiret 2018 Sect. 4.1-4.1.1, BENCHMARKS.md §1-2.
//
// Coupling "force" (velocity-force): input f_h (N, one element per actuator), positive along
// increasing s; it pairs with output s_dot in the power bond "actuator".
// Coupling "pressure" (velocity-pressure): inputs p1, p2 (Pa) per actuator and
// λ_i = (p2 − p1) a_p − c ṡ (Eq. 24) on the multibody side; the piston volume rates
// flow1 = −a_p ṡ and flow2 = a_p ṡ pair with p1, p2 in the bonds "chamber1", "chamber2".
// Outputs: s, s_dot, s_ddot (feedthrough), M_eff (row-major p x p), f_eff, energy, x_R, y_R,
// x_R_dot [, flow1, flow2].
#pragma once

#include <string>
#include <vector>

#include "../../common/crane.hpp"

namespace stride::crane {

// Actuator and tip kinematics at (q, v), for both actuators (rows beyond p unused).
struct Kinematics {
  Eigen::Vector2d s, s_dot, bias;  // bias = Ḋ_i v
  Eigen::Vector2d R, R_dot;
};

class CraneModel : public MultibodyModel {
 public:
  static std::vector<ParamSpec> common_params() {
    std::vector<ParamSpec> ps = geometry_params();
    ps.push_back(integer_param("actuators", 1,
                               "1: actuator B-P (Sect. 4.1); 2: plus P to the midpoint of link 2 (Sect. 4.1.1)", 1, 2));
    ps.push_back(choice_param(
        "coupling", "force", {"force", "pressure"},
        "force: input actuator forces f_h; pressure: input chamber pressures p1, p2 (Eq. 24 on this side)"));
    ps.push_back(real_param("a_p", 65e-4, "m^2", "piston area (pressure coupling only)", 0.0));
    ps.push_back(real_param("c", 1e5, "N*s/m", "cylinder viscous friction (pressure coupling only)", 0.0));
    return ps;
  }

  explicit CraneModel(const Params& p)
      : geo_(geometry_from(p)), p_(std::size_t(p.integer("actuators"))),
        pressure_(p.string("coupling") == "pressure"), a_p_(p.real("a_p")), c_(p.real("c")) {}

  std::vector<PortSpec> ports() const override {
    std::vector<PortSpec> ps;
    const auto names = [this](const std::string& prefix, const std::string& suffix) {
      std::vector<std::string> e;
      for (std::size_t k = 1; k <= p_; ++k) e.push_back(prefix + std::to_string(k) + suffix);
      return e;
    };
    const auto with = [](PortSpec s, std::vector<std::string> e) {
      s.elements = std::move(e);
      return s;
    };
    if (pressure_) {
      ps.push_back(with(
          bonded(input("p1", p_, "Pa", "pressure of chamber 1 (shrinks as s grows)"), BondRole::effort, "chamber1"),
          names("p1_", "")));
      ps.push_back(
          with(bonded(input("p2", p_, "Pa", "pressure of chamber 2 (grows with s)"), BondRole::effort, "chamber2"),
               names("p2_", "")));
    } else {
      ps.push_back(with(
          bonded(input("f_h", p_, "N", "actuator forces, positive along increasing s"), BondRole::effort, "actuator"),
          names("f", "")));
    }
    PortSpec s_dot =
        with(output("s_dot", p_, "m/s", "actuator elongation rates (interface velocities)"), names("s", "_dot"));
    if (!pressure_) s_dot = bonded(std::move(s_dot), BondRole::flow, "actuator");
    ps.push_back(with(output("s", p_, "m", "actuator lengths"), names("s", "")));
    ps.push_back(std::move(s_dot));
    ps.push_back(with(output("s_ddot", p_, "m/s^2", "actuator accelerations with the current input", true),
                      names("s", "_ddot")));
    std::vector<std::string> me;
    for (std::size_t i = 1; i <= p_; ++i)
      for (std::size_t j = 1; j <= p_; ++j) me.push_back("M" + std::to_string(i) + std::to_string(j));
    ps.push_back(with(
        output("M_eff", p_ * p_, "kg", "effective mass of the reduced interface model (Eq. 12/17), row-major"), me));
    ps.push_back(
        with(output("f_eff", p_, "N", "effective force of the reduced interface model (Eq. 13/18)"), names("f", "")));
    ps.push_back(output("energy", 1, "J", "mechanical energy, kinetic + gravitational"));
    ps.push_back(output("x_R", 1, "m", "x of the tip mass R"));
    ps.push_back(output("y_R", 1, "m", "y of the tip mass R"));
    ps.push_back(output("x_R_dot", 1, "m/s", "x velocity of the tip mass R"));
    if (pressure_) {
      ps.push_back(
          with(bonded(output("flow1", p_, "m^3/s", "-a_p s_dot: volume rate the piston pushes out of chamber 1"),
                      BondRole::flow, "chamber1"),
               names("flow1_", "")));
      ps.push_back(with(bonded(output("flow2", p_, "m^3/s", "a_p s_dot: volume rate the piston sweeps into chamber 2"),
                               BondRole::flow, "chamber2"),
                        names("flow2_", "")));
    }
    return ps;
  }

  void interface_forces(double t, ConstVectorRef q, ConstVectorRef v, VectorRef lambda_i) override {
    if (pressure_) {
      kinematics(q, v, kin_);
      const auto p1 = inputs().at(0, t);
      for (std::size_t k = 0; k < p_; ++k) lambda_i[Eigen::Index(k)] = p1[k];
      const auto p2 = inputs().at(1, t);
      for (std::size_t k = 0; k < p_; ++k)
        lambda_i[Eigen::Index(k)] = (p2[k] - lambda_i[Eigen::Index(k)]) * a_p_ - c_ * kin_.s_dot[Eigen::Index(k)];
    } else {
      const auto f = inputs().at(0, t);
      for (std::size_t k = 0; k < p_; ++k) lambda_i[Eigen::Index(k)] = f[k];
    }
  }

  void interface_bias(ConstVectorRef q, ConstVectorRef v, VectorRef b_i) override {
    kinematics(q, v, kin_);
    b_i = kin_.bias.head(Eigen::Index(p_));
  }

  void outputs(const MultibodyState& st, std::span<double> y) override {
    kinematics(st.q, st.v, kin_);
    interface_jacobian(st.q, D_);
    const auto p = Eigen::Index(p_);
    std::size_t o = 0;
    for (Eigen::Index k = 0; k < p; ++k) y[o++] = kin_.s[k];
    for (Eigen::Index k = 0; k < p; ++k) y[o++] = kin_.s_dot[k];
    for (Eigen::Index k = 0; k < p; ++k) y[o++] = D_.row(k).dot(st.v_dot) + kin_.bias[k];
    for (Eigen::Index i = 0; i < p; ++i)
      for (Eigen::Index j = 0; j < p; ++j) y[o++] = st.M_eff(i, j);
    for (Eigen::Index k = 0; k < p; ++k) y[o++] = st.f_eff[k];
    y[o++] = energy_at(st.t, st.q, st.v);
    y[o++] = kin_.R[0];
    y[o++] = kin_.R[1];
    y[o++] = kin_.R_dot[0];
    if (pressure_) {
      for (Eigen::Index k = 0; k < p; ++k) y[o++] = -a_p_ * kin_.s_dot[k];
      for (Eigen::Index k = 0; k < p; ++k) y[o++] = a_p_ * kin_.s_dot[k];
    }
  }

  json report() const override {
    const Eigen::Vector2d f = equilibrium_forces(geo_, {geo_.theta1_0, geo_.theta2_0}, int(p_));
    return {{"equilibrium_actuator_forces", std::vector<double>(f.data(), f.data() + p_)}};
  }

  const Geometry& geometry() const { return geo_; }

 protected:
  virtual void kinematics(ConstVectorRef q, ConstVectorRef v, Kinematics& k) const = 0;

  Geometry geo_;
  std::size_t p_;
  bool pressure_;
  double a_p_, c_;
  Kinematics kin_;
  Eigen::MatrixXd D_;  // sized by the derived constructor
};

}  // namespace stride::crane
