// A spatial mechanism as data: bodies, joints, couplers, force elements, actuators and output
// points, read from the JSON description of the `mechanism` plugin (format in
// docs/reference/mechanism.md). With "planar": true every body gets three equations that
// hold it in its plane (joints named "plane of <body>", after the described ones) and the
// joints keep their in-plane equations only. Every geometric quantity is written in global coordinates
// in the configuration the bodies are placed in; read_description converts them to body
// coordinates. Problems throw stride::ParameterError with the JSON pointer of the value,
// relative to the plugin's parameters.
#pragma once

#include <string>
#include <vector>

#include <stride/stride.hpp>

#include "spatial.hpp"

namespace stride::mechanism {

constexpr int kGround = -1;

// How a body is drawn (stride view's 3D replay; no effect on the dynamics): a box (edge
// lengths along the global axes), a cylinder (radius, length, axis) or a sphere, centred at
// `centre`, all in global coordinates in the placed configuration; `none`: the box of the
// body's inertia (plugin report, "geometry").
struct Shape {
  enum class Type { none, box, cylinder, sphere, mesh } type = Type::none;
  Vec3 size = Vec3::Zero(), centre = Vec3::Zero(), axis = Vec3::UnitZ();
  double radius = 0.0, length = 0.0;
  std::vector<double> triangles;  // mesh: 9 numbers per triangle, in m, the file's axes
};

struct Body {
  std::string name;
  double mass = 0.0;
  Mat3 inertia = Mat3::Zero();  // at the centre of mass, body axes
  Vec3 r0 = Vec3::Zero(), v0 = Vec3::Zero(), w0 = Vec3::Zero();  // w0: global angular velocity
  Vec4 p0 = Vec4(1, 0, 0, 0);
  Shape shape;
};

// An axisymmetric rotor (a wheel, an axle with its wheels, a flywheel) turning on a body, its
// carrier, about an axis through a point. Its spin angle θ is a coordinate of its own (after
// the bodies' 7 each), so a fast rotor turns no body's Euler parameters: a wheel at 200 rad/s
// and a step of 10 ms. Its mass and its inertia across the spin axis are merged into the
// carrier (whose centre of mass and inertia become those of the pair); the spin inertia I_s
// enters the kinetic energy as ½ I_s s², s = θ̇ + a·ω_carrier the rotor's absolute spin rate.
struct Rotor {
  std::string name;
  int body = 0;                  // carrier
  Vec3 axis_b = Vec3::UnitZ();   // spin axis in carrier body coordinates (unit)
  Vec3 centre_b = Vec3::Zero();  // centre in carrier body coordinates
  double mass = 0.0, transverse = 0.0, spin = 0.0;  // kg, kg m² across and about the axis
  double rate0 = 0.0;            // θ̇ at the start (rad/s, relative to the carrier)
};

// A point (r + A s) or a direction (A s) fixed to a body; on the ground s is global.
struct Probe {
  int body = kGround;
  Vec3 s = Vec3::Zero();
  bool point = true;
};

// a − b (b absent when b.body == kGround and b.s == 0 and !b.point... kept simple: has_b).
struct Difference {
  Probe a, b;
  bool has_b = false;
};

// One scalar constraint Φ = d1 · d2 − c (joint rows are all of this form).
struct DotRow {
  Difference d1, d2;
  double c = 0.0;
};

enum class JointType { revolute, prismatic, spherical, universal, cylindrical, fixed, point_on_plane, distance };

struct Joint {
  std::string name, pointer;
  JointType type = JointType::revolute;
  int body_i = kGround, body_j = kGround;
  std::vector<DotRow> rows;
  // Joint coordinate (revolute, cylindrical: angle of j relative to i about the axis;
  // prismatic: displacement of j relative to i along the axis), zero in the description's
  // configuration.
  bool has_angle = false, has_displacement = false;
  Probe axis_i, ref_i, ref_j;  // axis and a perpendicular reference on each body
  Vec3 point = Vec3::Zero();   // the described point (global, placed configuration), for drawing
  DotRow displacement;         // (P_j − P_i) · axis_i − its initial value
};

// Σ_k c_k x_k = 0 over joint coordinates (angles or displacements), e.g. a differential.
struct Coupler {
  std::string name, pointer;
  std::vector<int> joints;
  std::vector<double> coefficients;
};

// Point-to-point element between P_i (on body_i) and P_j: length s = |P_j − P_i|.
struct PointPair {
  Probe from, to;
};

struct SpringDamper {
  PointPair at;
  double stiffness = 0.0, damping = 0.0, length = 0.0, preload = 0.0;  // f = preload − k (s − length) − c ṡ along +s
};

// A joint force or torque: spring-damper on the joint coordinate, a time table (linear
// interpolation, held outside; a constant "value" is a table of one row), or one element of the
// input port "joint_efforts".
struct JointEffort {
  int joint = 0;
  enum class Law { spring_damper, table, input } law = Law::spring_damper;
  double stiffness = 0.0, damping = 0.0, position = 0.0, preload = 0.0;
  std::vector<double> times, values;
  std::size_t input = 0;
};

// A force law from a force-element plugin, acting on one body at a point.
struct ExternalForce {
  std::string plugin, name, pointer;
  int body = 0;
  int rotor = -1;         // >= 0: on this rotor (body is its carrier): it sees the rotor's spin
  Vec3 s = Vec3::Zero();  // attachment point in body coordinates
  json parameters;
};

struct Actuator {
  std::string name;
  PointPair at;
  double area = 0.0, friction = 0.0;  // velocity-pressure coupling: λ = (p2 − p1) area − friction ṡ
};

// Unilateral contact of a sphere (radius ≥ 0; 0: a point) fixed to a body with a plane of the
// ground, Coulomb friction μ (two orthogonal friction rows; nonsmooth.hpp), for `mlcp`.
// With a `surface` the sphere touches a surface fixed to another body (or the ground) instead:
// a plane (point, normal) or an infinite cylinder (point on its axis, axis, radius).
struct ContactSurface {
  enum class Shape { ground_plane, plane, cylinder } shape = Shape::ground_plane;
  int body = kGround;
  Probe point, direction;  // plane: a point and the normal; cylinder: a point on the axis and the axis
  Probe t1, t2;            // plane: its friction directions, fixed to the body
  double radius = 0.0;     // cylinder radius
};

struct Contact {
  std::string name;
  Probe centre;
  Vec3 normal = Vec3::UnitY(), plane_point = Vec3::Zero(), t1 = Vec3::UnitX(), t2 = Vec3::UnitZ();
  double radius = 0.0, friction = 0.0, stiffness = 1e9, relaxation = 0.0;
  // Regularization of the friction rows (nonsmooth.hpp): a sticking contact creeps at
  // F_t / (k_t h), so holding a load asks for a k_t far above the normal stiffness.
  double friction_stiffness = 1e9;
  ContactSurface surface;
};

// An output point; with a `frame` body other than the ground its position and velocity are
// given relative to that body: where the point would be if the frame body stood where the
// description placed it (constant while the point moves with the frame body).
struct OutputPoint {
  std::string name;
  Probe at;
  int frame = kGround;
};

// A drive of a revolute joint through a ratio (a final drive, a reduction gear): the torque
// τ at the drive's input shaft (element of the input port drive_torque) turns the joint with
// ratio·τ, and the input shaft turns at ratio·(joint rate) (output port drive_speed); the two
// ports are one power bond, "drive".
// A drive may turn a rotor instead (rotor >= 0): the torque acts about the rotor's axis, its
// reaction on the `reaction` body (the rotor's carrier unless said otherwise: where the motor
// or engine is mounted).
struct Drive {
  std::string name;
  int joint = -1, rotor = -1, reaction = kGround;
  double ratio = 1.0;
};

// A prescribed joint coordinate x(t) (a steering input, a driven slider): the constraint
// x − f(t) = 0, f linear between the table's nodes and held outside (its rate jumps at the
// nodes; Φ_tt is zero between them).
struct Motion {
  std::string name, pointer;
  int joint = 0;
  std::vector<double> times, values;
};

// A measured quantity as a one-element output port named after the sensor: a joint
// coordinate or its rate (revolute: rad in (−π, π], rad/s; prismatic: m, m/s), or an attitude
// angle of a body relative to the ground frame (forward, left = up × forward, up), as the
// z-y-x (yaw, pitch, roll) angles of ISO 8855: pitch positive nose down, roll positive right
// side down, yaw positive to the left.
struct Sensor {
  enum class Kind { joint_position, joint_velocity, roll, pitch, yaw } kind = Kind::joint_position;
  std::string name;
  int joint = 0, rotor = -1;  // rotor >= 0: its spin angle or rate relative to the carrier
  Probe forward, left, up;  // body axes (directions on the body) for the attitude angles
  Vec3 ground_forward = Vec3::UnitX(), ground_up = Vec3::UnitY();
};

struct Description {
  std::vector<Body> bodies;
  std::vector<Rotor> rotors;
  std::vector<Joint> joints;
  std::vector<Coupler> couplers;
  std::vector<SpringDamper> springs;
  std::vector<JointEffort> efforts;
  std::vector<ExternalForce> external;
  std::vector<Actuator> actuators;
  std::vector<OutputPoint> points;
  std::vector<Contact> contacts;
  std::vector<Drive> drives;
  std::vector<Motion> motions;
  std::vector<Sensor> sensors;
  std::vector<std::string> effort_inputs;  // element names of the "joint_efforts" input port
  Vec3 gravity = Vec3::Zero();
  bool pressure = false;  // velocity-pressure coupling
  // Start from static equilibrium with the actuators locked at their lengths (Newton on the
  // force balance; the actuator forces that hold it are reported).
  bool static_equilibrium = false;
  // What is valid but probably not meant (a joint given twice), each naming its pointers.
  std::vector<std::string> warnings;
};

// `d` is the value of the "description" parameter; `base` its JSON pointer ("/description");
// `mesh_folder` where mesh files named by a relative path are.
Description read_description(const json& d, const std::string& base, const std::string& mesh_folder = "");

}  // namespace stride::mechanism
