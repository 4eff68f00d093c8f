#include "core/run_log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "stride/host/core/files.hpp"
#include "stride/host/input/json_input.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

std::string base_name(const char* file) {
  const std::string f = file ? file : "?";
  const auto slash = f.find_last_of('/');
  return slash == std::string::npos ? f : f.substr(slash + 1);
}

// "16 MiB", "1 KiB", "300 bytes".
std::string size_text(std::size_t bytes) {
  if (bytes >= (std::size_t(1) << 20) && bytes % (std::size_t(1) << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0) return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

// The key a message text is rate-limited by, when more texts than the bound have been seen.
const std::string kOtherTexts = std::string("\0other", 6);

}  // namespace

bool RunLog::Budget::take(const std::string& line) {
  if (!full && used + line.size() <= limit) {
    used += line.size();
    return true;
  }
  full = true;
  ++dropped;
  dropped_bytes += line.size();
  return false;
}

class RunLog::Sink final : public Logger {
 public:
  Sink(RunLog& log, std::string source, std::string group, const double* const* time)
      : Logger(log.config_.level),
        log_(log),
        source_(one_line(source, log.bounds_.message_bytes)),
        group_(std::move(group)),
        time_(time) {}

  void write(LogLevel level, const LogFormat& site, std::string_view text) noexcept override {
    if (level < threshold() || level >= LogLevel::off) return;
    try {
      std::lock_guard<std::mutex> lock(log_.mutex_);
      Counts& c = log_.counts_[group_];
      if (level == LogLevel::warning) ++c.warnings;
      if (level == LogLevel::error) ++c.errors;
      Text& s = text_of(site.text);
      if (++s.count == 1) {
        s.level = level;
        s.file = site.file;
        s.line = site.line;
        s.first = one_line(text, log_.bounds_.message_bytes);
        order_.push_back(&s);
      }
      const long repeats = log_.config_.repeats;
      if (s.count > repeats) {
        ++c.suppressed;
        return;
      }
      std::string line = head(level);
      line += s.count == 1 ? s.first : one_line(text, log_.bounds_.message_bytes);
      if (s.count == repeats)
        line +=
            " (written " + std::to_string(repeats) + " times " + where(s) + "; further ones are counted at the end)";
      if (!log_.emit(level, line)) ++c.suppressed;
    } catch (...) {
      // Out of memory while logging: the message is lost, the run goes on.
    }
  }

  // Lines for the texts that were cut off (under the mutex).
  void finish() {
    const long repeats = log_.config_.repeats;
    for (const Text* s : order_) {
      if (s->count <= repeats) continue;
      std::string line = head(s->level, false);
      line += std::to_string(s->count - repeats) + " more message" + (s->count - repeats == 1 ? "" : "s") + " " +
              where(*s) + " left out (" + std::to_string(s->count) + " in all; the first: \"" + s->first + "\")";
      log_.emit(s->level, line, true);
    }
  }

 private:
  struct Text {
    long count = 0;
    LogLevel level = LogLevel::info;
    const char* file = nullptr;
    int line = 0;
    std::string first;   // the first message, as written
    bool other = false;  // stands for every text past the bound
  };
  // The entry of a message text (under the mutex); past the bound, the shared one.
  Text& text_of(std::string_view format) {
    const std::string_view key = format.substr(0, log_.bounds_.message_bytes);
    if (auto it = texts_.find(key); it != texts_.end()) return it->second;  // allocates nothing
    if (log_.texts_ >= log_.bounds_.texts) {
      Text& other = texts_[kOtherTexts];
      other.other = true;
      return other;
    }
    ++log_.texts_;
    return texts_[std::string(key)];
  }
  // Where the messages of a text come from: the first place that wrote it.
  std::string where(const Text& s) const {
    if (s.other) return "with texts beyond the first " + std::to_string(log_.bounds_.texts) + " told apart";
    return "from " + base_name(s.file) + ":" + std::to_string(s.line);
  }
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
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>()(s); }
  };
  std::unordered_map<std::string, Text, KeyHash, std::equal_to<>> texts_;
  std::vector<const Text*> order_;  // in order of first appearance (map nodes stay put)
};

