// Results in the browser: `stride report` writes the page of web/ with the runs' files inlined
// as one self-contained HTML file; `stride view` serves the same page and the run files on the
// loopback interface (view/server.cpp, Boost.Beast).
// Call order: 1. view_folders(paths) reads what the folders hold (throws std::invalid_argument
// naming a folder that is neither a run nor a sweep, or a summary.json that is not JSON);
// 2. view_page(...) or write_report(...) or serve_view(...) (single-threaded), or a ViewServer
// (its own thread, started by serve(): the Python module's stride.view()).
// `stride run --view` (live): 1. create_view_board() before the experiment is built (its
// view_input plugins enroll their controls); 2. a ViewServer on a ViewFolders of the run's
// folder with live_summary() as its summary; 3. the run, ViewServer::serve() once the run's
// process is forked (a thread running at fork() can hold a lock, the allocator's among them,
// that the forked run would then wait on forever); 4. ViewServer::finish(summary);
// 5. wait for Ctrl-C (or not), destroy the server. The server has a thread of its own; the run's
// thread never meets it (rows reach it through results.csv, values through the board).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
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
  // Columns plotted under other runs' names: a sweep's reference column -> the run columns it is
  // compared with (the sweep's reference_columns.json turned round, where a name differs).
  std::map<std::string, std::vector<std::string>> plotted_as;
};

// A sweep folder: sweep.csv (the table) and stability.md (the stability summary).
struct ViewSweep {
  std::string label;
  std::filesystem::path folder;
};

struct ViewFolders {
  std::vector<ViewRun> runs;
  std::vector<ViewSweep> sweeps;
  json live;  // `stride run --view`: {"socket": "live"}, and the runs' summaries are inlined
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

// The board of live controls (stride/view_board.hpp): a memfd of one Board, named in the
// environment variable STRIDE_VIEW_BOARD_FD for the plugins constructed (and the processes forked)
// afterwards. Throws std::runtime_error when it cannot be created. Once per process.
void create_view_board();

// The page of `folders` served on a thread of its own until destroyed: at / and each run's files at
// /files/N/<name>, as serve_view() does (the Python module's stride.view()). With folders.live set
// (`stride run --view`: one run, its summary inlined) also the WebSocket /live (view/live.hpp),
// which streams results.csv as the run's writer puts it on disk (each browser from its own
// position, at most 1 MiB per message, every 50 ms: a slow browser gets larger batches later,
// nothing dropped; an absent one costs nothing), the board's controls, the values a page sets
// (clamped, non-finite refused), and the summary once finish() is called. The constructor binds
// 127.0.0.1:port (throws std::runtime_error as serve_view() does) and starts the thread with
// every signal blocked (they stay with the run's supervisor, the run or the interpreter); the
// destructor stops and joins it. finish() may be called from any thread.
class ViewServer {
 public:
  // Binds 127.0.0.1:port (0: any free port) and prepares the page; connections wait in the
  // listen queue until serve().
  ViewServer(const ViewFolders& folders, int port);
  ~ViewServer();
  ViewServer(const ViewServer&) = delete;
  ViewServer& operator=(const ViewServer&) = delete;
  const std::string& url() const;
  // Starts the server's thread (once; later calls do nothing). Signals stay with the caller.
  void serve();
  void finish(const json& summary);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace stride::host
