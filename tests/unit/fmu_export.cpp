// `stride export` (stride/host/export/export.hpp): the two-mass test (manifests/two_mass.json,
// 10 s) and the crane with ZOH and with RIM coupling packed as FMI 2.0 and 3.0 co-simulation FMUs,
// fmu_two_mass.json with its FMU packed inside, and each subsystem of the shipped cranes and of
// the two-mass test exported alone
// (`--subsystem`) and put back into its manifest in place of the native one.
//  1. Round trip: the FMU imported back into Stride as one subsystem stepped at the experiment's
//     macro step gives, at every communication point, the outputs of the experiment run alone,
//     bit for bit (doStep(t, h) is Simulation::advance_to(t + h), on the experiment's grid).
//  2. The binary loaded directly, as any importer would, from a copy of the unpacked FMU in
//     another folder (relocatable, no STRIDE_PLUGIN_PATH): two instances in one process step
//     apart and alike; every misuse is fmi2Error or a NULL instance with the reason through the
//     logger (wrong GUID, missing resources, unknown value reference, setting an output, a step
//     from the wrong time, past the end, doStep after fmi2Terminate and after a failed step).
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "graph/graph.hpp"
#include "run/simulation.hpp"
#include "shipped_plugins.hpp"
#include "stride/fmi/fmi2.h"
#include "stride/fmi/fmi3.h"
#include "stride_run.hpp"
#include "files.hpp"

namespace {

using stride_test::contains;

namespace fs = std::filesystem;
using namespace stride::host;
using stride_test::json;

std::string stride_cmd(const std::string& args) { return std::string("'") + STRIDE_EXE + "' " + args; }

// manifests/two_mass.json cut to 10 s, written to the scratch folder; exported once.
struct Exported {
  fs::path manifest, fmu, unpacked;
  std::string guid;
};

const Exported& exported() {
  static const Exported e = [] {
    Exported x;
    std::ifstream in(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "two_mass.json");
    json d = json::parse(in);
    d["coupling"]["end"] = 10.0;
    d.erase("output");
    fs::create_directories(stride_test::scratch());
    x.manifest = stride_test::scratch() / "two_mass_export.json";
    std::ofstream(x.manifest) << d.dump(2);
    x.fmu = stride_test::scratch() / "two_mass_export.fmu";
    const auto r =
        stride_test::run_command(stride_cmd("export '" + x.manifest.string() + "' -o '" + x.fmu.string() + "'"));
    INFO(r.output);
    REQUIRE(r.exit_code == 0);
    REQUIRE(fs::exists(x.fmu));
    // Unpacked, then moved elsewhere: nothing may point back at the build or the first folder.
    const fs::path first = stride_test::scratch() / "unpacked_first";
    fs::create_directories(first);
    REQUIRE(stride_test::run_command("cd '" + first.string() + "' && '" + STRIDE_CMAKE + "' -E tar xf '" +
                                     x.fmu.string() + "'")
                .exit_code == 0);
    x.unpacked = stride_test::scratch() / "moved" / "two mass%fmu";
    fs::create_directories(x.unpacked.parent_path());
    fs::rename(first, x.unpacked);
    std::ifstream md(x.unpacked / "modelDescription.xml");
    const std::string text((std::istreambuf_iterator<char>(md)), {});
    const auto g = text.find("guid=\"");
    REQUIRE(g != std::string::npos);
    x.guid = text.substr(g + 6, text.find('"', g + 6) - g - 6);
    return x;
  }();
  return e;
}

std::string g_log;
void logger(fmi2ComponentEnvironment, fmi2String, fmi2Status, fmi2String category, fmi2String format, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, format);
  std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  g_log += std::string(category) + ": " + buf + "\n";
}

struct Api {
  void* lib = nullptr;
  fmi2InstantiateTYPE* instantiate;
  fmi2FreeInstanceTYPE* free_instance;
  fmi2SetupExperimentTYPE* setup;
  fmi2EnterInitializationModeTYPE* enter;
  fmi2ExitInitializationModeTYPE* exit;
  fmi2DoStepTYPE* do_step;
  fmi2GetRealTYPE* get_real;
  fmi2SetRealTYPE* set_real;
  fmi2TerminateTYPE* terminate;
  fmi2GetFMUstateTYPE* get_state;
  fmi2SetFMUstateTYPE* set_state;
  fmi2FreeFMUstateTYPE* free_state;
  template <class T>
  void sym(T*& f, const char* name) {
    void* p = dlsym(lib, name);
    REQUIRE_MESSAGE(p != nullptr, name);
    f = reinterpret_cast<T*>(p);
  }
  explicit Api(const fs::path& so) {
    lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
    REQUIRE_MESSAGE(lib != nullptr, dlerror());
    sym(instantiate, "fmi2Instantiate");
    sym(free_instance, "fmi2FreeInstance");
    sym(setup, "fmi2SetupExperiment");
    sym(enter, "fmi2EnterInitializationMode");
    sym(exit, "fmi2ExitInitializationMode");
    sym(do_step, "fmi2DoStep");
    sym(get_real, "fmi2GetReal");
    sym(set_real, "fmi2SetReal");
    sym(terminate, "fmi2Terminate");
    sym(get_state, "fmi2GetFMUstate");
    sym(set_state, "fmi2SetFMUstate");
    sym(free_state, "fmi2FreeFMUstate");
  }
};

