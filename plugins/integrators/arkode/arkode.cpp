// SUNDIALS ARKODE (ARKStep, adaptive additive Runge-Kutta) as a Stride integrator. Each step()
// integrates to exactly t + h (stop time + ARK_NORMAL), so the system and its inputs are never
// evaluated beyond the communication point; except, in explicit and implicit mode, for a system
// without inputs (nothing ahead is unknown): ARKODE steps past t + h and answers t + h from its
// dense output (ARK_NORMAL without a stop time), unless step_past_communication_points is false.
//  explicit: ERK, fe = f (default 4th-order table). Non-stiff systems.
//  implicit: DIRK, fi = f, Newton with a dense direct linear solver and the system's analytic
//            Jacobian when it provides one (else forward differences). Stiff systems.
//  imex:     ARK with a linearly implicit splitting frozen at the start of every step():
//              fi(t, y) = J0 (y - x0),   fe(t, y) = f(t, y) - J0 (y - x0),
//            J0 = df/dx(t, x0) (analytic or forward differences). fe + fi = f exactly, the
//            stiff linear part is treated implicitly (one Newton iteration solves it) and only
//            the nonlinear remainder explicitly. Because the splitting changes at every
//            step(), the solver is restarted there with ARKStepReset, which keeps its
//            step-size history.
// In explicit/implicit mode ARKODE is reinitialized only after reset() or when the state
// handed in differs from the one it returned last.
#include <algorithm>
#include <cmath>
#include <vector>

#include <arkode/arkode_arkstep.h>

#include "../common/sundials_support.hpp"

namespace {

namespace sd = stride_sundials;

enum class Mode { explicit_rk, implicit_rk, imex };

// Call order: reset(sys, t0, x0) -> { step(sys, t, h, x) }*. step returns t + h or throws
// stride::StepFailure (ARKODE error, or an exception from the system rethrown).
class Arkode final : public stride::Integrator {
 public:
  static stride::PluginInfo describe() {
    stride::PluginInfo i;
    i.name = "arkode";
    i.kind = stride::Kind::integrator;
    i.version = "1.0";
    i.description = "SUNDIALS ARKODE ARKStep: adaptive explicit, implicit (DIRK) or IMEX Runge-Kutta";
    i.parameters = {
        stride::choice_param("method", "explicit", {"explicit", "implicit", "imex"},
                             "explicit: ERK on f; implicit: DIRK on f (Newton, dense); imex: ARK "
                             "with fi = J0 (x - x0) frozen at each step start, fe = f - fi"),
        stride::real_param("rtol", 1e-6, "1", "relative tolerance of the local error test", 0.0),
        stride::real_param("atol", 1e-8, "1",
                           "absolute tolerance of the local error test for a state of nominal value 1; "
                           "scaled by each state's nominal value (or replaced by its own tolerance)", 0.0),
        stride::bool_param("restart_at_input_discontinuities", true,
                           "reinitialize the solver (order 1, new step estimate) at every communication "
                           "point where new input samples arrived, instead of letting the error test "
                           "absorb the jump"),
        stride::integer_param("max_internal_steps", 100000,
                              "internal steps allowed within one step() call", 1),
        stride::bool_param("step_past_communication_points", true,
                           "explicit and implicit mode, for a system without inputs: let ARKODE step past "
                           "t + h and interpolate there, instead of ending a step at every t + h"),
    };
    return i;
  }
  explicit Arkode(const stride::Params& p)
      : rtol_(p.real("rtol")), atol_(p.real("atol")), max_internal_(p.integer("max_internal_steps")),
        restart_at_jumps_(p.boolean("restart_at_input_discontinuities")),
        step_past_(p.boolean("step_past_communication_points")) {
    const auto m = p.string("method");
    mode_ = m == "explicit" ? Mode::explicit_rk : m == "implicit" ? Mode::implicit_rk : Mode::imex;
    bridge_.owner = this;
    bridge_.warning = [](const void* self, const char* text) {
      static_cast<const Arkode*>(self)->log_warning("{}", text);
    };
  }

