// Results in the browser: `stride report` writes the page of web/ with the runs' files inlined
// as one self-contained HTML file; `stride view` serves the same page and the run files on the
// loopback interface (view/server.cpp, Boost.Beast).
// Call order: 1. view_folders(paths) reads what the folders hold (throws std::invalid_argument
// naming a folder that is neither a run nor a sweep, or a summary.json that is not JSON);
// 2. view_page(...) or write_report(...) or serve_view(...). Single-threaded; nothing here runs
// while a simulation steps.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <stride/stride.hpp>

namespace stride::host {

// One run folder (results.csv, summary.json): as given, or a run or the reference of a sweep.
struct ViewRun {
  std::string label;  // shown on the page; a sweep's runs are relabelled there with their axes
  std::string role;   // "run", "sweep_run" or "reference"
  std::filesystem::path folder;
  json summary;        // summary.json
  int sweep = -1;      // index into ViewFolders::sweeps, -1 for a run given by itself
  int sweep_run = -1;  // the run's number in sweep.csv (-1: the reference or no sweep)
};

// A sweep folder: sweep.csv (the table) and stability.md (the stability summary).
struct ViewSweep {
  std::string label;
  std::filesystem::path folder;
};

struct ViewFolders {
  std::vector<ViewRun> runs;
  std::vector<ViewSweep> sweeps;
};

ViewFolders view_folders(const std::vector<std::filesystem::path>& paths);

// The page: web/index.html with its style and modules inlined, and the data block: every run's
// summary and results.csv (`inline_results`), or only their URLs files/N/ for `stride view`.
// three.js (Debian's libjs-three) is inlined when a run holds a mechanism's geometry; when the
// file is missing a warning is appended and the page says so.
std::string view_page(const ViewFolders& folders, bool inline_results, std::vector<std::string>& warnings);

// `stride report`: the page with everything inlined, written atomically. Throws
// std::runtime_error naming the file when it cannot be written.
void write_report(const ViewFolders& folders, const std::filesystem::path& out, std::vector<std::string>& warnings);

// `stride view`: serves the page at / and each run's files at /files/N/<name> on 127.0.0.1:port
// (0: a free port) until SIGINT or SIGTERM; `listening` gets the URL once the socket is bound.
// Throws std::runtime_error when the port cannot be bound (in use, not allowed).
void serve_view(const ViewFolders& folders, int port, const std::function<void(const std::string&)>& listening);

}  // namespace stride::host
