// SnapshotObserver: `--snapshot-dir`: each window of a live session as a PNG,
// DIR/<wid>-<sanitised title>.png, written through a temporary name and a rename so readers
// never see half a file. When: on demand (snapshot_all(), the --snapshot-interval timer of
// attach_session.cc), just before a lost window's framebuffer goes (before_window_destroy),
// and once at the end (before_engine_shutdown). A window whose title changed gets the new name
// and the old file is removed.
//
// Threads: everything on the UI thread (the pipeline calls its two callbacks there), except
// set_window_table() before the UI loop starts. Lifetime: the backing and the pipeline given
// to set_window_table() must outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "pixpath/client/client_pipeline.h"
#include "pixpath/paint/backing.h"

namespace pixpath::tools {

// "xterm: ~/src" -> "xterm___src": letters, digits, '.', '-', '_' kept, the rest '_', at most
// 64 characters, "untitled" when empty. Exposed for tests.
std::string sanitise_title(const std::string& title);

class SnapshotObserver final : public client::ClientObserver {
 public:
  // `dir` must exist.
  SnapshotObserver(paint::Backing& backing, std::string dir) : backing_(backing), dir_(std::move(dir)) {}

  // Where titles come from (the pipeline's window table); until set, every file is "untitled".
  void set_window_table(const client::ClientPipeline& pipeline) { pipeline_ = &pipeline; }
  // Snapshots every window; false when one could not be read now (e.g. a direct decode into
  // it is in flight): try again soon. Write failures are kept in errors(), not retried.
  bool snapshot_all();
  // The file last written for a window ("" if none).
  std::string file_of(int64_t wid) const;
  // The first few write failures.
  const std::vector<std::string>& errors() const { return errors_; }

  void before_window_destroy(int64_t wid) override { (void)snapshot(wid); }
  void before_engine_shutdown(bool) override { (void)snapshot_all(); }

 private:
  bool snapshot(int64_t wid);

  paint::Backing& backing_;
  const std::string dir_;
  const client::ClientPipeline* pipeline_ = nullptr;
  std::map<int64_t, std::string> files_;
  std::vector<std::string> errors_;
};

}  // namespace pixpath::tools
