// Real-time runs and the udp plugin (docs/real-time.md), through the `stride` executable:
//  - pacing: a 2-s two-mass run at factor 1 takes 2 s of wall time (± 50 ms), at factor 4
//    0.5 s, with the same results as the batch run; the other coupling schemes are paced too;
//  - overruns: a test plugin that stalls once (tests/broken_plugins/runtime/test_slow.cpp) makes
//    the communication point after the stall late by the stall: counted with its time
//    ("continue") or the end of the run with status deadline_missed and its rows complete
//    ("stop");
//  - udp: a thread of the test echoes each datagram (2 x + 1) to the plugin, whose output then
//    shows the echo two communication points after the value was sent (paced run); malformed
//    datagrams and a silent partner counted or ending the run as the manifest says; without
//    --real-time the datagrams still go out, one per communication point, in order;
//  - bad options and manifest fields refused with the option or the JSON pointer.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <set>
#include <tuple>
#include <thread>

#include "stride_run.hpp"
#include "files.hpp"

namespace {

using namespace stride_test;

const std::string kEnv = std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_RUNTIME_DIR + "' ";

struct Outcome {
  Run run;
  std::string console;
  double wall = 0.0;  // of the whole command, s
};

// `stride run MANIFEST --out <scratch>/tag ARGS` (test plugins on the path): exit code,
// summary.json, results.csv, what it printed and its wall time.
Outcome run_with(const fs::path& manifest, const std::string& args, const std::string& tag) {
  const fs::path out = scratch() / tag;
  fs::remove_all(out);
  fs::create_directories(out);
  const std::string cmd = kEnv + "'" + STRIDE_EXE + "' run '" + manifest.string() + "' --out '" + out.string() + "' " +
                          args + " >'" + (out / "console.txt").string() + "' 2>&1";
  Outcome o;
  const auto t0 = std::chrono::steady_clock::now();
  const int st = std::system(cmd.c_str());
  o.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  o.run.exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  std::ifstream sf(out / "summary.json");
  if (sf) o.run.summary = json::parse(sf, nullptr, false);
  if (fs::exists(out / "results.csv")) o.run.table = read_csv(out / "results.csv");
  o.console = slurp(out / "console.txt");
  INFO("command: " << cmd);
  INFO("console: " << o.console);
  REQUIRE(o.run.summary.is_object());
  return o;
}

fs::path source(const std::string& rel) { return fs::path(STRIDE_SOURCE_DIR) / rel; }

fs::path write_manifest(const json& m, const std::string& name) {
  fs::create_directories(scratch());
  const fs::path p = scratch() / name;
  std::ofstream(p) << m.dump(2);
  return p;
}

// The last line the command printed.
std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && t.back() == '\n') t.pop_back();
  const auto nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace

// Under the sanitizers (several times slower) a run may be late, so only that it is never early
// is checked there; the deadlines kept are checked on the release build.
constexpr bool kTimed = !STRIDE_TEST_SANITIZED;

TEST_CASE("real time: a 2-s run at factor 1 takes 2 s of wall time, at factor 4 0.5 s, with the batch run's results") {
  const fs::path two_mass = source("manifests/two_mass.json");
  const Outcome batch = run_with(two_mass, "--set /coupling/end=2 --quiet", "batch");
  REQUIRE(batch.run.status() == "completed");
  CHECK_FALSE(batch.run.summary.contains("real_time"));
  for (const double factor : {1.0, 4.0}) {
    CAPTURE(factor);
    const Outcome o = run_with(two_mass, "--set /coupling/end=2 --real-time " + num(factor),
                               "paced_" + std::to_string(static_cast<int>(factor)));
    REQUIRE(o.run.status() == "completed");
    const json& rt = o.run.summary.at("real_time");
    const double expected = 2.0 / factor;
    CHECK(rt.at("factor").get<double>() == factor);
    CHECK(rt.at("wall_time_s").get<double>() >= expected - 0.05);  // never early
    CHECK(o.wall >= expected);  // the whole command, process start and plugin loading included
    CHECK(rt.at("communication_points") == 20);  // macro step 0.1 s
    CHECK(rt.at("compute_time_per_macro_step_s").at("samples") == 20);
    if (kTimed) {
      CHECK(rt.at("wall_time_s").get<double>() <= expected + 0.05);
      CHECK(rt.at("deadline_misses") == 0);
      CHECK(rt.at("max_lateness_s").get<double>() <= 0.0);
      CHECK(contains(last_line(o.console), "real time: every deadline kept at factor " + num(factor)));
    }
    // Pacing changes when rows are computed, never what they are.
    REQUIRE(o.run.table.rows() == batch.run.table.rows());
    for (const auto& c : batch.run.table.names) CHECK(o.run.table[c] == batch.run.table[c]);
  }
}

