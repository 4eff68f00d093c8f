// Two-mass triple-spring test problem of González et al. 2011 (Sect. 3, Eq. 2-9):
//
//   wall --k1,c1-- m1 --k2-- m2 --k3,c3-- wall
//
// m1 is the fast subsystem, m2 the slow one. The undamped motion from rest is (Eq. 3)
//   x1(t) = C11 cos(ω1 t) + C13 cos(ω2 t),   x2(t) = C21 cos(ω1 t) + C23 cos(ω2 t),
// so (ω1, [C11, C21]) and (ω2, [C13, C23]) are the two modes of Eq. 2.
//
// Units. The paper fixes "ω1 = 1 Hz" and integrates with 100 steps per cycle over 100 cycles
// of the fast mass. We read this as a fast-mode FREQUENCY f1 = 1 Hz, i.e. ω1 = 2π rad/s in the
// cosines of Eq. 3 (period 1 s: h1 = 0.01 s gives 100 steps per cycle, 100 cycles = 100 s).
//
// Derivation from the ratios of Eq. 5 (C11 = 1 m, ω2 = ω1/FR):
//   C13 = C11/AR1,  C23 = C11/AR12,  C21 = C23/AR2.
// Eq. 2 has one free scale (multiplying M and K by the same factor changes nothing); we fix
// m1 = 1 kg. With Φ = [[C11, C13], [C21, C23]] and Ω² = diag(ω1², ω2²) the modes of Eq. 2 are
// the columns of Φ iff K = M Φ Ω² Φ⁻¹. K must be symmetric, which is M-orthogonality of the
// modes, m1 C11 C13 + m2 C21 C23 = 0:
//   m2 = -m1 C11 C13 / (C21 C23) = -m1 AR12² AR2 / AR1        (needs AR2/AR1 < 0)
// and then, with D = C11 C23 - C13 C21 = det Φ,
//   k2 = m1 C11 C13 (ω1² - ω2²) / D
//   k1 = K11 - k2 = m1 [C11 (C23 - C13) ω1² + C13 (C11 - C21) ω2²] / D
//   k3 = K22 - k2 = m2 [C21 (C23 - C13) ω1² + C23 (C11 - C21) ω2²] / D.
// With the paper's AR1 = AR12 = 0.1, AR2 = -1000: C13 = C23 = 10 m, C21 = -0.01 m, m2 = 100 kg,
// k1 = m1 ω2², k3 = m2 ω2², k2 = (10/10.1)(ω1² - ω2²); every value is positive for FR > 1.
// Ratios that make a mass or stiffness non-positive are rejected with the numbers. Positivity
// is not automatic: m2 > 0 needs AR2/AR1 < 0, and k1, k3 > 0 confine AR12 to a narrow window
// around AR1 of width ~1/FR² (with b = C21/C11):
//   -(1 - b)/(AR1 FR²) < 1/AR12 - 1/AR1 < |AR2| (1 - b)/FR².
// At FR = 10, AR1 = 0.1, AR2 = -1000 that is 0.0495 < AR12 < 0.101 (AR12 = 0.102 gives
// k1 = -0.38 N/m, AR12 = 1 gives k1 = -348 N/m); the paper's AR12 = AR1 = 0.1 lies inside.
//
// Damping (Eq. 9): c3 = 2ζ m2 ω2, c1 = 2ζ m1 ω1/FR, dashpots in parallel with k3 and k1.
// For ζ > 0 Eq. 3 no longer holds; ExactSolution then uses the modal solution of the damped
// first-order system (eigen-decomposition of the 4×4 state matrix), which is exact as well.
//
// Energy: E = ½ m1 v1² + ½ m2 v2² + ½ k1 x1² + ½ k2 (x1 - x2)² + ½ k3 x2². Each subsystem
// plugin reports only its own part (kinetic + own wall spring); the coupling spring is shared
// and is added in post-processing from the recorded x1, x2 (total_energy below).
#pragma once

#include <cmath>
#include <complex>
#include <numbers>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <Eigen/LU>

#include <stride/stride.hpp>

