// The `stride` executable end to end: exit codes (0 success, 1 diverged/failed/interrupted,
// 2 bad input), results.csv and summary.json for good and failing runs, --set, `validate`,
// `plugins`, and SIGINT. The physics checked is the test graph of tests/manifests/ramp_gain.json:
// amp.y = k·slope·t with k = 3 and slope = 2.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
const std::string kRuntimeEnv = std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_RUNTIME_DIR + "' ";

struct Outcome {
  int code = -1;
  std::string out, err;
};

// Runs `env stride args` through the shell, capturing stdout and stderr.
Outcome stride(const Scratch& s, const std::string& args, const std::string& env = kRuntimeEnv) {
  const fs::path out = s.dir / "stdout.txt", err = s.dir / "stderr.txt";
  const std::string cmd = env + "'" + STRIDE_EXE + "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int st = std::system(cmd.c_str());
  Outcome o;
  o.code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  o.out = slurp(out);
  o.err = slurp(err);
  return o;
}

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<double>> rows;
  bool complete = true;  // every row has one number per column
};

Table read_csv(const fs::path& p) {
  Table t;
  std::ifstream in(p);
  std::string line;
  if (!std::getline(in, line)) return t;
  std::stringstream hs(line);
  for (std::string c; std::getline(hs, c, ',');) t.header.push_back(c);
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) {
      char* end = nullptr;
      const double v = std::strtod(c.c_str(), &end);
      if (end == c.c_str() || *end != '\0') t.complete = false;
      row.push_back(v);
    }
    if (row.size() != t.header.size()) t.complete = false;
    t.rows.push_back(std::move(row));
  }
  return t;
}

json read_json(const fs::path& p) { return json::parse(slurp(p)); }

// Rows every `dt` of the ramp through the gain: src.y = 2 t, amp.y = 6 t.
void check_ramp_gain_rows_every(const Table& t, double dt) {
  REQUIRE(t.header == std::vector<std::string>{"time", "src.y", "amp.y"});
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    CAPTURE(i);
    CHECK(r[0] == doctest::Approx(dt * static_cast<double>(i)).epsilon(1e-9));
    CHECK(r[1] == doctest::Approx(2.0 * r[0]).epsilon(1e-9));
    CHECK(r[2] == doctest::Approx(6.0 * r[0]).epsilon(1e-9));
  }
}

// Every row satisfies amp.y = k·slope·t and src.y = slope·t (columns time, src.y, amp.y).
void check_ramp_gain_rows(const Table& t) {
  REQUIRE(t.header == std::vector<std::string>{"time", "src.y", "amp.y"});
  CHECK(t.complete);
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const auto& r = t.rows[i];
    CAPTURE(i);
    CHECK(r[0] == doctest::Approx(0.1 * static_cast<double>(i)).epsilon(1e-9));
    CHECK(r[1] == doctest::Approx(2.0 * r[0]).epsilon(1e-9));
    CHECK(r[2] == doctest::Approx(6.0 * r[0]).epsilon(1e-9));
  }
}

}  // namespace

TEST_CASE("cli: a connection's transformation gives the destination f x + o of the source's value") {
  Scratch s;
  const fs::path out = s.dir / "transformed";
  auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() +
                         "' --quiet --set '/connections/0/transformation={\"factor\": 2, \"offset\": 1}'");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const Table t = read_csv(out / "results.csv");
  REQUIRE(t.rows.size() == 21);
  for (const auto& r : t.rows) CHECK(r[2] == doctest::Approx(3.0 * (2.0 * r[1] + 1.0)).epsilon(1e-12));
  o = stride(s, "validate '" + kDir + "ramp_gain.json' --set '/connections/0/transformation={\"factor\": 2}'");
  CHECK(o.code == 0);
  CHECK(contains(o.out, "src.y -> amp.u: transformation x 2 + 0"));
  o = stride(s, "validate '" + kDir + "ramp_gain.json' --set '/connections/0/transformation={\"gain\": 2}' --set "
                "/connections/0/unit_conversion=1");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/connections/0/transformation"));
  CHECK(contains(o.err, "/connections/0/unit_conversion: expected true or false"));
}

TEST_CASE("cli: help says every command's synopsis, options, two examples and pages that exist") {
  Scratch s;
  auto o = stride(s, "help");
  CHECK(o.code == 0);
  for (const char* c : {"run", "validate", "sweep", "plugins", "export", "help"}) CHECK(contains(o.out, c));
  CHECK(contains(o.out, "stride COMMAND --help"));
  // Each command: CLI11's usage line and options, then the examples and the pages (help.cpp),
  // the same through `stride help COMMAND` and `stride COMMAND --help`.
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"run", "--set"},      {"validate", "--set"},         {"sweep", "--jobs"},
      {"plugins", "--json"}, {"plugins describe", "--set"}, {"export", "--fmi"}};
  for (const auto& c : commands) {
    const std::string& command = c.first;
    const std::string& option = c.second;
    CAPTURE(command);
    auto h = stride(s, "help " + command);
    CHECK(h.code == 0);
    CHECK(contains(h.out, "stride " + command));
    CHECK(contains(h.out, option));
    CHECK(contains(h.out, "Examples:\n  stride "));
    const auto examples = h.out.substr(h.out.find("Examples:"));
    CHECK(std::count(examples.begin(), examples.end(), '\n') >= 4);
    // Every page named is a file of the documentation site.
    std::istringstream lines(h.out.substr(h.out.find("Read:")));
    int pages = 0;
    for (std::string line; std::getline(lines, line);) {
      const auto at = line.find("docs/");
      if (at == std::string::npos) continue;
      ++pages;
      CHECK_MESSAGE(fs::exists(fs::path(STRIDE_SOURCE_DIR) / line.substr(at)), line);
    }
    CHECK(pages >= 1);
    CHECK(contains(stride(s, command + " --help").out, examples));
  }
  o = stride(s, "help runn");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "no command \"runn\""));
}

