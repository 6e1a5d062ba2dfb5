#include "snapshot_observer.h"

#include <filesystem>

#include "pixpath/codecs/image_io.h"

namespace pixpath::tools {
namespace {

Result<void> write_atomically(const std::string& path, const std::vector<uint8_t>& bytes) {
  const std::string tmp = path + ".tmp";
  PIXPATH_CHECK(codecs::write_file(tmp, bytes));
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error(ErrorCode::Io, path, "rename snapshot", ec.message());
  return ok();
}

}  // namespace

std::string sanitise_title(const std::string& title) {
  std::string s;
  for (char c : title) {
    if (s.size() >= 64) break;
    const bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '-' || c == '_';
    s += keep ? c : '_';
  }
  if (s.empty() || s == "." || s == "..") s = "untitled";
  return s;
}

bool SnapshotObserver::snapshot_all() {
  bool all_done = true;
  for (int64_t wid : backing_.windows()) all_done &= snapshot(wid);
  return all_done;
}

std::string SnapshotObserver::file_of(int64_t wid) const {
  auto it = files_.find(wid);
  return it == files_.end() ? std::string() : it->second;
}

bool SnapshotObserver::snapshot(int64_t wid) {
  auto png = paint::snapshot_png(backing_, wid);
  if (!png.ok()) return false;  // e.g. a direct decode in flight: try again later
  std::optional<client::ClientWindow> info;
  if (pipeline_) info = pipeline_->window(wid);
  const std::string path =
      dir_ + "/" + std::to_string(wid) + "-" + sanitise_title(info ? info->title : "") + ".png";
  std::string& previous = files_[wid];
  if (!previous.empty() && previous != path) std::filesystem::remove(previous);
  auto w = write_atomically(path, *png);
  if (!w.ok()) {
    if (errors_.size() < 5) errors_.push_back(w.error().message());
    return true;
  }
  previous = path;
  return true;
}

}  // namespace pixpath::tools
