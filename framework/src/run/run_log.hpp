// The host side of plugin messages (stride/log.hpp): one RunLog per experiment, one sink per
// plugin object. Lines go to <results>/log.txt (appended whole, one write(2) each, so a run
// that is killed leaves every line written so far readable) and, from the manifest's
// stderr_level up, to stderr. Internal to the host.
#pragma once

#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "stride/host/graph/experiment.hpp"

namespace stride::host {

class RunLog {
 public:
  struct Counts {
    long warnings = 0, errors = 0;  // messages of these levels, written or left out
    long suppressed = 0;            // messages left out by the rate limit (any level)
  };

  explicit RunLog(const LogConfig& config);
  ~RunLog();
  RunLog(const RunLog&) = delete;
  RunLog& operator=(const RunLog&) = delete;

  // A sink for one plugin object. `source` names it in every line ("boom", "boom (integrator
  // cvode)"); its messages are counted under `group` (a subsystem's or a connection's name);
  // `*time`, when not null, is read for the time of each message (the node's clock follows the
  // run attached: NodeInputs::clock()). The sink lives as long as the RunLog.
  Logger& sink(std::string source, std::string group, const double* const* time);
  // From now on lines go to `file` too (created or emptied), those written before first.
  // "" or what went wrong.
  std::string open(const std::filesystem::path& file);
  // Writes one line per place whose messages were left out, then closes the file.
  void close();
  Counts counts(const std::string& group) const;
  Counts total() const;
  // The first failed write to log.txt, "" when none failed.
  std::string error() const;
  const LogConfig& config() const { return config_; }

 private:
  class Sink;
  void emit(LogLevel level, const std::string& line);  // under mutex_
  LogConfig config_;
  mutable std::mutex mutex_;
  std::deque<std::unique_ptr<Sink>> sinks_;
  std::map<std::string, Counts> counts_;
  std::string pending_;  // lines before open()
  int fd_ = -1;
  bool opened_ = false;
  std::string error_;
  bool tty_ = false;
};

}  // namespace stride::host
