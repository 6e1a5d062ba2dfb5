// Command-line options for client::ClientLimits, for the `pixpath` subcommands that talk to a
// server (attach, record):
//
//   --max-picture-size WxH        largest picture a draw may decode to (default 8192x8192)
//   --max-packet-size BYTES       one packet as sent, all chunks (default 128MiB)
//   --max-decompressed-size BYTES zlib/lz4 output of one packet or one draw (default 128MiB)
//   --max-windows N               windows at once (default 64)
//   --max-queued-packets N        draws waiting to be painted (default 256)
//   --max-queued-bytes BYTES      their data (default 256MiB)
//   --send-timeout MS             a send that cannot write for this long ends the session
//   --stall-timeout MS            a packet unfinished for this long ends the session
// BYTES accept suffixes: 64MiB, 1GiB, 500kb (kb = 1024: CLI11's AsSizeValue(false)).
// A value ClientLimits refuses (its setters) is a parse error naming the option (exit 2).
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "pixpath/client/client_limits.h"

namespace pixpath::tools {

// Adds the options to `app` (a subcommand); parsed values land in `limits`, which must
// outlive the parse and whose values are shown as the defaults. `group` names the help
// section.
void add_limit_options(CLI::App& app, client::ClientLimits& limits,
                       const std::string& group = "Limits (hostile servers)");

}  // namespace pixpath::tools
