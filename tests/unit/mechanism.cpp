// The `mechanism` model plugin (spatial mechanisms from a JSON description) against
// independent references:
//  - the planar cranes described as mechanisms equal the hand-written crane_dependent plugin
//    (a second formulation of the same model): M̃, f̃ and v̇ at the same states, and trajectories;
//  - a torque-free asymmetric rigid body: energy and angular momentum conserved, ω(t) equal to
//    Euler's equations integrated separately (RK4 on ω and the rotation);
//  - a spherical pendulum against its equations in spherical coordinates;
//  - constraint drift and the initial Newton assembly reported in the model's report;
//  - description errors with JSON pointers.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <numbers>

#include "multibody_run.hpp"
#include "shipped_plugins.hpp"
#include "stride_run.hpp"

#include "../../plugins/common/crane.hpp"
#include "../../plugins/models/mechanism/spatial.hpp"

using stride::json;
using namespace stride::mechanism;

namespace {

using stride_test::registry;

class ForceLaw final : public stride::Inputs {
 public:
  ForceLaw(std::size_t p, std::function<void(double, std::vector<double>&)> law) : buf_(p), law_(std::move(law)) {}
  std::span<const double> evaluate(std::size_t, double t) override {
    law_(t, buf_);
    return buf_;
  }

 private:
  std::vector<double> buf_;
  std::function<void(double, std::vector<double>&)> law_;
};

class NoInputs final : public stride::Inputs {
  std::span<const double> evaluate(std::size_t, double) override { throw std::logic_error("no inputs"); }
};

json crane_description(int actuators) {
  std::ifstream f(std::string(STRIDE_SOURCE_DIR) + "/manifests/mechanism/crane" + std::to_string(actuators) + "_zoh.json");
  REQUIRE(f.good());
  return json::parse(f)["subsystems"]["crane"]["parameters"]["description"];
}

// Mechanism coordinates of the crane at independent coordinates (θ1, θ2) and rates.
void crane_state(const Eigen::Vector2d& th, const Eigen::Vector2d& thd, Eigen::VectorXd& q, Eigen::VectorXd& v) {
  const stride::crane::Geometry g;
  const double c = (g.m * g.L / 2 + g.m_p * g.L) / (g.m + g.m_p);
  q.resize(14);
  v.resize(14);
  const Vec3 z = Vec3::UnitZ();
  auto put = [&](int b, const Vec3& r, const Vec3& rd, double angle, double rate) {
    const Vec4 p = axis_angle(z, angle);
    q.segment<3>(7 * b) = r;
    q.segment<4>(7 * b + 3) = p;
    v.segment<3>(7 * b) = rd;
    v.segment<4>(7 * b + 3) = 0.5 * E_matrix(p).transpose() * (rate * z);
  };
  put(0, Vec3(c * std::cos(th[0]), c * std::sin(th[0]), 0), Vec3(-c * std::sin(th[0]), c * std::cos(th[0]), 0) * thd[0],
      th[0] - g.theta1_0, thd[0]);
  const Eigen::Vector2d R = stride::crane::point_R(g, th), Rd = stride::crane::velocity_R(g, th, thd);
  put(1, Vec3(R[0], R[1], 0), Vec3(Rd[0], Rd[1], 0), th[1] - g.theta2_0, thd[1]);
}

double rel(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) { return (a - b).norm() / b.norm(); }

}  // namespace

