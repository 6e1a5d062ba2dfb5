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
#include <mutex>
#include <vector>

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
      std::lock_guard lock(mu_);
      session_ = s;
      pending.swap(pending_);
    }
    for (const auto& a : pending) send(s, a);
  }
  void set_auto_ack(bool on) {
    std::lock_guard lock(mu_);
    auto_ack_ = on;
  }

  // Waits until pred(events) is true or `timeout` passes; returns pred's last value.
  bool wait_for(std::chrono::milliseconds timeout, const std::function<bool(const Events&)>& pred) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return pred(events_); });
  }
  Events snapshot() const {
    std::lock_guard lock(mu_);
    return events_;
  }
  size_t ack_failures() const {
    std::lock_guard lock(mu_);
    return ack_failures_;
  }

  void on_server_hello(const ServerInfo& info) override { record([&] { events_.hellos.push_back(info); }); }
  void on_window_new(const WindowInfo& w) override { record([&] { events_.windows.push_back(w); }); }
  void on_window_lost(int64_t wid) override { record([&] { events_.lost.push_back(wid); }); }
  void on_metadata(const WindowMetadata& m) override { record([&] { events_.metadata.push_back(m); }); }
  void on_move_resize(const WindowGeometry& g) override { record([&] { events_.geometry.push_back(g); }); }
  void on_closed(const SessionEnd& e) override { record([&] { events_.ends.push_back(e); }); }
  void on_draw(DrawPacket&& d) override {
    Session* s = nullptr;
    bool ack = false;
    {
      std::lock_guard lock(mu_);
      s = session_;
      ack = auto_ack_;
    }
    DamageAck a{d.sequence, d.wid, d.w, d.h, 1, ""};
    if (ack && s) {
      send(s, a);
    } else if (ack) {
      std::lock_guard lock(mu_);
      pending_.push_back(a);
    }
    record([&] { events_.draws.push_back(std::move(d)); });
  }

 private:
  void send(Session* s, const DamageAck& a) {
    if (!s->send_ack(a).ok()) {
      std::lock_guard lock(mu_);
      ++ack_failures_;
    }
  }

  template <class F>
  void record(F&& f) {
    {
      std::lock_guard lock(mu_);
      f();
    }
    cv_.notify_all();
  }

  mutable std::mutex mu_;
  std::condition_variable cv_;
  Events events_;            // guarded by mu_
  Session* session_ = nullptr;  // guarded by mu_
  bool auto_ack_ = true;     // guarded by mu_
  std::vector<DamageAck> pending_;  // guarded by mu_: draws seen before set_session()
  size_t ack_failures_ = 0;  // guarded by mu_
};

}  // namespace pixpath::xpra::testing
