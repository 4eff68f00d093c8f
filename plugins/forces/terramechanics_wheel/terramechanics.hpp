// Wheel–soil contact of Peiret 2018 Appendix B (Eq. 56–61, after Wong's pressure–sinkage and
// shear relations as used by Ghotbi et al. 2016), header-only so tests can evaluate it.
//
// With the wheel sinkage z (depth of the lowest rim point below the terrain surface), the entry
// angle is θ1 = acos(1 − z/r) and the exit angle θ2 = 0 (no rebound: the paper does not give θ2;
// zero is the usual choice for dry sand). At an angle θ from the downward vertical the local
// sinkage is ζ(θ) = r (cos θ − cos θ1) and
//   σ(θ) = (k_c/b + k_φ) ζ(θ)^n                                               (56)
//   τ(θ) = (c + σ tan φ) (1 − exp(−j(θ)/K)),  j = r (θ1 − θ − (1 − s)(sin θ1 − sin θ))   (57)
//   F_n = r b (∫ τ sin θ + ∫ σ cos θ) + c_z ζ̇      (58)   F_t = r b ∫ τ cos θ   (59)
//   R_c = r b ∫ σ sin θ                             (60)   T_r = r² b ∫ τ       (61)
// over [θ2, θ1]. Slip s = (r ω − v)/(r ω) for travel with r ω + v ≥ 0 is regularized as
// s = (r ω − v)/max(|r ω|, |v|, v_eps): equal to the paper's when driving (r ω ≥ v ≥ 0), the
// skid (r ω − v)/v when braking, and bounded (|s| ≤ 2) through standstill.
// The integrals are evaluated by Gauss–Legendre quadrature with N points on [θ2, θ1]; the
// integrands are smooth (analytic for integer n) on that interval, so the error falls
// exponentially with N (measured in tests/unit/mechanism.cpp and reported in summary.json).
#pragma once

#include <array>
#include <cmath>
#include <vector>

