// Jacobi and Gauss–Seidel coupling on a fixed macro step H (the manifest's
// /coupling/macro_step).
//
//   T = start
//   while T < target:
//     Tn = min(start + (k + 1) H, target)          // the next communication point
//     for n in order:                             // Graph::order
//       if n.t < Tn:
//         step n until Tn                         // its own step h_n; with align the last one
//                                                 // is cut to land on Tn
//         Gauss–Seidel: push n's outputs          // the later subsystems read them at once
//         Jacobi:       note n
//     Jacobi: push the outputs of every noted n   // everyone read the extrapolated old ones
//     T = Tn; energy residuals, observers
//
// A subsystem whose step is longer than H (align: false) is not stepped in the macro steps
// its step spans, and pushes nothing then. No allocation.
#include <algorithm>

#include "run/coupling.hpp"

namespace stride::host {
namespace {

class JacobiGaussSeidel final : public CouplingScheme {
 public:
  JacobiGaussSeidel(Master& m, bool sequential) : m_(m), sequential_(sequential), T_(m.coupling().start) {}

  void advance(double target) override {
    const CouplingConfig& c = m_.coupling();
    const double eps = m_.eps();
    while (T_ < target - eps) {
      const double grid = c.start + static_cast<double>(k_ + 1) * c.macro_step;
      const double Tn = std::min(grid, target);
      if (grid <= target + eps) ++k_;
      m_.advance_all(Tn, sequential_);
      T_ = Tn;
      m_.reached(T_);
    }
  }
  std::optional<Position> position() const override { return Position{T_, k_}; }
  bool resume(const Position& p) override {
    T_ = p.first;
    k_ = p.second;
    return true;
  }

 private:
  Master& m_;
  const bool sequential_;
  double T_;
  long k_ = 0;  // macro steps on the grid taken
};

}  // namespace

std::unique_ptr<CouplingScheme> make_jacobi_gauss_seidel(Master& master, bool sequential) {
  return std::make_unique<JacobiGaussSeidel>(master, sequential);
}

}  // namespace stride::host
