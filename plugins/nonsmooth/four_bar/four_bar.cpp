// Planar parallelogram four-bar in natural coordinates q = [x_A, y_A, x_B, y_B]: crank O–A and
// rocker C–B of length L1 (O = (0, 0), C = (L2, 0)), coupler A–B of length L2, plus a second
// crank G–M of length L1 from G = (L2/2, 0) to the coupler midpoint M = (A + B)/2. The
// constraints, in length units, Φ_k = (|d_k|² − L_k²) / (2 L_k) with d_k the bar vector:
//   Φ1: |A − O| = L1,  Φ2: |B − A| = L2,  Φ3: |B − C| = L1,  Φ4: |M − G| = L1 (redundant).
// On the parallelogram branch Φ4 follows from Φ1-3, so with redundant = true the constraint
// Jacobian (4 x 4) has rank 3 and A M⁻¹ Aᵀ is singular: the formulation's regularization has
// to cope. With redundant = false only Φ1-3 are imposed (the bar G–M still carries its mass),
// which gives the same motion and suits the smooth formulations (ali1, ali3p).
// Four uniform bars of mass m; a bar with a fixed end and moving end P has kinetic energy
// m |Ṗ|² / 6, the coupler m (|Ȧ|² + Ȧ·Ḃ + |Ḃ|²) / 6. Gravity −y. Starts at rest at crank
// angle theta0 and swings like a pendulum; no interface (no inputs).
#include <cmath>

#include "../common/closed_model.hpp"

namespace {

using namespace stride;

class FourBar final : public nonsmooth::Closed<MultibodyModel> {
 public:
  static PluginInfo describe() {
    PluginInfo i;
    i.name = "four_bar";
    i.kind = Kind::subsystem;
    i.form = Form::multibody;
    i.version = "1.0";
    i.description = "Parallelogram four-bar in natural coordinates with an optional redundant second crank";
    i.parameters = {
        real_param("L1", 0.3, "m", "crank and rocker length", 1e-6),
        real_param("L2", 0.6, "m", "coupler length and ground pivot distance", 1e-6),
        real_param("mass", 1.0, "kg", "mass of each bar", 1e-9),
        real_param("theta0", 0.5, "rad", "initial crank angle from the x axis"),
        bool_param("redundant", true, "impose the constraint of the second crank (redundant) too"),
    };
    return i;
  }
  explicit FourBar(const Params& p)
      : L1_(p.real("L1")), L2_(p.real("L2")), m_(p.real("mass")), theta0_(p.real("theta0")),
        redundant_(p.boolean("redundant")) {
    const Eigen::Matrix2d I = Eigen::Matrix2d::Identity();
    M_.setZero();
    M_.block<2, 2>(0, 0) += m_ / 3.0 * I;  // crank
    M_.block<2, 2>(0, 0) += m_ / 3.0 * I;  // coupler
    M_.block<2, 2>(2, 2) += m_ / 3.0 * I;
    M_.block<2, 2>(0, 2) += m_ / 6.0 * I;
    M_.block<2, 2>(2, 0) += m_ / 6.0 * I;
    M_.block<2, 2>(2, 2) += m_ / 3.0 * I;  // rocker
    M_ += m_ / 12.0 * (Eigen::Matrix4d() << I, I, I, I).finished();  // second crank, M = (A + B)/2
    const double w = 1.25 * m_ * nonsmooth::gravity;  // 1/2 crank + 1/2 coupler + 1/4 second crank
    f_ << 0.0, -w, 0.0, -w;
  }

