// URIs of an SSD resolved to files (see files.hpp).
#include "ssp/files.hpp"

#include <cctype>

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

}  // namespace

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
