// Wall times of the Juno rover manoeuvre (manifests/mechanism/juno_{zoh,rim}.json, 2.5 s,
// h_S = 0.2 ms) beside the paper's Table 5 (MATLAB, 2012 desktop), and the host's share:
// the same run's plugin work timed alone.
//
//   juno [--repeat N]
//
// Where the time goes: the mechanism subsystem (mechanism + ali3p + the terramechanics
// plugins, with M_eff and f_eff evaluated every step) is stepped alone for the same steps, with
// its actuator forces held at the static values; the rest of the run's wall time is the host
// (scheduling, extrapolators, monitors, records, bonds) plus the RIM and the two cylinders at
// h_S, an upper bound of the host's share. The held inputs make the mechanism's Newton
// iterations differ a little from the coupled run: the split is an estimate.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <sstream>
#include <cmath>
#include <fstream>
#include <span>
#include <unistd.h>
#include <string>
#include <vector>

#include "stride/host/graph/adapters.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/load/registry.hpp"

namespace fs = std::filesystem;
namespace host = stride::host;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// results.csv columns whose name starts with `prefix` (the actuator lengths rover.s.*), by
// record time in µs.
std::map<long, std::vector<double>> actuator_lengths(const fs::path& csv, const std::string& prefix) {
  std::map<long, std::vector<double>> rows;
  std::ifstream in(csv);
  std::string line;
  if (!std::getline(in, line)) return rows;
  std::vector<std::size_t> cols;
  std::stringstream hs(line);
  std::size_t i = 0;
  for (std::string c; std::getline(hs, c, ','); ++i)
    if (c.rfind(prefix, 0) == 0) cols.push_back(i);
  while (std::getline(in, line)) {
    std::vector<double> cells;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) cells.push_back(std::strtod(c.c_str(), nullptr));
    if (cells.empty()) continue;
    std::vector<double> v;
    for (std::size_t c : cols)
      if (c < cells.size()) v.push_back(cells[c]);
    rows[std::lround(cells[0] * 1e6)] = v;
  }
  return rows;
}

// Largest |s − s_ref| over the record times both runs reached.
double largest_error(const std::map<long, std::vector<double>>& run, const std::map<long, std::vector<double>>& ref) {
  double e = 0.0;
  for (const auto& [t, v] : run) {
    auto it = ref.find(t);
    if (it == ref.end()) continue;
    for (std::size_t k = 0; k < v.size() && k < it->second.size(); ++k) e = std::max(e, std::abs(v[k] - it->second[k]));
  }
  return e;
}

struct Held final : stride::Inputs {
  std::vector<std::vector<double>> v;
  std::span<const double> evaluate(std::size_t port, double) override { return v.at(port); }
};

