// The mechanism as stride view draws it: the "geometry" block of the plugin's report. Per body
// its shape in body coordinates (centre of mass origin, body axes): a box, cylinder, sphere or mesh
// from the description's "shape", or else the uniform box with the body's principal moments
// of inertia and mass; per joint its point on the body that carries it; per contact its sphere
// (centre on its body, radius). Called once, after
// assembly (the bodies' final centres of mass, rotors merged); allocates.
#pragma once

#include <algorithm>
#include <cmath>

#include <Eigen/Eigenvalues>
#include <Eigen/Geometry>

#include "description.hpp"

namespace stride::mechanism {

inline json quaternion_json(const Mat3& R) {
  Eigen::Quaterniond q(R);
  q.normalize();
  return json::array({q.w(), q.x(), q.y(), q.z()});  // Euler parameters e0..e3
}

// The box of a uniform body with these principal moments: edge² = 6 (I_j + I_k − I_i) / m.
inline json inertia_box(const Body& b) {
  Eigen::SelfAdjointEigenSolver<Mat3> es(b.inertia);
  Mat3 axes = es.eigenvectors();
  if (axes.determinant() < 0) axes.col(2) = -axes.col(2);
  const Vec3 I = es.eigenvalues();
  Vec3 edge;
  for (int i = 0; i < 3; ++i) edge[i] = std::sqrt(std::max(0.0, 6.0 * (I.sum() - 2.0 * I[i]) / b.mass));
  edge = edge.cwiseMax(0.02 * edge.maxCoeff());  // a rod or a plate stays visible
  return {{"name", b.name},
          {"from", "inertia"},
          {"shape", "box"},
          {"size", {edge[0], edge[1], edge[2]}},
          {"offset", {0.0, 0.0, 0.0}},
          {"rotation", quaternion_json(axes)}};
}

inline json body_geometry(const Body& b) {
  const Shape& s = b.shape;
  if (s.type == Shape::Type::none) return inertia_box(b);
  const Mat3 A0 = rotation(b.p0);
  const Vec3 offset = A0.transpose() * (s.centre - b.r0);
  json g = {{"name", b.name},
            {"from", "shape"},
            {"offset", {offset[0], offset[1], offset[2]}},
            {"rotation", quaternion_json(A0.transpose())}};  // the shape's axes are the placed global axes
  if (s.type == Shape::Type::box) {
    g["shape"] = "box";
    g["size"] = {s.size[0], s.size[1], s.size[2]};
  } else if (s.type == Shape::Type::mesh) {
    g["shape"] = "mesh";
    g["triangles"] = s.triangles;
  } else if (s.type == Shape::Type::sphere) {
    g["shape"] = "sphere";
    g["radius"] = s.radius;
  } else {
    g["shape"] = "cylinder";
    g["radius"] = s.radius;
    g["length"] = s.length;
    g["axis"] = {s.axis[0], s.axis[1], s.axis[2]};
  }
  return g;
}

inline json geometry_report(const Description& d) {
  json bodies = json::array(), joints = json::array();
  for (const auto& b : d.bodies) bodies.push_back(body_geometry(b));
  for (const auto& j : d.joints) {
    if (j.name.rfind("plane of ", 0) == 0) continue;  // the planar constraints added by "planar"
    const int on = j.body_j != kGround ? j.body_j : j.body_i;
    Vec3 p = j.point;
    if (on != kGround) {
      const Body& b = d.bodies[std::size_t(on)];
      p = rotation(b.p0).transpose() * (j.point - b.r0);
    }
    joints.push_back({{"name", j.name},
                      {"body", on == kGround ? "ground" : d.bodies[std::size_t(on)].name},
                      {"point", {p[0], p[1], p[2]}}});
  }
  json contacts = json::array();
  for (const auto& c : d.contacts) {
    const Vec3& s = c.centre.s;  // body coordinates (a contact is always on a moving body)
    contacts.push_back({{"name", c.name},
                        {"body", d.bodies[std::size_t(c.centre.body)].name},
                        {"point", {s[0], s[1], s[2]}},
                        {"radius", c.radius}});
  }
  return {{"bodies", bodies}, {"joints", joints}, {"contacts", contacts}};
}

}  // namespace stride::mechanism