const fmi2CallbackFunctions kCallbacks{logger, std::calloc, std::free, nullptr, nullptr};

std::string uri(const fs::path& p) {
  std::string s = "file://";
  for (char c : p.string()) {
    if (c == ' ') s += "%20";
    else if (c == '%') s += "%25";
    else s += c;
  }
  return s;
}

}  // namespace

// Exports `source`, imports the FMU as subsystem "exp" stepped at the
// experiment's macro step H, and counts the outputs `ports` equal bit for bit to the experiment
// run alone at every communication point up to `end`.
void round_trip(const fs::path& source, int fmi, double H, double end, const std::vector<std::string>& ports,
                std::size_t& compared, std::size_t& equal) {
  const fs::path fmu = stride_test::scratch() / (source.stem().string() + "_fmi" + std::to_string(fmi) + ".fmu");
  const auto r = stride_test::run_command(
      stride_cmd("export '" + source.string() + "' -o '" + fmu.string() + "' --fmi " + std::to_string(fmi)));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  Experiment direct(read_manifest(source), stride_test::registry());
  Simulation sim(direct);
  sim.initialize();
  const json importing = {{"format", 1},
                          {"subsystems", {{"exp", {{"fmu", fmu.string()}, {"step", H}}}}},
                          {"connections", json::array()},
                          {"coupling", {{"scheme", "jacobi"}, {"macro_step", H}, {"start", 0.0}, {"end", end}}}};
  const fs::path im = stride_test::scratch() / ("import_" + fmu.stem().string() + ".json");
  std::ofstream(im) << importing.dump(2);
  Experiment imported(read_manifest(im), stride_test::registry());
  Simulation fmu_sim(imported);
  fmu_sim.initialize();
  const long steps = std::lround(end / H);
  for (long k = 1; k <= steps; ++k) {
    const double t = H * static_cast<double>(k);
    sim.advance_to(t);
    fmu_sim.advance_to(t);
    for (const std::string& p : ports) {
      const auto a = sim.outputs(p), b = fmu_sim.outputs("exp." + p);
      ++compared;
      equal += a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
    }
  }
}

TEST_CASE("an exported experiment imported back reproduces the experiment bit for bit at every communication point") {
  const Exported& e = exported();
  for (int fmi : {2, 3}) {
    CAPTURE(fmi);
    std::size_t compared = 0, equal = 0;
    round_trip(e.manifest, fmi, 0.1, 10.0, {"fast.x", "fast.v", "slow.x", "slow.v"}, compared, equal);
    CHECK(compared == 400);
    CHECK(equal == compared);
    // The hydraulic crane (Peiret 2018 Sect. 5.1) with direct ZOH coupling at h_M = 10 ms, 2 s:
    // the crane (multibody model with its formulation) and the cylinder as one FMU.
    compared = equal = 0;
    round_trip(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "crane1_zoh.json", fmi, 0.01, 2.0,
               {"crane.s", "crane.s_dot", "cylinder.p1", "cylinder.p2"}, compared, equal);
    CHECK(compared == 800);
    CHECK(equal == compared);
    // The same crane with the reduced interface model (macro step h_S = 0.2 ms inside the FMU,
    // which the importer steps at 10 ms: 50 of the experiment's macro steps per doStep).
    compared = equal = 0;
    round_trip(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "crane1_rim.json", fmi, 0.01, 1.0,
               {"crane.s", "crane.s_dot", "cylinder.p1", "cylinder.p2"}, compared, equal);
    CHECK(compared == 400);
    CHECK(equal == compared);
    // An experiment with an FMU subsystem (the oscillator as model exchange, with its
    // integrator): the FMU packed inside the exported one.
    compared = equal = 0;
    round_trip(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "fmu_two_mass.json", fmi, 0.1, 10.0,
               {"fast.x", "fast.v", "slow.x", "slow.v"}, compared, equal);
    CHECK(compared == 400);
    CHECK(equal == compared);
  }
}

