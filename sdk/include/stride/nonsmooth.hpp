// Nonsmooth multibody models: unilateral contacts with faceted Coulomb friction on top of a
// MultibodyModel (Peiret, nonsmooth interface models; BENCHMARKS.md §6). The "mlcp" formulation
// steps them with the impulse–momentum MLCP
//   M v⁺ − Aᵀ λ̂ = M v + h (f_a + f_i − c),   w = A v⁺ + C λ̂ + φ,   λ̂_k ∈ [lo_k, hi_k] ⊥ w_k,
// where A stacks the bilateral rows Φ_q (bounds (−∞, ∞)) and the contact rows of this class:
// normal rows (bounds [0, ∞)) and friction rows (bounds [−μ λ̂_n, μ λ̂_n], following the
// impulse of their normal row).
//
// Regularization (per row, stiffness k > 0 and relaxation time τ ≥ 0): the row is the implicit
// Euler discretization of the spring–damper λ = −k g − k τ ġ, i.e. with impulses λ̂ = h λ
//   C = 1 / (h² k (1 + τ/h)),   φ = g / (h + τ)
// (the CFM/ERP form of Baraff, Smith and Lacoursière's SPOOK up to its factor-4 convention:
// τ = 0 gives g⁺ = −λ/k, the implicit spring; τ > 0 adds damping d = k τ). C > 0 keeps
// A M⁻¹ Aᵀ + C positive definite with redundant constraints. Normal rows with a positive gap use
// φ = g / h without relaxation (speculative contact: the contact engages only when the step
// would close the gap). Friction rows use φ = 0 (no tangential drift correction); their C only
// regularizes, so stiff values keep the sticking creep C λ̂ small. Impacts are inelastic
// (Newton restitution 0): the normal velocity after an impact is zero.
#pragma once

#include <cstddef>
#include <vector>

#include "stride/multibody.hpp"

namespace stride {

enum class ContactKind { normal, friction };

// One contact row; the rows of a model are fixed when it is constructed.
struct ContactRow {
  ContactKind kind = ContactKind::normal;
  // Friction rows: index (among the contact rows) of the normal row whose impulse bounds this one.
  std::size_t normal = 0;
  double stiffness = 1e9;   // k: N/m for distances, N·m/rad for angles
  double relaxation = 0.0;  // τ in s (damping coefficient k τ)
};

// Call order: as MultibodyModel; contact_rows() may be called any time after construction,
// contacts() is an evaluation (no allocation, no state kept between calls).
class NonsmoothModel : public MultibodyModel {
 public:
  virtual std::vector<ContactRow> contact_rows() const = 0;
  // At (t, q, v), one entry per contact row:
  //   J   (rows x n): normal rows ∂g/∂q (the gap rate is J v); friction rows the tangential
  //       slip velocity map (slip = J v);
  //   gap: normal rows the signed distance g (negative: penetration); friction rows 0;
  //   mu:  friction rows the friction coefficient; normal rows 0.
  virtual void contacts(double t, ConstVectorRef q, ConstVectorRef v, MatrixRef J, VectorRef gap,
                        VectorRef mu) = 0;
};

}  // namespace stride
