// What an FMU may make the host do, bounded: sizes it may unpack, the size of its
// modelDescription.xml, the time its instantiation may take, the length of its log messages.
// Internal to the host. Each bound has a default and an environment variable that changes it
// (read at each use; a value that is not a positive number keeps the default).
#pragma once

#include <cstddef>
#include <cstdint>

namespace stride::host::fmi {

// STRIDE_FMU_MAX_UNPACKED_MIB (default 4096): the archive's entries together.
std::uint64_t max_unpacked_bytes();
// STRIDE_FMU_MAX_XML_MIB (default 256): modelDescription.xml, read whole by the XML parser.
std::uint64_t max_xml_bytes();
// At most this many entries in the archive.
constexpr std::uint64_t kMaxEntries = 100000;
// STRIDE_FMU_PROBE_TIMEOUT (s, default 10): an instantiation tried in a child process.
double probe_timeout();
// An FMU's log message is cut after this many bytes, as a plugin's message is
// (stride::log_detail::Line::capacity).
constexpr std::size_t kMaxLogMessage = 480;

}  // namespace stride::host::fmi