namespace stride::terramechanics {

// Table 8 (dry sand) and Table 6 (wheel) defaults.
struct Soil {
  double n = 1.0;           // sinkage exponent
  double c = 220.0;         // cohesion (Pa)
  double phi = 33.1 * M_PI / 180.0;  // friction angle (rad)
  double k_c = 1.4e3;       // cohesive modulus (N/m^(n+1))
  double k_phi = 2000e3;    // frictional modulus (N/m^(n+2))
  double K = 0.015;         // shear deformation modulus (m)
};

struct Wheel {
  double r = 0.2795;  // radius (m)
  double b = 0.2340;  // width (m)
};

struct Integrals {
  double tau_sin = 0, sigma_cos = 0, tau_cos = 0, sigma_sin = 0, tau = 0;  // ∫ over [θ2, θ1]
};

inline double sigma(const Soil& s, const Wheel& w, double theta, double theta1) {
  const double zeta = w.r * (std::cos(theta) - std::cos(theta1));
  return zeta > 0 ? (s.k_c / w.b + s.k_phi) * std::pow(zeta, s.n) : 0.0;
}
inline double tau(const Soil& s, const Wheel& w, double theta, double theta1, double slip) {
  const double j = w.r * (theta1 - theta - (1.0 - slip) * (std::sin(theta1) - std::sin(theta)));
  return (s.c + sigma(s, w, theta, theta1) * std::tan(s.phi)) * (1.0 - std::exp(-j / s.K));
}

// Gauss–Legendre nodes and weights on [-1, 1] (Newton on P_N, Golub–Welsch not needed here).
inline void gauss_legendre(int N, std::vector<double>& x, std::vector<double>& w) {
  x.assign(std::size_t(N), 0.0);
  w.assign(std::size_t(N), 0.0);
  for (int i = 0; i < N; ++i) {
    double z = std::cos(M_PI * (i + 0.75) / (N + 0.5)), dp = 0;
    for (int it = 0; it < 100; ++it) {
      double p0 = 1, p1 = z;
      for (int k = 2; k <= N; ++k) {
        const double p2 = ((2 * k - 1) * z * p1 - (k - 1) * p0) / k;
        p0 = p1, p1 = p2;
      }
      dp = N * (z * p1 - p0) / (z * z - 1);
      const double dz = p1 / dp;
      z -= dz;
      if (std::abs(dz) < 1e-16) break;
    }
    x[std::size_t(i)] = z;
    w[std::size_t(i)] = 2.0 / ((1 - z * z) * dp * dp);
  }
}

// The rule (x, w) mapped to [θ2, θ1] with, at each node, its weight, sine, cosine and σ: what
// the integrands share across slips. A wheel keeps the last set, since the finite-difference
// force derivatives perturb mostly the speeds and the attitude, which leave θ1 unchanged.
struct Nodes {
  double z = std::nan(""), theta1 = std::nan(""), theta2 = std::nan(""), s1 = 0,
         tan_phi = 0;  // z: the sinkage θ1 came from
  std::vector<double> th, wk, st, ct, sg;
};

inline void prepare(const Soil& s, const Wheel& wh, double theta1, double theta2, const std::vector<double>& x,
                    const std::vector<double>& w, Nodes& nd) {
  const std::size_t N = x.size();
  nd.z = std::nan("");  // set by the caller that knows it
  nd.theta1 = theta1, nd.theta2 = theta2, nd.s1 = std::sin(theta1), nd.tan_phi = std::tan(s.phi);
  nd.th.resize(N), nd.wk.resize(N), nd.st.resize(N), nd.ct.resize(N), nd.sg.resize(N);
  const double half = 0.5 * (theta1 - theta2), mid = 0.5 * (theta1 + theta2);
  const double k = s.k_c / wh.b + s.k_phi, c1 = std::cos(theta1);
  const bool linear = s.n == 1.0;
  // A rule symmetric about 0 (Gauss–Legendre) pairs θ with θ1 + θ2 − θ, whose sine and cosine
  // follow from θ's.
  bool symmetric = true;
  for (std::size_t i = 0; symmetric && i < N / 2; ++i) symmetric = std::abs(x[i] + x[N - 1 - i]) <= 1e-14;
  if (symmetric) {
    const double sm = std::sin(theta1 + theta2), cm = std::cos(theta1 + theta2);
    for (std::size_t i = 0; i < (N + 1) / 2; ++i) {
      const double th = mid + half * x[i];
      nd.st[i] = std::sin(th), nd.ct[i] = std::cos(th);
      const std::size_t j = N - 1 - i;
      nd.st[j] = sm * nd.ct[i] - cm * nd.st[i];
      nd.ct[j] = cm * nd.ct[i] + sm * nd.st[i];
    }
    if (N % 2 == 1) nd.st[N / 2] = std::sin(mid + half * x[N / 2]), nd.ct[N / 2] = std::cos(mid + half * x[N / 2]);
  }
  for (std::size_t i = 0; i < N; ++i) {
    const double th = mid + half * x[i];
    nd.th[i] = th, nd.wk[i] = half * w[i];
    if (!symmetric) nd.st[i] = std::sin(th), nd.ct[i] = std::cos(th);
    const double zeta = wh.r * (nd.ct[i] - c1);
    nd.sg[i] = zeta > 0 ? k * (linear ? zeta : std::pow(zeta, s.n)) : 0.0;
  }
}

// `nodes` prepared for sinkage z (θ1 = acos(1 − z/r), θ2 = 0), kept if they already are.
inline const Nodes& at_sinkage(const Soil& s, const Wheel& wh, double z, const std::vector<double>& x,
                               const std::vector<double>& w, Nodes& nodes) {
  if (nodes.z == z && nodes.theta2 == 0.0 && nodes.th.size() == x.size()) return nodes;
  prepare(s, wh, std::acos(std::max(-1.0, 1.0 - z / wh.r)), 0.0, x, w, nodes);
  nodes.z = z;
  return nodes;
}

// ∫ of the five integrands over [θ2, θ1] on the prepared nodes, for K slips at once.
template <std::size_t K>
inline std::array<Integrals, K> integrate(const Soil& s, const Wheel& wh, const Nodes& nd,
                                          const std::array<double, K>& slip) {
  std::array<Integrals, K> I{};
  const double tan_phi = nd.tan_phi, s1 = nd.s1, theta1 = nd.theta1;
  for (std::size_t i = 0; i < nd.th.size(); ++i) {
    const double th = nd.th[i], wk = nd.wk[i], st = nd.st[i], ct = nd.ct[i], sg = nd.sg[i];
    for (std::size_t m = 0; m < K; ++m) {
      const double j = wh.r * (theta1 - th - (1.0 - slip[m]) * (s1 - st));
      const double tu = (s.c + sg * tan_phi) * (1.0 - std::exp(-j / s.K));
      I[m].tau_sin += wk * tu * st;
      I[m].sigma_cos += wk * sg * ct;
      I[m].tau_cos += wk * tu * ct;
      I[m].sigma_sin += wk * sg * st;
      I[m].tau += wk * tu;
    }
  }
  return I;
}

// The same with the rule (x, w) on [-1, 1].
template <std::size_t K>
inline std::array<Integrals, K> integrate(const Soil& s, const Wheel& wh, double theta1, double theta2,
                                          const std::array<double, K>& slip, const std::vector<double>& x,
                                          const std::vector<double>& w) {
  Nodes nd;
  prepare(s, wh, theta1, theta2, x, w, nd);
  return integrate<K>(s, wh, nd, slip);
}
inline Integrals integrate(const Soil& s, const Wheel& wh, double theta1, double theta2, double slip,
                           const std::vector<double>& x, const std::vector<double>& w) {
  return integrate<1>(s, wh, theta1, theta2, {slip}, x, w)[0];
}

// Eq. 58–61 from the integrals: F_n without damping, F_t, R_c, T_r (linear in the integrals,
// so also their derivatives from the integrals' derivatives).
inline std::array<double, 4> forces(const Wheel& wh, const Integrals& I) {
  return {wh.r * wh.b * (I.tau_sin + I.sigma_cos), wh.r * wh.b * I.tau_cos, wh.r * wh.b * I.sigma_sin,
          wh.r * wh.r * wh.b * I.tau};
}

// The contact forces (F_n without damping, F_t, R_c, T_r) for K slips at sinkage z and their
// derivatives with respect to z and the slip: the exact derivatives of the quadrature above,
// whose nodes and weights move with θ1 (θ2 = 0). `nd` holds the nodes prepared for z.
struct ContactSlopes {
  std::array<double, 4> f{}, f_z{}, f_s{};
};
template <std::size_t K>
inline std::array<ContactSlopes, K> contact_slopes(const Soil& s, const Wheel& wh, double z, const Nodes& nd,
                                                   const std::array<double, K>& slip) {
  std::array<ContactSlopes, K> out{};
  const double theta1 = nd.theta1;
  if (z <= 0 || !(theta1 > 0)) return out;
  std::array<Integrals, K> I{}, I_t{}, I_s{};  // values, ∂/∂θ1, ∂/∂slip
  const double tan_phi = nd.tan_phi, s1 = nd.s1, c1 = std::cos(theta1), r = wh.r;
  const double k = s.k_c / wh.b + s.k_phi;
  const bool linear = s.n == 1.0;
  for (std::size_t i = 0; i < nd.th.size(); ++i) {
    const double th = nd.th[i], wk = nd.wk[i], st = nd.st[i], ct = nd.ct[i], sg = nd.sg[i];
    const double xi = th / theta1, wk_t = wk / theta1;  // ∂θ_i/∂θ1, ∂w_i/∂θ1
    const double zeta = r * (ct - c1);
    const double sg_t = zeta > 0 ? k * (linear ? 1.0 : s.n * std::pow(zeta, s.n - 1.0)) * r * (s1 - st * xi) : 0.0;
    for (std::size_t m = 0; m < K; ++m) {
      const double j = r * (theta1 - th - (1.0 - slip[m]) * (s1 - st));
      const double e = std::exp(-j / s.K), a = s.c + sg * tan_phi;
      const double tu = a * (1.0 - e);
      const double tu_t = tan_phi * sg_t * (1.0 - e) + a * e * r * (1.0 - xi - (1.0 - slip[m]) * (c1 - ct * xi)) / s.K;
      const double tu_s = a * e * r * (s1 - st) / s.K;
      I[m].tau_sin += wk * tu * st;
      I[m].sigma_cos += wk * sg * ct;
      I[m].tau_cos += wk * tu * ct;
      I[m].sigma_sin += wk * sg * st;
      I[m].tau += wk * tu;
      I_t[m].tau_sin += wk_t * tu * st + wk * (tu_t * st + tu * ct * xi);
      I_t[m].sigma_cos += wk_t * sg * ct + wk * (sg_t * ct - sg * st * xi);
      I_t[m].tau_cos += wk_t * tu * ct + wk * (tu_t * ct - tu * st * xi);
      I_t[m].sigma_sin += wk_t * sg * st + wk * (sg_t * st + sg * ct * xi);
      I_t[m].tau += wk_t * tu + wk * tu_t;
      I_s[m].tau_sin += wk * tu_s * st;
      I_s[m].tau_cos += wk * tu_s * ct;
      I_s[m].tau += wk * tu_s;
    }
  }
  // θ1 = acos(1 − z/r): ∂θ1/∂z = 1/(r sin θ1), zero once the wheel is buried (θ1 = π).
  const double th_z = 1.0 - z / r > -1.0 && s1 > 0 ? 1.0 / (r * s1) : 0.0;
  for (std::size_t m = 0; m < K; ++m) {
    out[m].f = forces(wh, I[m]);
    out[m].f_z = forces(wh, I_t[m]);
    for (double& d : out[m].f_z) d *= th_z;
    out[m].f_s = forces(wh, I_s[m]);
  }
  return out;
}

struct Contact {
  double Fn = 0, Ft = 0, Rc = 0, Tr = 0, sinkage = 0, slip = 0, theta1 = 0;
};

// Forces at sinkage z, sinkage rate z_dot, wheel centre forward speed v and spin ω; with
// `mirrored`, also those of travel the other way (−v, −ω: the slip changes sign).
// `nodes` holds the prepared nodes of the last call (kept while the sinkage is unchanged).
inline std::array<Contact, 2> contact_both_ways(const Soil& s, const Wheel& wh, double c_z, double v_eps, double z,
                                                double z_dot, double v, double omega, const std::vector<double>& x,
                                                const std::vector<double>& w, Nodes& nodes, bool forward = true,
                                                bool mirrored = true) {
  std::array<Contact, 2> C{};
  if (z <= 0) return C;
  at_sinkage(s, wh, z, x, w, nodes);
  const double theta1 = nodes.theta1;
  const double rw = wh.r * omega;
  const double slip = (rw - v) / std::max({std::abs(rw), std::abs(v), v_eps});
  std::array<Integrals, 2> I{};
  if (forward && mirrored) I = integrate<2>(s, wh, nodes, {slip, -slip});
  else if (forward) I[0] = integrate<1>(s, wh, nodes, {slip})[0];
  else I[1] = integrate<1>(s, wh, nodes, {-slip})[0];
  for (int m = 0; m < 2; ++m) {
    C[m].sinkage = z;
    C[m].theta1 = theta1;
    C[m].slip = m == 0 ? slip : -slip;
    const std::array<double, 4> f = forces(wh, I[m]);
    C[m].Fn = f[0] + c_z * z_dot;
    C[m].Ft = f[1];
    C[m].Rc = f[2];
    C[m].Tr = f[3];
  }
  return C;
}
inline Contact contact(const Soil& s, const Wheel& wh, double c_z, double v_eps, double z, double z_dot, double v,
                       double omega, const std::vector<double>& x, const std::vector<double>& w) {
  Nodes nodes;
  return contact_both_ways(s, wh, c_z, v_eps, z, z_dot, v, omega, x, w, nodes, true, false)[0];
}

}  // namespace stride::terramechanics