TEST_CASE("crane as a mechanism: M_eff, f_eff and accelerations equal crane_dependent at the same states") {
  const stride::crane::Geometry g;
  for (int p : {1, 2}) {
    ForceLaw in(2, [](double, std::vector<double>& f) { f = {9500.0, -300.0}; });
    auto mech = registry().create_model("mechanism", {{"description", crane_description(p)}});
    auto dep = registry().create_model("crane_dependent", {{"actuators", p}});
    mech->bind(in);
    dep->bind(in);
    CHECK(mech->sizes().n == 14);
    CHECK(mech->sizes().m == 2 + 10);
    CHECK(mech->report()["degrees_of_freedom"] == 2);
    for (const auto& [th, thd] : {std::pair{Eigen::Vector2d(g.theta1_0, g.theta2_0), Eigen::Vector2d(0, 0)},
                                  {Eigen::Vector2d(0.7, 4.2), Eigen::Vector2d(0.3, -1.1)},
                                  {Eigen::Vector2d(-0.2, 5.5), Eigen::Vector2d(-2.0, 3.0)}}) {
      Eigen::VectorXd qm, vm, x(5), u(5);
      crane_state(th, thd, qm, vm);
      stride::crane::Vector5d xd, ud;
      stride::crane::dependent_from_independent(g, th, thd, xd, ud);
      x = xd, u = ud;
      for (const char* form : {"ali3p", "ali1"}) {
        auto fm = registry().create_formulation(form, json::object());
        auto fd = registry().create_formulation(form, json::object());
        Eigen::VectorXd q0 = qm, v0 = vm, x0 = x, u0 = u;
        fm->reset(*mech, 0.0, q0, v0);
        fd->reset(*dep, 0.0, x0, u0);
        Eigen::MatrixXd Mm(p, p), Md(p, p);
        Eigen::VectorXd fmv(p), fdv(p), am(14), ad(5);
        fm->effective(*mech, 0.0, qm, vm, Mm, fmv);
        fd->effective(*dep, 0.0, x, u, Md, fdv);
        fm->acceleration(*mech, 0.0, qm, vm, am);
        fd->acceleration(*dep, 0.0, x, u, ad);
        // θ̈1: the boom's angular acceleration ω̇_z = 2 (E ṗ)' = 2 E p̈ (Ė ṗ = 0).
        const double th1dd = 2.0 * (E_matrix(qm.segment<4>(3)) * am.segment<4>(3))[2];
        MESSAGE("p=" << p << " " << form << " theta=(" << th[0] << ", " << th[1] << "): M_eff rel diff " << rel(Mm, Md)
                     << ", f_eff rel diff " << rel(fmv, fdv) << ", theta1'' diff " << std::abs(th1dd - ad[2]) << "; M_eff(0,0) = " << Md(0, 0));
        CHECK(rel(Mm, Md) < 1e-9);
        CHECK(rel(fmv, fdv) < 1e-9);
        CHECK(std::abs(th1dd - ad[2]) < 1e-8 * (1.0 + std::abs(ad[2])));
        // The tip R: same acceleration.
        CHECK((am.segment<2>(7) - ad.segment<2>(3)).norm() < 1e-8 * (1.0 + ad.segment<2>(3).norm()));
      }
    }
  }
}

TEST_CASE("crane as a mechanism: trajectories under the same actuator forces equal crane_dependent (same formulation)") {
  // Forces that move the crane well away from its start (s1 grows by several cm, link 2 swings).
  for (int p : {1, 2}) {
    ForceLaw in(2, [](double t, std::vector<double>& f) { f = {8829.0 + 1500.0 * std::sin(3.0 * t), 200.0 * std::cos(2.0 * t)}; });
    stride_test::MultibodyRun mech("mechanism", {{"description", crane_description(p)}}, "ali3p", json::object(), in);
    stride_test::MultibodyRun dep("crane_dependent", {{"actuators", p}}, "ali3p", json::object(), in);
    double ds1 = 0, ds2 = 0, dM = 0, dE = 0, s1_min = 1e9, s1_max = -1e9;
    CHECK(mech.out("s", 0) == doctest::Approx(dep.out("s", 0)).epsilon(1e-12));
    const double h = 1e-3;
    for (int k = 0; k < 3000; ++k) {
      mech.step(h), dep.step(h);
      ds1 = std::max(ds1, std::abs(mech.out("s", 0) - dep.out("s", 0)));
      if (p == 2) ds2 = std::max(ds2, std::abs(mech.out("s", 1) - dep.out("s", 1)));
      dM = std::max(dM, std::abs(mech.out("M_eff", 0) - dep.out("M_eff", 0)) / dep.out("M_eff", 0));
      dE = std::max(dE, std::abs(mech.out("energy") - dep.out("energy")));
      s1_min = std::min(s1_min, dep.out("s", 0)), s1_max = std::max(s1_max, dep.out("s", 0));
    }
    MESSAGE("p=" << p << ", ali3p h = 1 ms, 3 s: s1 in [" << s1_min << ", " << s1_max << "] m; max |s1 diff| = " << ds1
                 << " m, |s2 diff| = " << ds2 << " m, M_eff(0,0) rel diff " << dM << ", energy diff " << dE << " J; constraint violation "
                 << mech.stats()["max_constraint_violation"]);
    CHECK(s1_max - s1_min > 0.01);
    CHECK(ds1 < 1e-6);
    CHECK(ds2 < 1e-6);
    CHECK(dM < 1e-6);
    CHECK(mech.stats()["max_constraint_violation"].get<double>() < 1e-9);
  }
}