RunLog::RunLog(const LogConfig& config, const Bounds& bounds)
    : config_(config),
      bounds_(bounds),
      tty_(::isatty(2) != 0),
      file_budget_{bounds.file_bytes},
      stderr_budget_{bounds.stderr_bytes} {}

RunLog::~RunLog() {
  if (fd_ >= 0) ::close(fd_);
}

Logger& RunLog::sink(std::string source, std::string group, const double* const* time) {
  std::lock_guard<std::mutex> lock(mutex_);
  counts_[group];  // every group appears in the counts, with zeros when nothing was said
  sinks_.push_back(std::make_unique<Sink>(*this, std::move(source), std::move(group), time));
  return *sinks_.back();
}

void RunLog::write_stderr(const std::string& line, bool closing) {
  const bool was_full = stderr_budget_.full;
  if (closing || stderr_budget_.take(line)) {
    // Clear a progress bar drawn with \r on a terminal first.
    if (tty_) std::fprintf(stderr, "\r%*s\r", 80, "");
    std::fwrite(line.data(), 1, line.size(), stderr);
  } else if (!was_full) {
    const std::string note = "[warning] log: stderr reached its limit of " + size_text(stderr_budget_.limit) +
                             " for this run; further messages are in log.txt only\n";
    std::fwrite(note.data(), 1, note.size(), stderr);
  }
}

bool RunLog::append_to_file(const std::string& line, bool closing) {
  const bool was_full = file_budget_.full;
  if (!closing && !file_budget_.take(line)) {
    if (was_full) return false;
    // One line where the file stops (the limit leaves room for it), the count at close().
    const std::string note = "[warning] log: log.txt reached its limit of " + size_text(file_budget_.limit) +
                             " for this run; further messages are counted, not written\n";
    if (!opened_) pending_ += note;
    else if (fd_ >= 0) write_all(fd_, note.data(), note.size());
    return false;
  }
  if (!opened_) {
    pending_ += line;
    return true;
  }
  if (fd_ < 0) return true;  // refused before: the error is reported once
  if (!write_all(fd_, line.data(), line.size()) && error_.empty()) {
    error_ = std::string("cannot write log.txt: ") + std::strerror(errno);
    ::close(fd_);
    fd_ = -1;
  }
  return true;
}

void RunLog::forward(std::function<void(LogLevel, const std::string&)> f) {
  std::lock_guard<std::mutex> lock(mutex_);
  forward_ = std::move(f);
  pending_.clear();
}

bool RunLog::emit(LogLevel level, const std::string& text, bool closing) {
  if (forward_) {
    forward_(level, text);
    return true;
  }
  const std::string line = text + "\n";
  if (level >= config_.stderr_level) write_stderr(line, closing);
  return append_to_file(line, closing);
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
  pending_.shrink_to_fit();
  return error_;
}

// The counts of what the size limits left out, past the limits (a line each).
void RunLog::close_budgets() {
  auto said = [](const Budget& b) {
    return std::to_string(b.dropped) + " message line" + (b.dropped == 1 ? "" : "s") + " (" +
           std::to_string(b.dropped_bytes) + " bytes) left out after the limit of " + size_text(b.limit);
  };
  if (stderr_budget_.dropped > 0) {
    const std::string line = "[warning] log: stderr: " + said(stderr_budget_) + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
  if (file_budget_.dropped > 0 && fd_ >= 0) {
    const std::string line = "[warning] log: log.txt: " + said(file_budget_) + "\n";
    write_all(fd_, line.data(), line.size());
  }
}

void RunLog::close() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& s : sinks_) s->finish();
  close_budgets();
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

std::size_t RunLog::texts() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return texts_;
}

}  // namespace stride::host
