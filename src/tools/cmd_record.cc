// `pixpath record URL -o FILE [--exit-after S] [...]`: attach and save every window event and
// draw, with its arrival time, as a recording that `pixpath play` replays.
//
// The draws are also decoded and painted (headless, CPU backing) exactly as `pixpath attach`
// does, so the acknowledgements carry real decode-to-paint times and the server paces itself
// as it would for a real client; --snapshot-dir writes the same snapshots attach would.
#include <iostream>
#include <memory>

#include "commands.h"
#include "attach_session.h"

namespace pixpath::tools {

void add_session_options(CLI::App& cmd, AttachOptions& o);

void add_record_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "record",
      "Attach to an xpra server and record every window event and draw (.pxrec, replayed by "
      "pixpath play); draws are painted headless so acks carry real times");
  auto o = std::make_shared<AttachOptions>();
  o->command = "record";
  add_session_options(*cmd, *o);
  cmd->add_option("-o,--output", o->record_file, "The recording to write")->required();
  cmd->callback([o, &exit_code] { exit_code = run_attach_session(*o, std::cout, std::cerr); });
}

}  // namespace pixpath::tools