TEST_CASE("real time: every coupling scheme is paced (the pacer watches the communication points)") {
  // 0.5 s of wall time each; each scheme's results as in its batch run. (Deadlines missed are
  // not checked here: on a loaded CI machine a 25-ms frame may be; the pacing test checks them.)
  const fs::path ramp = source("tests/manifests/ramp_gain.json");  // 2 s
  const fs::path stiff = source("manifests/two_mass_stiff_iterative.json");
  const fs::path crane = source("manifests/crane1_zoh.json");
  const std::vector<std::tuple<std::string, fs::path, std::string, double>> schemes = {
      {"jacobi", ramp, "--set /coupling/scheme=jacobi", 4},
      {"gauss_seidel", ramp, "", 4},
      {"multirate", ramp, "--set /coupling/scheme=multirate", 4},
      {"iterative", stiff, "--set /coupling/end=2", 4},
      {"step_control", crane, "--set /coupling/end=1 --set '/coupling/step_control={\"max_step\": 0.05}'", 2}};
  for (const auto& scheme : schemes) {  // no structured binding: CAPTURE cannot take one (clang 14)
    const auto& [name_, manifest, args, factor] = scheme;
    const std::string name = name_;
    CAPTURE(name);
    const Outcome batch = run_with(manifest, args + " --quiet", "batch_" + name);
    const Outcome o = run_with(manifest, args + " --quiet --real-time=" + num(factor), "scheme_" + name);
    REQUIRE(o.run.status() == "completed");
    const json& rt = o.run.summary.at("real_time");
    CHECK(rt.at("communication_points").get<long>() >= 1);
    CHECK(rt.at("wall_time_s").get<double>() >= 0.45);
    if (kTimed) CHECK(rt.at("wall_time_s").get<double>() <= 0.55);
    REQUIRE(o.run.table.rows() == batch.run.table.rows());
    for (const auto& c : batch.run.table.names) CHECK(o.run.table[c] == batch.run.table[c]);
  }
}

TEST_CASE("real time: a stalled step misses its deadline, counted (continue) or ending the run (stop)") {
  json m = {{"format", 1},
            {"subsystems",
             {{"src", {{"plugin", "test_slow"}, {"step", 0.1}, {"parameters", {{"stall_at", 0.5}, {"stall", 0.25}}}}}}},
            {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.1}, {"end", 1.0}}},
            {"real_time", {{"factor", 1}, {"overrun", "continue"}}}};
  const Outcome go_on = run_with(write_manifest(m, "slow_continue.json"), "--quiet", "slow_continue");
  CHECK(go_on.run.status() == "completed");
  const json& rt = go_on.run.summary.at("real_time");
  CHECK(rt.at("deadline_misses").get<long>() >= 1);
  REQUIRE(!rt.at("first_misses").empty());
  CHECK(rt.at("first_misses")[0].get<double>() == doctest::Approx(0.6));  // the end of the step from 0.5 s
  CHECK(rt.at("max_lateness_s").get<double>() >= 0.14);                   // the stall, less the 0.1 s it had
  CHECK(rt.at("max_lateness_s").get<double>() <= 0.2);
  CHECK(rt.at("compute_time_per_macro_step_s").at("max").get<double>() >= 0.25);
  CHECK(contains(last_line(go_on.console), "deadlines missed at factor 1 (first at t = 0.6 s"));
  CHECK(go_on.run.table.rows() == 11);

  m["real_time"]["overrun"] = "stop";
  const Outcome stop = run_with(write_manifest(m, "slow_stop.json"), "--quiet", "slow_stop");
  CHECK(stop.run.exit_code == 1);
  CHECK(stop.run.status() == "deadline_missed");
  CHECK(contains(stop.run.message(), "t = 0.6 s was reached"));
  CHECK(stop.run.summary.at("end_time_reached").get<double>() == doctest::Approx(0.6));
  CHECK(stop.run.summary.at("real_time").at("deadline_misses") == 1);
  // The rows up to the missed point are complete (and only whole rows were written).
  REQUIRE(stop.run.table.rows() == 7);
  for (std::size_t k = 0; k < 7; ++k) CHECK(stop.run.table["src.y"][k] == doctest::Approx(0.1 * k));
  CHECK(contains(slurp(scratch() / "slow_stop" / "log.txt"), "real time: 1 of 6 deadlines missed"));
}

