// The index of a plugin folder: which plugin (name, kind) each library provides, so that a
// manifest loads only the libraries it names (issue 12, item 3). Loading every library costs
// about half a millisecond each (dlopen, relocations, static initializers); `stride validate`
// and short runs pay for what they use.
//
// One JSON file per folder in $XDG_CACHE_HOME/stride (else ~/.cache/stride), named after a hash
// of the folder's path, holding for every library that passed the handshake its file name,
// modification time, size, plugin name and kind, with the host's ABI version and build
// fingerprint. An entry is used only while the file's time and size are unchanged; a library
// without a valid entry is loaded (and so indexed) again. Refused libraries are not indexed:
// they are loaded on every use, so their refusal is reported as a full scan reports it and a
// library whose missing dependency was installed since is seen. The cache is rewritten
// atomically (temporary file, rename) and only when it changed; without a writable cache folder
// every library is loaded, as a full scan would.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>

#include "stride/host/load/registry.hpp"

namespace stride::host {
namespace fs = std::filesystem;

class PluginIndex {
 public:
  struct Entry {
    long long mtime = 0;
    std::uintmax_t size = 0;
    std::string name;
    std::string kind;
  };

  explicit PluginIndex(const fs::path& folder) : folder_(folder) {
    std::error_code ec;
    const fs::path canonical = fs::weakly_canonical(folder, ec);
    key_ = (ec ? folder : canonical).string();
    file_ = cache_folder();
    if (!file_.empty()) file_ /= "plugins-" + hex(fnv1a(key_)) + ".json";
    read();
  }

  // The folder's libraries in the order a scan loads them.
  std::vector<fs::path> libraries() const {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(folder_, ec))
      if (e.is_regular_file(ec) && e.path().extension() == ".so") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    return files;
  }

  // The entry for `file` when its time and size still match, else nullptr.
  const Entry* find(const fs::path& file) const {
    auto it = entries_.find(file.filename().string());
    if (it == entries_.end()) return nullptr;
    const auto [mtime, size] = stamp(file);
    return it->second.mtime == mtime && it->second.size == size ? &it->second : nullptr;
  }
  void put(const fs::path& file, const PluginInfo& info) {
    const auto [mtime, size] = stamp(file);
    entries_[file.filename().string()] = Entry{mtime, size, info.name, to_string(info.kind)};
    changed_ = true;
  }
  // Entries of libraries no longer in the folder are dropped; the file is written when changed.
  void save(const std::vector<fs::path>& present) {
    std::set<std::string> names;
    for (const auto& f : present) names.insert(f.filename().string());
    for (auto it = entries_.begin(); it != entries_.end();)
      if (!names.count(it->first)) it = entries_.erase(it), changed_ = true;
      else ++it;
    if (!changed_ || file_.empty()) return;
    json j{{"folder", key_},
           {"abi", STRIDE_ABI_VERSION},
           {"fingerprint", STRIDE_FINGERPRINT},
           {"libraries", json::object()}};
    for (const auto& [f, e] : entries_)
      j["libraries"][f] = {{"mtime", e.mtime}, {"size", e.size}, {"plugin", e.name}, {"kind", e.kind}};
    std::error_code ec;
    fs::create_directories(file_.parent_path(), ec);
    const fs::path tmp = file_.string() + ".tmp" + std::to_string(::getpid());
    {
      std::ofstream out(tmp);
      if (!out) return;  // no cache: every use loads the libraries
      out << j.dump(1) << "\n";
      if (!out.flush()) {
        out.close();
        fs::remove(tmp, ec);
        return;
      }
    }
    fs::rename(tmp, file_, ec);
    if (ec) fs::remove(tmp, ec);
  }

