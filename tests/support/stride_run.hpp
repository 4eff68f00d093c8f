// Running the real `stride` executable from a test and reading what it wrote.
#pragma once

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace stride_test {

namespace fs = std::filesystem;
using json = nlohmann::json;

// results.csv as columns by name.
struct Table {
  std::vector<std::string> names;
  std::map<std::string, std::vector<double>> col;
  std::size_t rows() const { return col.empty() ? 0 : col.begin()->second.size(); }
  const std::vector<double>& operator[](const std::string& n) const {
    auto it = col.find(n);
    if (it == col.end()) throw std::runtime_error("results.csv has no column " + n);
    return it->second;
  }
};

inline Table read_csv(const fs::path& file) {
  Table t;
  std::ifstream in(file);
  std::string line;
  if (!std::getline(in, line)) return t;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) t.names.push_back(c), t.col[c];
  while (std::getline(in, line)) {
    std::stringstream ls(line);
    std::size_t i = 0;
    // A text column (String, Binary, quoted, perhaps over several lines) reads as NaN here;
    // tests of text parse the file themselves.
    for (std::string c; std::getline(ls, c, ',') && i < t.names.size(); ++i) {
      char* end = nullptr;
      const double v = std::strtod(c.c_str(), &end);
      t.col[t.names[i]].push_back(end == c.c_str() ? std::nan("") : v);
    }
  }
  return t;
}

// A number as `--set` takes it, every digit kept.
inline std::string num(double v) {
  char b[64];
  std::snprintf(b, sizeof b, "%.17g", v);
  return b;
}

struct Run {
  int exit_code = -1;
  json summary;
  Table table;
  std::string status() const { return summary.value("status", std::string("none")); }
  std::string message() const { return summary.value("message", std::string()); }
};

// This process's scratch folder, removed when it exits.
inline fs::path scratch() {
  struct Folder {
    fs::path path = fs::temp_directory_path() / ("stride_test_" + std::to_string(::getpid()));
    ~Folder() {
      std::error_code ec;
      fs::remove_all(path, ec);
    }
  };
  static const Folder dir;
  return dir.path;
}

// `stride run MANIFEST --out <scratch>/tag --set ...`; the manifest is relative to the source
// tree. Requires a summary.json.
inline Run run_stride(const std::string& manifest, const std::vector<std::string>& sets, const std::string& tag) {
  const fs::path out = scratch() / tag;
  fs::remove_all(out);
  fs::create_directories(out);
  std::string cmd = std::string("'") + STRIDE_EXE + "' run '" + (fs::path(STRIDE_SOURCE_DIR) / manifest).string() +
                    "' --quiet --out '" + out.string() + "'";
  for (const auto& s : sets) cmd += " --set '" + s + "'";
  cmd += " >'" + (out / "console.txt").string() + "' 2>&1";
  Run r;
  const int st = std::system(cmd.c_str());
  r.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream sf(out / "summary.json");
  if (sf) r.summary = json::parse(sf, nullptr, false);
  if (fs::exists(out / "results.csv")) r.table = read_csv(out / "results.csv");
  INFO("command: " << cmd);
  INFO("summary: " << r.summary.dump().substr(0, 600));
  REQUIRE(r.summary.is_object());
  return r;
}

// A shell command's exit code and what it wrote to stdout and stderr.
struct CommandResult {
  int exit_code = -1;
  std::string output;
};
inline CommandResult run_command(const std::string& cmd) {
  CommandResult c;
  FILE* p = ::popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) c.output += buf;
  const int st = ::pclose(p);
  c.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return c;
}

// Largest |a[ca] − b[cb]| over the record times the two tables share; `common` receives how
// many there were.
inline double largest_difference(const Table& a, const std::string& ca, const Table& b, const std::string& cb,
                             std::size_t* common = nullptr) {
  std::map<long, double> ref;
  const auto& tb = b["time"];
  const auto& vb = b[cb];
  for (std::size_t i = 0; i < tb.size(); ++i) ref[std::lround(tb[i] * 1e6)] = vb[i];
  const auto& ta = a["time"];
  const auto& va = a[ca];
  double e = 0.0;
  std::size_t n = 0;
  for (std::size_t i = 0; i < ta.size(); ++i) {
    auto it = ref.find(std::lround(ta[i] * 1e6));
    if (it == ref.end()) continue;
    e = std::max(e, std::abs(va[i] - it->second));
    ++n;
  }
  if (common) *common = n;
  return e;
}

}  // namespace stride_test
