// Wall-time benchmark of the single-crane RIM co-simulation (Peiret 2018 Sect. 4.1, Algorithm 2;
// manifests/crane1_rim.json: h_M = 10 ms, h_S = 0.2 ms, 10 s) against
//   (a) the same arithmetic as one hand-fused loop, without plugins, virtual calls or
//       extrapolators (crane Eq. 20 + 38, RIM Eq. 11-13 + 39, cylinder Eq. 24-29 + 40,
//       Table 3 initialization by Eq. 41),
//   (b) the monolithic reference (manifests/crane1_monolithic.json),
//   (c) the direct ZOH co-simulation (manifests/crane1_zoh.json) at its largest stable
//       macro step H, found here by a scan.
// It also counts heap allocations (malloc family and operator new are replaced in this
// executable, so plugins loaded with dlopen allocate through them too) and reports those that
// happen while the host steps.
//
//   crane_rim_bench [--repeat N] [--keep DIR] [--profile fused|faithful|bare|rim|rim_no_estimate]
//
// Not a test: it prints a table and exits 0 unless the fused loop and the framework disagree.
#include <dlfcn.h>
#include <execinfo.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Dense>

#include "common/crane.hpp"
#include "common/hydraulics.hpp"
#include "bare_jacobi.hpp"
#include "stride/host/graph/adapters.hpp"
#include "stride/host/graph/experiment.hpp"
#include "stride/host/run/run.hpp"
#include "stride/host/load/registry.hpp"

// ---- Allocation counting -------------------------------------------------------------------
// Every malloc/calloc/realloc/aligned allocation of the process goes through these (glibc
// allows replacing malloc in the executable; __libc_* are its implementations). operator new
// is replaced too, so C++ allocations are also counted separately.

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace alloc {

std::atomic<long> mallocs{0}, news{0};
// Call stacks of allocations while `tracing` (fixed storage: recording must not allocate).
constexpr int kFrames = 14, kMaxRecords = 20000;
struct Record {
  void* frames[kFrames];
  int depth;
};
Record records[kMaxRecords];
std::atomic<int> n_records{0};
bool tracing = false;
thread_local bool inside = false;

inline void note() {
  mallocs.fetch_add(1, std::memory_order_relaxed);
  if (tracing && !inside) {
    inside = true;
    const int i = n_records.fetch_add(1);
    if (i < kMaxRecords) records[i].depth = backtrace(records[i].frames, kFrames);
    inside = false;
  }
}

}  // namespace alloc

extern "C" {
void* malloc(std::size_t n) {
  alloc::note();
  return __libc_malloc(n);
}
void* calloc(std::size_t n, std::size_t s) {
  alloc::note();
  return __libc_calloc(n, s);
}
void* realloc(void* p, std::size_t n) {
  alloc::note();
  return __libc_realloc(p, n);
}
void free(void* p) { __libc_free(p); }
void* memalign(std::size_t a, std::size_t n) {
  alloc::note();
  return __libc_memalign(a, n);
}
void* aligned_alloc(std::size_t a, std::size_t n) {
  alloc::note();
  return __libc_memalign(a, n);
}
int posix_memalign(void** p, std::size_t a, std::size_t n) {
  alloc::note();
  *p = __libc_memalign(a, n);
  return *p ? 0 : ENOMEM;
}
}

