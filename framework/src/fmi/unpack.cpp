// Unpacking (libzip) into a private temporary folder (see unpack.hpp).
#include "fmi/unpack.hpp"

#include <dlfcn.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <set>
#include <vector>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include "fmi/limits.hpp"
#include "fmi/model_description.hpp"

namespace stride::host::fmi {
namespace fs = std::filesystem;

namespace {

std::mutex g_folders_mutex;
std::set<TempFolder*> g_folders;

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

namespace {

// libzip's functions, loaded when the first archive is opened rather than linked: the binary of
// an exported FMU (export/package.cpp) carries this code but unzips only the FMUs packed inside
// it, so it loads libzip and what libzip needs (libcrypto, bzip2, zlib, ...) only then, and packs
// them only then.
struct Libzip {
// clang-format off
#define STRIDE_LIBZIP_FUNCTIONS(X)                                                                                 \
  X(zip_open) X(zip_error_init_with_code) X(zip_error_strerror) X(zip_error_fini) X(zip_file_get_external_attributes) \
  X(zip_fopen_index) X(zip_strerror) X(zip_fread) X(zip_fclose) X(zip_discard) X(zip_get_num_entries) X(zip_stat_index)
// clang-format on
#define STRIDE_MEMBER(f) decltype(&::f) f = nullptr;
  STRIDE_LIBZIP_FUNCTIONS(STRIDE_MEMBER)
#undef STRIDE_MEMBER
};

const Libzip& libzip() {
  static const Libzip z = [] {
    void* h = ::dlopen(STRIDE_LIBZIP_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (!h) throw FmuError(std::string("cannot load libzip to unpack FMUs: ") + ::dlerror());
    Libzip out;
#define STRIDE_RESOLVE(f)                                   \
  out.f = reinterpret_cast<decltype(&::f)>(::dlsym(h, #f)); \
  if (!out.f) throw FmuError(std::string(STRIDE_LIBZIP_SONAME ": no function " #f));
    STRIDE_LIBZIP_FUNCTIONS(STRIDE_RESOLVE)
#undef STRIDE_RESOLVE
    return out;
  }();
  return z;
}
#undef STRIDE_LIBZIP_FUNCTIONS

std::string mib(std::uint64_t bytes) {
  const double m = double(bytes) / (1024.0 * 1024.0);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", m);
  return std::string(buf) + " MiB";
}

// SIGXFSZ ignored while unpacking: a file-size limit makes the write fail (EFBIG), which is
// reported like a full disk, instead of killing the process.
class FileSizeSignalIgnored {
 public:
  FileSizeSignalIgnored() {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    ::sigemptyset(&ignore.sa_mask);
    ::sigaction(SIGXFSZ, &ignore, &old_);
  }
  ~FileSizeSignalIgnored() { ::sigaction(SIGXFSZ, &old_, nullptr); }
  FileSizeSignalIgnored(const FileSizeSignalIgnored&) = delete;
  FileSizeSignalIgnored& operator=(const FileSizeSignalIgnored&) = delete;

 private:
  struct sigaction old_ {};
};

zip_t* open_archive(const fs::path& file, const std::string& label) {
  std::error_code ec;
  if (!fs::exists(file, ec)) throw FmuError(label + ": no such file");
  int err = 0;
  zip_t* z = libzip().zip_open(file.c_str(), ZIP_RDONLY, &err);
  if (z) return z;
  zip_error_t ze;
  libzip().zip_error_init_with_code(&ze, err);
  std::string why = libzip().zip_error_strerror(&ze);
  libzip().zip_error_fini(&ze);
  throw FmuError(label + ": not an FMU archive (a zip file expected): " + why);
}

// The entry's path inside the FMU; throws for one that would leave it or is a symbolic link.
fs::path entry_path(zip_t* z, zip_uint64_t i, const std::string& name, const std::string& label) {
  const fs::path rel = fs::path(name).lexically_normal();
  if (rel.is_absolute() || name.empty() || (!rel.empty() && *rel.begin() == ".."))
    throw FmuError(label + ": archive entry \"" + name + "\" points outside the FMU (absolute or \"..\")");
  zip_uint8_t opsys = 0;
  zip_uint32_t attributes = 0;
  if (libzip().zip_file_get_external_attributes(z, i, 0, &opsys, &attributes) == 0 && opsys == ZIP_OPSYS_UNIX &&
      S_ISLNK(attributes >> 16))
    throw FmuError(label + ": archive entry \"" + name + "\" is a symbolic link (an FMU holds files only)");
  return rel;
}

// Writes the entry's `size` bytes to dest; throws when it cannot, or when the entry holds more
// or fewer bytes than its header says.
void write_entry(zip_t* z, zip_uint64_t i, std::uint64_t size, const fs::path& dest, const std::string& name,
                 const std::string& label, std::vector<char>& buf) {
  zip_file_t* zf = libzip().zip_fopen_index(z, i, 0);
  if (!zf) throw FmuError(label + ": archive entry \"" + name + "\" cannot be read: " + libzip().zip_strerror(z));
  std::FILE* out = std::fopen(dest.c_str(), "wb");
  int write_errno = out ? 0 : errno;
  zip_int64_t got = 0;
  std::uint64_t read = 0;
  while (out && (got = libzip().zip_fread(zf, buf.data(), buf.size())) > 0) {
    read += std::uint64_t(got);
    if (read > size) break;
    if (std::fwrite(buf.data(), 1, std::size_t(got), out) != std::size_t(got)) {
      write_errno = errno;
      break;
    }
  }
  libzip().zip_fclose(zf);
  if (out && std::fclose(out) != 0 && !write_errno) write_errno = errno;
  if (write_errno)
    throw FmuError(label + ": archive entry \"" + name + "\" cannot be unpacked into " + dest.string() + ": " +
                   std::strerror(write_errno));
  if (got < 0 || read != size)
    throw FmuError(label + ": archive entry \"" + name + "\" is damaged (" + std::to_string(read) +
                   " bytes where its header says " + std::to_string(size) + ")");
}

}  // namespace

void unpack(const fs::path& file, const fs::path& into, const std::string& label, const std::string& only) {
  zip_t* z = open_archive(file, label);
  struct Closer {
    zip_t* z;
    ~Closer() { libzip().zip_discard(z); }
  } closer{z};
  const FileSizeSignalIgnored guard;
  const zip_int64_t n = libzip().zip_get_num_entries(z, 0);
  if (n < 0 || std::uint64_t(n) > kMaxEntries)
    throw FmuError(label + ": the archive has " + std::to_string(n) + " entries (at most " +
                   std::to_string(kMaxEntries) + ")");
  const std::uint64_t most = max_unpacked_bytes(), most_xml = max_xml_bytes();
  std::uint64_t total = 0;
  std::vector<char> buf(1 << 16);
  for (zip_uint64_t i = 0; i < zip_uint64_t(n); ++i) {
    zip_stat_t st;
    if (libzip().zip_stat_index(z, i, 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) || !(st.valid & ZIP_STAT_SIZE))
      throw FmuError(label + ": entry " + std::to_string(i) + " of the archive cannot be read");
    const std::string name = st.name;
    if (!only.empty() && name != only) continue;
    const fs::path dest = into / entry_path(z, i, name, label);
    if (name.back() == '/') {
      fs::create_directories(dest);
      continue;
    }
    if (name == "modelDescription.xml" && st.size > most_xml)
      throw FmuError(label + ": modelDescription.xml is " + mib(st.size) + ", more than the " + mib(most_xml) +
                     " Stride reads (STRIDE_FMU_MAX_XML_MIB)");
    total += st.size;
    if (total > most)
      throw FmuError(label + ": the archive unpacks to more than " + mib(most) + " (STRIDE_FMU_MAX_UNPACKED_MIB)");
    fs::create_directories(dest.parent_path());
    write_entry(z, i, st.size, dest, name, label, buf);
  }
}

}  // namespace stride::host::fmi
