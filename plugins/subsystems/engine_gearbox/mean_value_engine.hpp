// Mean-value model of a four-cylinder spark-ignition engine (Crossley & Cook 1991, "A nonlinear
// engine model for drivetrain system development", Control 91), with the constants of the
// public engine model built from it: the Modelica Standard Library's
// Modelica.Clocked.Examples.Systems.Utilities.ComponentsThrottleControl (ThrottleBody,
// IntakeManifold, CylinderAirCharge, InductionToPowerDelay, TorqueGeneration, Engine), the
// Modelica version of the MathWorks "engine timing" example. Units as there: throttle angle
// theta in degrees, manifold pressure P_m in bar, air masses in g, engine speed N in rad/s.
//
//   throttle flow        m_ai' = f(theta) g(P_m)                                     (g/s)
//                        f(theta) = 2.821 - 0.05231 theta + 0.10299 theta^2 - 0.00063 theta^3
//                        g(P_m) = sign(P_0 - P_m) * (1 if r < 1/2 else 2 sqrt(r - r^2)),
//                        r = min(P_m/P_0, P_0/P_m)
//   intake manifold      P_m' = (RT/V_m) (m_ai' - m_ao'),  RT/V_m = 0.41328 bar/g
//   pumping              m_ao' = -0.366 + 0.08979 N P_m - 0.0337 N P_m^2 + 0.0001 N^2 P_m
//   air charge           m_ao' integrated over each intake event (every pi rad of crank angle
//                        for four cylinders), used one event later (induction-to-power delay)
//   torque               T_e = -181.3 + 379.36 m_a + 21.91 AFR - 0.85 AFR^2 + 0.26 sigma
//                              - 0.0028 sigma^2 + 0.027 N - 0.000107 N^2 + 0.00048 N sigma
//                              + 2.55 sigma m_a - 0.05 sigma^2 m_a
//                        (AFR = 14.6, spark advance sigma = 15 deg BTDC)
//   crank                J N' = T_e - T_p (T_p: the load, here the torque converter's impeller)
//
// Torque converter (the capacity factor K and torque ratio TR over the speed ratio
// SR = omega_t / omega_e, as in the MathWorks automatic-transmission example sf_car):
//   SR <= 1 (drive):  T_p = (omega_e / K(SR))^2,  T_t = TR(SR) T_p
//   SR > 1 (coast):   the fluid coupling runs backwards, T_t = T_p = -(omega_t / K(1/SR))^2
// K is tabulated to SR_c (the coupling point); above it the capacity 1/K^2 falls linearly to 0
// and TR to 1 at SR = 1, so torque and dissipation T_p omega_e - T_t omega_t >= 0 are
// continuous through SR = 1.
#pragma once

#include <algorithm>
#include <cmath>

#include <stride/plugin.hpp>

namespace stride::engine {

struct CrossleyCook {
  double p_atm = 1.0;       // bar
  double rt_vm = 0.41328;   // bar/g
  double afr = 14.6;        // air-fuel ratio
  double sigma = 15.0;      // spark advance, deg BTDC

