#include "stride/host/core/files.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace stride::host {
namespace fs = std::filesystem;

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

std::string write_file_atomically(const fs::path& file, const std::string& text) {
  const fs::path tmp = file.parent_path() / ("." + file.filename().string() + ".tmp-" + std::to_string(::getpid()));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return "cannot write " + file.string() + ": " + std::strerror(errno);
  const bool written = write_all(fd, text.data(), text.size());
  const int err = errno;
  if (::close(fd) != 0 || !written) {
    ::unlink(tmp.c_str());
    return "cannot write " + file.string() + ": " + std::strerror(written ? errno : err);
  }
  if (::rename(tmp.c_str(), file.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    return "cannot write " + file.string() + ": " + std::strerror(e);
  }
  return "";
}

}  // namespace stride::host
