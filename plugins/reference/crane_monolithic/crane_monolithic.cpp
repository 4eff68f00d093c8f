// Monolithic reference for the hydraulic crane of Peiret et al. 2018, Sect. 4.1 / 4.1.1
// (BENCHMARKS.md §1-2): the crane in independent coordinates q = [θ1, θ2] (Eq. 20) and one
// or two valve-controlled cylinders (Eq. 24-29) solved as ONE system (Eq. 42),
//   z = [θ1, θ2, θ̇1, θ̇2, p1_1, p2_1 (, p1_2, p2_2)],
//   θ̈ = M⁻¹ (f − c + A_iᵀ f_h),   ṗ = h(p, s, ṡ, κ(t)),
// advanced by one of two independent integrations:
//  trapezoidal: z+ = z + h/2 (F(t, z) + F(t + h, z+)) at the manifest step h, Newton-Raphson on
//    the full residual (forward-difference Jacobian of F, iteration matrix I − h/2 J);
//  cvode_bdf: SUNDIALS CVODE, variable-order variable-step BDF with Newton and a dense
//    forward-difference Jacobian, error-controlled by rtol and atol · (1 rad, 1 rad/s, p_P).
//    CVODE keeps its history (order, step size) across the plugin's steps and steps past
//    their ends (the model has no inputs), answering each t + h from its dense output; it
//    stops exactly only at the nodes of the valve tables, where the spool law kinks (κ̇
//    jumps), and restarts there at order 1 so no step straddles a kink.
// The crane comes from plugins/common/crane.hpp, the cylinder from plugins/common/hydraulics.hpp
// (the same code the co-simulated cylinder plugin integrates), so the only difference between
// this reference and a co-simulation is the coupling.
//
// Initialization: the crane starts at rest at Table 1's angles; the actuator forces that hold
// it there (A_iᵀ λ = −f) give each cylinder's static equilibrium by Eq. 41, i.e. Table 3.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <Eigen/Dense>
#include <cvode/cvode.h>
#include <stride/stride.hpp>

#include "common/crane.hpp"
#include "common/hydraulics.hpp"
#include "integrators/common/cvode_counters.hpp"
#include "integrators/common/sundials_support.hpp"

