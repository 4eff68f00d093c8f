// Monolithic reference for the hydraulic crane of Peiret et al. 2018, Sect. 4.1 / 4.1.1
// (BENCHMARKS.md §1-2): the crane in independent coordinates q = [θ1, θ2] (Eq. 20) and one
// or two valve-controlled cylinders (Eq. 24-29) solved as ONE system (Eq. 42),
//   z = [θ1, θ2, θ̇1, θ̇2, p1_1, p2_1 (, p1_2, p2_2)],
//   θ̈ = M⁻¹ (f − c + A_iᵀ f_h),   ṗ = h(p, s, ṡ, κ(t)),
// advanced by the trapezoidal rule z+ = z + h/2 (F(t, z) + F(t + h, z+)) with Newton-Raphson
// on the full residual (forward-difference Jacobian of F, iteration matrix I − h/2 J).
// The crane comes from plugins/common/crane.hpp, the cylinder from plugins/common/hydraulics.hpp
// (the same code the co-simulated cylinder plugin integrates), so the only difference between
// this reference and a co-simulation is the coupling.
//
// Initialization: the crane starts at rest at Table 1's angles; the actuator forces that hold
// it there (A_iᵀ λ = −f) give each cylinder's static equilibrium by Eq. 41, i.e. Table 3.
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <stride/stride.hpp>

#include "common/crane.hpp"
#include "common/hydraulics.hpp"

