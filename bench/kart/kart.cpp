// Elapsed times of the kart study (González et al. 2011 Sect. 4, Tables 2-3) beside the
// paper's, and where the time goes: manifests/kart/kart_engine.json, 10 s, engine RK4 at
// 0.1 ms, kart ali3p at h_mbs.
//
//   kart [--repeat N]
//
// Every configuration runs N times in this process (plugins loaded once, as `stride sweep`'s
// workers do); the table gives the median wall time and the median CPU time of the process,
// and splits the median run: the engine subsystem (engine_gearbox + rk4, its steps and
// outputs), the vehicle (mechanism + ali3p + the force elements) and the host (the rest:
// scheduling, extrapolators, records, bonds), timed by wrapping each subsystem's step() and
// outputs() with a clock read (two reads per call, about 50 ns). Errors: largest |pitch -
// pitch(FR = 1)| over the 10-ms record times, in degrees, as the paper's Δψ.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/load/registry.hpp"
#include "stride/host/run/run.hpp"

namespace fs = std::filesystem;
namespace host = stride::host;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

// A subsystem whose step() and outputs() add their wall time to `spent`.
class Timed final : public stride::Subsystem {
 public:
  Timed(std::shared_ptr<stride::Subsystem> in, double& spent) : in_(std::move(in)), spent_(spent) {}
  std::vector<stride::PortSpec> ports() const override { return in_->ports(); }
  void bind(stride::Inputs& i) override { in_->bind(i); }
  stride::json statistics() const override { return in_->statistics(); }
  double energy() const override { return in_->energy(); }
  void initialize(double t0) override { in_->initialize(t0); }
  void equilibrate(double t0) override { in_->equilibrate(t0); }
  double step(double t, double h) override {
    const auto t0 = Clock::now();
    const double r = in_->step(t, h);
    spent_ += since(t0);
    return r;
  }
  void input_discontinuity(double t) override { in_->input_discontinuity(t); }
  void outputs(std::span<double> y) override {
    const auto t0 = Clock::now();
    in_->outputs(y);
    spent_ += since(t0);
  }
  stride::json report() const override { return in_->report(); }

 private:
  std::shared_ptr<stride::Subsystem> in_;
  double& spent_;
};

// results.csv's kart.pitch by record time in µs.
std::map<long, double> pitch(const fs::path& csv) {
  std::map<long, double> rows;
  std::ifstream in(csv);
  std::string line;
  std::getline(in, line);
  std::stringstream hs(line);
  std::size_t col = 0, i = 0;
  for (std::string c; std::getline(hs, c, ','); ++i)
    if (c == "kart.pitch") col = i;
  while (std::getline(in, line)) {
    std::vector<double> cells;
    std::stringstream ls(line);
    for (std::string c; std::getline(ls, c, ',');) cells.push_back(std::strtod(c.c_str(), nullptr));
    if (cells.size() > col) rows[std::lround(cells[0] * 1e6)] = cells[col];
  }
  return rows;
}

