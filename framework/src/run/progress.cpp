#include "run/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "run/real_time.hpp"
#include "run/run_state.hpp"

namespace stride::host {

void Progress::reached(const RunState& s, double) { update(s.time_reached(t1_)); }

Progress::Progress(bool enabled, double t0, double t1) : on_(enabled), tty_(isatty(2)), t0_(t0), t1_(t1) {
  start_ = last_ = std::chrono::steady_clock::now();
}

void Progress::update(double t) {
  if (!on_) return;
  auto now = std::chrono::steady_clock::now();
  const double since = std::chrono::duration<double>(now - last_).count();
  const double frac = std::clamp((t - t0_) / (t1_ - t0_), 0.0, 1.0);
  if (tty_) {
    if (since < 0.1) return;
    const int width = 40, filled = static_cast<int>(frac * width);
    std::fprintf(stderr, "\r[%.*s%*s] %5.1f%%  t = %.4g s", filled,
                 "========================================", width - filled, "", 100 * frac, t);
    if (pacer_) std::fprintf(stderr, "  late %+.2f ms, %ld missed ", pacer_->lateness() * 1e3, pacer_->misses());
  } else {
    if (since < 5.0 && frac < next_) return;
    std::fprintf(stderr, "progress: %5.1f%%  t = %.6g s  wall %.1f s", 100 * frac, t,
                 std::chrono::duration<double>(now - start_).count());
    if (pacer_)
      std::fprintf(stderr, "  late %+.2f ms (largest %+.2f ms), %ld deadlines missed", pacer_->lateness() * 1e3,
                   pacer_->largest_lateness() * 1e3, pacer_->misses());
    std::fputc('\n', stderr);
    while (next_ <= frac) next_ += 0.1;
  }
  last_ = now;
}

void Progress::done(const char* status, double t) {
  if (!on_) return;
  if (tty_) std::fprintf(stderr, "\r%*s\r", 80, "");
  std::fprintf(stderr, "%s at t = %.6g s\n", status, t);
}

}  // namespace stride::host