TEST_CASE(
    "the exported binary as any importer loads it: relocatable, instances apart, every misuse an error with its "
    "reason") {
  const Exported& e = exported();
  const fs::path so = e.unpacked / "binaries" / "linux64" / "two_mass_export.so";
  REQUIRE(fs::exists(so));
  Api api(so);
  const std::string res = uri(e.unpacked / "resources");

  g_log.clear();
  CHECK(api.instantiate("bad", fmi2CoSimulation, "{00000000-0000-0000-0000-000000000000}", res.c_str(), &kCallbacks, 0,
                        0) == nullptr);
  CHECK(contains(g_log, "is not this FMU's"));
  g_log.clear();
  CHECK(api.instantiate("gone", fmi2CoSimulation, e.guid.c_str(), uri(e.unpacked / "nowhere").c_str(), &kCallbacks, 0,
                        0) == nullptr);
  CHECK(contains(g_log, "does not exist"));
  g_log.clear();
  CHECK(api.instantiate("me", fmi2ModelExchange, e.guid.c_str(), res.c_str(), &kCallbacks, 0, 0) == nullptr);
  CHECK(contains(g_log, "co-simulation only"));

  // Two instances stepped interleaved with different step sizes end alike.
  fmi2Component a = api.instantiate("a", fmi2CoSimulation, e.guid.c_str(), res.c_str(), &kCallbacks, 0, 0);
  fmi2Component b = api.instantiate("b", fmi2CoSimulation, e.guid.c_str(), res.c_str(), &kCallbacks, 0, 0);
  INFO(g_log);
  REQUIRE(a);
  REQUIRE(b);
  for (fmi2Component c : {a, b}) {
    CHECK(api.setup(c, 0, 0, 0.0, 1, 10.0) == fmi2OK);
    CHECK(api.enter(c) == fmi2OK);
    CHECK(api.exit(c) == fmi2OK);
  }
  double ta = 0, tb = 0;
  for (int k = 0; k < 20; ++k) {
    CHECK(api.do_step(a, ta, 0.1, 1) == fmi2OK);
    ta = 0.1 * (k + 1);
    if (k % 2 == 1) {
      CHECK(api.do_step(b, tb, 0.2, 1) == fmi2OK);
      tb = 0.2 * ((k + 1) / 2);
    }
  }
  const fmi2ValueReference vrs[] = {1, 2, 3, 4};
  double ya[4], yb[4];
  CHECK(api.get_real(a, vrs, 4, ya) == fmi2OK);
  CHECK(api.get_real(b, vrs, 4, yb) == fmi2OK);
  for (int i = 0; i < 4; ++i) CHECK(ya[i] == yb[i]);

  g_log.clear();
  const fmi2ValueReference wrong[] = {9999};
  double y = 0;
  CHECK(api.get_real(a, wrong, 1, &y) == fmi2Error);
  CHECK(contains(g_log, "value reference 9999"));
  CHECK(api.set_real(a, vrs, 1, ya) == fmi2Error);
  CHECK(api.do_step(a, 5.0, 0.1, 1) == fmi2Error);  // a is at 2 s
  CHECK(contains(g_log, "but the FMU is at"));
  CHECK(api.do_step(a, ta, 0.1, 1) == fmi2Error);  // failed before: no more steps
  CHECK(contains(g_log, "not allowed in state failed"));
  CHECK(api.get_real(a, vrs, 4, ya) == fmi2OK);  // still readable

  g_log.clear();
  CHECK(api.do_step(b, tb, 9.0, 1) == fmi2Error);  // past the end (10 s)
  CHECK(contains(g_log, "past the experiment's end"));
  CHECK(api.terminate(b) == fmi2OK);
  CHECK(api.do_step(b, tb, 0.1, 1) == fmi2Error);
  CHECK(contains(g_log, "not allowed in state terminated"));
  api.free_instance(a);
  api.free_instance(b);

  // Missing resources: the plugins removed from a copy.
  const fs::path broken = stride_test::scratch() / "broken_copy";
  fs::copy(e.unpacked, broken, fs::copy_options::recursive);
  fs::remove_all(broken / "resources" / "plugins");
  g_log.clear();
  CHECK(api.instantiate("x", fmi2CoSimulation, e.guid.c_str(), uri(broken / "resources").c_str(), &kCallbacks, 0, 0) ==
        nullptr);
  CHECK(contains(g_log, "no plugin folder"));
}

namespace {

// Exports subsystem `sub` of `manifest` alone, puts the FMU in its place (same name, same
// step, same connections) and steps both experiments to `end`: at every communication point
// the largest difference of any output of any subsystem, and how many were compared.
struct Replaced {
  std::size_t compared = 0, equal = 0;
  double largest = 0.0;
  double crane_s = 0.0;  // the crane's actuator length s, m
};
Replaced replace_by_fmu(const std::string& manifest, const std::string& sub, int fmi, double end,
                        const json& iteration = nullptr) {
  const fs::path source = fs::path(STRIDE_SOURCE_DIR) / "manifests" / manifest;
  std::string stem = manifest.substr(0, manifest.size() - 5) + "_" + sub + "_fmi" + std::to_string(fmi);
  std::replace(stem.begin(), stem.end(), '/', '_');
  fs::create_directories(stride_test::scratch());
  const fs::path fmu = stride_test::scratch() / (stem + ".fmu");
  const auto r = stride_test::run_command(stride_cmd("export '" + source.string() + "' --subsystem " + sub + " -o '" +
                                                     fmu.string() + "' --fmi " + std::to_string(fmi)));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  std::ifstream in(source);
  nlohmann::ordered_json d = nlohmann::ordered_json::parse(in);  // the subsystems' order is the graph's
  d["coupling"]["end"] = end;
  if (!iteration.is_null()) d["coupling"]["iteration"] = nlohmann::ordered_json::parse(iteration.dump());
  d.erase("output");
  d.erase("plugin_paths");
  const fs::path native_file = stride_test::scratch() / (stem + "_native.json");
  std::ofstream(native_file) << d.dump(2);
  d["subsystems"][sub] = {{"fmu", fmu.string()}, {"step", d["subsystems"][sub]["step"]}};
  // The FMU names its vector elements s[1]..s[n] (FMI 2 structured names, from 1): an element
  // the manifest wrote as "sub.s[1]" (from 0) is written as the range "sub.s[1:2]", which reads
  // one way only ("sub.s[1]" is refused at an FMU that names an element so).
  for (auto& c : d["connections"])
    for (const char* end : {"from", "to"}) {
      std::string e = c[end];
      const auto open = e.find('[');
      if (e.rfind(sub + ".", 0) != 0 || open == std::string::npos || e.find(':') != std::string::npos) continue;
      const int i = std::stoi(e.substr(open + 1));
      c[end] = e.substr(0, open) + "[" + std::to_string(i) + ":" + std::to_string(i + 1) + "]";
    }
  const fs::path replaced_file = stride_test::scratch() / (stem + "_replaced.json");
  std::ofstream(replaced_file) << d.dump(2);
  Experiment native(read_manifest(native_file), stride_test::registry());
  Experiment replaced(read_manifest(replaced_file), stride_test::registry());
  Simulation a(native), b(replaced);
  a.initialize();
  b.initialize();
  const double H = native.manifest().coupling.macro_step;
  Replaced out;
  for (long k = 1; k <= std::lround(end / H); ++k) {
    a.advance_to(std::min(end, H * double(k)));
    b.advance_to(std::min(end, H * double(k)));
    for (const Node& n : native.graph().nodes)
      for (const stride::PortSpec& p : n.ports) {
        if (p.direction != stride::Direction::output) continue;
        const auto x = a.outputs(n.name + "." + p.name), y = b.outputs(n.name + "." + p.name);
        REQUIRE(x.size() == y.size());
        ++out.compared;
        out.equal += std::equal(x.begin(), x.end(), y.begin());
        for (std::size_t i = 0; i < x.size(); ++i) out.largest = std::max(out.largest, std::abs(x[i] - y[i]));
        if (n.name == "crane" && p.name == "s") out.crane_s = std::max(out.crane_s, std::abs(x[0] - y[0]));
      }
  }
  return out;
}

}  // namespace

