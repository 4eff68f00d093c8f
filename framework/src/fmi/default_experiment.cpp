// Default experiments of FMUs (see default_experiment.hpp).
#include "fmi/default_experiment.hpp"

#include <algorithm>
#include <optional>

#include "fmi/model_description.hpp"
#include "fmi/unpack.hpp"
#include "stride/host/input/json_input.hpp"

namespace stride::host::fmi {
namespace fs = std::filesystem;

namespace {

// The model description of an FMU, its archive's modelDescription.xml alone unpacked.
ModelDescription description_of(const fs::path& file) {
  TempFolder folder;
  unpack(file, folder.path(), file.string(), "modelDescription.xml");
  return read_model_description(folder.path() / "modelDescription.xml", file.string());
}

// The one value every FMU that declares it agrees on.
std::optional<double> agreed(const std::vector<std::optional<double>>& values) {
  std::optional<double> out;
  for (const auto& v : values) {
    if (!v) continue;
    if (out && *out != *v) return std::nullopt;
    out = v;
  }
  return out;
}

void fill(json& object, const char* key, double value, const std::string& pointer, const std::string& from,
          std::vector<std::string>& filled) {
  if (object.contains(key)) return;
  object[key] = value;
  filled.push_back(pointer + "/" + key + " = " + number_text(value) + " (from the default experiment of " + from + ")");
}

}  // namespace

void complete_from_fmus(json& document, const fs::path& base, std::vector<std::string>& filled) {
  if (!document.contains("subsystems") || !document["subsystems"].is_object()) return;
  json& subs = document["subsystems"];
  std::vector<std::optional<double>> starts, stops, steps;
  std::vector<std::string> names;
  for (auto it = subs.begin(); it != subs.end(); ++it) {
    if (!it->is_object() || !it->contains("fmu") || !(*it)["fmu"].is_string()) continue;
    const fs::path file = base / (*it)["fmu"].get<std::string>();
    DefaultExperiment e;
    try {
      e = description_of(file).experiment;
    } catch (const std::exception&) {
      continue;  // reported when the graph is built
    }
    starts.push_back(e.start), stops.push_back(e.stop), steps.push_back(e.step);
    names.push_back(file.filename().string());
    if (e.step && *e.step > 0)
      fill(*it, "step", *e.step, "/subsystems/" + pointer_escape(it.key()), names.back(), filled);
  }
  if (names.empty()) return;
  std::string from = names.front();
  for (std::size_t i = 1; i < names.size(); ++i) from += ", " + names[i];
  const auto stop = agreed(stops), start = agreed(starts);
  std::optional<double> step;
  for (const auto& s : steps)
    if (s && *s > 0) step = step ? std::min(*step, *s) : *s;
  if (!document.contains("coupling") && stop) document["coupling"] = {{"scheme", "jacobi"}};
  if (!document.contains("coupling") || !document["coupling"].is_object()) return;
  json& c = document["coupling"];
  if (start) fill(c, "start", *start, "/coupling", from, filled);
  if (stop) fill(c, "end", *stop, "/coupling", from, filled);
  if (step) fill(c, "macro_step", *step, "/coupling", from, filled);
  if (!c.contains("macro_step")) return;
  for (auto it = subs.begin(); it != subs.end(); ++it)
    if (it->is_object() && it->contains("fmu") && !it->contains("step")) (*it)["step"] = c["macro_step"];
}

json fmu_manifest(const fs::path& file) {
  const ModelDescription md = description_of(file);
  const auto& e = md.experiment;
  const double start = e.start.value_or(0.0), stop = e.stop.value_or(start + 1.0);
  const double step = e.step && *e.step > 0 ? *e.step : (stop - start) / 500.0;
  json sub = {{"fmu", fs::absolute(file).string()}, {"step", step}};
  if (!md.has_cs && md.has_states())
    sub["integrator"] = {{"plugin", "cvode"}, {"parameters", {{"rtol", e.tolerance.value_or(1e-6)}}}};
  std::string name = file.stem().string();
  if (name.empty()) name = "fmu";
  return {{"format", 1},
          {"title", file.filename().string() + " on its default experiment"},
          {"subsystems", {{name, sub}}},
          {"connections", json::array()},
          {"coupling", {{"scheme", "jacobi"}, {"macro_step", step}, {"start", start}, {"end", stop}}}};
}

}  // namespace stride::host::fmi