  static double throttle_area(double theta_deg) {
    const double t = theta_deg;
    return 2.821 - 0.05231 * t + 0.10299 * t * t - 0.00063 * t * t * t;
  }
  double pressure_ratio_term(double p_m) const {
    const double r = std::min(p_m / p_atm, p_atm / p_m);
    const double g = r >= 0.5 ? 2.0 * std::sqrt(std::max(r - r * r, 0.0)) : 1.0;
    return p_m < p_atm ? g : (p_m > p_atm ? -g : 0.0);
  }
  // m_ai' (g/s).
  double throttle_flow(double theta_deg, double p_m) const {
    return throttle_area(theta_deg) * pressure_ratio_term(p_m);
  }
  // m_ao' (g/s).
  static double pumping(double N, double p_m) {
    return -0.366 + 0.08979 * N * p_m - 0.0337 * N * p_m * p_m + 0.0001 * N * N * p_m;
  }
  // Brake torque (N m) for the air charge m_a (g) of the event before last.
  double torque(double m_a, double N) const {
    return -181.3 + 379.36 * m_a + 21.91 * afr - 0.85 * afr * afr + 0.26 * sigma - 0.0028 * sigma * sigma + 0.027 * N -
           0.000107 * N * N + 0.00048 * N * sigma + 2.55 * sigma * m_a - 0.05 * sigma * sigma * m_a;
  }
  // The manifold pressure at which throttle flow equals pumping at (theta, N): bisection on
  // (0, p_atm], where the net inflow falls monotonically.
  double equilibrium_pressure(double theta_deg, double N) const {
    double lo = 1e-6, hi = p_atm;
    for (int i = 0; i < 200 && hi - lo > 1e-14; ++i) {
      const double mid = 0.5 * (lo + hi);
      (throttle_flow(theta_deg, mid) - pumping(N, mid) > 0 ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
  }
};

// Torques of the converter at impeller speed w_e and turbine speed w_t.
struct ConverterTorques {
  double impeller = 0.0, turbine = 0.0, speed_ratio = 0.0;
};

class TorqueConverter {
 public:
  TorqueConverter() = default;
  // table rows [SR, K (rad/s per sqrt(N m)), TR], SR from 0 up to the coupling point < 1;
  // capacity_scale multiplies K (a smaller converter has a larger K).
  TorqueConverter(const Table& t, double capacity_scale) : t_(t), scale_(capacity_scale) {
    sr_c_ = t_.x.back();
    c_c_ = capacity(sr_c_);
    tr_c_ = t_(sr_c_, 1);
  }
  double coupling_point() const { return sr_c_; }

  // 1/K^2 at speed ratio sr in [0, 1].
  double capacity(double sr) const {
    if (sr <= sr_c_) {
      const double K = scale_ * t_(std::max(sr, 0.0), 0);
      return 1.0 / (K * K);
    }
    return c_c_ * (1.0 - sr) / (1.0 - sr_c_);
  }
  double torque_ratio(double sr) const {
    if (sr <= sr_c_) return t_(std::max(sr, 0.0), 1);
    return tr_c_ + (1.0 - tr_c_) * (sr - sr_c_) / (1.0 - sr_c_);
  }
  ConverterTorques operator()(double w_e, double w_t) const {
    ConverterTorques c;
    c.speed_ratio = w_t / w_e;
    if (c.speed_ratio <= 1.0) {
      c.impeller = capacity(std::min(c.speed_ratio, 1.0)) * w_e * w_e;
      c.turbine = torque_ratio(c.speed_ratio) * c.impeller;
    } else {
      c.impeller = c.turbine = -capacity(w_e / w_t) * w_t * w_t;
    }
    return c;
  }

 private:
  Table t_;
  double scale_ = 1.0, sr_c_ = 0.94, c_c_ = 0.0, tr_c_ = 1.0;
};

// sf_car's converter (MathWorks, "Model a Car with Automatic Transmission"): speed ratio,
// K-factor and torque ratio. sf_car gives K in rpm per sqrt(ft lbf); here it is in rad/s per
// sqrt(N m): K_SI = K (2 pi / 60) / sqrt(1.3558179483 N m per ft lbf).
inline json sf_car_converter_table() {
  return json::array({{0.0, 12.3629, 2.232},  {0.1, 12.3269, 2.075},  {0.2, 12.2189, 1.975},  {0.3, 12.2010, 1.846},
                      {0.4, 12.3719, 1.720},  {0.5, 12.6238, 1.564},  {0.6, 13.0647, 1.409},  {0.7, 13.7486, 1.254},
                      {0.8, 14.6573, 1.096},  {0.81, 14.7743, 1.080}, {0.82, 14.9453, 1.061}, {0.83, 15.1072, 1.043},
                      {0.84, 15.2962, 1.028}, {0.85, 15.5391, 1.012}, {0.86, 15.7731, 1.002}, {0.87, 16.1510, 1.002},
                      {0.88, 16.5109, 1.001}, {0.89, 17.0777, 0.998}, {0.90, 17.7796, 0.999}, {0.92, 19.4171, 1.001},
                      {0.94, 21.9905, 1.002}});
}

// The gear ratio during a shift from r_from to r_to that started at t0 and lasts T: a smooth
// step 3s^2 - 2s^3 in s = (t - t0)/T (the inertia phase, in which the oncoming clutch takes
// over and the turbine speed changes to the new gear's).
inline double shifting_ratio(double r_from, double r_to, double t0, double T, double t) {
  const double s = std::clamp((t - t0) / T, 0.0, 1.0);
  return r_from + (r_to - r_from) * s * s * (3.0 - 2.0 * s);
}

}  // namespace stride::engine