TEST_CASE("each subsystem exported alone replaces the native one in its manifest and reproduces the run") {
  struct Case {
    const char* manifest;
    const char* sub;
    double end;
  };
  // The cylinder (ODE subsystem with its integrator, initialized in static equilibrium with the
  // crane's force at t0: set in the FMU's initialization mode), the crane (multibody model with
  // its formulation; the mechanism plugin, whose array ports are structured FMI 2 names), the
  // RIM, the two-mass test's ODE subsystems, the gripping crane with its MLCP formulation.
  const Case cases[] = {{"crane1_zoh.json", "cylinder", 1.0},
                        {"crane1_zoh.json", "crane", 1.0},
                        {"crane1_rim.json", "cylinder", 0.1},
                        {"crane1_rim.json", "crane", 0.1},
                        {"two_mass.json", "fast", 2.0},
                        {"two_mass.json", "slow", 2.0},
                        {"mechanism/crane1_zoh.json", "crane", 0.5},
                        {"crane2_zoh.json", "cylinder2", 0.5},
                        {"nonsmooth_gripping_crane_zoh.json", "crane", 0.2}};
  for (int fmi : {2, 3})
    for (const Case& c : cases) {
      CAPTURE(fmi);
      CAPTURE(c.manifest);
      CAPTURE(c.sub);
      const Replaced r = replace_by_fmu(c.manifest, c.sub, fmi, c.end);
      CAPTURE(r.largest);
      CHECK(r.compared > 0);
      CHECK(r.equal == r.compared);
    }
  // The RIM synchronizes at the end of each multibody step with the crane's sample of that
  // instant (Peiret 2018 Algorithm 2); an FMU is given its inputs at the step's start only, so
  // it synchronizes with the sample before. Its run is not the native one bit for bit: over
  // 0.3 s the crane's s is the same (crane_independent; forces differ by 1.8e-12 N) and
  // differs by 1.3e-9 m (the mechanism crane), far below the RIM's own coupling error against
  // the monolithic crane.
  for (int fmi : {2, 3})
    for (const char* manifest : {"crane1_rim.json", "mechanism/crane1_rim.json"}) {
      CAPTURE(fmi);
      CAPTURE(manifest);
      const Replaced r = replace_by_fmu(manifest, "rim", fmi, 0.3);
      CAPTURE(r.largest);
      CHECK(r.compared > 0);
      CHECK(r.crane_s < 1e-8);
    }
}

TEST_CASE("iterative coupling repeats an exported subsystem's steps from its FMU state") {
  // crane1_zoh with every macro step iterated to 1e-10: the cylinder as an FMU (repeated from
  // fmi2GetFMUstate / fmi2SetFMUstate; iterative coupling refuses a subsystem that cannot save
  // its state) against the native cylinder (repeated from its snapshots).
  for (int fmi : {2, 3}) {
    CAPTURE(fmi);
    const Replaced r =
        replace_by_fmu("crane1_zoh.json", "cylinder", fmi, 1.0, {{"max_iterations", 20}, {"tolerance", 1e-10}});
    CAPTURE(r.largest);
    CHECK(r.compared == 1500);
    CHECK(r.equal == r.compared);  // bit for bit
  }
}

