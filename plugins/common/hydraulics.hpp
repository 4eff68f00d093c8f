// Hydraulic actuator equations shared by the cylinder plugin, the three-volume circuit and the
// monolithic crane + hydraulics reference, so that all of them integrate ONE set of equations.
//
//  - Cylinder: the valve-controlled double-acting cylinder of Peiret et al. 2018, Sect. 4.1,
//    Eq. 24-29 (force, chamber pressure rates, bulk modulus, chamber lengths, valve areas) with
//    the parameters of its Table 2, and the static-equilibrium initialization of Eq. 41.
//  - PiecewiseLinear: time tables for valve laws (Eq. 30, 35) and reference signals.
//  - Lumped-fluid helpers (Rahikainen 2020 §2.2, §3.2): semi-empirical orifice flow and the
//    effective bulk modulus of a volume made of oil, a rigid chamber and a hose.
//
// Sign conventions (cylinder): s is the actuator length; chamber 1 shrinks when s grows
// (l1 = l/2 + s0 − s, Eq. 28) and chamber 2 grows, so p2 pushes the piston along increasing s
// and f_h = (p2 − p1) a_p − c ṡ (Eq. 24) is positive when it extends the actuator.
//
// Everything is header-only and allocation-free after construction.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include <stride/stride.hpp>

namespace stride::hydraulics {

// f(t) from nodes {times, values}: linear between nodes, constant before the first and after
// the last node. Two nodes at the same time make a jump (the later value holds after it).
// Evaluation does not allocate. Integrators ask at nearly the same t again and again, so the
// interval found last is tried first (the same interval a scan from the start finds, so the
// same value to the bit); one object is not to be evaluated from two threads at once.
class PiecewiseLinear {
 public:
  PiecewiseLinear() : t_{0.0}, v_{0.0} {}
  PiecewiseLinear(std::vector<double> times, std::vector<double> values, const std::string& what)
      : t_(std::move(times)), v_(std::move(values)) {
    if (t_.empty() || t_.size() != v_.size())
      throw std::invalid_argument(what + ": times and values must be non-empty lists of equal length");
    for (std::size_t i = 1; i < t_.size(); ++i)
      if (!(t_[i] >= t_[i - 1])) throw std::invalid_argument(what + ": times must be non-decreasing");
  }
  double operator()(double t) const {
    if (t <= t_.front()) return v_.front();
    // The first node i >= 1 with t <= t_[i]: the last one when t_[i-1] < t <= t_[i] still
    // holds (every earlier node is then below t), else a scan from the start.
    std::size_t i = last_;
    if (!(i < t_.size() ? t_[i - 1] < t && t <= t_[i] : t > t_.back())) {
      for (i = 1; i < t_.size() && !(t <= t_[i]); ++i) {
      }
      last_ = i;
    }
    if (i == t_.size()) return v_.back();
    const double dt = t_[i] - t_[i - 1];
    if (dt <= 0.0) return v_[i];
    return v_[i - 1] + (v_[i] - v_[i - 1]) * (t - t_[i - 1]) / dt;
  }

 private:
  std::vector<double> t_, v_;
  mutable std::size_t last_ = 1;  // the interval (t_[last_-1], t_[last_]] of the last evaluation
};

// Eq. 27: pressure-dependent bulk modulus β(p) = (1 + a p + b p²)/(a + 2 b p), and dβ/dp.
inline double bulk_modulus(double p, double a, double b) {
  return (1.0 + a * p + b * p * p) / (a + 2.0 * b * p);
}
inline double bulk_modulus_derivative(double p, double a, double b) {
  const double d = a + 2.0 * b * p;
  return (d * d - 2.0 * b * (1.0 + a * p + b * p * p)) / (d * d);
}

// The valve-controlled cylinder of Peiret 2018 Sect. 4.1 (Table 2 defaults).
struct Cylinder {
  double a_p = 65e-4;      // piston area (m²)
  double l = 0.442;        // cylinder length (m)
  double c = 1e5;          // viscous friction coefficient (N·s/m)
  double c_d = 0.67;       // valve discharge coefficient (1)
  double rho = 850.0;      // fluid density (kg/m³)
  double p_P = 7.6e6;      // pump pressure (Pa)
  double p_T = 0.1e6;      // tank pressure (Pa)
  double a = 6.53e-10;     // compressibility coefficient (1/Pa)
  double b = -1.19e-18;    // compressibility coefficient (1/Pa²)
  double a_v = 5e-4;       // valve area per unit spool displacement, Eq. 29 (m²)
  double s0 = 0.5;         // actuator length at which both chambers are l/2 long, Eq. 28 (m)