  ~Arkode() override { release(); }

  void reset(stride::OdeSystem& sys, double t0, std::span<const double> x0) override {
    if (mem_) add_counters();  // statistics cover the whole run, across resets
    release();
    n_ = sys.state_size();
    ctx_ = sd::make_context();
    y_.reset(N_VNew_Serial(static_cast<sunindextype>(n_), ctx_.get()));
    for (std::size_t i = 0; i < n_; ++i) sd::view(y_.get())[i] = x0[i];
    bridge_.sys = &sys;
    J0_ = Eigen::MatrixXd::Zero(n_, n_);
    x0_ = Eigen::VectorXd::Zero(n_);
    dy_ = Eigen::VectorXd::Zero(n_);
    f0_.assign(n_, 0.0);
    xp_.assign(n_, 0.0);
    fp_.assign(n_, 0.0);
    analytic_ = sys.jacobian(t0, x0, J0_);
    bridge_.analytic = analytic_;

    switch (mode_) {
      case Mode::explicit_rk: mem_ = ARKStepCreate(&Arkode::f_full, nullptr, t0, y_.get(), ctx_.get()); break;
      case Mode::implicit_rk: mem_ = ARKStepCreate(nullptr, &Arkode::f_full, t0, y_.get(), ctx_.get()); break;
      case Mode::imex: mem_ = ARKStepCreate(&Arkode::f_explicit, &Arkode::f_linear, t0, y_.get(), ctx_.get()); break;
    }
    if (!mem_) throw std::runtime_error("arkode: ARKStepCreate failed");
    check(ARKStepSetErrHandlerFn(mem_, sd::capture_error, &bridge_), "ARKStepSetErrHandlerFn");
    check(ARKStepSetUserData(mem_, this), "ARKStepSetUserData");
    atol_v_ = sd::tolerance_vector(sys, atol_, n_, ctx_.get());
    check(ARKStepSVtolerances(mem_, rtol_, atol_v_.get()), "ARKStepSVtolerances");
    check(ARKStepSetMaxNumSteps(mem_, max_internal_), "ARKStepSetMaxNumSteps");
    if (mode_ != Mode::explicit_rk) {
      A_.reset(SUNDenseMatrix(static_cast<sunindextype>(n_), static_cast<sunindextype>(n_), ctx_.get()));
      ls_.reset(SUNLinSol_Dense(y_.get(), A_.get(), ctx_.get()));
      check(ARKStepSetLinearSolver(mem_, ls_.get(), A_.get()), "ARKStepSetLinearSolver");
      // Stage predictor from the maximum-order interpolant. With the default trivial predictor
      // (SUNDIALS 6.4) the stop time at every step() degraded the implicit solution to ~5e-4 on
      // an oscillator at rtol = atol = 1e-8 (the single-call run reached 6e-9); with this one,
      // 3e-9.
      check(ARKStepSetPredictorMethod(mem_, 1), "ARKStepSetPredictorMethod");
      if (mode_ == Mode::imex) {
        check(ARKStepSetJacFn(mem_, &Arkode::jac_frozen), "ARKStepSetJacFn");
        // J0 changes at every step(): rebuild the iteration matrix at every internal step.
        check(ARKStepSetLSetupFrequency(mem_, 1), "ARKStepSetLSetupFrequency");
        check(ARKStepSetJacEvalFrequency(mem_, 1), "ARKStepSetJacEvalFrequency");
      } else {
        check(ARKStepSetJacFn(mem_, &Arkode::jac_full), "ARKStepSetJacFn");
      }
    }
    t_ = t0;
    jump_ = false;
    // Inputs are read at the times ARKODE evaluates: only without any, it may go beyond t + h.
    const auto ports = sys.ports();
    ahead_ = step_past_ && mode_ != Mode::imex &&
             std::none_of(ports.begin(), ports.end(),
                          [](const stride::PortSpec& q) { return q.direction == stride::Direction::input; });
  }