namespace {

// `stride export <args> -o <scratch>/<name>.fmu`, unpacked into "<scratch>/<name> unpacked" (a
// folder name with a space): the folder, the model description and its GUID.
struct Unpacked {
  fs::path dir;
  std::string text, guid;
  std::string output;  // what the export printed
};
Unpacked export_and_unpack(const std::string& args, const std::string& name, const std::string& env = "") {
  fs::create_directories(stride_test::scratch());
  const fs::path fmu = stride_test::scratch() / (name + ".fmu");
  const auto r = stride_test::run_command(env + stride_cmd("export " + args + " -o '" + fmu.string() + "'"));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  Unpacked u;
  u.output = r.output;
  u.dir = stride_test::scratch() / (name + " unpacked");
  fs::remove_all(u.dir);
  fs::create_directories(u.dir);
  REQUIRE(stride_test::run_command("cd '" + u.dir.string() + "' && '" + STRIDE_CMAKE + "' -E tar xf '" + fmu.string() +
                                   "'")
              .exit_code == 0);
  std::ifstream md(u.dir / "modelDescription.xml");
  u.text.assign(std::istreambuf_iterator<char>(md), {});
  const auto g = u.text.find("guid=\"");
  REQUIRE(g != std::string::npos);
  u.guid = u.text.substr(g + 6, u.text.find('"', g + 6) - g - 6);
  return u;
}

const std::string kCrane1Zoh = "'" + std::string(STRIDE_SOURCE_DIR) + "/manifests/crane1_zoh.json'";

}  // namespace

TEST_CASE("an exported subsystem's inputs: set in initialization mode, at any step, refused when wrong") {
  const Unpacked u = export_and_unpack(kCrane1Zoh + " --subsystem cylinder", "cylinder_inputs");
  const fs::path& dir = u.dir;
  const std::string& text = u.text;
  const std::string& guid = u.guid;
  CHECK(contains(text, "name=\"f_eq\" valueReference=\"3\""));
  CHECK(contains(text, "causality=\"input\""));
  CHECK(contains(text, "<Real unit=\"Pa\" min=\"0\" max=\"2e+07\" />"));  // /monitor/bounds of p1, p2
  Api api(dir / "binaries" / "linux64" / "cylinder.so");
  g_log.clear();
  fmi2Component c =
      api.instantiate("cyl", fmi2CoSimulation, guid.c_str(), uri(dir / "resources").c_str(), &kCallbacks, 0, 0);
  INFO(g_log);
  REQUIRE(c);
  CHECK(api.setup(c, 0, 0, 0.0, 1, 10.0) == fmi2OK);
  CHECK(api.enter(c) == fmi2OK);
  // Static equilibrium at rest (Eq. 11): at the end of initialization mode the actuator force
  // balances the effective force, f_h = -f_eq, for the f_eq set last.
  const fmi2ValueReference s_sdot_feq[] = {1, 2, 3}, f_h[] = {4};
  for (double f_eq : {-2.0e4, -3.5e4}) {
    const double u[] = {1.0, 0.0, f_eq};
    CHECK(api.set_real(c, s_sdot_feq, 3, u) == fmi2OK);
    double y = 0;
    CHECK(api.get_real(c, f_h, 1, &y) == fmi2OK);  // the initial state's, before equilibrium
  }
  CHECK(api.exit(c) == fmi2OK);
  double y0 = 0;
  CHECK(api.get_real(c, f_h, 1, &y0) == fmi2OK);
  CHECK(y0 == doctest::Approx(3.5e4).epsilon(1e-9));
  // Retracting at 0.1 m/s changes the force through the friction term at once (feedthrough).
  const fmi2ValueReference s_dot[] = {2};
  const double moving[] = {-0.1};
  CHECK(api.set_real(c, s_dot, 1, moving) == fmi2OK);
  double y1 = 0;
  CHECK(api.get_real(c, f_h, 1, &y1) == fmi2OK);
  CHECK(y1 != y0);
  CHECK(api.do_step(c, 0.0, 0.01, 1) == fmi2OK);
  g_log.clear();
  const double nan[] = {std::nan("")};
  CHECK(api.set_real(c, s_dot, 1, nan) == fmi2Error);
  CHECK(contains(g_log, "not a finite number"));
  CHECK(api.set_real(c, f_h, 1, moving) == fmi2Error);  // an output
  CHECK(contains(g_log, "is the output"));
  CHECK(api.terminate(c) == fmi2OK);
  CHECK(api.set_real(c, s_dot, 1, moving) == fmi2Error);
  CHECK(contains(g_log, "not allowed in state terminated"));
  api.free_instance(c);
}

