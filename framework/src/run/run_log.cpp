#include "run/run_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "stride/host/input/json_input.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

// write(2) until everything is written; false on failure (errno set).
bool write_all(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

struct SiteKey {
  const char* file;
  int line;
  bool operator==(const SiteKey& o) const { return file == o.file && line == o.line; }
};
struct SiteHash {
  std::size_t operator()(const SiteKey& k) const {
    return std::hash<const void*>()(k.file) ^ (std::hash<int>()(k.line) * 0x9e3779b97f4a7c15ull);
  }
};

std::string base_name(const char* file) {
  const std::string f = file ? file : "?";
  const auto slash = f.find_last_of('/');
  return slash == std::string::npos ? f : f.substr(slash + 1);
}

}  // namespace

class RunLog::Sink final : public Logger {
 public:
  Sink(RunLog& log, std::string source, std::string group, const double* const* time)
      : Logger(log.config_.level), log_(log), source_(std::move(source)), group_(std::move(group)), time_(time) {}

  void write(LogLevel level, const LogFormat& site, std::string_view text) noexcept override {
    if (level < threshold() || level >= LogLevel::off) return;
    try {
      std::lock_guard<std::mutex> lock(log_.mutex_);
      Counts& c = log_.counts_[group_];
      if (level == LogLevel::warning) ++c.warnings;
      if (level == LogLevel::error) ++c.errors;
      Site& s = sites_[SiteKey{site.file, site.line}];
      if (++s.count == 1) {
        s.level = level;
        s.file = site.file;
        s.line = site.line;
        s.first.assign(text);
        order_.push_back(&s);
      }
      const long repeats = log_.config_.repeats;
      if (s.count > repeats) {
        ++c.suppressed;
        return;
      }
      std::string line = head(level);
      line += text;
      if (s.count == repeats)
        line += " (written " + std::to_string(repeats) + " times from " + base_name(site.file) + ":" +
                std::to_string(site.line) + "; further ones are counted at the end)";
      log_.emit(level, line);
    } catch (...) {
      // Out of memory while logging: the message is lost, the run goes on.
    }
  }

  // Lines for the places that were cut off (under the mutex).
  void finish() {
    const long repeats = log_.config_.repeats;
    for (const Site* s : order_) {
      if (s->count <= repeats) continue;
      std::string line = head(s->level, false);
      line += std::to_string(s->count - repeats) + " more message" + (s->count - repeats == 1 ? "" : "s") + " from " +
              base_name(s->file) + ":" + std::to_string(s->line) + " left out (" + std::to_string(s->count) +
              " in all; the first: \"" + s->first + "\")";
      log_.emit(s->level, line);
    }
  }

 private:
  struct Site {
    long count = 0;
    LogLevel level = LogLevel::info;
    const char* file = nullptr;
    int line = 0;
    std::string first;
  };
  std::string head(LogLevel level, bool with_time = true) const {
    std::string h = std::string("[") + to_string(level) + "] " + source_;
    if (with_time && time_ && *time_ && std::isfinite(**time_)) {
      // 9 digits: steps of a microsecond over minutes, without the round-off of a sum of steps.
      char t[32];
      std::snprintf(t, sizeof t, "%.9g", **time_);
      h += std::string(", t = ") + t + " s";
    }
    return h + ": ";
  }
  RunLog& log_;
  std::string source_, group_;
  const double* const* time_;
  std::unordered_map<SiteKey, Site, SiteHash> sites_;
  std::vector<const Site*> order_;  // in order of first appearance (map nodes stay put)
};

RunLog::RunLog(const LogConfig& config) : config_(config), tty_(::isatty(2) != 0) {}

RunLog::~RunLog() {
  if (fd_ >= 0) ::close(fd_);
}

Logger& RunLog::sink(std::string source, std::string group, const double* const* time) {
  std::lock_guard<std::mutex> lock(mutex_);
  counts_[group];  // every group appears in the counts, with zeros when nothing was said
  sinks_.push_back(std::make_unique<Sink>(*this, std::move(source), std::move(group), time));
  return *sinks_.back();
}

void RunLog::emit(LogLevel level, const std::string& text) {
  const std::string line = text + "\n";
  if (level >= config_.stderr_level) {
    // Clear a progress bar drawn with \r on a terminal first.
    if (tty_) std::fprintf(stderr, "\r%*s\r", 80, "");
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  if (!opened_) {
    if (pending_.size() < (std::size_t(1) << 24)) pending_ += line;
    return;
  }
  if (fd_ < 0) return;
  if (!write_all(fd_, line.data(), line.size()) && error_.empty()) {
    error_ = std::string("cannot write log.txt: ") + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
}

std::string RunLog::open(const fs::path& file) {
  std::lock_guard<std::mutex> lock(mutex_);
  opened_ = true;
  fd_ = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    error_ = "cannot write " + file.string() + ": " + std::strerror(errno);
    return error_;
  }
  if (!write_all(fd_, pending_.data(), pending_.size())) {
    error_ = "cannot write " + file.string() + ": " + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
  pending_.clear();
  return error_;
}

void RunLog::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : sinks_) s->finish();
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

RunLog::Counts RunLog::counts(const std::string& group) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = counts_.find(group);
  return it == counts_.end() ? Counts{} : it->second;
}

RunLog::Counts RunLog::total() const {
  std::lock_guard<std::mutex> lock(mutex_);
  Counts t;
  for (const auto& [g, c] : counts_) {
    t.warnings += c.warnings;
    t.errors += c.errors;
    t.suppressed += c.suppressed;
  }
  return t;
}

std::string RunLog::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace stride::host