TEST_CASE("cli: a good run exits 0 and writes results.csv and summary.json") {
  Scratch s;
  const fs::path out = s.dir / "good";
  auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() + "' --quiet");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const Table t = read_csv(out / "results.csv");
  CHECK(t.rows.size() == 21);  // t = 0, 0.1, ..., 2
  check_ramp_gain_rows(t);
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "completed");
  CHECK(sum.at("rows") == 21);
  CHECK(sum.at("end_time_reached").get<double>() == doctest::Approx(2.0));
  CHECK(sum.at("wall_time_s").get<double>() > 0.0);
  CHECK(sum.at("real_time_factor").get<double>() ==
        doctest::Approx(sum.at("wall_time_s").get<double>() / 2.0));  // 2 s simulated
  CHECK(sum.at("subsystems").at("src").at("steps") == 200);
  CHECK(sum.at("subsystems").at("amp").at("steps") == 200);
  CHECK(sum.at("subsystems").at("amp").at("plugin") == "test_gain");
  CHECK(sum.at("connections").size() == 1);
  CHECK(contains(o.err, "status: completed"));
}

TEST_CASE("cli: --set changes the manifest, plugin_paths can replace STRIDE_PLUGIN_PATH") {
  Scratch s;
  const fs::path out = s.dir / "short";
  auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() +
                         "' --quiet --set /coupling/end=1 '/plugin_paths=[\"" + STRIDE_TEST_RUNTIME_DIR + "\"]'",
                  "STRIDE_PLUGIN_PATH= ");
  INFO(o.err);
  REQUIRE(o.code == 0);
  const Table t = read_csv(out / "results.csv");
  CHECK(t.rows.size() == 11);
  check_ramp_gain_rows(t);
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("end_time").get<double>() == 1.0);
  CHECK(sum.at("subsystems").at("src").at("steps") == 100);
  CHECK(sum.at("coupling").at("end") == 1);

  // Without either, the test plugins are unknown: exit 2 with the pointer.
  o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() + "' --quiet", "STRIDE_PLUGIN_PATH= ");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/subsystems/src/plugin"));
  CHECK(contains(o.err, "unknown subsystem plugin \"test_ramp\""));
  // ... saying where it looked and how to add a folder.
  CHECK(contains(o.err, "searched " STRIDE_BUILD_PLUGIN_DIR));
  CHECK(contains(o.err, "STRIDE_PLUGIN_PATH=DIR"));
}

TEST_CASE("cli: values written with units, and a connection from m to cm, give the same run in SI") {
  // slope 7.2 km/h = 2 m/s, macro step and record interval 100 ms = 0.1 s, end 2000 ms; the gain's
  // ports in cm: validate says so, amp.y (in cm) = k · 100 · src.y.
  Scratch s;
  const fs::path out = s.dir / "units";
  const std::string sets = " --set '/subsystems/src/parameters/slope=7.2 km/h' --set '/coupling/macro_step=100 ms'"
                           " --set '/record/interval=100 ms' --set '/coupling/end=2000 ms' --set /subsystems/amp/parameters/unit=cm";
  auto v = stride(s, "validate '" + kDir + "ramp_gain.json'" + sets);
  INFO(v.err);
  REQUIRE(v.code == 0);
  CHECK(contains(v.out, "unit conversion: src.y -> amp.u: m to cm (x 100)"));
  auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() + "' --quiet" + sets);
  INFO(o.err);
  REQUIRE(o.code == 0);
  const Table t = read_csv(out / "results.csv");
  REQUIRE(t.rows.size() == 21);
  for (const auto& r : t.rows) CHECK(r[2] == doctest::Approx(300.0 * r[1]).epsilon(1e-9));
  Table si = t;
  for (auto& r : si.rows) r[2] /= 100.0;  // back to m: the rows of the run written in SI
  check_ramp_gain_rows(si);
}

TEST_CASE("cli: a bad manifest exits 2 with file and pointer on stderr, and runs nothing") {
  Scratch s;
  const fs::path out = s.dir / "bad";
  auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() +
                         "' --quiet --set /subsystems/amp/parameters/k=5000");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "ramp_gain.json: /subsystems/amp/parameters/k"));
  CHECK(contains(o.err, "found 5000"));
  CHECK_FALSE(fs::exists(out / "results.csv"));

  o = stride(s, "run '" + kDir + "invalid_json.json' --out '" + out.string() + "'");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "invalid_json.json: (document): invalid JSON at line 5, column "));

  o = stride(s, "run '" + kDir + "no_such_manifest.json'");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "cannot open"));

  o = stride(s, "run");  // command-line error
  CHECK(o.code == 2);
}

