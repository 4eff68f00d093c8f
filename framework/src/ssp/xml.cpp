// Namespace-aware XML reading for SSP files (see xml.hpp).
#include "ssp/xml.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>

namespace stride::host::ssp {

XmlFile::XmlFile(const std::filesystem::path& file, std::string label) : path_(file), label_(std::move(label)) {
  JsonLimits limits;
  limits.max_bytes = std::size_t(64) << 20;
  try {
    text_ = read_text_file(file, limits);
  } catch (const ManifestError& e) {
    std::vector<Diagnostic> d = e.diagnostics();
    for (auto& x : d) x.file = label_;
    throw ManifestError(d);
  }
  const pugi::xml_parse_result r =
      doc_->load_buffer(text_.data(), text_.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!r) {
    std::size_t line = 1;
    for (std::ptrdiff_t i = 0; i < r.offset && static_cast<std::size_t>(i) < text_.size(); ++i)
      if (text_[static_cast<std::size_t>(i)] == '\n') ++line;
    throw ManifestError({{label_, "line " + std::to_string(line), std::string("malformed XML: ") + r.description()}});
  }
  for (pugi::xml_node n = doc_->first_child(); n; n = n.next_sibling())
    if (n.type() == pugi::node_element) {
      root_ = n;
      break;
    }
  if (!root_) throw ManifestError({{label_, "", "the file has no root element"}});
}

std::string XmlFile::where(pugi::xml_node n) const {
  std::size_t line = 1;
  const std::ptrdiff_t offset = n.offset_debug();
  for (std::ptrdiff_t i = 0; i < offset && static_cast<std::size_t>(i) < text_.size(); ++i)
    if (text_[static_cast<std::size_t>(i)] == '\n') ++line;
  std::string path;
  for (pugi::xml_node e = n; e && e.type() == pugi::node_element; e = e.parent()) {
    std::string step = "/" + local(e);
    if (auto name = e.attribute("name")) step += std::string("[") + name.value() + "]";
    path = step + path;
  }
  return "line " + std::to_string(line) + ": " + path;
}

std::string XmlFile::local(pugi::xml_node n) {
  const std::string name = n.name();
  const auto colon = name.find(':');
  return colon == std::string::npos ? name : name.substr(colon + 1);
}

std::string XmlFile::uri(pugi::xml_node n) {
  const std::string name = n.name();
  const auto colon = name.find(':');
  const std::string attr = colon == std::string::npos ? "xmlns" : "xmlns:" + name.substr(0, colon);
  for (pugi::xml_node e = n; e; e = e.parent())
    if (auto a = e.attribute(attr.c_str())) return a.value();
  return "";
}

bool XmlFile::is(pugi::xml_node n, const char* ns, const char* local_name) {
  return n.type() == pugi::node_element && local(n) == local_name && uri(n) == ns;
}

std::vector<pugi::xml_node> XmlFile::children(pugi::xml_node n, const char* ns, const char* local_name) {
  std::vector<pugi::xml_node> out;
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling())
    if (is(c, ns, local_name)) out.push_back(c);
  return out;
}

pugi::xml_node XmlFile::child(pugi::xml_node n, const char* ns, const char* local_name) {
  for (pugi::xml_node c = n.first_child(); c; c = c.next_sibling())
    if (is(c, ns, local_name)) return c;
  return {};
}

std::optional<double> XmlFile::number(pugi::xml_node n, const char* attribute, std::vector<Diagnostic>& out) const {
  auto a = n.attribute(attribute);
  if (!a) return std::nullopt;
  const std::string v = a.value();
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(v.c_str(), &end);
  if (v.empty() || *end != '\0' || errno == ERANGE || !std::isfinite(x)) {
    out.push_back(problem(n, std::string("attribute ") + attribute + "=\"" + v + "\": expected a finite number"));
    return std::nullopt;
  }
  return x;
}

std::optional<bool> XmlFile::boolean(pugi::xml_node n, const char* attribute, std::vector<Diagnostic>& out) const {
  auto a = n.attribute(attribute);
  if (!a) return std::nullopt;
  const std::string v = a.value();
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  out.push_back(problem(n, std::string("attribute ") + attribute + "=\"" + v + "\": expected true or false"));
  return std::nullopt;
}

}  // namespace stride::host::ssp
