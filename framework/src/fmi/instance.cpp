// What FMI 2 and FMI 3 instances share: the log sink, the ports, unit conversion at the FMU's
// boundary (see instance.hpp).
#include "fmi/instance.hpp"

#include <algorithm>
#include <iostream>
#include <sstream>

#include <string.h>

#include "fmi/limits.hpp"

namespace stride::host::fmi {

namespace {

const char* const kStatus[] = {"ok", "warning", "discard", "error", "fatal", "pending"};
const char* const kStatusName[] = {"fmi2OK", "fmi2Warning", "fmi2Discard", "fmi2Error", "fmi2Fatal", "fmi2Pending"};

// At most kMaxLogMessage bytes of `text` (cut at a character boundary, "..." appended), as a
// plugin's message is cut.
std::string cut(const char* text) {
  if (!text) return "";
  const std::size_t n = ::strnlen(text, kMaxLogMessage + 1);
  if (n <= kMaxLogMessage) return std::string(text, n);
  std::size_t end = kMaxLogMessage;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;  // inside a UTF-8 sequence
  return std::string(text, end) + "...";
}

}  // namespace

void LogSink::log(int status, const char* category, const char* message) {
  const bool known = status >= 0 && status <= 5;
  const char* s = known ? kStatus[status] : "?";
  std::string line = std::string(s) + (category && *category ? " [" + cut(category) + "]" : "") + ": " + cut(message);
  if (logger) {
    // OK and pending are information, warning a warning, discard/error/fatal errors; the
    // status is the rate-limited site.
    const LogLevel level = status <= 0 || status == 5 ? LogLevel::info : status == 1 ? LogLevel::warning : LogLevel::error;
    if (level >= logger->threshold()) logger->write(level, LogFormat("", known ? kStatusName[status] : "fmu", 0), line);
  } else {
    std::cerr << "fmu \"" << instance << "\": " << line << "\n";
  }
  if (status >= 1) {
    if (recent.size() >= 4) recent.erase(recent.begin());
    recent.push_back(line);
  }
}

std::string LogSink::tail() const {
  if (recent.empty()) return "";
  std::string s = "; the FMU said: ";
  for (std::size_t i = 0; i < recent.size(); ++i) s += (i ? " | " : "") + recent[i];
  return s;
}

Interface::Interface(const ModelDescription& md) {
  for (const auto& v : md.variables)
    if (v.causality == "input") {
      in.push_back({v.value_reference, v.type, v.size, 0, v.unit_factor, v.unit_offset});
      scratch_size = std::max(scratch_size, v.size);
    }
  std::size_t offset = 0;
  for (const auto& v : md.variables)
    if (v.causality == "output") {
      out.push_back({v.value_reference, v.type, v.size, offset, v.unit_factor, v.unit_offset});
      offset += v.size;
      scratch_size = std::max(scratch_size, v.size);
      any_feedthrough = any_feedthrough || v.feedthrough;
    }
}

std::span<const double> to_fmu(const Io& io, std::span<const double> u, std::vector<double>& buf) {
  if (!io.converted()) return u;
  for (std::size_t i = 0; i < u.size(); ++i) buf[i] = (u[i] - io.shift) / io.factor;
  return {buf.data(), u.size()};
}

void from_fmu(const Io& io, std::span<double> y) {
  if (!io.converted()) return;
  for (std::size_t i = 0; i < io.size; ++i) y[io.offset + i] = y[io.offset + i] * io.factor + io.shift;
}

std::string fmt_time(double t) {
  std::ostringstream o;
  o.precision(12);
  o << t;
  return o.str();
}

std::unique_ptr<Instance> make_instance(std::shared_ptr<const Fmu> fmu, bool model_exchange, const Params& p,
                                        const std::string& name) {
  if (fmu->md.version == 3) return make_fmi3_instance(std::move(fmu), model_exchange, p, name);
  return make_fmi2_instance(std::move(fmu), model_exchange, p, name);
}

}  // namespace stride::host::fmi
