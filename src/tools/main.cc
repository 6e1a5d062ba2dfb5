// pixpath: the command-line client. See `pixpath --help`.
#include <cstdio>

#include <CLI/CLI.hpp>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{
      "pixpath: the picture path of a remote-display client.\n"
      "Receives xpra draw packets, decodes them (CPU or GPU) and paints them into window "
      "backings."};
  app.set_version_flag("--version", "pixpath " PIXPATH_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  pixpath::tools::add_info_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  return exit_code;
}
