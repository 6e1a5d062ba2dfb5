// ClientPipeline: one xpra Session wired to one PaintEngine painting into one Backing — the
// picture path of `pixpath attach` and `pixpath record`, and of the hostile-server and soak
// tests, which therefore test what ships.
//
//   session reader thread   new-window / override-redirect -> window table, engine.window_new
//                           window-move-resize             -> window table; engine.window_resize
//                                                             only when the size changed
//                           lost-window                    -> window table (lost), engine.window_lost
//                           metadata                       -> window table (title)
//                           draw                           -> observers' on_draw, engine.submit
//   UI thread (the caller)  run_for() / run_until() / run_ui_once(): the engine paints; every
//                           DamageAck it makes goes back to the server (session.send_ack), or is
//                           counted as made after the server hung up (acks_after_close)
//
// Every draw the session hands over ends in exactly one acknowledgement: painted (> 0), error
// (-1: decode, delta or paint error, or the engine queue was full), skipped (0: no such
// window, shutdown). Draws the session itself refuses (malformed, window over the limits) are
// acknowledged by the session. stats() counts both sides so a test can check nothing is lost.
// ClientLimits (client_limits.h) are applied to the session and the engine options here
// (the process-wide picture limits are the program's: apply_picture_limits()).
//
// Observers (client_observer.h) see the window events, every draw as received, every ack with
// its PaintReport, the hello and the end; the program's presentation (status lines, summary,
// snapshots, recording) lives there, not in the pipeline.
//
// The stop sequence (stop(), and the destructor): paint and ack what arrived (bounded by
// `drain`) while the session is open; send "disconnect" on a helper thread while the UI thread
// keeps painting, so the acks of draws that arrive before the server closes still go out; then
// paint what is left (bounded by `settle`; those acks are counted after close), tell the
// observers (before_engine_shutdown: final snapshots) and shut the engine down.
//
// GPU route: jpeg/jpega go to the GPU when engine.decoder says gpu or auto (paint_engine.h).
// Unless the options name their own (engine.gpu_factory or engine.gpu_decoder), the pipeline
// gives the engine cuda::gpu_draw_decoder_factory(gpu): the GPU module loaded at run time only
// when the engine asks for it.
//
// Threading: start(), wait_until_ready(), run_*(), wait_for_work(), stop() and the destructor
// on the UI thread (the thread that owns the backing); stats(), closed(), end(), windows(),
// window() from any thread. Observers: see client_observer.h.
// Lifetime: the backing and the observers must outlive the pipeline.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "pixpath/client/client_limits.h"
#include "pixpath/client/client_observer.h"
#include "pixpath/core/result.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/net/xpra/session.h"
#include "pixpath/paint/backing.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::client {

struct ClientPipelineOptions {
  // url, encodings, log, password, packet_hook ...; its limits are replaced by `limits`.
  xpra::SessionOptions session;
  // decode_threads, decoder, gpu_max_batch, direct_decode ...; its limits and queue limits are
  // set from `limits`; an empty log takes session.log. on_ack and before_window_destroy belong
  // to the pipeline (whatever is set there is replaced): watch acks through an observer.
  paint::PaintEngineConfig engine;
  ClientLimits limits;
  // Watch the session, in this order; null entries are not allowed. See client_observer.h.
  std::vector<ClientObserver*> observers;
  // For the GPU route's default factory (see "GPU route" above).
  cuda::GpuDecoderOptions gpu;
};

struct ClientPipelineStats {
  int64_t draws_submitted = 0;  // draws handed to the engine
  int64_t acks = 0;             // acknowledgements the engine made (one per draw)
  int64_t acks_painted = 0, acks_error = 0, acks_skipped = 0;
  int64_t acks_sent = 0;         // ... of which reached the socket
  int64_t acks_after_close = 0;  // ... made after the session closed (see AckDelivery)
  int64_t acks_send_failed = 0;  // ... could not be sent while the session was open
  int64_t acks_unmatched = 0;    // acks for a sequence not outstanding (must stay 0)
  int64_t outstanding = 0;       // draws submitted and not yet acknowledged
  // From the session: every draw it received, and every ack it sent (its own included).
  uint64_t session_draws = 0, session_draws_rejected = 0, session_acks_sent = 0;
  uint64_t windows_refused = 0;
  uint64_t pings_answered = 0;
  paint::PaintEngineStats engine;
};

