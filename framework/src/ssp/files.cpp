// URIs of an SSD resolved to files (see files.hpp).
#include "ssp/files.hpp"

#include <algorithm>
#include <cctype>

#include "stride/host/input/json_input.hpp"

namespace stride::host::ssp {
namespace fs = std::filesystem;

namespace {

std::optional<std::string> percent_decoded(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out += s[i];
      continue;
    }
    if (i + 2 >= s.size() || !std::isxdigit(static_cast<unsigned char>(s[i + 1])) ||
        !std::isxdigit(static_cast<unsigned char>(s[i + 2])))
      return std::nullopt;
    const int c = std::stoi(s.substr(i + 1, 2), nullptr, 16);
    if (c == 0 || c == '/') return std::nullopt;  // no NUL, no slash hidden in a name
    out += static_cast<char>(c);
    i += 2;
  }
  return out;
}

// The .ssd files directly in `folder`, sorted by name.
std::vector<std::string> ssd_files(const fs::path& folder) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(folder, ec))
    if (e.path().extension() == ".ssd" && e.is_regular_file(ec)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// The system file in `folder` (an unpacked archive or a folder given as the system).
fs::path system_in(const fs::path& folder, const std::string& choice, const std::string& label) {
  std::error_code ec;
  const std::vector<std::string> ssds = ssd_files(folder);
  if (!choice.empty()) {
    const std::string name = fs::path(choice).extension() == ".ssd" ? choice : choice + ".ssd";
    if (fs::path(name).has_parent_path() || !fs::is_regular_file(folder / name, ec))
      throw ManifestError(
          {{label, "", "--ssd " + choice + ": no " + name + " here (the .ssd files: " + listed(ssds, "none") + ")"}});
    return folder / name;
  }
  for (const char* name : {"SystemStructure.ssd", "OspSystemStructure.xml"})
    if (fs::is_regular_file(folder / name, ec)) return folder / name;
  if (ssds.size() == 1) return folder / ssds[0];
  throw ManifestError({{label, "",
                        ssds.empty() ? "neither SystemStructure.ssd nor OspSystemStructure.xml nor any .ssd file here"
                                     : "no SystemStructure.ssd, and several .ssd files: choose one with --ssd NAME (" +
                                           listed(ssds, "none") + ")"}});
}

}  // namespace

SystemFile locate_system(const fs::path& path, const std::string& ssd_choice) {
  std::error_code ec;
  SystemFile s;
  const fs::path clean = path.lexically_normal();
  const fs::path named = clean.filename().empty() ? clean.parent_path() : clean;
  s.root = "/";
  s.name = named.stem().string();
  if (fs::is_directory(path, ec)) {
    s.file = system_in(path, ssd_choice, path.string());
    s.label = s.file.string();
    if (s.name.empty() || s.name == ".") s.name = fs::absolute(path, ec).lexically_normal().filename().string();
    return s;
  }
  if (!fs::is_regular_file(path, ec)) throw ManifestError({{path.string(), "", "no such file or folder"}});
  if (path.extension() != ".ssp") {
    if (!ssd_choice.empty())
      throw ManifestError({{path.string(), "", "--ssd chooses an .ssd in a package or folder, not in a file"}});
    s.file = path;
    s.label = path.string();
    if (path.filename() == "OspSystemStructure.xml") s.name = fs::absolute(path, ec).parent_path().filename().string();
    return s;
  }
  s.unpacked = std::make_shared<fmi::TempFolder>();
  try {
    fmi::unpack(path, s.unpacked->path(), path.string());
  } catch (const std::exception& e) {
    throw ManifestError({{path.string(), "", e.what()}});
  }
  s.root = s.unpacked->path();
  s.file = system_in(s.root, ssd_choice, path.string());
  s.label = path.string() + ":" + s.file.filename().string();
  return s;
}

SspManifest finished(const SystemFile& system, const nlohmann::ordered_json& document,
                     std::map<std::string, std::string> origins, std::vector<std::string> notes) {
  SspManifest out;
  out.text = document.dump(2);
  out.origins = std::move(origins);
  out.notes = std::move(notes);
  out.keep = system.unpacked;
  return out;
}

std::optional<fs::path> resolve_uri(const XmlFile& ssd, pugi::xml_node at, const std::string& uri, const fs::path& root,
                                    std::vector<Diagnostic>& problems) {
  auto refuse = [&](const std::string& why) {
    problems.push_back(ssd.problem(at, "\"" + uri + "\": " + why));
    return std::nullopt;
  };
  if (uri.empty()) return refuse("an empty URI names no file");
  const auto colon = uri.find(':'), slash = uri.find('/');
  if (colon != std::string::npos && (slash == std::string::npos || colon < slash))
    return refuse("only relative URIs are supported (resolved against the SSD's folder), not a scheme");
  if (uri.find('#') != std::string::npos)
    return refuse("a URI with a fragment (a variant of another package) is not supported");
  if (uri.find('?') != std::string::npos) return refuse("a URI with a query is not supported");
  const auto decoded = percent_decoded(uri);
  if (!decoded) return refuse("a malformed percent-escape");
  if (fs::path(*decoded).is_absolute()) return refuse("an absolute path; SSP files are named relative to the SSD");
  const fs::path file = (ssd.path().parent_path() / *decoded).lexically_normal();
  std::error_code ec;
  const fs::path real = fs::weakly_canonical(file, ec), real_root = fs::weakly_canonical(root, ec);
  const fs::path inside = real.lexically_relative(real_root);
  if (inside.empty() || *inside.begin() == "..") return refuse("the file would lie outside the package");
  if (!fs::is_regular_file(real, ec)) return refuse("no such file in the package");
  return real;
}

}  // namespace stride::host::ssp
