// `stride sweep` under faults: a malformed sweep file is refused with the pointer of every
// problem; a run that crashes marks only itself failed (with the signal and the time its table
// reached); a sweep run again into the same folder reports its own runs, never the earlier
// ones; a grid beyond the limit needs --max-runs; Ctrl-C writes the tables of the runs that
// finished. The runs are the ramp-through-gain graph of tests/manifests/fault.json.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "orphans.hpp"
#include "files.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using stride_test::contains;
using stride_test::Scratch;
using stride_test::slurp;

const std::string kDir = STRIDE_SOURCE_DIR "/tests/manifests/";

struct Outcome {
  int code = -1;
  std::string out, err;
};

// Writes `sweep` to <scratch>/sweep.json (output under scratch) and runs `stride sweep` on it.
Outcome sweep(const Scratch& s, json spec, const std::string& args = "--jobs 2") {
  if (!spec.contains("output")) spec["output"] = (s.dir / "out").string();
  const fs::path file = s.dir / "sweep.json";
  std::ofstream(file) << spec.dump(2);
  const std::string cmd = std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_RUNTIME_DIR + "' '" + STRIDE_EXE + "' sweep '" +
                          file.string() + "' " + args + " >'" + (s.dir / "stdout.txt").string() + "' 2>'" +
                          (s.dir / "stderr.txt").string() + "'";
  const int st = std::system(cmd.c_str());
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, slurp(s.dir / "stdout.txt"), slurp(s.dir / "stderr.txt")};
}

// A history's .dat: its blocks (two blank lines apart), each (time, value) rows.
std::vector<std::vector<std::pair<double, double>>> dat_blocks(const fs::path& f) {
  std::vector<std::vector<std::pair<double, double>>> b(1);
  std::ifstream in(f);
  int blank = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) {
      if (++blank == 2 && !b.back().empty()) b.emplace_back();
      continue;
    }
    blank = 0;
    if (line[0] == '#') continue;
    std::stringstream ls(line);
    double t, v;
    ls >> t >> v;
    b.back().push_back({t, v});
  }
  if (b.back().empty()) b.pop_back();
  return b;
}

// sweep.csv rows as column -> value (values are simple: no quoted commas but in "message").
std::vector<std::map<std::string, std::string>> read_sweep_csv(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  std::vector<std::string> header;
  std::getline(in, line);
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) header.push_back(c);
  std::vector<std::map<std::string, std::string>> rows;
  while (std::getline(in, line)) {
    std::map<std::string, std::string> r;
    std::size_t i = 0, pos = 0;
    while (i < header.size() && pos <= line.size()) {
      std::string cell;
      if (line[pos] == '"') {  // quoted: up to the closing quote
        ++pos;
        while (pos < line.size() && !(line[pos] == '"' && (pos + 1 >= line.size() || line[pos + 1] != '"'))) {
          if (line[pos] == '"') ++pos;
          cell += line[pos++];
        }
        pos += 2;
      } else {
        const auto comma = header.size() == i + 1 ? line.size() : line.find(',', pos);
        cell = line.substr(pos, comma - pos);
        pos = comma == std::string::npos ? line.size() + 1 : comma + 1;
      }
      r[header[i++]] = cell;
    }
    rows.push_back(r);
  }
  return rows;
}

// The grid: fail_at in {0.555, 100} x fault in {segfault, throw_int, hang-free "none"}.
json fault_sweep(const std::string& step_axis_name = "fail_at") {
  return {{"format", 1},
          {"manifest", kDir + "fault.json"},
          {"axes",
           {{{"name", step_axis_name},
             {"pointers", {"/subsystems/src/parameters/fail_at"}},
             {"unit", "s"},
             {"values", {0.555, 100}}},
            {{"name", "fault"},
             {"values",
              {{{"label", "segfault"}, {"set", {{"/subsystems/src/parameters/fault", "segfault"}}}},
               {{"label", "throw_int"}, {"set", {{"/subsystems/src/parameters/fault", "throw_int"}}}}}}}}},
          {"step_axis", step_axis_name}};
}

}  // namespace

