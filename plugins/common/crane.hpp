// Planar hydraulic crane of Peiret et al. 2018, Sect. 4.1 / 4.1.1 (BENCHMARKS.md §1-2):
// geometry, mass, gravity and actuator kinematics in independent coordinates q = [θ1, θ2]
// and dependent coordinates x = [x_P, y_P, θ1, x_R, y_R] (Eq. 21b).
//
// Link 1: uniform rod O→Q (length L, mass m), pivot O at the origin, point mass m_p at Q.
// Link 2: massless Q→R (length L_h), point mass m_h at R; θ2 is its absolute angle.
// Actuator 1 joins the fixed point B to P, the midpoint of link 1 (length s1).
// Actuator 2 joins P to the midpoint of link 2 (length s2). Since Q = 2P, that midpoint
// minus P is R/2, so s2 = |R|/2 on the constraint manifold (this is Eq. 34's D_i row 2).
// Gravity acts along −y with magnitude g.
//
// Everything here is header-only, allocation-free (fixed-size Eigen) and shared by the
// multibody model plugins and the monolithic crane + hydraulics solver. Actuator rows are
// always computed for both actuators; a single-actuated crane uses row 0 only.
#pragma once

#include <cmath>
#include <numbers>
#include <vector>

#include <Eigen/Dense>

#include <stride/stride.hpp>

