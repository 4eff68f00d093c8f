// What Stride writes for other FMI and SSP tools, checked against the standards themselves:
//  1. Every modelDescription.xml `stride export` writes (FMI 2.0 and 3.0, a whole experiment and
//     one subsystem) and every SystemStructure.ssd of `stride export --ssp` (plugins, FMUs,
//     `--fmus` in FMI 2 and 3) validate against the standards' XSDs (tests/standards/, copies
//     of the Modelica Association's schemas) with xmllint.
//  2. The FMI 3 binary defines every function of the FMI 3.0 interface (the lists of
//     stride/fmi/fmi3.h, from the standard's fmi3FunctionTypes.h): dlopen resolves each; those
//     Stride does not support return fmi3Error with the reason through the logger; the
//     independent variable reads as the time reached.
//  3. Stride's own rule check finds what a schema cannot: no or two independent variables, a
//     function of the interface or of a declared capability missing from the binary.
//  4. `stride plugins describe X.fmu` says the interface, FMI version, generating tool, numbers
//     of states and event indicators, and default experiment, as the modelDescription.xml has them.
#include <doctest/doctest.h>

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <regex>
#include <string>
#include <vector>

#include "export/fmi_rules.hpp"
#include "stride/fmi/fmi2.h"
#include "stride/fmi/fmi3.h"
#include "stride/host/ssp/ssp.hpp"
#include "stride_run.hpp"
#include "files.hpp"

namespace {

using stride_test::contains;

namespace fs = std::filesystem;
using stride_test::json;

std::string quoted(const fs::path& p) { return "'" + p.string() + "'"; }
std::string stride_cmd(const std::string& args) { return quoted(STRIDE_EXE) + " " + args; }
std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  return {std::istreambuf_iterator<char>(in), {}};
}
std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

fs::path standard(const std::string& file) { return fs::path(STRIDE_SOURCE_DIR) / "tests" / "standards" / file; }

// `xmllint --noout --schema`: exit code and what it said.
stride_test::CommandResult xmllint(const fs::path& schema, const fs::path& xml) {
  return stride_test::run_command("xmllint --noout --schema " + quoted(schema) + " " + quoted(xml));
}

// `stride export ARGS <scratch>/NAME`, then the archive unpacked into NAME.d; once per ARGS
// (the same export again gives the folder of the first).
fs::path exported(const std::string& name, const std::string& args) {
  static std::map<std::string, fs::path> done;
  if (auto it = done.find(args); it != done.end()) return it->second;
  fs::create_directories(stride_test::scratch());
  const fs::path archive = stride_test::scratch() / name, dir = stride_test::scratch() / (name + ".d");
  const auto r = stride_test::run_command(stride_cmd("export " + args + " " + quoted(archive)));
  INFO(r.output);
  REQUIRE(r.exit_code == 0);
  fs::create_directories(dir);
  REQUIRE(
      stride_test::run_command("cd " + quoted(dir) + " && " + quoted(STRIDE_CMAKE) + " -E tar xf " + quoted(archive))
          .exit_code == 0);
  return done[args] = dir;
}

// manifests/two_mass.json cut to 10 s.
const fs::path& two_mass() {
  static const fs::path m = [] {
    std::ifstream in(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "two_mass.json");
    json d = json::parse(in);
    d["coupling"]["end"] = 10.0;
    d.erase("output");
    fs::create_directories(stride_test::scratch());
    const fs::path f = stride_test::scratch() / "two_mass_standards.json";
    std::ofstream(f) << d.dump(2);
    return f;
  }();
  return m;
}

std::string g_log;
void logger3(fmi3InstanceEnvironment, fmi3Status, fmi3String category, fmi3String message) {
  g_log += std::string(category) + ": " + message + "\n";
}

}  // namespace