TEST_CASE("an exported subsystem's parameters: set before initialization, fixed after") {
  const Unpacked u = export_and_unpack(kCrane1Zoh + " --subsystem cylinder", "cylinder_parameters");
  CHECK(contains(u.output, "3 inputs, 6 outputs, 14 parameters"));
  const fs::path& dir = u.dir;
  const std::string& text = u.text;
  const auto at = text.find("name=\"c\" valueReference=\"");
  REQUIRE(at != std::string::npos);
  const std::string key = "name=\"c\" valueReference=\"";
  const fmi2ValueReference c_vr[] = {static_cast<fmi2ValueReference>(std::stoul(text.substr(at + key.size())))};
  const std::string& guid = u.guid;
  Api api(dir / "binaries" / "linux64" / "cylinder.so");
  // The friction of Eq. 24, f_h = (p2 - p1) a_p - c s_dot: from rest in equilibrium (f_h = -f_eq),
  // an actuator rate of 0.1 m/s takes c * 0.1 off the force at once.
  auto force = [&](double c) {
    fmi2Component x =
        api.instantiate("cyl", fmi2CoSimulation, guid.c_str(), uri(dir / "resources").c_str(), &kCallbacks, 0, 0);
    REQUIRE(x);
    double value = 0;
    CHECK(api.get_real(x, c_vr, 1, &value) == fmi2OK);
    CHECK(value == 1e5);  // the manifest's (the plugin's default)
    CHECK(api.set_real(x, c_vr, 1, &c) == fmi2OK);
    CHECK(api.get_real(x, c_vr, 1, &value) == fmi2OK);
    CHECK(value == c);
    CHECK(api.setup(x, 0, 0, 0.0, 1, 10.0) == fmi2OK);
    CHECK(api.enter(x) == fmi2OK);
    const fmi2ValueReference in[] = {1, 2, 3}, f_h[] = {4}, s_dot[] = {2};
    const double u[] = {1.0, 0.0, -2.0e4}, moving[] = {0.1};
    CHECK(api.set_real(x, in, 3, u) == fmi2OK);
    g_log.clear();
    CHECK(api.exit(x) == fmi2OK);
    INFO(g_log);
    double at_rest = 0, f = 0;
    CHECK(api.get_real(x, f_h, 1, &at_rest) == fmi2OK);
    CHECK(at_rest == doctest::Approx(2.0e4).epsilon(1e-9));
    CHECK(api.set_real(x, s_dot, 1, moving) == fmi2OK);
    CHECK(api.get_real(x, f_h, 1, &f) == fmi2OK);
    g_log.clear();
    CHECK(api.set_real(x, c_vr, 1, &c) == fmi2Error);
    CHECK(contains(g_log, "is fixed"));
    api.free_instance(x);
    return f - at_rest;
  };
  CHECK(force(1e5) == doctest::Approx(-1e4).epsilon(1e-9));
  CHECK(force(3e5) == doctest::Approx(-3e4).epsilon(1e-9));
}

TEST_CASE("an exported subsystem's FMU state: a step repeated from a saved state gives the same outputs") {
  const Unpacked u = export_and_unpack(kCrane1Zoh + " --subsystem cylinder", "cylinder_state");
  const fs::path& dir = u.dir;
  const std::string& guid = u.guid;
  CHECK(contains(u.text, "canGetAndSetFMUstate=\"true\""));
  Api api(dir / "binaries" / "linux64" / "cylinder.so");
  fmi2Component c =
      api.instantiate("cyl", fmi2CoSimulation, guid.c_str(), uri(dir / "resources").c_str(), &kCallbacks, 0, 0);
  REQUIRE(c);
  fmi2FMUstate none = nullptr;
  CHECK(api.get_state(c, &none) == fmi2Error);  // not before initialization
  CHECK(api.setup(c, 0, 0, 0.0, 1, 10.0) == fmi2OK);
  CHECK(api.enter(c) == fmi2OK);
  const fmi2ValueReference in[] = {1, 2, 3}, out[] = {4, 5, 6};
  const double u0[] = {1.0, 0.0, -2.0e4};
  CHECK(api.set_real(c, in, 3, u0) == fmi2OK);
  CHECK(api.exit(c) == fmi2OK);
  // The actuator driven through s(t) = 1 + 0.05 sin(2t), 10-ms steps.
  auto drive = [&](double t0, double t1, std::vector<double>& y) {
    for (double t = t0; t < t1 - 1e-9; t += 0.01) {
      const double u[] = {1.0 + 0.05 * std::sin(2 * t), 0.1 * std::cos(2 * t)};
      CHECK(api.set_real(c, in, 2, u) == fmi2OK);
      CHECK(api.do_step(c, t, 0.01, 1) == fmi2OK);
    }
    y.assign(3, 0.0);
    CHECK(api.get_real(c, out, 3, y.data()) == fmi2OK);
  };
  std::vector<double> at_half, first, again, back;
  drive(0.0, 0.5, at_half);
  fmi2FMUstate saved = nullptr;
  REQUIRE(api.get_state(c, &saved) == fmi2OK);
  REQUIRE(saved != nullptr);
  drive(0.5, 1.0, first);
  CHECK(first != at_half);
  CHECK(api.set_state(c, saved) == fmi2OK);
  back.assign(3, 0.0);
  CHECK(api.get_real(c, out, 3, back.data()) == fmi2OK);
  CHECK(back == at_half);
  drive(0.5, 1.0, again);
  CHECK(again == first);  // bit for bit
  CHECK(api.get_state(c, &saved) == fmi2OK);  // the same state object, reused
  CHECK(api.free_state(c, &saved) == fmi2OK);
  CHECK(saved == nullptr);
  api.free_instance(c);
  // A whole experiment with connections keeps extrapolator histories: no FMU state.
  CHECK(contains(export_and_unpack(kCrane1Zoh, "crane_whole").text, "canGetAndSetFMUstate=\"false\""));
}

