// How the host's cost grows with the number of subsystems (issue 12, item 4).
//
// A ring of N subsystems of the two-mass test (González 2011): even ones are the fast mass
// (rk4, 10 ms), odd ones the slow mass (rk4, 20 ms); subsystem i reads the position x of
// subsystem i - 1 through a zero-order hold, subsystem 0 that of N - 1. Positions have no
// direct feedthrough, so initialization needs no pass beyond evaluating every subsystem once.
// The end time is chosen so that every run takes about the same number of subsystem steps
// (--steps), whatever N.
//
// For each scheme (Jacobi with a 20 ms macro step, multirate slowest-first and fastest-first)
// and each N it prints the median over --repeat runs of
//   - initialization (Master::initialize: initial state, passes, equilibrium, first outputs),
//   - stepping time per subsystem step (the master's loop / the steps all subsystems took),
// and their ratios to the smallest N. A table of memory follows (heap bytes in use, glibc's
// mallinfo2, per subsystem and per connection): what building the experiment keeps (graph,
// plugin objects) and what a run adds by the end of its initialization (the run state, the
// plugins' work memory, the extrapolators' histories); per connection is the ring less the
// same N subsystems unconnected, divided by N. With the tests built, it also times the initialization of
// a chain ramp -> gain -> gain -> ... of N test gains (each with direct feedthrough): the
// longest feedthrough chain has N links, the worst case for the initialization passes.
//
//   ring_scaling [--sizes 8,16,...] [--repeat 5] [--steps 400000] [--schemes ...,memory,chain]
//
// Not a test: it checks that every run completed with the expected number of steps, and that
// the chain's outputs at t0 are exact, and exits 1 otherwise.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <malloc.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/load/registry.hpp"
#include "run/simulation.hpp"

namespace fs = std::filesystem;
namespace host = stride::host;
using stride::json;

