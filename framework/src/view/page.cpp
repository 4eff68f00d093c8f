// The page of `stride report` and `stride view`: web/index.html with style.css and the ES
// modules inlined (one module script: each module's import lines dropped and its `export`
// keywords removed, in dependency order), three.js when a mechanism is shown, and the data block.
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "stride/host/input/json_input.hpp"
#include "stride/host/run/output.hpp"
#include "stride/host/view/view.hpp"
#include "view/web_files.hpp"

namespace stride::host {
namespace fs = std::filesystem;

namespace {

std::string_view web_file(std::string_view name) {
  for (const auto& f : web::files)
    if (f.name == name) return f.text;
  throw std::logic_error("web file " + std::string(name) + " is not compiled in");
}

// The modules as one script: lines starting with `import ` dropped, a leading `export ` removed.
std::string module_bundle() {
  std::string out;
  for (const auto& f : web::files) {
    if (!f.name.ends_with(".js")) continue;
    std::istringstream in{std::string(f.text)};
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("import ", 0) == 0) continue;
      if (line.rfind("export ", 0) == 0) line.erase(0, 7);
      out += line;
      out += '\n';
    }
  }
  return out;
}

// Text inside a <script> element: "</" would end it early.
std::string script_safe(std::string text) {
  for (std::size_t i = 0; (i = text.find("</", i)) != std::string::npos; i += 3) text.replace(i, 2, "<\\/");
  return text;
}

// A whole file in one allocation (results.csv may be a hundred megabytes).
std::string read_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) throw std::runtime_error("cannot read " + file.string());
  std::string text(static_cast<std::size_t>(in.tellg()), '\0');
  in.seekg(0);
  if (!in.read(text.data(), static_cast<std::streamsize>(text.size())))
    throw std::runtime_error("cannot read " + file.string());
  return text;
}

bool has_geometry(const ViewFolders& v) {
  for (const auto& r : v.runs)
    if (r.summary.contains("subsystems") && r.summary["subsystems"].is_object())
      for (const auto& [name, sub] : r.summary["subsystems"].items())
        if (sub.is_object() && sub.contains("report") && sub["report"].is_object() &&
            sub["report"].contains("geometry"))
          return true;
  return false;
}

// The data block; with `inline_results`, each results.csv goes into `blocks` as a
// <script type="text/csv"> element of its own (no JSON escaping of megabytes of numbers), or,
// when its text holds "</" (a text column), into the data block as a JSON string.
json page_data(const ViewFolders& v, bool inline_results, std::string& blocks) {
  json runs = json::array();
  for (std::size_t i = 0; i < v.runs.size(); ++i) {
    const ViewRun& r = v.runs[i];
    json run = {{"label", r.label},
                {"role", r.role},
                {"sweep", r.sweep},
                {"sweep_run", r.sweep_run},
                {"base", "files/" + std::to_string(i) + "/"},
                {"results", nullptr}};
    if (!r.plotted_as.empty()) run["plotted_as"] = r.plotted_as;
    run["summary"] = inline_results || !v.live.is_null() ? r.summary : json(nullptr);
    if (inline_results) {
      std::string csv = read_file(r.folder / "results.csv");
      if (csv.find("</") != std::string::npos) {
        run["results"] = std::move(csv);
      } else {
        run["results_element"] = "stride-results-" + std::to_string(i);
        blocks.append("<script type=\"text/csv\" id=\"stride-results-").append(std::to_string(i)).append("\">");
        blocks.append(csv).append("</script>\n");
      }
    }
    runs.push_back(std::move(run));
  }
  json sweeps = json::array();
  for (const auto& s : v.sweeps) {
    const fs::path stability = s.folder / "stability.md";
    sweeps.push_back({{"label", s.label},
                      {"csv", read_file(s.folder / "sweep.csv")},
                      {"stability", fs::is_regular_file(stability) ? read_file(stability) : std::string()}});
  }
  std::string title = v.runs.size() == 1 ? v.runs[0].label : std::to_string(v.runs.size()) + " runs";
  if (!v.sweeps.empty()) title = "sweep " + v.sweeps[0].label;
  json data = {{"title", title}, {"runs", runs}, {"sweeps", sweeps}};
  if (!v.live.is_null()) data["live"] = v.live;
  return data;
}

void replace_once(std::string& page, const std::string& what, const std::string& with) {
  const auto at = page.find(what);
  if (at == std::string::npos) throw std::logic_error("web/index.html lacks " + what);
  page.replace(at, what.size(), with);
}

}  // namespace

std::string view_page(const ViewFolders& v, bool inline_results, std::vector<std::string>& warnings) {
  std::string page(web_file("index.html"));
  std::string head;
  if (has_geometry(v)) {
    if (fs::is_regular_file(STRIDE_THREE_JS)) head = "<script>" + script_safe(read_file(STRIDE_THREE_JS)) + "</script>";
    else
      warnings.push_back(std::string("no 3D replay: ") + STRIDE_THREE_JS +
                         " not found (Debian package libjs-three: apt-get install libjs-three)");
  }
  replace_once(page, "<!--stride:head-->", head);
  replace_once(page, "<link rel=\"stylesheet\" href=\"style.css\">",
               "<style>\n" + std::string(web_file("style.css")) + "</style>");
  const std::string empty_data = R"({"title": "Stride results", "runs": [], "sweeps": []})";
  std::string blocks;
  const json data = page_data(v, inline_results, blocks);
  replace_once(page, empty_data, script_safe(dump_safe(data)));
  replace_once(page, "<script type=\"module\" src=\"main.js\"></script>",
               "<script type=\"module\">\n" + script_safe(module_bundle()) + "</script>");
  // The results last and in one piece: the page is copied once around them.
  const std::string marker = "<!--stride:results-->";
  const auto at = page.find(marker);
  if (at == std::string::npos) throw std::logic_error("web/index.html lacks " + marker);
  std::string whole;
  whole.reserve(page.size() + blocks.size());
  whole.append(page, 0, at).append(blocks).append(page, at + marker.size());
  return whole;
}

void write_report(const ViewFolders& v, const fs::path& out, std::vector<std::string>& warnings) {
  const std::string page = view_page(v, true, warnings);
  if (const std::string err = write_file_atomically(out, page); !err.empty()) throw std::runtime_error(err);
}

}  // namespace stride::host
