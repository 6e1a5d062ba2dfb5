// pixpath: the command-line client. See `pixpath --help`.
#include <cstdint>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "commands.h"
#include "pixpath/core/log.h"
#if PIXPATH_HAVE_GL
#include "pixpath/gl/gl_backing.h"
#endif
#if PIXPATH_HAVE_X11
#include "pixpath/x11/x11_backing.h"
#endif

int main(int argc, char** argv) {
  CLI::App app{
      "pixpath: the picture path of a remote-display client.\n"
      "Receives xpra draw packets, decodes them (CPU or GPU) and paints them into window "
      "backings."};
  app.set_version_flag("--version", "pixpath " PIXPATH_VERSION);
  app.require_subcommand(1);
  // The library's diagnostics on stderr (pixpath/core/log.h); valid before or after the
  // subcommand (fallthrough). The commands' own output and error lines are not affected.
  app.fallthrough();
  CLI::Option* verbose = app.add_flag_function(
      "-v,--verbose",
      [](std::int64_t n) {
        pixpath::set_log_threshold(n >= 2 ? pixpath::LogLevel::Trace : pixpath::LogLevel::Debug);
      },
      "More library diagnostics on stderr: -v adds debug lines, -vv trace lines (default: "
      "errors, warnings and info)");
  app.add_flag_callback(
         "-q,--quiet", [] { pixpath::set_log_threshold(pixpath::LogLevel::Error); },
         "Only the library's error lines on stderr (no warnings or info)")
      ->excludes(verbose);
  int exit_code = 0;
#if PIXPATH_HAVE_GL
  pixpath::gl::register_gl_backings();  // "gl" (headless EGL) and "gl-window" (X11)
#endif
#if PIXPATH_HAVE_X11
  pixpath::x11::register_x11_backing();  // "x11" (X11 shared memory, no GL)
#endif
  pixpath::tools::add_info_command(app, exit_code);
  pixpath::tools::add_decode_command(app, exit_code);
  pixpath::tools::add_encode_command(app, exit_code);
  pixpath::tools::add_play_command(app, exit_code);
  pixpath::tools::add_attach_command(app, exit_code);
  pixpath::tools::add_record_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    // One line, naming the subcommand when there is one; exit status 2 = bad arguments.
    std::string where = "pixpath";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    std::string what = e.what();
    if (app.get_subcommands().empty() && argc > 1 && argv[1][0] != '-')
      what = std::string("unknown subcommand '") + argv[1] + "'";
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "%s: %s (see --help)\n", where.c_str(), what.c_str());
    return 2;
  }
  return exit_code;
}
