// Plugin loading (PluginRegistry): libraries that break the ABI handshake are refused with a
// reason a user can act on, the good plugins keep working next to them, plugin exceptions
// carry the plugin's name, and created objects keep their library mapped.
//  Libraries under test: tests/broken_plugins/{load,runtime} (built into
//  STRIDE_TEST_LOAD_DIR and STRIDE_TEST_RUNTIME_DIR).
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <dlfcn.h>
#include <unistd.h>
#include <stdlib.h>

#include "load/elf_section.hpp"
#include "stride/host/load/registry.hpp"
#include "files.hpp"

namespace fs = std::filesystem;
using stride::host::PluginError;
using stride::host::PluginRegistry;
using stride::host::Refusal;

namespace {

using stride_test::contains;

// The refusal recorded for the library file `name`, or nullptr.
const Refusal* refusal_of(const PluginRegistry& reg, const std::string& name) {
  for (const auto& r : reg.refusals())
    if (r.file.filename() == name) return &r;
  return nullptr;
}

// dx/dt = -lambda·x: x(t) = x0·exp(-lambda·t). No ports; for driving integrators directly.
class Decay final : public stride::OdeSystem {
 public:
  explicit Decay(double lambda) : lambda_(lambda) {}
  std::vector<stride::PortSpec> ports() const override { return {}; }
  std::size_t state_size() const override { return 1; }
  void initial_state(double, std::span<double> x) override { x[0] = 1.0; }
  void derivatives(double, std::span<const double> x, std::span<double> dxdt) override { dxdt[0] = -lambda_ * x[0]; }
  void outputs(double, std::span<const double> x, std::span<double> y) override { y[0] = x[0]; }

 private:
  double lambda_;
};

// Integrates Decay(1) over [0, 1] with 10 steps; returns x(1).
double integrate_decay(stride::Integrator& integ) {
  Decay sys(1.0);
  std::vector<double> x(1);
  sys.initial_state(0.0, x);
  integ.reset(sys, 0.0, x);
  double t = 0.0;
  for (int i = 0; i < 10; ++i) t = integ.step(sys, t, 0.1, x);
  CHECK(t == doctest::Approx(1.0).epsilon(1e-12));
  return x[0];
}

bool library_mapped(const std::string& file_name) {
  std::ifstream maps("/proc/self/maps");
  std::stringstream ss;
  ss << maps.rdbuf();
  return contains(ss.str(), file_name);
}

}  // namespace