namespace stride::two_mass {

// Eq. 4: fixed scales of the test problem.
inline constexpr double f1_hz = 1.0;                                 // fast-mode frequency
inline constexpr double omega1 = 2.0 * std::numbers::pi * f1_hz;     // rad/s
inline constexpr double C11 = 1.0;                                   // m
inline constexpr double m1_kg = 1.0;                                 // the free scale of Eq. 2

struct Ratios {
  double FR = 10.0;     // ω1/ω2
  double AR1 = 0.1;     // C11/C13
  double AR2 = -1000.0; // C23/C21
  double AR12 = 0.1;    // C11/C23
  double zeta = 0.0;    // damping ratio of Eq. 9
};

struct Parameters {
  Ratios ratios;
  double omega1 = 0, omega2 = 0;            // rad/s
  double C11 = 0, C13 = 0, C21 = 0, C23 = 0;  // m (Eq. 3)
  double m1 = 0, m2 = 0;                    // kg
  double k1 = 0, k2 = 0, k3 = 0;            // N/m
  double c1 = 0, c3 = 0;                    // N s/m (Eq. 9)
  double x1_0 = 0, x2_0 = 0;                // m, initial positions (velocities are zero)
};

// Masses, stiffnesses, dampers and initial positions from the ratios of Eq. 5.
// Throws std::invalid_argument when the ratios admit no physical system.
inline Parameters derive(const Ratios& r) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("two-mass test problem: " + what); };
  if (!(r.FR > 1.0)) fail("FR = ω1/ω2 must exceed 1 (at FR = 1 the modes coincide and k2 = 0)");
  if (r.AR1 == 0.0 || r.AR2 == 0.0 || r.AR12 == 0.0) fail("amplitude ratios AR1, AR2, AR12 must be non-zero");
  if (r.zeta < 0.0) fail("damping ratio zeta must be non-negative");
  Parameters p;
  p.ratios = r;
  p.omega1 = omega1;
  p.omega2 = omega1 / r.FR;
  p.C11 = C11;
  p.C13 = C11 / r.AR1;
  p.C23 = C11 / r.AR12;
  p.C21 = p.C23 / r.AR2;
  p.m1 = m1_kg;
  p.m2 = -p.m1 * p.C11 * p.C13 / (p.C21 * p.C23);
  const double w1 = p.omega1 * p.omega1, w2 = p.omega2 * p.omega2;
  const double D = p.C11 * p.C23 - p.C13 * p.C21;
  p.k2 = p.m1 * p.C11 * p.C13 * (w1 - w2) / D;
  p.k1 = p.m1 * (p.C11 * (p.C23 - p.C13) * w1 + p.C13 * (p.C11 - p.C21) * w2) / D;
  p.k3 = p.m2 * (p.C21 * (p.C23 - p.C13) * w1 + p.C23 * (p.C11 - p.C21) * w2) / D;
  p.c3 = 2.0 * r.zeta * p.m2 * p.omega2;
  p.c1 = 2.0 * r.zeta * p.m1 * p.omega1 / r.FR;
  p.x1_0 = p.C11 + p.C13;
  p.x2_0 = p.C21 + p.C23;
  std::ostringstream bad;
  if (!(p.m2 > 0)) bad << " m2 = " << p.m2 << " kg (needs AR2/AR1 < 0);";
  if (!(p.k1 > 0)) bad << " k1 = " << p.k1 << " N/m;";
  if (!(p.k2 > 0)) bad << " k2 = " << p.k2 << " N/m;";
  if (!(p.k3 > 0)) bad << " k3 = " << p.k3 << " N/m;";
  if (!bad.str().empty())
    fail(stride::format_text("ratios FR={} AR1={} AR2={} AR12={} give a non-physical system:", r.FR, r.AR1, r.AR2,
                             r.AR12) +
         bad.str());
  return p;
}

struct State {
  double x1 = 0, x2 = 0, v1 = 0, v2 = 0;
};

// Total mechanical energy (J), coupling spring included.
inline double total_energy(const Parameters& p, const State& s) {
  const double d = s.x1 - s.x2;
  return 0.5 * (p.m1 * s.v1 * s.v1 + p.m2 * s.v2 * s.v2 + p.k1 * s.x1 * s.x1 + p.k2 * d * d + p.k3 * s.x2 * s.x2);
}

// Mass, stiffness and damping matrices of Eq. 2 (dampers of Sect. 3.3 included).
inline Eigen::Matrix2d mass_matrix(const Parameters& p) { return Eigen::Vector2d(p.m1, p.m2).asDiagonal(); }
inline Eigen::Matrix2d stiffness_matrix(const Parameters& p) {
  Eigen::Matrix2d K;
  K << p.k1 + p.k2, -p.k2, -p.k2, p.k2 + p.k3;
  return K;
}
inline Eigen::Matrix2d damping_matrix(const Parameters& p) { return Eigen::Vector2d(p.c1, p.c3).asDiagonal(); }

