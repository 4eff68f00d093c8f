// Multirate coupling (/coupling/scheme "multirate"; González 2011, Table 1): no macro step;
// every subsystem takes its own steps and pushes its outputs after each.
//
//   while some subsystem is before target:
//     n = the subsystem that steps next:
//           slowest-first: the one furthest behind (the slower one first on ties), so slow
//                          subsystems run ahead and fast ones interpolate them
//           fastest-first: the one whose step ends earliest (the faster one first on ties),
//                          so slow subsystems step behind and interpolate the fast ones
//     step n by min(h_n, target - n.t); push n's outputs
//     every max(64, subsystems) steps: time reached, energy residuals, observers
//
// The subsystems still before target wait in a binary heap ordered by who steps next:
// O(log N) per step instead of a scan; ordering it reads only the heap's own array. Allocates
// at construction only.
#include <algorithm>

#include "run/coupling.hpp"

namespace stride::host {
namespace {

class MultirateCoupling final : public CouplingScheme {
 public:
  MultirateCoupling(Master& m, Synchronization sync)
      : m_(m),
        slowest_first_(sync == Synchronization::slowest_first),
        // Residuals and the time reached are checked every 64 steps, or once per step of every
        // subsystem when there are more: the check visits every bond and subsystem.
        check_every_(std::max<long>(64, static_cast<long>(m.state().nodes.size()))) {
    heap_.reserve(m.state().nodes.size());
  }

  void advance(double target) override {
    const double eps = m_.eps();
    heap_.clear();
    for (auto& n : m_.state().nodes)
      if (n.t < target - eps) heap_.push_back({key(n), n.step, n.index});
    std::make_heap(heap_.begin(), heap_.end(), later_);
    while (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), later_);
      NodeState* next = &nodes_[static_cast<std::size_t>(heap_.back().index)];
      m_.step(*next, std::min(next->step, target - next->t));
      m_.push_outputs(*next);
      if (next->t < target - eps) {
        heap_.back().key = key(*next);
        std::push_heap(heap_.begin(), heap_.end(), later_);
      } else {
        heap_.pop_back();
      }
      if (++count_ % check_every_ == 0) m_.reached(m_.time_reached());
    }
  }

 private:
  // The heap holds the keys and the tie-breaking index, so that ordering it reads one array
  // instead of every subsystem it compares (with thousands of subsystems on one grid nearly
  // every comparison is a tie, and each NodeState it read was a cache miss).
  struct Entry {
    double key;
    double step;
    int index;  // in RunState::nodes
  };
  // Keys within eps are a tie (the same grid time up to round-off), broken by the step and then
  // by the subsystem's place in the manifest, as a scan in that order would.
  struct Later {  // a steps after b
    bool slowest_first;
    double eps;
    bool operator()(const Entry& a, const Entry& b) const {
      if (a.key > b.key + eps) return true;
      if (a.key < b.key - eps) return false;
      if (a.step != b.step) return slowest_first ? a.step < b.step : a.step > b.step;
      return a.index > b.index;
    }
  };
  double key(const NodeState& n) const { return slowest_first_ ? n.t : n.t + n.step; }

  Master& m_;
  std::vector<NodeState>& nodes_ = m_.state().nodes;
  const bool slowest_first_;
  const long check_every_;
  const Later later_{slowest_first_, m_.eps()};
  long count_ = 0;
  std::vector<Entry> heap_;
};

}  // namespace

std::unique_ptr<CouplingScheme> make_multirate_coupling(Master& master, Synchronization synchronization) {
  return std::make_unique<MultirateCoupling>(master, synchronization);
}

}  // namespace stride::host
