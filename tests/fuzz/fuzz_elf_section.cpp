// Fuzz target: the plugin handshake read from a library file before it is loaded. Any bytes
// (a truncated or hostile library in a plugin folder) must give the section or an error,
// never a read outside the file.
#include <cstddef>
#include <cstdint>
#include <string>

#include "load/elf_section.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  std::string error;
  const auto section = stride::host::read_elf_section(bytes, ".stride_handshake", error);
  if (section && section->size() > bytes.size()) __builtin_trap();
  return 0;
}