// Analytical motion from x(0) = (x1_0, x2_0), v(0) = 0. Undamped: Eq. 3 in closed form.
// Damped: z(t) = Re Σ_k V_k α_k exp(λ_k t) for z' = A z, with A's eigenpairs (λ_k, V_k) and
// α = V⁻¹ z(0), computed once here. at() does not allocate.
class ExactSolution {
 public:
  explicit ExactSolution(const Parameters& p) : p_(p), damped_(p.c1 > 0 || p.c3 > 0) {
    if (!damped_) return;
    Eigen::Matrix4d A = Eigen::Matrix4d::Zero();
    const Eigen::Matrix2d Minv = mass_matrix(p).inverse();
    A.topRightCorner<2, 2>().setIdentity();
    A.bottomLeftCorner<2, 2>() = -Minv * stiffness_matrix(p);
    A.bottomRightCorner<2, 2>() = -Minv * damping_matrix(p);
    Eigen::EigenSolver<Eigen::Matrix4d> es(A);
    lambda_ = es.eigenvalues();
    V_ = es.eigenvectors();
    const Eigen::Vector4cd z0(p.x1_0, p.x2_0, 0.0, 0.0);
    alpha_ = V_.partialPivLu().solve(z0);
  }

  State at(double t) const {
    State s;
    if (!damped_) {
      const double c1 = std::cos(p_.omega1 * t), c2 = std::cos(p_.omega2 * t);
      const double s1 = std::sin(p_.omega1 * t), s2 = std::sin(p_.omega2 * t);
      s.x1 = p_.C11 * c1 + p_.C13 * c2;
      s.x2 = p_.C21 * c1 + p_.C23 * c2;
      s.v1 = -p_.C11 * p_.omega1 * s1 - p_.C13 * p_.omega2 * s2;
      s.v2 = -p_.C21 * p_.omega1 * s1 - p_.C23 * p_.omega2 * s2;
      return s;
    }
    Eigen::Vector4cd z = Eigen::Vector4cd::Zero();
    for (int k = 0; k < 4; ++k) z += V_.col(k) * (alpha_(k) * std::exp(lambda_(k) * t));
    s.x1 = z(0).real();
    s.x2 = z(1).real();
    s.v1 = z(2).real();
    s.v2 = z(3).real();
    return s;
  }

  const Parameters& parameters() const { return p_; }

 private:
  Parameters p_;
  bool damped_;
  Eigen::Vector4cd lambda_, alpha_;
  Eigen::Matrix4cd V_;
};

// Eq. 7: Δx = FR/N · sqrt(1/n Σ ((x_i - x_i^exact)/x_rms)²), x_rms the quadratic mean of the
// exact samples. N is the number of simulated cycles of the fast mass (f1 · duration).
inline double position_error(std::span<const double> x, std::span<const double> x_exact, double FR, double N) {
  if (x.size() != x_exact.size() || x.empty())
    throw std::invalid_argument("position_error: sample counts differ or are zero");
  double se = 0.0, sr = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    se += (x[i] - x_exact[i]) * (x[i] - x_exact[i]);
    sr += x_exact[i] * x_exact[i];
  }
  return FR / N * std::sqrt(se / sr);  // sqrt(se/n) / sqrt(sr/n)
}

// Eq. 8: ΔE = FR/N · sqrt(1/n Σ ((E_i - E_0)/E_0)²).
inline double energy_error(std::span<const double> E, double E0, double FR, double N) {
  if (E.empty()) throw std::invalid_argument("energy_error: no samples");
  double s = 0.0;
  for (double e : E) s += ((e - E0) / E0) * ((e - E0) / E0);
  return FR / N * std::sqrt(s / static_cast<double>(E.size()));
}

// ---------------------------------------------------------------------------------------------
// The subsystem plugins two_mass_fast (m1) and two_mass_slow (m2) share one implementation.

// Both plugins take the same parameters, so one manifest block can be copied between them.
inline std::vector<ParamSpec> parameter_specs() {
  return {
      real_param("FR", 10.0, "1", "frequency ratio ω1/ω2 of the two modes (Eq. 5); ω1 = 2π·1 Hz", 1.0, 1e4),
      real_param("AR1", 0.1, "1", "amplitude ratio C11/C13 of the fast mass (Eq. 5)"),
      real_param("AR2", -1000.0, "1", "amplitude ratio C23/C21 of the slow mass (Eq. 5)"),
      real_param("AR12", 0.1, "1", "amplitude ratio C11/C23 between the masses (Eq. 5)"),
      real_param("zeta", 0.0, "1", "damping ratio ζ of Eq. 9 (c3 = 2ζ m2 ω2, c1 = 2ζ m1 ω1/FR)", 0.0, 10.0),
  };
}