TEST_CASE("cli: a diverging run (NaN output) exits 1, status diverged, rows before kept") {
  Scratch s;
  const fs::path out = s.dir / "nan";
  auto o = stride(s, "run '" + kDir + "nan_output.json' --out '" + out.string() + "' --quiet");
  CHECK(o.code == 1);
  CHECK(contains(o.err, "status: diverged"));
  CHECK(contains(o.err, "not finite"));
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "diverged");
  CHECK(contains(sum.at("message").get<std::string>(), "subsystem \"src\": output \"y\" is not finite"));
  // The source turns NaN at t = 0.56 (first step end >= fail_at = 0.555): rows 0 .. 0.5 are
  // complete and correct, nothing at or after the failure is written.
  const Table t = read_csv(out / "results.csv");
  CHECK(t.rows.size() == 6);
  check_ramp_gain_rows(t);
  CHECK(sum.at("rows") == t.rows.size());
  CHECK(sum.at("end_time_reached").get<double>() < 0.555);
}

TEST_CASE("cli: StepFailure exits 1 with status diverged") {
  Scratch s;
  const fs::path out = s.dir / "stepfail";
  auto o = stride(s, "run '" + kDir + "step_failure.json' --out '" + out.string() + "' --quiet");
  CHECK(o.code == 1);
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "diverged");
  const std::string msg = sum.at("message");
  CHECK(contains(msg, "test_step_failure"));
  CHECK(contains(msg, "Newton iteration did not converge"));
  const Table t = read_csv(out / "results.csv");
  CHECK(t.rows.size() == 6);
  check_ramp_gain_rows(t);
}

TEST_CASE("cli: a plugin that throws exits 1 with status failed, naming the plugin") {
  Scratch s;
  const fs::path out = s.dir / "throws";
  auto o = stride(s, "run '" + kDir + "step_throws.json' --out '" + out.string() + "' --quiet");
  CHECK(o.code == 1);
  CHECK(contains(o.err, "status: failed"));
  CHECK(contains(o.err, "test_step_throws"));
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "failed");
  const std::string msg = sum.at("message");
  CHECK(contains(msg, "test_step_throws"));
  CHECK(contains(msg, "\"src\""));
  CHECK(contains(msg, "table index out of range"));
  const Table t = read_csv(out / "results.csv");
  CHECK(t.rows.size() == 6);
  check_ramp_gain_rows(t);
}

TEST_CASE("cli: a plugin reading an input it never declared stops the run cleanly, naming it") {
  Scratch s;
  const fs::path out = s.dir / "bad_input";
  auto o = stride(s, "run '" + kDir + "bad_input_index.json' --out '" + out.string() + "' --quiet");
  CHECK(o.code == 1);
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "failed");
  const std::string msg = sum.at("message");
  CHECK(contains(msg, "test_bad_input_index"));
  CHECK(contains(msg, "input index 1 read by subsystem \"sink\", which has 1 inputs"));
  // Rows up to the last macro step before t = 0.555 s stay readable: 0, 0.1, ..., 0.5.
  const Table t = read_csv(out / "results.csv");
  CHECK(t.rows.size() == 6);
}

TEST_CASE("cli: validate exit codes") {
  Scratch s;
  auto o = stride(s, "validate '" + kDir + "ramp_gain.json'");
  CHECK(o.code == 0);
  CHECK(contains(o.out, "valid (2 subsystems, 1 connections, 2 recorded columns)"));
  o = stride(s, "validate '" + kDir + "algebraic_loop.json'");  // broken by the scheme: valid, with a warning
  CHECK(o.code == 0);
  CHECK(contains(o.out, "  warning: feedthrough loop "));
  o = stride(s, "validate '" + kDir + "ramp_gain.json' --set /connections/0/to=amp.x");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/connections/0/to"));
  o = stride(s, "validate '" + kDir + "ctor_throws.json'");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "test_ctor_throws"));
}

TEST_CASE("cli: a plugin whose declaration contradicts itself is refused at load, and a manifest naming it hears why") {
  Scratch s;
  const std::string env = std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_RUNTIME_DIR + ":" + STRIDE_TEST_LOAD_DIR + "' ";
  auto o = stride(s, "plugins --json", env);
  REQUIRE(o.code == 0);
  const json list = json::parse(o.out);
  std::string reason;
  for (const auto& r : list.at("refused"))
    if (contains(r.at("file").get<std::string>(), "stride_broken_default.so")) reason = r.at("reason");
  CHECK(contains(reason, "plugin 'broken_default' declares parameter 'order'"));
  CHECK(contains(reason, "expected an integer in [0, 4], found 7"));
  for (const auto& p : list.at("plugins")) CHECK(p.at("name") != "broken_default");

  const std::string named = " --set '/connections/0/extrapolator={\"plugin\": \"broken_default\"}'";
  o = stride(s, "validate '" + kDir + "ramp_gain.json'" + named, env);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/connections/0/extrapolator:"));
  CHECK(contains(o.err, "unknown extrapolator plugin \"broken_default\""));
  CHECK(contains(o.err, "which provides it, was refused at load"));
  CHECK(contains(o.err, "found 7"));
  o = stride(s, "plugins describe broken_default", env);
  CHECK(o.code == 2);
  CHECK(contains(o.err, "was refused at load"));
}