struct Sample {
  double wall = 0, cpu = 0, engine = 0, vehicle = 0;
};
struct Case {
  std::string label;
  std::vector<std::string> sets;
  double paper_time, paper_error;  // Table 2 / 3 (s, deg); < 0: not reported
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int repeat = 3;
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
  host::PluginRegistry reg;
  reg.scan(host::PluginRegistry::default_search_path());
  const std::string manifest = std::string(STRIDE_SOURCE_DIR) + "/manifests/kart/kart_engine.json";
  const fs::path tmp = fs::temp_directory_path() / ("stride_kart_" + std::to_string(::getpid()));
  const std::vector<std::string> sf0 = {"/variables/sync=slowest_first", "/variables/order_engine=0", "/variables/order_mbs=0"};
  auto with = [](std::vector<std::string> a, const std::string& s) {
    a.push_back(s);
    return a;
  };
  std::vector<Case> cases = {{"Table 2, FR = 1 (reference)", with(sf0, "/variables/h_mbs=0.0001"), 158.4, 0.0},
                             {"Table 2, FR = 5", with(sf0, "/variables/h_mbs=0.0005"), 44.8, 0.0031},
                             {"Table 2, FR = 10", with(sf0, "/variables/h_mbs=0.001"), 30.4, 0.0055},
                             {"Table 2, FR = 50", with(sf0, "/variables/h_mbs=0.005"), 19.0, 0.0252},
                             {"Table 2, FR = 100", with(sf0, "/variables/h_mbs=0.01"), 17.1, 0.0398}};
  const double table3[] = {0.0385, 0.0078, 0.0086, 0.0303};
  for (int k = 0; k < 4; ++k)
    cases.push_back({"Table 3, FR = 100, FF, MBS O" + std::to_string(k),
                     {"/variables/h_mbs=0.01", "/variables/sync=fastest_first", "/variables/order_engine=0",
                      "/variables/order_mbs=" + std::to_string(k)},
                     -1.0, table3[k]});
  std::printf("Kart with engine and gearbox, 10 s; median of %d runs in one process; load average at start ", repeat);
  {
    std::ifstream la("/proc/loadavg");
    std::string s;
    std::getline(la, s);
    std::printf("%s\n", s.c_str());
  }
  std::printf("%-36s %10s %8s %8s %8s %8s %9s %9s %9s\n", "configuration", "|dpsi| deg", "paper", "wall s", "cpu s",
              "paper s", "paper/cpu", "engine", "vehicle");
  std::map<long, double> reference;
  int id = 0;
  for (const auto& c : cases) {
    std::vector<Sample> samples;
    double error = std::nan("");
    for (int r = 0; r < repeat; ++r) {
      host::Experiment ex(host::load_manifest(manifest, c.sets), reg);
      Sample s;
      // The built graph is immutable to the host; the benchmark alone swaps each subsystem for a
      // timing wrapper before the run (the nodes are not const objects, only handed out const).
      for (const auto& n : ex.graph().nodes) {
        auto& node = const_cast<host::Node&>(n);
        node.sub = std::make_shared<Timed>(node.sub, node.name == "engine" ? s.engine : s.vehicle);
      }
      host::RunOptions opt;
      opt.progress = false;
      opt.output = tmp / std::to_string(id++);
      fs::create_directories(opt.output);
      const double c0 = cpu_seconds();
      const auto t0 = Clock::now();
      const host::RunResult res = host::run(ex, opt);
      s.wall = since(t0);
      s.cpu = cpu_seconds() - c0;
      if (res.status != host::RunStatus::completed) {
        std::printf("%-36s did not complete: %s\n", c.label.c_str(), host::to_string(res.status));
        return 1;
      }
      samples.push_back(s);
      const auto p = pitch(opt.output / "results.csv");
      if (reference.empty()) reference = p;
      error = 0.0;
      for (const auto& [t, v] : p)
        if (auto it = reference.find(t); it != reference.end()) error = std::max(error, std::abs(v - it->second) * 180.0 / M_PI);
    }
    std::vector<double> wall, cpu;
    for (const auto& s : samples) wall.push_back(s.wall), cpu.push_back(s.cpu);
    const double w = median(wall), cp = median(cpu);
    const Sample& mid = *std::min_element(samples.begin(), samples.end(), [&](const Sample& a, const Sample& b) {
      return std::abs(a.wall - w) < std::abs(b.wall - w);
    });
    char paper_e[16], paper_t[16], ratio[16];
    std::snprintf(paper_e, sizeof paper_e, c.paper_error >= 0 ? "%.4f" : "-", c.paper_error);
    std::snprintf(paper_t, sizeof paper_t, c.paper_time > 0 ? "%.1f" : "-", c.paper_time);
    std::snprintf(ratio, sizeof ratio, c.paper_time > 0 ? "%.1fx" : "-", c.paper_time / cp);
    std::printf("%-36s %10.4f %8s %8.3f %8.3f %8s %9s %8.0f%% %8.0f%% (host %.0f%%)\n", c.label.c_str(), error, paper_e, w, cp, paper_t,
                ratio, 100 * mid.engine / mid.wall, 100 * mid.vehicle / mid.wall,
                100 * std::max(0.0, mid.wall - mid.engine - mid.vehicle) / mid.wall);
  }
  std::error_code ec;
  fs::remove_all(tmp, ec);
  return 0;
}
