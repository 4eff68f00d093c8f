// The board of live controls shared by `stride run --view` and the `view_input` plugin
// (docs/viewer.md, "Live"): one page of memory (a memfd mapped MAP_SHARED) holding each control's
// declaration and its latest value. The host creates it before the plugins are constructed and
// names its file descriptor in the environment variable STRIDE_VIEW_BOARD_FD; a supervised run's
// child process inherits the mapping.
//
// Call order: 1. the host: create (framework/src/view/live.cpp), setenv; 2. a plugin: attach()
// (nullptr without a board: no `--view`, a batch run, a test), enroll() each control once
// (constructor; may block briefly on the registration lock); 3. the host's server thread: find a
// control by name and store() values into it while the run steps; 4. the plugin's step: value()
// and updates() (two atomic loads: no lock, no system call, no allocation).
//
// Threading: enroll() from any thread or process (a spin lock in the board); count is published
// with release after a control is written, so a reader that loads count with acquire sees every
// control below it whole. Values and counters are lock-free atomics (asserted below).
// Ownership: the host owns the memfd; attach() maps it again and detach() unmaps that mapping.
#pragma once

#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace stride::view_board {

inline constexpr const char* kEnvironment = "STRIDE_VIEW_BOARD_FD";
inline constexpr std::uint32_t kMagic = 0x31425653;  // "SVB1"
inline constexpr std::size_t kMaxControls = 64, kNameSize = 64, kUnitSize = 32;

struct Control {
  char name[kNameSize];  // zero-terminated
  char unit[kUnitSize];
  std::int32_t button;  // 0: a slider, 1: a button (pressed: max, released: min)
  double min, max, initial;
  std::atomic<double> value;           // the latest value from the page (initial until one)
  std::atomic<std::uint64_t> updates;  // values stored so far
};

struct Board {
  std::uint32_t magic;
  std::atomic<std::uint32_t> count;    // controls enrolled (published after they are written)
  std::atomic<std::uint32_t> lock;     // enrolment spin lock
  std::atomic<std::uint64_t> refused;  // messages refused by the server: malformed, unknown, not finite
  std::atomic<std::uint64_t> clamped;  // values outside [min, max] stored as the nearest bound
  Control controls[kMaxControls];
};

static_assert(std::atomic<double>::is_always_lock_free && std::atomic<std::uint64_t>::is_always_lock_free &&
              std::atomic<std::uint32_t>::is_always_lock_free);

// The board named by STRIDE_VIEW_BOARD_FD, mapped again, or nullptr when there is none.
inline Board* attach() {
  const char* fd = std::getenv(kEnvironment);
  if (!fd || !*fd) return nullptr;
  char* end = nullptr;
  const long n = std::strtol(fd, &end, 10);
  if (*end != '\0' || n < 0) return nullptr;
  void* p = ::mmap(nullptr, sizeof(Board), PROT_READ | PROT_WRITE, MAP_SHARED, static_cast<int>(n), 0);
  if (p == MAP_FAILED) return nullptr;
  auto* b = static_cast<Board*>(p);
  if (b->magic != kMagic) {
    ::munmap(p, sizeof(Board));
    return nullptr;
  }
  return b;
}

inline void detach(Board* b) {
  if (b) ::munmap(b, sizeof(Board));
}

// The control called `name`, or nullptr.
inline Control* find(Board& b, std::string_view name) {
  const std::uint32_t n = b.count.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < n && i < kMaxControls; ++i)
    if (name == b.controls[i].name) return &b.controls[i];
  return nullptr;
}

// Enrolls a control (or finds the one of that name, keeping its value); nullptr when the board is
// full or the name or unit is too long.
inline Control* enroll(Board& b, std::string_view name, std::string_view unit, bool button, double min, double max,
                       double initial) {
  if (name.empty() || name.size() >= kNameSize || unit.size() >= kUnitSize) return nullptr;
  std::uint32_t unlocked = 0;
  while (!b.lock.compare_exchange_weak(unlocked, 1, std::memory_order_acquire)) unlocked = 0;
  Control* c = find(b, name);
  const std::uint32_t n = b.count.load(std::memory_order_relaxed);
  if (!c && n < kMaxControls) {
    c = &b.controls[n];
    std::memset(c->name, 0, kNameSize);
    std::memset(c->unit, 0, kUnitSize);
    std::memcpy(c->name, name.data(), name.size());
    std::memcpy(c->unit, unit.data(), unit.size());
    c->button = button ? 1 : 0;
    c->min = min;
    c->max = max;
    c->initial = initial;
    c->value.store(initial, std::memory_order_relaxed);
    c->updates.store(0, std::memory_order_relaxed);
    b.count.store(n + 1, std::memory_order_release);
  }
  b.lock.store(0, std::memory_order_release);
  return c;
}

}  // namespace stride::view_board
