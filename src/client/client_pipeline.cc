#include "pixpath/client/client_pipeline.h"

#include <thread>

namespace pixpath::client {

using Clock = std::chrono::steady_clock;

ClientPipeline::ClientPipeline(ClientPipelineOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<ClientPipeline>> ClientPipeline::start(paint::Backing& backing,
                                                              ClientPipelineOptions options) {
  for (const ClientObserver* o : options.observers) {
    if (!o) return Error(ErrorCode::InvalidArgument, "client pipeline", "start", "a null observer");
  }
  std::unique_ptr<ClientPipeline> p(new ClientPipeline(std::move(options)));
  ClientPipelineOptions& o = p->options_;
  apply_limits(o.limits, o.session);
  apply_limits(o.limits, o.engine);
  // One hook for both when only the session's is set; with neither, both go to the pixpath
  // log (core/log.h) at their lines' levels.
  if (!o.engine.log && o.session.log) o.engine.log = o.session.log;
  if (!o.engine.gpu_factory && !o.engine.gpu_decoder) {
    o.engine.gpu_factory = cuda::gpu_draw_decoder_factory(o.gpu);
  }
  ClientPipeline* raw = p.get();
  o.engine.on_ack = [raw](const DamageAck& a, const paint::PaintReport& r) {
    raw->on_engine_ack(a, r);
  };
  o.engine.before_window_destroy = [raw](int64_t wid) { raw->on_engine_window_destroy(wid); };
  PIXPATH_TRY(p->engine_, paint::PaintEngine::create(backing, o.engine));
  auto session = xpra::Session::start(o.session, *p);
  if (!session.ok()) return session.error();  // the destructor shuts the engine down
  p->session_ = std::move(session).value();
  std::vector<std::pair<DamageAck, paint::PaintReport>> early;
  {
    MutexLock lock(p->mu_);
    p->ack_target_ = p->session_.get();
    early.swap(p->early_acks_);
  }
  for (const auto& [a, r] : early) p->deliver_ack(*p->session_, a, r);
  return p;
}

ClientPipeline::~ClientPipeline() { stop("client exit"); }

void ClientPipeline::on_engine_ack(const DamageAck& ack, const paint::PaintReport& report) {
  xpra::Session* s = nullptr;
  {
    MutexLock lock(mu_);
    stats_.acks++;
    if (ack.decode_time_us > 0)
      stats_.acks_painted++;
    else if (ack.decode_time_us < 0)
      stats_.acks_error++;
    else
      stats_.acks_skipped++;
    auto it = outstanding_.find(ack.sequence);
    if (it == outstanding_.end()) {
      stats_.acks_unmatched++;
    } else if (--it->second == 0) {
      outstanding_.erase(it);
    }
    s = ack_target_.load();
    if (!s) {
      early_acks_.emplace_back(ack, report);
      return;
    }
  }
  deliver_ack(*s, ack, report);
}

void ClientPipeline::deliver_ack(xpra::Session& s, const DamageAck& ack,
                                 const paint::PaintReport& report) {
  using State = xpra::Session::State;
  AckDelivery delivery = AckDelivery::AfterClose;
  if (s.state() != State::Closed) {
    if (s.send_ack(ack).ok()) {
      delivery = AckDelivery::Sent;
    } else if (s.state() != State::Closed && !saying_goodbye_.load()) {
      delivery = AckDelivery::Failed;
    }  // else the session closed between the check and the send, or our goodbye closed the
       // connection and the reader has not marked the session closed yet: after close
  }
  {
    MutexLock lock(mu_);
    switch (delivery) {
      case AckDelivery::Sent: stats_.acks_sent++; break;
      case AckDelivery::AfterClose: stats_.acks_after_close++; break;
      case AckDelivery::Failed: stats_.acks_send_failed++; break;
    }
  }
  for (ClientObserver* o : options_.observers) o->on_ack(ack, report, delivery);
}

void ClientPipeline::on_engine_window_destroy(int64_t wid) {
  for (ClientObserver* o : options_.observers) o->before_window_destroy(wid);
}

Result<void> ClientPipeline::wait_until_ready(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    auto r = session_->wait_until_ready(std::chrono::milliseconds(20));
    if (r.ok() || closed()) return r;
    if (Clock::now() >= deadline) {
      return Error(ErrorCode::Unavailable, "xpra", "wait for server hello",
                   "no hello from the server within " + std::to_string(timeout.count()) + " ms");
    }
    engine_->run_ui_once();
  }
}

int ClientPipeline::run_ui_once() { return engine_->run_ui_once(); }

void ClientPipeline::wait_for_work(std::chrono::microseconds timeout) {
  engine_->wait_for_work(timeout);
}

bool ClientPipeline::run_until(const std::function<bool()>& pred,
                               std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    engine_->run_ui_once();
    if (pred()) return true;
    const auto now = Clock::now();
    if (now >= deadline) return pred();
    engine_->wait_for_work(std::min<std::chrono::microseconds>(
        std::chrono::duration_cast<std::chrono::microseconds>(deadline - now),
        std::chrono::milliseconds(20)));
  }
}

void ClientPipeline::run_for(std::chrono::milliseconds duration) {
  run_until([this] { return closed() && engine_->idle(); }, duration);
}

