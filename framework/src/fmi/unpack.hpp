// Unpacking an FMU archive into a private temporary folder. Internal to the host.
//
// A TempFolder is created empty (mkdtemp) and removed with its contents when destroyed, only by
// the process that created it: runs fork, and a child never removes its parent's folder.
// remove_temporary_fmu_folders() (fmu.hpp) removes every folder of this process, for processes
// that end by _exit. unpack() checks each entry before writing it: no absolute path, no "..",
// bounded counts and sizes.
#pragma once

#include <filesystem>
#include <string>

#include <sys/types.h>

namespace stride::host::fmi {

class TempFolder {
 public:
  TempFolder();  // throws FmuError when no folder can be created
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }
  // Removes the folder when this process created it; never throws.
  void remove() noexcept;

 private:
  std::filesystem::path path_;
  pid_t owner_ = 0;
};

// Unpacks the zip archive `file` into `into` (only the entry `only` when given); throws
// FmuError naming `label`.
void unpack(const std::filesystem::path& file, const std::filesystem::path& into, const std::string& label,
            const std::string& only = "");

// Removes every TempFolder of this process (for _exit paths).
void remove_temporary_folders() noexcept;

}  // namespace stride::host::fmi