TEST_CASE("every modelDescription.xml and SystemStructure.ssd Stride exports validates against the standards' XSDs") {
  const auto lint = stride_test::run_command("xmllint --version");
  INFO("xmllint (Debian package libxml2-utils) is needed: " << lint.output);
  REQUIRE(lint.exit_code == 0);
  const std::string crane = quoted(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "crane1_zoh.json");
  for (int fmi : {2, 3}) {
    CAPTURE(fmi);
    const fs::path schema = standard(fmi == 2 ? "fmi2/fmi2ModelDescription.xsd" : "fmi3/fmi3ModelDescription.xsd");
    const std::string v = " --fmi " + std::to_string(fmi);
    for (const fs::path& dir :
         {exported("whole" + std::to_string(fmi) + ".fmu", quoted(two_mass()) + v + " -o"),
          exported("fast" + std::to_string(fmi) + ".fmu", quoted(two_mass()) + v + " --subsystem fast -o"),
          exported("cylinder" + std::to_string(fmi) + ".fmu", crane + v + " --subsystem cylinder -o")}) {
      const auto r = xmllint(schema, dir / "modelDescription.xml");
      INFO(dir.string() << ": " << r.output);
      CHECK(r.exit_code == 0);
      CHECK(contains(r.output, "validates"));
      // The schema passes it, and so does Stride's own check of the rules no schema states.
      CHECK(stride::host::fmu_export::model_description_problems(read_text(dir / "modelDescription.xml")).empty());
    }
  }
  // SSPs: plugins only, a plugin and an FMU, every subsystem as an FMU (FMI 2 and 3).
  const fs::path ssd_schema = standard("ssp1/SystemStructureDescription.xsd");
  const std::string fmu_two_mass = quoted(fs::path(STRIDE_SOURCE_DIR) / "manifests" / "fmu_two_mass.json");
  for (const fs::path& dir :
       {exported("plugins.ssp", quoted(two_mass()) + " --ssp"), exported("fmu_two_mass.ssp", fmu_two_mass + " --ssp"),
        exported("crane_fmus2.ssp", crane + " --fmus --fmi 2 --ssp"),
        exported("crane_fmus3.ssp", crane + " --fmus --fmi 3 --ssp")}) {
    const fs::path ssd = dir / "SystemStructure.ssd";
    const auto r = xmllint(ssd_schema, ssd);
    INFO(ssd.string() << ": " << r.output);
    CHECK(r.exit_code == 0);
    CHECK(contains(r.output, "validates"));
    // Stride's settings are inside an element of the annotation, which Stride reads back.
    const std::string text = read_text(ssd);
    CHECK(contains(text, std::string("<stride:") + stride::host::ssp::kStrideElement + ">"));
    CHECK_FALSE(std::regex_search(text, std::regex("<ssc:Annotation type=\"org.stride.manifest\">\\s*\\{")));
    const auto back = stride_test::run_command(stride_cmd("validate " + quoted(ssd)));
    INFO(back.output);
    CHECK(back.exit_code == 0);
  }
  // The hand-written test system (tests/ssp/two_mass) writes Stride's settings the same way.
  const auto hand =
      xmllint(ssd_schema, fs::path(STRIDE_SOURCE_DIR) / "tests" / "ssp" / "two_mass" / "SystemStructure.ssd");
  INFO(hand.output);
  CHECK(hand.exit_code == 0);
  // The FMUs packed by --fmus are Stride's exports: their descriptions validate too.
  for (const fs::path& fmu : fs::directory_iterator(stride_test::scratch() / "crane_fmus3.ssp.d" / "resources")) {
    if (fmu.extension() != ".fmu") continue;
    const fs::path dir = stride_test::scratch() / (fmu.stem().string() + "_from_ssp");
    fs::create_directories(dir);
    REQUIRE(stride_test::run_command("cd " + quoted(dir) + " && " + quoted(STRIDE_CMAKE) + " -E tar xf " + quoted(fmu))
                .exit_code == 0);
    const auto r = xmllint(standard("fmi3/fmi3ModelDescription.xsd"), dir / "modelDescription.xml");
    INFO(fmu.string() << ": " << r.output);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("the FMI 3 binary defines every function of the interface; what Stride lacks is an error with its reason") {
  const fs::path dir = exported("direct3.fmu", quoted(two_mass()) + " --fmi 3 -o");
  const fs::path so = dir / "binaries" / "x86_64-linux" / "two_mass_standards.so";  // the model identifier
  void* lib = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE_MESSAGE(lib != nullptr, dlerror());
  std::vector<std::string> missing;
  std::size_t resolved = 0;
#define STRIDE_RESOLVE(f) (dlsym(lib, #f) ? ++resolved : (missing.push_back(#f), 0));
  STRIDE_FMI3_COMMON_FUNCTIONS(STRIDE_RESOLVE)
  STRIDE_FMI3_ME_FUNCTIONS(STRIDE_RESOLVE)
  STRIDE_FMI3_CS_FUNCTIONS(STRIDE_RESOLVE)
  STRIDE_FMI3_SE_FUNCTIONS(STRIDE_RESOLVE)
#undef STRIDE_RESOLVE
  CHECK(missing.empty());
  CHECK(resolved == 75);  // FMI 3.0's fmi3FunctionTypes.h declares 75 function types
  // The same from the file alone, as the exporter's check reads it.
  const auto names = stride::host::fmu_export::exported_functions(so);
  CHECK(names.count("fmi3InstantiateScheduledExecution") == 1);
  CHECK(names.count("fmi2DoStep") == 0);

  const std::string md = read_text(dir / "modelDescription.xml");
  const auto at = md.find("instantiationToken=\"");
  REQUIRE(at != std::string::npos);
  const std::string token = md.substr(at + 20, md.find('"', at + 20) - at - 20);
  CHECK(contains(md, "<Float64 name=\"time\" valueReference=\"0\""));
  auto sym = [&](const char* name) { return dlsym(lib, name); };
  auto* instantiate = reinterpret_cast<fmi3InstantiateCoSimulationTYPE*>(sym("fmi3InstantiateCoSimulation"));
  auto* enter = reinterpret_cast<fmi3EnterInitializationModeTYPE*>(sym("fmi3EnterInitializationMode"));
  auto* exit = reinterpret_cast<fmi3ExitInitializationModeTYPE*>(sym("fmi3ExitInitializationMode"));
  auto* do_step = reinterpret_cast<fmi3DoStepTYPE*>(sym("fmi3DoStep"));
  auto* get = reinterpret_cast<fmi3GetFloat64TYPE*>(sym("fmi3GetFloat64"));
  auto* set = reinterpret_cast<fmi3SetFloat64TYPE*>(sym("fmi3SetFloat64"));
  auto* free_instance = reinterpret_cast<fmi3FreeInstanceTYPE*>(sym("fmi3FreeInstance"));
  const std::string res = (dir / "resources").string() + "/";
  g_log.clear();
  fmi3Instance c =
      instantiate("c", token.c_str(), res.c_str(), false, false, false, false, nullptr, 0, nullptr, logger3, nullptr);
  INFO(g_log);
  REQUIRE(c != nullptr);
  REQUIRE(enter(c, false, 0, 0.0, true, 10.0) == fmi3OK);
  REQUIRE(exit(c) == fmi3OK);
  fmi3Boolean event = false, stop = false, early = false;
  double last = 0;
  REQUIRE(do_step(c, 0.0, 0.5, true, &event, &stop, &early, &last) == fmi3OK);
  const fmi3ValueReference time_vr = 0;
  double t = -1;
  CHECK(get(c, &time_vr, 1, &t, 1) == fmi3OK);
  CHECK(t == 0.5);
  g_log.clear();
  CHECK(set(c, &time_vr, 1, &t, 1) == fmi3Error);
  CHECK(contains(g_log, "fmi3SetFloat64: value reference 0 is the independent variable time"));

  // Each unsupported function: fmi3Error and "<function>: <why>" through the logger.
  const fmi3ValueReference vr = 1;
  auto refused = [&](fmi3Status s, const std::string& expected) {
    CAPTURE(expected);
    CHECK(s == fmi3Error);
    CHECK(contains(g_log, expected));
    g_log.clear();
  };
  float f32 = 0;
  refused(reinterpret_cast<fmi3GetFloat32TYPE*>(sym("fmi3GetFloat32"))(c, &vr, 1, &f32, 1),
          "fmi3GetFloat32: the FMU has no Float32 variables");
  fmi3UInt64 u64 = 0;
  refused(reinterpret_cast<fmi3SetUInt64TYPE*>(sym("fmi3SetUInt64"))(c, &vr, 1, &u64, 1),
          "fmi3SetUInt64: the FMU has no UInt64 variables");
  fmi3Clock tick = false;
  refused(reinterpret_cast<fmi3GetClockTYPE*>(sym("fmi3GetClock"))(c, &vr, 1, &tick),
          "fmi3GetClock: the FMU has no clocks");
  double shift = 0;
  refused(reinterpret_cast<fmi3GetShiftDecimalTYPE*>(sym("fmi3GetShiftDecimal"))(c, &vr, 1, &shift),
          "fmi3GetShiftDecimal: the FMU has no clocks");
  size_t size = 0;
  refused(reinterpret_cast<fmi3SerializedFMUStateSizeTYPE*>(sym("fmi3SerializedFMUStateSize"))(c, nullptr, &size),
          "canSerializeFMUState=\"false\"");
  double seed = 1, sensitivity = 0;
  refused(reinterpret_cast<fmi3GetDirectionalDerivativeTYPE*>(sym("fmi3GetDirectionalDerivative"))(
              c, &vr, 1, &vr, 1, &seed, 1, &sensitivity, 1),
          "providesDirectionalDerivatives=\"false\"");
  refused(reinterpret_cast<fmi3GetNumberOfVariableDependenciesTYPE*>(sym("fmi3GetNumberOfVariableDependencies"))(c, vr,
                                                                                                                 &size),
          "providesPerElementDependencies=\"false\"");
  const fmi3Int32 order = 1;
  refused(
      reinterpret_cast<fmi3GetOutputDerivativesTYPE*>(sym("fmi3GetOutputDerivatives"))(c, &vr, 1, &order, &shift, 1),
      "maxOutputDerivativeOrder=\"0\"");
  fmi3Boolean b = false;
  double next = 0;
  refused(
      reinterpret_cast<fmi3UpdateDiscreteStatesTYPE*>(sym("fmi3UpdateDiscreteStates"))(c, &b, &b, &b, &b, &b, &next),
      "fmi3UpdateDiscreteStates: the FMU has no event mode");
  refused(reinterpret_cast<fmi3GetContinuousStatesTYPE*>(sym("fmi3GetContinuousStates"))(c, &shift, 1),
          "fmi3GetContinuousStates: this FMU is for co-simulation only");
  refused(reinterpret_cast<fmi3ActivateModelPartitionTYPE*>(sym("fmi3ActivateModelPartition"))(c, vr, 0.5),
          "fmi3ActivateModelPartition: this FMU is for co-simulation only");
  CHECK(reinterpret_cast<fmi3InstantiateScheduledExecutionTYPE*>(sym("fmi3InstantiateScheduledExecution"))(
            "se", token.c_str(), res.c_str(), false, false, nullptr, logger3, nullptr, nullptr, nullptr) == nullptr);
  CHECK(contains(g_log, "fmi3InstantiateScheduledExecution: this FMU is for co-simulation only"));
  // The instance still steps after every refusal.
  CHECK(do_step(c, 0.5, 0.5, true, &event, &stop, &early, &last) == fmi3OK);
  CHECK(last == 1.0);
  free_instance(c);
}

TEST_CASE("the rule check finds what no schema states: the independent variable and the binary's functions") {
  using stride::host::fmu_export::binary_problems;
  using stride::host::fmu_export::exported_functions;
  using stride::host::fmu_export::model_description_problems;
  const fs::path dir = exported("rules3.fmu", quoted(two_mass()) + " --fmi 3 -o");
  const std::string md = read_text(dir / "modelDescription.xml");
  REQUIRE(model_description_problems(md).empty());
  const std::string time_line = "<Float64 name=\"time\" valueReference=\"0\"";
  const auto at = md.find(time_line);
  REQUIRE(at != std::string::npos);
  const std::string time_element = md.substr(at, md.find("/>", at) + 2 - at);

  std::string none = md;
  none.erase(at, time_element.size());
  auto p = model_description_problems(none);
  REQUIRE(p.size() == 1);
  CHECK(contains(p[0], "no variable has causality=\"independent\" (FMI 3.0 requires exactly one"));

  std::string two = md;
  std::string second = time_element;
  second.replace(second.find("\"time\""), 6, "\"t2\"");
  second.replace(second.find("valueReference=\"0\""), 18, "valueReference=\"999\"");
  two.insert(at + time_element.size(), "\n    " + second);
  p = model_description_problems(two);
  REQUIRE(p.size() == 1);
  CHECK(contains(
      p[0], "variable \"t2\" is a second independent variable (\"time\" is one; the standard allows exactly one)"));

  // The binary against the description: complete as exported; one function gone, named.
  const fs::path so = dir / "binaries" / "x86_64-linux" / "two_mass_standards.so";
  auto names = exported_functions(so);
  CHECK(binary_problems(md, names, "rules3.so").empty());
  names.erase("fmi3GetClock");
  p = binary_problems(md, names, "rules3.so");
  REQUIRE(p.size() == 1);
  CHECK(p[0] == "rules3.so does not export fmi3GetClock, which every FMI 3.0 FMU exports");
  names.erase("fmi3DoStep");
  p = binary_problems(md, names, "rules3.so");
  REQUIRE(p.size() == 2);
  CHECK(p[1] == "rules3.so does not export fmi3DoStep, which every FMI 3.0 FMU with <CoSimulation> exports");
  // A capability declared that the binary does not back (FMI 2: canGetAndSetFMUstate).
  const fs::path dir2 = exported("rules2.fmu", quoted(two_mass()) + " --fmi 2 --subsystem fast -o");
  const std::string md2 = read_text(dir2 / "modelDescription.xml");
  REQUIRE(contains(md2, "canGetAndSetFMUstate=\"true\""));
  auto names2 = exported_functions(dir2 / "binaries" / "linux64" / "fast.so");
  CHECK(binary_problems(md2, names2, "rules2.so").empty());
  names2.erase("fmi2SetFMUstate");
  p = binary_problems(md2, names2, "rules2.so");
  REQUIRE(p.size() == 2);
  CHECK(p[0] == "rules2.so does not export fmi2SetFMUstate, which every FMI 2.0 FMU exports");
  CHECK(p[1] == "rules2.so does not export fmi2SetFMUstate, which <CoSimulation canGetAndSetFMUstate=\"true\"> needs");
  CHECK_THROWS_WITH_AS(exported_functions(dir2 / "modelDescription.xml"), doctest::Contains("not a 64-bit ELF"),
                       std::runtime_error);
}

TEST_CASE("`stride plugins describe X.fmu` says interface, FMI version, tool, states, event indicators, experiment") {
  struct Case {
    fs::path fmu, xml;
    std::string version, interfaces, tool;
  };
  const fs::path described = exported("described.fmu", quoted(two_mass()) + " --fmi 3 -o");
  const fs::path exported3 = described.parent_path() / described.stem();  // the archive beside its folder
  const fs::path examples = fs::path(STRIDE_SOURCE_DIR) / "examples" / "fmus";
  const std::vector<Case> cases = {
      {fs::path(STRIDE_FMU_DIR) / "oscillator.fmu", examples / "oscillator.xml", "2.0",
       "co-simulation and model exchange", "Stride tests (hand-written)"},
      {fs::path(STRIDE_FMU_DIR) / "bouncing_ball3.fmu", examples / "bouncing_ball3.xml", "3.0", "model exchange",
       "Stride tests (hand-written)"},
      {fs::path(STRIDE_FMU_DIR) / "gain.fmu", examples / "gain.xml", "2.0", "co-simulation",
       "Stride tests (hand-written)"},
      {exported3, described / "modelDescription.xml", "3.0", "co-simulation", "Stride (stride export)"}};
  for (const Case& c : cases) {
    CAPTURE(c.fmu);
    const std::string xml = read_text(c.xml);
    // Counted from the description itself: FMI 2 numberOfEventIndicators, FMI 3 <EventIndicator>.
    const std::size_t states = count(xml, "derivative=\"");
    std::smatch m;
    const std::size_t indicators = std::regex_search(xml, m, std::regex("numberOfEventIndicators=\"(\\d+)\""))
                                       ? std::stoul(m[1])
                                       : count(xml, "<EventIndicator ");
    const auto text = stride_test::run_command(stride_cmd("plugins describe " + quoted(c.fmu)));
    INFO(text.output);
    REQUIRE(text.exit_code == 0);
    CHECK(contains(text.output, "FMI " + c.version + ", " + c.interfaces + "; generated by " + c.tool + "\n"));
    CHECK(contains(text.output, std::to_string(states) + " continuous states, " + std::to_string(indicators) +
                                    " event indicators\n"));
    const auto js = stride_test::run_command(stride_cmd("plugins describe " + quoted(c.fmu) + " --json"));
    REQUIRE(js.exit_code == 0);
    const json f = json::parse(js.output)["fmu"];
    CHECK(f["fmi_version"] == c.version);
    CHECK(f["generation_tool"] == c.tool);
    CHECK(f["states"] == states);
    CHECK(f["event_indicators"] == indicators);
    CHECK(f["interfaces"].size() == count(c.interfaces, " and ") + 1);
    if (!contains(xml, "<DefaultExperiment")) {
      CHECK(f["default_experiment"].empty());
      CHECK(contains(text.output, "default experiment: (none)"));
    }
  }
  // The exported FMU's default experiment is the manifest's start, end and macro step.
  std::ifstream in(two_mass());
  const json coupling = json::parse(in)["coupling"];
  const auto js = stride_test::run_command(stride_cmd("plugins describe " + quoted(exported3) + " --json"));
  const json e = json::parse(js.output)["fmu"]["default_experiment"];
  CHECK(e["start"] == coupling.value("start", 0.0));
  CHECK(e["stop"] == 10.0);
  CHECK(e["step"] == coupling["macro_step"]);
  const auto text = stride_test::run_command(stride_cmd("plugins describe " + quoted(exported3)));
  CHECK(contains(text.output, "default experiment: start 0 stop 10 step " + coupling["macro_step"].dump() + "\n"));
}

namespace {
// The libraries `ldd` resolves for `binary` (run in place: its RPATH $ORIGIN applies), by file
// name, with where it found each.
std::map<std::string, std::string> resolved_libraries(const fs::path& binary) {
  const auto r = stride_test::run_command("ldd " + quoted(binary));
  REQUIRE(r.exit_code == 0);
  std::map<std::string, std::string> out;
  std::smatch m;
  const std::regex line("\\s*(\\S+) => (\\S+)");
  for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), line); it != std::sregex_iterator(); ++it)
    out[(*it)[1]] = (*it)[2];
  return out;
}
}  // namespace

