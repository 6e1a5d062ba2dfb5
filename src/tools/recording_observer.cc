#include "recording_observer.h"

#include <algorithm>

namespace pixpath::tools {

void RecordingObserver::on_window_new(const xpra::WindowInfo& w) {
  paint::RecordedEvent e;
  e.type = paint::RecordType::WindowNew;
  e.wid = w.wid;
  e.x = w.x, e.y = w.y, e.w = w.w, e.h = w.h;
  record(std::move(e), Clock::now());
}

void RecordingObserver::on_window_lost(int64_t wid) {
  paint::RecordedEvent e;
  e.type = paint::RecordType::WindowLost;
  e.wid = wid;
  record(std::move(e), Clock::now());
}

void RecordingObserver::on_move_resize(const xpra::WindowGeometry& g, bool resized) {
  if (!resized) return;
  paint::RecordedEvent e;
  e.type = paint::RecordType::WindowResize;
  e.wid = g.wid;
  e.w = g.w, e.h = g.h;
  record(std::move(e), Clock::now());
}

void RecordingObserver::on_draw(const DrawPacket& d) {
  paint::RecordedEvent e;
  e.type = paint::RecordType::Draw;
  e.wid = d.wid;
  e.draw = d;  // the data is shared, not copied
  record(std::move(e), d.received);
}

void RecordingObserver::record(paint::RecordedEvent e, Clock::time_point when) {
  MutexLock lock(mu_);
  const int64_t t = std::chrono::duration_cast<std::chrono::microseconds>(when - start_).count();
  e.time_us = std::max({t, last_time_us_, int64_t{0}});
  last_time_us_ = e.time_us;
  auto r = writer_.write(e);
  if (!r.ok() && errors_.size() < 5) errors_.push_back(r.error().message());
}

std::vector<std::string> RecordingObserver::close() {
  MutexLock lock(mu_);
  std::vector<std::string> errors = errors_;
  if (auto c = writer_.close(); !c.ok()) errors.push_back(c.error().message());
  return errors;
}

uint64_t RecordingObserver::bytes_written() {
  MutexLock lock(mu_);
  return writer_.bytes_written();
}

}  // namespace pixpath::tools