void* operator new(std::size_t n) {
  alloc::news.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  alloc::news.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace {

namespace fs = std::filesystem;
namespace host = stride::host;
namespace cr = stride::crane;
namespace hy = stride::hydraulics;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// ---- The hand-fused loop ----------------------------------------------------------------------
// The arithmetic of manifests/crane1_rim.json run by the host's Jacobi master, in the same
// order: per macro step (h_S) the crane (if its 10 ms step starts before the communication
// point; align = false), then the RIM, then the cylinder, each reading the other subsystems'
// outputs of the previous communication point; then all publish. Subsystem times are t + h
// set to their grid points as the host sets them (grid_time), and a zero-order hold picks the newest sample
// at or before the reading time; the two newest samples are enough (`too_old` counts reads
// that would need an older one, which must stay 0).

struct HeldValue {  // the two newest published samples of one output group
  double t_new = 0, t_old = 0;
  double v_new[4] = {0, 0, 0, 0}, v_old[4] = {0, 0, 0, 0};
  void reset(double t, const double* v, int n) {
    t_new = t_old = t;
    std::copy(v, v + n, v_new);
    std::copy(v, v + n, v_old);
  }
  void publish(double t, const double* v, int n) {
    if (!(t > t_new)) return;  // Link::push: only newer samples
    t_old = t_new;
    std::copy(v_new, v_new + n, v_old);
    t_new = t;
    std::copy(v, v + n, v_new);
  }
  const double* at(double t, long& too_old) const {
    const double tt = t + 1e-9 * std::max(1.0, std::abs(t));  // SampleHistory's tolerance
    if (tt >= t_new) return v_new;
    if (tt < t_old) ++too_old;
    return v_old;
  }
};

struct FusedOptions {
  double end = 10.0;
  double h_M = 0.01;    // crane step
  double h_S = 0.0002;  // RIM and cylinder step = macro step
  double H1 = 0.01;     // RIM synchronization interval
  std::FILE* csv = nullptr;  // write the manifest's record columns every 10 ms (like the host)
  std::vector<double>* s1 = nullptr;  // crane s at every 10 ms row of the host's results.csv
  std::vector<double>* p1 = nullptr;  // cylinder p1 at the same rows
  // Plugin-faithful arithmetic: what the plugins compute beyond the minimum, without the host,
  // extrapolators or virtual calls: the cylinder evaluates Eq. 25-26 out of line, the RIM
  // evaluates Eq. 11 as a p x p product in step() and again in outputs() (its s_ddot output).
  // Same results, more work. (The crane's extra evaluations in outputs() run once per 10 ms
  // and are left out.)
  bool faithful = false;
};

// Out of line, like the cylinder plugin's calls into hydraulics.hpp.
[[gnu::noinline]] hy::Cylinder::PressureRates rates_out_of_line(const hy::Cylinder& c, double s, double sd, double k,
                                                               double p1, double p2) {
  return c.pressure_rates(s, sd, k, p1, p2);
}
// The RIM plugin's Eq. 11 for p interface velocities: s̈ = M̃⁻¹ (f̃ + λ), out of line.
[[gnu::noinline]] void rim_accelerations(std::size_t p, const double* Minv, const double* f, const double* lambda,
                                         double* rhs, double* s_ddot) {
  for (std::size_t i = 0; i < p; ++i) rhs[i] = f[i] + lambda[i];
  for (std::size_t i = 0; i < p; ++i) {
    double a = 0.0;
    for (std::size_t j = 0; j < p; ++j) a += Minv[j * p + i] * rhs[j];
    s_ddot[i] = a;
  }
}
volatile double g_sink;

struct FusedStats {
  long crane_steps = 0, fast_steps = 0, too_old = 0;
};

// Crane outputs at (q, v): s, ṡ, M̃ (Eq. 12), f̃ (Eq. 13) for actuator 1, in the order of the
// independent formulation (M⁻¹ by LDLT; T = M⁻¹ Aᵀ; M̃ = (A T)⁻¹; f̃ = M̃ (Tᵀ (f − c) + Ȧ v)).
inline void crane_outputs(const cr::Geometry& geo, const Eigen::Vector2d& q, const Eigen::Vector2d& v, double out[4]) {
  const cr::Actuators a = cr::actuators(geo, q, v);
  const Eigen::Matrix2d M = cr::mass_matrix(geo, q);
  const Eigen::LDLT<Eigen::Matrix2d> ldlt(M);
  const Eigen::Matrix2d G = ldlt.solve(Eigen::Matrix2d::Identity());
  const Eigen::Vector2d A = a.A.row(0).transpose();
  const Eigen::Vector2d T = G * A;
  const double M_eff = 1.0 / A.dot(T);
  const Eigen::Vector2d x = cr::gravity_forces(geo, q) - cr::coriolis(geo, q, v);
  out[0] = a.s[0];
  out[1] = a.s_dot[0];
  out[2] = M_eff;
  out[3] = M_eff * (T.dot(x) + a.A_dot_v[0]);
}

using stride_test::grid_time;

FusedStats fused_rim(const FusedOptions& o) {
  FusedStats st;
  const cr::Geometry geo;
  hy::Cylinder cyl;
  const hy::PiecewiseLinear valve({2.0, 2.001, 6.0, 6.002}, {0.0, -0.01, -0.01, 0.02}, "valve");
  const double t0 = 0.0, macro = o.h_S, eps = 1e-9 * macro;

  // Initial state (crane at rest, Table 1) and its outputs.
  Eigen::Vector2d q(geo.theta1_0, geo.theta2_0), v(0.0, 0.0);
  double crane_y[4];
  crane_outputs(geo, q, v, crane_y);
  // RIM synchronized at t0 (equilibrate).
  double rim_s = crane_y[0], rim_sd = crane_y[1], rim_M = crane_y[2], rim_f = crane_y[3];
  double rim_Minv = 1.0 / rim_M;
  double next_sync = t0;
  while (next_sync <= t0 + 1e-9 * o.H1) next_sync += o.H1;
  // Cylinder: s0 from the RIM's s, Table 3 from Eq. 41 with f_required = −f̃.
  cyl.s0 = rim_s;
  const hy::Equilibrium e = hy::solve_equilibrium(cyl, -crane_y[3]);
  const double kappa0 = e.kappa - valve(t0);
  double p1 = e.p1, p2 = e.p2;

  HeldValue crane_out, rim_out, cyl_out;
  crane_out.reset(t0, crane_y, 4);
  const double rim_y0[2] = {rim_s, rim_sd};
  rim_out.reset(t0, rim_y0, 2);
  const double fh0 = cyl.force(p1, p2, rim_sd);
  cyl_out.reset(t0, &fh0, 1);

  // The RIM plugin's work memory (faithful mode): M̃⁻¹ from a dynamic LDLT at every
  // synchronization, p = 1.
  Eigen::MatrixXd M_dyn(1, 1), Minv_dyn(1, 1);
  Eigen::LDLT<Eigen::MatrixXd> ldlt_dyn(1);
  double rhs_buf[1], sdd_buf[1];
  if (o.faithful) {
    M_dyn(0, 0) = rim_M;
    ldlt_dyn.compute(M_dyn);
    Minv_dyn.setIdentity();
    ldlt_dyn.solveInPlace(Minv_dyn);
  }

  double tc = t0, tr = t0, ty = t0;
  double next_record = t0;
  long k_rec = 0;
  auto record = [&](double t) {  // every 10 ms, at the crane's step times
    if (o.s1) o.s1->push_back(crane_y[0]);
    if (o.p1) o.p1->push_back(p1);
    if (o.csv) std::fprintf(o.csv, "%.12g,%.12g,%.12g,%.12g,%.12g,%.12g\n", t, crane_y[0], crane_y[1], p1, p2, rim_s);
    ++k_rec;
    next_record = t0 + static_cast<double>(k_rec) * 0.01;
  };
  record(t0);

  long k = 0;
  double T = t0;
  while (T < o.end - eps) {
    ++k;
    const double Tn = std::min(t0 + static_cast<double>(k) * macro, o.end);
    bool crane_stepped = false;
    // Crane: semi-implicit Euler (Eq. 38) on M v̇ = f − c + Aᵀ λ with λ held from t.
    while (tc < Tn - eps) {
      const double lambda = cyl_out.at(tc, st.too_old)[0];
      const cr::Actuators a = cr::actuators(geo, q, Eigen::Vector2d::Zero());
      Eigen::Vector2d Q = cr::gravity_forces(geo, q) - cr::coriolis(geo, q, v);
      Q += a.A.row(0).transpose() * lambda;
      const Eigen::LDLT<Eigen::Matrix2d> ldlt(cr::mass_matrix(geo, q));
      const Eigen::Vector2d v_dot = ldlt.solve(Q);
      v += o.h_M * v_dot;
      q += o.h_M * v;
      tc = grid_time(tc + o.h_M, t0, o.h_M, Tn, eps);
      crane_outputs(geo, q, v, crane_y);
      crane_stepped = true;
      ++st.crane_steps;
    }
    // RIM: resynchronize every H1 (Algorithm 2), then Eq. 11 and Eq. 39.
    while (tr < Tn - eps) {
      const double lambda = cyl_out.at(tr, st.too_old)[0];
      double s_ddot;
      if (o.faithful) {
        rim_accelerations(1, Minv_dyn.data(), &rim_f, &lambda, rhs_buf, sdd_buf);
        s_ddot = sdd_buf[0];
      } else {
        s_ddot = rim_Minv * (rim_f + lambda);
      }
      rim_sd += macro * s_ddot;
      rim_s += macro * rim_sd;
      tr = grid_time(tr + macro, t0, macro, Tn, eps);
      // Algorithm 2: at a synchronization point take the crane's state before publishing.
      if (tr >= next_sync - 1e-9 * o.H1) {
        const double* c = crane_out.at(next_sync, st.too_old);
        rim_s = c[0], rim_sd = c[1], rim_M = c[2], rim_f = c[3];
        rim_Minv = 1.0 / rim_M;
        if (o.faithful) {
          M_dyn(0, 0) = rim_M;
          ldlt_dyn.compute(M_dyn);
          Minv_dyn.setIdentity();
          ldlt_dyn.solveInPlace(Minv_dyn);
        }
        while (next_sync <= tr + 1e-9 * o.H1) next_sync += o.H1;
      }
      if (o.faithful) {  // outputs(): s_ddot again with the input at the new time
        rim_accelerations(1, Minv_dyn.data(), &rim_f, cyl_out.at(tr, st.too_old), rhs_buf, sdd_buf);
        g_sink = sdd_buf[0];
      }
    }
    // Cylinder: Eq. 25-29 with forward Euler (Eq. 40); f_h (Eq. 24) with the held ṡ.
    double fh = 0;
    while (ty < Tn - eps) {
      const double* r = rim_out.at(ty, st.too_old);
      const double kappa = std::clamp(kappa0 + valve(ty), 0.0, 1.0);
      double dp1, dp2;
      if (o.faithful) {
        const hy::Cylinder::PressureRates rt = rates_out_of_line(cyl, r[0], r[1], kappa, p1, p2);
        dp1 = rt.dp1;
        dp2 = rt.dp2;
      } else {
        const hy::Cylinder::PressureRates rt = cyl.pressure_rates(r[0], r[1], kappa, p1, p2);
        dp1 = rt.dp1;
        dp2 = rt.dp2;
      }
      p1 += macro * dp1;
      p2 += macro * dp2;
      ty = grid_time(ty + macro, t0, macro, Tn, eps);
      fh = cyl.force(p1, p2, rim_out.at(ty, st.too_old)[1]);
      ++st.fast_steps;
    }
    // Publish (Jacobi: after every subsystem has advanced).
    if (crane_stepped) crane_out.publish(tc, crane_y, 4);
    const double rim_y[2] = {rim_s, rim_sd};
    rim_out.publish(tr, rim_y, 2);
    cyl_out.publish(ty, &fh, 1);
    T = Tn;
    // Every subsystem has reached the record time at the end of this macro step (the crane
    // steps on from it only in the next one): the host's row for that time.
    if (ty + 1e-9 * 0.01 >= next_record && next_record <= o.end + 1e-9 * 0.01) record(next_record);
  }
  return st;
}

// ---- The shipped plugins without the host ------------------------------------------------------
// (a4): the crane, RIM and cylinder plugins of crane1_rim.json, created from the same registry
// and driven through the same SDK interfaces by the least a Jacobi host can do
// (tests/support/bare_jacobi.hpp). What this costs beyond (a) is the cost of the plugin
// interface itself, which no host built on it can avoid. The plugin objects are made once,
// outside the timing, like the framework's Experiment.
stride_test::BareJacobi make_bare(const host::PluginRegistry& reg) {
  stride_test::BareJacobi b;
  b.add("crane",
        host::make_multibody_subsystem(reg.create_model("crane_independent", {{"actuators", 1}, {"coupling", "force"}}),
                                       reg.create_formulation("independent", stride::json::object())),
        0.01);
  b.add("rim", reg.create_subsystem("rim", {{"actuators", 1}, {"sync_interval", 0.01}, {"coupling", "force"}}), 0.0002);
  b.add("cylinder",
        host::make_ode_subsystem(reg.create_ode("cylinder", {{"coupling", "force"}, {"initialize", "equilibrium"}}),
                                 reg.create_integrator("semi_implicit_euler", stride::json::object())),
        0.0002);
  // The connections of crane1_rim.json.
  b.connect("crane.s", "rim.s_M");
  b.connect("crane.s_dot", "rim.s_dot_M");
  b.connect("crane.M_eff", "rim.M_eff");
  b.connect("crane.f_eff", "rim.f_eff");
  b.connect("rim.s", "cylinder.s");
  b.connect("rim.s_dot", "cylinder.s_dot");
  b.connect("crane.f_eff", "cylinder.f_eq");
  b.connect("cylinder.f_h", "crane.f_h");
  b.connect("cylinder.f_h", "rim.f_h");
  // The subsystems compute what the framework run computes: the wired outputs and the
  // recorded ones (crane1_rim.json's record.variables).
  b.read_only_wired({"crane.s", "crane.s_dot", "cylinder.p1", "cylinder.p2", "cylinder.f_h", "crane.x_R", "crane.x_R_dot"});
  b.finalize();
  return b;
}

// ---- Framework runs -------------------------------------------------------------------------

struct Case {
  std::string manifest;
  std::vector<std::string> overrides;
};

struct Outcome {
  host::RunStatus status = host::RunStatus::failed;
  std::string message;
  double wall = 0.0;         // around run()
  double stepping = 0.0;     // RunResult::stepping_time: the macro steps alone, without files
  long allocations = 0;      // malloc calls during run()
  long news = 0;             // operator new calls during run()
  fs::path output;
};

fs::path g_tmp;
int g_run_id = 0;

Outcome run_case(const host::PluginRegistry& reg, const Case& c, bool trace = false) {
  host::Manifest m = host::load_manifest(fs::path(STRIDE_SOURCE_DIR) / c.manifest, c.overrides);
  host::Experiment ex(std::move(m), reg);
  host::RunOptions opt;
  opt.progress = false;
  opt.output = g_tmp / ("run" + std::to_string(g_run_id++));
  fs::create_directories(opt.output);  // outside the counted/timed region
  Outcome o;
  const long a0 = alloc::mallocs.load(), n0 = alloc::news.load();
  if (trace) {
    alloc::n_records = 0;
    alloc::tracing = true;
  }
  const auto w0 = Clock::now();
  host::RunResult r = host::run(ex, opt);
  o.wall = seconds_since(w0);
  o.stepping = r.stepping_time;
  alloc::tracing = false;
  o.allocations = alloc::mallocs.load() - a0;
  o.news = alloc::news.load() - n0;
  o.status = r.status;
  o.message = r.message;
  o.output = r.output;
  return o;
}

// Column `name` of results.csv (time in column 0).
std::vector<std::vector<double>> read_csv(const fs::path& file, const std::vector<std::string>& names) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  std::vector<std::string> header;
  {
    std::stringstream ss(line);
    std::string h;
    while (std::getline(ss, h, ',')) header.push_back(h);
  }
  std::vector<int> idx;
  for (const auto& n : names) {
    auto it = std::find(header.begin(), header.end(), n);
    if (it == header.end()) throw std::runtime_error(file.string() + ": no column " + n);
    idx.push_back(int(it - header.begin()));
  }
  std::vector<std::vector<double>> cols(names.size());
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::stringstream ss(line);
    std::string v;
    while (std::getline(ss, v, ',')) row.push_back(std::strtod(v.c_str(), nullptr));
    for (std::size_t i = 0; i < idx.size(); ++i) cols[i].push_back(row[std::size_t(idx[i])]);
  }
  return cols;
}