TEST_CASE("cli: plugins describe writes integer bounds as integers") {
  Scratch s;
  auto o = stride(s, "plugins describe lagrange");
  CHECK(o.code == 0);
  CHECK(contains(o.out, "in [0, 4]"));
  CHECK_FALSE(contains(o.out, "4.0"));
  o = stride(s, "plugins describe lagrange --json");
  const json d = json::parse(o.out);
  for (const auto& p : d.at("parameters"))
    if (p.at("name") == "order") {
      CHECK(p.at("max").is_number_integer());
      CHECK(p.at("max") == 4);
    }
}

TEST_CASE("cli: plugins describe --set shows the ports for those parameter values") {
  // The crane's ports are vectors of one element per actuator: 1 by default, 2 when asked.
  Scratch s;
  auto o = stride(s, "plugins describe crane_dependent");
  CHECK(o.code == 0);
  CHECK(contains(o.out, "ports (default parameters):"));
  CHECK(contains(o.out, "out s [1 x m]"));
  o = stride(s, "plugins describe crane_dependent --set actuators=2");
  CHECK(o.code == 0);
  CHECK(contains(o.out, "ports (actuators = 2, defaults for the rest):"));
  CHECK(contains(o.out, "out s [2 x m]"));
  o = stride(s, "plugins describe crane_dependent --json --set actuators=2");
  CHECK(o.code == 0);
  const json d = json::parse(o.out);
  CHECK(d.at("port_parameters") == json{{"actuators", 2}});
  for (const auto& p : d.at("ports"))
    if (p.at("name") == "s") CHECK(p.at("size") == 2);
  // Unknown parameter, wrong type, out of bounds: exit 2 with what is allowed.
  o = stride(s, "plugins describe crane_dependent --set actuator=2");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "has no parameter \"actuator\" (did you mean \"actuators\"?)"));
  o = stride(s, "plugins describe crane_dependent --set actuators=3");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "--set actuators=3: expected an integer in [1, 2], found 3"));
  o = stride(s, "plugins describe crane_dependent --set actuators");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "expected NAME=VALUE"));
}

TEST_CASE("cli: plugins, plugins --json and plugins describe") {
  Scratch s;
  auto o = stride(s, "plugins");
  CHECK(o.code == 0);
  for (const char* name : {"rk4", "zoh", "lagrange", "test_gain", "test_ramp"}) {
    CAPTURE(name);
    CHECK(contains(o.out, name));
  }
  CHECK(contains(o.out, "integrators:"));
  CHECK(contains(o.out, "extrapolators:"));

  // The broken folder: listed as refused, with reasons, and the shipped plugins still there.
  o = stride(s, "plugins --json", std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_LOAD_DIR + "' ");
  CHECK(o.code == 0);
  const json list = json::parse(o.out);
  bool has_rk4 = false;
  for (const auto& p : list.at("plugins")) has_rk4 |= p.at("name") == "rk4";
  CHECK(has_rk4);
  std::string reasons;
  for (const auto& r : list.at("refused")) reasons += r.at("reason").get<std::string>() + "\n";
  CHECK(list.at("refused").size() >= 5);
  CHECK(contains(reasons, "ABI version"));
  CHECK(contains(reasons, "json_diagnostics"));
  CHECK(contains(reasons, "missing entry point"));
  CHECK(contains(reasons, "duplicate plugin name"));
  // Where it looked: the build's plugin folder first, then STRIDE_PLUGIN_PATH's.
  REQUIRE(list.at("searched").size() >= 2);
  CHECK(list.at("searched").back() == STRIDE_TEST_LOAD_DIR);
  o = stride(s, "plugins", std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_LOAD_DIR + "' ");
  CHECK(contains(o.out, "searched, in order:\n  " STRIDE_BUILD_PLUGIN_DIR));
  CHECK(contains(o.out, std::string("  ") + STRIDE_TEST_LOAD_DIR + "\n"));
  CHECK(contains(o.out, "STRIDE_PLUGIN_PATH"));

  o = stride(s, "plugins describe rk4 --json");
  REQUIRE(o.code == 0);
  const json rk4 = json::parse(o.out);
  CHECK(rk4.at("name") == "rk4");
  CHECK(rk4.at("kind") == "integrator");
  CHECK(rk4.at("parameters").is_array());

  o = stride(s, "plugins describe lagrange --json");
  REQUIRE(o.code == 0);
  const json lag = json::parse(o.out);
  bool order_found = false;
  for (const auto& p : lag.at("parameters"))
    if (p.at("name") == "order") {
      order_found = true;
      CHECK(p.at("type") == "integer");
      CHECK(p.at("min") == 0);
      CHECK(p.at("max") == 4);
      CHECK(p.at("default") == 1);
    }
  CHECK(order_found);

  o = stride(s, "plugins describe test_gain --json");
  REQUIRE(o.code == 0);
  const json gain = json::parse(o.out);
  CHECK(gain.at("form") == "stepper");
  REQUIRE(gain.at("ports").size() == 2);
  CHECK(gain.at("ports")[1].at("name") == "y");
  CHECK(gain.at("ports")[1].at("feedthrough") == true);

  o = stride(s, "plugins describe lagrange");
  CHECK(o.code == 0);
  CHECK(contains(o.out, "order : integer"));

  o = stride(s, "plugins describe rk5");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "did you mean \"rk4\""));
}