  double step(stride::OdeSystem& sys, double t, double h, std::span<double> x) override {
    bridge_.sys = &sys;
    if (mode_ == Mode::imex) {
      freeze_linear_part(sys, t, x);
      for (std::size_t i = 0; i < n_; ++i) sd::view(y_.get())[i] = x[i];
      check_step(ARKStepReset(mem_, t, y_.get()), t);
    } else if (jump_ && t == t_ && sd::same_state(x, y_.get())) {
      // Same state, new inputs: drop the stage carried over (FSAL) and the step estimate.
      check_step(ARKStepReset(mem_, t, y_.get()), t);
    } else if (!sd::same_time(t, t_) || !sd::same_state(x, y_.get())) {
      // The host moved time or state: the solver's history no longer describes the solution.
      add_counters();
      for (std::size_t i = 0; i < n_; ++i) sd::view(y_.get())[i] = x[i];
      check_step(mode_ == Mode::explicit_rk
                     ? ARKStepReInit(mem_, &Arkode::f_full, nullptr, t, y_.get())
                     : ARKStepReInit(mem_, nullptr, &Arkode::f_full, t, y_.get()),
                 t);
    }
    jump_ = false;
    const double tout = t + h;
    double tret = t;
    if (ahead_) {
      // Past tout with ARKODE's own steps; y_ is the interpolant at tout.
      check_step(ARKStepEvolve(mem_, tout, y_.get(), &tret, ARK_NORMAL), t);
      auto y = sd::view(y_.get());
      for (std::size_t i = 0; i < n_; ++i) x[i] = y[i];
      t_ = tret;
      return tret;
    }
    int flag = ARKStepSetStopTime(mem_, tout);
    if (flag == ARK_SUCCESS) flag = ARKStepEvolve(mem_, tout, y_.get(), &tret, ARK_NORMAL);
    check_step(flag, t);
    // At the stop time SUNDIALS 6.4 may hand out an interpolated value; take the solver's own
    // step solution when its last step ended there (within roundoff), as SUNDIALS >= 6.6 does.
    double tcur = tret;
    N_Vector ycur = nullptr;
    if (ARKStepGetCurrentTime(mem_, &tcur) == ARK_SUCCESS &&
        std::abs(tcur - tout) <= 1e-12 * std::max(1.0, std::abs(tout)) &&
        ARKStepGetCurrentState(mem_, &ycur) == ARK_SUCCESS && ycur)
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
    Counters c = accumulate_;
    if (mem_) c += current();
    stride::json s = {{"steps", c.steps},
                      {"step_attempts", c.attempts},
                      {"rhs_evaluations", bridge_.evaluations},
                      {"rejected_steps", c.error_fails},
                      {"input_discontinuities", discontinuities_}};
    if (mode_ != Mode::explicit_rk) {
      s["newton_iterations"] = c.nonlinear;
      s["jacobian_evaluations"] = c.jacobians;
    }
    if (mode_ == Mode::imex) s["frozen_jacobians"] = frozen_;
    return s;
  }

 private:
  struct Counters {
    long steps = 0, attempts = 0, nonlinear = 0, error_fails = 0, jacobians = 0;
    Counters& operator+=(const Counters& o) {
      steps += o.steps;
      attempts += o.attempts;
      nonlinear += o.nonlinear;
      error_fails += o.error_fails;
      jacobians += o.jacobians;
      return *this;
    }
  };
  // Counters since the last ARKStepReInit (which zeroes them; ARKStepReset keeps them).
  Counters current() const {
    Counters c;
    ARKStepGetNumSteps(mem_, &c.steps);
    ARKStepGetNumStepAttempts(mem_, &c.attempts);
    ARKStepGetNumErrTestFails(mem_, &c.error_fails);
    if (mode_ != Mode::explicit_rk) {
      ARKStepGetNumNonlinSolvIters(mem_, &c.nonlinear);
      ARKStepGetNumJacEvals(mem_, &c.jacobians);
    }
    return c;
  }
  void add_counters() { accumulate_ += current(); }

