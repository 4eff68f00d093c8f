#include "run/real_time.hpp"

#include <time.h>

#include <algorithm>
#include <cerrno>
#include <cmath>

#include "run/stop.hpp"

namespace stride::host {
namespace {

double seconds(RealTimePacer::Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// The compute-time samples to reserve: one per macro step of the run (the smallest macro step
// under step control), at most kMaxSamples.
std::size_t expected_points(const CouplingConfig& c, double interval) {
  double h = c.macro_step;
  if (c.step_control.enabled && c.step_control.min_step > 0) h = c.step_control.min_step;
  h = std::max(h, interval);
  const double n = h > 0 ? std::ceil((c.end - c.start) / h) + 2 : 2;
  return static_cast<std::size_t>(std::clamp(n, 2.0, static_cast<double>(RealTimePacer::kMaxSamples)));
}

// The q-quantile (nearest rank) of sorted values.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0.0;
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::clamp<std::size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

RealTimePacer::RealTimePacer(const RealTimeConfig& config, const CouplingConfig& coupling, const volatile int* stop)
    : factor_(config.factor),
      start_(coupling.start),
      interval_(config.interval),
      stop_on_overrun_(config.stop_on_overrun),
      stop_(stop) {
  compute_.reserve(expected_points(coupling, interval_));
  if (interval_ > 0) next_ = start_ + interval_ * (1 - 1e-9);  // the first point held: the first multiple
}

void RealTimePacer::start() { t0_ = released_ = Clock::now(); }

void RealTimePacer::reached(const RunState&, double T) {
  if (interval_ > 0) {
    if (T < next_) return;
    next_ = start_ + (std::floor((T - start_) / interval_ + 1e-9) + 1) * interval_ - 1e-9 * interval_;
  }
  const Clock::time_point now = Clock::now();
  const double compute = seconds(now - released_);
  if (compute_.size() < compute_.capacity()) compute_.push_back(compute);
  max_compute_ = std::max(max_compute_, compute);
  ++points_;
  const auto due =
      t0_ + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>((T - start_) / factor_));
  const double late = seconds(now - due);
  last_lateness_ = late;
  max_lateness_ = std::max(max_lateness_, late);
  if (late > 0) {
    if (misses_ < static_cast<long>(kFirstMisses)) first_misses_[static_cast<std::size_t>(misses_)] = T;
    ++misses_;
    if (stop_on_overrun_) overrun(T, late);
  } else {
    sleep_until(due);
  }
  released_ = Clock::now();
}

// An absolute sleep on the monotonic clock (steady_clock's, in libstdc++ and libc++ on Linux):
// a late wake-up delays this communication point's release, never the later deadlines.
void RealTimePacer::sleep_until(Clock::time_point deadline) const {
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(ns / 1000000000);
  ts.tv_nsec = static_cast<long>(ns % 1000000000);
  while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR)
    if (stop_ && *stop_) return;  // the next step reports the signal
}

void RealTimePacer::overrun(double T, double late) const {
  throw Stop{RunStatus::deadline_missed, "real time: communication point t = " + message_number(T) + " s was reached " +
                                             message_number(late * 1e3) + " ms after its deadline at factor " +
                                             message_number(factor_) +
                                             " (\"overrun\": \"stop\"; the rows up to it are complete)"};
}

json RealTimePacer::summary(bool background_rows) const {
  std::vector<double> sorted = compute_;
  std::sort(sorted.begin(), sorted.end());
  json first = json::array();
  for (long i = 0; i < std::min<long>(misses_, static_cast<long>(kFirstMisses)); ++i)
    first.push_back(first_misses_[static_cast<std::size_t>(i)]);
  return {{"factor", factor_},
          {"interval_s", interval_},
          {"overrun", stop_on_overrun_ ? "stop" : "continue"},
          {"wall_time_s", seconds(released_ - t0_)},
          {"communication_points", points_},
          {"deadline_misses", misses_},
          {"deadlines_kept", misses_ == 0},
          {"first_misses", first},
          {"max_lateness_s", points_ > 0 ? max_lateness_ : 0.0},
          {"compute_time_per_macro_step_s",
           {{"median", quantile(sorted, 0.5)},
            {"p99", quantile(sorted, 0.99)},
            {"max", max_compute_},
            {"samples", sorted.size()}}},
          {"results_written", background_rows ? "writer thread" : "synchronously on the stepping path"}};
}

}  // namespace stride::host

namespace stride::host {

std::string real_time_verdict(const json& summary) {
  if (!summary.is_object() || !summary.contains("real_time") || !summary["real_time"].is_object()) return {};
  const json& r = summary["real_time"];
  const long misses = r.value("deadline_misses", 0L), points = r.value("communication_points", 0L);
  const std::string factor = message_number(r.value("factor", 1.0));
  const json compute = r.value("compute_time_per_macro_step_s", json::object());
  const std::string p99 = message_number(compute.value("p99", 0.0) * 1e3);
  const std::string largest = message_number(r.value("max_lateness_s", 0.0) * 1e3);
  if (misses == 0)
    return "real time: every deadline kept at factor " + factor + " (" + std::to_string(points) +
           " communication points, largest lateness " + largest + " ms, compute per macro step p99 " + p99 + " ms)";
  const json first = r.value("first_misses", json::array());
  return "real time: " + std::to_string(misses) + " of " + std::to_string(points) + " deadlines missed at factor " +
         factor + " (first at t = " + (first.empty() ? std::string("?") : message_number(first[0].get<double>())) +
         " s, largest lateness " + largest + " ms, compute per macro step p99 " + p99 + " ms)";
}

}  // namespace stride::host