namespace stride::crane {

using Vector5d = Eigen::Matrix<double, 5, 1>;
using Matrix5d = Eigen::Matrix<double, 5, 5>;
using Matrix35d = Eigen::Matrix<double, 3, 5>;
using Matrix25d = Eigen::Matrix<double, 2, 5>;

// Table 1 of Peiret 2018.
struct Geometry {
  double L = 1.0;                             // length of link 1 (m)
  double L_h = 0.5;                           // length of link 2 (m)
  double m = 200.0;                           // mass of link 1 (kg)
  double m_p = 250.0;                         // point mass at Q (kg)
  double m_h = 100.0;                         // point mass at R (kg)
  double x_B = std::numbers::sqrt3 / 2.0;     // fixed point B (m)
  double y_B = 0.0;                           // (m)
  double theta1_0 = std::numbers::pi / 6.0;   // initial angle of link 1 (rad)
  double theta2_0 = 1.5 * std::numbers::pi;   // initial absolute angle of link 2 (rad)
  double g = 9.81;                            // gravity magnitude, along −y (m/s²)
};

// ParamSpecs of Table 1 with the paper's values as defaults.
inline std::vector<ParamSpec> geometry_params() {
  const Geometry d;
  return {
      real_param("L", d.L, "m", "length of link 1 (uniform rod O-Q)", 1e-3),
      real_param("L_h", d.L_h, "m", "length of link 2 (massless, Q-R)", 1e-3),
      real_param("m", d.m, "kg", "mass of link 1", 1e-6),
      real_param("m_p", d.m_p, "kg", "point mass at Q, the tip of link 1", 0.0),
      real_param("m_h", d.m_h, "kg", "point mass at R, the tip of link 2", 1e-6),
      real_param("x_B", d.x_B, "m", "x of the fixed actuator point B"),
      real_param("y_B", d.y_B, "m", "y of the fixed actuator point B"),
      real_param("theta1_0", d.theta1_0, "rad", "initial angle of link 1"),
      real_param("theta2_0", d.theta2_0, "rad", "initial absolute angle of link 2"),
      real_param("g", d.g, "m/s^2", "gravity acceleration magnitude, acting along -y", 0.0),
  };
}

inline Geometry geometry_from(const Params& p) {
  Geometry c;
  c.L = p.real("L");
  c.L_h = p.real("L_h");
  c.m = p.real("m");
  c.m_p = p.real("m_p");
  c.m_h = p.real("m_h");
  c.x_B = p.real("x_B");
  c.y_B = p.real("y_B");
  c.theta1_0 = p.real("theta1_0");
  c.theta2_0 = p.real("theta2_0");
  c.g = p.real("g");
  return c;
}

// ---- Independent coordinates q = [θ1, θ2], v = q̇ --------------------------------------

// M v̇ + c = f + A_iᵀ λ_i (Eq. 20).
inline Eigen::Matrix2d mass_matrix(const Geometry& c, const Eigen::Vector2d& q) {
  const double m12 = c.m_h * c.L * c.L_h * std::cos(q[0] - q[1]);
  Eigen::Matrix2d M;
  M << c.m * c.L * c.L / 3.0 + (c.m_p + c.m_h) * c.L * c.L, m12, m12, c.m_h * c.L_h * c.L_h;
  return M;
}

inline Eigen::Vector2d coriolis(const Geometry& c, const Eigen::Vector2d& q, const Eigen::Vector2d& v) {
  const double k = c.m_h * c.L * c.L_h * std::sin(q[0] - q[1]);
  return {k * v[1] * v[1], -k * v[0] * v[0]};
}

inline Eigen::Vector2d gravity_forces(const Geometry& c, const Eigen::Vector2d& q) {
  return {-c.g * std::cos(q[0]) * (0.5 * c.m + c.m_p + c.m_h) * c.L,
          -c.g * c.m_h * c.L_h * std::cos(q[1])};
}

inline double potential_energy(const Geometry& c, const Eigen::Vector2d& q) {
  return c.g * ((0.5 * c.m + c.m_p + c.m_h) * c.L * std::sin(q[0]) + c.m_h * c.L_h * std::sin(q[1]));
}

inline double kinetic_energy(const Geometry& c, const Eigen::Vector2d& q, const Eigen::Vector2d& v) {
  return 0.5 * v.dot(mass_matrix(c, q) * v);
}

inline Eigen::Vector2d point_P(const Geometry& c, const Eigen::Vector2d& q) {
  return 0.5 * c.L * Eigen::Vector2d(std::cos(q[0]), std::sin(q[0]));
}
inline Eigen::Vector2d point_R(const Geometry& c, const Eigen::Vector2d& q) {
  return c.L * Eigen::Vector2d(std::cos(q[0]), std::sin(q[0])) +
         c.L_h * Eigen::Vector2d(std::cos(q[1]), std::sin(q[1]));
}
inline Eigen::Vector2d velocity_R(const Geometry& c, const Eigen::Vector2d& q, const Eigen::Vector2d& v) {
  return c.L * v[0] * Eigen::Vector2d(-std::sin(q[0]), std::cos(q[0])) +
         c.L_h * v[1] * Eigen::Vector2d(-std::sin(q[1]), std::cos(q[1]));
}

// Actuator lengths s, rates ṡ = A v, Jacobian A (Eq. 22, 33) and Ȧ v, so s̈ = A v̇ + Ȧ v.
// Row k is actuator k+1. Positive actuator force λ_k acts along increasing s_k: f_i = Aᵀ λ.
struct Actuators {
  Eigen::Vector2d s, s_dot, A_dot_v;
  Eigen::Matrix2d A;
};

inline Actuators actuators(const Geometry& c, const Eigen::Vector2d& q, const Eigen::Vector2d& v) {
  Actuators a;
  const double s1t = std::sin(q[0]), c1t = std::cos(q[0]);
  // s1 = |P − B|
  const Eigen::Vector2d d1 = point_P(c, q) - Eigen::Vector2d(c.x_B, c.y_B);
  a.s[0] = d1.norm();
  const double a11 = c.L * (c.x_B * s1t - c.y_B * c1t) / (2.0 * a.s[0]);
  a.A.row(0) << a11, 0.0;
  a.s_dot[0] = a11 * v[0];
  a.A_dot_v[0] = c.L * (c.x_B * c1t + c.y_B * s1t) * v[0] * v[0] / (2.0 * a.s[0]) -
                 a.s_dot[0] * a.s_dot[0] / a.s[0];
  // s2 = |midpoint of link 2 − P|, s2² = (L² + L_h² + 2 L L_h cos(θ1−θ2)) / 4
  const double d12 = q[0] - q[1];
  a.s[1] = 0.5 * std::sqrt(c.L * c.L + c.L_h * c.L_h + 2.0 * c.L * c.L_h * std::cos(d12));
  const double k = c.L * c.L_h * std::sin(d12) / (4.0 * a.s[1]);
  a.A.row(1) << -k, k;
  const double w = v[0] - v[1];
  a.s_dot[1] = -k * w;
  a.A_dot_v[1] = -c.L * c.L_h * std::cos(d12) * w * w / (4.0 * a.s[1]) - a.s_dot[1] * a.s_dot[1] / a.s[1];
  return a;
}

// Actuator forces holding the crane at rest at q: A_pᵀ λ = −f(q) with the first p actuators.
// With p = 1 the second generalized force must already vanish (link 2 hanging vertically).
inline Eigen::Vector2d equilibrium_forces(const Geometry& c, const Eigen::Vector2d& q, int p) {
  const Actuators a = actuators(c, q, Eigen::Vector2d::Zero());
  const Eigen::Vector2d f = gravity_forces(c, q);
  if (p == 1) return {-f[0] / a.A(0, 0), 0.0};
  return a.A.transpose().partialPivLu().solve(-f);
}

// ---- Dependent coordinates x = [x_P, y_P, θ1, x_R, y_R], u = ẋ --------------------------
// Link 1 is described by its centre of mass P and angle θ1; m_p sits at Q = 2P.
// H u̇ = g + D_iᵀ λ_i + Dᵀ λ with constant H, hence no velocity-dependent term d.

inline void dependent_from_independent(const Geometry& c, const Eigen::Vector2d& q,
                                       const Eigen::Vector2d& v, Vector5d& x, Vector5d& u) {
  const Eigen::Vector2d P = point_P(c, q), R = point_R(c, q), Rd = velocity_R(c, q, v);
  x << P[0], P[1], q[0], R[0], R[1];
  u << -0.5 * c.L * std::sin(q[0]) * v[0], 0.5 * c.L * std::cos(q[0]) * v[0], v[0], Rd[0], Rd[1];
}

// θ2 from dependent coordinates.
inline double theta2_of(const Geometry& c, const Vector5d& x) {
  return std::atan2(x[4] - c.L * std::sin(x[2]), x[3] - c.L * std::cos(x[2]));
}

inline Matrix5d dependent_mass_matrix(const Geometry& c) {
  const double mP = c.m + 4.0 * c.m_p;
  Matrix5d H = Matrix5d::Zero();
  H.diagonal() << mP, mP, c.m * c.L * c.L / 12.0, c.m_h, c.m_h;
  return H;
}

inline Vector5d dependent_gravity_forces(const Geometry& c) {
  Vector5d g;
  g << 0.0, -(c.m + 2.0 * c.m_p) * c.g, 0.0, 0.0, -c.m_h * c.g;
  return g;
}

inline double dependent_potential_energy(const Geometry& c, const Vector5d& x) {
  return c.g * ((c.m + 2.0 * c.m_p) * x[1] + c.m_h * x[4]);
}

// Eq. 21b.
inline Eigen::Vector3d constraints(const Geometry& c, const Vector5d& x) {
  const double ct = std::cos(x[2]), st = std::sin(x[2]);
  const double ex = x[3] - c.L * ct, ey = x[4] - c.L * st;
  return {c.L * ct - 2.0 * x[0], c.L * st - 2.0 * x[1], ex * ex + ey * ey - c.L_h * c.L_h};
}

inline Matrix35d constraint_jacobian(const Geometry& c, const Vector5d& x) {
  const double ct = std::cos(x[2]), st = std::sin(x[2]);
  const double ex = x[3] - c.L * ct, ey = x[4] - c.L * st;
  Matrix35d D;
  D << -2.0, 0.0, -c.L * st, 0.0, 0.0,
       0.0, -2.0, c.L * ct, 0.0, 0.0,
       0.0, 0.0, 2.0 * c.L * (ex * st - ey * ct), 2.0 * ex, 2.0 * ey;
  return D;
}

// Ḋ u, so that Φ̈ = D u̇ + Ḋ u.
inline Eigen::Vector3d constraint_bias(const Geometry& c, const Vector5d& x, const Vector5d& u) {
  const double ct = std::cos(x[2]), st = std::sin(x[2]), w = u[2];
  const double ex = x[3] - c.L * ct, ey = x[4] - c.L * st;
  const double ex_d = u[3] + c.L * st * w, ey_d = u[4] - c.L * ct * w;
  return {-c.L * ct * w * w, -c.L * st * w * w,
          2.0 * (ex_d * ex_d + ey_d * ey_d) + 2.0 * c.L * w * w * (ex * ct + ey * st)};
}

// s, ṡ = D_i u, D_i (Eq. 23 and row 2 from s2 = |R|/2) and Ḋ_i u.
struct DependentActuators {
  Eigen::Vector2d s, s_dot, D_dot_u;
  Matrix25d D;
};

inline DependentActuators dependent_actuators(const Geometry& c, const Vector5d& x, const Vector5d& u) {
  DependentActuators a;
  a.D.setZero();
  const Eigen::Vector2d d1(x[0] - c.x_B, x[1] - c.y_B), d1_dot(u[0], u[1]);
  a.s[0] = d1.norm();
  a.D(0, 0) = d1[0] / a.s[0];
  a.D(0, 1) = d1[1] / a.s[0];
  a.s_dot[0] = d1.dot(d1_dot) / a.s[0];
  a.D_dot_u[0] = (d1_dot.squaredNorm() - a.s_dot[0] * a.s_dot[0]) / a.s[0];
  const Eigen::Vector2d R(x[3], x[4]), R_dot(u[3], u[4]);
  a.s[1] = 0.5 * R.norm();
  a.D(1, 3) = R[0] / (4.0 * a.s[1]);
  a.D(1, 4) = R[1] / (4.0 * a.s[1]);
  a.s_dot[1] = R.dot(R_dot) / (4.0 * a.s[1]);
  a.D_dot_u[1] = (R_dot.squaredNorm() - 4.0 * a.s_dot[1] * a.s_dot[1]) / (4.0 * a.s[1]);
  return a;
}

}  // namespace stride::crane
