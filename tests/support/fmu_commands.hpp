// What the FMU suites (tests/unit/fmu.cpp, fmi1.cpp) share: `stride` commands run in a private
// folder that is also their TMPDIR, so the FMUs they unpack can be counted afterwards.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "files.hpp"
#include "stride_run.hpp"

namespace stride_test::fmu_commands {

// A scratch folder (files.hpp) with tmp/ in it, the commands' TMPDIR.
struct Scratch : stride_test::Scratch {
  std::filesystem::path tmp = dir / "tmp";
  Scratch() { std::filesystem::create_directories(tmp); }
  // Unpacked FMU folders left behind in TMPDIR.
  int leftovers() const {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(tmp))
      if (e.path().filename().string().rfind("stride-fmu-", 0) == 0) ++n;
    return n;
  }
};

struct Outcome {
  int code = -1;
  std::string out, err;
  json summary;
  Table table;
  std::string status() const { return summary.value("status", std::string("none")); }
  std::string message() const { return summary.value("message", std::string()); }
};

// `stride <verb> <what> [--out <scratch>/out] --set ...` with TMPDIR in the scratch folder;
// `shell` runs before it in the same shell (a ulimit, variables).
inline Outcome stride(const Scratch& s, const std::string& verb, const std::string& what,
                      const std::vector<std::string>& sets = {}, const std::string& shell = "") {
  std::string cmd = (shell.empty() ? "" : shell + "; ") + "TMPDIR='" + s.tmp.string() + "' '" + STRIDE_EXE + "' " +
                    verb + " '" + what + "'";
  if (verb == "run") cmd += " --quiet --out '" + (s.dir / "out").string() + "'";
  for (const auto& x : sets) cmd += " --set '" + x + "'";
  cmd += " >'" + (s.dir / "stdout.txt").string() + "' 2>'" + (s.dir / "stderr.txt").string() + "'";
  const int st = std::system(cmd.c_str());
  Outcome o;
  o.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.out = slurp(s.dir / "stdout.txt");
  o.err = slurp(s.dir / "stderr.txt");
  if (std::filesystem::exists(s.dir / "out" / "summary.json"))
    o.summary = json::parse(slurp(s.dir / "out" / "summary.json"), nullptr, false);
  if (std::filesystem::exists(s.dir / "out" / "results.csv")) o.table = read_csv(s.dir / "out" / "results.csv");
  INFO("command: " << cmd);
  INFO("stderr: " << o.err.substr(0, 2000));
  return o;
}

// A manifest written into the scratch folder.
inline std::string write_manifest(const Scratch& s, const std::string& name, const json& m) {
  const std::filesystem::path file = s.dir / name;
  std::ofstream(file) << m.dump(2);
  return file.string();
}

}  // namespace stride_test::fmu_commands
