// Force elements: force laws acting on one body of a `mechanism` model (a tyre, a terramechanics
// wheel, a bushing), each in its own library, loaded by the mechanism plugin when its
// description names the element ("forces": [{"type": "plugin", "plugin": NAME, ...}]).
// The host never loads these libraries; they live in the `forces` folder beside the model
// plugins (or a folder listed in STRIDE_FORCE_PATH) and are named stride_force_NAME.so.
//
// Call order: create(params) once per element in a description -> evaluate(state, wrench) any
// number of times. evaluate() is called at trial states (Newton iterates, finite differences):
// it must not keep state between calls and must not allocate.
#pragma once

#include <cstdint>
#include <memory>

#include <Eigen/Dense>

#include "stride/plugin.hpp"

namespace stride {

// Kinematic state of the attachment point, global axes.
struct ForceState {
  double t = 0.0;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  // attachment point (m)
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();  // its velocity (m/s)
  Eigen::Matrix3d rotation = Eigen::Matrix3d::Identity();  // body axes -> global
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  // global (rad/s)
};

// Force (N) at the attachment point and torque (N m), global axes.
struct Wrench {
  Eigen::Vector3d force = Eigen::Vector3d::Zero();
  Eigen::Vector3d torque = Eigen::Vector3d::Zero();
};

class ForceElement {
 public:
  virtual ~ForceElement() = default;
  virtual void evaluate(const ForceState& state, Wrench& wrench) const = 0;
  // Facts for summary.json (e.g. quadrature error of an integral law).
  virtual json report() const { return json::object(); }
};

// Optional, for implicit formulations: an element whose class also derives from this one gives
// its wrench's derivatives with respect to the attachment state. The mechanism then builds the
// stiffness and damping terms (K = -dQ/dq, C = -dQ/dv) from them instead of evaluating the
// element at perturbed states. The mechanism finds it by dynamic_cast, so elements built without
// it keep working as before (finite differences), with no change of ABI.
// Rows of the Jacobian: force (3), torque (3). Columns: position (3), velocity (3), rotation (3:
// a small rotation dtheta about global axes, rotation -> (I + [dtheta]x) rotation), angular
// velocity (3).
using WrenchJacobian = Eigen::Matrix<double, 6, 12>;

class ForceElementDerivatives {
 public:
  virtual ~ForceElementDerivatives() = default;
  // The wrench at `state`, equal to evaluate()'s, and its Jacobian. Same rules as evaluate().
  virtual void evaluate_derivatives(const ForceState& state, Wrench& wrench, WrenchJacobian& jacobian) const = 0;
};

class ForceElementPlugin {
 public:
  virtual ~ForceElementPlugin() = default;
  // name, version, description, parameters (kind and form are not used).
  virtual const PluginInfo& info() const = 0;
  // Parameters are checked against info().parameters and completed with defaults first.
  virtual std::unique_ptr<ForceElement> create(const Params& params) const = 0;
};

template <class T>
class ForceElementFor final : public ForceElementPlugin {
 public:
  const PluginInfo& info() const override {
    static const PluginInfo i = T::describe();
    return i;
  }
  std::unique_ptr<ForceElement> create(const Params& p) const override { return std::make_unique<T>(p); }
};

}  // namespace stride

extern "C" {
// Same handshake rules as StrideHandshake (abi.hpp), separate symbol `stride_force_element`.
struct StrideForceHandshake {
  std::uint32_t abi_version;
  std::uint32_t struct_size;
  const char* fingerprint;
  const stride::ForceElementPlugin* (*plugin)();
};
}

#define STRIDE_FORCE_ELEMENT(T)                                                              \
  extern "C" STRIDE_EXPORT const StrideForceHandshake* stride_force_element() {              \
    static const StrideForceHandshake handshake{                                             \
        STRIDE_ABI_VERSION, static_cast<std::uint32_t>(sizeof(StrideForceHandshake)),        \
        STRIDE_FINGERPRINT, []() -> const stride::ForceElementPlugin* {                      \
          static const ::stride::ForceElementFor<T> instance;                                \
          return &instance;                                                                  \
        }};                                                                                  \
    return &handshake;                                                                       \
  }
