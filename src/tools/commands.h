// Each subcommand of the `pixpath` tool lives in its own cmd_*.cc and registers itself on the
// CLI11 app through one function declared here; main.cc calls them in order.
#pragma once

#include <CLI/CLI.hpp>

namespace pixpath::tools {

// Registers the subcommand; its callback sets `exit_code` when it runs.
void add_info_command(CLI::App& app, int& exit_code);

}  // namespace pixpath::tools
