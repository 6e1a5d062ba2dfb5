// Command-line options for ClientLimits, for the `pixpath` subcommands that talk to a server
// (attach, record). Header-only so that only the command-line tool depends on CLI11.
//
//   --max-picture-size WxH        largest picture a draw may decode to (default 8192x8192)
//   --max-packet-size BYTES       one packet as sent, all chunks (default 128MiB)
//   --max-decompressed-size BYTES zlib/lz4 output of one packet or one draw (default 128MiB)
//   --max-windows N               windows at once (default 64)
//   --max-queued-packets N        draws waiting to be painted (default 256)
//   --max-queued-bytes BYTES      their data (default 256MiB)
//   --send-timeout MS             a send that cannot write for this long ends the session
//   --stall-timeout MS            a packet unfinished for this long ends the session
// BYTES accept suffixes: 64MiB, 1GiB, 500kb (kb = 1024 as in CLI11's AsSizeValue(false)).
#pragma once

#include <algorithm>
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "pixpath/client/client_limits.h"

namespace pixpath::client {

// Adds the options to `app` (a subcommand); parsed values land in `limits` (which must
// outlive the parse). `group` names the help section.
inline void add_limit_options(CLI::App& app, ClientLimits& limits,
                              const std::string& group = "Limits (hostile servers)") {
  app.add_option_function<std::string>(
         "--max-picture-size",
         [&limits](const std::string& s) {
           int w = 0, h = 0;
           char x = 0, extra = 0;
           if (std::sscanf(s.c_str(), "%d%c%d%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') ||
               w <= 0 || h <= 0 || w > 65535 || h > 65535) {
             throw CLI::ValidationError("--max-picture-size", "expected WxH, e.g. 8192x8192, not '" + s + "'");
           }
           limits.decode.max_width = w;
           limits.decode.max_height = h;
           limits.decode.max_pixels = uint64_t(w) * uint64_t(h);
           limits.picture.max_width = w;
           limits.picture.max_height = h;
           // room for one 4-byte-per-pixel picture of that size
           limits.picture.max_bytes = std::max<uint64_t>(limits.picture.max_bytes, uint64_t(w) * uint64_t(h) * 4);
         },
         "Largest picture a draw may decode to, WxH")
      ->default_str(std::to_string(limits.decode.max_width) + "x" + std::to_string(limits.decode.max_height))
      ->group(group);
  app.add_option_function<uint64_t>(
         "--max-packet-size",
         [&limits](const uint64_t& v) {
           limits.frame.max_packet_size = size_t(v);
           limits.frame.max_chunk_size = std::min(limits.frame.max_chunk_size, size_t(v));
         },
         "Largest packet as sent, all its chunks (bytes; suffixes KiB, MiB, GiB)")
      ->transform(CLI::AsSizeValue(false))
      ->default_str(std::to_string(limits.frame.max_packet_size))
      ->group(group);
  app.add_option_function<uint64_t>(
         "--max-decompressed-size",
         [&limits](const uint64_t& v) {
           limits.frame.max_decompressed_size = size_t(v);
           limits.decode.max_decompressed_bytes = v;
         },
         "Largest zlib/lz4 output of one packet or one draw's data (bytes)")
      ->transform(CLI::AsSizeValue(false))
      ->default_str(std::to_string(limits.frame.max_decompressed_size))
      ->group(group);
  app.add_option("--max-windows", limits.max_windows, "Windows at once; more are refused")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str()
      ->group(group);
  app.add_option("--max-queued-packets", limits.max_queued_draws,
                 "Draws waiting to be painted; more are refused (acknowledged -1)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str()
      ->group(group);
  app.add_option("--max-queued-bytes", limits.max_queued_bytes,
                 "Data bytes of the draws waiting to be painted")
      ->transform(CLI::AsSizeValue(false))
      ->capture_default_str()
      ->group(group);
  app.add_option_function<int64_t>(
         "--send-timeout", [&limits](const int64_t& ms) { limits.send_timeout = std::chrono::milliseconds(ms); },
         "Milliseconds a send may wait for the server to read before the session ends")
      ->check(CLI::Range(int64_t{1}, int64_t{3600000}))
      ->default_str(std::to_string(limits.send_timeout.count()))
      ->group(group);
  app.add_option_function<int64_t>(
         "--stall-timeout", [&limits](const int64_t& ms) { limits.stall_timeout = std::chrono::milliseconds(ms); },
         "Milliseconds a started packet may stay unfinished before the session ends (0: never)")
      ->check(CLI::Range(int64_t{0}, int64_t{3600000}))
      ->default_str(std::to_string(limits.stall_timeout.count()))
      ->group(group);
}

}  // namespace pixpath::client
