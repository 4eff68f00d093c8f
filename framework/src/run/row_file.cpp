#include "run/row_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "run/stop.hpp"

namespace stride::host {

RowFile::RowFile(const std::filesystem::path& path, const std::string& header) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Stop{RunStatus::failed, "cannot write " + path.string() + ": " + std::strerror(errno)};
  buffer_ = header + "\n";
  buffer_.reserve(std::max(buffer_.size(), kBufferBytes) + 4096);  // after: assigning a string takes its capacity
  commit();
}

RowFile::~RowFile() {
  stop_writer();
  if (fd_ >= 0) ::close(fd_);
}

void RowFile::commit() {
  last_commit_ = std::chrono::steady_clock::now();
  if (writer_.joinable()) {
    std::unique_lock lock(mutex_);
    if (!writer_error_.empty()) {
      const std::string why = writer_error_;
      lock.unlock();
      throw Stop{RunStatus::failed, why};
    }
    if (buffer_.empty() || handed_.load(std::memory_order_relaxed)) return;  // still writing: keep the rows
    buffer_.swap(spare_);
    handed_.store(true, std::memory_order_release);
    lock.unlock();
    wake_.notify_one();
    return;
  }
  if (buffer_.empty() || lost()) return;
  if (std::string why = write_out(buffer_); !why.empty()) throw Stop{RunStatus::failed, why};
}

std::string RowFile::write_out(std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      // Keep the complete rows that reached the file and cut the rest: the file ends with a
      // whole row.
      const auto last = data.rfind('\n', done ? done - 1 : 0);
      const std::size_t keep = done && last != std::string::npos ? last + 1 : 0;
      std::size_t kept =
          static_cast<std::size_t>(std::count(data.begin(), data.begin() + static_cast<long>(keep), '\n'));
      if (committed_bytes_ == 0 && keep > 0) --kept;  // the header line
      committed_rows_.fetch_add(kept, std::memory_order_relaxed);
      committed_bytes_ += keep;
      if (::ftruncate(fd_, static_cast<off_t>(committed_bytes_)) != 0) {
      }
      data.clear();
      lost_.store(true, std::memory_order_relaxed);
      return "cannot write " + path_.string() + ": " + why + "; the " + std::to_string(rows()) +
             " rows written before are kept";
    }
    done += static_cast<std::size_t>(n);
  }
  const bool header = committed_bytes_ == 0;
  committed_bytes_ += data.size();
  committed_rows_.fetch_add(static_cast<std::size_t>(std::count(data.begin(), data.end(), '\n')) - (header ? 1 : 0),
                            std::memory_order_relaxed);
  data.clear();
  return {};
}

void RowFile::write_in_background() {
  if (writer_.joinable()) return;
  // Room for the rows of a hand-over the writer is late for, so that the buffer need not grow.
  buffer_.reserve(16 * kBufferBytes);
  spare_.reserve(buffer_.capacity());
  quit_ = false;
  writer_ = std::thread([this] { writer_loop(); });
}

void RowFile::writer_loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return quit_ || handed_.load(std::memory_order_relaxed); });
    if (handed_.load(std::memory_order_relaxed)) {
      lock.unlock();
      std::string why = lost() ? std::string() : write_out(spare_);
      spare_.clear();
      lock.lock();
      if (!why.empty() && writer_error_.empty()) writer_error_ = why;
      handed_.store(false, std::memory_order_release);
      continue;
    }
    if (quit_) return;
  }
}

void RowFile::stop_writer() {
  if (!writer_.joinable()) return;
  {
    std::lock_guard lock(mutex_);
    quit_ = true;
  }
  wake_.notify_one();
  writer_.join();
}

void RowFile::finish_writing() {
  stop_writer();
  if (!writer_error_.empty()) {
    buffer_.clear();
    throw Stop{RunStatus::failed, writer_error_};
  }
  commit();
}

}  // namespace stride::host
