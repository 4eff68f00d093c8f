// Help texts of the `stride` command: for every subcommand two examples and the page of the
// documentation site to read, shown under `stride COMMAND --help`, and `stride help [COMMAND]`.
// The synopsis and every option come from the CLI11 definitions in main.cpp (one place); this
// file adds only what CLI11 does not know. Called once, after main.cpp declared the subcommands.
#include "cli/help.hpp"

#include <iostream>
#include <string>
#include <vector>

namespace stride::host {

namespace {

// What `stride COMMAND --help` prints after the options. `path` is a subcommand path
// ("plugins describe"); `page` a file under docs/ (the site's page of the same name).
struct CommandHelp {
  const char* path;
  std::vector<const char*> examples;
  std::vector<const char*> pages;
};

const std::vector<CommandHelp>& command_helps() {
  static const std::vector<CommandHelp> helps = {
      {"run",
       {"stride run manifests/two_mass.json",
        "stride run manifests/two_mass.json --set /coupling/macro_step=0.05 --out out/h005 --quiet",
        "stride run manifests/real_time/log_crane_operator.json --real-time 1",
        "stride run manifests/real_time/log_crane_view.json --view"},
       {"docs/tutorials/first-cosimulation.md", "docs/reference/manifest.md", "docs/reference/summary.md",
        "docs/reference/results-csv.md", "docs/real-time.md", "docs/viewer.md"}},
      {"validate",
       {"stride validate manifests/crane1_rim.json", "stride validate manifests/two_mass.json --set /coupling/end=10"},
       {"docs/reference/manifest.md"}},
      {"sweep",
       {"stride sweep manifests/sweeps/crane1_stability.json --jobs 2",
        "mpirun -n 4 stride sweep manifests/sweeps/kart_table2.json"},
       {"docs/tutorials/sweep.md", "docs/reference/sweep-file.md", "docs/how-to/mpi-sweeps.md"}},
      {"plugins",
       {"stride plugins", "STRIDE_PLUGIN_PATH=$HOME/my-plugins stride plugins --json"},
       {"docs/reference/plugins.md"}},
      {"plugins describe",
       {"stride plugins describe two_mass_fast", "stride plugins describe lagrange --set order=2 --json"},
       {"docs/reference/plugins.md"}},
      {"export",
       {"stride export manifests/two_mass.json -o two_mass.fmu --fmi 3",
        "stride export manifests/two_mass.json --ssp two_mass.ssp --fmus"},
       {"docs/how-to/export-fmu.md", "docs/how-to/ssp.md"}},
      {"report",
       {"stride report out/two_mass -o two_mass.html", "stride report out/h01 out/h005 -o compare.html"},
       {"docs/viewer.md"}},
      {"view", {"stride view out/two_mass", "stride view out/sweeps/crane1_stability --port 8800"}, {"docs/viewer.md"}},
  };
  return helps;
}

std::string footer_of(const CommandHelp& h) {
  std::string text = "\nExamples:\n";
  for (const char* e : h.examples) text += std::string("  ") + e + "\n";
  text += "\nRead:";
  for (const char* p : h.pages) text += std::string("\n  ") + p;
  return text + "\n  (the documentation site: mkdocs build, then site/index.html)\n";
}

// The subcommand at a path of names ("plugins describe"), or nullptr.
CLI::App* find_command(CLI::App& app, const std::vector<std::string>& path) {
  CLI::App* at = &app;
  for (const auto& name : path) {
    try {
      at = at->get_subcommand(name);
    } catch (const CLI::OptionNotFound&) {
      return nullptr;
    }
  }
  return at;
}

std::vector<std::string> words(const std::string& path) {
  std::vector<std::string> out;
  std::string::size_type begin = 0;
  for (auto end = path.find(' '); end != std::string::npos; begin = end + 1, end = path.find(' ', begin))
    out.push_back(path.substr(begin, end - begin));
  out.push_back(path.substr(begin));
  return out;
}

}  // namespace

CLI::App* add_help(CLI::App& app, std::vector<std::string>& topic) {
  app.name("stride");  // usage lines say `stride run ...` as the examples do, whatever the path run
  for (const auto& h : command_helps())
    if (CLI::App* cmd = find_command(app, words(h.path))) cmd->footer(footer_of(h));
  app.footer(
      "\nEvery command: stride COMMAND --help (synopsis, options, examples, the page to read).\n"
      "First run: stride run manifests/two_mass.json, then see docs/tutorials/first-cosimulation.md.\n"
      "Exit codes: 0 success, 1 the simulation diverged, failed or was interrupted, 2 bad input.\n");
  CLI::App* help = app.add_subcommand("help", "this overview, or a command's help: stride help COMMAND [SUBCOMMAND]");
  help->add_option("command", topic, "a command (run, validate, sweep, plugins, export) or \"plugins describe\"");
  return help;
}

int help_command(CLI::App& app, const std::vector<std::string>& topic) {
  CLI::App* cmd = find_command(app, topic);
  std::string prev = "stride";
  for (std::size_t i = 0; i + 1 < topic.size(); ++i) prev += " " + topic[i];
  if (!cmd || cmd->get_name() == "help") {
    std::string asked;
    for (const auto& t : topic) asked += (asked.empty() ? "" : " ") + t;
    std::cerr << "error: help: no command \"" << asked
              << "\"; commands: run, validate, sweep, plugins, plugins describe, export\n";
    return 2;
  }
  // The formatter directly: App::help() would show the selected subcommand, `help` itself.
  std::cout << cmd->get_formatter()->make_help(cmd, cmd == &app ? std::string("stride") : prev + " " + cmd->get_name(),
                                               CLI::AppFormatMode::Normal);
  return 0;
}

}  // namespace stride::host
