// Messages of plugins (sdk/include/stride/log.hpp): formatting and filtering in the SDK with a
// Logger of the test's own; then through the host with the test plugin test_log
// (tests/broken_plugins/runtime/test_log.cpp), whose messages are counted from its rules
// (a warning every step ending above the limit, ...) independently of the host: log.txt,
// the rate limit, the stderr threshold, the counts in summary.json, and manifest errors in
// "log" and in plugin version requirements.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "allocation_counter.hpp"
#include "input/plugin_version.hpp"
#include "core/run_log.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride_run.hpp"

namespace fs = std::filesystem;
using stride_test::run_command;

// AddressSanitizer keeps freed memory in quarantine: resident memory says nothing under it.
#if defined(__SANITIZE_ADDRESS__)
#define STRIDE_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRIDE_TEST_ASAN 1
#endif
#endif

namespace {

// Keeps what it is given.
class Capture final : public stride::Logger {
 public:
  explicit Capture(stride::LogLevel threshold) : Logger(threshold) {}
  void write(stride::LogLevel level, const stride::LogFormat& site, std::string_view text) noexcept override {
    levels.push_back(level);
    texts.emplace_back(text);
    lines.push_back(site.line);
  }
  std::vector<stride::LogLevel> levels;
  std::vector<std::string> texts;
  std::vector<int> lines;
};

// An integrator with nothing to integrate, to reach the protected helpers.
class Speaker final : public stride::Integrator {
 public:
  void reset(stride::OdeSystem&, double, std::span<const double>) override {}
  double step(stride::OdeSystem&, double t, double h, std::span<double>) override { return t + h; }
  void say_debug(double x) const { log_debug("x = {}", x); }
  void say(const std::string& s, int n, double x) const { log_warning("{} has {} items at {} m", s, n, x); }
  void say_more(int a, int b) const { log_info("only {}", a, b); }
  void say_long(const std::string& s) const { log_error("{}", s); }
  void say_twice() const {
    for (int i = 0; i < 2; ++i) log_info("same place");
  }
};

std::string read(const fs::path& f) {
  std::ifstream in(f);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

long count(const std::vector<std::string>& lines, const std::string& part) {
  return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
}

// tests/manifests/log_ramp.json with "plugin_paths" set to the test plugins, written to a
// scratch folder with `edit` applied.
fs::path manifest(const std::string& tag, const std::function<void(stride_test::json&)>& edit = {}) {
  std::ifstream in(STRIDE_SOURCE_DIR "/tests/manifests/log_ramp.json");
  stride_test::json m = stride_test::json::parse(in);
  m["plugin_paths"] = {STRIDE_TEST_RUNTIME_DIR};
  if (edit) edit(m);
  const fs::path dir = stride_test::scratch() / tag;
  fs::create_directories(dir);
  const fs::path file = dir / "manifest.json";
  std::ofstream(file) << m.dump(2);
  return file;
}

struct Outcome {
  stride_test::CommandResult command;
  stride_test::json summary;
  std::vector<std::string> log;
};

Outcome run(const fs::path& file) {
  const fs::path out = file.parent_path() / "out";
  Outcome o;
  o.command = run_command("'" STRIDE_EXE "' run '" + file.string() + "' --quiet --out '" + out.string() + "'");
  std::ifstream sf(out / "summary.json");
  if (sf) o.summary = stride_test::json::parse(sf, nullptr, false);
  o.log = lines_of(read(out / "log.txt"));
  return o;
}

std::vector<stride::host::Diagnostic> problems(const fs::path& file) {
  static const stride::host::PluginRegistry reg = [] {
    stride::host::PluginRegistry r;
    r.scan({STRIDE_BUILD_PLUGIN_DIR, STRIDE_TEST_RUNTIME_DIR});
    return r;
  }();
  try {
    stride::host::Experiment ex(stride::host::read_manifest(file), reg);
  } catch (const stride::host::ManifestError& e) {
    return e.diagnostics();
  }
  return {};
}

const stride::host::Diagnostic* at(const std::vector<stride::host::Diagnostic>& d, const std::string& pointer) {
  for (const auto& x : d)
    if (x.pointer == pointer) return &x;
  return nullptr;
}

// test_log's steps: k = 1..100 of 0.01 s; warnings where y = t_k > 0.5 m.
constexpr int kSteps = 100;
long expected_warnings() {
  long n = 0;
  for (int k = 1; k <= kSteps; ++k) n += k * 0.01 > 0.5;
  return n;
}

}  // namespace

TEST_CASE("log: formatting, filtering and sites in the SDK") {
  Capture sink(stride::LogLevel::info);
  Speaker s;
  s.bind_logger(sink);
  s.say_debug(1.0);  // below the threshold
  CHECK(sink.texts.empty());
  s.say("pump", 3, 0.125);
  s.say_more(1, 2);
  REQUIRE(sink.texts.size() == 2);
  CHECK(sink.texts[0] == "pump has 3 items at 0.125 m");
  CHECK(sink.levels[0] == stride::LogLevel::warning);
  CHECK(sink.texts[1] == "only 1 2");  // an argument beyond the placeholders follows
  s.say_long(std::string(1000, 'a'));
  CHECK(sink.texts.back() == std::string(stride::log_detail::Line::capacity, 'a') + "...");
  s.say_twice();
  REQUIRE(sink.lines.size() == 5);
  CHECK(sink.lines[3] == sink.lines[4]);  // one site: the host rate-limits by it
  CHECK(sink.lines[3] != sink.lines[0]);

  // A filtered message neither allocates nor reaches the Logger; a written one allocates
  // nothing in the plugin (this Logger's vectors are the test's).
  const std::size_t before = sink.texts.size();
  const long a0 = stride_test::allocations.load();
  for (int i = 0; i < 1000; ++i) s.say_debug(i);
  CHECK(stride_test::allocations.load() == a0);
  CHECK(sink.texts.size() == before);
  Capture quiet(stride::LogLevel::off);
  Speaker q;
  q.bind_logger(quiet);
  const long a1 = stride_test::allocations.load();
  q.say("pump", 1, 2.0);
  CHECK(stride_test::allocations.load() == a1);
  CHECK(quiet.texts.empty());
}

TEST_CASE("log: log.txt, rate limit, stderr threshold and summary counts") {
  const Outcome o = run(manifest("run"));
  INFO(o.command.output);
  REQUIRE(o.command.exit_code == 0);
  const auto& log = o.log;
  const long warnings = expected_warnings();
  REQUIRE(warnings == 50);
  // Written: 3 infos (start, marks 3 and 7), 10 of the warnings, 1 error, and one line for
  // the warnings left out; no debug at level info.
  CHECK(count(log, "[info] ramp") == 3);
  CHECK(count(log, "[info] ramp, t = 0 s: starts at t0 = 0 s with slope 1 m/s") == 1);
  CHECK(count(log, "[info] ramp, t = 0.02 s: mark at step 3") == 1);  // its step began at 0.02 s
  CHECK(count(log, "[debug]") == 0);
  CHECK(count(log, "[warning] ramp, t = 0.5 s: y = 0.51 m is above the limit 0.5 m") == 1);
  CHECK(count(log, "is above the limit") == 10 + 1);
  CHECK(count(log, "further ones are counted at the end") == 1);
  CHECK(count(log, "[warning] ramp: " + std::to_string(warnings - 10) + " more messages from test_log.cpp:") == 1);
  CHECK(count(log, "[error] ramp, t = 0.79 s: passed error_at = 0.8 s") +
            count(log, "[error] ramp, t = 0.8 s: passed error_at = 0.8 s") == 1);
  CHECK(log.size() == 3 + 10 + 1 + 1);
  CHECK(log.back().find("more messages") != std::string::npos);  // the count comes last

  // stderr from "warning" up: the warnings, the error and the count, no info.
  const auto console = lines_of(o.command.output);
  CHECK(count(console, "is above the limit") == 11);
  CHECK(count(console, "[error] ramp") == 1);
  CHECK(count(console, "[info]") == 0);

  // summary.json counts every message of a level, written or left out.
  const auto& ramp = o.summary["subsystems"]["ramp"]["messages"];
  CHECK(ramp["warnings"] == warnings);
  CHECK(ramp["errors"] == 1);
  CHECK(ramp["left_out"] == warnings - 10);
  CHECK(o.summary["subsystems"]["amp"]["messages"]["warnings"] == 0);
  CHECK(o.summary["log"]["warnings"] == warnings);
  CHECK(o.summary["log"]["file"] == "log.txt");
}

namespace {

// A RunLog of its own writing into <scratch>/<tag>/log.txt, stderr captured into a file while
// it lives.
struct DirectLog {
  fs::path dir;
  stride::host::RunLog log;
  int saved_stderr = -1;
  DirectLog(const std::string& tag, stride::host::LogConfig config)
      : dir(stride_test::scratch() / tag), log((fs::create_directories(dir), config)) {
    std::fflush(stderr);
    saved_stderr = ::dup(2);
    const int f = ::open((dir / "stderr.txt").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(f, 2);
    ::close(f);
    REQUIRE(log.open(dir / "log.txt").empty());
  }
  // Closes the log and gives stderr back: (log.txt, stderr) as written.
  std::pair<std::string, std::string> finish() {
    log.close();
    std::fflush(stderr);
    ::dup2(saved_stderr, 2);
    ::close(saved_stderr);
    return {read(dir / "log.txt"), read(dir / "stderr.txt")};
  }
};

// This process's resident memory in bytes (/proc/self/statm).
long resident_bytes() {
  long pages = 0, resident = 0;
  std::ifstream("/proc/self/statm") >> pages >> resident;
  return resident * ::sysconf(_SC_PAGESIZE);
}

}  // namespace

TEST_CASE("log: a message is one printable line: newlines and control characters escaped, bad UTF-8 replaced") {
  DirectLog d("escaped", stride::host::LogConfig{});
  stride::Logger& sink = d.log.sink("ramp", "ramp", nullptr);
  sink.write(stride::LogLevel::warning, stride::LogFormat("a"), "spool at 1\n[error] forged line");
  sink.write(stride::LogLevel::warning, stride::LogFormat("b"), "\x1b[2J\x1b[31mred\x07 tab\there\r");
  sink.write(stride::LogLevel::warning, stride::LogFormat("c"), "bad \xff\xfe utf-8 \xc3( and C1 \xc2\x9b end");
  sink.write(stride::LogLevel::warning, stride::LogFormat("d"), "keeps \xc3\xa9 and \xe2\x82\xac");
  const auto [file, console] = d.finish();
  for (const std::string& text : {file, console}) {
    const auto lines = lines_of(text);
    REQUIRE(lines.size() == 4);
    CHECK(lines[0] == "[warning] ramp: spool at 1\\n[error] forged line");
    CHECK(lines[1] == "[warning] ramp: \\x1b[2J\\x1b[31mred\\x07 tab\\there\\r");
    CHECK(lines[2] == "[warning] ramp: bad \xef\xbf\xbd\xef\xbf\xbd utf-8 \xef\xbf\xbd( and C1 \\u009b end");
    CHECK(lines[3] == "[warning] ramp: keeps \xc3\xa9 and \xe2\x82\xac");
    CHECK(text.find('\x1b') == std::string::npos);
  }
}

TEST_CASE("log: a 10 MB message is cut to the per-message limit in log.txt and on stderr") {
  DirectLog d("huge", stride::host::LogConfig{});
  const std::string huge(10'000'000, 'x');
  d.log.sink("ramp", "ramp", nullptr).write(stride::LogLevel::error, stride::LogFormat("{}"), huge);
  const auto [file, console] = d.finish();
  const std::size_t limit = stride::host::RunLogBounds{}.message_bytes;
  REQUIRE(limit == 1024);
  for (const std::string& text : {file, console}) {
    const auto lines = lines_of(text);
    REQUIRE(lines.size() == 1);
    CHECK(lines[0].size() < limit + 64);
    CHECK(lines[0].find("... (" + std::to_string(huge.size() - limit) + " bytes cut)") != std::string::npos);
  }
}

TEST_CASE("log: the rate limit goes by the message text, not by the line it is written from") {
  stride::host::LogConfig config;
  config.repeats = 10;
  DirectLog d("by_text", config);
  stride::Logger& sink = d.log.sink("ramp", "ramp", nullptr);
  // One text from 100 places (a plugin that writes from generated code, or with made-up lines).
  for (int i = 0; i < 100; ++i)
    sink.write(stride::LogLevel::warning, stride::LogFormat("pressure {} is high", "gen.cpp", i),
               "pressure " + std::to_string(i) + " is high");
  // Another text from one place.
  for (int i = 0; i < 3; ++i)
    sink.write(stride::LogLevel::warning, stride::LogFormat("valve {} sticks", "gen.cpp", 7), "valve sticks");
  CHECK(d.log.counts("ramp").suppressed == 90);
  const auto [file, console] = d.finish();
  const auto lines = lines_of(file);
  CHECK(count(lines, "is high") == 10 + 1);
  CHECK(count(lines, "valve sticks") == 3);
  CHECK(count(lines, "90 more messages from gen.cpp:0 left out (100 in all; the first: \"pressure 0 is high\")") == 1);
}

TEST_CASE("log: 10^6 messages from distinct places and texts keep memory and log.txt bounded") {
  stride::host::LogConfig config;
  DirectLog d("million", config);
  stride::Logger& sink = d.log.sink("ramp", "ramp", nullptr);
  // Texts that live as long as the log (LogFormat keeps a view).
  std::vector<std::string> formats(1'000'000);
  for (std::size_t i = 0; i < formats.size(); ++i) formats[i] = "event " + std::to_string(i);
  const long before = resident_bytes();
  for (std::size_t i = 0; i < formats.size(); ++i)
    sink.write(stride::LogLevel::info, stride::LogFormat(formats[i].c_str(), "gen.cpp", static_cast<int>(i)),
               formats[i]);
  const long grown = resident_bytes() - before;
  MESSAGE("10^6 messages of distinct texts: resident memory grew by " << grown << " bytes");
  CHECK(d.log.texts() == stride::host::RunLogBounds{}.texts);
#ifndef STRIDE_TEST_ASAN
  CHECK(grown < 16L << 20);  // 176 MB before the limits (AddressSanitizer keeps freed memory: not there)
#endif
  const auto [file, console] = d.finish();
  const auto lines = lines_of(file);
  // The first 1000 texts once each, 10 of the others, and one line counting the rest.
  CHECK(lines.size() == 1000 + 10 + 1);
  CHECK(lines.back().find("998990 more messages with texts beyond the first 1000 told apart left out (999000 in all") !=
        std::string::npos);
  CHECK(file.size() < 100'000);
}

TEST_CASE("log: log.txt and stderr stop at their limits per run, and say how much was left out") {
  stride::host::LogConfig config;
  config.repeats = 1'000'000;
  DirectLog d("full", config);
  stride::Logger& sink = d.log.sink("ramp", "ramp", nullptr);
  const std::string text(1000, 'p');
  const int messages = 20'000;  // about 20 MB
  for (int i = 0; i < messages; ++i) sink.write(stride::LogLevel::warning, stride::LogFormat("{}"), text);
  const auto [file, console] = d.finish();
  const stride::host::RunLogBounds b;
  const std::size_t line = std::string("[warning] ramp: ").size() + text.size() + 1;
  const long in_file = static_cast<long>(b.file_bytes / line), on_console = static_cast<long>(b.stderr_bytes / line);
  CHECK(file.size() <= b.file_bytes + 400);
  CHECK(console.size() <= b.stderr_bytes + 400);
  const auto file_lines = lines_of(file);
  CHECK(count(file_lines, std::string(1000, 'p')) == in_file);
  CHECK(count(file_lines, "log.txt reached its limit of 16 MiB for this run") == 1);
  CHECK(file_lines.back() == "[warning] log: log.txt: " + std::to_string(messages - in_file) + " message lines (" +
                                 std::to_string((messages - in_file) * line) +
                                 " bytes) left out after the limit of 16 MiB");
  const auto console_lines = lines_of(console);
  CHECK(count(console_lines, std::string(1000, 'p')) == on_console);
  CHECK(count(console_lines, "stderr reached its limit of 1 MiB for this run; further messages are in log.txt only") ==
        1);
  CHECK(console_lines.back().find("[warning] log: stderr: " + std::to_string(messages - on_console) +
                                  " message lines") == 0);
  CHECK(d.log.counts("ramp").suppressed == messages - in_file);
}

TEST_CASE("log: a log.txt that cannot be written (a folder of that name) leaves no running summary and no lock") {
  const fs::path file = manifest("log_folder");
  const fs::path out = file.parent_path() / "out";
  fs::create_directories(out / "log.txt");
  const auto r = run_command("'" STRIDE_EXE "' run '" + file.string() + "' --quiet --out '" + out.string() + "'");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("cannot replace " + (out / "log.txt").string() + ": it is a folder") != std::string::npos);
  CHECK_FALSE(fs::exists(out / "summary.json"));
  CHECK_FALSE(fs::exists(out / ".stride.lock"));
  // A run that ends removes its lock file too.
  fs::remove(out / "log.txt");
  const auto ok = run_command("'" STRIDE_EXE "' run '" + file.string() + "' --quiet --out '" + out.string() + "'");
  CHECK(ok.exit_code == 0);
  CHECK(fs::exists(out / "summary.json"));
  CHECK_FALSE(fs::exists(out / ".stride.lock"));
}

TEST_CASE("log: level, stderr_level and repeats from the manifest") {
  const Outcome o = run(manifest("debug", [](stride_test::json& m) {
    m["log"] = {{"level", "debug"}, {"stderr_level", "error"}, {"repeats", 1000}};
  }));
  INFO(o.command.output);
  REQUIRE(o.command.exit_code == 0);
  CHECK(count(o.log, "[debug] ramp") == kSteps);
  CHECK(count(o.log, "is above the limit") == expected_warnings());  // none left out
  CHECK(count(o.log, "more messages") == 0);
  const auto console = lines_of(o.command.output);
  CHECK(count(console, "[warning]") == 0);
  CHECK(count(console, "[error] ramp") == 1);

  const Outcome off = run(manifest("off", [](stride_test::json& m) {
    m["log"] = {{"level", "off"}};
  }));
  REQUIRE(off.command.exit_code == 0);
  CHECK(off.log.empty());
  CHECK(off.summary["subsystems"]["ramp"]["messages"]["warnings"] == 0);
}

TEST_CASE("log: manifest errors in log settings") {
  auto d = problems(manifest("bad_level", [](stride_test::json& m) {
    m["log"] = {{"level", "verbose"}, {"stderr_level", 2}, {"repeats", 0}, {"colour", true}};
  }));
  const auto* level = at(d, "/log/level");
  REQUIRE(level);
  CHECK(level->file.find("manifest.json") != std::string::npos);
  CHECK(level->message.find("expected one of \"debug\", \"info\", \"warning\", \"error\", \"off\", found \"verbose\"") != std::string::npos);
  REQUIRE(at(d, "/log/stderr_level"));
  CHECK(at(d, "/log/stderr_level")->message.find("found integer 2") != std::string::npos);
  REQUIRE(at(d, "/log/repeats"));
  CHECK(at(d, "/log/repeats")->message.find("expected an integer from 1 to 1000000") != std::string::npos);
  REQUIRE(at(d, "/log/colour"));
  CHECK(at(d, "/log/colour")->message.find("allowed keys: level, stderr_level, repeats") != std::string::npos);
}

TEST_CASE("versions: requirements parsed and compared") {
  using namespace stride::host;
  std::vector<VersionClause> c;
  CHECK(parse_requirement(">=1.2, <2", c).empty());
  CHECK(c.size() == 2);
  CHECK(satisfies({1, 2}, c));
  CHECK(satisfies({1, 2, 0}, c));
  CHECK(satisfies({1, 10}, c));  // numeric, not text: 1.10 > 1.2
  CHECK_FALSE(satisfies({1, 1, 9}, c));
  CHECK_FALSE(satisfies({2}, c));
  CHECK(parse_requirement("==1.0", c).empty());
  CHECK(satisfies({1}, c));
  CHECK_FALSE(satisfies({1, 0, 1}, c));
  CHECK(parse_requirement("1.0", c).empty());  // a bare version means ==
  CHECK(parse_requirement(">1", c).empty());
  CHECK_FALSE(satisfies({1}, c));
  CHECK(satisfies({1, 0, 1}, c));
  CHECK(parse_requirement("<=3.1", c).empty());
  CHECK(satisfies({3, 1}, c));
  CHECK_FALSE(satisfies({3, 1, 1}, c));
  for (const char* bad : {"", ">=", "=>1.2", "~1.2", ">=1.2,", ">=1.x", ">=1..2", "> = 1", ">=-1", "1.2.", ">=1.2 <2"}) {
    CAPTURE(bad);
    CHECK_FALSE(parse_requirement(bad, c).empty());
  }
  CHECK(parse_version("1.2.3") == Version{1, 2, 3});
  CHECK_FALSE(parse_version("1.0-beta"));
}

TEST_CASE("versions: a requirement in a manifest is checked against the plugin") {
  // test_log is 1.2.3 and zoh 1.0: the manifest's ">=1.2, <2" and ">=1" hold.
  CHECK(problems(manifest("version_ok")).empty());
  auto d = problems(manifest("version_bad", [](stride_test::json& m) {
    m["subsystems"]["ramp"]["version"] = ">=2";
    m["connections"][0]["extrapolator"]["version"] = "<1";
    m["subsystems"]["amp"]["version"] = ">=1,";
  }));
  const auto* ramp = at(d, "/subsystems/ramp/version");
  REQUIRE(ramp);
  CHECK(ramp->message.find("plugin \"test_log\" is version 1.2.3, which does not satisfy \">=2\"") != std::string::npos);
  const auto* zoh = at(d, "/connections/0/extrapolator/version");
  REQUIRE(zoh);
  CHECK(zoh->message.find("is version 1.0, which does not satisfy \"<1\"") != std::string::npos);
  const auto* amp = at(d, "/subsystems/amp/version");
  REQUIRE(amp);
  CHECK(amp->message.find("expected a version requirement") != std::string::npos);
  CHECK(amp->message.find("an empty clause") != std::string::npos);
  auto t = problems(manifest("version_type", [](stride_test::json& m) { m["subsystems"]["ramp"]["version"] = 1.2; }));
  REQUIRE(at(t, "/subsystems/ramp/version"));
  CHECK(at(t, "/subsystems/ramp/version")->message.find("found number 1.2") != std::string::npos);
}