namespace {

namespace hy = stride::hydraulics;
namespace cr = stride::crane;

constexpr int kMaxState = 8;
using Vec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxState, 1>;
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxState, kMaxState>;

using stride::real_list_param;

// Call order: bind -> initialize(t0) -> outputs -> [equilibrate] -> { step(t, h) -> outputs }*.
// No inputs. step() takes exactly h (the subsystem step of the manifest) and throws
// stride::StepFailure when Newton does not converge; the state is then left unchanged.
class CraneMonolithic final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "crane_monolithic";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::stepper;
    i.version = "1.0";
    i.description = "Hydraulic crane + cylinders solved monolithically, trapezoidal rule + Newton (Peiret 2018 Eq. 42)";
    i.parameters = cr::geometry_params();
    const auto cyl = hy::cylinder_params();
    i.parameters.insert(i.parameters.end(), cyl.begin(), cyl.end());
    const std::vector<stride::ParamSpec> more = {
        stride::integer_param("actuators", 1, "1: crane of Sect. 4.1; 2: double-actuated crane of Sect. 4.1.1", 1, 2),
        real_list_param("valve_times", {2.0, 2.001, 6.0, 6.002}, "s",
                        "actuator 1 spool offset table nodes (default Eq. 30, t_a = 2 s, t_b = 6 s, t_r = 1 ms)"),
        real_list_param("valve_offsets", {0.0, -0.01, -0.01, 0.02}, "1",
                        "actuator 1 spool offsets from its equilibrium kappa0 (default Eq. 30)"),
        real_list_param("valve2_times", {0.0, 2.0}, "s", "actuator 2 spool offset table nodes (default Eq. 35)"),
        real_list_param("valve2_offsets", {0.0, -0.005}, "1",
                        "actuator 2 spool offsets from its equilibrium kappa0 (default Eq. 35)"),
        stride::real_param("tolerance", 1e-10, "1",
                           "Newton converges when every |dz_i| <= tolerance * scale_i (1 rad, 1 rad/s, p_P)", 1e-16),
        stride::integer_param("max_iterations", 20, "Newton iterations allowed per step", 1),
    };
    i.parameters.insert(i.parameters.end(), more.begin(), more.end());
    return i;
  }

  explicit CraneMonolithic(const stride::Params& p)
      : geo_(cr::geometry_from(p)),
        na_(static_cast<int>(p.integer("actuators"))),
        n_(4 + 2 * na_),
        tol_(p.real("tolerance")),
        max_iter_(p.integer("max_iterations")) {
    cyl_[0] = cyl_[1] = hy::cylinder_from(p);
    valve_[0].offset = hy::PiecewiseLinear(p.reals("valve_times"), p.reals("valve_offsets"), "valve table 1");
    valve_[1].offset = hy::PiecewiseLinear(p.reals("valve2_times"), p.reals("valve2_offsets"), "valve table 2");
    z_ = Vec::Zero(n_);
    z1_ = Vec::Zero(n_);
    zp_ = Vec::Zero(n_);
    f0_ = Vec::Zero(n_);
    f1_ = Vec::Zero(n_);
    fp_ = Vec::Zero(n_);
    r_ = Vec::Zero(n_);
    dz_ = Vec::Zero(n_);
    scale_ = Vec::Ones(n_);
    for (int k = 4; k < n_; ++k) scale_[k] = cyl_[0].p_P;
    J_ = Mat::Zero(n_, n_);
    G_ = Mat::Zero(n_, n_);
    lu_ = Eigen::PartialPivLU<Mat>(n_);
  }

  std::vector<stride::PortSpec> ports() const override {
    const std::size_t m = static_cast<std::size_t>(na_);
    std::vector<std::string> el = na_ == 1 ? std::vector<std::string>{"1"} : std::vector<std::string>{"1", "2"};
    auto out = [&](std::string name, std::size_t size, std::string unit, std::string doc) {
      auto p = stride::output(std::move(name), size, std::move(unit), std::move(doc));
      if (size == m) p.elements = el;
      return p;
    };
    return {
        out("s", m, "m", "actuator lengths"),
        out("s_dot", m, "m/s", "actuator rates"),
        out("p1", m, "Pa", "chamber 1 pressures (chamber 1 shrinks as s grows)"),
        out("p2", m, "Pa", "chamber 2 pressures"),
        out("f_h", m, "N", "actuator forces (p2 - p1) a_p - c s_dot, positive extends (Eq. 24)"),
        out("kappa", m, "1", "spool displacements"),
        out("x_R", 1, "m", "x of the tip mass R"),
        out("y_R", 1, "m", "y of the tip mass R"),
        out("x_R_dot", 1, "m/s", "x velocity of the tip mass R"),
        out("energy", 1, "J", "mechanical energy T + V of the crane"),
    };
  }

  void initialize(double t0) override {
    t_ = t0;
    const Eigen::Vector2d q0(geo_.theta1_0, geo_.theta2_0);
    const cr::Actuators a = cr::actuators(geo_, q0, Eigen::Vector2d::Zero());
    f_eq_ = cr::equilibrium_forces(geo_, q0, na_);
    z_.setZero();
    z_[0] = q0[0];
    z_[1] = q0[1];
    for (int k = 0; k < na_; ++k) {
      cyl_[k].s0 = a.s[k];
      try {
        eq_[k] = hy::solve_equilibrium(cyl_[k], f_eq_[k]);
      } catch (const std::runtime_error& e) {
        throw stride::StepFailure(std::string("crane_monolithic initialization: ") + e.what());
      }
      valve_[k].kappa0 = eq_[k].kappa - valve_[k].offset(t0);
      z_[4 + 2 * k] = eq_[k].p1;
      z_[5 + 2 * k] = eq_[k].p2;
    }
    // Generalized acceleration left at rest (zero when the equilibrium is exact).
    rhs(t0, z_, f0_);
    rest_residual_ = f0_.segment(2, 2).cwiseAbs().maxCoeff();
  }

  double step(double t, double h) override {
    rhs(t, z_, f0_);
    z1_ = z_ + h * f0_;  // explicit Euler predictor
    const double t1 = t + h;
    for (long it = 1; it <= max_iter_; ++it) {
      rhs(t1, z1_, f1_);
      r_ = z1_ - z_ - 0.5 * h * (f0_ + f1_);
      jacobian(t1, z1_, f1_);
      G_ = Mat::Identity(n_, n_) - 0.5 * h * J_;
      lu_.compute(G_);
      dz_ = lu_.solve(r_);
      z1_ -= dz_;
      ++newton_;
      if (!z1_.allFinite()) break;
      if ((dz_.cwiseAbs().array() <= tol_ * scale_.array()).all()) {
        z_ = z1_;
        t_ = t1;
        ++steps_;
        return t1;
      }
    }
    throw stride::StepFailure("crane_monolithic: Newton-Raphson did not converge in " + std::to_string(max_iter_) +
                              " iterations at t = " + std::to_string(t1));
  }

  void outputs(std::span<double> y) override {
    const Eigen::Vector2d q(z_[0], z_[1]), v(z_[2], z_[3]);
    const cr::Actuators a = cr::actuators(geo_, q, v);
    std::size_t i = 0;
    const int m = na_;
    for (int k = 0; k < m; ++k) y[i + k] = a.s[k];
    i += m;
    for (int k = 0; k < m; ++k) y[i + k] = a.s_dot[k];
    i += m;
    for (int k = 0; k < m; ++k) y[i + k] = z_[4 + 2 * k];
    i += m;
    for (int k = 0; k < m; ++k) y[i + k] = z_[5 + 2 * k];
    i += m;
    for (int k = 0; k < m; ++k) y[i + k] = cyl_[k].force(z_[4 + 2 * k], z_[5 + 2 * k], a.s_dot[k]);
    i += m;
    for (int k = 0; k < m; ++k) y[i + k] = valve_[k](t_);
    i += m;
    const Eigen::Vector2d R = cr::point_R(geo_, q), Rd = cr::velocity_R(geo_, q, v);
    y[i++] = R[0];
    y[i++] = R[1];
    y[i++] = Rd[0];
    y[i++] = cr::kinetic_energy(geo_, q, v) + cr::potential_energy(geo_, q);
  }

  stride::json statistics() const override {
    return {{"steps", steps_}, {"newton_iterations", newton_}, {"rhs_evaluations", rhs_count_}};
  }

  stride::json report() const override {
    stride::json eq = stride::json::array();
    for (int k = 0; k < na_; ++k)
      eq.push_back({{"actuator", k + 1},
                    {"f_required", f_eq_[k]},
                    {"kappa0", valve_[k].kappa0},
                    {"kappa_t0", eq_[k].kappa},
                    {"p1_0", eq_[k].p1},
                    {"p2_0", eq_[k].p2},
                    {"s0", cyl_[k].s0},
                    {"newton_iterations", eq_[k].iterations}});
    return {{"equilibrium", eq}, {"rest_acceleration_residual", rest_residual_}};
  }

  // Hydraulic energy storage is not modelled (T + V is on the port "energy").
  double energy() const override { return std::numeric_limits<double>::quiet_NaN(); }

 private:
  // F(t, z) of Eq. 42 in independent coordinates.
  void rhs(double t, const Vec& z, Vec& f) {
    ++rhs_count_;
    const Eigen::Vector2d q(z[0], z[1]), v(z[2], z[3]);
    const cr::Actuators a = cr::actuators(geo_, q, v);
    Eigen::Vector2d gen = cr::gravity_forces(geo_, q) - cr::coriolis(geo_, q, v);
    for (int k = 0; k < na_; ++k) {
      const double p1 = z[4 + 2 * k], p2 = z[5 + 2 * k];
      const auto r = cyl_[k].rates(a.s[k], a.s_dot[k], valve_[k](t), p1, p2);
      f[4 + 2 * k] = r.dp1;
      f[5 + 2 * k] = r.dp2;
      gen += a.A.row(k).transpose() * cyl_[k].force(p1, p2, a.s_dot[k]);
    }
    f[0] = v[0];
    f[1] = v[1];
    f.segment<2>(2) = cr::mass_matrix(geo_, q).llt().solve(gen);
  }

  // Forward-difference dF/dz at (t, z); fz = F(t, z).
  void jacobian(double t, const Vec& z, const Vec& fz) {
    for (int j = 0; j < n_; ++j) {
      const double dz = 1e-7 * std::max(scale_[j] * 1e-3, std::abs(z[j]));
      zp_ = z;
      zp_[j] += dz;
      rhs(t, zp_, fp_);
      J_.col(j) = (fp_ - fz) / dz;
    }
  }

  cr::Geometry geo_;
  int na_, n_;
  double tol_;
  long max_iter_;
  hy::Cylinder cyl_[2];
  hy::ValveLaw valve_[2];
  hy::Equilibrium eq_[2];
  Eigen::Vector2d f_eq_ = Eigen::Vector2d::Zero();
  double rest_residual_ = 0.0;
  Vec z_, z1_, zp_, f0_, f1_, fp_, r_, dz_, scale_;
  Mat J_, G_;
  Eigen::PartialPivLU<Mat> lu_;
  double t_ = 0.0;
  long steps_ = 0, newton_ = 0, rhs_count_ = 0;
};

}  // namespace

STRIDE_PLUGIN(CraneMonolithic)
