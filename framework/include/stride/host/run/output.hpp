// The results folder of one run. Nothing in it may be read as valid when it is not:
//  - the folder is locked for the run (a second run into it is refused, naming the holder);
//  - an earlier run's results.csv (and iterations.csv, steps.csv, log.txt) is removed and its summary.json replaced,
//  before anything
//    runs, by a summary with status "running" (a run that is killed leaves that marker, never
//    an earlier run's "completed");
//  - summary.json is written whole or not at all (a temporary file renamed into place).
#pragma once

#include <cstddef>
#include <filesystem>
#include <stdexcept>
#include <string>

#include <stride/stride.hpp>

#include "stride/host/core/files.hpp"

namespace stride::host {

// The folder cannot be used (cannot be created, not writable, locked by another run, summary
// path is a folder): a bad-input error, reported before anything runs.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// An exclusive lock on a folder for as long as the object lives (flock(2) on
// <dir>/.stride.lock, released by the kernel when the process ends however it ends; the file is
// removed when the object is destroyed, so only a killed process leaves it, unlocked). Creates
// the folder. Throws OutputError naming the holder when another process has it.
class FolderLock {
 public:
  FolderLock(const std::filesystem::path& dir, const std::string& holder);
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::filesystem::path file_;
  int fd_ = -1;
};

// summary.json's text: keys sorted, except the accuracy block, in reading order (its status and
// the RMS first: CouplingErrors::in_reading_order).
std::string summary_text(const json& summary);

class OutputFolder {
 public:
  // Creates the folder, takes its lock and marks it: summary.json becomes `running` (a summary
  // with status "running"), results.csv, iterations.csv, steps.csv and log.txt are removed.
  // Throws OutputError, leaving no summary of its own and no lock (a summary.json or one of those
  // files that is a folder is refused before anything is written).
  OutputFolder(const std::filesystem::path& dir, const json& running);
  ~OutputFolder();
  OutputFolder(const OutputFolder&) = delete;
  OutputFolder& operator=(const OutputFolder&) = delete;

  const std::filesystem::path& path() const { return dir_; }
  std::filesystem::path results() const { return dir_ / "results.csv"; }
  std::filesystem::path summary() const { return dir_ / "summary.json"; }
  std::filesystem::path log() const { return dir_ / "log.txt"; }
  // summary.json, atomically (summary_text); "" or the error.
  std::string write_summary(const json& summary) const;

 private:
  std::filesystem::path dir_;
  FolderLock lock_;
};

}  // namespace stride::host
