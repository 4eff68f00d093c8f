// Messages from plugins to the person running the experiment.
//
// A plugin object (Component, Integrator, Formulation, Extrapolator: all derive from LogSource)
// writes with the protected helpers
//
//   log_warning("spool command {} outside [0, 1]: held at {}", kappa, held);
//   log_debug("Newton converged in {} iterations", n);
//
// Each "{}" takes the next argument (numbers with 6 significant digits, strings, bool); a
// message longer than 480 characters is cut. The host attaches the subsystem's name (for an
// integrator or formulation: the subsystem it steps; for an extrapolator: its connection) and
// the subsystem's time, writes the line into log.txt beside results.csv, and to stderr from "stderr_level" up.
// Each message text (format string) is written at most "repeats" times per object and run, the rest counted
// (a line at the end of log.txt); control characters are escaped, bad UTF-8 replaced, a message cut after
// 1 KiB, and a run writes at most 16 MiB to log.txt and 1 MiB to stderr (then counts what it leaves out).
//
// Call order: the host calls bind_logger() once, right after creating the object and before
// bind(Inputs&) or reset(); the Logger outlives the object. Until then, and in programs that
// create plugin objects themselves (unit tests), there is no logger: warnings and errors go to
// stderr, debug and info messages nowhere.
//
// Cost: a message below the manifest's level costs one load and one comparison, and no call;
// a message that is written is formatted on the stack, without allocating in the plugin.
//
// Thread safety: a run calls each object from one thread at a time (sweeps run every grid
// point in its own process). The helpers may be called from any thread: the host's Logger
// serializes writes, so lines never interleave. The time attached is the one the subsystem
// had reached when the host's call under way began; from threads of its own, a plugin should
// log only while such a call is under way.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

namespace stride {

// Ordered: a threshold lets a level and everything above it through. `off` only as threshold.
enum class LogLevel { debug, info, warning, error, off };

inline const char* to_string(LogLevel l) {
  switch (l) {
    case LogLevel::debug: return "debug";
    case LogLevel::info: return "info";
    case LogLevel::warning: return "warning";
    case LogLevel::error: return "error";
    case LogLevel::off: return "off";
  }
  return "?";
}

// A message's format string and where it was written; the file and line are taken from the
// call site implicitly (the default arguments are evaluated there), so `log_info("...")` is
// all a plugin writes. The host rate-limits by the format string (naming where it was first used).
struct LogFormat {
  LogFormat(const char* text, const char* file = __builtin_FILE(), int line = __builtin_LINE())
      : text(text ? text : ""), file(file), line(line) {}
  std::string_view text;
  const char* file;
  int line;
};

// The host's sink for one plugin object. Implemented by the host (or by a test).
class Logger {
 public:
  // Messages below threshold() are dropped by the caller before formatting.
  LogLevel threshold() const { return threshold_; }
  // One formatted message; `text` lives only during the call. May be called from any thread.
  // Must not throw.
  virtual void write(LogLevel level, const LogFormat& site, std::string_view text) noexcept = 0;

 protected:
  explicit Logger(LogLevel threshold) : threshold_(threshold) {}
  ~Logger() = default;
  LogLevel threshold_;
};

namespace log_detail {

// A fixed buffer the arguments are formatted into (no allocation).
struct Line {
  static constexpr std::size_t capacity = 480;
  char data[capacity + 4];
  std::size_t size = 0;
  bool cut = false;
  void put(std::string_view s) {
    const std::size_t n = std::min(s.size(), capacity - size);
    if (n > 0) std::memcpy(data + size, s.data(), n);  // an empty view may have no data
    size += n;
    if (n < s.size()) cut = true;
  }
  std::string_view view() {
    if (cut) {
      std::memcpy(data + size, "...", 3);
      return {data, size + 3};
    }
    return {data, size};
  }
};

template <class T>
void put(Line& out, const T& v) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, bool>) {
    out.put(v ? "true" : "false");
  } else if constexpr (std::is_same_v<D, char>) {
    out.put(std::string_view(&v, 1));
  } else if constexpr (std::is_floating_point_v<D>) {
    char buf[32];
    const double x = static_cast<double>(v);
    const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 6);
    out.put(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  } else if constexpr (std::is_integral_v<D> || std::is_enum_v<D>) {
    char buf[24];
    const auto r = std::to_chars(buf, buf + sizeof buf, static_cast<long long>(v));
    out.put(std::string_view(buf, static_cast<std::size_t>(r.ptr - buf)));
  } else if constexpr (std::is_convertible_v<const T&, std::string_view>) {
    out.put(std::string_view(v));
  } else {
    static_assert(std::is_convertible_v<const T&, std::string_view>,
                  "log arguments are numbers, bool, char, or strings (std::string, std::string_view, const char*)");
  }
}

// Copies the format up to the next "{}" (or its end); false when there is none left.
inline bool copy_to_placeholder(Line& out, std::string_view& fmt) {
  const std::size_t at = fmt.find("{}");
  out.put(fmt.substr(0, at));
  if (at == std::string_view::npos) {
    fmt = {};
    return false;
  }
  fmt.remove_prefix(at + 2);
  return true;
}

template <class... A>
std::string_view format(Line& out, std::string_view fmt, const A&... args) {
  // Each argument fills the next "{}"; arguments beyond the placeholders follow after a blank.
  ((copy_to_placeholder(out, fmt) ? put(out, args) : (out.put(" "), put(out, args))), ...);
  out.put(fmt);
  return out.view();
}

}  // namespace log_detail

// A message formatted as the log helpers format it (each "{}" takes the next argument, numbers with 6
// significant digits as %g, at most 480 characters), for the text of an exception
// (StepFailure, ParameterError), so that numbers read alike in log.txt and in a run's cause:
//   throw StepFailure(format_text("Newton did not converge at t = {} s (|dq| = {})", t, dq));
template <class... A>
std::string format_text(std::string_view fmt, const A&... args) {
  log_detail::Line line;
  return std::string(log_detail::format(line, fmt, args...));
}

// What can log: the base of every plugin object.
class LogSource {
 public:
  virtual ~LogSource() = default;
  // Called by the host once, before anything else (see the file comment). Wrappers that own
  // another plugin object override it to bind that one too.
  virtual void bind_logger(Logger& logger) { logger_ = &logger; }

 protected:
  // True when a message of this level would be written: guards work done only for a message.
  bool logging(LogLevel level) const {
    return logger_ ? level >= logger_->threshold() : level >= LogLevel::warning;
  }
  template <class... A>
  void log_message(LogLevel level, LogFormat format, const A&... args) const {
    if (!logging(level)) return;
    log_detail::Line line;
    const std::string_view text = log_detail::format(line, format.text, args...);
    if (logger_) {
      logger_->write(level, format, text);
    } else {
      std::fprintf(stderr, "%s: %.*s\n", to_string(level), static_cast<int>(text.size()), text.data());
    }
  }
  template <class... A>
  void log_debug(LogFormat format, const A&... args) const { log_message(LogLevel::debug, format, args...); }
  template <class... A>
  void log_info(LogFormat format, const A&... args) const { log_message(LogLevel::info, format, args...); }
  template <class... A>
  void log_warning(LogFormat format, const A&... args) const { log_message(LogLevel::warning, format, args...); }
  template <class... A>
  void log_error(LogFormat format, const A&... args) const { log_message(LogLevel::error, format, args...); }

 private:
  Logger* logger_ = nullptr;
};

}  // namespace stride