  // J0 = df/dx at the step start and x0, for the imex splitting.
  void freeze_linear_part(stride::OdeSystem& sys, double t, std::span<const double> x) {
    for (std::size_t i = 0; i < n_; ++i) x0_[i] = x[i];
    if (!analytic_ || !sys.jacobian(t, x, J0_)) {
      sys.derivatives(t, x, f0_);
      stride::finite_difference_jacobian(sys, t, x, f0_, xp_, fp_, J0_);
      bridge_.evaluations += static_cast<long>(n_) + 1;
    }
    ++frozen_;
  }

  static Arkode& self(void* data) { return *static_cast<Arkode*>(data); }
  static int f_full(double t, N_Vector y, N_Vector ydot, void* data) {
    return sd::rhs(self(data).bridge_, t, y, ydot);
  }
  // fi = J0 (y - x0)
  static int f_linear(double, N_Vector y, N_Vector ydot, void* data) {
    Arkode& a = self(data);
    const auto n = static_cast<Eigen::Index>(a.n_);
    Eigen::Map<const Eigen::VectorXd> yv(N_VGetArrayPointer(y), n);
    Eigen::Map<Eigen::VectorXd> out(N_VGetArrayPointer(ydot), n);
    a.dy_ = yv - a.x0_;
    out.noalias() = a.J0_ * a.dy_;
    return 0;
  }
  // fe = f - J0 (y - x0)
  static int f_explicit(double t, N_Vector y, N_Vector ydot, void* data) {
    Arkode& a = self(data);
    const int flag = sd::rhs(a.bridge_, t, y, ydot);
    if (flag != 0) return flag;
    const auto n = static_cast<Eigen::Index>(a.n_);
    Eigen::Map<const Eigen::VectorXd> yv(N_VGetArrayPointer(y), n);
    Eigen::Map<Eigen::VectorXd> out(N_VGetArrayPointer(ydot), n);
    a.dy_ = yv - a.x0_;
    out.noalias() -= a.J0_ * a.dy_;
    return 0;
  }
  static int jac_full(double t, N_Vector y, N_Vector fy, SUNMatrix J, void* data, N_Vector tmp1,
                      N_Vector tmp2, N_Vector) {
    return sd::jacobian(self(data).bridge_, t, y, fy, J, tmp1, tmp2);
  }
  static int jac_frozen(double, N_Vector, N_Vector, SUNMatrix J, void* data, N_Vector, N_Vector,
                        N_Vector) {
    Arkode& a = self(data);
    const auto n = static_cast<Eigen::Index>(a.n_);
    Eigen::Map<Eigen::MatrixXd>(SUNDenseMatrix_Data(J), n, n) = a.J0_;
    return 0;
  }

  void check(int flag, const char* what) {
    if (flag < 0) throw std::runtime_error(std::string("arkode: ") + what + " failed: " + bridge_.message);
  }
  void check_step(int flag, double t) {
    if (flag < 0) bridge_.fail("ARKODE", t, flag);
  }

  void release() {
    if (mem_) ARKStepFree(&mem_);
    mem_ = nullptr;
    ls_.reset();
    A_.reset();
    atol_v_.reset();
    y_.reset();
    ctx_.reset();
  }

  Mode mode_ = Mode::explicit_rk;
  double rtol_, atol_;
  long max_internal_;
  bool restart_at_jumps_;
  bool step_past_;
  bool ahead_ = false;  // step past t + h: the system has no inputs (not in imex mode)
  bool jump_ = false;  // inputs jump at the next step's start
  long discontinuities_ = 0;
  std::size_t n_ = 0;
  double t_ = 0.0;
  bool analytic_ = false;
  long frozen_ = 0;
  sd::Bridge bridge_;
  Counters accumulate_;
  Eigen::MatrixXd J0_;
  Eigen::VectorXd x0_, dy_;
  std::vector<double> f0_, xp_, fp_;
  // Destroyed in release() in reverse order of creation; the context goes last.
  sd::Context ctx_;
  sd::Vector y_;
  sd::Vector atol_v_;
  sd::Matrix A_;
  sd::LinearSolver ls_;
  void* mem_ = nullptr;
};

}  // namespace

STRIDE_PLUGIN(Arkode)