  // Eq. 24.
  double force(double p1, double p2, double s_dot) const { return (p2 - p1) * a_p - c * s_dot; }

  // Eq. 28.
  double l1(double s) const { return 0.5 * l + s0 - s; }
  double l2(double s) const { return 0.5 * l + s - s0; }

  // Orifice velocity term c_d sqrt(2 Δp/ρ) δ of Eq. 25-26 (zero for Δp <= 0) and its slope.
  double orifice(double dp) const { return dp > 0.0 ? c_d * std::sqrt(2.0 * dp / rho) : 0.0; }
  double orifice_slope(double dp) const {
    return dp > 0.0 ? c_d / (rho * std::sqrt(2.0 * dp / rho)) : 0.0;
  }

  // Net volume flow into each chamber (m³/s): the bracket of Eq. 25 and Eq. 26.
  double flow1(double s_dot, double kappa, double p1) const {
    return a_p * s_dot + a_v * kappa * orifice(p_P - p1) - a_v * (1.0 - kappa) * orifice(p1 - p_T);
  }
  double flow2(double s_dot, double kappa, double p2) const {
    return -a_p * s_dot + a_v * (1.0 - kappa) * orifice(p_P - p2) - a_v * kappa * orifice(p2 - p_T);
  }

  // Stored energy. Eq. 27 is the bulk modulus ρ/(dρ/dp) of a fluid of density
  // ρ(p) = ρ_0 D(p), D = 1 + a p + b p². Compressing it to p stores, per unit volume,
  //   ρ u(p) = D(p) ∫_0^p p' D'(p')/D(p')² dp'    (u = ∫ p dρ/ρ², zero at p = 0; ρ_0 cancels),
  // and a chamber of volume V holds U = V ρ u(p). With the pressure rates of Eq. 25-26, exactly
  //   dU/dt = (p + ρ u) Q_valve − p dV/dt:
  // the valve brings the enthalpy of the fluid it lets in, the piston takes p dV.
  double energy_density(double p) const {
    // 5-point Gauss–Legendre: the integrand is a polynomial in p over D², and D stays within
    // 1 ± 1e-2 over the pressures of Table 2, so the rule is exact to round-off.
    static constexpr double x[5] = {-0.9061798459386640, -0.5384693101056831, 0.0, 0.5384693101056831,
                                    0.9061798459386640};
    static constexpr double w[5] = {0.2369268850561891, 0.4786286704993665, 0.5688888888888889, 0.4786286704993665,
                                    0.2369268850561891};
    double integral = 0.0;
    for (int i = 0; i < 5; ++i) {
      const double q = 0.5 * p * (1.0 + x[i]), D = 1.0 + a * q + b * q * q;
      integral += w[i] * q * (a + 2.0 * b * q) / (D * D);
    }
    return (1.0 + a * p + b * p * p) * 0.5 * p * integral;
  }
  // U1 + U2 at actuator length s (J).
  double stored_energy(double s, double p1, double p2) const {
    return a_p * l1(s) * energy_density(p1) + a_p * l2(s) * energy_density(p2);
  }
  // Σ (p_i + ρu_i) Q_valve,i: the power the valve delivers into both chambers (W), the
  // supply's share of dU/dt above.
  double valve_power(double kappa, double p1, double p2) const {
    return (p1 + energy_density(p1)) * flow1(0.0, kappa, p1) + (p2 + energy_density(p2)) * flow2(0.0, kappa, p2);
  }

  // Pressure rates of Eq. 25-26 (NaN once the piston has left the cylinder: the model has no
  // meaning there).
  struct PressureRates {
    double dp1, dp2;
  };
  PressureRates pressure_rates(double s, double s_dot, double kappa, double p1, double p2) const {
    const double V1 = a_p * l1(s), V2 = a_p * l2(s);
    if (!(V1 > 0.0) || !(V2 > 0.0))
      return {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::quiet_NaN()};
    return {bulk_modulus(p1, a, b) * flow1(s_dot, kappa, p1) / V1,
            bulk_modulus(p2, a, b) * flow2(s_dot, kappa, p2) / V2};
  }