 private:
  static fs::path cache_folder() {
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x == '/') return fs::path(x) / "stride";
    if (const char* h = std::getenv("HOME"); h && *h == '/') return fs::path(h) / ".cache" / "stride";
    return {};
  }
  static std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 1469598103934665603ull;
    for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
    return h;
  }
  static std::string hex(std::uint64_t v) {
    char b[17];
    std::snprintf(b, sizeof b, "%016llx", static_cast<unsigned long long>(v));
    return b;
  }
  static std::pair<long long, std::uintmax_t> stamp(const fs::path& file) {
    std::error_code ec;
    const auto t = fs::last_write_time(file, ec);
    const auto size = fs::file_size(file, ec);
    if (ec) return {-1, 0};
    return {static_cast<long long>(std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count()),
            size};
  }
  void read() {
    if (file_.empty()) return;
    std::ifstream in(file_);
    if (!in) return;
    try {
      const json j = json::parse(in);
      // Another host build may refuse what this index accepted: start over.
      if (j.at("folder") != key_ || j.at("abi") != STRIDE_ABI_VERSION || j.at("fingerprint") != STRIDE_FINGERPRINT)
        return;
      for (const auto& [f, e] : j.at("libraries").items())
        entries_[f] = Entry{e.at("mtime").get<long long>(), e.at("size").get<std::uintmax_t>(),
                            e.at("plugin").get<std::string>(), e.at("kind").get<std::string>()};
    } catch (const std::exception&) {
      entries_.clear();  // unreadable: rebuilt from the libraries
    }
  }

  fs::path folder_;
  std::string key_;
  fs::path file_;
  std::map<std::string, Entry> entries_;
  bool changed_ = false;

 public:
  // Walks the folders in scan order: the first library providing a name provides it, a later one
  // is refused as a duplicate (without loading it), libraries providing a wanted name are loaded.
  static bool load_named(PluginRegistry& reg, const std::vector<fs::path>& folders,
                         const std::vector<std::string>& names) {
    const std::set<std::string> wanted(names.begin(), names.end());
    std::map<std::string, fs::path> provider;
    std::set<std::string> seen;
    for (const auto& folder : folders) {
      std::error_code ec;
      if (!fs::is_directory(folder, ec)) {
        reg.refusals_.push_back({folder, "plugin folder does not exist"});
        continue;
      }
      PluginIndex index(folder);
      if (!seen.insert(index.key_).second) continue;  // the same folder listed twice in the path
      const auto files = index.libraries();
      for (const auto& f : files) {
        if (const Entry* e = index.find(f)) {
          if (auto it = provider.find(e->name); it != provider.end()) {
            reg.refusals_.push_back(
                {f, "duplicate plugin name '" + e->name + "' (already provided by " + it->second.string() + ")"});
            continue;
          }
          provider[e->name] = f;
          if (wanted.count(e->name) && !reg.load(f)) provider.erase(e->name);
          continue;
        }
        // Not indexed (new, changed, or refused before): load it to learn what it provides.
        const std::size_t before = reg.plugins_.size();
        if (!reg.load(f)) continue;
        if (reg.plugins_.size() == before) continue;
        const LoadedPlugin* p = nullptr;
        for (const auto& [n, lp] : reg.plugins_)
          if (lp.file == f) p = &lp;
        if (!p) continue;
        index.put(f, p->info());
        // A library earlier in the path provides the same name but was not loaded: this one
        // would shadow it. Let a full scan sort that out.
        if (auto it = provider.find(p->info().name); it != provider.end()) return false;
        provider[p->info().name] = f;
      }
      index.save(files);
    }
    for (const auto& n : wanted)
      if (!reg.find(n)) return false;
    return true;
  }
};

bool PluginRegistry::load_named(const std::vector<fs::path>& folders, const std::vector<std::string>& names) {
  if (const char* off = std::getenv("STRIDE_PLUGIN_INDEX"); off && std::string(off) == "0") return false;
  searched_.insert(searched_.end(), folders.begin(), folders.end());
  return PluginIndex::load_named(*this, folders, names);
}

}  // namespace stride::host
