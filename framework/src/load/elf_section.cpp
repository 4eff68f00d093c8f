#include "load/elf_section.hpp"

#include <elf.h>
#include <link.h>  // ElfW

#include <cstring>
#include <fstream>
#include <iterator>

namespace stride::host {

namespace {

// A view of the file's bytes that refuses any read outside them.
struct Bytes {
  const std::string& data;
  template <class T>
  bool read(std::uint64_t offset, T& out) const {
    if (offset > data.size() || sizeof(T) > data.size() - offset) return false;
    std::memcpy(&out, data.data() + offset, sizeof(T));
    return true;
  }
  bool range(std::uint64_t offset, std::uint64_t size) const {
    return offset <= data.size() && size <= data.size() - offset;
  }
};

// The header of section `name`; nullopt with `error` set when the file is malformed ("" when
// the section is missing).
std::optional<ElfW(Shdr)> find_section(const std::string& data, const std::string& name, std::string& error) {
  using Ehdr = ElfW(Ehdr);
  using Shdr = ElfW(Shdr);
  const Bytes b{data};
  Ehdr eh{};
  if (!b.read(0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
    error = "invalid ELF header (not a shared library)";
    return std::nullopt;
  }
  constexpr unsigned char word = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
  if (eh.e_ident[EI_CLASS] != word) {
    error = "an ELF object of another word size than this host";
    return std::nullopt;
  }
  if (eh.e_shentsize != sizeof(Shdr) || eh.e_shoff == 0) {
    error = "ELF section headers missing or malformed";
    return std::nullopt;
  }
  Shdr first{};
  if (!b.read(eh.e_shoff, first)) {
    error = "ELF section headers beyond the end of the file";
    return std::nullopt;
  }
  // Extended numbering: the real count and string-table index live in section 0.
  const std::uint64_t count = eh.e_shnum ? eh.e_shnum : first.sh_size;
  const std::uint64_t strndx = eh.e_shstrndx == SHN_XINDEX ? first.sh_link : eh.e_shstrndx;
  if (count > (1u << 20) || count > data.size() / sizeof(Shdr) || !b.range(eh.e_shoff, count * sizeof(Shdr)) ||
      strndx >= count) {
    error = "ELF section headers beyond the end of the file";
    return std::nullopt;
  }
  Shdr strtab{};
  b.read(eh.e_shoff + strndx * sizeof(Shdr), strtab);
  if (strtab.sh_type != SHT_STRTAB || !b.range(strtab.sh_offset, strtab.sh_size)) {
    error = "ELF section names malformed or beyond the end of the file";
    return std::nullopt;
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    Shdr sh{};
    b.read(eh.e_shoff + i * sizeof(Shdr), sh);
    if (sh.sh_name >= strtab.sh_size) continue;
    const char* s = data.data() + strtab.sh_offset + sh.sh_name;
    const std::size_t room = strtab.sh_size - sh.sh_name;
    const std::size_t len = strnlen(s, room);
    if (len == room || std::string_view(s, len) != name) continue;
    return sh;
  }
  error.clear();
  return std::nullopt;
}

}  // namespace

std::optional<std::string> read_elf_section(const std::string& data, const std::string& name, std::string& error) {
  const auto sh = find_section(data, name, error);
  if (!sh) return std::nullopt;
  if (sh->sh_type == SHT_NOBITS || !Bytes{data}.range(sh->sh_offset, sh->sh_size) || sh->sh_size > (1u << 16)) {
    error = "section " + name + " is malformed";
    return std::nullopt;
  }
  return data.substr(sh->sh_offset, sh->sh_size);
}

namespace {
std::optional<std::string> file_bytes(const std::filesystem::path& file, std::string& error) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec || size > (std::uint64_t(1) << 31)) {
    error = ec ? ec.message() : "larger than 2 GiB";
    return std::nullopt;
  }
  std::ifstream in(file, std::ios::binary);
  std::string data(static_cast<std::size_t>(size), '\0');
  if (!in.read(data.data(), static_cast<std::streamsize>(size))) {
    error = "cannot be read";
    return std::nullopt;
  }
  return data;
}
}  // namespace

std::optional<std::string> read_elf_section(const std::filesystem::path& file, const std::string& name,
                                            std::string& error) {
  const auto data = file_bytes(file, error);
  return data ? read_elf_section(*data, name, error) : std::nullopt;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> elf_section_addresses(const std::filesystem::path& file,
                                                                          const std::vector<std::string>& names) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
  std::string error;
  const auto data = file_bytes(file, error);
  if (!data) return out;
  for (const std::string& n : names)
    if (const auto sh = find_section(*data, n, error); sh && (sh->sh_flags & SHF_ALLOC) && sh->sh_size > 0)
      out.emplace_back(sh->sh_addr, sh->sh_size);
  return out;
}

}  // namespace stride::host