  // Pressure rates and their partial derivatives (for Newton iteration matrices).
  struct Rates {
    double dp1 = 0, dp2 = 0;
    double dp1_dp1 = 0, dp1_ds = 0, dp1_dsdot = 0, dp1_dkappa = 0;
    double dp2_dp2 = 0, dp2_ds = 0, dp2_dsdot = 0, dp2_dkappa = 0;
  };
  Rates rates(double s, double s_dot, double kappa, double p1, double p2) const {
    Rates r;
    const double V1 = a_p * l1(s), V2 = a_p * l2(s);
    if (!(V1 > 0.0) || !(V2 > 0.0)) {
      r.dp1 = r.dp2 = std::numeric_limits<double>::quiet_NaN();
      return r;
    }
    const double b1 = bulk_modulus(p1, a, b), b2 = bulk_modulus(p2, a, b);
    const double Q1 = flow1(s_dot, kappa, p1), Q2 = flow2(s_dot, kappa, p2);
    r.dp1 = b1 * Q1 / V1;  // as pressure_rates()
    r.dp2 = b2 * Q2 / V2;
    const double dQ1_dp1 = -a_v * kappa * orifice_slope(p_P - p1) - a_v * (1.0 - kappa) * orifice_slope(p1 - p_T);
    const double dQ2_dp2 = -a_v * (1.0 - kappa) * orifice_slope(p_P - p2) - a_v * kappa * orifice_slope(p2 - p_T);
    r.dp1_dp1 = (bulk_modulus_derivative(p1, a, b) * Q1 + b1 * dQ1_dp1) / V1;
    r.dp2_dp2 = (bulk_modulus_derivative(p2, a, b) * Q2 + b2 * dQ2_dp2) / V2;
    r.dp1_ds = b1 * Q1 * a_p / (V1 * V1);   // dV1/ds = −a_p
    r.dp2_ds = -b2 * Q2 * a_p / (V2 * V2);  // dV2/ds = +a_p
    r.dp1_dsdot = b1 * a_p / V1;
    r.dp2_dsdot = -b2 * a_p / V2;
    r.dp1_dkappa = b1 * a_v * (orifice(p_P - p1) + orifice(p1 - p_T)) / V1;
    r.dp2_dkappa = -b2 * a_v * (orifice(p_P - p2) + orifice(p2 - p_T)) / V2;
    return r;
  }
};

// Table 2 parameters with the paper's values as defaults (shared by the plugins that model
// this cylinder, so their manifests use the same names, units and bounds).
inline std::vector<ParamSpec> cylinder_params() {
  const Cylinder d;
  return {
      real_param("a_p", d.a_p, "m^2", "piston area (Table 2)", 1e-8),
      real_param("l", d.l, "m", "cylinder length (Table 2); chambers are l/2 long at s = s0 (Eq. 28)", 1e-6),
      real_param("c", d.c, "N*s/m", "viscous friction coefficient of Eq. 24 (Table 2)", 0.0),
      real_param("c_d", d.c_d, "1", "valve discharge coefficient (Table 2)", 1e-6, 1.0),
      real_param("rho", d.rho, "kg/m^3", "fluid density (Table 2)", 1e-6),
      real_param("p_P", d.p_P, "Pa", "pump pressure (Table 2)", 0.0),
      real_param("p_T", d.p_T, "Pa", "tank pressure (Table 2)", 0.0),
      real_param("a", d.a, "1/Pa", "compressibility coefficient a of Eq. 27 (Table 2)", 1e-15),
      real_param("b", d.b, "1/Pa^2", "compressibility coefficient b of Eq. 27 (Table 2)"),
      real_param("a_v", d.a_v, "m^2",
                 "valve area at full spool displacement: a_i = a_v kappa, a_o = a_v (1 - kappa) (Eq. 29)", 1e-12),
  };
}

inline Cylinder cylinder_from(const Params& p) {
  Cylinder c;
  c.a_p = p.real("a_p");
  c.l = p.real("l");
  c.c = p.real("c");
  c.c_d = p.real("c_d");
  c.rho = p.real("rho");
  c.p_P = p.real("p_P");
  c.p_T = p.real("p_T");
  c.a = p.real("a");
  c.b = p.real("b");
  c.a_v = p.real("a_v");
  if (!(c.p_P > c.p_T)) throw std::invalid_argument("pump pressure p_P must exceed tank pressure p_T");
  return c;
}

// Result of the static-equilibrium solve of Eq. 41 for one cylinder.
struct Equilibrium {
  double kappa = 0.5, p1 = 0.0, p2 = 0.0;
  int iterations = 0;
};

// Eq. 41 for one actuator at rest (ṡ = 0): finds [κ, p1, p2] with f_h = f_required and
// ṗ1 = ṗ2 = 0 by Newton-Raphson. At ṡ = 0 the rates vanish exactly when the net chamber flows
// Q1, Q2 do (β/V > 0), so the residual is [f_h − f, Q1, Q2]: well scaled and independent of s.
// Throws std::runtime_error when no equilibrium exists (|f| >= (p_P − p_T) a_p) or Newton fails.
inline Equilibrium solve_equilibrium(const Cylinder& cyl, double f_required) {
  if (!(std::abs(f_required) < (cyl.p_P - cyl.p_T) * cyl.a_p))
    throw std::runtime_error(stride::format_text("no static equilibrium: required actuator force {} N is not below "
                                                 "(p_P - p_T) a_p = {} N",
                                                 f_required, (cyl.p_P - cyl.p_T) * cyl.a_p));
  Equilibrium e;
  e.kappa = 0.5;
  e.p1 = e.p2 = 0.5 * (cyl.p_P + cyl.p_T);
  const double span = cyl.p_P - cyl.p_T;
  for (int it = 1; it <= 100; ++it) {
    const double Q1 = cyl.flow1(0.0, e.kappa, e.p1), Q2 = cyl.flow2(0.0, e.kappa, e.p2);
    const Eigen::Vector3d r(cyl.force(e.p1, e.p2, 0.0) - f_required, Q1, Q2);
    Eigen::Matrix3d J;
    J << 0.0, -cyl.a_p, cyl.a_p, cyl.a_v * (cyl.orifice(cyl.p_P - e.p1) + cyl.orifice(e.p1 - cyl.p_T)),
        -cyl.a_v * e.kappa * cyl.orifice_slope(cyl.p_P - e.p1) -
            cyl.a_v * (1.0 - e.kappa) * cyl.orifice_slope(e.p1 - cyl.p_T),
        0.0, -cyl.a_v * (cyl.orifice(cyl.p_P - e.p2) + cyl.orifice(e.p2 - cyl.p_T)), 0.0,
        -cyl.a_v * (1.0 - e.kappa) * cyl.orifice_slope(cyl.p_P - e.p2) -
            cyl.a_v * e.kappa * cyl.orifice_slope(e.p2 - cyl.p_T);
    Eigen::Vector3d dx = J.partialPivLu().solve(-r);
    // Damping: stay inside 0 < κ < 1 and p_T < p < p_P, where the equations are smooth.
    double lambda = 1.0;
    for (int k = 0; k < 60; ++k) {
      const double kap = e.kappa + lambda * dx[0], q1 = e.p1 + lambda * dx[1], q2 = e.p2 + lambda * dx[2];
      if (kap > 0.0 && kap < 1.0 && q1 > cyl.p_T && q1 < cyl.p_P && q2 > cyl.p_T && q2 < cyl.p_P) break;
      lambda *= 0.5;
    }
    e.kappa += lambda * dx[0];
    e.p1 += lambda * dx[1];
    e.p2 += lambda * dx[2];
    e.iterations = it;
    if (std::abs(dx[0]) <= 1e-14 && std::abs(dx[1]) <= 1e-14 * span && std::abs(dx[2]) <= 1e-14 * span)
      return e;
  }
  throw std::runtime_error("static equilibrium (Eq. 41): Newton-Raphson did not converge");
}

// Valve law κ(t) = κ0 + offset(t), offset a piecewise-linear table relative to κ0 (covers
// Eq. 30 and Eq. 35 exactly). Clamped to the physical spool range [0, 1] of Eq. 29.
struct ValveLaw {
  double kappa0 = 0.5;
  PiecewiseLinear offset;
  double operator()(double t) const { return std::clamp(kappa0 + offset(t), 0.0, 1.0); }
};

// ---- Lumped-fluid helpers (Rahikainen 2020 §2.2, §3.2) -----------------------------------

// Semi-empirical turbulent orifice flow Q = C sgn(Δp) sqrt(|Δp|) (Handroos & Vilenius), with
// a linear (laminar) region |Δp| < dp_lin that keeps dQ/dΔp finite at Δp = 0 for implicit
// integrators; the two branches meet with equal value at |Δp| = dp_lin.
inline double orifice_flow(double C, double dp, double dp_lin) {
  const double adp = std::abs(dp);
  if (adp >= dp_lin) return C * std::copysign(std::sqrt(adp), dp);
  return C * dp / std::sqrt(dp_lin);
}

// Effective bulk modulus of a volume V made of oil (B_oil) held in parts V_k with container
// moduli B_k: 1/B_e = 1/B_oil + Σ (V_k/V)/B_k.
inline double effective_bulk_modulus(double B_oil, double V, double V_a, double B_a, double V_b, double B_b) {
  return 1.0 / (1.0 / B_oil + (V_a / V) / B_a + (V_b / V) / B_b);
}

}  // namespace stride::hydraulics