namespace {

// A UDP partner on 127.0.0.1: answers each datagram (float64 LE values) as `answer` says, from
// its own thread, until destroyed.
struct Partner {
  int fd = -1;
  int port = 0;
  std::atomic<bool> quit{false};
  std::atomic<int> received{0};
  std::vector<double> values;  // every value received, in order (first element of each datagram)
  // (index of the datagram, its first value) -> the bytes to send back; empty: no answer.
  std::function<std::vector<unsigned char>(int, double)> answer;
  std::thread thread;

  explicit Partner(std::function<std::vector<unsigned char>(int, double)> a) : answer(std::move(a)) {
    fd = ::socket(AF_INET, SOCK_DGRAM, 0);
    REQUIRE(fd >= 0);
    sockaddr_in a4{};
    a4.sin_family = AF_INET;
    a4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&a4), sizeof a4) == 0);
    socklen_t len = sizeof a4;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a4), &len);
    port = ntohs(a4.sin_port);
    thread = std::thread([this] { serve(); });
  }
  ~Partner() {
    quit = true;
    thread.join();
    ::close(fd);
  }
  void serve() {
    while (!quit) {
      pollfd p{fd, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      unsigned char buf[256];
      sockaddr_in from{};
      socklen_t len = sizeof from;
      const ssize_t n = ::recvfrom(fd, buf, sizeof buf, 0, reinterpret_cast<sockaddr*>(&from), &len);
      if (n < 8) continue;
      double x = 0;
      std::memcpy(&x, buf, 8);  // little-endian host (x86-64, aarch64)
      values.push_back(x);
      const std::vector<unsigned char> reply = answer(received++, x);
      if (!reply.empty()) ::sendto(fd, reply.data(), reply.size(), 0, reinterpret_cast<sockaddr*>(&from), len);
    }
  }
};

std::vector<unsigned char> bytes_of(double v) {
  std::vector<unsigned char> b(8);
  std::memcpy(b.data(), &v, 8);
  return b;
}

// A ramp x = t sent over UDP; what comes back is the output "echo". Macro step 0.1 s, 1 s.
json udp_manifest(int partner_port, const json& extra = json::object()) {
  json m = json::parse(R"({
    "format": 1,
    "subsystems": {
      "src": {"plugin": "signal", "step": 0.1,
              "parameters": {"outputs": {"x": {"ramp": {"duration": 10, "height": 10}, "unit": "m"}}}},
      "io": {"plugin": "udp", "step": 0.1,
             "parameters": {"send": [{"name": "x", "unit": "m"}], "listen": "127.0.0.1:0",
                            "receive": [{"name": "echo", "unit": "m"}]}}
    },
    "connections": [{"from": "src.x", "to": "io.x"}],
    "coupling": {"scheme": "gauss_seidel", "order": ["src", "io"], "macro_step": 0.1, "end": 1.0},
    "record": {"interval": 0.1, "variables": ["src.x", "io.echo"]}
  })");
  json& io = m["subsystems"]["io"]["parameters"];
  io["send_to"] = "127.0.0.1:" + std::to_string(partner_port);
  io.update(extra);
  return m;
}

}  // namespace