namespace {

json rigid_body(const Vec3& inertia, const Vec3& w0) {
  return {{"bodies", {{{"name", "body"}, {"mass", 2.0}, {"inertia", {inertia[0], inertia[1], inertia[2]}}, {"position", {0, 0, 0}},
                       {"orientation", {{"axis", {1, 1, 0}}, {"angle", 0.4}}},
                       {"angular_velocity", {w0[0], w0[1], w0[2]}}, {"velocity", {0.1, 0, 0}}}}}};
}

// ω' and A of a body in a run's state.
void body_state(const stride::MultibodyModel&, const Eigen::VectorXd& q, const Eigen::VectorXd& v, Vec3& w_body, Mat3& A) {
  const Vec4 p = q.segment<4>(3), pd = v.segment<4>(3);
  w_body = 2.0 * G_matrix(p) * pd;
  A = rotation(p);
}

}  // namespace

TEST_CASE("torque-free asymmetric body: energy and angular momentum conserved, omega follows Euler's equations") {
  // Principal moments 1, 2, 3 kg m², spinning near the intermediate axis: the body tumbles
  // (the Dzhanibekov flip), a demanding test of the gyroscopic terms.
  const Vec3 I(1.0, 2.0, 3.0);
  const Vec4 p0 = axis_angle(Vec3(1, 1, 0), 0.4);
  // Initial global ω such that body ω' = (0.05, 2, 0.05).
  const Vec3 wb0(0.05, 2.0, 0.05);
  const Vec3 w0 = rotation(p0) * wb0;
  // Reference: Euler's equations I ω̇' + ω' × I ω' = 0 and Ȧ = A ω̃', RK4 with a small step.
  auto ref = [&](double T) {
    Vec3 w = wb0;
    Mat3 A = rotation(p0);
    const int N = int(T / 1e-5 + 0.5);
    const double h = T / N;
    auto f = [&](const Vec3& w_, const Mat3& A_, Vec3& dw, Mat3& dA) {
      dw = -(w_.cross(I.asDiagonal() * w_)).cwiseQuotient(I);
      dA = A_ * skew(w_);
    };
    for (int k = 0; k < N; ++k) {
      Vec3 k1, k2, k3, k4;
      Mat3 a1, a2, a3, a4;
      f(w, A, k1, a1);
      f(w + 0.5 * h * k1, A + 0.5 * h * a1, k2, a2);
      f(w + 0.5 * h * k2, A + 0.5 * h * a2, k3, a3);
      f(w + h * k3, A + h * a3, k4, a4);
      w += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      A += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
    }
    return std::pair{w, A};
  };
  for (const char* form : {"ali3p", "ali1"}) {
    NoInputs in;
    auto model = registry().create_model("mechanism", {{"description", rigid_body(I, w0)}});
    model->bind(in);
    auto f = registry().create_formulation(form, json::object());
    Eigen::VectorXd q(7), v(7);
    model->initial_state(0.0, q, v);
    f->reset(*model, 0.0, q, v);
    const double E0 = model->energy_at(0, q, v);
    Vec3 wb;
    Mat3 A;
    body_state(*model, q, v, wb, A);
    const Vec3 H0 = A * (I.asDiagonal() * wb);
    CHECK((wb - wb0).norm() < 1e-12);
    const double h = 1e-3, T = 8.0;
    double t = 0, dE = 0, dH = 0, dn = 0, dw = 0;
    int flips = 0;
    double last_sign = wb[1];
    for (int k = 0; k < int(T / h + 0.5); ++k) {
      t = f->step(*model, t, h, q, v);
      body_state(*model, q, v, wb, A);
      dE = std::max(dE, std::abs(model->energy_at(t, q, v) - E0) / E0);
      dH = std::max(dH, (A * (I.asDiagonal() * wb) - H0).norm() / H0.norm());
      dn = std::max(dn, std::abs(q.segment<4>(3).norm() - 1.0));
      if (wb[1] * last_sign < 0) ++flips, last_sign = wb[1];
    }
    const auto [wr, Ar] = ref(T);
    dw = (wb - wr).norm() / wr.norm();
    const double dA = (A - Ar).norm();
    MESSAGE(form << ", h = 1 ms, 8 s, " << flips << " flips: max rel energy error " << dE << ", max rel angular momentum error " << dH
                 << ", max | |p| - 1 | " << dn << ", omega' rel error vs Euler's equations " << dw << ", |A - A_ref| " << dA
                 << "; centre of mass x = " << q[0] << " (0.8 expected)");
    CHECK(flips >= 2);  // it really tumbles
    CHECK(dn < 1e-9);
    CHECK(std::abs(q[0] - 0.8) < 1e-9);  // free flight of the centre of mass
    if (std::string(form) == "ali3p") {
      // The trapezoidal rule: second order, energy conserved to the Newton tolerance level.
      CHECK(dE < 1e-6);
      CHECK(dH < 1e-3);
      CHECK(dw < 2e-2);
      CHECK(dA < 2e-2);
    } else {
      CHECK(dE < 1e-2);
      CHECK(dH < 1e-2);
    }
  }
}

