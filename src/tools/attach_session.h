// The live session of `pixpath attach` and `pixpath record`: a ClientPipeline (the one the
// hostile-server and soak tests run) painting into a backing, with the command's presentation
// around it as observers: the summary (session_summary.h), snapshots (snapshot_observer.h),
// the recording (recording_observer.h), and here the run loop, status lines and signals.
//
// What the pipeline does (client_pipeline.h): connects, creates/resizes/destroys a window for
// every new-window / window-move-resize / lost-window, paints every draw and acknowledges it
// exactly once with real decode-to-paint times, and stops cleanly.
//
// Threads: the session's reader thread runs the pipeline's listener and the reader-thread
// observers (the recording writer); the calling thread is the UI thread: it runs the engine's
// UI loop, the snapshot and status timers, and the stop sequence. SIGINT/SIGTERM (installed
// by run_attach_session for its duration) end the session cleanly: drain what arrived (acked
// with real times), send "disconnect", paint and ack what came meanwhile, write the final
// snapshots.
#pragma once

#include "pixpath/client/client_limits.h"
#include "pixpath/net/xpra/connect.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace pixpath::tools {

struct AttachOptions {
  std::string command = "attach";  // for messages: "pixpath <command>: ..."
  std::string url;                 // tcp://, ssl://, ws://, wss://, ssh://, socket:///PATH, :N
                                   // (xpra/endpoint.h)
  xpra::TransportOptions transport;  // --ssl-..., --ssh, --remote-xpra, --socket-dir
  std::string ssl_verify_mode = "required";  // xpra's --ssl-server-verify-mode
  bool ssl_insecure = false;       // --ssl-insecure
  std::string encoding = "rgb24";  // preferred coding (xpra "encoding")
  int quality = -1;                // -1: the server's choice
  int speed = -1;                  // -1: the server's choice
  std::string password_file;       // else XPRA_PASSWORD; never a command-line value
  int decode_threads = 2;
  int video_threads = 0;           // PaintEngineConfig::video_threads (0: its choice)
  double exit_after_s = 0;         // 0: until Ctrl-C or the server ends the session
  std::string snapshot_dir;        // empty: no snapshots
  double snapshot_interval_s = 0;  // 0: at exit (and when a window is lost) only
  std::string record_file;         // empty: no recording
  bool steal = true;               // take the session over from another client, as xpra's own
                                   // client does (6.x refuses steal=no even when no other client
                                   // is attached; with the server's --sharing=yes both stay)
  std::string packet_encoder = "auto";  // auto (rencodeplus, then bencode), rencodeplus, bencode
  std::vector<std::string> encodings;   // restrict the codings offered (empty: all this build
                                        // paints), like xpra's --encodings
  bool headless = true;            // false: X11 windows where DISPLAY is set (see `backing`),
                                   // else headless (with a message)
  // Windowed: "x11" (X11 shared memory, no GL; keyboard and pointer go to the server),
  // "gl-window" (OpenGL), or "auto": x11 where the GL renderer is a software one (llvmpipe,
  // softpipe, swrast) or GL is missing, else gl-window.
  std::string backing = "auto";
  std::string decoder = "auto";    // jpeg/jpega: cpu, gpu, auto (paint_engine.h)
  int gpu_max_batch = 0;           // PaintEngineConfig::gpu_max_batch
  int64_t gpu_min_pixels = 256 * 256;  // PaintEngineConfig::gpu_min_pixels
  std::string gpu_routing = "measured";  // measured | size: PaintEngineConfig::gpu_route_by_measurement
  bool json = false;               // summary as JSON on stdout
  bool progress = false;           // status lines on stderr even when it is not a terminal
  double connect_timeout_s = 20;
  client::ClientLimits limits;     // what a hostile server may make us hold (--max-... options)
};

// Runs the session until --exit-after, a signal, or the server ends it. Returns 0 when the
// session ran and ended cleanly, 1 when it could not connect or failed, 2 on bad options.
int run_attach_session(const AttachOptions& options, std::ostream& out, std::ostream& err);

}  // namespace pixpath::tools