  std::vector<PortSpec> ports() const override {
    return {output("theta", 1, "rad", "crank angle of O-A from the x axis"),
            output("theta_dot", 1, "rad/s", "crank angular velocity"),
            output("constraint_violation", 1, "m", "largest |Phi_k| of the four bar-length constraints"),
            output("energy", 1, "J", "kinetic + gravitational energy (datum y = 0)")};
  }
  MultibodySizes sizes() const override { return {4, redundant_ ? 4u : 3u, 0}; }
  void initial_state(double, VectorRef q, VectorRef v) override {
    const double c = std::cos(theta0_), s = std::sin(theta0_);
    q << L1_ * c, L1_ * s, L1_ * c + L2_, L1_ * s;
    v.setZero();
  }
  void mass_matrix(ConstVectorRef, MatrixRef M) override { M = M_; }
  void coriolis(ConstVectorRef, ConstVectorRef, VectorRef c) override { c.setZero(); }
  void applied_forces(double, ConstVectorRef, ConstVectorRef, VectorRef f) override { f = f_; }
  void constraints(double, ConstVectorRef q, VectorRef phi) override {
    const Bars b = bars(q);
    for (int k = 0; k < int(phi.size()); ++k) phi[k] = (b.d[k].squaredNorm() - b.L[k] * b.L[k]) / (2.0 * b.L[k]);
  }
  void constraint_jacobian(double, ConstVectorRef q, MatrixRef J) override {
    const Bars b = bars(q);
    J.setZero();
    J.block<1, 2>(0, 0) = b.d[0].transpose() / b.L[0];
    J.block<1, 2>(1, 0) = -b.d[1].transpose() / b.L[1];
    J.block<1, 2>(1, 2) = b.d[1].transpose() / b.L[1];
    J.block<1, 2>(2, 2) = b.d[2].transpose() / b.L[2];
    if (redundant_) {
      J.block<1, 2>(3, 0) = 0.5 * b.d[3].transpose() / b.L[3];
      J.block<1, 2>(3, 2) = 0.5 * b.d[3].transpose() / b.L[3];
    }
  }
  // Φ̈_k − Φ_q v̇ = |ḋ_k|² / L_k.
  void constraint_bias(double, ConstVectorRef, ConstVectorRef v, VectorRef out) override {
    const Eigen::Vector2d vA = v.segment<2>(0), vB = v.segment<2>(2);
    const Eigen::Vector2d dd[4] = {vA, vB - vA, vB, 0.5 * (vA + vB)};
    const double L[4] = {L1_, L2_, L1_, L1_};
    for (int k = 0; k < int(out.size()); ++k) out[k] = dd[k].squaredNorm() / L[k];
  }
  void outputs(const MultibodyState& st, std::span<double> y) override {
    const Eigen::Vector2d A = st.q.segment<2>(0), vA = st.v.segment<2>(0);
    y[0] = std::atan2(A[1], A[0]);
    y[1] = (A[0] * vA[1] - A[1] * vA[0]) / A.squaredNorm();
    const Bars b = bars(st.q);
    double worst = 0.0;
    for (int k = 0; k < 4; ++k)
      worst = std::max(worst, std::abs((b.d[k].squaredNorm() - b.L[k] * b.L[k]) / (2.0 * b.L[k])));
    y[2] = worst;
    y[3] = energy_at(st.t, st.q, st.v);
  }
  double energy_at(double, ConstVectorRef q, ConstVectorRef v) const override {
    return 0.5 * v.head<4>().dot(M_ * v.head<4>()) - f_.dot(q.head<4>());
  }

 private:
  struct Bars {
    Eigen::Vector2d d[4];
    double L[4];
  };
  Bars bars(ConstVectorRef q) const {
    const Eigen::Vector2d A = q.segment<2>(0), B = q.segment<2>(2);
    return {{A, B - A, B - Eigen::Vector2d(L2_, 0.0), 0.5 * (A + B) - Eigen::Vector2d(0.5 * L2_, 0.0)},
            {L1_, L2_, L1_, L1_}};
  }

  double L1_, L2_, m_, theta0_;
  bool redundant_;
  Eigen::Matrix4d M_;
  Eigen::Vector4d f_;
};

}  // namespace

STRIDE_PLUGIN(FourBar)
