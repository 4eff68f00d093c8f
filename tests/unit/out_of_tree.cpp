// The SDK as a plugin author sees it: install the SDK into a temporary prefix, build
// examples/damped_oscillator against it with find_package(StrideSDK) in a separate CMake
// project, load the new plugins through STRIDE_PLUGIN_PATH, and compare the co-simulated
// oscillator with the analytical solution of m x'' + c x' + k x = F0 sin(w t).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

namespace {

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int shell(const std::string& cmd, const fs::path& log) {
  const int st = std::system((cmd + " >'" + log.string() + "' 2>&1").c_str());
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// Underdamped response of m x'' + c x' + k x = F0 sin(w t), x(0) = x0, x'(0) = v0:
// steady state a sin(wt) + b cos(wt) plus a decaying homogeneous part.
struct Oscillator {
  double m, c, k, F0, w, x0, v0;
  double a, b, zeta_wn, wd, A, B;
  Oscillator(double m_, double c_, double k_, double F0_, double w_, double x0_, double v0_)
      : m(m_), c(c_), k(k_), F0(F0_), w(w_), x0(x0_), v0(v0_) {
    const double d = (k - m * w * w) * (k - m * w * w) + (c * w) * (c * w);
    a = F0 * (k - m * w * w) / d;
    b = -F0 * c * w / d;
    zeta_wn = c / (2 * m);
    wd = std::sqrt(k / m - zeta_wn * zeta_wn);
    A = x0 - b;
    B = (v0 - a * w + zeta_wn * A) / wd;
  }
  double x(double t) const {
    return a * std::sin(w * t) + b * std::cos(w * t) + std::exp(-zeta_wn * t) * (A * std::cos(wd * t) + B * std::sin(wd * t));
  }
  double v(double t) const {
    const double e = std::exp(-zeta_wn * t);
    return a * w * std::cos(w * t) - b * w * std::sin(w * t) +
           e * ((-zeta_wn * A + wd * B) * std::cos(wd * t) + (-zeta_wn * B - wd * A) * std::sin(wd * t));
  }
};

}  // namespace

TEST_CASE("out of tree: build the example against the installed SDK and check it against the analytical solution") {
  const fs::path tmp = fs::temp_directory_path() / ("stride_oot_" + std::to_string(getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const fs::path prefix = tmp / "prefix", build = tmp / "build", out = tmp / "out", log = tmp / "log.txt";
  const fs::path example = fs::path(STRIDE_SOURCE_DIR) / "examples" / "damped_oscillator";

  // 1. Install (headers, StrideSDKConfig.cmake, StrideSDKPlugin.cmake, targets, stride).
  int rc = shell("cmake --install '" STRIDE_BINARY_DIR "' --prefix '" + prefix.string() + "'", log);
  INFO(slurp(log));
  REQUIRE(rc == 0);
  CHECK(fs::exists(prefix / "include" / "stride" / "stride.hpp"));
  CHECK(fs::exists(prefix / "lib" / "cmake" / "StrideSDK" / "StrideSDKConfig.cmake"));
  CHECK(fs::exists(prefix / "lib" / "cmake" / "StrideSDK" / "StrideSDKPlugin.cmake"));

  // 2. Configure and build the example as a separate project that only knows the prefix.
  rc = shell("cmake -S '" + example.string() + "' -B '" + build.string() + "' -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH='" +
                 prefix.string() + "'",
             log);
  REQUIRE(rc == 0);
  rc = shell("cmake --build '" + build.string() + "' -j2", log);
  REQUIRE(rc == 0);
  REQUIRE(fs::exists(build / "stride_damped_oscillator.so"));
  REQUIRE(fs::exists(build / "stride_harmonic_force.so"));

  // 3. The host finds the new plugins through STRIDE_PLUGIN_PATH and accepts their handshake.
  rc = shell("STRIDE_PLUGIN_PATH='" + build.string() + "' '" STRIDE_EXE "' plugins describe damped_oscillator --json", log);
  REQUIRE(rc == 0);
  const auto desc = nlohmann::json::parse(slurp(log));
  CHECK(desc.at("form") == "ode");
  CHECK(desc.at("parameters").size() == 5);

  rc = shell("STRIDE_PLUGIN_PATH='" + build.string() + "' '" STRIDE_EXE "' run '" + (example / "damped_oscillator.json").string() +
                 "' --out '" + out.string() + "' --quiet",
             log);
  REQUIRE(rc == 0);

  // 4. Compare with the analytical solution (parameters of damped_oscillator.json).
  const Oscillator exact(1.0, 0.8, 40.0, 5.0, 4.0, 0.1, 0.0);
  std::ifstream csv(out / "results.csv");
  std::string line;
  REQUIRE(std::getline(csv, line));
  CHECK(line == "time,force.force,oscillator.x,oscillator.v");
  double err_x = 0, err_v = 0, err_f = 0, max_x = 0, t_last = 0;
  std::size_t rows = 0;
  while (std::getline(csv, line)) {
    double t, f, x, v;
    REQUIRE(std::sscanf(line.c_str(), "%lf,%lf,%lf,%lf", &t, &f, &x, &v) == 4);
    err_f = std::max(err_f, std::abs(f - 5.0 * std::sin(4.0 * t)));
    err_x = std::max(err_x, std::abs(x - exact.x(t)));
    err_v = std::max(err_v, std::abs(v - exact.v(t)));
    max_x = std::max(max_x, std::abs(x));
    t_last = t;
    ++rows;
  }
  MESSAGE("max |x - exact| = " << err_x << " m, max |v - exact| = " << err_v << " m/s over " << rows << " rows");
  CHECK(rows == 1001);
  CHECK(t_last == doctest::Approx(10.0));
  CHECK(err_f < 1e-9);
  CHECK(max_x > 0.1);  // the forced response is not trivially small
  CHECK(err_x < 1e-6);
  CHECK(err_v < 1e-5);

  // The oscillator's energy in the summary is ½mv² + ½kx² at the end.
  const auto sum = nlohmann::json::parse(slurp(out / "summary.json"));
  CHECK(sum.at("status") == "completed");
  const double xe = exact.x(10.0), ve = exact.v(10.0);
  CHECK(sum.at("subsystems").at("oscillator").at("energy_J").get<double>() ==
        doctest::Approx(0.5 * ve * ve + 0.5 * 40.0 * xe * xe).epsilon(1e-5));

  std::error_code ec;
  fs::remove_all(tmp, ec);
}

TEST_CASE("out of tree: the tutorial quotes the example files verbatim") {
  const fs::path root = STRIDE_SOURCE_DIR;
  const std::string tutorial = slurp(root / "docs" / "plugin-tutorial.md");
  REQUIRE_FALSE(tutorial.empty());
  for (const char* file : {"CMakeLists.txt", "damped_oscillator.cpp", "harmonic_force.cpp", "damped_oscillator.json"}) {
    CAPTURE(file);
    const std::string code = slurp(root / "examples" / "damped_oscillator" / file);
    REQUIRE_FALSE(code.empty());
    CHECK(tutorial.find(code) != std::string::npos);
  }
}