TEST_CASE("an exported experiment's plugin messages go through the importer's logger") {
  // tests/manifests/log_ramp.json: test_log ramps y = t and warns at each step past 0.5 m, and
  // says at its start where it starts (info).
  const Unpacked u = export_and_unpack("'" + std::string(STRIDE_SOURCE_DIR) + "/tests/manifests/log_ramp.json'",
                                       "log_ramp", std::string("STRIDE_PLUGIN_PATH='") + STRIDE_TEST_RUNTIME_DIR + "' ");
  const fs::path& dir = u.dir;
  const std::string& guid = u.guid;
  // Self-contained: the libraries the binary needs beyond the C library are beside it and found
  // there first, and it reads the unit database it carries (not the one UDUNITS2_XML_PATH names).
  const auto ldd = stride_test::run_command("ldd '" + (dir / "binaries" / "linux64" / "log_ramp.so").string() + "'");
  CHECK(contains(ldd.output, "libpugixml.so.1 => " + (dir / "binaries" / "linux64" / "libpugixml.so.1").string()));
  CHECK_FALSE(contains(ldd.output, "libzip"));  // loaded only to unpack FMUs packed inside: none here
  CHECK(contains(ldd.output, "libudunits2.so.0 => " + (dir / "binaries" / "linux64" / "libudunits2.so.0").string()));
  CHECK(fs::exists(dir / "resources" / "udunits" / "udunits2.xml"));
  ::setenv("UDUNITS2_XML_PATH", "/nonexistent/udunits2.xml", 1);
  Api api(dir / "binaries" / "linux64" / "log_ramp.so");
  for (int logging : {0, 1}) {
    CAPTURE(logging);
    g_log.clear();
    fmi2Component c = api.instantiate("ramp", fmi2CoSimulation, guid.c_str(), uri(dir / "resources").c_str(),
                                      &kCallbacks, 0, logging);
    REQUIRE(c);
    CHECK(api.setup(c, 0, 0, 0.0, 1, 1.0) == fmi2OK);
    CHECK(api.enter(c) == fmi2OK);
    CHECK(api.exit(c) == fmi2OK);
    CHECK(api.do_step(c, 0.0, 0.4, 1) == fmi2OK);
    CHECK_FALSE(contains(g_log, "above the limit"));
    CHECK(contains(g_log, "logInfo: [info] ramp, t = 0 s: starts at t0 = 0 s") == (logging == 1));
    CHECK(api.do_step(c, 0.4, 0.2, 1) == fmi2OK);
    INFO(g_log);
    CHECK(contains(g_log, "logStatusWarning: [warning] ramp, t = 0.5 s: y = 0.51 m is above the limit 0.5 m"));
    api.free_instance(c);
  }
  ::unsetenv("UDUNITS2_XML_PATH");
}

TEST_CASE("\"exports\" chooses the ports of an exported experiment") {
  std::ifstream in(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "crane1_zoh.json");
  json d = json::parse(in);
  d.erase("output");
  // The crane without its cylinder: its force input f_h is the FMU's input.
  d["subsystems"].erase("cylinder");
  json kept = json::array();
  for (const json& c : d["connections"])
    if (c["from"].get<std::string>().rfind("crane.", 0) != 0 || c["to"].get<std::string>().rfind("crane.", 0) == 0)
      if (c["to"].get<std::string>().rfind("cylinder.", 0) != 0 && c["from"].get<std::string>().rfind("cylinder.", 0) != 0)
        kept.push_back(c);
  d["connections"] = kept;
  d["variables"].erase("h_S");  // read only by the cylinder and the connections left out
  d["variables"].erase("order");
  d["record"]["variables"] = {"crane.s"};
  d["monitor"].erase("bounds");
  d["exports"] = {"crane.f_h", "crane.s", "crane.s_dot"};
  fs::create_directories(stride_test::scratch());
  const fs::path m = stride_test::scratch() / "crane_exports.json";
  std::ofstream(m) << d.dump(2);
  const fs::path out = stride_test::scratch() / "crane_exports.fmu";
  const auto r = stride_test::run_command(stride_cmd("export '" + m.string() + "' -o '" + out.string() + "'"));
  INFO(r.output);
  CHECK(r.exit_code == 0);
  CHECK(contains(r.output, "1 inputs, 2 outputs"));
  // A listed port that is no port, and an unconnected input left out, name their pointers.
  d["exports"] = {"crane.s", "crane.nothing"};
  std::ofstream(m) << d.dump(2);
  const auto bad = stride_test::run_command(stride_cmd("export '" + m.string() + "' -o '" + out.string() + "'"));
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.output, "/exports/1"));
  CHECK(contains(bad.output, "crane.f_h"));
  d["exports"] = "crane.s";
  std::ofstream(m) << d.dump(2);
  CHECK(contains(stride_test::run_command(stride_cmd("export '" + m.string() + "' -o '" + out.string() + "'")).output,
                 "/exports: expected an array"));
  // `run` still refuses the unconnected input.
  d.erase("exports");
  std::ofstream(m) << d.dump(2);
  const auto run = stride_test::run_command(stride_cmd("validate '" + m.string() + "'"));
  CHECK(run.exit_code == 2);
  CHECK(contains(run.output, "crane.f_h"));
}

