#include "pixpath/client/client_pipeline.h"

namespace pixpath::client {

using Clock = std::chrono::steady_clock;

ClientPipeline::ClientPipeline(ClientPipelineOptions options) : options_(std::move(options)) {}

Result<std::unique_ptr<ClientPipeline>> ClientPipeline::start(paint::Backing& backing,
                                                              ClientPipelineOptions options) {
  std::unique_ptr<ClientPipeline> p(new ClientPipeline(std::move(options)));
  ClientPipelineOptions& o = p->options_;
  apply_limits(o.limits, o.session);
  apply_limits(o.limits, o.engine);
  // One hook for both when only the session's is set; with neither, both go to the pixpath
  // log (core/log.h) at their lines' levels.
  if (!o.engine.log && o.session.log) o.engine.log = o.session.log;
  p->user_ack_ = std::move(o.engine.on_ack);
  ClientPipeline* raw = p.get();
  o.engine.on_ack = [raw](const DamageAck& a, const paint::PaintReport& r) {
    raw->on_engine_ack(a, r);
  };
  PIXPATH_TRY(p->engine_, paint::PaintEngine::create(backing, o.engine));
  auto session = xpra::Session::start(o.session, *p);
  if (!session.ok()) {
    p->engine_->shutdown();
    return session.error();
  }
  p->session_ = std::move(session).value();
  std::vector<DamageAck> early;
  {
    MutexLock lock(p->mu_);
    p->ack_target_ = p->session_.get();
    early.swap(p->early_acks_);
  }
  for (const auto& a : early) (void)p->session_->send_ack(a);
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
      early_acks_.push_back(ack);
      return;
    }
  }
  const bool sent = s->send_ack(ack).ok();
  {
    MutexLock lock(mu_);
    (sent ? stats_.acks_sent : stats_.acks_send_failed)++;
  }
  if (user_ack_) user_ack_(ack, report);
}

Result<void> ClientPipeline::wait_until_ready(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    auto r = session_->wait_until_ready(std::chrono::milliseconds(20));
    if (r.ok()) return r;
    if (closed() || Clock::now() >= deadline) {
      return session_->wait_until_ready(std::chrono::milliseconds(0));
    }
    engine_->run_ui_once();
  }
}

int ClientPipeline::run_ui_once() { return engine_->run_ui_once(); }

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

void ClientPipeline::stop(std::string reason, std::chrono::milliseconds drain) {
  if (stopped_) return;
  stopped_ = true;
  if (engine_ && session_ && !closed()) engine_->wait_idle(drain);
  if (session_) (void)session_->disconnect(std::move(reason));  // joins the reader
  if (engine_) engine_->shutdown();  // acks 0 whatever is left
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
  }
  if (engine_) s.engine = engine_->stats();
  return s;
}

void ClientPipeline::on_server_hello(const xpra::ServerInfo& i) {
  if (options_.observer) options_.observer->on_server_hello(i);
}

void ClientPipeline::on_window_new(const xpra::WindowInfo& w) {
  engine_->window_new(w.wid, w.w, w.h);
  if (options_.observer) options_.observer->on_window_new(w);
}

void ClientPipeline::on_window_lost(int64_t wid) {
  engine_->window_lost(wid);
  if (options_.observer) options_.observer->on_window_lost(wid);
}

void ClientPipeline::on_metadata(const xpra::WindowMetadata& m) {
  if (options_.observer) options_.observer->on_metadata(m);
}

void ClientPipeline::on_move_resize(const xpra::WindowGeometry& g) {
  engine_->window_resize(g.wid, g.w, g.h);
  if (options_.observer) options_.observer->on_move_resize(g);
}

void ClientPipeline::on_raise(int64_t wid) {
  if (options_.observer) options_.observer->on_raise(wid);
}

void ClientPipeline::on_draw(DrawPacket&& draw) {
  {
    MutexLock lock(mu_);
    stats_.draws_submitted++;
    outstanding_[draw.sequence]++;
  }
  engine_->submit(std::move(draw));
}

void ClientPipeline::on_closed(const xpra::SessionEnd& e) {
  {
    MutexLock lock(mu_);
    end_ = e;
  }
  if (options_.observer) options_.observer->on_closed(e);
}

}  // namespace pixpath::client
