// What the suites share for reading what a run wrote: text search, whole files, scratch folders.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

namespace stride_test {

inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// The whole file; empty when it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh folder under TMPDIR, removed with everything in it at the end of the test case.
struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    static int n = 0;
    dir = std::filesystem::temp_directory_path() /
          ("stride_scratch_" + std::to_string(::getpid()) + "_" + std::to_string(n++));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

}  // namespace stride_test
