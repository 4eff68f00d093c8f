// A zip archive (an FMU or an SSP) written to "<out>.part" and renamed onto <out> by finish():
// a failed or interrupted export leaves no torn file at <out>. Internal to the host.
#pragma once

#include <zip.h>

#include <filesystem>
#include <list>
#include <stdexcept>
#include <string>

namespace stride::host {

// A zip archive written to `tmp`, renamed onto `out` by finish() (no torn FMU at `out`).
class Archive {
 public:
  explicit Archive(std::filesystem::path out) : out_(std::move(out)), tmp_(out_.string() + ".part") {
    std::filesystem::remove(tmp_);
    int err = 0;
    z_ = zip_open(tmp_.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &err);
    if (!z_) throw std::runtime_error("cannot create " + tmp_.string() + " (libzip error " + std::to_string(err) + ")");
  }
  ~Archive() {
    if (z_) zip_discard(z_);
    std::error_code ec;
    std::filesystem::remove(tmp_, ec);
  }
  void text(const std::string& name, const std::string& content) {
    texts_.push_back(content);
    zip_source_t* s = zip_source_buffer(z_, texts_.back().data(), texts_.back().size(), 0);
    add(name, s);
  }
  void file(const std::string& name, const std::filesystem::path& f) {
    add(name, zip_source_file(z_, f.c_str(), 0, -1));
  }
  void finish() {
    if (zip_close(z_) != 0) throw std::runtime_error("cannot write " + tmp_.string() + ": " + zip_strerror(z_));
    z_ = nullptr;
    std::filesystem::rename(tmp_, out_);
  }

 private:
  void add(const std::string& name, zip_source_t* s) {
    if (!s || zip_file_add(z_, name.c_str(), s, ZIP_FL_OVERWRITE | ZIP_FL_ENC_UTF_8) < 0) {
      if (s) zip_source_free(s);
      throw std::runtime_error("cannot add " + name + " to " + tmp_.string() + ": " + zip_strerror(z_));
    }
  }
  std::filesystem::path out_, tmp_;
  zip_t* z_ = nullptr;
  std::list<std::string> texts_;  // alive until zip_close reads them
};


}  // namespace stride::host