TEST_CASE("loader: broken libraries are refused with a clear reason, the good ones still work") {
  PluginRegistry reg;
  reg.scan({STRIDE_BUILD_PLUGIN_DIR});  // shipped plugins first: they own their names
  REQUIRE(reg.find("zoh") != nullptr);
  REQUIRE(reg.find("rk4") != nullptr);
  const fs::path shipped_zoh = reg.find("zoh")->file;
  const std::size_t loaded_before = reg.plugins().size();
  const std::size_t refused_before = reg.refusals().size();
  reg.scan({STRIDE_TEST_LOAD_DIR});

  std::string refused;
  for (const auto& r : reg.refusals()) refused += r.file.string() + ": " + r.reason + "\n";
  INFO("refusals:\n" << refused);

  SUBCASE("wrong ABI version") {
    const Refusal* r = refusal_of(reg, "stride_broken_abi.so");
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "ABI version 999"));
    CHECK(contains(r->reason, "host expects " + std::to_string(STRIDE_ABI_VERSION)));
    CHECK(reg.find("broken_abi") == nullptr);
  }
  SUBCASE("wrong build fingerprint names the differing key, and only that one") {
    const Refusal* r = refusal_of(reg, "stride_broken_fingerprint.so");
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "fingerprint"));
    CHECK(contains(r->reason, "json_diagnostics: host 1, plugin 0"));
    CHECK_FALSE(contains(r->reason, "compiler"));
    CHECK_FALSE(contains(r->reason, "eigen"));
    CHECK(reg.find("broken_fingerprint") == nullptr);
  }
  SUBCASE("missing entry point") {
    const Refusal* r = refusal_of(reg, "stride_broken_no_entry.so");
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "missing entry point"));
    CHECK(contains(r->reason, "stride_plugin"));
  }
  SUBCASE("duplicate plugin name: the first library keeps the name") {
    const Refusal* r = refusal_of(reg, "stride_broken_duplicate_zoh.so");
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "duplicate plugin name 'zoh'"));
    CHECK(contains(r->reason, shipped_zoh.string()));
    CHECK(reg.find("zoh")->file == shipped_zoh);
  }
  SUBCASE("a file that is not a shared library") {
    const Refusal* r = refusal_of(reg, "stride_not_a_library.so");
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "cannot be loaded"));
    CHECK(contains(r->reason, "invalid ELF header"));  // the loader's own diagnosis, not a generic errno text
  }
  SUBCASE("a parameter declared in a unit UDUNITS-2 cannot read: refused, naming plugin, parameter and unit") {
    const Refusal* r = refusal_of(reg, "stride_broken_unit.so");
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "plugin 'broken_unit' declares parameter 'torque' in unit \"newton_meter\": not a unit"));
    CHECK(contains(r->reason, "UDUNITS-2 knows no unit of that name"));
    CHECK(reg.find("broken_unit") == nullptr);
  }
  SUBCASE("a class of another kind than its declaration: refused, naming both") {
    const Refusal* r = refusal_of(reg, "stride_broken_kind.so");
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "plugin 'broken_kind' declares kind integrator, but its class is a subsystem of form stepper"));
    CHECK(reg.find("broken_kind") == nullptr);
  }
  SUBCASE("a folder that does not exist") {
    reg.scan({fs::path(STRIDE_TEST_LOAD_DIR) / "no_such_folder"});
    const Refusal* r = refusal_of(reg, "no_such_folder");
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "does not exist"));
  }
  SUBCASE("the good plugins are unaffected") {
    CHECK(reg.plugins().size() == loaded_before);  // nothing from the broken folder got in
    CHECK(reg.refusals().size() - refused_before == 9);  // every library in the broken folder
    // RK4 on dx/dt = -x, h = 0.1: global error ~3e-7 at t = 1 (fourth order).
    auto rk4 = reg.create_integrator("rk4", stride::json::object());
    const double x1 = integrate_decay(*rk4);
    CHECK(std::abs(x1 - std::exp(-1.0)) < 1e-6);
    CHECK(std::abs(x1 - std::exp(-1.0)) > 0.0);  // a real integration, not the exact value copied
    CHECK(rk4->statistics().at("steps") == 10);
    // The shipped zoh (not the impostor, which always returns -1) holds the newest sample.
    auto zoh = reg.create_extrapolator("zoh", stride::json::object());
    zoh->reset(2);
    const double y0[] = {1.0, 2.0}, y1[] = {3.0, 4.0};
    zoh->push(0.0, y0);
    zoh->push(0.1, y1);
    double u[2];
    zoh->evaluate(0.05, u);
    CHECK(u[0] == 1.0);
    CHECK(u[1] == 2.0);
    zoh->evaluate(0.3, u);
    CHECK(u[0] == 3.0);
    CHECK(u[1] == 4.0);
  }
}

TEST_CASE("loader: a library refused by its handshake section never runs any of its code") {
  const fs::path mark = fs::temp_directory_path() / ("stride_ctor_mark_" + std::to_string(::getpid()));
  fs::remove(mark);
  ::setenv("STRIDE_TEST_CONSTRUCTOR_MARK", mark.c_str(), 1);
  const fs::path lib = fs::path(STRIDE_TEST_LOAD_DIR) / "stride_broken_abi_constructor.so";
  {
    PluginRegistry reg;
    reg.scan({STRIDE_TEST_LOAD_DIR});
    const Refusal* r = refusal_of(reg, lib.filename().string());
    REQUIRE(r != nullptr);
    CHECK(contains(r->reason, "ABI version 999"));
  }
  CHECK_FALSE(fs::exists(mark));
  CHECK_FALSE(library_mapped(lib.filename().string()));
  // Control: loading the library does run its constructor, so the check above can fail.
  void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(h != nullptr);
  CHECK(fs::exists(mark));
  ::dlclose(h);
  fs::remove(mark);
  ::unsetenv("STRIDE_TEST_CONSTRUCTOR_MARK");
}

