// Unpacking (libzip) into a private temporary folder (see unpack.hpp).
#include "fmi/unpack.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <vector>

#include <unistd.h>
#include <zip.h>

#include "fmi/model_description.hpp"

namespace stride::host::fmi {
namespace fs = std::filesystem;

namespace {

std::mutex g_folders_mutex;
std::set<TempFolder*> g_folders;

constexpr std::uint64_t kMaxUnpackedBytes = std::uint64_t(4) << 30;  // 4 GiB
constexpr std::uint64_t kMaxEntries = 100000;

}  // namespace

TempFolder::TempFolder() {
  std::string tmpl = (fs::temp_directory_path() / "stride-fmu-XXXXXX").string();
  if (!::mkdtemp(tmpl.data())) throw FmuError(std::string("cannot create a temporary folder: ") + std::strerror(errno));
  path_ = tmpl;
  owner_ = ::getpid();
  std::lock_guard<std::mutex> lock(g_folders_mutex);
  g_folders.insert(this);
}

TempFolder::~TempFolder() {
  {
    std::lock_guard<std::mutex> lock(g_folders_mutex);
    g_folders.erase(this);
  }
  remove();
}

void TempFolder::remove() noexcept {
  if (path_.empty() || ::getpid() != owner_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void remove_temporary_folders() noexcept {
  std::lock_guard<std::mutex> lock(g_folders_mutex);
  for (TempFolder* f : g_folders) f->remove();
}

void unpack(const fs::path& file, const fs::path& into, const std::string& label) {
  int err = 0;
  zip_t* z = zip_open(file.c_str(), ZIP_RDONLY, &err);
  if (!z) {
    zip_error_t ze;
    zip_error_init_with_code(&ze, err);
    std::string why = zip_error_strerror(&ze);
    zip_error_fini(&ze);
    throw FmuError(label + ": not an FMU archive (a zip file expected): " + why);
  }
  struct Closer {
    zip_t* z;
    ~Closer() { zip_discard(z); }
  } closer{z};
  const zip_int64_t n = zip_get_num_entries(z, 0);
  if (n < 0 || std::uint64_t(n) > kMaxEntries)
    throw FmuError(label + ": the archive has " + std::to_string(n) + " entries (at most " + std::to_string(kMaxEntries) + ")");
  std::uint64_t total = 0;
  std::vector<char> buf(1 << 16);
  for (zip_int64_t i = 0; i < n; ++i) {
    zip_stat_t st;
    if (zip_stat_index(z, zip_uint64_t(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME))
      throw FmuError(label + ": entry " + std::to_string(i) + " of the archive cannot be read");
    const std::string name = st.name;
    const fs::path rel = fs::path(name).lexically_normal();
    if (rel.is_absolute() || name.empty() || (!rel.empty() && *rel.begin() == ".."))
      throw FmuError(label + ": archive entry \"" + name + "\" points outside the FMU (absolute or \"..\")");
    const fs::path dest = into / rel;
    if (name.back() == '/') {
      fs::create_directories(dest);
      continue;
    }
    total += (st.valid & ZIP_STAT_SIZE) ? st.size : 0;
    if (total > kMaxUnpackedBytes)
      throw FmuError(label + ": the archive unpacks to more than " + std::to_string(kMaxUnpackedBytes >> 30) + " GiB");
    fs::create_directories(dest.parent_path());
    zip_file_t* zf = zip_fopen_index(z, zip_uint64_t(i), 0);
    if (!zf) throw FmuError(label + ": archive entry \"" + name + "\" cannot be read: " + zip_strerror(z));
    std::ofstream out(dest, std::ios::binary);
    zip_int64_t got = 0;
    std::uint64_t written = 0;
    while ((got = zip_fread(zf, buf.data(), buf.size())) > 0) {
      written += std::uint64_t(got);
      if (written > st.size) break;
      out.write(buf.data(), got);
    }
    zip_fclose(zf);
    if (got < 0 || !out) throw FmuError(label + ": archive entry \"" + name + "\" cannot be unpacked into " + dest.string());
  }
}

}  // namespace stride::host::fmi
