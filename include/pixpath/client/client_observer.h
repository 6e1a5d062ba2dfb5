// ClientObserver: what a ClientPipeline (client_pipeline.h) tells the code around it — a
// status line, a summary, snapshots, a recording. The pipeline does the work (windows, draws,
// acks, the stop sequence); observers only watch, and never owe the server anything: a draw
// an observer sees is acknowledged by the pipeline whatever the observer does.
//
// Every callback has an empty default, so an observer overrides only what it needs. Several
// observers may watch one pipeline; they are called in the order given in
// ClientPipelineOptions::observers, after the pipeline acted on the event (a new window is
// already queued for the engine), except on_draw (before the draw is submitted).
//
// Threads (the pipeline's two: the session's reader thread and the UI thread that owns the
// backing; see client_pipeline.h):
//   - reader thread, one call at a time in arrival order: on_server_hello,
//     on_server_encodings, on_window_new,
//     on_window_lost, on_metadata, on_move_resize, on_raise, on_cursor, on_draw, on_session_end;
//   - UI thread: on_ack, before_window_destroy, before_engine_shutdown. Exception: a draw the
//     engine refuses at submit (its queue is full, or it was shut down) is acknowledged at once
//     on the submitting thread, so on_ack can run on the reader thread too, concurrently with
//     a UI-thread on_ack: an observer that keeps state across both threads locks it.
// Across the two threads only cause and effect order the calls: a draw's on_draw comes before
// its on_ack, on_session_end before before_engine_shutdown; but a lost window's
// before_window_destroy (UI thread) may come before its on_window_lost (reader thread).
// Callbacks must not block for long (the reader thread stops reading meanwhile, the UI thread
// stops painting) and must not call the pipeline's UI-thread methods (run_*, stop).
//
// Lifetime: an observer must outlive the pipeline it watches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pixpath/net/xpra/session.h"
#include "pixpath/paint/paint_engine.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::client {

// One row of the pipeline's window table: what the server said about a window, kept after the
// window is lost (lost = true) so a summary can list every window of the session.
struct ClientWindow {
  int64_t wid = 0;
  int x = 0, y = 0, w = 0, h = 0;  // the last geometry the server gave
  bool override_redirect = false;  // a menu, tooltip ... (new-override-redirect)
  bool lost = false;               // the server destroyed it (lost-window)
  std::string title;               // the last metadata "title"; may be empty
};

// What became of one acknowledgement.
enum class AckDelivery {
  Sent,        // written to the server
  AfterClose,  // made after the session closed (the server hung up, or our goodbye closed
               // the connection): nobody to send it to (a draw that arrived just before the
               // goodbye and was painted after the server hung up)
  Failed,      // the session was open but the send failed (the session then ends)
};

class ClientObserver {
 public:
  virtual ~ClientObserver() = default;

  // Reader thread. The server's hello was handled: the session is ready.
  virtual void on_server_hello(const xpra::ServerInfo&) {}
  // Reader thread. xpra 6.x: the server's codings arrived (a packet after the hello); not
  // called for 3.1, whose hello carries them.
  virtual void on_server_encodings(const std::vector<std::string>& /*encodings*/) {}
  // Reader thread. A window (normal or override-redirect) the session accepted; it is in the
  // window table and queued for the engine.
  virtual void on_window_new(const xpra::WindowInfo&) {}
  // Reader thread. The server destroyed a window; the engine destroys its framebuffer in turn
  // (before_window_destroy comes then, on the UI thread).
  virtual void on_window_lost(int64_t /*wid*/) {}
  // Reader thread. A metadata update (a new title is already in the window table).
  virtual void on_metadata(const xpra::WindowMetadata&) {}
  // Reader thread. A known window moved or was resized; `resized` says whether its size
  // changed (only then is the engine's framebuffer resized). Geometry for windows the table
  // does not have is ignored and not reported.
  virtual void on_move_resize(const xpra::WindowGeometry&, bool /*resized*/) {}
  virtual void on_raise(int64_t /*wid*/) {}
  // Reader thread. The server's cursor changed (only with SessionOptions::input).
  virtual void on_cursor(const xpra::Cursor&) {}
  // Reader thread. Every draw the session accepted, as received (draw.received is its arrival
  // time), just before it is submitted to the engine. Copying the DrawPacket shares its data
  // (SharedBytes), it does not copy the pixels: a recorder keeps a copy, nothing more.
  virtual void on_draw(const DrawPacket&) {}
  // Reader thread. The last reader-thread callback: the session is closed.
  virtual void on_session_end(const xpra::SessionEnd&) {}

  // UI thread (see the exception above). One call per acknowledgement the engine made (one per
  // draw submitted), after it was sent or counted: `delivery` says which.
  virtual void on_ack(const DamageAck&, const paint::PaintReport&, AckDelivery) {}
  // UI thread, just before a lost window's framebuffer is destroyed: the last chance to read
  // it (a final snapshot).
  virtual void before_window_destroy(int64_t /*wid*/) {}
  // UI thread, once, during stop(): the session is closed, what arrived was painted (or the
  // wait timed out: `engine_idle` false) and the framebuffers are still there (final
  // snapshots). The engine shuts down right after.
  virtual void before_engine_shutdown(bool /*engine_idle*/) {}
};

}  // namespace pixpath::client
