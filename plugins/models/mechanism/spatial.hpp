// Spatial rigid-body kinematics in Euler parameters (Nikravesh, Computer-Aided Analysis of
// Mechanical Systems, ch. 6 and 11; Peiret 2018 Sect. 4.2 uses the same coordinates).
// A body's coordinates are q_b = [r, p]: centre of mass r (3) and Euler parameters
// p = [e0, e] (4, |p| = 1); its velocities are v_b = [ṙ, ṗ].
//   A(p) = (e0² − eᵀe) I + 2 e eᵀ + 2 e0 ẽ   (homogeneous quadratic; a rotation when |p| = 1)
//   ω  = 2 E(p) ṗ,  E = [−e, ẽ + e0 I]   (global angular velocity)
//   ω' = 2 G(p) ṗ,  G = [−e, −ẽ + e0 I]  (body-frame angular velocity)
// Since A(p) s is quadratic in p, its p-Jacobian J(p, s) is linear in p and
//   d/dt (A s) = J(p, s) ṗ,   d²/dt² (A s) = J(p, s) p̈ + J(ṗ, s) ṗ,
// which gives every bias term (the part of the acceleration with zero p̈) in closed form.
#pragma once

#include <cmath>

#include <Eigen/Dense>

namespace stride::mechanism {

using Vec3 = Eigen::Vector3d;
using Vec4 = Eigen::Vector4d;
using Mat3 = Eigen::Matrix3d;
using Mat34 = Eigen::Matrix<double, 3, 4>;

inline Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return s;
}

inline Mat3 rotation(const Vec4& p) {
  const double e0 = p[0];
  const Vec3 e = p.tail<3>();
  return (e0 * e0 - e.squaredNorm()) * Mat3::Identity() + 2.0 * e * e.transpose() + 2.0 * e0 * skew(e);
}

// ∂(A(p) s)/∂p = 2 [e0 s + e × s,  (e·s) I + e sᵀ − s eᵀ − e0 s̃].
inline Mat34 rotation_jacobian(const Vec4& p, const Vec3& s) {
  const double e0 = p[0], e1 = p[1], e2 = p[2], e3 = p[3];
  const double es = e1 * s[0] + e2 * s[1] + e3 * s[2];
  Mat34 J;
  J(0, 0) = 2.0 * (e0 * s[0] + e2 * s[2] - e3 * s[1]);
  J(1, 0) = 2.0 * (e0 * s[1] + e3 * s[0] - e1 * s[2]);
  J(2, 0) = 2.0 * (e0 * s[2] + e1 * s[1] - e2 * s[0]);
  J(0, 1) = 2.0 * es;
  J(0, 2) = 2.0 * (e1 * s[1] - s[0] * e2 + e0 * s[2]);
  J(0, 3) = 2.0 * (e1 * s[2] - s[0] * e3 - e0 * s[1]);
  J(1, 1) = 2.0 * (e2 * s[0] - s[1] * e1 - e0 * s[2]);
  J(1, 2) = 2.0 * es;
  J(1, 3) = 2.0 * (e2 * s[2] - s[1] * e3 + e0 * s[0]);
  J(2, 1) = 2.0 * (e3 * s[0] - s[2] * e1 + e0 * s[1]);
  J(2, 2) = 2.0 * (e3 * s[1] - s[2] * e2 - e0 * s[0]);
  J(2, 3) = 2.0 * es;
  return J;
}

// J(ṗ, s) ṗ = 2 (ė0² s + 2 ė0 ė × s + 2 (ė·s) ė − (ė·ė) s): d²(A s)/dt² with p̈ = 0.
inline Vec3 rotation_bias(const Vec4& pd, const Vec3& s) {
  const double d0 = pd[0];
  const Vec3 d = pd.tail<3>();
  return 2.0 * ((d0 * d0 - d.squaredNorm()) * s + 2.0 * d0 * d.cross(s) + 2.0 * d.dot(s) * d);
}

inline Mat34 E_matrix(const Vec4& p) {
  Mat34 E;
  E.col(0) = -p.tail<3>();
  E.rightCols<3>() = skew(p.tail<3>()) + p[0] * Mat3::Identity();
  return E;
}
inline Mat34 G_matrix(const Vec4& p) {
  Mat34 G;
  G.col(0) = -p.tail<3>();
  G.rightCols<3>() = -skew(p.tail<3>()) + p[0] * Mat3::Identity();
  return G;
}

// Euler parameters of a rotation matrix (Shepperd's method: the largest of the four squares
// first, so no division by a small number).
inline Vec4 euler_parameters(const Mat3& A) {
  const double tr = A.trace();
  const Eigen::Vector4d sq(tr, A(0, 0), A(1, 1), A(2, 2));
  Eigen::Index k;
  sq.maxCoeff(&k);
  Vec4 p;
  if (k == 0) {
    p[0] = 0.5 * std::sqrt(1.0 + tr);
    p[1] = (A(2, 1) - A(1, 2)) / (4 * p[0]);
    p[2] = (A(0, 2) - A(2, 0)) / (4 * p[0]);
    p[3] = (A(1, 0) - A(0, 1)) / (4 * p[0]);
  } else {
    const int i = int(k) - 1, j = (i + 1) % 3, l = (i + 2) % 3;
    const double ei = 0.5 * std::sqrt(std::max(0.0, 1.0 + 2.0 * A(i, i) - tr));
    p[1 + i] = ei;
    p[0] = (A(l, j) - A(j, l)) / (4 * ei);
    p[1 + j] = (A(j, i) + A(i, j)) / (4 * ei);
    p[1 + l] = (A(l, i) + A(i, l)) / (4 * ei);
  }
  if (p[0] < 0) p = -p;
  return p;
}

// Rotation by `angle` about the unit vector `axis`.
inline Vec4 axis_angle(const Vec3& axis, double angle) {
  Vec4 p;
  p[0] = std::cos(0.5 * angle);
  p.tail<3>() = std::sin(0.5 * angle) * axis.normalized();
  return p;
}

}  // namespace stride::mechanism