// `stride ARGS...` started in the background (its own process group), stderr to a file.
struct Background {
  pid_t pid = -1;
  int status = 0;
  bool ended = false;
  Background(const Scratch& s, std::vector<std::string> args) {
    pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      setpgid(0, 0);
      setenv("STRIDE_PLUGIN_PATH", STRIDE_TEST_RUNTIME_DIR, 1);
      const std::string err = (s.dir / "stderr.txt").string();
      if (std::freopen(err.c_str(), "w", stderr) == nullptr) _exit(126);
      std::vector<char*> argv{const_cast<char*>("stride")};
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      execv(STRIDE_EXE, argv.data());
      _exit(127);
    }
  }
  ~Background() {
    if (!ended) {
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
    }
  }
  // Waits until `file` has more than `lines` lines (at most 20 s); returns the count seen.
  static std::size_t wait_lines(const fs::path& file, std::size_t lines) {
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t seen = 0;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20)) {
      std::ifstream in(file);
      seen = 0;
      for (std::string line; std::getline(in, line);) ++seen;
      if (seen > lines) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return seen;
  }
  // Waits for the end (at most `seconds`); true when it ended.
  bool wait(double seconds) {
    const auto t0 = std::chrono::steady_clock::now();
    while (!ended && std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < seconds) {
      ended = waitpid(pid, &status, WNOHANG) == pid;
      if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return ended;
  }
  int exit_code() const { return WIFEXITED(status) ? WEXITSTATUS(status) : -1; }
};

// An interrupted long run: complete rows amp.y = 6 t every 0.01 s, and a summary that says so.
void check_interrupted(const fs::path& out, std::size_t seen, const std::string& cause) {
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "interrupted");
  CHECK(contains(sum.at("message").get<std::string>(), cause));
  const Table t = read_csv(out / "results.csv");
  CHECK(t.complete);
  CHECK(t.rows.size() + 1 >= seen);  // every row seen before the signal is still there
  CHECK(sum.at("rows") == t.rows.size());
  REQUIRE(t.header == std::vector<std::string>{"time", "src.y", "amp.y"});
  for (std::size_t i = 0; i < t.rows.size(); i += 7) {
    CHECK(t.rows[i][0] == doctest::Approx(0.01 * static_cast<double>(i)).epsilon(1e-9));
    CHECK(t.rows[i][2] == doctest::Approx(6.0 * t.rows[i][0]).epsilon(1e-9));
  }
  const double reached = sum.at("end_time_reached").get<double>();
  CHECK(reached > 0.0);
  CHECK(reached < 1e5);
  if (!t.rows.empty()) CHECK(reached >= t.rows.back()[0]);
}

TEST_CASE("cli: SIGINT stops a long run with status interrupted and keeps the rows") {
  Scratch s;
  const fs::path out = s.dir / "long";
  const std::string manifest = kDir + "long_run.json";
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setenv("STRIDE_PLUGIN_PATH", STRIDE_TEST_RUNTIME_DIR, 1);
    const std::string err = (s.dir / "stderr.txt").string();
    if (std::freopen(err.c_str(), "w", stderr) == nullptr) _exit(126);
    execl(STRIDE_EXE, "stride", "run", manifest.c_str(), "--out", out.c_str(), "--quiet", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Wait until the run has written some rows (at most 20 s), then interrupt it.
  const auto t0 = std::chrono::steady_clock::now();
  std::size_t seen = 0;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(20)) {
    std::ifstream in(out / "results.csv");
    seen = 0;
    for (std::string line; std::getline(in, line);) ++seen;
    if (seen > 50) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGINT);
  int st = 0;
  bool exited = false;
  for (int i = 0; i < 500 && !exited; ++i) {  // 10 s at most
    exited = waitpid(pid, &st, WNOHANG) == pid;
    if (!exited) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (!exited) {
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
  }
  REQUIRE(exited);
  CHECK(seen > 50);
  REQUIRE(WIFEXITED(st));
  CHECK(WEXITSTATUS(st) == 1);
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "interrupted");
  CHECK(contains(sum.at("message").get<std::string>(), "interrupted"));
  const Table t = read_csv(out / "results.csv");
  CHECK(t.complete);
  CHECK(t.rows.size() + 1 >= seen);  // every row seen before the signal is still there
  CHECK(sum.at("rows") == t.rows.size());
  REQUIRE(t.header == std::vector<std::string>{"time", "src.y", "amp.y"});
  for (std::size_t i = 0; i < t.rows.size(); i += 7) {
    CHECK(t.rows[i][0] == doctest::Approx(0.01 * static_cast<double>(i)).epsilon(1e-9));
    CHECK(t.rows[i][2] == doctest::Approx(6.0 * t.rows[i][0]).epsilon(1e-9));
  }
  const double reached = sum.at("end_time_reached").get<double>();
  CHECK(reached > 0.0);
  CHECK(reached < 1e5);
}