TEST_CASE("an exported FMU packs the libraries its binary loads at run time and no others") {
  const fs::path examples = fs::path(STRIDE_SOURCE_DIR) / "manifests";
  // The two-mass test (plugins only) and fmu_two_mass.json (an FMU packed inside, unpacked by
  // libzip at run time).
  for (const auto& [name, nested] : {std::pair{std::string("two_mass"), false}, {std::string("fmu_two_mass"), true}}) {
    CAPTURE(name);
    const fs::path dir = exported(name + "_libs.fmu", quoted(examples / (name + ".json")) + " -o");
    const fs::path folder = dir / "binaries" / "linux64";
    std::set<std::string> packed;
    for (const auto& f : fs::directory_iterator(folder))
      if (f.path().filename() != name + ".so") packed.insert(f.path().filename().string());
    // What the loader resolves for the binary, the plugins and (where FMUs are unpacked) libzip:
    // everything but the C library is found in the FMU, and everything packed is among it.
    std::vector<fs::path> loaded = {folder / (name + ".so")};
    for (const auto& f : fs::directory_iterator(dir / "resources" / "plugins")) loaded.push_back(f.path());
    if (nested) loaded.push_back(folder / "libzip.so.4");
    std::set<std::string> needed;
    for (const fs::path& b : loaded)
      for (const auto& [lib, where] : resolved_libraries(b)) {
        if (lib.rfind("libc.so", 0) == 0 || lib.rfind("libm.so", 0) == 0 || lib.rfind("ld-linux", 0) == 0) continue;
        // The binary finds its own beside it (RPATH $ORIGIN); the plugins and libzip, loaded by
        // the binary, find theirs through its RPATH, which ldd of them alone does not apply.
        CAPTURE(lib);
        if (b == loaded.front()) CHECK(fs::path(where).parent_path() == folder);
        needed.insert(lib);
      }
    if (nested) needed.insert("libzip.so.4");  // loaded by name (dlopen) when an FMU is unpacked
    CHECK(packed == needed);
    CHECK(packed.count("libzip.so.4") == (nested ? 1 : 0));
    CHECK(packed.count("libcrypto.so.3") == (nested ? 1 : 0));
  }
}
