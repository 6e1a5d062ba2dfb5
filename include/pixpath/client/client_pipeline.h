// ClientPipeline: one xpra Session wired to one PaintEngine painting into one Backing — the
// picture path of `pixpath attach`, reusable by tests and tools.
//
//   session reader thread   new-window / override-redirect -> engine.window_new
//                           window-move-resize             -> engine.window_resize
//                           lost-window                    -> engine.window_lost
//                           draw                           -> engine.submit
//   UI thread (the caller)  run_for() / run_until() / run_ui_once(): the engine paints; every
//                           DamageAck it makes goes back to the server (session.send_ack)
//
// Every draw the session hands over ends in exactly one acknowledgement: painted (> 0), error
// (-1: decode, delta or paint error, or the engine queue was full), skipped (0: no such
// window, shutdown). Draws the session itself refuses (malformed, window over the limits) are
// acknowledged by the session. stats() counts both sides so a test can check nothing is lost.
// ClientLimits (client_limits.h) are applied to the session and the engine options here.
//
// Threading: start(), run_*(), stop() and the destructor on the UI thread (the thread that
// owns the backing); stats(), closed(), end() from any thread. The observer's callbacks run
// on the session's reader thread (see SessionListener), after the pipeline acted on them.
// Lifetime: the backing and the observer must outlive the pipeline.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "pixpath/client/client_limits.h"
#include "pixpath/core/result.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/session.h"
#include "pixpath/paint/backing.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::client {

struct ClientPipelineOptions {
  // url, encodings, log, password, packet_hook ...; its limits are replaced by `limits`.
  xpra::SessionOptions session;
  // decode_threads, direct_decode ...; its limits, queue limits and log are set here. on_ack,
  // when set, is called after the acknowledgement was sent (or failed to be).
  paint::PaintEngineConfig engine;
  ClientLimits limits;
  // Sees every session event except draws (window titles for a UI, say). May be null.
  xpra::SessionListener* observer = nullptr;
};

struct ClientPipelineStats {
  int64_t draws_submitted = 0;  // draws handed to the engine
  int64_t acks = 0;             // acknowledgements the engine made (one per draw)
  int64_t acks_painted = 0, acks_error = 0, acks_skipped = 0;
  int64_t acks_sent = 0;        // ... of which reached the socket
  int64_t acks_send_failed = 0; // ... could not be sent (the session had ended)
  int64_t acks_unmatched = 0;   // acks for a sequence not outstanding (must stay 0)
  int64_t outstanding = 0;      // draws submitted and not yet acknowledged
  // From the session: every draw it received, and every ack it sent (its own included).
  uint64_t session_draws = 0, session_draws_rejected = 0, session_acks_sent = 0;
  uint64_t windows_refused = 0;
  paint::PaintEngineStats engine;
};

class ClientPipeline final : private xpra::SessionListener {
 public:
  // UI thread: creates the engine on `backing`, connects and sends hello.
  [[nodiscard]] static Result<std::unique_ptr<ClientPipeline>> start(
      paint::Backing& backing, ClientPipelineOptions options);
  ~ClientPipeline() override;  // stop("client exit")
  ClientPipeline(const ClientPipeline&) = delete;
  ClientPipeline& operator=(const ClientPipeline&) = delete;

  // Waits for the server's hello while running the UI loop.
  [[nodiscard]] Result<void> wait_until_ready(std::chrono::milliseconds timeout);
  // UI thread: one round of engine UI work; the number of items completed.
  int run_ui_once();
  // UI thread: runs the UI loop for `duration`, or until the session has closed and the
  // engine is idle.
  void run_for(std::chrono::milliseconds duration);
  // UI thread: runs the UI loop until pred() is true (checked between rounds) or `timeout`
  // passes; pred()'s last value.
  bool run_until(const std::function<bool()>& pred, std::chrono::milliseconds timeout);

  // UI thread: paints what is queued (bounded by `drain`), disconnects with `reason` (bounded
  // by the session's disconnect_timeout) and shuts the engine down. Idempotent.
  void stop(std::string reason = "client exit",
            std::chrono::milliseconds drain = std::chrono::milliseconds(2000));

  bool closed() const;
  std::optional<xpra::SessionEnd> end() const;
  ClientPipelineStats stats() const;
  xpra::Session& session() { return *session_; }
  paint::PaintEngine& engine() { return *engine_; }

 private:
  explicit ClientPipeline(ClientPipelineOptions options);
  void on_engine_ack(const DamageAck& ack, const paint::PaintReport& report);

  // SessionListener (reader thread).
  void on_server_hello(const xpra::ServerInfo&) override;
  void on_window_new(const xpra::WindowInfo&) override;
  void on_window_lost(int64_t wid) override;
  void on_metadata(const xpra::WindowMetadata&) override;
  void on_move_resize(const xpra::WindowGeometry&) override;
  void on_raise(int64_t wid) override;
  void on_draw(DrawPacket&& draw) override;
  void on_closed(const xpra::SessionEnd&) override;

  ClientPipelineOptions options_;
  paint::AckSink user_ack_;
  std::unique_ptr<paint::PaintEngine> engine_;
  std::unique_ptr<xpra::Session> session_;
  std::atomic<xpra::Session*> ack_target_{nullptr};
  bool stopped_ = false;  // UI thread

  mutable Mutex mu_;
  std::vector<DamageAck> early_acks_ PIXPATH_GUARDED_BY(mu_);  // before ack_target_
  std::unordered_map<int64_t, int> outstanding_ PIXPATH_GUARDED_BY(mu_);  // sequence -> count
  ClientPipelineStats stats_ PIXPATH_GUARDED_BY(mu_);
  std::optional<xpra::SessionEnd> end_ PIXPATH_GUARDED_BY(mu_);
};

}  // namespace pixpath::client
