// The plugin folder index (framework/src/plugin_index.cpp): `stride validate` and `run` load only
// the libraries a manifest names, through a cached index of each folder, and must behave exactly
// as when every library is loaded: same diagnostics (listing every available plugin), same
// warnings about refused libraries, libraries replaced in the folder seen at once, and a
// corrupt or unwritable cache changing nothing but the time.
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "files.hpp"

namespace fs = std::filesystem;

namespace {

using stride_test::contains;
using stride_test::Scratch;
using stride_test::slurp;

const std::string kManifest = STRIDE_SOURCE_DIR "/tests/manifests/ramp_gain.json";

struct Outcome {
  int code = -1;
  std::string out, err;
};

// `env stride args` through the shell; the index cache in the scratch folder unless env sets it.
Outcome stride(const Scratch& s, const std::string& args, const std::string& env) {
  const fs::path out = s.dir / "stdout.txt", err = s.dir / "stderr.txt";
  const std::string cmd = "XDG_CACHE_HOME='" + (s.dir / "cache").string() + "' " + env + " '" + STRIDE_EXE + "' " + args +
                          " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int st = std::system(cmd.c_str());
  Outcome o;
  o.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.out = slurp(out);
  o.err = slurp(err);
  return o;
}

std::size_t index_files(const Scratch& s) {
  std::size_t n = 0;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(s.dir / "cache" / "stride", ec))
    if (e.path().extension() == ".json") ++n;
  return n;
}

std::multiset<std::string> warning_lines(const std::string& err) {
  std::multiset<std::string> w;
  std::stringstream ss(err);
  for (std::string line; std::getline(ss, line);)
    if (contains(line, "warning: plugin library")) w.insert(line);
  return w;
}

}  // namespace

TEST_CASE("plugin index: built on first use, used after; an unknown plugin still lists every plugin") {
  Scratch s;
  const std::string env = std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_RUNTIME_DIR + "'";
  auto o = stride(s, "validate '" + kManifest + "'", env);
  CHECK(o.code == 0);
  CHECK(contains(o.out, "valid (2 subsystems"));
  CHECK(index_files(s) >= 2);  // the build's plugin folder and the test folder
  o = stride(s, "validate '" + kManifest + "'", env);
  CHECK(o.code == 0);
  CHECK(contains(o.out, "valid (2 subsystems"));

  // A misspelt plugin: the diagnostic suggests the right one and lists plugins the manifest
  // does not name (the index found none for the name; everything was loaded).
  o = stride(s, "validate '" + kManifest + "' --set '/subsystems/amp/plugin=\"test_gian\"'", env);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "did you mean \"test_gain\""));
  CHECK(contains(o.err, "two_mass_fast"));
  CHECK(contains(o.err, "test_step_throws"));
  // A plugin of the wrong kind: the index has it, but the report lists the right kind's plugins.
  o = stride(s, "validate '" + kManifest + "' --set '/subsystems/amp/plugin=\"rk4\"'", env);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "which is an integrator"));
  CHECK(contains(o.err, "two_mass_fast"));

  // The run itself, with the index.
  o = stride(s, "run '" + kManifest + "' --out '" + (s.dir / "run").string() + "' --quiet", env);
  CHECK(o.code == 0);
  CHECK(contains(slurp(s.dir / "run" / "summary.json"), "\"completed\""));
}

TEST_CASE("plugin index: a library replaced in the folder is indexed again") {
  Scratch s;
  const fs::path folder = s.dir / "plugins", rt = STRIDE_TEST_RUNTIME_DIR;
  fs::create_directories(folder);
  fs::copy_file(rt / "stride_test_ramp.so", folder / "a.so");
  fs::copy_file(rt / "stride_test_gain.so", folder / "b.so");
  // Only this folder (the build's plugin folder is found beside the executable too).
  const std::string env = "STRIDE_PLUGIN_PATH='" + folder.string() + "'";
  auto o = stride(s, "validate '" + kManifest + "'", env);
  REQUIRE(o.code == 0);
  o = stride(s, "validate '" + kManifest + "'", env);
  REQUIRE(o.code == 0);

  // b.so now provides another plugin (new time and size): the gain is gone.
  fs::remove(folder / "b.so");
  fs::copy_file(rt / "stride_test_step_throws.so", folder / "b.so");
  fs::last_write_time(folder / "b.so", fs::file_time_type::clock::now() + std::chrono::seconds(5));
  o = stride(s, "validate '" + kManifest + "'", env);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "unknown subsystem plugin \"test_gain\""));
  CHECK(contains(o.err, "test_step_throws"));
  // ... and the new one is known: naming it is no longer an unknown plugin.
  o = stride(s, "validate '" + kManifest + "' --set '/subsystems/amp/plugin=\"test_step_throws\"'", env);
  CHECK(!contains(o.err, "unknown subsystem plugin"));
  CHECK(contains(o.err, "test_step_throws"));

  // A library added: found on the next use.
  fs::copy_file(rt / "stride_test_gain.so", folder / "c.so");
  o = stride(s, "validate '" + kManifest + "'", env);
  CHECK(o.code == 0);
}

TEST_CASE("plugin index: refusals are reported as by a full scan; a corrupt or unwritable cache changes nothing") {
  Scratch s;
  const std::string env = std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_RUNTIME_DIR + ":" + STRIDE_TEST_LOAD_DIR + "'";
  const auto full = stride(s, "validate '" + kManifest + "'", env + " STRIDE_PLUGIN_INDEX=0");
  REQUIRE(full.code == 0);
  const auto refused = warning_lines(full.err);
  CHECK(refused.size() >= 5);
  for (int i = 0; i < 2; ++i) {  // building the index, then using it
    CAPTURE(i);
    const auto o = stride(s, "validate '" + kManifest + "'", env);
    CHECK(o.code == 0);
    CHECK(warning_lines(o.err) == refused);
  }

  for (const auto& e : fs::directory_iterator(s.dir / "cache" / "stride")) std::ofstream(e.path()) << "{\"libraries\": [not json";
  auto o = stride(s, "validate '" + kManifest + "'", env);
  CHECK(o.code == 0);
  CHECK(warning_lines(o.err) == refused);
  o = stride(s, "validate '" + kManifest + "'", env);
  CHECK(o.code == 0);

  o = stride(s, "validate '" + kManifest + "'", env + " XDG_CACHE_HOME=/proc/no/such/folder");
  CHECK(o.code == 0);
  CHECK(warning_lines(o.err) == refused);
}
