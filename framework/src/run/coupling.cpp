#include "run/coupling.hpp"

namespace stride::host {

std::unique_ptr<CouplingScheme> make_coupling_scheme(Master& master, RowFile* macro_log) {
  const CouplingConfig& c = master.coupling();
  const bool gauss_seidel = c.scheme == Scheme::gauss_seidel;
  if (c.scheme == Scheme::multirate) return make_multirate_coupling(master, c.synchronization);
  if (c.iteration.enabled) return make_iterative_coupling(master, gauss_seidel, macro_log);
  if (c.step_control.enabled)
    return make_step_controlled_coupling(master, gauss_seidel, c.step_control.reject, macro_log);
  return make_jacobi_gauss_seidel(master, gauss_seidel);
}

}  // namespace stride::host