TEST_CASE("sweep: a malformed sweep file is refused with the pointer of every problem") {
  Scratch s;
  struct Case {
    json patch;  // merged into a valid sweep
    std::string pointer, part;
  };
  const std::vector<Case> cases = {
      {{{"manifest", 42}}, "/manifest", "expected a string"},
      {{{"step_axis", 3}}, "/step_axis", "expected a string"},
      {{{"set", 5}}, "/set", "expected {\"/json/pointer\": value"},
      {{{"set", {{"coupling/end", 1}}}}, "/set/coupling~1end", "expected a JSON pointer starting with '/'"},
      {{{"stable_error", "small"}}, "/stable_error", "expected a positive error bound"},
      {{{"output", ""}}, "/output", "expected a folder name"},
      {{{"usable_error", 0.01}}, "/usable_error", "an accuracy needs a reference"},
      {{{"usable_error", -1}}, "/usable_error", "expected a positive error bound"},
      {{{"axes", json::array()}}, "/axes", "expected a non-empty array"},
      {{{"axes", {{{"name", "x"}, {"values", {1, 2}}}}}}, "/axes/0/pointers", "need \"pointers\""},
      {{{"axes", {{{"name", 7}, {"pointers", {"/a"}}, {"values", {1}}}}}}, "/axes/0/name", "expected a string"},
      {{{"axes", {{{"name", "x"}, {"pointers", {"/a"}}, {"values", {1}}, {"valeus", 1}}}}}, "/axes/0/valeus",
       "did you mean \"values\""},
      {{{"axes", {{{"name", "x"}, {"pointers", {"/a"}}, {"values", {1, 1}}}}}}, "/axes/0/values/1", "label \"1\" twice"},
      {{{"axes", {{{"name", "x"}, {"values", {{{"label", "a"}, {"set", 3}}}}}}}}, "/axes/0/values/0/set",
       "expected {\"/json/pointer\": value"},
      {{{"reference", {{"manifest", "r.json"}, {"columns", {{"a", 1}}}}}}, "/reference/columns/a", "expected a column name"},
      {{{"sweep_axis", "fail_at"}}, "/sweep_axis", "unknown key"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.pointer);
    json spec = fault_sweep();
    spec.merge_patch(c.patch);
    auto o = sweep(s, spec);
    CHECK(o.code == 2);
    INFO(o.err);
    CHECK(contains(o.err, "sweep.json: " + c.pointer + ": "));
    CHECK(contains(o.err, c.part));
    CHECK_FALSE(fs::exists(s.dir / "out" / "run_0000"));
  }
  // Not JSON, too deep, duplicate keys.
  std::ofstream(s.dir / "bad.json") << "{\"manifest\": \"a\", \"manifest\": \"b\", \"axes\": []}";
  const std::string cmd = std::string("'") + STRIDE_EXE + "' sweep '" + (s.dir / "bad.json").string() + "' 2>'" +
                          (s.dir / "e.txt").string() + "'";
  CHECK(WEXITSTATUS(std::system(cmd.c_str())) == 2);
  CHECK(contains(slurp(s.dir / "e.txt"), "bad.json: /manifest: duplicate key"));
}

TEST_CASE("sweep: a crashing run is failed with its signal and time; the others complete") {
  Scratch s;
  auto o = sweep(s, fault_sweep());
  INFO(o.err);
  REQUIRE(o.code == 0);
  const auto rows = read_sweep_csv(s.dir / "out" / "sweep.csv");
  REQUIRE(rows.size() == 4);
  for (const auto& r : rows) {
    CAPTURE(r.at("run"));
    if (r.at("fail_at") == "100") {
      CHECK(r.at("status") == "completed");
      CHECK(std::stod(r.at("end_time_reached")) == doctest::Approx(2.0));
    } else {
      CHECK(r.at("status") == "failed");
      CHECK(std::stod(r.at("end_time_reached")) == doctest::Approx(0.5));
      CHECK(contains(r.at("message"), r.at("fault") == "segfault" ? "killed by SIGSEGV" : "not a std::exception"));
      CHECK(contains(r.at("message"), "\"src\""));
    }
  }
  // The crashed run's own folder: a summary written for it, and the rows before the crash.
  const json sum = json::parse(slurp(s.dir / "out" / "run_0000" / "summary.json"));
  CHECK(sum.at("status") == "failed");
  CHECK(sum.at("signal") == "SIGSEGV");
  CHECK(sum.at("rows") == 6);
  CHECK(contains(slurp(s.dir / "out" / "stability.md"), "| segfault | – | 0.555 |"));
}