namespace {

namespace hy = stride::hydraulics;
namespace cr = stride::crane;
namespace sd = stride_sundials;

constexpr int kMaxState = 8;
// A stop time CVODE never reaches (SUNDIALS 6.4 has no CVodeClearStopTime).
constexpr double kNoStop = 1e300;
using Vec = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxState, 1>;
using Mat = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, kMaxState, kMaxState>;

using stride::real_list_param;

// Call order: bind -> initialize(t0) -> outputs -> [equilibrate] -> { step(t, h) -> outputs }*.
// No inputs. step() takes exactly h (the subsystem step of the manifest) and throws
// stride::StepFailure when Newton (trapezoidal) does not converge, the state then left
// unchanged, or when CVODE fails (cvode_bdf).
class CraneMonolithic final : public stride::Subsystem {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "crane_monolithic";
    i.kind = stride::Kind::subsystem;
    i.form = stride::Form::stepper;
    i.version = "1.1";
    i.description =
        "Hydraulic crane + cylinders solved monolithically (Peiret 2018 Eq. 42): trapezoidal rule + Newton at the "
        "subsystem step, or adaptive SUNDIALS CVODE BDF";
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
        stride::choice_param("method", "trapezoidal", {"trapezoidal", "cvode_bdf"},
                             "trapezoidal: trapezoidal rule + Newton at the subsystem step (tolerance, "
                             "max_iterations); cvode_bdf: adaptive SUNDIALS CVODE BDF within each subsystem "
                             "step (rtol, atol)"),
        stride::real_param("rtol", 1e-6, "1", "cvode_bdf: relative tolerance of CVODE's local error test", 0.0, 1.0),
        stride::real_param("atol", 1e-6, "1",
                           "cvode_bdf: absolute tolerance of the local error test, times each state's scale "
                           "(1 rad, 1 rad/s, p_P)", 0.0),
    };
    i.parameters.insert(i.parameters.end(), more.begin(), more.end());
    return i;
  }

  explicit CraneMonolithic(const stride::Params& p)
      : geo_(cr::geometry_from(p)),
        na_(static_cast<int>(p.integer("actuators"))),
        n_(4 + 2 * na_),
        tol_(p.real("tolerance")),
        max_iter_(p.integer("max_iterations")),
        cvode_(p.string("method") == "cvode_bdf"),
        rtol_(p.real("rtol")),
        atol_(p.real("atol")) {
    if (cvode_ && rtol_ == 0.0 && atol_ == 0.0)
      throw std::invalid_argument("crane_monolithic: method cvode_bdf needs rtol > 0 or atol > 0 (both are 0)");
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
    cv_z_ = Vec::Zero(n_);
    cv_f_ = Vec::Zero(n_);
    // Where κ(t) kinks: every node of the valve tables in use.
    kinks_ = p.reals("valve_times");
    if (na_ == 2) {
      const auto t2 = p.reals("valve2_times");
      kinks_.insert(kinks_.end(), t2.begin(), t2.end());
    }
    std::sort(kinks_.begin(), kinks_.end());
    kinks_.erase(std::unique(kinks_.begin(), kinks_.end()), kinks_.end());
    bridge_.owner = this;
    bridge_.warning = [](const void* self, const char* text) {
      static_cast<const CraneMonolithic*>(self)->log_warning("{}", text);
    };
  }

  ~CraneMonolithic() override { release_cvode(); }

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
    z_stale_ = false;
    if (cvode_) start_cvode(t0);
  }

  double step(double t, double h) override { return cvode_ ? step_cvode(t, h) : step_trapezoidal(t, h); }

  double step_trapezoidal(double t, double h) {
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
                              " iterations at t = " + stride::format_text("{}", t1) + " s");
  }

  void outputs(std::span<double> y) override {
    if (cvode_) solution_at_t();
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
    if (!cvode_)
      return {{"method", "trapezoidal"},
              {"steps", steps_},
              {"newton_iterations", newton_},
              {"rhs_evaluations", rhs_count_}};
    stride_sundials::CvodeCounters c = accumulated_;
    if (mem_) c += current();
    return {{"method", "cvode_bdf"},
            {"steps", c.steps},
            {"rhs_evaluations", rhs_count_},  // Jacobian difference quotients included
            {"jacobian_evaluations", c.jacobians},
            {"error_test_failures", c.error_fails},
            {"newton_iterations", c.nonlinear},
            {"nonlinear_convergence_failures", c.conv_fails},
            {"restarts_at_valve_kinks", restarts_},
            {"last_order", c.last_order},
            {"last_step", c.last_step}};
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

  // --- cvode_bdf -------------------------------------------------------------------------
  // Counters since the last (re)initialization; CVodeReInit sets them to zero.
  stride_sundials::CvodeCounters current() const { return stride_sundials::CvodeCounters::read(mem_, true); }

  void check(int flag, const char* what) {
    if (flag < 0) throw std::runtime_error(std::string("crane_monolithic: ") + what + " failed: " + bridge_.message);
  }

  void start_cvode(double t0) {
    if (mem_) accumulated_ += current();  // statistics cover every initialize()
    release_cvode();
    ctx_ = sd::make_context();
    y_.reset(N_VNew_Serial(static_cast<sunindextype>(n_), ctx_.get()));
    atol_v_.reset(N_VNew_Serial(static_cast<sunindextype>(n_), ctx_.get()));
    auto y = sd::view(y_.get()), a = sd::view(atol_v_.get());
    for (int i = 0; i < n_; ++i) {
      y[i] = z_[i];
      a[i] = atol_ * scale_[i];  // the Newton scales: 1 rad, 1 rad/s, p_P
    }
    mem_ = CVodeCreate(CV_BDF, ctx_.get());
    if (!mem_) throw std::runtime_error("crane_monolithic: CVodeCreate failed");
    check(CVodeSetErrHandlerFn(mem_, sd::capture_error, &bridge_), "CVodeSetErrHandlerFn");
    check(CVodeInit(mem_, &CraneMonolithic::cv_rhs, t0, y_.get()), "CVodeInit");
    check(CVodeSetUserData(mem_, this), "CVodeSetUserData");
    check(CVodeSVtolerances(mem_, rtol_, atol_v_.get()), "CVodeSVtolerances");
    // One plugin step may be the whole 10-s manoeuvre (about 1000-5000 internal steps): allow
    // more than CVODE's 500 per call, but fail in well under a second when the solution stalls.
    check(CVodeSetMaxNumSteps(mem_, 100000), "CVodeSetMaxNumSteps");
    A_.reset(SUNDenseMatrix(n_, n_, ctx_.get()));
    ls_.reset(SUNLinSol_Dense(y_.get(), A_.get(), ctx_.get()));
    check(CVodeSetLinearSolver(mem_, ls_.get(), A_.get()), "CVodeSetLinearSolver");
    check(CVodeSetJacFn(mem_, &CraneMonolithic::cv_jac), "CVodeSetJacFn");
  }

  void restart_cvode(double t) {
    accumulated_ += current();
    auto y = sd::view(y_.get());
    for (int i = 0; i < n_; ++i) y[i] = z_[i];
    check(CVodeReInit(mem_, t, y_.get()), "CVodeReInit");
  }

  // CVODE steps on past t + h: the model has no inputs, so nothing ahead is unknown. It stops
  // only at the valve-table nodes (a tstop there, then a restart at order 1) and answers t + h
  // from its dense output (CV_NORMAL interpolates with CVodeGetDky when it is already past).
  double step_cvode(double t, double h) {
    const double tout = t + h, eps = 1e-12 * std::max(1.0, std::abs(tout));
    // The host moved time (beyond the roundoff of its own t + h sums): the history is not this
    // solution's.
    if (std::abs(t - t_) > eps) {
      solution_at_t();
      restart_cvode(t);
    }
    double tnow = t;
    for (;;) {
      const double kink = next_kink(tnow, eps);
      if (kink > tout + eps) {
        step_past(tout, kink, tnow);
        break;
      }
      // A kink inside (tnow, tout]: end a step exactly there and restart at order 1.
      cvode_to(kink, kink, tnow);
      tnow = kink;
      restart_cvode(kink);
      ++restarts_;
      if (kink >= tout - eps) break;
    }
    t_ = tout;
    return tout;
  }

  // The first valve-table node after t (beyond roundoff), or no stop (kNoStop).
  double next_kink(double t, double eps) const {
    for (double k : kinks_)
      if (k > t + eps) return k;
    return kNoStop;
  }

  // CVODE's own steps until it is at or past tout (not past tstop > tout); z_ follows when
  // asked (solution_at_t), from the dense output.
  void step_past(double tout, double tstop, double tnow) {
    double tcur = tnow;
    if (CVodeGetCurrentTime(mem_, &tcur) != CV_SUCCESS) tcur = tnow;
    if (tcur < tout) {
      int flag = CVodeSetStopTime(mem_, tstop);
      // The next kink as CVODE's target where there is one: its first step after a restart is
      // estimated from the distance to the target, which then does not depend on the step h.
      const double target = tstop < kNoStop ? tstop : tout;
      while (flag >= 0 && tcur < tout) flag = CVode(mem_, target, y_.get(), &tcur, CV_ONE_STEP);
      if (flag < 0) bridge_.fail("crane_monolithic: CVODE", tnow, flag);
    }
    z_stale_ = true;
  }

  // z_ at t_ from CVODE's interpolating polynomial, when the last steps left it behind.
  void solution_at_t() {
    if (!z_stale_) return;
    const int flag = CVodeGetDky(mem_, t_, 0, y_.get());
    if (flag < 0) bridge_.fail("crane_monolithic: CVodeGetDky", t_, flag);
    auto y = sd::view(y_.get());
    for (int i = 0; i < n_; ++i) z_[i] = y[i];
    z_stale_ = false;
  }

  // Solution at tout into z_, CVODE not stepping past tstop (>= tout).
  void cvode_to(double tout, double tstop, double tnow) {
    z_stale_ = false;
    double tret = tnow;
    int flag = CVodeSetStopTime(mem_, tstop);
    if (flag == CV_SUCCESS) flag = CVode(mem_, tout, y_.get(), &tret, CV_NORMAL);
    if (flag < 0) bridge_.fail("crane_monolithic: CVODE", tnow, flag);
    // At the stop time SUNDIALS 6.4 may hand out an interpolated value; take the solver's own
    // step solution when its last step ended there (see plugins/integrators/cvode).
    double tcur = tret;
    N_Vector ycur = nullptr;
    const double eps = 1e-12 * std::max(1.0, std::abs(tout));
    if (tstop == tout && CVodeGetCurrentTime(mem_, &tcur) == CV_SUCCESS && std::abs(tcur - tout) <= eps &&
        CVodeGetCurrentState(mem_, &ycur) == CV_SUCCESS && ycur)
      N_VScale(1.0, ycur, y_.get());
    auto y = sd::view(y_.get());
    for (int i = 0; i < n_; ++i) z_[i] = y[i];
  }

  static int cv_rhs(double t, N_Vector y, N_Vector ydot, void* data) {
    auto* self = static_cast<CraneMonolithic*>(data);
    try {
      auto in = sd::view(y), out = sd::view(ydot);
      for (int i = 0; i < self->n_; ++i) self->cv_z_[i] = in[i];
      self->rhs(t, self->cv_z_, self->cv_f_);
      for (int i = 0; i < self->n_; ++i) out[i] = self->cv_f_[i];
      // Non-finite rates (a trial state far off): recoverable, CVODE retries a smaller step.
      return self->cv_f_.allFinite() ? 0 : 1;
    } catch (...) {
      self->bridge_.error = std::current_exception();
      return -1;
    }
  }

  static int cv_jac(double t, N_Vector y, N_Vector fy, SUNMatrix J, void* data, N_Vector, N_Vector, N_Vector) {
    auto* self = static_cast<CraneMonolithic*>(data);
    try {
      auto in = sd::view(y), f = sd::view(fy);
      for (int i = 0; i < self->n_; ++i) {
        self->cv_z_[i] = in[i];
        self->cv_f_[i] = f[i];
      }
      self->jacobian(t, self->cv_z_, self->cv_f_);
      Eigen::Map<Eigen::MatrixXd>(SUNDenseMatrix_Data(J), self->n_, self->n_) = self->J_;
      return 0;
    } catch (...) {
      self->bridge_.error = std::current_exception();
      return -1;
    }
  }

  void release_cvode() {
    if (mem_) CVodeFree(&mem_);
    mem_ = nullptr;
    ls_.reset();
    A_.reset();
    atol_v_.reset();
    y_.reset();
    ctx_.reset();
  }

  cr::Geometry geo_;
  int na_, n_;
  double tol_;
  long max_iter_;
  bool cvode_;
  bool z_stale_ = false;  // cvode_bdf: CVODE is past t_ and z_ not yet interpolated there
  double rtol_, atol_;
  std::vector<double> kinks_;
  Vec cv_z_, cv_f_;
  sd::Bridge bridge_;  // error messages and exceptions from the callbacks (its sys is unused)
  stride_sundials::CvodeCounters accumulated_;
  long restarts_ = 0;
  // Destroyed in release_cvode() in reverse order of creation; the context goes last.
  sd::Context ctx_;
  sd::Vector y_, atol_v_;
  sd::Matrix A_;
  sd::LinearSolver ls_;
  void* mem_ = nullptr;
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
