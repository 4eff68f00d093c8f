// Namespace-aware reading of SSP's XML files with pugixml (which sees only prefixed names):
// elements are matched by namespace URI and local name, whatever prefix a file binds; every
// element is named in messages by its line and path. Problems are collected, not thrown, so
// that one reading reports all of them. Internal to the host.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pugixml.hpp>

#include "stride/host/input/json_input.hpp"

namespace stride::host::ssp {

class XmlFile {
 public:
  // Parses `file` (at most 64 MiB); a file that cannot be read or parsed throws ManifestError
  // naming `label` (the file as the user knows it: "system.ssp:SystemStructure.ssd").
  XmlFile(const std::filesystem::path& file, std::string label);

  pugi::xml_node root() const { return root_; }
  const std::string& label() const { return label_; }
  const std::filesystem::path& path() const { return path_; }

  // "line 12: /SystemStructureDescription/System[root]/Elements/Component[c1]".
  std::string where(pugi::xml_node n) const;
  Diagnostic problem(pugi::xml_node n, std::string message) const { return {label_, where(n), std::move(message)}; }

  // The namespace URI of an element (its prefix resolved through the xmlns declarations of it
  // and its ancestors) and its local name.
  static std::string uri(pugi::xml_node n);
  static std::string local(pugi::xml_node n);
  static bool is(pugi::xml_node n, const char* ns, const char* local_name);
  // The element children of `n` in namespace `ns` named `local_name`, in order.
  static std::vector<pugi::xml_node> children(pugi::xml_node n, const char* ns, const char* local_name);
  static pugi::xml_node child(pugi::xml_node n, const char* ns, const char* local_name);

  // Attribute values: nullopt when absent or malformed (then a problem is added to `out`).
  std::optional<double> number(pugi::xml_node n, const char* attribute, std::vector<Diagnostic>& out) const;
  std::optional<bool> boolean(pugi::xml_node n, const char* attribute, std::vector<Diagnostic>& out) const;

 private:
  std::shared_ptr<pugi::xml_document> doc_ = std::make_shared<pugi::xml_document>();
  std::string text_;
  std::filesystem::path path_;
  std::string label_;
  pugi::xml_node root_;
};

}  // namespace stride::host::ssp