inline Ratios ratios_from(const Params& p) {
  return Ratios{p.real("FR"), p.real("AR1"), p.real("AR2"), p.real("AR12"), p.real("zeta")};
}

enum class Side { fast, slow };

// One mass of the problem: state [x, v] (second_order_size 1), input the other mass's position.
//   m a = -k_wall x - c_wall v - k2 (x - x_other)
// Outputs: x (m), v (m/s), a (m/s², feedthrough), f_k2 (N, feedthrough) = -k2 (x - x_other), the
// coupling spring's force on this mass. energy_at = ½ m v² + ½ k_wall x² (coupling spring excluded).
class MassOnSprings : public OdeSystem {
 public:
  MassOnSprings(const Params& params, Side side) : p_(derive(ratios_from(params))), side_(side) {
    const bool fast = side == Side::fast;
    m_ = fast ? p_.m1 : p_.m2;
    k_wall_ = fast ? p_.k1 : p_.k3;
    c_wall_ = fast ? p_.c1 : p_.c3;
    k2_ = p_.k2;
    x0_ = fast ? p_.x1_0 : p_.x2_0;
  }

  std::vector<PortSpec> ports() const override {
    const bool fast = side_ == Side::fast;
    return {
        input(fast ? "x2" : "x1", 1, "m", fast ? "position of the slow mass m2" : "position of the fast mass m1"),
        output("x", 1, "m", "position of this mass from its equilibrium"),
        output("v", 1, "m/s", "velocity of this mass"),
        output("a", 1, "m/s^2", "acceleration of this mass (uses the other mass's position)", true),
        output("f_k2", 1, "N", "force of the coupling spring k2 on this mass", true),
    };
  }

  std::size_t state_size() const override { return 2; }
  std::size_t second_order_size() const override { return 1; }
  void initial_state(double, std::span<double> x) override {
    x[0] = x0_;
    x[1] = 0.0;
  }
  void derivatives(double t, std::span<const double> x, std::span<double> dxdt) override {
    const double other = inputs().at(0, t)[0];
    dxdt[0] = x[1];
    dxdt[1] = acceleration(x[0], x[1], other);
  }
  // Jacobian with respect to the own state; the other mass's position is a given input.
  bool jacobian(double, std::span<const double>, Eigen::Ref<Eigen::MatrixXd> J) override {
    J(0, 0) = 0.0;
    J(0, 1) = 1.0;
    J(1, 0) = -(k_wall_ + k2_) / m_;
    J(1, 1) = -c_wall_ / m_;
    return true;
  }
  void outputs(double t, std::span<const double> x, std::span<double> y) override {
    const double other = inputs().at(0, t)[0];
    y[0] = x[0];
    y[1] = x[1];
    y[2] = acceleration(x[0], x[1], other);
    y[3] = -k2_ * (x[0] - other);
  }
  double energy_at(double, std::span<const double> x) const override {
    return 0.5 * m_ * x[1] * x[1] + 0.5 * k_wall_ * x[0] * x[0];
  }
  // Everything beyond x is fixed by the parameters: nothing else to save.
  bool can_save_state() const override { return true; }
  json report() const override {
    return {{"m1", p_.m1}, {"m2", p_.m2}, {"k1", p_.k1}, {"k2", p_.k2}, {"k3", p_.k3},
            {"c1", p_.c1}, {"c3", p_.c3}, {"omega1", p_.omega1}, {"omega2", p_.omega2},
            {"C11", p_.C11}, {"C13", p_.C13}, {"C21", p_.C21}, {"C23", p_.C23},
            {"x1_0", p_.x1_0}, {"x2_0", p_.x2_0},
            {"energy_note", "energy() excludes the coupling spring ½ k2 (x1 - x2)²"}};
  }

 private:
  double acceleration(double x, double v, double other) const {
    return (-k_wall_ * x - c_wall_ * v - k2_ * (x - other)) / m_;
  }

  // What derivatives() and outputs() read, first and together (one cache line with the
  // object's header): with thousands of subsystems stepping in turn, every further line is a miss.
  double m_ = 0, k_wall_ = 0, c_wall_ = 0, k2_ = 0;
  double x0_ = 0;
  Parameters p_;
  Side side_;
};

}  // namespace stride::two_mass
