// The frequency-ratio study of González et al. 2011 (Sect. 3.2-3.4, Fig. 8 and 9c;
// BENCHMARKS.md §7) on the two-mass triple-spring test, run in-process through the host
// library: manifests/two_mass.json with overrides -> Experiment -> run -> results.csv, scored
// against the exact solution (Eq. 3) with the position error of Eq. 7 (x1) and the energy
// error of Eq. 8.
//
// Setting (the paper's): AR1 = 0.1, AR2 = -1000, AR12 = 0.1, undamped; 100 steps per cycle in
// each subsystem (fast step 0.01 s with rk4, slow step FR·0.01 s with the trapezoidal rule);
// 100 fast cycles = 100 s; recorded every 0.01 s, so n = 10,000 points (t = 0.01 ... 100 s).
// Schemes: multirate slowest-first (SF) and fastest-first (FF), Lagrange order P = 0..4 on both
// connections, and smoothing (FF, mean of x1 over the last slow step into the slow mass,
// Lagrange O3 into the fast one, Fig. 9c).
//
// Output: both tables on stdout; out/two_mass_fr/{position_error,energy_error}.csv, runs.csv
// (every run, long form), tables.md. See docs/two_mass_fr.md.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include <CLI/CLI.hpp>

#include "common/two_mass.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/load/registry.hpp"

namespace fs = std::filesystem;
namespace host = stride::host;
namespace twomass = stride::two_mass;
using stride::json;

