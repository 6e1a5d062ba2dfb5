// Viewer: one live xpra session painted into a backing — what `pixpath attach` and
// `pixpath record` run.
//
// What it does: connects (xpra::Session), creates/resizes/destroys a backing window for every
// new-window / window-move-resize / lost-window, hands every draw to a PaintEngine and sends
// the engine's acknowledgement (received -> painted time, -1 on a decode error) through
// Session::send_ack, so every draw is acked exactly once. Optionally it writes every window
// event and draw, with its arrival time, to a recording (docs/recording-format.md), and a PNG
// per window (`<wid>-<sanitised title>.png`) every snapshot interval and at exit.
//
// Threads: the session's reader thread runs the listener (engine.submit, window events, the
// recording writer); the calling thread is the UI thread: it runs the engine's UI loop, the
// snapshot and status timers, and the shutdown. SIGINT/SIGTERM (installed by run_viewer for
// its duration) end the session cleanly: drain what arrived (acked with real times),
// send "disconnect", paint and ack what came meanwhile, write the final snapshots.
#pragma once

#include "pixpath/client/client_limits.h"

#include <iosfwd>
#include <string>

namespace pixpath::tools {

struct ViewerOptions {
  std::string command = "attach";  // for messages: "pixpath <command>: ..."
  std::string url;                 // tcp://HOST:PORT/
  std::string encoding = "rgb24";  // preferred coding (xpra "encoding")
  int quality = -1;                // -1: the server's choice
  std::string password_file;       // else XPRA_PASSWORD; never a command-line value
  int decode_threads = 2;
  double exit_after_s = 0;         // 0: until Ctrl-C or the server ends the session
  std::string snapshot_dir;        // empty: no snapshots
  double snapshot_interval_s = 0;  // 0: at exit (and when a window is lost) only
  std::string record_file;         // empty: no recording
  bool steal = false;              // connect even when the session has a client (xpra "steal";
                                   // with the server's --sharing=yes both clients stay)
  bool headless = true;            // false: X11 windows through the GL backing where DISPLAY is
                                   // set and GL works, else headless (with a message)
  std::string decoder = "auto";    // jpeg/jpega: cpu, gpu, auto (paint_engine.h)
  int gpu_max_batch = 0;           // PaintEngineConfig::gpu_max_batch
  int64_t gpu_min_pixels = 256 * 256;  // PaintEngineConfig::gpu_min_pixels
  bool json = false;               // summary as JSON on stdout
  bool progress = false;           // status lines on stderr even when it is not a terminal
  double connect_timeout_s = 20;
  client::ClientLimits limits;     // what a hostile server may make us hold (--max-... options)
};

// Runs the session until --exit-after, a signal, or the server ends it. Returns 0 when the
// session ran and ended cleanly, 1 when it could not connect or failed, 2 on bad options.
int run_viewer(const ViewerOptions& options, std::ostream& out, std::ostream& err);

// "xterm: ~/src" -> "xterm___src": letters, digits, '.', '-', '_' kept, the rest '_', at most
// 64 characters, "untitled" when empty. Exposed for tests.
std::string sanitise_title(const std::string& title);

}  // namespace pixpath::tools