double max_abs_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double d = 0;
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) d = std::max(d, std::abs(a[i] - b[i]));
  return a.size() == b.size() ? d : std::numeric_limits<double>::infinity();
}

// "module(function)+0xoffset" for one return address (addr2line on the module when dladdr
// finds no exported name).
std::string describe_frame_uncached(void* addr);
std::string describe_frame(void* addr) {
  static std::map<void*, std::string> cache;
  auto it = cache.find(addr);
  if (it != cache.end()) return it->second;
  return cache[addr] = describe_frame_uncached(addr);
}
std::string describe_frame_uncached(void* addr) {
  Dl_info info{};
  if (!dladdr(addr, &info) || !info.dli_fname) return "?";
  const auto off = reinterpret_cast<std::uintptr_t>(addr) - reinterpret_cast<std::uintptr_t>(info.dli_fbase) - 1;
  std::string fn;
  char cmd[1024];
  std::snprintf(cmd, sizeof cmd, "addr2line -f -C -e '%s' 0x%lx 2>/dev/null", info.dli_fname, static_cast<unsigned long>(off));
  if (std::FILE* p = popen(cmd, "r")) {
    char buf[2048];
    if (std::fgets(buf, sizeof buf, p)) fn = buf;
    char loc[2048];
    if (std::fgets(loc, sizeof loc, p) && std::strncmp(loc, "??", 2) != 0) fn += std::string("    at ") + loc;
    pclose(p);
  }
  while (!fn.empty() && (fn.back() == '\n')) fn.pop_back();
  for (auto& ch : fn)
    if (ch == '\n') ch = ' ';
  if (fn.empty() || fn.rfind("??", 0) == 0) fn = info.dli_sname ? info.dli_sname : "?";
  return fs::path(info.dli_fname).filename().string() + ": " + fn;
}