TEST_CASE("loader: the handshake section reader refuses truncated and corrupted files without reading out of bounds") {
  const fs::path lib = fs::path(STRIDE_TEST_LOAD_DIR) / "stride_broken_abi.so";
  std::ifstream in(lib, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(bytes.size() > 4096);
  std::string error;
  const auto whole = stride::host::read_elf_section(bytes, ".stride_handshake", error);
  REQUIRE(whole.has_value());
  CHECK(contains(*whole, "stride-plugin;abi=999;"));
  // The section headers sit at the end of a shared library: every truncation is refused with a reason.
  std::size_t refused = 0;
  for (std::size_t n = 0; n < bytes.size(); n += 97) {
    error.clear();
    const auto part = stride::host::read_elf_section(bytes.substr(0, n), ".stride_handshake", error);
    refused += !part && !error.empty();
  }
  CHECK(refused == (bytes.size() + 96) / 97);
  // Header fields pointing outside the file: section table offset, entry size, count, name table index.
  const std::pair<std::size_t, std::size_t> fields[] = {{0x28, 8}, {0x3a, 2}, {0x3c, 2}, {0x3e, 2}};
  for (const auto& [at, width] : fields) {
    std::string bad = bytes;
    for (std::size_t k = 0; k < width; ++k) bad[at + k] = static_cast<char>(0xff);
    error.clear();
    CHECK_FALSE(stride::host::read_elf_section(bad, ".stride_handshake", error).has_value());
    CHECK_FALSE(error.empty());
  }
  error.clear();
  CHECK_FALSE(stride::host::read_elf_section(std::string("\x7f" "ELF"), ".stride_handshake", error).has_value());
  CHECK_FALSE(error.empty());
}

TEST_CASE("loader: with the broken folder first, the shipped duplicate is the one refused") {
  PluginRegistry reg;
  reg.scan({STRIDE_TEST_LOAD_DIR, STRIDE_BUILD_PLUGIN_DIR});
  REQUIRE(reg.find("zoh") != nullptr);
  CHECK(reg.find("zoh")->file.filename() == "stride_broken_duplicate_zoh.so");
  const Refusal* r = refusal_of(reg, "stride_zoh.so");
  REQUIRE(r != nullptr);
  CHECK(contains(r->reason, "duplicate plugin name 'zoh'"));
}

TEST_CASE("loader: exceptions from plugin code are PluginErrors naming the plugin") {
  PluginRegistry reg;
  reg.scan({STRIDE_BUILD_PLUGIN_DIR, STRIDE_TEST_RUNTIME_DIR});
  REQUIRE(reg.find("test_ctor_throws") != nullptr);
  bool thrown = false;
  try {
    reg.create_subsystem("test_ctor_throws", stride::json::object());
  } catch (const PluginError& e) {
    thrown = true;
    CHECK(e.plugin() == "test_ctor_throws");
    CHECK(contains(e.what(), "plugin 'test_ctor_throws'"));
    CHECK(contains(e.what(), "missing_table.csv"));
  }
  CHECK(thrown);

  // Invalid parameters never reach the plugin: they are reported by name.
  CHECK_THROWS_WITH_AS(reg.create_subsystem("test_gain", {{"k", 5000.0}}),
                       doctest::Contains("parameter 'k' of 'test_gain'"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(reg.create_subsystem("test_gain", {{"gain", 1.0}}), doctest::Contains("no parameter 'gain'"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(reg.create_integrator("zoh", stride::json::object()), doctest::Contains("plugin 'zoh' is an extrapolator, not an integrator"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(reg.create_integrator("rk5", stride::json::object()), doctest::Contains("unknown plugin 'rk5'"),
                       std::invalid_argument);
}

TEST_CASE("loader: objects keep their library loaded after the registry is destroyed") {
  std::shared_ptr<stride::Integrator> rk4;
  std::shared_ptr<stride::Extrapolator> zoh;
  {
    PluginRegistry reg;
    reg.scan({STRIDE_BUILD_PLUGIN_DIR});
    rk4 = reg.create_integrator("rk4", stride::json::object());
    zoh = reg.create_extrapolator("zoh", stride::json::object());
  }
  // Only the objects hold the libraries now; their code must still be mapped and callable.
  CHECK(library_mapped("stride_rk4.so"));
  CHECK(library_mapped("stride_zoh.so"));
  const double x1 = integrate_decay(*rk4);
  CHECK(std::abs(x1 - std::exp(-1.0)) < 1e-6);
  zoh->reset(1);
  const double y[] = {7.0};
  zoh->push(0.0, y);
  double u[1];
  zoh->evaluate(1.0, u);
  CHECK(u[0] == 7.0);
}
