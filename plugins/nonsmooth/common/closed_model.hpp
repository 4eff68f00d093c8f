// Base of the nonsmooth example models that exchange nothing with other subsystems: no inputs,
// no interface velocities (p = 0), so λ_i, D_i and Ḋ_i v are empty.
#pragma once

#include <stride/nonsmooth.hpp>
#include <stride/stride.hpp>

namespace stride::nonsmooth {

inline constexpr double gravity = 9.81;  // m/s^2

template <class Base>
class Closed : public Base {
 public:
  void interface_forces(double, ConstVectorRef, ConstVectorRef, VectorRef) override {}
  void interface_jacobian(ConstVectorRef, MatrixRef) override {}
  void interface_bias(ConstVectorRef, ConstVectorRef, VectorRef) override {}
};

}  // namespace stride::nonsmooth