namespace {

constexpr double h_fast = 0.01;     // s: 100 steps per fast cycle (f1 = 1 Hz)
constexpr double duration = 100.0;  // s: N = 100 fast cycles
constexpr double record_interval = 0.01;
constexpr double paper_AR1 = 0.1, paper_AR2 = -1000.0, paper_AR12 = 0.1;  // Sect. 3.2
// A run counts as diverged when the host stops it, a sample is not finite, or the total
// energy grows beyond this multiple of E0 (the amplitude more than triples: unbounded growth,
// not an accuracy problem).
constexpr double energy_growth_limit = 10.0;

const std::vector<double> default_frs = {1.5, 2, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90, 100};

struct Scheme {
  std::string label;
  bool fastest_first = false;
  int order = 0;           // Lagrange order on both connections (smoothing: into the fast mass)
  bool smoothing = false;  // smoothing into the slow mass
  bool held = false;       // smoothing: one mean of the last slow step, held over the step
};

std::vector<Scheme> schemes() {
  std::vector<Scheme> s;
  for (int p = 0; p <= 4; ++p) s.push_back({"SF-O" + std::to_string(p), false, p, false});
  for (int p = 0; p <= 4; ++p) s.push_back({"FF-O" + std::to_string(p), true, p, false});
  s.push_back({"smoothing", true, 3, true});
  s.push_back({"smoothing-held", true, 3, true, true});
  return s;
}

// The ratios used at one FR. The derivation refuses ratios without a physical system
// (two_mass.hpp: k1, k3 > 0 confine AR12 to a window around AR1 of width ~1/FR²); then the
// admissible AR12 closest to the requested one is used.
struct Setting {
  double FR = 0;
  double AR12 = paper_AR12;
  bool adjusted = false;
  bool representable = true;
  std::string note;
};

bool admissible(double FR, double AR12) {
  try {
    twomass::derive(twomass::Ratios{FR, paper_AR1, paper_AR2, AR12, 0.0});
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

Setting choose_setting(double FR, double requested_AR12) {
  Setting s;
  s.FR = FR;
  s.AR12 = requested_AR12;
  if (admissible(FR, requested_AR12)) return s;
  // AR12 = AR1 makes 1/AR12 - 1/AR1 = 0, inside the window whenever the window exists; the
  // window's edge closest to the requested AR12 lies between the two (bisection).
  if (!admissible(FR, paper_AR1)) {
    s.representable = false;
    s.note = "no admissible AR12 (k1 or k3 not positive even at AR12 = AR1)";
    return s;
  }
  double good = paper_AR1, bad = requested_AR12;
  for (int i = 0; i < 200 && std::abs(bad - good) > 1e-15 * std::abs(good); ++i) {
    const double mid = 0.5 * (good + bad);
    (admissible(FR, mid) ? good : bad) = mid;
  }
  s.AR12 = good;
  s.adjusted = true;
  std::ostringstream n;
  n.precision(10);
  n << "AR12 = " << requested_AR12 << " refused; closest admissible AR12 = " << good << " used";
  s.note = n.str();
  return s;
}

struct Outcome {
  std::string status;  // host run status
  std::string message;
  std::size_t rows = 0;
  double dx1 = NAN, dx2 = NAN, dE = NAN;  // Eq. 7 (x1, x2), Eq. 8
  double max_energy_ratio = NAN;          // max E_i / E0
  double final_energy_ratio = NAN;        // E(100 s) / E0
  bool diverged = false;
  double wall = 0;
};

std::string num(double v) { return json(v).dump(); }  // shortest round-trip form

std::vector<std::string> overrides_for(const Setting& s, const Scheme& sc, const std::string& slow_integrator) {
  const double h_slow = s.FR * h_fast;
  // The extrapolators keep enough samples for the widest window they are asked about: under
  // FF the slow mass evaluates x1 up to one slow step (FR fast samples) behind the newest.
  const long history = 4 * static_cast<long>(std::ceil(s.FR)) + 16;
  std::vector<std::string> o;
  for (const char* sub : {"fast", "slow"}) {
    const std::string p = std::string("/subsystems/") + sub + "/parameters/";
    o.push_back(p + "FR=" + num(s.FR));
    o.push_back(p + "AR1=" + num(paper_AR1));
    o.push_back(p + "AR2=" + num(paper_AR2));
    o.push_back(p + "AR12=" + num(s.AR12));
    o.push_back(p + "zeta=0");
  }
  o.push_back("/subsystems/fast/step=" + num(h_fast));
  o.push_back("/subsystems/slow/step=" + num(h_slow));
  o.push_back(R"(/subsystems/fast/integrator={"plugin": "rk4"})");
  o.push_back(slow_integrator == "trapezoidal"
                  ? std::string(R"(/subsystems/slow/integrator={"plugin": "trapezoidal", "parameters": {"tolerance": 1e-10}})")
                  : R"(/subsystems/slow/integrator={"plugin": ")" + slow_integrator + R"("})");
  o.push_back("/coupling/scheme=\"multirate\"");
  o.push_back(std::string("/coupling/synchronization=\"") + (sc.fastest_first ? "fastest_first" : "slowest_first") + "\"");
  o.push_back("/coupling/macro_step=" + num(h_slow));
  o.push_back("/coupling/start=0");
  o.push_back("/coupling/end=" + num(duration));
  o.push_back("/record/interval=" + num(record_interval));
  o.push_back(R"(/record/variables=["fast.x", "fast.v", "slow.x", "slow.v"])");
  const json lagrange = {{"plugin", "lagrange"}, {"parameters", {{"order", sc.order}, {"history", history}}}};
  const json into_slow = sc.smoothing
                             ? json{{"plugin", "smoothing"},
                                    {"parameters", {{"window", h_slow}, {"history", history}, {"window_end", sc.held ? "newest" : "t"}}}}
                             : lagrange;
  o.push_back("/connections/0/extrapolator=" + into_slow.dump());
  o.push_back("/connections/1/extrapolator=" + lagrange.dump());
  return o;
}

// results.csv columns by name.
struct Table {
  std::vector<std::string> names;
  std::vector<std::vector<double>> cols;
  const std::vector<double>& col(const std::string& name) const {
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return cols[i];
    throw std::runtime_error("results.csv has no column " + name);
  }
};

Table read_csv(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error("cannot open " + file.string());
  Table t;
  std::string line, cell;
  std::getline(in, line);
  std::stringstream hs(line);
  while (std::getline(hs, cell, ',')) t.names.push_back(cell);
  t.cols.resize(t.names.size());
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::stringstream ls(line);
    for (std::size_t i = 0; i < t.names.size() && std::getline(ls, cell, ','); ++i)
      t.cols[i].push_back(std::strtod(cell.c_str(), nullptr));
  }
  return t;
}

Outcome run_one(const host::PluginRegistry& reg, const Setting& s, const Scheme& sc, const std::string& slow_integrator,
                const fs::path& dir) {
  Outcome out;
  host::Manifest m = host::load_manifest(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "two_mass.json", overrides_for(s, sc, slow_integrator));
  // The overrides address the connections by index: make sure they mean what we think.
  if (m.connections.size() != 2 || m.connections[0].to_subsystem != "slow" || m.connections[1].to_subsystem != "fast")
    throw std::runtime_error("manifests/two_mass.json: expected connection 0 into slow and 1 into fast");
  host::Experiment ex(std::move(m), reg);
  host::RunOptions opt;
  opt.progress = false;
  opt.output = dir;
  const host::RunResult r = host::run(ex, opt);
  out.status = host::to_string(r.status);
  out.message = r.message;
  out.wall = r.wall_time;

  const Table t = read_csv(dir / "results.csv");
  const auto &time = t.col("time"), &x1 = t.col("fast.x"), &v1 = t.col("fast.v"), &x2 = t.col("slow.x"),
             &v2 = t.col("slow.v");
  out.rows = time.size();
  const twomass::Parameters p = twomass::derive(twomass::Ratios{s.FR, paper_AR1, paper_AR2, s.AR12, 0.0});
  const twomass::ExactSolution ex_sol(p);
  const double E0 = twomass::total_energy(p, ex_sol.at(0.0));
  // The n = 10,000 points t = 0.01 ... 100 s (the row at t = 0 is the initial condition).
  std::vector<double> a1, e1, a2, e2, E;
  bool finite = true;
  double emax = 0;
  for (std::size_t i = 1; i < time.size(); ++i) {
    const twomass::State ex_i = ex_sol.at(time[i]);
    const double Ei = twomass::total_energy(p, {x1[i], x2[i], v1[i], v2[i]});
    if (!std::isfinite(Ei)) {
      finite = false;
      break;
    }
    a1.push_back(x1[i]);
    e1.push_back(ex_i.x1);
    a2.push_back(x2[i]);
    e2.push_back(ex_i.x2);
    E.push_back(Ei);
    emax = std::max(emax, Ei / E0);
  }
  const std::size_t expected_rows = static_cast<std::size_t>(std::lround(duration / record_interval)) + 1;
  const double N = twomass::f1_hz * duration;
  if (!E.empty()) {
    out.dx1 = twomass::position_error(a1, e1, s.FR, N);
    out.dx2 = twomass::position_error(a2, e2, s.FR, N);
    out.dE = twomass::energy_error(E, E0, s.FR, N);
    out.max_energy_ratio = emax;
    out.final_energy_ratio = E.back() / E0;
  }
  out.diverged = r.status != host::RunStatus::completed || !finite || out.rows != expected_rows ||
                 !(emax <= energy_growth_limit);
  return out;
}

// Cell text: 3 significant digits; diverged runs marked (console "!", markdown "div").
std::string cell(double v, bool diverged, bool markdown) {
  char b[48];
  if (!std::isfinite(v)) return diverged ? "div" : "-";
  std::snprintf(b, sizeof b, "%.3g", v);
  std::string s = b;
  if (diverged) s = markdown ? s + " (div)" : s + "!";
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"González 2011 two-mass FR study (Sect. 3.2-3.4): SF/FF x O0-O4 + smoothing, Eq. 7 and Eq. 8"};
  unsigned threads = 2;
  fs::path out_dir = fs::path(STRIDE_SOURCE_DIR) / "out" / "two_mass_fr";
  std::vector<double> frs = default_frs;
  bool keep = false;
  std::string slow_integrator = "trapezoidal";
  double ar12 = paper_AR12;
  app.add_option("--threads", threads, "runs in parallel")->check(CLI::Range(1u, 64u));
  app.add_option("--out", out_dir, "folder for the tables (CSV, markdown)");
  app.add_option("--fr", frs, "frequency ratios (default: the paper's 1.5 ... 100)");
  app.add_option("--slow-integrator", slow_integrator,
                 "integrator of the slow mass: the paper's trapezoidal rule, or rk4 to separate the "
                 "coupling error from the trapezoidal rule's own phase error")
      ->check(CLI::IsMember({"trapezoidal", "rk4"}));
  app.add_option("--ar12", ar12, "requested AR12 (the paper's 0.1); refused values are replaced by the closest admissible one");
  app.add_flag("--keep", keep, "keep every run's results.csv and summary.json (temp folder)");
  CLI11_PARSE(app, argc, argv);

  host::PluginRegistry reg;
  reg.scan(host::PluginRegistry::default_search_path());
  for (const char* need : {"two_mass_fast", "two_mass_slow", "rk4", "trapezoidal", "lagrange", "smoothing"})
    if (!reg.find(need)) {
      std::fprintf(stderr, "error: plugin '%s' not found (build it; search path: STRIDE_PLUGIN_PATH and the build's plugin folder)\n", need);
      return 2;
    }

  const std::vector<Scheme> sch = schemes();
  std::vector<Setting> settings;
  for (double fr : frs) settings.push_back(choose_setting(fr, ar12));
  for (const Setting& s : settings)
    if (!s.note.empty()) std::printf("FR = %g: %s\n", s.FR, s.note.c_str());

  const fs::path tmp = fs::temp_directory_path() / ("stride_two_mass_fr_" + std::to_string(::getpid()));
  fs::create_directories(tmp);

  // Jobs: every (FR, scheme) pair with a representable FR.
  struct Job {
    std::size_t fr, scheme;
  };
  std::vector<Job> jobs;
  for (std::size_t i = 0; i < settings.size(); ++i)
    if (settings[i].representable)
      for (std::size_t j = 0; j < sch.size(); ++j) jobs.push_back({i, j});
  std::vector<std::vector<Outcome>> res(settings.size(), std::vector<Outcome>(sch.size()));
  std::atomic<std::size_t> next{0};
  std::mutex err_mutex;
  std::vector<std::string> errors;
  const auto wall0 = std::chrono::steady_clock::now();
  auto worker = [&] {
    for (;;) {
      const std::size_t k = next.fetch_add(1);
      if (k >= jobs.size()) return;
      const Job& jb = jobs[k];
      const fs::path dir = tmp / ("FR" + num(settings[jb.fr].FR) + "_" + sch[jb.scheme].label);
      try {
        res[jb.fr][jb.scheme] = run_one(reg, settings[jb.fr], sch[jb.scheme], slow_integrator, dir);
      } catch (const std::exception& e) {
        Outcome o;
        o.status = "error";
        o.message = e.what();
        o.diverged = true;
        res[jb.fr][jb.scheme] = o;
        std::lock_guard<std::mutex> lock(err_mutex);
        errors.push_back("FR " + num(settings[jb.fr].FR) + " " + sch[jb.scheme].label + ": " + e.what());
      }
      if (!keep) fs::remove_all(dir);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned i = 0; i < std::max(1u, threads); ++i) pool.emplace_back(worker);
  for (auto& th : pool) th.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  if (!keep) fs::remove_all(tmp);
  for (const auto& e : errors) std::fprintf(stderr, "error: %s\n", e.c_str());

  fs::create_directories(out_dir);
  struct Measure {
    const char* title;
    const char* file;
    double Outcome::*field;
  };
  const Measure measures[] = {{"Position error of x1, Eq. 7", "position_error", &Outcome::dx1},
                              {"Energy error, Eq. 8", "energy_error", &Outcome::dE}};
  std::ofstream md(out_dir / "tables.md");
  md << "# Two-mass FR study (González 2011 Sect. 3.4, Fig. 8)\n\n"
     << "AR1 = 0.1, AR2 = -1000, AR12 = " << ar12 << ", fast rk4 h1 = 0.01 s, slow " << slow_integrator << " h2 = FR·0.01 s, 100 s, "
     << "n = 10,000 points. SF/FF = slowest-/fastest-first, On = Lagrange order n on both connections; "
     << "smoothing = FF, mean of x1 over the last slow step into m2, O3 into m1. "
     << "Bold: smallest error of the row among runs that did not diverge; (div): diverged "
     << "(energy above " << energy_growth_limit << " E0, non-finite, or stopped).\n";
  for (const Measure& me : measures) {
    std::ofstream csv(out_dir / (std::string(me.file) + ".csv"));
    csv << "FR,AR12";
    for (const auto& s : sch) csv << "," << s.label;
    csv << "\n";
    std::printf("\n%s (! = diverged)\n%6s", me.title, "FR");
    for (const auto& s : sch) std::printf(" %10s", s.label.c_str());
    std::printf("\n");
    md << "\n## " << me.title << "\n\n| FR |";
    for (const auto& s : sch) md << " " << s.label << " |";
    md << "\n|---|";
    for (std::size_t j = 0; j < sch.size(); ++j) md << "---|";
    md << "\n";
    for (std::size_t i = 0; i < settings.size(); ++i) {
      const Setting& st = settings[i];
      csv << num(st.FR) << "," << num(st.AR12);
      std::printf("%6g", st.FR);
      md << "| " << st.FR << (st.adjusted ? " (AR12 adjusted)" : "") << " |";
      if (!st.representable) {
        for (std::size_t j = 0; j < sch.size(); ++j) csv << ",nan", std::printf(" %10s", "n/r"), md << " n/r |";
        csv << "\n", std::printf("\n"), md << "\n";
        continue;
      }
      std::size_t best = sch.size();
      for (std::size_t j = 0; j < sch.size(); ++j) {
        const Outcome& o = res[i][j];
        if (!o.diverged && std::isfinite(o.*me.field) && (best == sch.size() || o.*me.field < res[i][best].*me.field)) best = j;
      }
      for (std::size_t j = 0; j < sch.size(); ++j) {
        const Outcome& o = res[i][j];
        const double v = o.*me.field;
        char b[32];
        std::snprintf(b, sizeof b, "%.6g", v);
        csv << "," << (std::isfinite(v) ? std::string(b) : std::string("nan"));
        std::printf(" %10s", cell(v, o.diverged, false).c_str());
        const std::string c = cell(v, o.diverged, true);
        md << " " << (j == best ? "**" + c + "**" : c) << " |";
      }
      csv << "\n";
      std::printf("\n");
      md << "\n";
    }
  }
  // Every run, long form.
  std::ofstream runs(out_dir / "runs.csv");
  runs << "FR,AR12,scheme,status,diverged,dx1,dx2,dE,max_E_over_E0,final_E_over_E0,rows,wall_s,message\n";
  for (std::size_t i = 0; i < settings.size(); ++i)
    for (std::size_t j = 0; j < sch.size(); ++j) {
      if (!settings[i].representable) continue;
      const Outcome& o = res[i][j];
      auto g = [](double v) {
        char b[32];
        std::snprintf(b, sizeof b, "%.6g", v);
        return std::string(b);
      };
      std::string msg = o.message;
      for (char& c : msg)
        if (c == ',' || c == '\n') c = ';';
      runs << num(settings[i].FR) << "," << num(settings[i].AR12) << "," << sch[j].label << "," << o.status << ","
           << (o.diverged ? 1 : 0) << "," << g(o.dx1) << "," << g(o.dx2) << "," << g(o.dE) << "," << g(o.max_energy_ratio)
           << "," << g(o.final_energy_ratio) << "," << o.rows << "," << g(o.wall) << "," << msg << "\n";
    }
  std::printf("\n%zu runs in %.1f s (%u threads, slow integrator %s); tables in %s\n", jobs.size(), wall, threads,
              slow_integrator.c_str(), out_dir.string().c_str());
  return errors.empty() ? 0 : 1;
}
