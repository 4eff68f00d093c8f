// Reading one section of an ELF shared library from the file, without loading it: the plugin
// handshake is checked before the dynamic loader runs any of the library's code (its static
// constructors included). Internal to the host.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace stride::host {

// The bytes of section `name` of `file`; nullopt with `error` set when the file is not an ELF
// object of this machine's word size or the section is missing ("" error) or malformed. Every
// offset and size read from the file is checked against the file's size: a truncated or
// hostile file gives an error, never a read out of bounds.
std::optional<std::string> read_elf_section(const std::filesystem::path& file, const std::string& name,
                                            std::string& error);
// The same on the file's bytes (for tests and the fuzzer).
std::optional<std::string> read_elf_section(const std::string& bytes, const std::string& name, std::string& error);

// Load addresses (relative to the library's base) and sizes of the sections `names` that the
// file has and that occupy memory; sections it lacks are left out.
std::vector<std::pair<std::uint64_t, std::uint64_t>> elf_section_addresses(const std::filesystem::path& file,
                                                                          const std::vector<std::string>& names);

}  // namespace stride::host