// The last value of column `col` in a run's results.csv.
double last_value(const fs::path& csv, const std::string& col) {
  std::ifstream in(csv);
  std::string line, last;
  std::getline(in, line);
  std::stringstream hs(line);
  std::size_t k = 0, at = std::string::npos;
  for (std::string c; std::getline(hs, c, ','); ++k)
    if (c == col) at = k;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  std::stringstream rs(last);
  std::string cell;
  for (std::size_t i = 0; i <= at && std::getline(rs, cell, ','); ++i) {
  }
  return at == std::string::npos || cell.empty() ? std::nan("") : std::stod(cell);
}

TEST_CASE("sweep: points share long-lived workers; a plugin that keeps state between runs gets a process per run") {
  Scratch s;
  json spec = {{"format", 1},
               {"manifest", kDir + "run_counter.json"},
               {"axes",
                {{{"name", "slope"}, {"pointers", {"/subsystems/src/parameters/slope"}}, {"values", {1, 2, 3}}},
                 {{"name", "plugin"},
                  {"values",
                   {{{"label", "declared"}, {"set", {{"/subsystems/src/plugin", "test_run_counter"}}}},
                    {{"label", "undeclared"}, {"set", {{"/subsystems/src/plugin", "test_run_counter_undeclared"}}}}}}}}},
               {"step_axis", "slope"}};
  const std::string warning = "plugin \"test_run_counter_undeclared\" (";
  for (const char* jobs : {"--jobs 1", "--jobs 2", "--jobs 2 --process-per-run"}) {
    CAPTURE(jobs);
    const auto o = sweep(s, spec, jobs);
    INFO(o.err);
    REQUIRE(o.code == 0);
    // Every run reads the state of a fresh process: test_run_counter declares process_per_run;
    // test_run_counter_undeclared's second run in a worker changes a global the first one set,
    // which is found, reported and the run repeated in a fresh process (as every later one).
    for (int i = 0; i < 6; ++i) {
      char name[16];
      std::snprintf(name, sizeof name, "run_%04d", i);
      CAPTURE(i);
      CHECK(last_value(s.dir / "out" / name / "results.csv", "src.y") == 1);
    }
    for (const auto& r : read_sweep_csv(s.dir / "out" / "sweep.csv")) CHECK(r.at("status") == "completed");
    if (contains(jobs, "--process-per-run")) {
      CHECK_FALSE(contains(o.err, "global data"));  // no worker ran twice
    } else {
      CHECK(contains(o.err, warning + "/"));  // a worker did run twice, and it was found
      CHECK(contains(o.err, "keeps state between runs"));
      CHECK_FALSE(contains(o.err, "plugin \"test_run_counter\""));
    }
  }
  // The declaration is shown by `plugins describe`.
  for (const char* name : {"test_run_counter", "test_run_counter_undeclared"}) {
    const std::string cmd = std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_RUNTIME_DIR + "' '" + STRIDE_EXE +
                            "' plugins describe " + name + " --json >'" + (s.dir / "describe.json").string() + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    CHECK(json::parse(slurp(s.dir / "describe.json")).at("process_per_run") == (std::string(name) == "test_run_counter"));
  }
  // Plugins without globals (the fault grid's test_fault and test_gain) share workers silently.
  const auto o = sweep(s, fault_sweep(), "--jobs 1");
  CHECK(o.code == 0);
  CHECK_FALSE(contains(o.err, "global data"));
}

TEST_CASE("sweep: a second sweep into the same folder reports its own runs") {
  Scratch s;
  json all_complete = fault_sweep();
  all_complete["axes"][0]["values"] = {100, 200};
  REQUIRE(sweep(s, all_complete).code == 0);
  for (const auto& r : read_sweep_csv(s.dir / "out" / "sweep.csv")) CHECK(r.at("status") == "completed");
  // Same folder, same run names; now half of them crash.
  REQUIRE(sweep(s, fault_sweep()).code == 0);
  int failed = 0;
  for (const auto& r : read_sweep_csv(s.dir / "out" / "sweep.csv")) failed += r.at("status") == "failed";
  CHECK(failed == 2);
  const json sum = json::parse(slurp(s.dir / "out" / "run_0000" / "summary.json"));
  CHECK(sum.at("status") == "failed");
}