TEST_CASE("cli: SIGTERM, SIGHUP and SIGPIPE end a run like SIGINT: interrupted, whole rows, a summary") {
  for (int sig : {SIGTERM, SIGHUP, SIGPIPE}) {
    CAPTURE(sig);
    Scratch s;
    const fs::path out = s.dir / "long";
    Background b(s, {"run", kDir + "long_run.json", "--out", out.string(), "--quiet"});
    const std::size_t seen = Background::wait_lines(out / "results.csv", 50);
    kill(b.pid, sig);
    REQUIRE(b.wait(10));
    CHECK(b.exit_code() == 1);
    check_interrupted(out, seen, sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : "SIGPIPE");
  }
}

TEST_CASE("cli: kill -9 of stride run ends its run process too: interrupted, whole rows, the folder free") {
  // Before, the run went on as an orphan at full CPU to its end time (here 10^5 s: hours),
  // writing rows and holding the folder's lock.
  stride_test::OrphanReaper reaper;
  Scratch s;
  const fs::path out = s.dir / "long";
  Background b(s, {"run", kDir + "long_run.json", "--out", out.string(), "--quiet"});
  const std::size_t seen = Background::wait_lines(out / "results.csv", 50);
  const std::vector<pid_t> runs = stride_test::children_of(b.pid);
  REQUIRE(runs.size() == 1);
  kill(b.pid, SIGKILL);
  REQUIRE(b.wait(10));
  const auto end = stride_test::OrphanReaper::wait_end(runs[0], 10);
  REQUIRE(end.has_value());  // (killed by the test otherwise)
  CHECK(WIFEXITED(*end));
  CHECK(WEXITSTATUS(*end) == 1);
  check_interrupted(out, seen, "SIGTERM");
  CHECK(contains(read_json(out / "summary.json").at("message").get<std::string>(),
                 "(the process that started and supervised the run, pid " + std::to_string(b.pid) + ", ended)"));
  // The lock went with the processes: another run may use the folder.
  Background again(s, {"run", kDir + "long_run.json", "--out", out.string(), "--quiet", "--set", "/coupling/end=0.5"});
  REQUIRE(again.wait(20));
  CHECK(again.exit_code() == 0);
}

TEST_CASE("cli: kill -9 of stride run while a step never returns: the run process writes its rows and ends") {
  stride_test::OrphanReaper reaper;
  Scratch s;
  const fs::path out = s.dir / "hang";
  const fs::path hanging = s.dir / "hanging";
  setenv("STRIDE_TEST_HANG_MARK", hanging.c_str(), 1);
  Background b(s,
               {"run", kDir + "fault.json", "--out", out.string(), "--quiet", "--grace", "0.5", "--set",
                "/subsystems/src/parameters/fault=\"hang\"", "--set", "/subsystems/src/parameters/fail_at=3", "--set",
                "/coupling/end=10", "--set", "/coupling/macro_step=0.01", "--set", "/record/interval=0.01"});
  for (int i = 0; i < 2000 && !fs::exists(hanging); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  unsetenv("STRIDE_TEST_HANG_MARK");
  REQUIRE(fs::exists(hanging));
  const std::vector<pid_t> runs = stride_test::children_of(b.pid);
  REQUIRE(runs.size() == 1);
  const auto t0 = std::chrono::steady_clock::now();
  kill(b.pid, SIGKILL);
  REQUIRE(b.wait(10));
  // No supervisor is left to end the step: the run process does, grace + 1 s after its parent.
  const auto end = stride_test::OrphanReaper::wait_end(runs[0], 10);
  REQUIRE(end.has_value());
  CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < 5.0);
  const Table t = read_csv(out / "results.csv");
  CHECK(t.complete);
  CHECK(t.rows.size() == 300);  // 0 .. 2.99 s, flushed on the way out
}

TEST_CASE("cli: stderr closed under a run (stride run ... 2>&1 | head -1) ends it with a summary") {
  Scratch s;
  const fs::path out = s.dir / "piped";
  // Progress lines (one per 10 %) go to the pipe; head leaves after the first one.
  const std::string cmd = kRuntimeEnv + "'" + STRIDE_EXE + "' run '" + kDir + "long_run.json' --out '" + out.string() +
                          "' --set /coupling/end=400 2>&1 | head -1 >/dev/null";
  std::system(cmd.c_str());
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "interrupted");
  CHECK(contains(sum.at("message").get<std::string>(), "SIGPIPE"));
  CHECK(read_csv(out / "results.csv").complete);
  CHECK(sum.at("end_time_reached").get<double>() < 400);
}

