// What watches a run without steering it (libcosim's observer): the rows of results.csv
// (run/recorder.hpp) and the progress display (run/progress.hpp); the summary reads the state
// once the loop has ended (run/summary.hpp). Internal to the host.
//
// Master (run/master.hpp) calls them from the run's thread, each only for the events it
// declares, so that an observer costs the loop nothing where it does not watch:
//   steps:                passed() once per subsystem at the end of the initialization, then
//                         after a step of n that brings n.t to n.observe_at or past it;
//                         hold_after() / accepted() / rewound() around repeated macro steps.
//   communication_points: reached() whenever every subsystem has reached a time.
// n.observe_at is the observers' wake-up time for subsystem n: Master sets it to +inf before
// calling passed() or rewound(), and each observer lowers it to the next time it needs
// (std::min), or leaves it for none. An observer may throw Stop (a refused write ends the run).
#pragma once

#include <cstddef>

namespace stride::host {

struct NodeState;
struct RunState;

class Observer {
 public:
  enum Events : unsigned { steps = 1, communication_points = 2 };
  virtual ~Observer() = default;
  virtual unsigned events() const = 0;
  // Subsystem n's time passed n.observe_at (its last step went from n.t_prev to n.t).
  virtual void passed(NodeState& /*n*/) {}
  // What happens after T is provisional until accepted(T') (iterative coupling, rejected
  // macro steps): a pass may be repeated.
  virtual void hold_after(double /*T*/) {}
  virtual void accepted(double /*T*/) {}
  // Subsystem n goes back to a snapshot whose next row of results.csv was `next_record`
  // (called before n's time and outputs are restored; n.next_record is still the later one).
  virtual void rewound(NodeState& /*n*/, std::size_t /*next_record*/) {}
  // Every subsystem has reached T.
  virtual void reached(const RunState& /*state*/, double /*T*/) {}
};

}  // namespace stride::host