TEST_CASE("spherical pendulum: energy, constraint and the motion of the rigid-body equations about the pivot") {
  // A ball (m = 1 kg, radius 0.05 m) on a spherical joint at the origin, l = 1 m: a heavy
  // symmetric top about the pivot, J_p = Ib I + m (l² I − c cᵀ). Reference: Euler's equations
  // about the fixed pivot with the gravity torque, J_p ω̇' + ω' × J_p ω' = Aᵀ (A c × m g),
  // Ȧ = A ω̃', integrated with RK4 at 10 µs.
  const double l = 1.0, g = 9.81, m = 1.0, Ib = 0.4 * m * 0.05 * 0.05;
  const double th0 = 0.8, phid0 = 2.5;  // polar angle from the downward vertical; spin about z
  const Vec3 c(l * std::sin(th0), 0, -l * std::cos(th0));
  const Vec3 w0(0, 0, phid0), v0 = w0.cross(c);
  json d = {{"gravity", {0, 0, -g}},
            {"bodies", {{{"name", "ball"}, {"mass", m}, {"inertia", {Ib, Ib, Ib}}, {"position", {c[0], c[1], c[2]}},
                         {"velocity", {v0[0], v0[1], v0[2]}}, {"angular_velocity", {w0[0], w0[1], w0[2]}}}}},
            {"joints", {{{"name", "pivot"}, {"type", "spherical"}, {"bodies", {"ground", "ball"}}, {"point", {0, 0, 0}}}}},
            {"points", {{{"name", "centre"}, {"body", "ball"}, {"point", {c[0], c[1], c[2]}}}}}};
  const Mat3 Jp = Ib * Mat3::Identity() + m * (c.squaredNorm() * Mat3::Identity() - c * c.transpose());
  const Vec3 G(0, 0, -m * g);
  const double T = 3.0;
  Vec3 w = w0;
  Mat3 A = Mat3::Identity();
  {
    const int N = 300000;
    const double h = T / N;
    auto f = [&](const Vec3& w_, const Mat3& A_, Vec3& dw, Mat3& dA) {
      const Vec3 tau = A_.transpose() * ((A_ * c).cross(G));
      dw = Jp.ldlt().solve(tau - w_.cross(Jp * w_));
      dA = A_ * skew(w_);
    };
    for (int k = 0; k < N; ++k) {
      Vec3 k1, k2, k3, k4;
      Mat3 a1, a2, a3, a4;
      f(w, A, k1, a1);
      f(w + 0.5 * h * k1, A + 0.5 * h * a1, k2, a2);
      f(w + 0.5 * h * k2, A + 0.5 * h * a2, k3, a3);
      f(w + h * k3, A + h * a3, k4, a4);
      w += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
      A += h / 6 * (a1 + 2 * a2 + 2 * a3 + a4);
    }
  }
  const Vec3 c_ref = A * c;
  for (const char* form : {"ali3p", "ali1"}) {
    NoInputs in;
    stride_test::MultibodyRun run("mechanism", {{"description", d}}, form, json::object(), in);
    const double E0 = run.out("energy");
    const double h = 1e-3;
    double dE = 0, dl = 0;
    auto centre = [&] { return Vec3(run.out("centre", 0), run.out("centre", 1), run.out("centre", 2)); };
    for (int k = 0; k < int(T / h + 0.5); ++k) {
      run.step(h);
      dE = std::max(dE, std::abs(run.out("energy") - E0) / std::abs(E0));
      dl = std::max(dl, std::abs(centre().norm() - l));
    }
    const double dc = (centre() - c_ref).norm();
    MESSAGE("spherical pendulum, " << form << " h = 1 ms, 3 s: max rel energy error " << dE << ", max | |c| - l | " << dl
                                   << ", |c(3 s) - c_ref| = " << dc << " m");
    CHECK(dl < 1e-9);
    CHECK(dc < (std::string(form) == "ali3p" ? 2e-3 : 2e-2));
    if (std::string(form) == "ali3p") CHECK(dE < 1e-6);
  }
}