class ClientPipeline final : private xpra::SessionListener {
 public:
  // UI thread: creates the engine on `backing`, connects and sends hello. Fails when the
  // engine cannot be made (e.g. --decoder gpu without a GPU) or the connection fails.
  [[nodiscard]] static Result<std::unique_ptr<ClientPipeline>> start(
      paint::Backing& backing, ClientPipelineOptions options);
  ~ClientPipeline() override;  // stop("client exit")
  ClientPipeline(const ClientPipeline&) = delete;
  ClientPipeline& operator=(const ClientPipeline&) = delete;

  // Waits for the server's hello while running the UI loop. Fails with the session's end when
  // it closed first, or Unavailable ("no hello from the server within N ms").
  [[nodiscard]] Result<void> wait_until_ready(std::chrono::milliseconds timeout);
  // UI thread: one round of engine UI work; the number of items completed.
  int run_ui_once();
  // UI thread: sleeps until the engine has UI work or `timeout` passes.
  void wait_for_work(std::chrono::microseconds timeout);
  // UI thread: runs the UI loop for `duration`, or until the session has closed and the
  // engine is idle.
  void run_for(std::chrono::milliseconds duration);
  // UI thread: runs the UI loop until pred() is true (checked between rounds) or `timeout`
  // passes; pred()'s last value.
  bool run_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

  // UI thread: the stop sequence (see the header comment): `drain` bounds the painting before
  // the goodbye, the session's disconnect_timeout the goodbye, `settle` the painting after it.
  // Sends "disconnect" with `reason`. Returns whether the engine was idle when it was shut
  // down (false: `settle` ran out; what was left was acked 0). Idempotent: a second call
  // returns the first one's result.
  bool stop(std::string reason = "client exit",
            std::chrono::milliseconds drain = std::chrono::milliseconds(2000),
            std::chrono::milliseconds settle = std::chrono::milliseconds(10000));

  bool closed() const;
  std::optional<xpra::SessionEnd> end() const;
  ClientPipelineStats stats() const;
  // The window table, by wid: every live window and the last kMaxLostWindows lost ones.
  static constexpr int kMaxLostWindows = 1024;
  std::vector<ClientWindow> windows() const;
  std::optional<ClientWindow> window(int64_t wid) const;
  xpra::Session& session() { return *session_; }
  paint::PaintEngine& engine() { return *engine_; }

 private:
  explicit ClientPipeline(ClientPipelineOptions options);
  void on_engine_ack(const DamageAck& ack, const paint::PaintReport& report);
  void deliver_ack(xpra::Session& session, const DamageAck& ack, const paint::PaintReport& report);
  void on_engine_window_destroy(int64_t wid);

  // SessionListener (reader thread).
  void on_server_hello(const xpra::ServerInfo&) override;
  void on_server_encodings(const std::vector<std::string>& encodings) override;
  void on_window_new(const xpra::WindowInfo&) override;
  void on_window_lost(int64_t wid) override;
  void on_metadata(const xpra::WindowMetadata&) override;
  void on_move_resize(const xpra::WindowGeometry&) override;
  void on_raise(int64_t wid) override;
  void on_cursor(const xpra::Cursor& cursor) override;
  void on_draw(DrawPacket&& draw) override;
  void on_closed(const xpra::SessionEnd&) override;

  ClientPipelineOptions options_;
  std::unique_ptr<paint::PaintEngine> engine_;
  std::unique_ptr<xpra::Session> session_;
  std::atomic<xpra::Session*> ack_target_{nullptr};
  std::atomic<bool> saying_goodbye_{false};  // stop() is disconnecting: a failed send is no failure
  bool stopped_ = false;        // UI thread
  bool idle_at_stop_ = false;   // UI thread

  mutable Mutex mu_;
  // Acks made before the session existed (a draw refused at submit during start()).
  std::vector<std::pair<DamageAck, paint::PaintReport>> early_acks_ PIXPATH_GUARDED_BY(mu_);
  std::unordered_map<int64_t, int> outstanding_ PIXPATH_GUARDED_BY(mu_);  // sequence -> count
  ClientPipelineStats stats_ PIXPATH_GUARDED_BY(mu_);  // the counting fields
  std::optional<xpra::SessionEnd> end_ PIXPATH_GUARDED_BY(mu_);
  std::map<int64_t, ClientWindow> windows_ PIXPATH_GUARDED_BY(mu_);
  int lost_windows_ PIXPATH_GUARDED_BY(mu_) = 0;  // rows of windows_ with lost set
};

}  // namespace pixpath::client