TEST_CASE("sweep: a grid beyond the limit needs --max-runs") {
  Scratch s;
  auto o = sweep(s, fault_sweep(), "--max-runs 3");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "the grid has 4 runs, more than the limit of 3; pass --max-runs 4"));
  CHECK_FALSE(fs::exists(s.dir / "out" / "run_0000"));
  json huge = fault_sweep();
  json many = json::array();
  for (int i = 0; i < 1000; ++i) many.push_back(i + 1);
  huge["axes"] = {{{"name", "a"}, {"pointers", {"/title"}}, {"values", many}},
                  {{"name", "b"}, {"pointers", {"/description"}}, {"values", many}}};
  huge["step_axis"] = "a";
  o = sweep(s, huge);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "the grid has 1e+06 runs"));
  CHECK(sweep(s, fault_sweep(), "--max-runs 4").code == 0);
}

// `stride sweep --jobs 2` of three long runs (only a signal ends them), started in the background
// in its own process group; returns once both jobs write rows.
pid_t start_long_sweep(const Scratch& s) {
  json spec = fault_sweep();
  spec["manifest"] = kDir + "long_run.json";
  spec["axes"] = {{{"name", "h"}, {"pointers", {"/subsystems/src/step"}}, {"values", {0.0001, 0.0002, 0.0005}}}};
  spec["step_axis"] = "h";
  spec["output"] = (s.dir / "out").string();
  std::ofstream(s.dir / "sweep.json") << spec.dump();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    setenv("STRIDE_PLUGIN_PATH", STRIDE_TEST_RUNTIME_DIR, 1);
    const std::string err = (s.dir / "stderr.txt").string();
    if (!std::freopen(err.c_str(), "w", stderr) || !std::freopen("/dev/null", "w", stdout)) _exit(126);
    execl(STRIDE_EXE, "stride", "sweep", (s.dir / "sweep.json").c_str(), "--jobs", "2", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Both jobs are running when both results tables have rows (generous: under the sanitizers on a
  // loaded machine a run takes seconds to write its first rows).
  const auto has_rows = [&](const char* run) {
    std::error_code ec;
    const auto size = fs::file_size(s.dir / "out" / run / "results.csv", ec);
    return !ec && size > 1000;
  };
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(120) && !(has_rows("run_0000") && has_rows("run_0001")))
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  if (!(has_rows("run_0000") && has_rows("run_0001"))) {
    kill(-pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  REQUIRE_MESSAGE(has_rows("run_0000"), "the first run wrote no rows in 120 s");
  REQUIRE_MESSAGE(has_rows("run_0001"), "the second run wrote no rows in 120 s");
  return pid;
}

TEST_CASE("sweep: Ctrl-C stops the runs under way and writes the tables of those that finished") {
  Scratch s;
  const pid_t pid = start_long_sweep(s);
  kill(pid, SIGINT);
  int st = 0;
  REQUIRE(waitpid(pid, &st, 0) == pid);
  CHECK(WEXITSTATUS(st) == 1);
  const auto rows = read_sweep_csv(s.dir / "out" / "sweep.csv");
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].at("status") == "interrupted");
  CHECK(rows[1].at("status") == "interrupted");
  CHECK(rows[2].at("status") == "not run");
  CHECK(std::stod(rows[0].at("end_time_reached")) > 0.0);
  const std::string md = slurp(s.dir / "out" / "stability.md");
  CHECK(contains(md, "incomplete"));
  CHECK(contains(md, "The sweep was interrupted: 2 of 3 runs finished."));
}

TEST_CASE("sweep: kill -9 of stride sweep ends its workers too, each run interrupted with whole rows") {
  // Before, the workers ran their points on as orphans, to their end time.
  stride_test::OrphanReaper reaper;
  Scratch s;
  const pid_t pid = start_long_sweep(s);
  const std::vector<pid_t> workers = stride_test::children_of(pid);
  CHECK(workers.size() == 2);
  kill(pid, SIGKILL);
  int st = 0;
  REQUIRE(waitpid(pid, &st, 0) == pid);
  for (pid_t w : workers) CHECK(stride_test::OrphanReaper::wait_end(w, 10).has_value());
  kill(-pid, SIGKILL);  // whatever is left of the group (nothing, when the workers ended)
  for (const char* run : {"run_0000", "run_0001"}) {
    CAPTURE(run);
    const json sum = json::parse(slurp(s.dir / "out" / run / "summary.json"));
    CHECK(sum.at("status") == "interrupted");
    CHECK(contains(sum.at("message").get<std::string>(), "SIGTERM"));
    CHECK(contains(sum.at("message").get<std::string>(), "supervised the run, pid " + std::to_string(pid) + ", ended"));
    const std::string csv = slurp(s.dir / "out" / run / "results.csv");
    CHECK((!csv.empty() && csv.back() == '\n'));
  }
  CHECK_FALSE(fs::exists(s.dir / "out" / "run_0002" / "summary.json"));
}

TEST_CASE("sweep: the reference runs beside the points; a reference that fails ends the sweep with an error") {
  // ramp_gain.json is the fault graph without faults: amp.y = 3·2·t. The runs with fail_at = 100
  // complete and match it exactly; those failing at 0.555 s stop there.
  for (const char* jobs : {"--jobs 1", "--jobs 2", "--jobs 2 --process-per-run"}) {
    CAPTURE(jobs);
    Scratch s;
    json spec = fault_sweep();
    spec["reference"] = {{"manifest", kDir + "ramp_gain.json"}, {"columns", {{"amp.y", "amp.y"}}}};
    auto o = sweep(s, spec, jobs);
    CHECK(o.code == 0);
    CHECK(contains(o.err, "reference: completed"));
    CHECK(contains(o.err, "[4/4]"));
    CHECK(!contains(o.err, "[5/4]"));
    const auto rows = read_sweep_csv(s.dir / "out" / "sweep.csv");
    REQUIRE(rows.size() == 4);
    for (const auto& r : rows) {
      CAPTURE(r.at("fail_at"));
      if (r.at("fail_at") == "100") {
        CHECK(r.at("status") == "completed");
        CHECK(std::stod(r.at("error")) == 0.0);
      } else {
        CHECK(r.at("status") == "failed");
      }
    }

    Scratch f;
    spec["reference"]["manifest"] = kDir + "step_failure.json";
    o = sweep(f, spec, jobs);
    CHECK(o.code == 1);
    CHECK(contains(o.err, "the reference run did not complete (diverged)"));
    CHECK(!fs::exists(f.dir / "out" / "sweep.csv"));
  }
}

TEST_CASE("sweep: with an accuracy, a stable run counts as usable only within it") {
  // amp.y = k·2·t against the reference k = 3: at t = 2 s the error is 4 |k − 3|, so with
  // usable_error = 0.01 every run is stable and only k <= 3.001 (error 0.004) is usable.
  Scratch s;
  const json spec = {{"format", 1},
                     {"manifest", kDir + "ramp_gain.json"},
                     {"reference", {{"manifest", kDir + "ramp_gain.json"}, {"columns", {{"amp.y", "amp.y"}}}}},
                     {"axes", {{{"name", "k"}, {"pointers", {"/subsystems/amp/parameters/k"}}, {"unit", "1"}, {"values", {3.0, 3.001, 3.01, 3.1}}}}},
                     {"step_axis", "k"},
                     {"usable_error", 0.01}};
  auto o = sweep(s, spec);
  CHECK(o.code == 0);
  const std::string md = slurp(s.dir / "out" / "stability.md");
  INFO(md);
  CHECK(contains(md, "largest stable k | first unstable k | error at largest stable | largest usable k (error <= 0.01) |"));
  CHECK(contains(md, "| 3.1 | none up to 3.1 | 0.4"));
  CHECK(contains(md, "| 3.001 |"));
}

TEST_CASE("sweep: errors in another unit, and time histories of runs and of their differences from the reference") {
  // amp.y = k 2 t against the reference k = 3: the difference is 2 (k - 3) t, largest at 2 s.
  Scratch s;
  json spec = {{"format", 1},
               {"manifest", kDir + "ramp_gain.json"},
               {"reference", {{"manifest", kDir + "ramp_gain.json"}, {"columns", {{"amp.y", "amp.y"}}}, {"error_scale", 100.0}, {"error_unit", "cm"}}},
               {"axes", {{{"name", "k"}, {"pointers", {"/subsystems/amp/parameters/k"}}, {"unit", "1"}, {"values", {3.5, 4.0}}}}},
               {"histories", {{{"file", "y.png"}, {"column", "amp.y"}, {"runs", {"reference", {{"k", 4.0}}}}},
                              {{"file", "dy.png"}, {"column", "amp.y"}, {"scale", 10.0}, {"difference", true}, {"runs", {{{"k", 3.5}}, {{"k", 4.0}}}}}}}};
  auto o = sweep(s, spec);
  CHECK(o.code == 0);
  const auto rows = read_sweep_csv(s.dir / "out" / "sweep.csv");
  REQUIRE(rows.size() == 2);
  CHECK(std::stod(rows[0].at("error")) == doctest::Approx(100.0 * 2.0 * 0.5 * 2.0));
  CHECK(std::stod(rows[1].at("error")) == doctest::Approx(100.0 * 2.0 * 1.0 * 2.0));
  CHECK(contains(slurp(s.dir / "out" / "stability.md"), "error at largest stable (cm)"));
  // The .dat files: one block per curve, time and value.
  const auto y = dat_blocks(s.dir / "out" / "y.dat"), dy = dat_blocks(s.dir / "out" / "dy.dat");
  REQUIRE(y.size() == 2);
  REQUIRE(dy.size() == 2);
  CHECK(y[0].size() == 21);
  for (const auto& [t, v] : y[0]) CHECK(v == doctest::Approx(3.0 * 2.0 * t));  // the reference
  for (const auto& [t, v] : y[1]) CHECK(v == doctest::Approx(4.0 * 2.0 * t));
  for (const auto& [t, v] : dy[0]) CHECK(v == doctest::Approx(10.0 * 2.0 * 0.5 * t));
  for (const auto& [t, v] : dy[1]) CHECK(v == doctest::Approx(10.0 * 2.0 * 1.0 * t));

  // Malformed histories: every problem with its pointer.
  Scratch b;
  spec["histories"] = {{{"file", "a/b.png"}, {"column", "amp.y"}, {"runs", {{{"k", 5.0}}}}},
                       {{"file", "c.png"}, {"column", "amp.y"}, {"difference", true}, {"runs", {"reference", {{"kk", 4.0}}, {{"k", 4.0}}}}},
                       {{"file", "d.png"}, {"column", "amp.y"}, {"runs", {{{"k", 4.0}}}}, {"scale", 0}}};
  o = sweep(b, spec);
  CHECK(o.code == 2);
  INFO(o.err);
  CHECK(contains(o.err, "/histories/0/file: expected a file name of its own ending in .png"));
  CHECK(contains(o.err, "/histories/0/runs/0/k: axis \"k\" has no value \"5.0\""));
  CHECK(contains(o.err, "/histories/1/runs/0: the reference less itself is zero"));
  CHECK(contains(o.err, "/histories/1/runs/1/kk: no axis is named \"kk\""));
  CHECK(contains(o.err, "/histories/1/runs/1: name a value of axis \"k\" (it has 2)"));
  CHECK(contains(o.err, "/histories/2/scale"));
}

TEST_CASE("sweep: histories honour reference.columns, plot differences and diverged runs, label units; empty is an error") {
  // Runs amp.y = k 2 t (m) against the reference column src.y = 2 t (reference.columns maps
  // amp.y to it), so the difference is (k - 1) 2 t. Every run stops where amp.y passes 6 m
  // (monitor bounds): k = 4 at t = 0.75 s, k = 3.5 at 6/7 s; the reference runs unbounded.
  Scratch s;
  json spec = {{"format", 1},
               {"manifest", kDir + "ramp_gain.json"},
               {"reference", {{"manifest", kDir + "ramp_gain.json"}, {"columns", {{"amp.y", "src.y"}}}}},
               {"set", {{"/monitor", {{"bounds", {{"amp.y", {-100, 6}}}}}}}},
               {"axes", {{{"name", "k"}, {"pointers", {"/subsystems/amp/parameters/k"}}, {"unit", "1"},
                          {"values", {3.5, 4.0}}}}},
               {"histories", {{{"file", "y.png"}, {"column", "amp.y"}, {"runs", {"reference", {{"k", 4.0}}}}},
                              {{"file", "dy.png"}, {"column", "amp.y"}, {"difference", true},
                               {"runs", {{{"k", 3.5}}, {{"k", 4.0}}}}}}}};
  auto o = sweep(s, spec);
  INFO(o.err);
  CHECK(o.code == 0);
  // y.dat: the reference's src.y (2 t to 2 s), the k = 4 run's amp.y (8 t) up to where it
  // diverged, then that run's last value alone (its mark).
  const auto y = dat_blocks(s.dir / "out" / "y.dat"), dy = dat_blocks(s.dir / "out" / "dy.dat");
  REQUIRE(y.size() == 3);
  CHECK(y[0].size() == 21);
  for (const auto& [t, v] : y[0]) CHECK(v == doctest::Approx(2.0 * t));
  REQUIRE(!y[1].empty());
  CHECK(y[1].back().first < 0.8 + 1e-9);
  CHECK(y[1].back().first > 0.6);
  for (const auto& [t, v] : y[1]) CHECK(v == doctest::Approx(8.0 * t));
  REQUIRE(y[2].size() == 1);
  CHECK(y[2][0] == y[1].back());
  // dy.dat: (k - 1) 2 t for both runs up to where each ended, then both marks.
  REQUIRE(dy.size() == 4);
  for (const auto& [t, v] : dy[0]) CHECK(v == doctest::Approx(2.5 * 2.0 * t));
  for (const auto& [t, v] : dy[1]) CHECK(v == doctest::Approx(3.0 * 2.0 * t));
  CHECK(dy[0].size() > dy[1].size());
  // The plots: titles mark the diverged runs, axes carry names and units, PNGs are drawn.
  const std::string gy = slurp(s.dir / "out" / "y.gp"), gdy = slurp(s.dir / "out" / "dy.gp");
  CHECK(contains(gy, "set xlabel 'time (s)'"));
  CHECK(contains(gy, "set ylabel 'amp.y (m)'"));
  CHECK(contains(gy, "'k = 4.0 (diverged at t = "));
  CHECK(contains(gy, "with points pointtype 7 pointsize 1.5 title 'k = 4.0 (diverged at t = "));
  CHECK(contains(gdy, "set ylabel 'amp.y - reference (m)'"));
  CHECK(contains(slurp(s.dir / "out" / "plot.gp"), "set xlabel 'k (1)'"));
  CHECK(contains(slurp(s.dir / "out" / "plot.gp"), "set ylabel 'largest |error| against the reference (m)'"));
  for (const char* png : {"y.png", "dy.png"}) {
    CAPTURE(png);
    REQUIRE(fs::exists(s.dir / "out" / png));
    CHECK(fs::file_size(s.dir / "out" / png) > 1000);
  }
  // No run is stable, so error.png has nothing to draw: no PNG rather than an empty one.
  CHECK(!fs::exists(s.dir / "out" / "error.png"));
  CHECK(contains(o.err, "warning: gnuplot drew nothing for"));
  // The compared columns stay with the folder (stride view draws src.y with amp.y), and a sweep
  // without a reference into the same folder leaves none behind.
  CHECK(json::parse(slurp(s.dir / "out" / "reference_columns.json")) == json({{"amp.y", "src.y"}}));
  json alone = spec;
  alone.erase("reference");
  alone.erase("histories");
  o = sweep(s, alone);
  INFO(o.err);
  CHECK(o.code == 0);
  CHECK(fs::exists(s.dir / "out" / "sweep.csv"));
  CHECK(!fs::exists(s.dir / "out" / "reference_columns.json"));

  // A column the runs do not record: refused before anything runs, with the history's pointer.
  Scratch b;
  spec["histories"][0]["column"] = "amp.x";
  o = sweep(b, spec);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/histories/0/column: history \"y.png\" plots column \"amp.x\", which run 0"));
  CHECK(contains(o.err, "does not record as a number; its columns: src.y, amp.y"));
  // A reference column (reference.columns) the reference does not record: refused likewise.
  Scratch c;
  spec["histories"][0]["column"] = "amp.y";
  spec["reference"]["columns"] = {{"amp.y", "src.z"}};
  o = sweep(c, spec);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/histories/0/column: history \"y.png\" plots column \"src.z\" (reference.columns maps "
                        "\"amp.y\" to it), which the reference"));
  // Runs recorded at other times than the reference (they start at 0.05 s): a difference has
  // no common time, its curve is empty, an error naming the history, the curve and the columns,
  // and no PNG for it.
  Scratch d;
  spec["reference"]["columns"] = {{"amp.y", "src.y"}};
  spec["set"] = {{"/coupling/start", 0.05}};
  o = sweep(d, spec);
  CHECK(o.code == 1);
  CHECK(contains(o.err, "error: history \"dy.png\" (/histories/1): the curve \"k = 3.5\" has no values of column "
                        "\"amp.y\" less the reference's \"src.y\" in "));
  CHECK(!fs::exists(d.dir / "out" / "dy.png"));
}