using StackKey = std::vector<void*>;
std::map<StackKey, long> collect_stacks() {
  std::map<StackKey, long> m;
  const int n = std::min<int>(alloc::n_records.load(), alloc::kMaxRecords);
  for (int i = 0; i < n; ++i) {
    const auto& r = alloc::records[i];
    // frames 0-1 are alloc::note and malloc itself
    m[StackKey(r.frames + std::min(2, r.depth), r.frames + r.depth)]++;
  }
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  int repeat = 11;
  std::string profile;  // fused | faithful | rim: one run of that case only, for callgrind
  fs::path keep;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--keep" && i + 1 < argc) keep = argv[++i];
    else if (a == "--profile" && i + 1 < argc) profile = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--repeat N] [--keep DIR] [--profile fused|faithful|bare|rim|rim_no_estimate]\n", argv[0]);
      return 2;
    }
  }
  {  // backtrace() loads libgcc_s (and allocates) on first use: do it before anything is traced
    void* f[4];
    backtrace(f, 4);
  }
  g_tmp = keep.empty() ? fs::temp_directory_path() / ("stride_bench_" + std::to_string(::getpid())) : keep;
  fs::create_directories(g_tmp);

  host::PluginRegistry reg;
  reg.scan(host::PluginRegistry::default_search_path());
  for (const char* p : {"crane_independent", "independent", "rim", "cylinder", "semi_implicit_euler", "zoh", "lagrange",
                        "crane_monolithic"})
    if (!reg.find(p)) {
      std::fprintf(stderr, "plugin %s not found in %s (build the plugins first)\n", p,
                   host::PluginRegistry::default_search_path().front().c_str());
      return 2;
    }

  const Case rim{"manifests/crane1_rim.json", {}};
  const Case rim_coarse{"manifests/crane1_rim.json", {"/record/interval=10"}};
  // The same without the per-push coupling-error estimate (summary.json's accuracy block).
  const Case rim_coarse_no_estimate{"manifests/crane1_rim.json", {"/record/interval=10", "/monitor/coupling_error=false"}};
  const Case mono{"manifests/crane1_monolithic.json", {}};
  if (!profile.empty()) {
    if (profile == "rim" || profile == "rim_no_estimate") {
      const Outcome r = run_case(reg, profile == "rim" ? rim_coarse : rim_coarse_no_estimate);
      std::printf("profile run: %s, %.1f ms\n", host::to_string(r.status), 1e3 * r.wall);
    } else if (profile == "bare") {
      stride_test::BareJacobi bare = make_bare(reg);
      bare.run(0.0, 10.0, 0.0002);
    } else {
      FusedOptions o;
      o.faithful = profile == "faithful";
      fused_rim(o);
    }
    if (keep.empty()) fs::remove_all(g_tmp);
    return 0;
  }
  std::printf("Single-crane RIM co-simulation benchmark (10 s simulated; median of %d runs)\n\n", repeat);

  // 1. The fused loop reproduces the framework run.
  {
    const Outcome r = run_case(reg, rim);
    const auto cols = read_csv(r.output / "results.csv", {"crane.s", "cylinder.p1"});
    std::printf("Check: fused loop vs framework run of crane1_rim.json (%zu rows every 10 ms)\n", cols[0].size());
    for (bool faithful : {false, true}) {
      std::vector<double> s1, p1;
      FusedOptions o;
      o.s1 = &s1;
      o.p1 = &p1;
      o.faithful = faithful;
      const FusedStats st = fused_rim(o);
      const double ds = max_abs_diff(s1, cols[0]), dp = max_abs_diff(p1, cols[1]);
      std::printf("  %-15s %ld crane + %ld fast steps: max |ds1| = %.3g m, max |dp1| = %.3g Pa (CSV: 12 digits)\n",
                  faithful ? "plugin-faithful" : "minimal", st.crane_steps, st.fast_steps, ds, dp);
      if (st.too_old != 0) std::printf("  WARNING: %ld held-sample reads needed more than two samples\n", st.too_old);
      if (!(ds <= 1e-9)) {
        std::printf("  MISMATCH: the fused loop does not reproduce the framework run\n");
        return 1;
      }
    }
    stride_test::BareJacobi bare = make_bare(reg);
    bare.run(0.0, 10.0, 0.0002);
    const double ds = std::abs(bare.published("crane.s")[0] - cols[0].back());
    std::printf("  plugins without the host (a4): s1 at 10 s differs by %.3g m (CSV: 12 digits)\n", ds);
    if (!(ds <= 1e-9)) {
      std::printf("  MISMATCH: the plugins without the host do not reproduce the framework run\n");
      return 1;
    }
  }

  // 2. ZOH: largest stable macro step H (crane step = H), judged against the monolithic reference.
  std::vector<double> mono_s1;
  {
    const Outcome r = run_case(reg, mono);
    mono_s1 = read_csv(r.output / "results.csv", {"reference.s"})[0];
  }
  {
    const Outcome r = run_case(reg, rim);
    const auto s = read_csv(r.output / "results.csv", {"crane.s"})[0];
    std::printf("\nRIM (h_M = 10 ms, h_S = 0.2 ms): max |s1 - s1_monolithic| = %.3g mm\n", 1e3 * max_abs_diff(s, mono_s1));
  }
  std::printf("\nZOH scan, crane1_zoh.json with h_M = H (crane step = macro step), cylinder 0.2 ms.\n"
              "Stable: completes with p1, p2 in [0, 20 MPa] (the manifest's bounds) and max |s1 - s1_mono| <= 2 mm;\n"
              "the manifest's energy-residual monitor (1000 J) is lifted for the scan and its verdict shown separately.\n");
  double H_zoh = 0.0;
  bool unstable_seen = false;
  for (int tenth = 100; tenth <= 160; tenth += 5) {
    const double H = tenth * 1e-4;
    char hs[64];
    std::snprintf(hs, sizeof hs, "%.6g", H);
    const Case z{"manifests/crane1_zoh.json", {std::string("/variables/h_M=") + hs, "/monitor/energy_residual_limit=1e300"}};
    const Outcome r = run_case(reg, z);
    const Outcome rm = run_case(reg, Case{"manifests/crane1_zoh.json", {std::string("/variables/h_M=") + hs}});
    double d = std::numeric_limits<double>::infinity();
    if (r.status == host::RunStatus::completed) d = max_abs_diff(read_csv(r.output / "results.csv", {"crane.s"})[0], mono_s1);
    const bool ok = r.status == host::RunStatus::completed && d <= 2e-3;
    std::printf("  H = %4.1f ms: %-9s max |ds1| = %7.3g mm  %-8s | with the residual monitor: %s%s\n", 1e3 * H,
                host::to_string(r.status), 1e3 * d, ok ? "stable" : "rejected", host::to_string(rm.status),
                rm.message.empty() ? "" : (" (" + rm.message.substr(0, 60) + "...)").c_str());
    if (!ok && r.status != host::RunStatus::completed)
      std::printf("                %s\n", r.message.substr(0, 110).c_str());
    if (!ok) unstable_seen = true;
    if (ok && !unstable_seen) H_zoh = H;  // the largest H below the first unstable one
  }
  if (H_zoh == 0.0) {
    std::printf("  no stable H found\n");
    return 1;
  }
  char hz[64];
  std::snprintf(hz, sizeof hz, "%.6g", H_zoh);
  const Case zoh{"manifests/crane1_zoh.json", {std::string("/variables/h_M=") + hz}};

  // 3. Timings, interleaved so that load from other processes spreads over all cases.
  std::vector<double> t_fused, t_faithful, t_fused_csv, t_bare, t_rim, t_rim_coarse, t_rim_stepping, t_rim_no_estimate, t_mono, t_zoh;
  stride_test::BareJacobi bare = make_bare(reg);
  for (int i = 0; i < repeat; ++i) {
    {
      auto w = Clock::now();
      bare.run(0.0, 10.0, 0.0002);
      t_bare.push_back(seconds_since(w));
    }
    {
      auto w = Clock::now();
      fused_rim(FusedOptions{});
      t_fused.push_back(seconds_since(w));
    }
    {
      FusedOptions o;
      o.faithful = true;
      auto w = Clock::now();
      fused_rim(o);
      t_faithful.push_back(seconds_since(w));
    }
    {
      const fs::path csv = g_tmp / "fused.csv";
      auto w = Clock::now();
      FusedOptions o;
      o.csv = std::fopen(csv.c_str(), "w");
      std::fprintf(o.csv, "time,crane.s,crane.s_dot,cylinder.p1,cylinder.p2,rim.s\n");
      fused_rim(o);
      std::fclose(o.csv);
      t_fused_csv.push_back(seconds_since(w));
    }
    t_rim.push_back(run_case(reg, rim).wall);
    const Outcome coarse = run_case(reg, rim_coarse);
    t_rim_coarse.push_back(coarse.wall);
    t_rim_stepping.push_back(coarse.stepping);
    t_rim_no_estimate.push_back(run_case(reg, rim_coarse_no_estimate).stepping);
    t_mono.push_back(run_case(reg, mono).wall);
    t_zoh.push_back(run_case(reg, zoh).wall);
  }
  const double f = median(t_fused), fmin = *std::min_element(t_fused.begin(), t_fused.end());
  std::printf("\n%-60s %11s %9s %12s %10s\n", "case (10 s simulated)", "median ms", "min ms", "median/fused", "min/fused");
  auto row = [&](const char* name, const std::vector<double>& t) {
    const double tmin = *std::min_element(t.begin(), t.end());
    std::printf("%-60s %11.2f %9.2f %12.2f %10.2f\n", name, 1e3 * median(t), 1e3 * tmin, median(t) / f, tmin / fmin);
  };
  row("(a) fused loop, minimal RIM arithmetic, no output", t_fused);
  row("(a2) fused loop, plugin-faithful arithmetic, no output", t_faithful);
  row("(a3) fused loop (a) + CSV every 10 ms (buffered fprintf)", t_fused_csv);
  row("(a4) the plugins through the SDK, bare Jacobi loop, no host", t_bare);
  row("RIM co-simulation, framework, record every 10 ms", t_rim);
  row("RIM co-simulation, framework, record every 10 s", t_rim_coarse);
  row("  of it stepping (RunResult::stepping_time)", t_rim_stepping);
  row("  stepping, /monitor/coupling_error false", t_rim_no_estimate);
  row("(b) monolithic reference (trapezoidal + Newton, 0.5 ms)", t_mono);
  char zname[96];
  std::snprintf(zname, sizeof zname, "(c) ZOH co-simulation, H = %.1f ms, record every 10 ms", 1e3 * H_zoh);
  row(zname, t_zoh);
  const double fa = median(t_faithful);
  std::printf("\nframework RIM (record 10 s)  / fused (a)             = %5.2fx   (target <= 1.10x)\n", median(t_rim_coarse) / f);
  std::printf("framework RIM (record 10 s)  / plugin-faithful (a2)  = %5.2fx   (host + extrapolators + virtual calls)\n",
              median(t_rim_coarse) / fa);
  std::printf("plugins without the host (a4)  / fused (a)           = %5.2fx   (the plugin interface: the floor for any host)\n",
              median(t_bare) / f);
  std::printf("framework RIM (record 10 s)  / plugins, no host (a4) = %5.2fx   (the host: extrapolators, checks, bonds, records)\n",
              median(t_rim_coarse) / median(t_bare));
  std::printf("framework stepping alone     / plugins, no host (a4) = %5.2fx   (without folder, files and initialization)\n",
              median(t_rim_stepping) / median(t_bare));
  std::printf("  the same without the coupling-error estimate     = %5.2fx\n", median(t_rim_no_estimate) / median(t_bare));
  std::printf("framework RIM (record 10 ms) / fused + CSV (a3)      = %5.2fx\n", median(t_rim) / median(t_fused_csv));
  std::printf("RIM / monolithic                                    = %5.2fx\n", median(t_rim) / median(t_mono));
  std::printf("RIM / ZOH at H = %.1f ms                             = %5.2fx\n", 1e3 * H_zoh, median(t_rim) / median(t_zoh));

  // 4. Heap allocations while stepping: the same experiment run to 1 macro step, 1 s and 10 s;
  // initialization and the summary are the same, so allocations that grow with the run length
  // happen while stepping.
  std::printf("\nHeap allocations during run() (malloc family in all libraries; operator new in parentheses)\n");
  {
    long fused_allocs = alloc::mallocs.load();
    fused_rim(FusedOptions{});
    fused_allocs = alloc::mallocs.load() - fused_allocs;
    std::printf("  fused loop, 10 s (incl. initialization)            %6ld\n", fused_allocs);
  }
  const Case rim_short{"manifests/crane1_rim.json", {"/coupling/end=0.0002"}};
  const Case rim_1s{"manifests/crane1_rim.json", {"/coupling/end=1"}};
  // One call site for all three, so that identical call stacks have identical addresses.
  std::vector<Outcome> runs;
  std::vector<std::map<StackKey, long>> stacks;
  for (const Case* c : {&rim_short, &rim_1s, &rim}) {
    runs.push_back(run_case(reg, *c, true));
    stacks.push_back(collect_stacks());
  }
  const char* labels[] = {"end = 0.2 ms (initialization + 1 macro step)", "end = 1 s    (5000 macro steps)",
                          "end = 10 s   (50000 macro steps)"};
  for (int i = 0; i < 3; ++i)
    std::printf("  RIM, %-46s %6ld (%ld)\n", labels[i], runs[std::size_t(i)].allocations, runs[std::size_t(i)].news);
  std::printf("  growth per macro step, 1 s -> 10 s: %.6f allocations\n",
              double(runs[2].allocations - runs[1].allocations) / 45000.0);
  // Where the counts differ: the innermost frame outside the standard library and json, per stack.
  std::map<std::string, long> diff;
  for (int i = 1; i < 3; ++i) {
    std::map<StackKey, long> d;
    for (const auto& [k, c] : stacks[std::size_t(i)]) d[k] += c;
    for (const auto& [k, c] : stacks[std::size_t(i - 1)]) d[k] -= c;
    for (const auto& [k, c] : d) {
      if (c == 0) continue;
      std::string where, via;
      for (void* a : k) {
        std::string fr = describe_frame(a);
        if (fr.find("nlohmann") != std::string::npos || fr.find("std::") != std::string::npos ||
            fr.find("libstdc++") != std::string::npos || fr.find("libc.so") != std::string::npos) {
          if (via.empty()) via = fr.find("serializer") != std::string::npos ? " (in nlohmann::json dump)" : "";
          continue;
        }
        where = fr.substr(0, 120) + via;
        break;
      }
      diff[std::string(i == 1 ? "0.2 ms -> 1 s: " : "1 s -> 10 s:   ") + where] += c;
    }
  }
  if (diff.empty()) std::printf("  every allocating call stack occurs equally often in the three runs\n");
  for (const auto& [where, c] : diff)
    if (c != 0) std::printf("  %+ld  %s\n", c, where.c_str());

  if (keep.empty()) fs::remove_all(g_tmp);
  return 0;
}
