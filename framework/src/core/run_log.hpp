// The host side of plugin messages (stride/log.hpp): one RunLog per experiment, one sink per
// plugin object. Lines go to <results>/log.txt (appended whole, one write(2) each, so a run
// that is killed leaves every line written so far readable) and, from the manifest's
// stderr_level up, to stderr. Internal to the host.
//
// What a plugin writes cannot flood or forge the log:
//  - each message is one line: newlines, tabs and control characters are escaped, bytes that
//    are not UTF-8 replaced (one_line, json_input.hpp), and it is cut after
//    Bounds::message_bytes;
//  - one message text (the format a plugin writes, whatever its arguments, wherever it is
//    written from) is written at most LogConfig::repeats times per plugin object and run; later
//    ones are counted, and close() writes one line per text that was cut off. At most
//    Bounds::texts texts are told apart per run; messages with further texts share one count;
//  - log.txt takes at most Bounds::file_bytes and stderr Bounds::stderr_bytes per run; then a
//    line says so, later messages are counted, and close() says how many were left out.
// Memory is bounded by these limits, whatever the number of messages or call sites.
//
// Threading: every public function may be called from any thread (one mutex).
#pragma once

#include <cstddef>
#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "stride/host/input/manifest.hpp"

namespace stride::host {

// Sizes a run's messages may take (the defaults are what `stride run` uses).
struct RunLogBounds {
  std::size_t message_bytes = 1024;                 // one message's text, escaped
  std::size_t file_bytes = std::size_t(16) << 20;   // log.txt
  std::size_t stderr_bytes = std::size_t(1) << 20;  // stderr
  std::size_t texts = 1000;                         // message texts rate-limited apart
};

class RunLog {
 public:
  struct Counts {
    long warnings = 0, errors = 0;  // messages of these levels, written or left out
    long suppressed = 0;            // messages left out of log.txt (rate limit or size limit; any level)
  };
  using Bounds = RunLogBounds;

  explicit RunLog(const LogConfig& config, const Bounds& bounds = {});
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // A sink for one plugin object. `source` names it in every line ("boom", "boom (integrator
  // cvode)"); its messages are counted under `group` (a subsystem's or a connection's name);
  // `*time`, when not null, is read for the time of each message (the node's clock follows the
  // run attached: NodeInputs::clock()). The sink lives as long as the RunLog.
  Logger& sink(std::string source, std::string group, const double* const* time);
  // From now on every line goes to `f` instead of stderr and log.txt (an exported FMU: the
  // importer's logger). `f` is called under the log's lock and must not log here.
  void forward(std::function<void(LogLevel, const std::string&)> f);
  // From now on lines go to `file` too (created or emptied), those written before first.
  // "" or what went wrong.
  std::string open(const std::filesystem::path& file);
  // Writes one line per message text that was cut off by the rate limit and one per output that
  // reached its size limit (how many messages and bytes were left out), then closes the file.
  void close();
  Counts counts(const std::string& group) const;
  Counts total() const;
  // The first failed write to log.txt, "" when none failed.
  std::string error() const;
  const LogConfig& config() const { return config_; }
  // Message texts told apart so far (at most Bounds::texts, plus one for all others).
  std::size_t texts() const;

 private:
  class Sink;
  // Output that stops taking lines at a size: log.txt or stderr.
  struct Budget {
    std::size_t limit, used = 0;
    long dropped = 0;               // lines left out since the limit was reached
    std::size_t dropped_bytes = 0;  // their size
    bool full = false;
    bool take(const std::string& line);  // false (and counted) when the line would pass the limit
  };
  // Under mutex_: a line to stderr (from stderr_level up) and to log.txt, within their size
  // limits; `closing` lines (the counts close() writes) pass them. Whether log.txt took it.
  bool emit(LogLevel level, const std::string& line, bool closing = false);
  bool append_to_file(const std::string& line, bool closing);
  void write_stderr(const std::string& line, bool closing);
  void close_budgets();
  LogConfig config_;
  Bounds bounds_;
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<Sink>> sinks_;
  std::map<std::string, Counts> counts_;
  std::size_t texts_ = 0;  // over every sink
  std::string pending_;    // lines before open()
  std::function<void(LogLevel, const std::string&)> forward_;
  int fd_ = -1;
  bool opened_ = false;
  std::string error_;
  bool tty_ = false;
  Budget file_budget_, stderr_budget_;
};

}  // namespace stride::host