TEST_CASE("udp: an echoing partner's answers appear two communication points after the value was sent") {
  Partner echo([](int, double x) { return bytes_of(2 * x + 1); });
  const Outcome o =
      run_with(write_manifest(udp_manifest(echo.port), "udp_echo.json"), "--quiet --real-time 2", "udp_echo");
  REQUIRE(o.run.status() == "completed");
  const auto& t = o.run.table["time"];
  const auto& y = o.run.table["io.echo"];
  REQUIRE(t.size() == 11);
  // At the step from T the plugin reads what arrived (the answer to the datagram of the step
  // from T - h), giving the output at T + h, then sends its input, which under Gauss–Seidel
  // (src before io) is already src.x(T + h).
  const auto& x = o.run.table["src.x"];
  for (std::size_t k = 0; k < t.size(); ++k) {
    CAPTURE(t[k]);
    CHECK(y[k] == doctest::Approx(k < 2 ? 0.0 : 2 * x[k - 1] + 1));
  }
  const json& st = o.run.summary.at("subsystems").at("io").at("statistics");
  CHECK(st.at("datagrams_sent") == 10);  // one per communication point, from 0 to 0.9 s
  CHECK(st.at("datagrams_received").get<long>() >= 9);
  CHECK(st.at("wrong_size") == 0);
  CHECK(st.at("not_finite") == 0);
  if (kTimed) CHECK(o.run.summary.at("real_time").at("deadline_misses") == 0);
}

TEST_CASE("udp: malformed datagrams are counted and held over, or end the run naming them") {
  // The answers to datagrams 3 and 5: 12 bytes, then a NaN.
  auto answer = [](int i, double x) {
    if (i == 3) return std::vector<unsigned char>(12, 0);
    if (i == 5) return bytes_of(std::nan(""));
    return bytes_of(2 * x + 1);
  };
  {
    Partner bad(answer);
    const Outcome o =
        run_with(write_manifest(udp_manifest(bad.port), "udp_bad.json"), "--quiet --real-time 2", "udp_bad");
    REQUIRE(o.run.status() == "completed");
    const auto& t = o.run.table["time"];
    const auto& y = o.run.table["io.echo"];
    REQUIRE(t.size() == 11);
    for (std::size_t k = 2; k < t.size(); ++k) {
      CAPTURE(t[k]);
      const std::size_t sent = k - 2;                       // the datagram whose answer is the output at t[k]
      if (sent == 3 || sent == 5) CHECK(y[k] == y[k - 1]);  // held
      else CHECK(y[k] == doctest::Approx(2 * o.run.table["src.x"][k - 1] + 1));
    }
    const json& st = o.run.summary.at("subsystems").at("io").at("statistics");
    CHECK(st.at("wrong_size") == 1);
    CHECK(st.at("not_finite") == 1);
  }
  {
    Partner bad(answer);
    const Outcome o = run_with(write_manifest(udp_manifest(bad.port, {{"on_malformed", "stop"}}), "udp_bad_stop.json"),
                               "--quiet --real-time 2", "udp_bad_stop");
    CHECK(o.run.status() == "failed");
    CHECK(o.run.exit_code == 1);
    CHECK(contains(o.run.message(), "a datagram of 12 bytes arrived by t = 0.4 s"));
    CHECK(contains(o.run.message(), "expected 8 (1 little-endian float64 values)"));
    CHECK(o.run.summary.at("end_time_reached").get<double>() == doctest::Approx(0.4));
  }
}

TEST_CASE("udp: a silent partner is a timeout, counted once (hold) or the end of the run (stop)") {
  auto first_three = [](int i, double x) { return i < 3 ? bytes_of(2 * x + 1) : std::vector<unsigned char>(); };
  {
    Partner quiet(first_three);
    const Outcome o = run_with(write_manifest(udp_manifest(quiet.port, {{"timeout", 0.12}}), "udp_quiet.json"),
                               "--quiet --real-time 2", "udp_quiet");
    REQUIRE(o.run.status() == "completed");
    CHECK(o.run.summary.at("subsystems").at("io").at("statistics").at("timeouts") == 1);
    const auto& y = o.run.table["io.echo"];
    CHECK(y.back() == doctest::Approx(2 * 0.3 + 1));  // the last answer (to x(0.3), sent at 0.2 s), held
  }
  {
    Partner quiet(first_three);
    const Outcome o = run_with(
        write_manifest(udp_manifest(quiet.port, {{"timeout", 0.12}, {"on_timeout", "stop"}}), "udp_quiet_stop.json"),
        "--quiet --real-time 2", "udp_quiet_stop");
    CHECK(o.run.status() == "failed");
    CHECK(contains(o.run.message(), "no datagram arrived at 127.0.0.1:"));
    CHECK(contains(o.run.message(), "(timeout 0.12"));
  }
}

