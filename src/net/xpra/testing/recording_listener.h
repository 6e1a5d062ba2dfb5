// RecordingListener: a SessionListener for tests. Records every event under a mutex, acks
// every draw at once (decode_time_us = 1, as if painted) unless told not to, and lets the
// test wait, bounded, for a condition.
//
// Threading: callbacks come from the session's reader thread; the wait_for() and snapshot
// accessors may be called from any thread.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <vector>

#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/session.h"

namespace pixpath::xpra::testing {

class RecordingListener : public SessionListener {
 public:
  struct Events {
    std::vector<ServerInfo> hellos;
    std::vector<WindowInfo> windows;
    std::vector<int64_t> lost;
    std::vector<WindowMetadata> metadata;
    std::vector<WindowGeometry> geometry;
    std::vector<DrawPacket> draws;
    std::vector<SessionEnd> ends;
  };

  // Set before the session starts; the listener acks through it.
  // Draws that arrived before this call are acked now.
  void set_session(Session* s) {
    std::vector<DamageAck> pending;
    {
      MutexLock lock(mu_);
      session_ = s;
      pending.swap(pending_);
    }
    for (const auto& a : pending) send(s, a);
  }
  void set_auto_ack(bool on) {
    MutexLock lock(mu_);
    auto_ack_ = on;
  }

  // Waits until pred(events) is true or `timeout` passes; returns pred's last value.
  bool wait_for(std::chrono::milliseconds timeout, const std::function<bool(const Events&)>& pred) {
    MutexLock lock(mu_);
    return cv_.wait_for(mu_, timeout, [&]() PIXPATH_REQUIRES(mu_) { return pred(events_); });
  }
  Events snapshot() const {
    MutexLock lock(mu_);
    return events_;
  }
  size_t ack_failures() const {
    MutexLock lock(mu_);
    return ack_failures_;
  }

  void on_server_hello(const ServerInfo& info) override { record([&](Events& ev) { ev.hellos.push_back(info); }); }
  void on_window_new(const WindowInfo& w) override { record([&](Events& ev) { ev.windows.push_back(w); }); }
  void on_window_lost(int64_t wid) override { record([&](Events& ev) { ev.lost.push_back(wid); }); }
  void on_metadata(const WindowMetadata& m) override { record([&](Events& ev) { ev.metadata.push_back(m); }); }
  void on_move_resize(const WindowGeometry& g) override { record([&](Events& ev) { ev.geometry.push_back(g); }); }
  void on_closed(const SessionEnd& e) override { record([&](Events& ev) { ev.ends.push_back(e); }); }
  void on_draw(DrawPacket&& d) override {
    Session* s = nullptr;
    bool ack = false;
    {
      MutexLock lock(mu_);
      s = session_;
      ack = auto_ack_;
    }
    DamageAck a{d.sequence, d.wid, d.w, d.h, 1, ""};
    if (ack && s) {
      send(s, a);
    } else if (ack) {
      MutexLock lock(mu_);
      pending_.push_back(a);
    }
    record([&](Events& ev) { ev.draws.push_back(std::move(d)); });
  }

 private:
  void send(Session* s, const DamageAck& a) {
    if (!s->send_ack(a).ok()) {
      MutexLock lock(mu_);
      ++ack_failures_;
    }
  }

  // Runs f(events_) under mu_ and wakes the waiters.
  template <class F>
  void record(F&& f) {
    {
      MutexLock lock(mu_);
      f(events_);
    }
    cv_.notify_all();
  }

  mutable Mutex mu_;
  std::condition_variable_any cv_;
  Events events_ PIXPATH_GUARDED_BY(mu_);
  Session* session_ PIXPATH_GUARDED_BY(mu_) = nullptr;
  bool auto_ack_ PIXPATH_GUARDED_BY(mu_) = true;
  std::vector<DamageAck> pending_ PIXPATH_GUARDED_BY(mu_);  // draws seen before set_session()
  size_t ack_failures_ PIXPATH_GUARDED_BY(mu_) = 0;
};

}  // namespace pixpath::xpra::testing
