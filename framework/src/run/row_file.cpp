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
  if (fd_ >= 0) ::close(fd_);
}

void RowFile::commit() {
  last_commit_ = std::chrono::steady_clock::now();
  if (buffer_.empty() || lost_) return;
  std::size_t done = 0;
  while (done < buffer_.size()) {
    const ssize_t n = ::write(fd_, buffer_.data() + done, buffer_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = n < 0 ? std::strerror(errno) : "nothing written";
      // Keep the complete rows that reached the file and cut the rest: the file ends with a
      // whole row.
      const auto last = buffer_.rfind('\n', done ? done - 1 : 0);
      const std::size_t keep = done && last != std::string::npos ? last + 1 : 0;
      committed_rows_ +=
          static_cast<std::size_t>(std::count(buffer_.begin(), buffer_.begin() + static_cast<long>(keep), '\n'));
      if (committed_bytes_ == 0 && keep > 0) --committed_rows_;  // the header line
      committed_bytes_ += keep;
      if (::ftruncate(fd_, static_cast<off_t>(committed_bytes_)) != 0) {
      }
      buffer_.clear();
      lost_ = true;
      throw Stop{RunStatus::failed, "cannot write " + path_.string() + ": " + why + "; the " +
                                        std::to_string(committed_rows_) + " rows written before are kept"};
    }
    done += static_cast<std::size_t>(n);
  }
  const bool header = committed_bytes_ == 0;
  committed_bytes_ += buffer_.size();
  committed_rows_ += static_cast<std::size_t>(std::count(buffer_.begin(), buffer_.end(), '\n')) - (header ? 1 : 0);
  buffer_.clear();
}

}  // namespace stride::host