TEST_CASE("udp: without --real-time every communication point still sends one datagram, in order") {
  Partner listener([](int, double) { return std::vector<unsigned char>(); });
  json m = udp_manifest(listener.port);
  m["subsystems"]["io"]["parameters"].erase("receive");
  m["subsystems"]["io"]["parameters"].erase("listen");
  m["record"]["variables"] = {"src.x"};
  const Outcome o = run_with(write_manifest(m, "udp_send.json"), "--quiet", "udp_send");
  REQUIRE(o.run.status() == "completed");
  CHECK(o.run.summary.at("subsystems").at("io").at("statistics").at("datagrams_sent") == 10);
  for (int i = 0; i < 100 && listener.received < 10; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(listener.received == 10);
  // Under Gauss–Seidel (src before io) the input at T is src.x(T + h) already.
  for (std::size_t k = 0; k < 10; ++k) CHECK(listener.values[k] == doctest::Approx(0.1 * static_cast<double>(k + 1)));
}

TEST_CASE("real time: bad options and fields are refused with the option or the pointer") {
  const fs::path ramp = source("tests/manifests/ramp_gain.json");
  for (const std::string bad : {"0", "-1", "abc", "inf", "nan"}) {
    CAPTURE(bad);
    const CommandResult c = run_command(kEnv + "'" + STRIDE_EXE + "' run '" + ramp.string() + "' --real-time=" + bad);
    CHECK(c.exit_code == 2);
    CHECK(contains(c.output, "--real-time " + bad + ": expected a real-time factor > 0"));
  }
  const std::vector<std::pair<json, std::string>> fields = {
      {{{"factor", 0}}, "/real_time/factor: expected a real-time factor > 0"},
      {{{"factor", "fast"}}, "/real_time/factor: expected a real-time factor > 0"},
      {{{"overrun", "stp"}},
       "/real_time/overrun: expected one of \"continue\", \"stop\", found \"stp\" (did you mean \"stop\"?)"},
      {{{"factr", 2}}, "/real_time/factr: unknown key \"factr\" (did you mean \"factor\"?)"},
      {{{"results", "later"}}, "/real_time/results: expected one of \"background\", \"synchronous\""}};
  for (const auto& field : fields) {  // no structured binding: CAPTURE cannot take one (clang 14)
    const json& value = field.first;
    const auto& message = field.second;
    CAPTURE(value.dump());
    json m = json::parse(slurp(ramp));
    m["real_time"] = value;
    const CommandResult c =
        run_command(kEnv + "'" + STRIDE_EXE + "' validate '" + write_manifest(m, "bad_real_time.json").string() + "'");
    CHECK(c.exit_code == 2);
    CHECK(contains(c.output, message));
  }
  // The udp plugin's parameters, at their pointers.
  json m = udp_manifest(9);
  m["subsystems"]["io"]["parameters"].erase("send_to");
  CommandResult c =
      run_command(kEnv + "'" + STRIDE_EXE + "' validate '" + write_manifest(m, "udp_bad.json").string() + "'");
  CHECK(c.exit_code == 2);
  CHECK(contains(c.output, "/subsystems/io/parameters/send_to"));
  m = udp_manifest(9);
  m["subsystems"]["io"]["parameters"]["receive"] = {{{"name", "a"}}, {{"nam", "b"}}};
  c = run_command(kEnv + "'" + STRIDE_EXE + "' validate '" + write_manifest(m, "udp_bad.json").string() + "'");
  CHECK(c.exit_code == 2);
  CHECK(contains(c.output, "/subsystems/io/parameters/receive/1/nam"));
  // A sweep is never paced.
  json with_rt = json::parse(slurp(ramp));
  with_rt["real_time"] = {{"factor", 1}};
  const fs::path paced = write_manifest(with_rt, "paced.json");
  const json sweep = {{"format", 1},
                      {"manifest", paced.string()},
                      {"axes", {{{"name", "k"}, {"pointers", {"/subsystems/amp/parameters/k"}}, {"values", {1, 2}}}}},
                      {"step_axis", "k"},
                      {"output", (scratch() / "sweep_out").string()}};
  c = run_command(kEnv + "'" + STRIDE_EXE + "' sweep '" + write_manifest(sweep, "sweep.json").string() + "'");
  CHECK(c.exit_code == 2);
  CHECK(contains(c.output, "/real_time"));
  CHECK(contains(c.output, "a sweep runs its points as fast as they go"));
}

TEST_CASE("real time: examples/real_time/operator.py drives each operator manifest over UDP while it runs") {
  // The operator's scripted manoeuvre reaches the valve: every row's spool position is the
  // cylinder's initial one plus a set-point the script sends, and the crane's answers reach the
  // operator (it prints one line per 0.25 s it received). The log crane (MLCP, 16 ms) only where
  // it keeps real time: the release build.
  struct Case {
    std::string crane, manifest, valve, kappa;
    double end;                // s, simulated (and wall at factor 1)
    std::vector<double> sent;  // the script's set-points until then
  };
  std::vector<Case> cases = {{"single",
                              "manifests/real_time/crane1_operator.json",
                              "operator.valve",
                              "cylinder.kappa",
                              5.5,
                              {0.0, -0.01, 0.02}}};
  if (kTimed)
    cases.push_back({"log",
                     "manifests/real_time/log_crane_operator.json",
                     "operator.lift_valve",
                     "cylinder1.kappa",
                     4.5,
                     {0.0, 0.25}});
  for (const Case& c : cases) {
    CAPTURE(c.crane);
    const fs::path op_out = scratch() / ("operator_" + c.crane + ".txt");
    // The operator runs beside the crane for as long as the crane's run takes (at most 60 s).
    const std::string op = "python3 '" + source("examples/real_time/operator.py").string() + "' --crane " + c.crane +
                           " --duration 60 >'" + op_out.string() + "' 2>&1 & OP=$!; ";
    const fs::path out = scratch() / ("operator_run_" + c.crane);
    fs::remove_all(out);
    const fs::path script = scratch() / ("operator_" + c.crane + ".sh");
    std::ofstream(script) << op << kEnv << "'" << STRIDE_EXE << "' run '" << source(c.manifest).string() << "' --out '"
                          << out.string() << "' --set /coupling/end=" << c.end << " --quiet >'" << out.string()
                          << ".console' 2>&1\nrc=$?\nkill $OP\nwait $OP 2>/dev/null\nexit $rc\n";
    INFO("script: " << slurp(script));
    const int st = std::system(("bash '" + script.string() + "'").c_str());
    INFO("console: " << slurp(out.string() + ".console"));
    REQUIRE(WIFEXITED(st));
    REQUIRE(WEXITSTATUS(st) == 0);
    const json summary = json::parse(slurp(out / "summary.json"));
    CHECK(summary.at("status") == "completed");
    const Table t = read_csv(out / "results.csv");
    const auto& valve = t[c.valve];
    const auto& kappa = t[c.kappa];
    REQUIRE(valve.size() > 250);
    std::set<double> seen;
    for (std::size_t k = 0; k < valve.size(); ++k) {
      CAPTURE(t["time"][k]);
      CHECK(std::find(c.sent.begin(), c.sent.end(), valve[k]) != c.sent.end());
      seen.insert(valve[k]);
      // The spool follows the set-point held over the step (zoh): at most one row behind.
      const bool held = k > 0 && valve[k - 1] == valve[k];
      if (held) CHECK(kappa[k] - kappa[0] == doctest::Approx(valve[k]).epsilon(1e-12));
    }
    CHECK(seen.size() == c.sent.size());  // every set-point of the script arrived
    const json& udp = summary.at("subsystems").at("operator").at("statistics");
    CHECK(udp.at("datagrams_received").get<long>() > 100);
    CHECK(udp.at("wrong_size") == 0);
    CHECK(contains(slurp(op_out), c.crane == "log" ? "log height" : "cylinder"));
    CHECK(summary.at("real_time").at("factor") == 1);
  }
}
