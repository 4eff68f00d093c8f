// Help of the `stride` command beyond CLI11's synopsis and options: two examples and the pages
// of the documentation site for every subcommand, and the `help` subcommand.
// Call order: add_help() once after every subcommand is declared, before parsing; then, when
// the returned subcommand was parsed, help_command(). Single-threaded; no ownership transfer.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace stride::host {

// Adds the examples and pages to each subcommand's --help, a footer to the overview, and the
// `help [COMMAND [SUBCOMMAND]]` subcommand, whose words are stored into `topic`.
CLI::App* add_help(CLI::App& app, std::vector<std::string>& topic);

// Prints the overview (empty topic) or a subcommand's help to stdout: 0; an unknown command: 2.
int help_command(CLI::App& app, const std::vector<std::string>& topic);

}  // namespace stride::host