bool ClientPipeline::stop(std::string reason, std::chrono::milliseconds drain,
                          std::chrono::milliseconds settle) {
  if (stopped_) return idle_at_stop_;
  stopped_ = true;
  if (!engine_) return false;  // start() failed before the engine existed
  if (!session_) {             // ... or before the session did
    engine_->shutdown();
    return false;
  }
  // 1. Paint and ack what arrived while the server still listens.
  if (!closed()) engine_->wait_idle(drain);
  // 2. Say goodbye (bounded by the session's disconnect_timeout; joins the reader) on a helper
  // thread, painting meanwhile: draws that arrive before the server closes are acked to it.
  saying_goodbye_.store(true);
  std::atomic<bool> said_goodbye{false};
  std::thread goodbye([&] {
    (void)session_->disconnect(std::move(reason));
    said_goodbye.store(true);
  });
  while (!said_goodbye.load()) {
    engine_->run_ui_once();
    engine_->wait_for_work(std::chrono::milliseconds(20));
  }
  goodbye.join();
  // 3. Paint what is left (no server to ack to: counted after close), last look, shut down.
  idle_at_stop_ = engine_->wait_idle(settle);
  for (ClientObserver* o : options_.observers) o->before_engine_shutdown(idle_at_stop_);
  engine_->shutdown();  // acks 0 whatever is left
  return idle_at_stop_;
}

bool ClientPipeline::closed() const {
  MutexLock lock(mu_);
  return end_.has_value();
}

std::optional<xpra::SessionEnd> ClientPipeline::end() const {
  MutexLock lock(mu_);
  return end_;
}

ClientPipelineStats ClientPipeline::stats() const {
  ClientPipelineStats s;
  {
    MutexLock lock(mu_);
    s = stats_;
    int64_t n = 0;
    for (const auto& [seq, count] : outstanding_) n += count;
    s.outstanding = n;
  }
  if (session_) {
    s.session_draws = session_->draws_received();
    s.session_draws_rejected = session_->draws_rejected();
    s.session_acks_sent = session_->acks_sent();
    s.windows_refused = session_->windows_refused();
    s.pings_answered = session_->pings_answered();
  }
  if (engine_) s.engine = engine_->stats();
  return s;
}

std::vector<ClientWindow> ClientPipeline::windows() const {
  MutexLock lock(mu_);
  std::vector<ClientWindow> v;
  v.reserve(windows_.size());
  for (const auto& [wid, w] : windows_) v.push_back(w);
  return v;
}

std::optional<ClientWindow> ClientPipeline::window(int64_t wid) const {
  MutexLock lock(mu_);
  auto it = windows_.find(wid);
  if (it == windows_.end()) return std::nullopt;
  return it->second;
}

void ClientPipeline::on_server_hello(const xpra::ServerInfo& i) {
  for (ClientObserver* o : options_.observers) o->on_server_hello(i);
}

void ClientPipeline::on_server_encodings(const std::vector<std::string>& encodings) {
  for (ClientObserver* o : options_.observers) o->on_server_encodings(encodings);
}

void ClientPipeline::on_window_new(const xpra::WindowInfo& w) {
  {
    MutexLock lock(mu_);
    ClientWindow& row = windows_[w.wid];
    if (row.lost) --lost_windows_;  // the server reused a wid
    row = ClientWindow{w.wid, w.x, w.y, w.w, w.h, w.override_redirect, false, w.title};
  }
  engine_->window_new(w.wid, w.w, w.h);
  for (ClientObserver* o : options_.observers) o->on_window_new(w);
}

void ClientPipeline::on_window_lost(int64_t wid) {
  {
    MutexLock lock(mu_);
    if (auto it = windows_.find(wid); it != windows_.end() && !it->second.lost) {
      it->second.lost = true;
      // A server that creates and destroys windows for ever must not grow the table for ever:
      // past kMaxLostWindows, the lost window with the lowest wid (xpra counts up) goes.
      if (++lost_windows_ > kMaxLostWindows) {
        for (auto jt = windows_.begin(); jt != windows_.end(); ++jt) {
          if (jt->second.lost) {
            windows_.erase(jt);
            --lost_windows_;
            break;
          }
        }
      }
    }
  }
  engine_->window_lost(wid);
  for (ClientObserver* o : options_.observers) o->on_window_lost(wid);
}

void ClientPipeline::on_metadata(const xpra::WindowMetadata& m) {
  if (m.title) {
    MutexLock lock(mu_);
    if (auto it = windows_.find(m.wid); it != windows_.end()) it->second.title = *m.title;
  }
  for (ClientObserver* o : options_.observers) o->on_metadata(m);
}

void ClientPipeline::on_move_resize(const xpra::WindowGeometry& g) {
  bool resized = false;
  {
    MutexLock lock(mu_);
    auto it = windows_.find(g.wid);
    if (it == windows_.end()) return;
    ClientWindow& w = it->second;
    resized = w.w != g.w || w.h != g.h;
    w.x = g.x, w.y = g.y, w.w = g.w, w.h = g.h;
  }
  // A move alone leaves the framebuffer (and, on the GPU route, its registered texture) alone.
  if (resized) engine_->window_resize(g.wid, g.w, g.h);
  for (ClientObserver* o : options_.observers) o->on_move_resize(g, resized);
}

void ClientPipeline::on_raise(int64_t wid) {
  for (ClientObserver* o : options_.observers) o->on_raise(wid);
}

void ClientPipeline::on_cursor(const xpra::Cursor& cursor) {
  for (ClientObserver* o : options_.observers) o->on_cursor(cursor);
}

void ClientPipeline::on_draw(DrawPacket&& draw) {
  {
    MutexLock lock(mu_);
    stats_.draws_submitted++;
    outstanding_[draw.sequence]++;
  }
  for (ClientObserver* o : options_.observers) o->on_draw(draw);
  engine_->submit(std::move(draw));
}

void ClientPipeline::on_closed(const xpra::SessionEnd& e) {
  {
    MutexLock lock(mu_);
    end_ = e;
  }
  for (ClientObserver* o : options_.observers) o->on_session_end(e);
}

}  // namespace pixpath::client
