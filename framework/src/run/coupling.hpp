// A coupling scheme: how the subsystems of a run go from one communication point to the next
// (libcosim's algorithm, with the observers and the monitors apart in run/master.hpp). One
// class per scheme, each in its own file, which opens with its loop in pseudocode:
//   jacobi_gauss_seidel.cpp       fixed macro step, subsystems in parallel or in order
//   step_controlled_coupling.cpp  adaptive macro step from the bonds' energy residuals
//   iterative_coupling.cpp        every macro step repeated until the interface converges
//   multirate_coupling.cpp        no macro step: each subsystem on its own step
// Internal to the host.
//
// Call order: make_coupling_scheme(master, ...) after Master::observe() -> master.initialize()
// -> advance(t1) -> advance(t2) ... (t1 < t2 <= end) -> summarize(). A scheme keeps where it
// left off (time reached, macro steps taken, snapshots), so that a caller may stop at any time
// (Simulation::advance_to) and the run() loop is the one call advance(end). advance() throws
// Stop; it allocates nothing except where the scheme says (snapshots).
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include "run/master.hpp"
#include "run/row_file.hpp"

namespace stride::host {

class CouplingScheme {
 public:
  virtual ~CouplingScheme() = default;
  // Every subsystem from where the last call left it to `target`: the scheme's own
  // communication points (the macro grid, the adaptive steps) up to target, and target.
  virtual void advance(double target) = 0;
  // The scheme's entries of summary.json ("iteration", "step_control"); none by default.
  virtual void summarize(json& /*summary*/) const {}
  // Where the scheme stands between calls to advance() (communication time, macro steps on
  // the grid taken), so that a saved run can be put back there; nullopt (and resume() false)
  // for a scheme that keeps more than that.
  using Position = std::pair<double, long>;
  virtual std::optional<Position> position() const { return std::nullopt; }
  virtual bool resume(const Position& /*p*/) { return false; }
};

// The scheme the manifest's /coupling names: multirate; else iterative when /coupling/
// iteration is given; else step-controlled when /coupling/step_control is; else plain Jacobi
// or Gauss–Seidel. `macro_log`, when not null, receives iterations.csv or steps.csv.
std::unique_ptr<CouplingScheme> make_coupling_scheme(Master& master, RowFile* macro_log);

// sequential: Gauss–Seidel (in Graph::order, each subsystem's outputs pushed as soon as it
// reaches the communication point); else Jacobi.
std::unique_ptr<CouplingScheme> make_jacobi_gauss_seidel(Master& master, bool sequential);
std::unique_ptr<CouplingScheme> make_step_controlled_coupling(Master& master, bool sequential, bool reject,
                                                              RowFile* steps_log);
std::unique_ptr<CouplingScheme> make_iterative_coupling(Master& master, bool sequential, RowFile* iterations_log);
std::unique_ptr<CouplingScheme> make_multirate_coupling(Master& master, Synchronization synchronization);

}  // namespace stride::host
