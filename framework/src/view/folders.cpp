// What the folders given to `stride report` and `stride view` hold: a run (summary.json and
// results.csv) or a sweep (sweep.csv, its reference/ and run_NNNN/ folders).
#include <algorithm>
#include <stdexcept>

#include "stride/host/input/json_input.hpp"
#include "stride/host/view/view.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

// A JSON object that Stride wrote into a run or sweep folder (`what` says which, for the error).
json read_object(const fs::path& file, const std::string& what) {
  std::vector<Diagnostic> diags;
  std::optional<json> s;
  try {
    JsonLimits limits;
    limits.max_bytes = std::size_t(256) << 20;  // summary.json lists every subsystem's report
    s = parse_json(read_text_file(file, limits), file.string(), diags, limits);
  } catch (const ManifestError& e) {
    diags = e.diagnostics();
  }
  if (!s || !s->is_object())
    throw std::invalid_argument(diags.empty() ? file.string() + ": expected a JSON object (" + what + ")"
                                              : diags.front().str());
  return *s;
}

// summary.json of a run folder; results.csv must exist beside it.
json read_summary(const fs::path& folder) {
  if (!fs::is_regular_file(folder / "results.csv"))
    throw std::invalid_argument(folder.string() + ": no results.csv (a run folder holds results.csv and summary.json)");
  return read_object(folder / "summary.json", "a run's summary");
}

// reference_columns.json of a sweep (run column -> reference column), turned round: each
// reference column with every run column it is compared with, where some name differs.
std::map<std::string, std::vector<std::string>> reference_plotted_as(const fs::path& sweep) {
  const fs::path file = sweep / "reference_columns.json";
  std::map<std::string, std::vector<std::string>> as;
  if (!fs::is_regular_file(file)) return as;
  const json compared = read_object(file, "run column -> reference column");
  for (const auto& [run, ref] : compared.items()) {
    if (!ref.is_string())
      throw std::invalid_argument(file.string() + ": /" + pointer_escape(run) + ": expected a column name, found " +
                                  type_name(ref));
    as[ref.get<std::string>()].push_back(run);
  }
  std::erase_if(as, [](const auto& e) { return e.second == std::vector<std::string>{e.first}; });
  return as;
}

void add_view_run(ViewFolders& v, const fs::path& folder, std::string label, const std::string& role, int sweep,
                  int sweep_run) {
  v.runs.push_back({std::move(label), role, folder, read_summary(folder), sweep, sweep_run});
}

// A sweep: its reference (when it ran) and its runs in the order of their numbers.
void add_view_sweep(ViewFolders& v, const fs::path& folder) {
  const int index = static_cast<int>(v.sweeps.size());
  v.sweeps.push_back(
      {folder.filename().empty() ? folder.parent_path().filename().string() : folder.filename().string(), folder});
  if (fs::is_regular_file(folder / "reference" / "results.csv")) {
    add_view_run(v, folder / "reference", "reference", "reference", index, -1);
    v.runs.back().plotted_as = reference_plotted_as(folder);
  }
  std::vector<std::pair<int, fs::path>> runs;
  for (const auto& e : fs::directory_iterator(folder)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.rfind("run_", 0) != 0 || name.size() < 5) continue;
    if (!std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; })) continue;
    if (!fs::is_regular_file(e.path() / "results.csv")) continue;  // a run that never started
    runs.emplace_back(std::stoi(name.substr(4)), e.path());
  }
  std::sort(runs.begin(), runs.end());
  for (const auto& [n, p] : runs) add_view_run(v, p, "run " + std::to_string(n), "sweep_run", index, n);
}

}  // namespace

ViewFolders view_folders(const std::vector<fs::path>& paths) {
  ViewFolders v;
  if (paths.empty()) throw std::invalid_argument("give at least one run or sweep folder");
  for (const auto& p : paths) {
    if (!fs::is_directory(p))
      throw std::invalid_argument(p.string() + ": not a folder (expected a run or a sweep folder)");
    if (fs::is_regular_file(p / "sweep.csv")) {
      add_view_sweep(v, p);
    } else if (fs::is_regular_file(p / "summary.json")) {
      add_view_run(v, p, p.filename().empty() ? p.parent_path().filename().string() : p.filename().string(), "run", -1,
                   -1);
    } else {
      throw std::invalid_argument(
          p.string() + ": neither a run folder (summary.json and results.csv) nor a sweep folder (sweep.csv)");
    }
  }
  // Two folders of the same name (a/out, b/out) are told apart by their paths as given.
  for (auto& r : v.runs)
    if (r.sweep < 0 &&
        std::count_if(v.runs.begin(), v.runs.end(), [&](const ViewRun& o) { return o.label == r.label; }) > 1)
      r.label = r.folder.string();
  return v;
}

}  // namespace stride::host
