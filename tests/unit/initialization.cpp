// Initialization of outputs with direct feedthrough: the host evaluates every subsystem once,
// then again only those at the end of a feedthrough chain of each length (issue 12, item 4).
// Checked on chains of test gains (y = k u, direct feedthrough, tests/broken_plugins/runtime)
// fed by a ramp: at t0 every gain's output is the product of the gains before it times the
// ramp, which a pass too few (or a pass in the wrong order) would leave at zero.
#include <doctest/doctest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride_run.hpp"

namespace fs = std::filesystem;
using namespace stride::host;
using stride::json;

namespace {

const PluginRegistry& registry() {
  static const PluginRegistry reg = [] {
    PluginRegistry r;
    r.scan({STRIDE_BUILD_PLUGIN_DIR, STRIDE_TEST_RUNTIME_DIR});
    return r;
  }();
  return reg;
}

// ramp (slope 1, t0 = 1) -> g0 -> ... -> g{n-1}, gain k_j = (j + 2)/(j + 1), so g_j's output at
// t0 is j + 2. The manifest lists the gains last first; `branch` adds a second chain of gains
// h0 -> h1 fed by g{n/2}, and a gain fed by a ramp directly, to give the passes several depths.
json chain(std::size_t n, const std::string& scheme) {
  json subs = json::object(), conns = json::array();
  for (std::size_t j = n; j-- > 0;)
    subs["g" + std::to_string(j)] = {{"plugin", "test_gain"}, {"parameters", {{"k", double(j + 2) / double(j + 1)}}}, {"step", 0.01}};
  subs["h1"] = {{"plugin", "test_gain"}, {"parameters", {{"k", 3.0}}}, {"step", 0.005}};
  subs["h0"] = {{"plugin", "test_gain"}, {"parameters", {{"k", 2.0}}}, {"step", 0.01}};
  subs["ramp"] = {{"plugin", "test_ramp"}, {"parameters", {{"slope", 1.0}}}, {"step", 0.01}};
  subs["direct"] = {{"plugin", "test_gain"}, {"parameters", {{"k", -1.0}}}, {"step", 0.01}};
  for (std::size_t j = 0; j < n; ++j)
    conns.push_back({{"from", j == 0 ? std::string("ramp.y") : "g" + std::to_string(j - 1) + ".y"}, {"to", "g" + std::to_string(j) + ".u"}});
  conns.push_back({{"from", "g" + std::to_string(n / 2) + ".y"}, {"to", "h0.u"}});
  conns.push_back({{"from", "h0.y"}, {"to", "h1.u"}});
  conns.push_back({{"from", "ramp.y"}, {"to", "direct.u"}});
  return {{"format", 1},
          {"subsystems", subs},
          {"connections", conns},
          {"coupling", {{"scheme", scheme}, {"macro_step", 0.01}, {"start", 1.0}, {"end", 1.02}}},
          {"record", {{"interval", 0.01}}},
          {"output", "out/chain"}};
}

}  // namespace

TEST_CASE("initialization: outputs at t0 are exact along feedthrough chains of any length") {
  const fs::path dir = stride_test::scratch() / "initialization";
  for (const char* scheme : {"jacobi", "gauss_seidel", "multirate"})
    for (std::size_t n : {1, 2, 7, 60}) {
      CAPTURE(scheme);
      CAPTURE(n);
      Experiment ex(read_manifest_text(chain(n, scheme).dump(), dir / "chain.json"), registry());
      RunOptions opt;
      opt.progress = false;
      opt.output = dir / "out";
      const RunResult r = run(ex, opt);
      REQUIRE(r.status == RunStatus::completed);
      const auto t = stride_test::read_csv(dir / "out" / "results.csv");
      REQUIRE(t.rows() == 3);
      CHECK(t["time"][0] == 1.0);
      CHECK(t["ramp.y"][0] == doctest::Approx(1.0).epsilon(1e-12));
      CHECK(t["direct.y"][0] == doctest::Approx(-1.0).epsilon(1e-12));
      for (std::size_t j = 0; j < n; ++j) CHECK(t["g" + std::to_string(j) + ".y"][0] == doctest::Approx(double(j + 2)).epsilon(1e-12));
      CHECK(t["h0.y"][0] == doctest::Approx(2.0 * double(n / 2 + 2)).epsilon(1e-12));
      CHECK(t["h1.y"][0] == doctest::Approx(6.0 * double(n / 2 + 2)).epsilon(1e-12));
    }
}