TEST_CASE("cli: a step that never returns is stopped after the grace period; a second Ctrl-C stops at once") {
  for (bool twice : {false, true}) {
    CAPTURE(twice);
    Scratch s;
    const fs::path out = s.dir / "hang";
    const fs::path hanging = s.dir / "hanging";
    setenv("STRIDE_TEST_HANG_MARK", hanging.c_str(), 1);
    Background b(s, {"run", kDir + "fault.json", "--out", out.string(), "--quiet", "--grace", twice ? "60" : "0.5",
                     "--set", "/subsystems/src/parameters/fault=\"hang\"", "--set", "/subsystems/src/parameters/fail_at=3",
                     "--set", "/coupling/end=10", "--set", "/coupling/macro_step=0.01", "--set", "/record/interval=0.01"});
    // The rows up to the hang are held in memory; wait for the hang itself (at most 20 s).
    for (int i = 0; i < 2000 && !fs::exists(hanging); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    unsetenv("STRIDE_TEST_HANG_MARK");
    REQUIRE(fs::exists(hanging));
    const auto t0 = std::chrono::steady_clock::now();
    kill(b.pid, SIGINT);
    if (twice) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      kill(b.pid, SIGINT);
    }
    REQUIRE(b.wait(10));
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(took < 3.0);
    CHECK(b.exit_code() == 1);
    const json sum = read_json(out / "summary.json");
    CHECK(sum.at("status") == "interrupted");
    const std::string msg = sum.at("message");
    CHECK(contains(msg, "SIGINT"));
    CHECK(contains(msg, twice ? "a second signal" : "grace period"));
    CHECK(contains(msg, "subsystem \"src\""));
    // Rows up to the hang at t = 2.99 s were flushed on the way out: 0 .. 2.99, whole.
    const Table t = read_csv(out / "results.csv");
    CHECK(t.complete);
    CHECK(t.rows.size() == 300);
    check_ramp_gain_rows_every(t, 0.01);
    CHECK(sum.at("end_time_reached").get<double>() == doctest::Approx(2.99));
    CHECK(sum.at("rows") == 300);
  }
}

TEST_CASE("cli: plugins that throw non-exceptions, exit, crash or abort end with a summary naming them") {
  struct Case {
    std::string fault;
    const char* message;
  };
  for (const Case& c : {Case{"throw_int", "threw an exception that is not a std::exception"},
                       Case{"throw_cstring", "threw an exception that is not a std::exception"},
                       Case{"exit0", "exited with code 0 without writing its summary"},
                       Case{"segfault", "killed by SIGSEGV"}, Case{"abort", "killed by SIGABRT"},
                       Case{"bad_utf8", "invalid byte"}}) {
    CAPTURE(c.fault);
    Scratch s;
    const fs::path out = s.dir / c.fault;
    INFO("fault: " << c.fault);
    auto o = stride(s, "run '" + kDir + "fault.json' --out '" + out.string() + "' --quiet --set /subsystems/src/parameters/fault=" + c.fault);
    CHECK(o.code == 1);
    const json sum = read_json(out / "summary.json");
    CHECK(sum.at("status") == "failed");
    const std::string msg = sum.at("message");
    CHECK(contains(msg, c.message));
    CHECK((contains(msg, "test_fault") || contains(msg, "subsystem \"src\"")));
    // The source fails in the step ending at 0.56 s: every subsystem reached 0.5 s.
    CHECK(sum.at("end_time_reached").get<double>() == doctest::Approx(0.5));
    const Table t = read_csv(out / "results.csv");
    CHECK(t.complete);
    CHECK(t.rows.size() == 6);  // written even by a crash
    check_ramp_gain_rows(t);
    CHECK(sum.at("rows") == 6);
  }
}

TEST_CASE("cli: a refused write ends the run failed, keeping the rows written whole") {
  Scratch s;
  const fs::path out = s.dir / "full";
  // A file-size limit of 8 KiB refuses writes the way a full disk does.
  const std::string cmd = "ulimit -f 8; " + kRuntimeEnv + "'" + STRIDE_EXE + "' run '" + kDir + "long_run.json' --out '" +
                          out.string() + "' --quiet --set /coupling/end=100 2>/dev/null";
  const int st = std::system(cmd.c_str());
  CHECK(WEXITSTATUS(st) == 1);
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "failed");
  CHECK(contains(sum.at("message").get<std::string>(), "cannot write"));
  CHECK(contains(sum.at("message").get<std::string>(), "File too large"));
  const Table t = read_csv(out / "results.csv");
  CHECK(t.complete);
  CHECK(t.rows.size() > 100);
  CHECK(sum.at("rows") == t.rows.size());
  CHECK(fs::file_size(out / "results.csv") <= 8192);
  check_ramp_gain_rows_every(t, 0.01);
}

TEST_CASE("cli: the results folder: locked, never stale, errors before running exit 2") {
  Scratch s;
  const fs::path out = s.dir / "folder";
  // A completed run, then a run killed with SIGKILL (no chance to write anything): what is
  // left says "running", never the earlier "completed", and holds no earlier rows.
  auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() + "' --quiet");
  REQUIRE(o.code == 0);
  {
    Background b(s, {"run", kDir + "long_run.json", "--out", out.string(), "--quiet"});
    Background::wait_lines(out / "results.csv", 50);
    // A second run into the same folder is refused, naming the holder.
    o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() + "' --quiet");
    CHECK(o.code == 2);
    CHECK(contains(o.err, "is in use by another run (stride run, pid "));
    CHECK(contains(o.err, "long_run.json"));
    kill(-b.pid, SIGKILL);
    REQUIRE(b.wait(10));
  }
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "running");
  const Table t = read_csv(out / "results.csv");
  CHECK(t.rows.size() > 50);
  CHECK(t.rows[10][0] == doctest::Approx(0.1));  // long_run's 0.01 s rows, not ramp_gain's 0.1 s

  // summary.json that is a folder, a results folder under a file: exit 2, nothing run.
  const fs::path dir_summary = s.dir / "dir_summary";
  fs::create_directories(dir_summary / "summary.json");
  o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + dir_summary.string() + "' --quiet");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "summary.json: it is a folder"));
  CHECK_FALSE(fs::exists(dir_summary / "results.csv"));
  std::ofstream(s.dir / "a_file") << "x";
  o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + (s.dir / "a_file" / "out").string() + "' --quiet");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "cannot create the results folder"));
  if (geteuid() != 0) {  // root writes anywhere
    const fs::path ro = s.dir / "read_only";
    fs::create_directories(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + ro.string() + "' --quiet");
    CHECK(o.code == 2);
    fs::permissions(ro, fs::perms::owner_all);
  }
}

