// The view_input plugin (plugins/subsystems/view_input, docs/viewer.md "Live") without a browser,
// through the `stride` executable:
//  - a batch run holds every control at its initial value, its statistics say no board is attached
//    and no update arrived;
//  - `stride run --view --view-exit --port 0` attaches the board, serves while the run goes and
//    ends with the run (exit 0) with the same results;
//  - bad controls are refused with their JSON pointer.
// The live page itself (rows over the WebSocket, a slider moved, hostile clients) is
// tests/browser/test_live.py (ctest browser_live).
#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "stride_run.hpp"

namespace {

using namespace stride_test;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

json live_manifest() {
  std::ifstream in(fs::path(STRIDE_SOURCE_DIR) / "tests/browser/live_two_mass.json");
  return json::parse(in);
}

fs::path write_manifest(const json& m, const std::string& name) {
  fs::create_directories(scratch());
  const fs::path p = scratch() / name;
  std::ofstream(p) << m.dump(2);
  return p;
}

// `stride run MANIFEST --out <scratch>/tag ARGS --quiet`: exit code, output, summary, rows.
struct Outcome {
  CommandResult command;
  json summary;
  Table table;
};

Outcome run_live_manifest(const std::string& args, const std::string& tag) {
  const fs::path out = scratch() / tag;
  fs::remove_all(out);
  Outcome o;
  o.command =
      run_command("'" + std::string(STRIDE_EXE) + "' run '" + write_manifest(live_manifest(), tag + ".json").string() +
                  "' --out '" + out.string() + "' --quiet " + args);
  std::ifstream sf(out / "summary.json");
  if (sf) o.summary = json::parse(sf, nullptr, false);
  if (fs::exists(out / "results.csv")) o.table = read_csv(out / "results.csv");
  return o;
}

void check_initial_values(const Outcome& o) {
  INFO(o.command.output);
  REQUIRE(o.command.exit_code == 0);
  REQUIRE(o.table.rows() == 301);
  for (std::size_t i = 0; i < o.table.rows(); ++i) {
    CHECK(o.table["panel.gain"][i] == 0.5);
    CHECK(o.table["panel.limit"][i] == 0.0);
    CHECK(o.table["panel.push"][i] == 0.0);
  }
  const json& stats = o.summary["subsystems"]["panel"]["statistics"];
  CHECK(stats["updates_received"] == 0);
  CHECK(o.summary["column_units"]["panel.limit"] == "N");
}

}  // namespace

TEST_CASE("view_input: without a browser every control holds its initial value") {
  const Outcome batch = run_live_manifest("", "view_input_batch");
  check_initial_values(batch);
  CHECK(batch.summary["subsystems"]["panel"]["statistics"]["board"] == "none");
}

TEST_CASE("view_input: --view --view-exit attaches the board, prints the URL and ends with the run") {
  const Outcome live = run_live_manifest("--view --view-exit --port 0", "view_input_live");
  check_initial_values(live);
  CHECK(contains(live.command.output, "stride run: live view at http://127.0.0.1:"));
  CHECK(live.summary["subsystems"]["panel"]["statistics"]["board"] == "attached");
  CHECK(live.summary["subsystems"]["panel"]["statistics"]["page_messages_refused"] == 0);
}

TEST_CASE("view_input: bad controls are refused with their JSON pointer") {
  const std::vector<std::pair<json, std::string>> cases = {
      {json::array(), "/subsystems/panel/parameters/controls: expected at least one control"},
      {json::array({{{"name", "a"}, {"min", 1}, {"max", 1}}}), "/subsystems/panel/parameters/controls/0/max"},
      {json::array({{{"name", "a"}, {"min", 0}}}), "/subsystems/panel/parameters/controls/0/max"},
      {json::array({{{"name", "a"}, {"min", 0}, {"max", 1}, {"initial", 2}}}),
       "/subsystems/panel/parameters/controls/0/initial"},
      {json::array({{{"name", "a"}, {"kind", "knob"}}}), "/subsystems/panel/parameters/controls/0/kind"},
      {json::array({{{"name", "a"}, {"kind", "button"}}, {{"nam", "b"}}}),
       "/subsystems/panel/parameters/controls/1/nam"},
      {json::array({{{"name", "a"}, {"kind", "button"}}, {{"name", "a"}, {"kind", "button"}}}),
       "/subsystems/panel/parameters/controls/1/name"},
      {json::array({{{"name", "a"}, {"min", 0}, {"max", "1"}}}), "/subsystems/panel/parameters/controls/0/max"},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& controls = cases[i].first;
    const std::string& pointer = cases[i].second;
    CAPTURE(controls.dump());
    json m = live_manifest();
    m["subsystems"]["panel"]["parameters"]["controls"] = controls;
    m["record"]["variables"] = {"fast.x"};
    const CommandResult c = run_command("'" + std::string(STRIDE_EXE) + "' validate '" +
                                        write_manifest(m, "view_input_bad.json").string() + "'");
    CHECK(c.exit_code == 2);
    CHECK(contains(c.output, pointer));
  }
}
