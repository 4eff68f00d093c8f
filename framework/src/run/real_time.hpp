// Real-time runs (manifest "real_time", `stride run --real-time [FACTOR]`): every communication
// point held to the wall clock, and how well it was held, for summary.json's "real_time" block
// and the progress display. Internal to the host.
//
// The pacer is an observer of the loop's communication points (run/observer.hpp), so it is
// written once for every coupling scheme: Master::reached(T) calls it when every subsystem has
// reached T (Jacobi, Gauss–Seidel, iterative coupling and the adaptive macro step after each
// accepted macro step; multirate coupling at its checks, every max(64, subsystems) steps).
// Communication point T is due at the wall time
//     t0_wall + (T - start) / factor          (std::chrono::steady_clock = CLOCK_MONOTONIC)
// where t0_wall is start(), just before the first macro step (with "interval" Δ, only the first
// point at or after each multiple of Δ is held: a 16-ms operator frame over a 0.2-ms macro step):
// the deadlines are absolute, so
// neither sleeping nor computing makes them drift over a long run. Reached before its deadline,
// the run sleeps until it (clock_nanosleep, TIMER_ABSTIME); reached after it, the deadline was
// missed: counted ("overrun": "continue") or the end of the run ("stop": Stop with status
// deadline_missed, the time and the lateness in its message).
//
// Call order: RealTimePacer(...) -> Master::observe (before the progress display, which shows
// lateness()) -> start() -> reached()* (by the master) -> summary(). One thread (the run's).
// Allocation: the constructor reserves the compute-time samples (one per communication point,
// at most kMaxSamples; later ones count in the largest only); reached() allocates nothing
// (except the message of the Stop that ends the run).
#pragma once

#include <array>
#include <chrono>
#include <cstddef>
#include <vector>

#include "run/observer.hpp"
#include "stride/host/input/manifest.hpp"

namespace stride::host {

class RealTimePacer final : public Observer {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr std::size_t kMaxSamples = std::size_t{1} << 22;  // 32 MiB of compute times
  static constexpr std::size_t kFirstMisses = 10;

  // `stop`, when not null, is the run's stop flag: a signal ends a sleep early.
  RealTimePacer(const RealTimeConfig& config, const CouplingConfig& coupling, const volatile int* stop);
  unsigned events() const override { return communication_points; }
  // The wall clock's origin: the start time is due now.
  void start();
  // Every subsystem has reached T: the compute time since the last release, the lateness, then
  // the sleep until T's deadline. Throws Stop on a missed deadline under "overrun": "stop".
  void reached(const RunState& state, double T) override;

  double factor() const { return factor_; }
  long misses() const { return misses_; }
  long points() const { return points_; }
  // Of the last communication point: wall time reached minus its deadline (s; negative: early).
  double lateness() const { return last_lateness_; }
  double largest_lateness() const { return max_lateness_; }
  // summary.json's "real_time" block; wall_time_s is from start() to the release of the last
  // communication point (its deadline, or later when it was missed).
  json summary(bool background_rows) const;

 private:
  void sleep_until(Clock::time_point deadline) const;
  [[noreturn]] void overrun(double T, double late) const;

  double factor_, start_, interval_, next_ = -1e300;  // next_: the next time held (interval)
  bool stop_on_overrun_;
  const volatile int* stop_;
  Clock::time_point t0_{}, released_{};
  long points_ = 0, misses_ = 0;
  std::array<double, kFirstMisses> first_misses_{};
  double last_lateness_ = 0.0, max_lateness_ = -1e300, max_compute_ = 0.0;
  std::vector<double> compute_;  // seconds per macro step, reserved; never grows past its capacity
};

}  // namespace stride::host