TEST_CASE("cli: bytes that are not UTF-8 in a path or a message still give a valid summary") {
  Scratch s;
  const fs::path odd = s.dir / "ramp\xff\xfe.json";
  fs::copy_file(kDir + "ramp_gain.json", odd);
  const fs::path out = s.dir / "odd\xff";
  auto o = stride(s, "run '" + odd.string() + "' --out '" + out.string() + "' --quiet");
  CHECK(o.code == 0);
  const json sum = read_json(out / "summary.json");
  CHECK(sum.at("status") == "completed");
  CHECK(contains(sum.at("manifest").get<std::string>(), "ramp\xef\xbf\xbd"));  // U+FFFD
}

TEST_CASE("cli: hostile command lines and inputs exit 2 with the place named") {
  Scratch s;
  std::string deep(100000, '[');
  auto o = stride(s, "validate '" + kDir + "ramp_gain.json' --set '/title=" + deep + "'");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "nesting deeper than 64 levels"));
  o = stride(s, "validate /dev/zero");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/dev/zero: (document): expected a regular file"));
  o = stride(s, "validate '" + kDir + "ramp_gain.json' --set '/connections/0/to=amp.u[-1]'");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/connections/0/to: expected \"subsystem.port\""));
  o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + (s.dir / "x").string() + "' --set /coupling/macro_step=1e-300");
  CHECK(o.code == 2);
  CHECK(contains(o.err, "/coupling/macro_step: expected a macro step of at least"));
  CHECK_FALSE(fs::exists(s.dir / "x"));
  o = stride(s, "run '" + kDir + "ramp_gain.json' --grace -1");
  CHECK(o.code == 2);
}

TEST_CASE("cli: steps longer than the run or than the macro step are refused with both values, before any run") {
  Scratch s;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/coupling/macro_step=1e23", "/coupling/macro_step: expected a macro step of at most the run's length "
                                    "(/coupling/end - /coupling/start = 2 s), found 1e+23 s"},
      {"/coupling/macro_step=20", "found 20 s: the subsystems would exchange values at most once"},
      {"/subsystems/amp/step=1e7", "/subsystems/amp/step: expected a step of at most /coupling/macro_step = 0.1 s, "
                                   "found 1e+07 s"},
      {"/subsystems/src/step=0.2", "/subsystems/src/step: expected a step of at most /coupling/macro_step = 0.1 s, "
                                   "found 0.2 s: under gauss_seidel every step ends at a communication point"}};
  for (const auto& c : cases) {  // not a structured binding: CAPTURE's lambda takes it (clang 14)
    const std::string& set = c.first;
    const std::string& message = c.second;
    CAPTURE(set);
    const fs::path out = s.dir / "long_steps";
    auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() + "' --quiet --set " + set);
    INFO(o.err);
    CHECK(o.code == 2);
    CHECK(contains(o.err, message));
    CHECK_FALSE(fs::exists(out / "summary.json"));
  }
  // With align off the step overshoots the communication points by design: it runs as declared.
  const fs::path out = s.dir / "overshoot";
  auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() +
                         "' --quiet --set /subsystems/src/step=0.2 --set /coupling/align=false");
  INFO(o.err);
  CHECK(o.code == 0);
}

TEST_CASE("cli: a subsystem is handed its manifest step exactly, without round-off from the grid") {
  // amp steps 0.01 s inside macro steps of 0.1 s: 0.09 + 0.01 is not 0.1 in doubles, and the
  // remainder 0.1 - 0.09 = 0.010000000000000009 used to be handed in for the tenth step.
  Scratch s;
  const fs::path out = s.dir / "grid";
  auto o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() + "' --quiet");
  REQUIRE(o.code == 0);
  const json sizes = read_json(out / "summary.json")["subsystems"]["amp"]["statistics"]["step_sizes"];
  CHECK(sizes == json::array({0.01}));
  // A step that does not divide the macro step ends each macro step with a true remainder.
  o = stride(s, "run '" + kDir + "ramp_gain.json' --out '" + out.string() + "' --quiet --set /subsystems/amp/step=0.03");
  REQUIRE(o.code == 0);
  const json sizes3 = read_json(out / "summary.json")["subsystems"]["amp"]["statistics"]["step_sizes"];
  REQUIRE(sizes3.size() >= 2);
  CHECK(sizes3[0] == 0.03);
  for (const auto& h : sizes3) CHECK(h.get<double>() <= 0.03);
}