TEST_CASE("what cannot be exported is refused with the reason and leaves no file") {
  const fs::path out = stride_test::scratch() / "refused.fmu";
  fs::create_directories(stride_test::scratch());
  const fs::path ssd = stride_test::scratch() / "system.ssd";
  std::ofstream(ssd) << "<x/>";
  const auto r = stride_test::run_command(stride_cmd("export '" + ssd.string() + "' -o '" + out.string() + "'"));
  CHECK(r.exit_code == 2);
  CHECK(contains(r.output, "only a JSON manifest can be exported"));
  CHECK_FALSE(fs::exists(out));
  const auto bad = stride_test::run_command(stride_cmd("export /no/such/manifest.json -o '" + out.string() + "'"));
  CHECK(bad.exit_code == 2);
  CHECK_FALSE(fs::exists(out));
  const auto unknown = stride_test::run_command(
      stride_cmd("export '" + (fs::path(STRIDE_SOURCE_DIR) / "manifests" / "crane1_zoh.json").string() +
                 "' --subsystem pump -o '" + out.string() + "'"));
  CHECK(unknown.exit_code == 2);
  CHECK(contains(unknown.output, "no subsystem \"pump\" to export (it has crane, cylinder)"));
  CHECK_FALSE(fs::exists(out));
}

namespace {
std::string g_log3;
void logger3(fmi3InstanceEnvironment, fmi3Status, fmi3String category, fmi3String message) {
  g_log3 += std::string(category) + ": " + message + "\n";
}
}  // namespace

TEST_CASE("the FMI 3 binary: arrays of the right length, every misuse an error with its reason") {
  const Exported& e = exported();
  const fs::path fmu = stride_test::scratch() / "two_mass_fmi3_direct.fmu";
  REQUIRE(stride_test::run_command(stride_cmd("export '" + e.manifest.string() + "' -o '" + fmu.string() + "' --fmi 3")).exit_code == 0);
  const fs::path dir = stride_test::scratch() / "fmi3 unpacked";
  fs::create_directories(dir);
  REQUIRE(stride_test::run_command("cd '" + dir.string() + "' && '" + STRIDE_CMAKE + "' -E tar xf '" + fmu.string() + "'").exit_code == 0);
  std::ifstream md(dir / "modelDescription.xml");
  const std::string text((std::istreambuf_iterator<char>(md)), {});
  const auto g = text.find("instantiationToken=\"");
  REQUIRE(g != std::string::npos);
  const std::string token = text.substr(g + 20, text.find('"', g + 20) - g - 20);
  void* lib = dlopen((dir / "binaries" / "x86_64-linux" / "two_mass_export.so").c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(lib != nullptr, dlerror());
  auto* instantiate = reinterpret_cast<fmi3InstantiateCoSimulationTYPE*>(dlsym(lib, "fmi3InstantiateCoSimulation"));
  auto* enter = reinterpret_cast<fmi3EnterInitializationModeTYPE*>(dlsym(lib, "fmi3EnterInitializationMode"));
  auto* exit = reinterpret_cast<fmi3ExitInitializationModeTYPE*>(dlsym(lib, "fmi3ExitInitializationMode"));
  auto* do_step = reinterpret_cast<fmi3DoStepTYPE*>(dlsym(lib, "fmi3DoStep"));
  auto* get = reinterpret_cast<fmi3GetFloat64TYPE*>(dlsym(lib, "fmi3GetFloat64"));
  auto* terminate = reinterpret_cast<fmi3TerminateTYPE*>(dlsym(lib, "fmi3Terminate"));
  auto* free_instance = reinterpret_cast<fmi3FreeInstanceTYPE*>(dlsym(lib, "fmi3FreeInstance"));
  REQUIRE((instantiate && enter && exit && do_step && get && terminate && free_instance));
  const std::string res = (dir / "resources").string() + "/";

  g_log3.clear();
  CHECK(instantiate("bad", "{wrong}", res.c_str(), false, false, false, false, nullptr, 0, nullptr, logger3, nullptr) == nullptr);
  CHECK(contains(g_log3, "is not this FMU's"));
  fmi3Instance c = instantiate("c", token.c_str(), res.c_str(), false, false, false, false, nullptr, 0, nullptr, logger3, nullptr);
  INFO(g_log3);
  REQUIRE(c != nullptr);
  g_log3.clear();
  CHECK(enter(c, false, 0, 1.0, false, 0) == fmi3Error);  // not the experiment's start
  CHECK(contains(g_log3, "starts at"));
  CHECK(enter(c, false, 0, 0.0, true, 10.0) == fmi3OK);
  CHECK(exit(c) == fmi3OK);
  fmi3Boolean event = true, stop = true, early = true;
  double last = -1;
  CHECK(do_step(c, 0.0, 0.5, true, &event, &stop, &early, &last) == fmi3OK);
  CHECK(last == 0.5);
  CHECK_FALSE(stop);
  const fmi3ValueReference vrs[] = {1, 5};
  double y[2] = {0, 0};
  CHECK(get(c, vrs, 2, y, 2) == fmi3OK);
  CHECK(y[0] != 0.0);
  g_log3.clear();
  CHECK(get(c, vrs, 2, y, 3) == fmi3Error);
  CHECK(contains(g_log3, "nValues is 3"));
  CHECK(terminate(c) == fmi3OK);
  CHECK(do_step(c, 0.5, 0.5, true, &event, &stop, &early, &last) == fmi3Error);
  CHECK(contains(g_log3, "not allowed in state terminated"));
  CHECK(stop);
  free_instance(c);
}
