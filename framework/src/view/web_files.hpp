// The files of web/ compiled into the host (generated web_files.cpp, framework/src/view/
// embed_web.cmake): the page, its style and its ES modules in dependency order (each module
// after the ones it imports). Immutable static data; read by view/page.cpp.
#pragma once

#include <string_view>
#include <vector>

namespace stride::host::web {

struct WebFile {
  std::string_view name, text;
};

extern const std::vector<WebFile> files;

}  // namespace stride::host::web