namespace {

constexpr double h_fast = 0.01, h_slow = 0.02;

struct Scheme {
  const char* key;
  const char* label;
  json coupling;
};

// connected = false: the same subsystems with no connection (memory_of makes their inputs
// external, held at 0).
std::string ring_manifest(std::size_t n, const json& coupling, double end, bool connected = true) {
  json subs = json::object(), conns = json::array();
  const json params = {{"FR", 10}, {"zeta", 0.05}};
  for (std::size_t i = 0; i < n; ++i) {
    const bool fast = i % 2 == 0;
    subs["m" + std::to_string(i)] = {{"plugin", fast ? "two_mass_fast" : "two_mass_slow"},
                                     {"parameters", params},
                                     {"step", fast ? h_fast : h_slow},
                                     {"integrator", "rk4"}};
    if (connected)
      conns.push_back({{"from", "m" + std::to_string((i + n - 1) % n) + ".x"},
                       {"to", "m" + std::to_string(i) + (fast ? ".x2" : ".x1")},
                       {"extrapolator", "zoh"}});
  }
  json c = coupling;
  c["start"] = 0.0;
  c["end"] = end;
  return json{{"format", 1},
              {"title", "ring of " + std::to_string(n) + " two-mass subsystems"},
              {"subsystems", subs},
              {"connections", conns},
              {"coupling", c},
              {"record", {{"interval", end}, {"variables", {"m0.x"}}}},
              {"output", "out/ring"}}
      .dump();
}

// ramp -> g0 -> g1 -> ... -> g{n-1}, listed last gain first (so one pass in manifest order is
// not enough), each gain k = 1 + 1/(i+1); start at t0 = 1 so the ramp is not zero.
std::string chain_manifest(std::size_t n) {
  json subs = json::object(), conns = json::array();
  for (std::size_t j = n; j-- > 0;)
    subs["g" + std::to_string(j)] = {{"plugin", "test_gain"}, {"parameters", {{"k", 1.0 + 1.0 / double(j + 1)}}}, {"step", 0.01}};
  subs["ramp"] = {{"plugin", "test_ramp"}, {"parameters", {{"slope", 1.0}}}, {"step", 0.01}};
  for (std::size_t j = 0; j < n; ++j)
    conns.push_back({{"from", j == 0 ? std::string("ramp.y") : "g" + std::to_string(j - 1) + ".y"},
                     {"to", "g" + std::to_string(j) + ".u"},
                     {"extrapolator", "zoh"}});
  return json{{"format", 1},
              {"title", "feedthrough chain of " + std::to_string(n) + " gains"},
              {"subsystems", subs},
              {"connections", conns},
              {"coupling", {{"scheme", "jacobi"}, {"macro_step", 0.01}, {"start", 1.0}, {"end", 1.01}}},
              {"record", {{"interval", 0.01}, {"variables", {"g" + std::to_string(n - 1) + ".y"}}}},
              {"output", "out/chain"}}
      .dump();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct Sample {
  double build = 0, init = 0, stepping = 0;
  long steps = 0;
};

bool failed = false;

Sample run_text(const host::PluginRegistry& reg, const std::string& text, const fs::path& dir, long expected_steps,
                const char* what) {
  Sample s;
  const auto b0 = std::chrono::steady_clock::now();
  host::Experiment ex(host::read_manifest_text(text, dir / "ring.json"), reg);
  s.build = seconds_since(b0);
  host::RunOptions opt;
  opt.progress = false;
  opt.output = dir / "out";
  const host::RunResult r = host::run(ex, opt);
  s.init = r.initialization_time;
  s.stepping = r.stepping_time;
  for (const auto& [name, sub] : r.summary.at("subsystems").items()) s.steps += sub.at("steps").get<long>();
  if (r.status != host::RunStatus::completed || (expected_steps >= 0 && s.steps != expected_steps)) {
    std::fprintf(stderr, "%s: status %s (%s), %ld steps, expected %ld\n", what, host::to_string(r.status),
                 r.message.c_str(), s.steps, expected_steps);
    failed = true;
  }
  return s;
}

std::size_t heap_in_use() { return mallinfo2().uordblks; }

// Heap bytes kept by building the experiment of `text`, and added by a run up to the end of
// its initialization.
struct Memory {
  double experiment = 0, run = 0;
};
Memory memory_of(const host::PluginRegistry& reg, const std::string& text, const fs::path& dir) {
  Memory m;
  host::Manifest manifest = host::read_manifest_text(text, dir / "ring.json");
  manifest.external_inputs = true;  // inputs no connection feeds (the unconnected ring) hold 0
  const std::size_t m0 = heap_in_use();
  host::Experiment ex(std::move(manifest), reg);
  const std::size_t m1 = heap_in_use();
  host::Simulation sim(ex);
  sim.initialize();
  const std::size_t m2 = heap_in_use();
  m.experiment = double(m1) - double(m0);
  m.run = double(m2) - double(m1);
  return m;
}

// The memory table: per subsystem from the unconnected ring, per connection from the ring less it.
void print_memory(const host::PluginRegistry& reg, const std::vector<std::size_t>& sizes, const json& jacobi,
                  const fs::path& dir) {
  std::printf("\nMemory (heap bytes in use, mallinfo2): the experiment built, and what a run adds up to the end of "
              "its initialization (Jacobi)\n%6s %14s %14s %14s %14s\n",
              "N", "exp B/subsys", "exp B/conn", "run B/subsys", "run B/conn");
  memory_of(reg, ring_manifest(8, jacobi, 1.0), dir);  // loads the plugin libraries first
  for (std::size_t n : sizes) {
    const Memory open = memory_of(reg, ring_manifest(n, jacobi, 1.0, false), dir);
    const Memory ring = memory_of(reg, ring_manifest(n, jacobi, 1.0), dir);
    const double N = double(n);
    std::printf("%6zu %14.0f %14.0f %14.0f %14.0f\n", n, open.experiment / N, (ring.experiment - open.experiment) / N,
                open.run / N, (ring.run - open.run) / N);
  }
  std::printf("  of the run's: the host's state of a subsystem %zu B (NodeState), of a connection %zu B (LinkState)\n",
              sizeof(host::NodeState), sizeof(host::LinkState));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Host cost against the number of subsystems: a ring of two-mass subsystems"};
  std::vector<std::size_t> sizes = {8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096};
  int repeat = 5;
  double total_steps = 400000;
  app.add_option("--sizes", sizes, "numbers of subsystems (even)")->delimiter(',');
  app.add_option("--repeat", repeat, "runs per case (median shown)")->check(CLI::Range(1, 1000));
  std::vector<std::string> only;
  app.add_option("--schemes", only, "jacobi, slowest_first, fastest_first, memory, chain (default: all)")->delimiter(',');
  app.add_option("--steps", total_steps, "subsystem steps per run (sets the end time)")->check(CLI::Range(1e3, 1e9));
  CLI11_PARSE(app, argc, argv);
  for (auto n : sizes)
    if (n < 2 || n % 2) {
      std::fprintf(stderr, "--sizes: %zu is not an even number >= 2\n", n);
      return 2;
    }

  host::PluginRegistry reg;
  auto path = host::PluginRegistry::default_search_path();
#ifdef STRIDE_TEST_RUNTIME_DIR
  const bool chain = fs::is_directory(STRIDE_TEST_RUNTIME_DIR);
  if (chain) path.emplace_back(STRIDE_TEST_RUNTIME_DIR);
#else
  const bool chain = false;
#endif
  reg.scan(path);
  const fs::path dir = fs::temp_directory_path() / ("stride_ring_scaling." + std::to_string(::getpid()));
  fs::create_directories(dir);

  const std::vector<Scheme> schemes = {
      {"jacobi", "jacobi", {{"scheme", "jacobi"}, {"macro_step", h_slow}}},
      {"slowest_first", "multirate slowest-first", {{"scheme", "multirate"}, {"macro_step", h_slow}, {"synchronization", "slowest_first"}}},
      {"fastest_first", "multirate fastest-first", {{"scheme", "multirate"}, {"macro_step", h_slow}, {"synchronization", "fastest_first"}}},
  };
  std::printf("Ring of N two-mass subsystems (rk4, 10 ms / 20 ms, zoh), about %.0f subsystem steps per run, "
              "median of %d runs\n",
              total_steps, repeat);
  auto selected = [&](const char* key) { return only.empty() || std::find(only.begin(), only.end(), key) != only.end(); };
  for (const auto& sc : schemes) {
    if (!selected(sc.key)) continue;
    std::printf("\n%s\n%6s %10s %9s %14s %12s %16s %12s\n", sc.label, "N", "end (s)", "build ms", "init ms",
                "init us/N", "ns/subsys step", "vs N=first");
    double first_step = 0, first_init_per = 0, worst = 0, best = 1e300, worst_init = 0;
    for (std::size_t n : sizes) {
      // Steps per second of the whole ring: n/2 fast (100/s) + n/2 slow (50/s).
      const double per_second = 0.5 * double(n) * (1 / h_fast + 1 / h_slow);
      const double end = std::max(1.0, std::round(total_steps / per_second / h_slow)) * h_slow;
      const long fast_steps = std::lround(end / h_fast), slow_steps = std::lround(end / h_slow);
      const long expected = long(n / 2) * (fast_steps + slow_steps);
      const std::string text = ring_manifest(n, sc.coupling, end);
      std::vector<double> build, init, per_step;
      for (int r = 0; r < repeat; ++r) {
        const Sample s = run_text(reg, text, dir, expected, sc.label);
        build.push_back(s.build);
        init.push_back(s.init);
        per_step.push_back(s.stepping / double(std::max(1L, s.steps)));
      }
      const double ps = median(per_step) * 1e9, in = median(init);
      if (n == sizes.front()) first_step = ps, first_init_per = in / double(n);
      worst = std::max(worst, ps);
      best = std::min(best, ps);
      worst_init = std::max(worst_init, in / double(n) / first_init_per);
      std::printf("%6zu %10.2f %9.2f %14.3f %12.3f %16.1f %11.2fx\n", n, end, median(build) * 1e3, in * 1e3,
                  in / double(n) * 1e6, ps, ps / first_step);
    }
    std::printf("  per subsystem step: largest / smallest over N = %.2fx (target <= %s); "
                "initialization per subsystem: largest / first = %.2fx\n",
                worst / best, sc.coupling.at("scheme") == "jacobi" ? "1.2x, issue 12" : "1.5x, issue 26", worst_init);
  }

  if (selected("memory")) print_memory(reg, sizes, schemes.front().coupling, dir);

  if (chain && selected("chain")) {
    std::printf("\nFeedthrough chain ramp -> g0 -> ... -> g{N-1} (test gains, each with direct feedthrough; "
                "the longest chain has N links), median of %d\n%6s %9s %14s %12s\n",
                repeat, "N", "build ms", "init ms", "init us/N");
    for (std::size_t n : sizes) {
      const std::string text = chain_manifest(n);
      std::vector<double> build, init;
      for (int r = 0; r < repeat; ++r) {
        const Sample s = run_text(reg, text, dir, -1, "chain");
        build.push_back(s.build);
        init.push_back(s.init);
      }
      // The first row (t0 = 1) of the last gain: prod_j (1 + 1/(j+1)) = n + 1 exactly in exact
      // arithmetic; the zero-started passes must have carried the ramp through the whole chain.
      std::ifstream csv(dir / "out" / "results.csv");
      std::string header, row;
      std::getline(csv, header);
      std::getline(csv, row);
      const double y = std::stod(row.substr(row.find(',') + 1));
      if (std::abs(y - double(n + 1)) > 1e-9 * double(n + 1)) {
        std::fprintf(stderr, "chain of %zu: last gain at t0 is %.12g, expected %zu\n", n, y, n + 1);
        failed = true;
      }
      std::printf("%6zu %9.2f %14.3f %12.3f\n", n, median(build) * 1e3, median(init) * 1e3, median(init) / double(n) * 1e6);
    }
  }
  std::error_code ec;
  fs::remove_all(dir, ec);
  return failed ? 1 : 0;
}
