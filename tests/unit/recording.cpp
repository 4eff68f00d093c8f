// The record interval never changes a result: every shipped manifest, cut to a few macro steps,
// and the two-mass test with a mass as a co-simulation FMU (the slow mass exported by `stride
// export`, FMI 2 and 3, and the oscillator example FMU stepping itself), each recorded every
// 1, 1/10 and 1/100 macro step, has the same value in every column at every communication point.
// Rows inside a co-simulation FMU's step come from a copy of the FMU stepped there and taken back
// (or, without FMU states, from interpolation), never from its own steps.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "stride_run.hpp"

namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using stride_test::num;
using stride_test::Run;
using stride_test::run_stride;
using stride_test::Table;

// A manifest's number, or the variable a "$name" names.
double resolved(const json& manifest, const json& v) {
  if (v.is_string() && v.get<std::string>().rfind('$', 0) == 0)
    return manifest.at("variables").at(v.get<std::string>().substr(1)).get<double>();
  return v.get<double>();
}

// `manifest` (relative to the source tree) run to start + steps macro steps with each record
// interval H, H/10, H/100, plus `sets`: every column at every communication point k H of the
// three runs compared (time included); returns how many values were.
std::size_t same_at_communication_points(const std::string& manifest, std::vector<std::string> sets, int steps) {
  std::ifstream in(fs::path(STRIDE_SOURCE_DIR) / manifest);
  const json m = json::parse(in);
  const double H = resolved(m, m.at("coupling").at("macro_step"));
  const double t0 = m.at("coupling").contains("start") ? resolved(m, m["coupling"]["start"]) : 0.0;
  sets.push_back("/coupling/end=" + num(t0 + steps * H));
  std::vector<Table> tables;
  for (const int per_step : {1, 10, 100}) {
    std::vector<std::string> s = sets;
    s.push_back("/record/interval=" + num(H / per_step));
    std::string tag = manifest + "_" + std::to_string(per_step);
    std::replace(tag.begin(), tag.end(), '/', '_');
    const Run r = run_stride(manifest, s, tag);
    INFO(manifest << " recorded " << per_step << " times per macro step: " << r.message());
    REQUIRE(r.status() == "completed");
    tables.push_back(r.table);
  }
  // Row of each communication point k in each table (times within 1e-6 H of k H).
  auto rows_at_points = [&](const Table& t) {
    std::map<long, std::size_t> rows;
    const auto& time = t["time"];
    for (std::size_t i = 0; i < time.size(); ++i) {
      const double k = std::round((time[i] - t0) / H);
      if (std::abs(time[i] - (t0 + k * H)) <= 1e-6 * H) rows.emplace(static_cast<long>(k), i);
    }
    return rows;
  };
  const auto reference = rows_at_points(tables[0]);
  REQUIRE(reference.size() == static_cast<std::size_t>(steps) + 1);
  std::size_t compared = 0;
  for (std::size_t j = 1; j < tables.size(); ++j) {
    const auto rows = rows_at_points(tables[j]);
    REQUIRE(rows.size() == reference.size());
    for (const auto& [name, column] : tables[0].col) {
      for (const auto& [k, i] : reference) {
        const double a = column[i], b = tables[j][name][rows.at(k)];
        INFO(manifest << ": " << name << " at t = " << t0 + k * H << " s, recorded " << (j == 1 ? 10 : 100)
                      << " times per macro step against once");
        if (std::isnan(a)) CHECK(std::isnan(b));
        else CHECK(a == b);
        ++compared;
      }
    }
  }
  return compared;
}

}  // namespace

TEST_CASE("recording: the shipped manifests give the same values at every communication point at any record interval") {
  std::vector<std::string> manifests;
  for (const auto& e : fs::recursive_directory_iterator(fs::path(STRIDE_SOURCE_DIR) / "manifests")) {
    const fs::path rel = fs::relative(e.path(), STRIDE_SOURCE_DIR);
    if (e.path().extension() != ".json" || rel.string().find("sweeps") != std::string::npos ||
        e.path().filename().string().find(".description.") != std::string::npos)
      continue;
    manifests.push_back(rel.string());
  }
  std::sort(manifests.begin(), manifests.end());
  REQUIRE(manifests.size() >= 30);
  for (const auto& m : manifests) {
    CAPTURE(m);
    CHECK(same_at_communication_points(m, {}, 20) > 0);
  }
}

TEST_CASE("recording: a co-simulation FMU keeps its own steps at any record interval") {
  // The slow mass of the two-mass test exported alone and put back at its macro step (FMI 2
  // and 3); its step is the macro step, so every row inside a step is inside one doStep.
  for (const int fmi : {2, 3}) {
    const fs::path fmu = stride_test::scratch() / ("slow_fmi" + std::to_string(fmi) + ".fmu");
    const auto e = stride_test::run_command(std::string("'") + STRIDE_EXE + "' export '" + STRIDE_SOURCE_DIR +
                                            "/manifests/two_mass.json' --subsystem slow --fmi " + std::to_string(fmi) +
                                            " -o '" + fmu.string() + "'");
    INFO(e.output);
    REQUIRE(e.exit_code == 0);
    CHECK(same_at_communication_points("manifests/two_mass.json",
                                       {"/subsystems/slow={\"fmu\":\"" + fmu.string() + "\",\"step\":0.1}"},
                                       30) == 2 * 5 * 31);
  }
  // The oscillator example FMU stepping itself (its co-simulation interface) as the slow mass.
  CHECK(same_at_communication_points(
            "manifests/fmu_two_mass.json",
            {"/subsystems/slow={\"fmu\":\"" + std::string(STRIDE_BINARY_DIR) +
             "/fmus/oscillator.fmu\",\"step\":0.1,\"parameters\":{\"m\":100,\"k\":39.47841760435743,\"d\":0,"
             "\"k2\":38.69666676070679,\"x0\":9.99,\"v0\":0}}"},
            30) == 2 * 5 * 31);
}
