// The progress display on stderr: a bar on a terminal, a line every 10 % (or 5 s) otherwise;
// in a real-time run also the lateness of the last communication point and the deadlines
// missed so far (run/real_time.hpp). Internal to the host. An observer of the loop's communication points
// (run/observer.hpp); one thread; update() reads the wall clock and allocates nothing.
#pragma once

#include <chrono>

#include "run/observer.hpp"

namespace stride::host {

class RealTimePacer;

class Progress final : public Observer {
 public:
  Progress(bool enabled, double t0, double t1);
  bool enabled() const { return on_; }
  // A real-time run: its pacer (observed before this display) is read at each update.
  void show_lateness(const RealTimePacer* pacer) { pacer_ = pacer; }
  unsigned events() const override { return communication_points; }
  void reached(const RunState& s, double T) override;
  // Every subsystem has reached t.
  void update(double t);
  // The run ended with `status` at t.
  void done(const char* status, double t);

 private:
  const RealTimePacer* pacer_ = nullptr;
  bool on_, tty_;
  double t0_, t1_, next_ = 0.1;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace stride::host