// The mechanism of the manifest stepped alone: f_h held at the static actuator forces.
double mechanism_alone(const host::PluginRegistry& reg, const stride::json& manifest, double h_M) {
  const auto& rover = manifest["subsystems"]["rover"];
  auto model = reg.create_model("mechanism", rover["parameters"]);
  const auto f = model->report()["static_equilibrium"]["actuator_forces"].get<std::vector<double>>();
  auto sub = host::make_multibody_subsystem(model, reg.create_formulation("ali3p", stride::json::object()));
  Held in;
  in.v = {f};
  sub->bind(in);
  sub->initialize(0.0);
  std::size_t width = 0;
  for (const auto& p : sub->ports())
    if (p.direction == stride::Direction::output) width += p.size;
  std::vector<double> y(width);
  const auto t0 = Clock::now();
  double t = 0.0;
  const int N = int(2.5 / h_M + 0.5);
  try {
    for (int k = 0; k < N; ++k) {
      t = sub->step(t, h_M);
      sub->outputs(y);
    }
  } catch (const stride::StepFailure&) {
    return -1.0;  // the held forces do not suit this step: no estimate
  }
  return since(t0);
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int repeat = 3;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
  host::PluginRegistry reg;
  reg.scan(host::PluginRegistry::default_search_path());
  const fs::path tmp = fs::temp_directory_path() / ("stride_juno_" + std::to_string(::getpid()));
  struct Case {
    const char* scheme;
    double h_M;
    double paper;  // Table 5 (s); 0: failed in the paper; -1: not reported
  };
  const std::vector<Case> cases = {{"zoh", 0.0005, -1}, {"zoh", 0.001, 15.32}, {"zoh", 0.002, 0}, {"rim", 0.001, 20.76},
                                   {"rim", 0.002, 11.03}, {"rim", 0.003, 7.64}, {"rim", 0.004, 6.17}, {"rim", 0.005, 5.28},
                                   {"rim", 0.006, -1},    {"rim", 0.008, -1},   {"rim", 0.010, -1}};
  // Accuracy reference: the interface model at a quarter of the smallest step tried.
  std::map<long, std::vector<double>> reference;
  {
    host::Experiment ex(host::load_manifest(std::string(STRIDE_SOURCE_DIR) + "/manifests/mechanism/juno_rim.json",
                                            {"/variables/h_M=0.00025"}),
                        reg);
    host::RunOptions opt;
    opt.progress = false;
    opt.output = tmp / "reference";
    fs::create_directories(opt.output);
    if (host::run(ex, opt).status != host::RunStatus::completed) {
      std::fprintf(stderr, "juno: the reference run (RIM, h_M = 0.25 ms) did not complete\n");
      return 1;
    }
    reference = actuator_lengths(opt.output / "results.csv", "rover.s.");
  }
  std::printf("Juno rover, 2.5 s manoeuvre, h_S = 0.2 ms; best of %d runs; error: largest |s - s_ref| against RIM at "
              "h_M = 0.25 ms\n", repeat);
  std::printf("%-4s %6s  %-10s %9s %8s  %10s  %9s  %12s  %10s\n", "", "h_M", "status", "error", "wall (s)", "paper (s)",
              "speed-up", "mech. alone", "rest share");
  int id = 0;
  for (const auto& c : cases) {
    const std::string file = std::string(STRIDE_SOURCE_DIR) + "/manifests/mechanism/juno_" + c.scheme + ".json";
    double best = 1e300;
    host::RunStatus status = host::RunStatus::failed;
    double reached = 0, error = std::nan("");
    for (int r = 0; r < repeat; ++r) {
      host::Manifest m = host::load_manifest(file, {"/variables/h_M=" + std::to_string(c.h_M)});
      host::Experiment ex(std::move(m), reg);
      host::RunOptions opt;
      opt.progress = false;
      opt.output = tmp / std::to_string(id++);
      fs::create_directories(opt.output);
      const auto t0 = Clock::now();
      const host::RunResult res = host::run(ex, opt);
      best = std::min(best, since(t0));
      status = res.status;
      reached = res.end_time_reached;
      if (status == host::RunStatus::completed)
        error = largest_error(actuator_lengths(opt.output / "results.csv", "rover.s."), reference);
      if (status != host::RunStatus::completed) break;
    }
    char paper[32], speed[32], mech[32], share[32];
    std::snprintf(paper, sizeof paper, c.paper > 0 ? "%.2f" : (c.paper == 0 ? "(failed)" : "-"), c.paper);
    std::snprintf(speed, sizeof speed, c.paper > 0 && status == host::RunStatus::completed ? "%.1fx" : "-", c.paper / best);
    std::snprintf(mech, sizeof mech, "-");
    std::snprintf(share, sizeof share, "-");
    if (status == host::RunStatus::completed) {
      stride::json manifest = stride::json::parse(std::ifstream(file));
      double mb = 1e300;
      for (int r = 0; r < repeat; ++r) mb = std::min(mb, mechanism_alone(reg, manifest, c.h_M));
      if (mb > 0) {
        std::snprintf(mech, sizeof mech, "%.3f", mb);
        std::snprintf(share, sizeof share, "%.0f %%", 100.0 * std::max(0.0, best - mb) / best);
      }
    }
    char err[32];
    std::snprintf(err, sizeof err, std::isnan(error) ? "-" : "%.2f mm", 1e3 * error);
    std::printf("%-4s %4.1f ms  %-10s %9s %8.3f  %10s  %9s  %12s  %10s%s\n", c.scheme, 1e3 * c.h_M, host::to_string(status), err, best,
                paper, speed, mech, share, status == host::RunStatus::completed ? "" : (" (t = " + std::to_string(reached) + " s)").c_str());
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return 0;
}
