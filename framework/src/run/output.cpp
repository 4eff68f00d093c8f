#include "stride/host/run/output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <vector>

#include "run/coupling_error.hpp"
#include "stride/host/input/json_input.hpp"

namespace stride::host {
namespace fs = std::filesystem;

FolderLock::FolderLock(const fs::path& dir, const std::string& holder) : file_(dir / ".stride.lock") {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw OutputError("cannot create the results folder " + dir.string() + ": " +
                      (ec ? ec.message() : std::string("a file of that name exists")));
  // The holder before us removes the file as it lets go: a lock taken on a file that was removed
  // meanwhile guards nothing (the next run creates a new one), so take it again.
  for (int attempt = 0;; ++attempt) {
    fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw OutputError("cannot use the results folder " + dir.string() + ": " + std::strerror(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int e = errno;
      char who[512] = {};
      const ssize_t n = ::pread(fd_, who, sizeof who - 1, 0);
      ::close(fd_);
      fd_ = -1;
      if (e == EWOULDBLOCK)
        throw OutputError("the results folder " + dir.string() + " is in use by another run (" +
                          (n > 0 ? std::string(who, static_cast<std::size_t>(n)) : std::string("unknown process")) +
                          "); wait for it to end or choose another folder with --out");
      throw OutputError("cannot lock the results folder " + dir.string() + ": " + std::strerror(e));
    }
    struct stat held {
    }, named{};
    if (::fstat(fd_, &held) == 0 && ::stat(file_.c_str(), &named) == 0 && held.st_ino == named.st_ino &&
        held.st_dev == named.st_dev)
      break;
    ::close(fd_);
    fd_ = -1;
    if (attempt == 100)
      throw OutputError("cannot lock the results folder " + dir.string() + ": its lock file keeps changing");
  }
  // Who holds the lock, for the message of a second run (the lock holds without it).
  if (::ftruncate(fd_, 0) == 0) write_all(fd_, holder.data(), holder.size());
}

FolderLock::~FolderLock() {
  if (fd_ < 0) return;
  ::unlink(file_.c_str());  // while still holding it: a run waiting for it takes a new file
  ::close(fd_);             // releases the lock
}

OutputFolder::OutputFolder(const fs::path& dir, const json& running)
    : dir_(dir),
      lock_(dir, "stride run, pid " + std::to_string(::getpid()) + ", " + running.value("manifest", std::string("?"))) {
  // Everything that could refuse the folder is checked before it is marked, so that a refused
  // folder is left without a "running" summary (and, with the lock's destructor, without a lock).
  const std::vector<fs::path> stale = {results(), dir_ / "iterations.csv", dir_ / "steps.csv", log()};
  std::error_code ec;
  if (fs::is_directory(summary(), ec)) throw OutputError("cannot write " + summary().string() + ": it is a folder");
  for (const fs::path& f : stale)
    if (fs::is_directory(f, ec)) throw OutputError("cannot replace " + f.string() + ": it is a folder");
  if (auto err = write_summary(running); !err.empty()) throw OutputError(err);
  for (const fs::path& f : stale)
    if (::unlink(f.c_str()) != 0 && errno != ENOENT) {
      const std::string why = "cannot replace " + f.string() + ": " + std::strerror(errno);
      ::unlink(summary().c_str());
      throw OutputError(why);
    }
}

OutputFolder::~OutputFolder() = default;

std::string summary_text(const json& summary) {
  if (!summary.is_object() || !summary.contains("accuracy")) return dump_safe(summary, 2) + "\n";
  nlohmann::ordered_json o(summary);  // sorted, as before
  o["accuracy"] = CouplingErrors::in_reading_order(summary["accuracy"]);
  return o.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

std::string OutputFolder::write_summary(const json& summary) const {
  return write_file_atomically(this->summary(), summary_text(summary));
}

}  // namespace stride::host
