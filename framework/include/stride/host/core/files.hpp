// Writing files so that a reader never sees half of one: whole writes, atomic replacement.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>

namespace stride::host {

// Writes `text` to `file` through a temporary file in the same folder and a rename; returns
// "" or what went wrong (the temporary file is removed, `file` keeps its old content).
std::string write_file_atomically(const std::filesystem::path& file, const std::string& text);

// write(2) until all `size` bytes are written (EINTR retried); false on failure, errno set.
bool write_all(int fd, const char* data, std::size_t size);

}  // namespace stride::host
