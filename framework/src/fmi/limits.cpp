// Bounds on what an FMU may make the host do (see limits.hpp).
#include "fmi/limits.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace stride::host::fmi {

namespace {

// The environment variable `name` as a positive number at most `most`, else `def`.
double from_environment(const char* name, double def, double most) {
  const char* e = std::getenv(name);
  if (!e) return def;
  char* end = nullptr;
  const double v = std::strtod(e, &end);
  if (end == e || *end != '\0' || !std::isfinite(v) || !(v > 0)) return def;
  return std::min(v, most);
}

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

std::uint64_t max_unpacked_bytes() {
  return std::uint64_t(from_environment("STRIDE_FMU_MAX_UNPACKED_MIB", 4096.0, 1024.0 * 1024.0) * kMiB);
}
std::uint64_t max_xml_bytes() {
  return std::uint64_t(from_environment("STRIDE_FMU_MAX_XML_MIB", 256.0, 64.0 * 1024.0) * kMiB);
}
double probe_timeout() { return from_environment("STRIDE_FMU_PROBE_TIMEOUT", 10.0, 86400.0); }

}  // namespace stride::host::fmi
