// SUNDIALS CVODE (variable-order, variable-step BDF or Adams-Moulton) as a Stride integrator.
// A system with inputs: each step() integrates to exactly t + h (stop time + CV_NORMAL), so
// CVODE never evaluates the system (and its inputs) beyond the communication point. A system
// without inputs (nothing ahead is unknown): CVODE steps past t + h with its own steps and
// answers t + h from its dense output (CV_NORMAL without a stop time interpolates), unless
// step_past_communication_points is false. The solver keeps its history
// (order, step size) across steps; it is reinitialized only after reset() or when the state
// handed in differs from the one it returned last (someone modified x between steps).
//  bdf:   Newton iteration, dense direct linear solver, the system's analytic Jacobian when it
//         provides one (else forward differences). For stiff systems.
//  adams: fixed-point (functional) iteration, no Jacobian. For non-stiff systems.
#include <algorithm>
#include <cmath>

#include <cvode/cvode.h>
#include <sunnonlinsol/sunnonlinsol_fixedpoint.h>

#include "../common/cvode_counters.hpp"
#include "../common/sundials_support.hpp"

namespace {

namespace sd = stride_sundials;

// Call order: reset(sys, t0, x0) -> { step(sys, t, h, x) }*. step returns t + h or throws
// stride::StepFailure (CVODE error, or an exception from the system rethrown).
class Cvode final : public stride::Integrator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "cvode";
    i.kind = stride::Kind::integrator;
    i.version = "1.0";
    i.description = "SUNDIALS CVODE, variable step BDF (Newton, dense) or Adams (fixed point)";
    i.parameters = {
        stride::choice_param("method", "bdf", {"bdf", "adams"},
                             "linear multistep family: bdf (stiff) or adams (non-stiff)"),
        stride::real_param("rtol", 1e-6, "1", "relative tolerance of the local error test", 0.0),
        stride::real_param("atol", 1e-8, "1",
                           "absolute tolerance of the local error test for a state of nominal value 1; "
                           "scaled by each state's nominal value (or replaced by its own tolerance)", 0.0),
        stride::bool_param("restart_at_input_discontinuities", true,
                           "reinitialize the solver (order 1, new step estimate) at every communication "
                           "point where new input samples arrived, instead of letting the error test "
                           "absorb the jump"),
        stride::real_param("max_step", 0.0, "s", "largest internal step; 0 = unlimited", 0.0),
        stride::integer_param("max_internal_steps", 100000,
                              "internal steps allowed within one step() call", 1),
        stride::bool_param("step_past_communication_points", true,
                           "for a system without inputs: let CVODE step past t + h and interpolate there, "
                           "instead of ending a step at every t + h"),
    };
    return i;
  }
  explicit Cvode(const stride::Params& p)
      : bdf_(p.string("method") == "bdf"),
        rtol_(p.real("rtol")),
        atol_(p.real("atol")),
        max_step_(p.real("max_step")),
        max_internal_(p.integer("max_internal_steps")),
        restart_at_jumps_(p.boolean("restart_at_input_discontinuities")),
        step_past_(p.boolean("step_past_communication_points")) {
    bridge_.owner = this;
    bridge_.warning = [](const void* self, const char* text) {
      static_cast<const Cvode*>(self)->log_warning("{}", text);
    };
  }

  ~Cvode() override { release(); }

  void reset(stride::OdeSystem& sys, double t0, std::span<const double> x0) override {
    if (mem_) add_counters();  // statistics cover the whole run, across resets
    release();
    n_ = sys.state_size();
    ctx_ = sd::make_context();
    y_.reset(N_VNew_Serial(static_cast<sunindextype>(n_), ctx_.get()));
    for (std::size_t i = 0; i < n_; ++i) sd::view(y_.get())[i] = x0[i];
    bridge_.sys = &sys;

    mem_ = CVodeCreate(bdf_ ? CV_BDF : CV_ADAMS, ctx_.get());
    if (!mem_) throw std::runtime_error("cvode: CVodeCreate failed");
    check(CVodeSetErrHandlerFn(mem_, sd::capture_error, &bridge_), "CVodeSetErrHandlerFn");
    check(CVodeInit(mem_, &Cvode::rhs, t0, y_.get()), "CVodeInit");
    check(CVodeSetUserData(mem_, &bridge_), "CVodeSetUserData");
    atol_v_ = sd::tolerance_vector(sys, atol_, n_, ctx_.get());
    check(CVodeSVtolerances(mem_, rtol_, atol_v_.get()), "CVodeSVtolerances");
    check(CVodeSetMaxNumSteps(mem_, max_internal_), "CVodeSetMaxNumSteps");
    if (max_step_ > 0.0) check(CVodeSetMaxStep(mem_, max_step_), "CVodeSetMaxStep");
    if (bdf_) {
      A_.reset(SUNDenseMatrix(static_cast<sunindextype>(n_), static_cast<sunindextype>(n_), ctx_.get()));
      ls_.reset(SUNLinSol_Dense(y_.get(), A_.get(), ctx_.get()));
      check(CVodeSetLinearSolver(mem_, ls_.get(), A_.get()), "CVodeSetLinearSolver");
      Eigen::MatrixXd probe = Eigen::MatrixXd::Zero(n_, n_);
      bridge_.analytic = sys.jacobian(t0, x0, probe);
      check(CVodeSetJacFn(mem_, &Cvode::jac), "CVodeSetJacFn");
    } else {
      nls_.reset(SUNNonlinSol_FixedPoint(y_.get(), 0, ctx_.get()));
      check(CVodeSetNonlinearSolver(mem_, nls_.get()), "CVodeSetNonlinearSolver");
    }
    t_ = t0;
    jump_ = false;
    // Inputs are read at the times CVODE evaluates: only without any, it may go beyond t + h.
    const auto ports = sys.ports();
    ahead_ = step_past_ && std::none_of(ports.begin(), ports.end(), [](const stride::PortSpec& q) {
               return q.direction == stride::Direction::input;
             });
  }

  double step(stride::OdeSystem& sys, double t, double h, std::span<double> x) override {
    bridge_.sys = &sys;
    if (jump_ || !sd::same_time(t, t_) || !sd::same_state(x, y_.get())) {
      // The host moved time or state, or the inputs jump: CVODE's history no longer describes
      // the solution.
      if (!jump_) log_debug("restarted at t = {} s: the host changed the time or the state since the last step", t);
      add_counters();
      for (std::size_t i = 0; i < n_; ++i) sd::view(y_.get())[i] = x[i];
      check(CVodeReInit(mem_, t, y_.get()), "CVodeReInit");
    }
    jump_ = false;
    const double tout = t + h;
    double tret = t;
    if (ahead_) {
      // Past tout with CVODE's own steps; y_ is the interpolant at tout.
      const int flag = CVode(mem_, tout, y_.get(), &tret, CV_NORMAL);
      if (flag < 0) bridge_.fail("CVODE", t, flag);
      auto y = sd::view(y_.get());
      for (std::size_t i = 0; i < n_; ++i) x[i] = y[i];
      t_ = tret;
      return tret;
    }
    int flag = CVodeSetStopTime(mem_, tout);
    if (flag == CV_SUCCESS) flag = CVode(mem_, tout, y_.get(), &tret, CV_NORMAL);
    if (flag < 0) bridge_.fail("CVODE", t, flag);
    // At the stop time SUNDIALS 6.4 may hand out an interpolated value; take the solver's own
    // step solution when its last step ended there (within roundoff), as SUNDIALS >= 6.6 does.
    double tcur = tret;
    N_Vector ycur = nullptr;
    if (CVodeGetCurrentTime(mem_, &tcur) == CV_SUCCESS &&
        std::abs(tcur - tout) <= 1e-12 * std::max(1.0, std::abs(tout)) &&
        CVodeGetCurrentState(mem_, &ycur) == CV_SUCCESS && ycur)
      N_VScale(1.0, ycur, y_.get());
    auto y = sd::view(y_.get());
    for (std::size_t i = 0; i < n_; ++i) x[i] = y[i];
    t_ = tret;
    return tret;
  }

  void input_discontinuity(double) override {
    jump_ = restart_at_jumps_;
    ++discontinuities_;
  }

  stride::json statistics() const override {
    stride_sundials::CvodeCounters c = accumulate_;
    if (mem_) c += current();
    return {{"steps", c.steps},
            {"rhs_evaluations", bridge_.evaluations},
            {"newton_iterations", c.nonlinear},
            {"rejected_steps", c.error_fails},
            {"input_discontinuities", discontinuities_},
            {"jacobian_evaluations", c.jacobians},
            {"nonlinear_convergence_failures", c.conv_fails}};
  }

 private:
  // Counters since the last (re)initialization; CVodeReInit sets them to zero.
  stride_sundials::CvodeCounters current() const { return stride_sundials::CvodeCounters::read(mem_, bdf_); }
  void add_counters() { accumulate_ += current(); }

  static int rhs(double t, N_Vector y, N_Vector ydot, void* data) {
    return sd::rhs(*static_cast<sd::Bridge*>(data), t, y, ydot);
  }
  static int jac(double t, N_Vector y, N_Vector fy, SUNMatrix J, void* data, N_Vector tmp1,
                 N_Vector tmp2, N_Vector) {
    return sd::jacobian(*static_cast<sd::Bridge*>(data), t, y, fy, J, tmp1, tmp2);
  }

  void check(int flag, const char* what) {
    if (flag < 0) throw std::runtime_error(std::string("cvode: ") + what + " failed: " + bridge_.message);
  }

  void release() {
    if (mem_) CVodeFree(&mem_);
    mem_ = nullptr;
    nls_.reset();
    ls_.reset();
    A_.reset();
    atol_v_.reset();
    y_.reset();
    ctx_.reset();
  }

  bool bdf_;
  double rtol_, atol_, max_step_;
  long max_internal_;
  bool restart_at_jumps_;
  bool step_past_;
  bool ahead_ = false;  // step past t + h: the system has no inputs
  bool jump_ = false;  // inputs jump at the next step's start
  long discontinuities_ = 0;
  std::size_t n_ = 0;
  double t_ = 0.0;
  sd::Bridge bridge_;
  stride_sundials::CvodeCounters accumulate_;
  // Destroyed in release() in reverse order of creation; the context goes last.
  sd::Context ctx_;
  sd::Vector y_;
  sd::Vector atol_v_;
  sd::Matrix A_;
  sd::LinearSolver ls_;
  sd::NonlinearSolver nls_;
  void* mem_ = nullptr;
};

}  // namespace

STRIDE_PLUGIN(Cvode)
