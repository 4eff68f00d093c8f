// Independent coordinates (Peiret 2018 Eq. 20): M v̇ = f + D_iᵀ λ_i − c solved by LDLT at
// (t_n, q_n, v_n), advanced with the semi-implicit Euler of Eq. 38:
//   v_{n+1} = v_n + h v̇_n,  q_{n+1} = q_n + h v_{n+1}.
// Refuses models with constraints (use ali1 or ali3p for dependent coordinates).
#include <stdexcept>

#include "../common/constrained_dynamics.hpp"

namespace {

using namespace stride;

class Independent final : public Formulation {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "independent";
    i.kind = Kind::formulation;
    i.version = "1.0";
    i.description = "Independent coordinates, M v' = f + D_i^T lambda_i - c, semi-implicit Euler (Peiret 2018 Eq. 38)";
    return i;
  }
  explicit Independent(const Params&) {}

  void reset(MultibodyModel& model, double, VectorRef, VectorRef) override {
    if (model.sizes().m != 0)
      throw std::invalid_argument(
          "formulation 'independent' needs a model in independent coordinates, but this one has " +
          std::to_string(model.sizes().m) + " constraints: use 'ali1' or 'ali3p'");
    dyn_.reset(model, "independent", 0);
    v_dot_.setZero(Eigen::Index(dyn_.size.n));
    at_q_.setZero(Eigen::Index(dyn_.size.n));
    at_v_.setZero(Eigen::Index(dyn_.size.n));
    at_valid_ = false;
  }

  double step(MultibodyModel& model, double t, double h, VectorRef q, VectorRef v) override {
    acceleration(model, t, q, v, v_dot_);
    v += h * v_dot_;
    q += h * v;
    stats_.record(0, 0.0, 0.0);
    return t + h;
  }

  void acceleration(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, VectorRef v_dot) override {
    prepare(model, t, q, v);
    dyn_.acceleration(none_, v_dot);
  }

  void effective(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v, MatrixRef M_eff,
                 VectorRef f_eff) override {
    prepare(model, t, q, v);
    dyn_.effective(none_, M_eff, f_eff);
  }

  json statistics() const override { return stats_.to_json(); }

 private:
  // Evaluates and factorizes at (t, q, v). The host asks for M̃, f̃ and v̇ at the same point
  // one after the other: the second call keeps M's factorization and re-reads only the forces.
  void prepare(MultibodyModel& model, double t, ConstVectorRef q, ConstVectorRef v) {
    if (at_valid_ && t == at_t_ && q == at_q_ && v == at_v_) {
      dyn_.update_forces(model, t, q, v);
      return;
    }
    at_valid_ = false;
    dyn_.evaluate(model, t, q, v);
    dyn_.factorize();
    at_t_ = t;
    at_q_ = q;
    at_v_ = v;
    at_valid_ = true;
  }

  formulations::ConstrainedDynamics dyn_;
  formulations::FormulationStats stats_;
  Eigen::VectorXd v_dot_, none_;
  bool at_valid_ = false;
  double at_t_ = 0.0;
  Eigen::VectorXd at_q_, at_v_;
};

}  // namespace

STRIDE_PLUGIN(Independent)