#ifdef STRIDE_TEST_MPIRUN
TEST_CASE("sweep under mpirun: the points spread over ranks give the tables of a sweep on one machine") {
  // fault_sweep with the reference: two runs crash (SIGSEGV, a thrown int) inside a worker's
  // forked process; the worker goes on, the others complete.
  json spec = fault_sweep();
  spec["reference"] = {{"manifest", kDir + "ramp_gain.json"}, {"columns", {{"amp.y", "amp.y"}}}};
  Scratch local, spread;
  const Outcome a = sweep(local, spec, "--jobs 2");
  REQUIRE(a.code == 0);
  // Root in a container: Open MPI refuses root unless told.
  spec["output"] = (spread.dir / "out").string();
  const fs::path file = spread.dir / "sweep.json";
  std::ofstream(file) << spec.dump(2);
  const std::string cmd = std::string("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 STRIDE_PLUGIN_PATH='") +
                          STRIDE_TEST_RUNTIME_DIR + "' '" + STRIDE_TEST_MPIRUN + "' --oversubscribe -n 3 '" + STRIDE_EXE +
                          "' sweep '" + file.string() + "' >'" + (spread.dir / "stdout.txt").string() + "' 2>'" +
                          (spread.dir / "stderr.txt").string() + "'";
  const int st = std::system(cmd.c_str());
  const std::string err = slurp(spread.dir / "stderr.txt");
  INFO(err);
  REQUIRE(WIFEXITED(st));
  REQUIRE(WEXITSTATUS(st) == 0);
  CHECK(contains(err, "sweep: MPI, 2 workers"));
  CHECK(contains(err, "reference: completed"));
  CHECK(contains(err, "[4/4]"));
  auto rows_a = read_sweep_csv(local.dir / "out" / "sweep.csv");
  auto rows_b = read_sweep_csv(spread.dir / "out" / "sweep.csv");
  REQUIRE(rows_a.size() == 4);
  REQUIRE(rows_b.size() == rows_a.size());
  for (std::size_t i = 0; i < rows_a.size(); ++i) {
    rows_a[i].erase("wall_time_s");
    rows_b[i].erase("wall_time_s");
    for (auto* r : {&rows_a[i], &rows_b[i]})  // the message names the run's own folder
      if (r->count("message")) (*r)["message"] = (*r)["message"].substr(0, (*r)["message"].find(" (results"));
    CHECK(rows_a[i] == rows_b[i]);
  }
  CHECK(slurp(local.dir / "out" / "stability.md") == slurp(spread.dir / "out" / "stability.md"));
  CHECK(slurp(local.dir / "stdout.txt") == slurp(spread.dir / "stdout.txt"));
  const json crashed = json::parse(slurp(spread.dir / "out" / "run_0000" / "summary.json"));
  CHECK(crashed.at("signal") == "SIGSEGV");
}
#endif

TEST_CASE("sweep: an axis whose pointers change no manifest is refused at the axis before any run") {
  // Issue 33: the typo /variables/hM for h_M ran every point at the manifest's h_M = 0.01 under
  // three labels. The axis changes nothing; the variable it sets is read by no "$hM".
  Scratch s;
  json spec = {{"format", 1},
               {"manifest", std::string(STRIDE_SOURCE_DIR) + "/manifests/crane1_zoh.json"},
               {"axes", {{{"name", "h_M"}, {"pointers", {"/variables/hM"}}, {"values", {0.002, 0.005, 0.01}}}}},
               {"step_axis", "h_M"}};
  Outcome o = sweep(s, spec);
  INFO(o.err);
  CHECK(o.code == 2);
  CHECK(o.err.find("sweep.json: /axes/0: axis \"h_M\" changes nothing: its pointers (/variables/hM) give the same "
                   "manifest for every value in every manifest of the sweep") != std::string::npos);
  CHECK_FALSE(fs::exists(s.dir / "out" / "run_0000"));
}
