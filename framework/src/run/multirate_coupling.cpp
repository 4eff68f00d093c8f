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
// Who steps next, without a scan of all subsystems and without a heap of all of them
// (Scheduler below): the subsystems sharing a step (a rate class) step in turn and come back
// in the order they left, so each class waits in a first-in first-out queue kept sorted; a
// subsystem that would break its queue's order (an adaptive one that stopped short) and those
// of rare steps wait in a binary heap. The next one is the first of the queues' heads and the
// heap's top: O(classes + log heap) per step, reading a few sequential entries. Allocates at
// construction only.
#include <algorithm>
#include <map>

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
    make_classes();
  }

  void advance(double target) override {
    const double eps = m_.eps();
    clear();
    for (auto& n : nodes_)
      if (n.t < target - eps) insert({key(n), n.step, n.index});
    while (!empty()) {
      NodeState& next = nodes_[static_cast<std::size_t>(pop_next().index)];
      m_.step(next, std::min(next.step, target - next.t));
      m_.push_outputs(next);
      if (next.t < target - eps) insert({key(next), next.step, next.index});
      if (++count_ % check_every_ == 0) m_.reached(m_.time_reached());
    }
  }

 private:
  // Entries hold the keys and the tie-breaking index, so that ordering reads only the
  // scheduler's own arrays (with thousands of subsystems on one grid nearly every comparison
  // is a tie; each NodeState read to break it was a cache miss).
  struct Entry {
    double key;
    double step;
    int index;  // in RunState::nodes
  };
  // Keys within eps are a tie (the same grid time up to round-off), broken by the step and then
  // by the subsystem's place in the manifest, as a scan in that order would. Entries of
  // different subsystems are never equal, so the next one is the same whatever holds them.
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
  // One rate class's queue: a ring of `capacity` entries (the subsystems of the class) in
  // slots_, sorted from head to tail.
  struct Queue {
    std::size_t begin = 0, capacity = 0, head = 0, size = 0;
  };
  static constexpr std::size_t kMaxClasses = 8;  // the commonest steps; the rest use the heap

  double key(const NodeState& n) const { return slowest_first_ ? n.t : n.t + n.step; }

  void make_classes() {
    std::map<double, std::size_t> count;
    for (const auto& n : nodes_) ++count[n.step];
    std::vector<std::pair<std::size_t, double>> by_count;
    for (const auto& [step, k] : count)
      if (k >= 2) by_count.emplace_back(k, step);
    std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    if (by_count.size() > kMaxClasses) by_count.resize(kMaxClasses);
    class_of_.assign(nodes_.size(), -1);
    std::size_t slots = 0;
    for (const auto& [k, step] : by_count) {
      queues_.push_back({slots, k, 0, 0});
      slots += k;
      for (const auto& n : nodes_)
        if (n.step == step) class_of_[static_cast<std::size_t>(n.index)] = static_cast<int>(queues_.size() - 1);
    }
    slots_.resize(slots);
    // Every subsystem may wait in the heap (those of a class when out of their queue's order).
    heap_.reserve(nodes_.size());
  }

  void clear() {
    for (Queue& q : queues_) q.head = q.size = 0;
    heap_.clear();
  }
  bool empty() const {
    if (!heap_.empty()) return false;
    for (const Queue& q : queues_)
      if (q.size) return false;
    return true;
  }
  Entry& front(const Queue& q) { return slots_[q.begin + q.head]; }
  const Entry& back(const Queue& q) const {
    const std::size_t i = q.head + q.size - 1;
    return slots_[q.begin + (i >= q.capacity ? i - q.capacity : i)];
  }

  // To its class's queue when it comes after the queue's last entry (the usual case), else to
  // the heap.
  void insert(const Entry& e) {
    const int c = class_of_[static_cast<std::size_t>(e.index)];
    if (c >= 0) {
      Queue& q = queues_[static_cast<std::size_t>(c)];
      if (q.size == 0 || later_(e, back(q))) {
        const std::size_t i = q.head + q.size++;
        slots_[q.begin + (i >= q.capacity ? i - q.capacity : i)] = e;
        return;
      }
    }
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), later_);
  }

  // The first of the queues' heads and the heap's top, taken out. Not empty().
  Entry pop_next() {
    Queue* from = nullptr;
    const Entry* best = nullptr;
    for (Queue& q : queues_)
      if (q.size && (!best || later_(*best, front(q)))) best = &front(q), from = &q;
    if (!heap_.empty() && (!best || later_(*best, heap_.front()))) {
      std::pop_heap(heap_.begin(), heap_.end(), later_);
      const Entry e = heap_.back();
      heap_.pop_back();
      return e;
    }
    const Entry e = *best;
    from->head = from->head + 1 == from->capacity ? 0 : from->head + 1;
    --from->size;
    return e;
  }

  Master& m_;
  std::vector<NodeState>& nodes_ = m_.state().nodes;
  const bool slowest_first_;
  const long check_every_;
  const Later later_{slowest_first_, m_.eps()};
  long count_ = 0;
  std::vector<int> class_of_;  // per node: its queue, or -1 (the heap only)
  std::vector<Queue> queues_;
  std::vector<Entry> slots_;  // the queues' rings, one after the other
  std::vector<Entry> heap_;
};

}  // namespace

std::unique_ptr<CouplingScheme> make_multirate_coupling(Master& master, Synchronization synchronization) {
  return std::make_unique<MultirateCoupling>(master, synchronization);
}

}  // namespace stride::host
