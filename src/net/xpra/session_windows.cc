// Window packets: new windows (under the client's limits), geometry changes, and the limits
// bookkeeping. Reader thread only.
#include <fmt/format.h>

#include "pixpath/net/xpra/draw_parser.h"
#include "pixpath/net/xpra/session.h"

namespace pixpath::xpra {

void Session::handle_new_window(const Packet& p, bool override_redirect) {
  FieldReader r(p.type, p.body);
  WindowInfo w;
  w.override_redirect = override_redirect;
  auto parse = [&]() -> Result<void> {
    PIXPATH_TRY(w.wid, r.int_at(1, "wid"));
    PIXPATH_TRY(w.x, r.int_in(2, "x", -(1 << 20), 1 << 20));
    PIXPATH_TRY(w.y, r.int_in(3, "y", -(1 << 20), 1 << 20));
    PIXPATH_TRY(w.w, r.int_in(4, "w", 0, 32767));
    PIXPATH_TRY(w.h, r.int_in(5, "h", 0, 32767));
    if (r.size() > 6) {
      PIXPATH_TRY(const Value* md, r.dict_at(6, "metadata"));
      w.metadata = *md;
      if (const Value* title = md->find("title"); title && title->is_bytes()) {
        w.title = std::string(title->as_view());
      }
    }
    return {};
  };
  if (auto ok = parse(); !ok.ok()) {
    log(LogLevel::Warning, ok.error().message() + " (window ignored)");
    return;
  }
  if (auto refused = refuse_window(w.wid, w.w, w.h)) {
    windows_refused_.fetch_add(1);
    log(LogLevel::Warning, fmt::format("refusing window {} ({}x{}): {}", w.wid, w.w, w.h, *refused));
    if (!windows_.count(w.wid) && refused_windows_.size() < 4096) {
      refused_windows_.insert(w.wid);
    }
    return;
  }
  windows_[w.wid] = WindowArea{w.w, w.h};
  window_pixels_ += int64_t(w.w) * w.h;
  // A 3.1 server only honours map-window for normal windows; for override-redirect windows
  // (menus, tooltips) it logs a warning and ignores it, and xpra's own client sends none.
  if (!override_redirect) {
    auto sent = send_packet(Value::list({options_.names.map_window, w.wid, w.x, w.y, w.w, w.h,
                                         Value(Value::Dict{})}));
    if (!sent.ok()) log(LogLevel::Warning, sent.error().message());
  }
  listener_.on_window_new(w);
}

void Session::handle_geometry(const Packet& p, bool override_redirect) {
  FieldReader r(p.type, p.body);
  WindowGeometry g;
  g.override_redirect = override_redirect;
  auto parse = [&]() -> Result<void> {
    PIXPATH_TRY(g.wid, r.int_at(1, "wid"));
    PIXPATH_TRY(g.x, r.int_in(2, "x", -(1 << 20), 1 << 20));
    PIXPATH_TRY(g.y, r.int_in(3, "y", -(1 << 20), 1 << 20));
    PIXPATH_TRY(g.w, r.int_in(4, "w", 0, 32767));
    PIXPATH_TRY(g.h, r.int_in(5, "h", 0, 32767));
    return {};
  };
  if (auto ok = parse(); !ok.ok()) {
    log(LogLevel::Warning, ok.error().message() + " (packet ignored)");
    return;
  }
  auto it = windows_.find(g.wid);
  if (it == windows_.end()) {
    log(LogLevel::Warning, fmt::format("{} for window {}, which does not exist (ignored)", p.type, g.wid));
    return;
  }
  const int64_t old_area = int64_t(it->second.w) * it->second.h;
  const int64_t new_area = int64_t(g.w) * g.h;
  if (options_.max_window_pixels > 0 &&
      window_pixels_ - old_area + new_area > options_.max_window_pixels) {
    log(LogLevel::Warning, fmt::format("ignoring {} of window {} to {}x{}: windows would cover {} pixels, the "
                    "limit is {}",
                    p.type, g.wid, g.w, g.h, window_pixels_ - old_area + new_area,
                    options_.max_window_pixels));
    return;
  }
  window_pixels_ += new_area - old_area;
  it->second = WindowArea{g.w, g.h};
  listener_.on_move_resize(g);
}

std::optional<std::string> Session::refuse_window(int64_t wid, int w, int h) const {
  if (windows_.count(wid)) return fmt::format("window {} exists already", wid);
  if (options_.max_windows > 0 && int64_t(windows_.size()) >= options_.max_windows) {
    return fmt::format("the limit of {} windows is reached", options_.max_windows);
  }
  const int64_t area = int64_t(w) * h;
  if (options_.max_window_pixels > 0 && window_pixels_ + area > options_.max_window_pixels) {
    return fmt::format("windows would cover {} pixels, the limit is {}", window_pixels_ + area,
                       options_.max_window_pixels);
  }
  return std::nullopt;
}

}  // namespace pixpath::xpra
