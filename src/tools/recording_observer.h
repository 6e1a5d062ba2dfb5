// RecordingObserver: `pixpath record -o FILE`: every window event and every draw of a live
// session, with its arrival time, into a recording (docs/recording-format.md) that `pixpath
// play` replays. Window events: new, lost, and resize (only when the size changed: a move is
// not recorded). Draws are written as received, before the engine sees them; the record shares
// the draw's data, it does not copy it.
//
// Threads: the callbacks run on the session's reader thread, one at a time; the file is
// written there. bytes_written(), errors() and close() after the pipeline stopped (the
// reader has been joined), on any thread. Arrival times never go backwards in the recording
// (a packet parsed from the same read as the previous one may carry an earlier stamp).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "pixpath/client/client_observer.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/paint/recording.h"

namespace pixpath::tools {

class RecordingObserver final : public client::ClientObserver {
 public:
  using Clock = std::chrono::steady_clock;
  // Times in the recording count from `start`.
  RecordingObserver(paint::RecordingWriter writer, Clock::time_point start)
      : writer_(std::move(writer)), start_(start) {}

  void on_window_new(const xpra::WindowInfo& w) override;
  void on_window_lost(int64_t wid) override;
  void on_move_resize(const xpra::WindowGeometry& g, bool resized) override;
  void on_draw(const DrawPacket& d) override;

  // After the session ended: finishes the file; the first few write errors and the close
  // error, if any.
  std::vector<std::string> close();
  uint64_t bytes_written();

 private:
  void record(paint::RecordedEvent e, Clock::time_point when);

  Mutex mu_;
  paint::RecordingWriter writer_ PIXPATH_GUARDED_BY(mu_);
  const Clock::time_point start_;
  int64_t last_time_us_ PIXPATH_GUARDED_BY(mu_) = 0;
  std::vector<std::string> errors_ PIXPATH_GUARDED_BY(mu_);
};

}  // namespace pixpath::tools
