#include "window_glue.h"

#include <fmt/format.h>

#include "pixpath/core/log.h"

namespace pixpath::tools {

xpra::Keymap WindowGlue::keymap(const x11::KeyboardDescription& kb) {
  xpra::Keymap k;
  k.rules = kb.rules, k.model = kb.model, k.layout = kb.layout, k.variant = kb.variant,
  k.options = kb.options;
  for (const auto& kc : kb.keycodes) k.x11_keycodes.emplace_back(kc.keycode, kc.keysyms);
  for (const auto& e : kb.entries) k.keycodes.push_back({e.keysym, e.name, e.keycode, e.group, e.level});
  k.mod_meanings = kb.mod_meanings;
  return k;
}

std::optional<paint::WindowHints> WindowGlue::hints(int64_t wid) {
  // The pipeline's window table: it has the window before the engine is told to create it
  // (this observer hears of it only after).
  client::ClientPipeline* p = pipeline_.load();
  const auto w = p ? p->window(wid) : std::nullopt;
  if (!w) return std::nullopt;
  return paint::WindowHints{w->x, w->y, w->override_redirect,
                          w->title.empty() ? "xpra window " + std::to_string(wid) : w->title};
}

void WindowGlue::on_window_new(const xpra::WindowInfo& w) {
  MutexLock lock(mu_);
  known_[w.wid] = Known{w.x, w.y, w.w, w.h, w.override_redirect, w.title};
}

void WindowGlue::on_window_lost(int64_t wid) {
  MutexLock lock(mu_);
  known_.erase(wid);
}

void WindowGlue::on_metadata(const xpra::WindowMetadata& m) {
  if (!m.title) return;
  MutexLock lock(mu_);
  if (auto it = known_.find(m.wid); it != known_.end()) it->second.title = *m.title;
  changes_.push_back({Change::Title, m.wid, 0, 0, *m.title});
}

void WindowGlue::on_move_resize(const xpra::WindowGeometry& g, bool /*resized*/) {
  MutexLock lock(mu_);
  if (auto it = known_.find(g.wid); it != known_.end()) {
    it->second.x = g.x, it->second.y = g.y, it->second.w = g.w, it->second.h = g.h;
  }
  changes_.push_back({Change::Move, g.wid, g.x, g.y, {}});  // the engine does the size
}

void WindowGlue::on_raise(int64_t wid) {
  MutexLock lock(mu_);
  changes_.push_back({Change::Raise, wid, 0, 0, {}});
}

void WindowGlue::on_cursor(const xpra::Cursor& c) {
  std::optional<paint::CursorImage> image;
  if (!c.is_default) {
    image.emplace();
    image->w = c.w, image->h = c.h, image->xhot = c.xhot, image->yhot = c.yhot;
    image->bgra.assign(c.bgra.data(), c.bgra.data() + c.bgra.size());
  }
  MutexLock lock(mu_);
  cursor_ = std::move(image);  // only the latest matters
}

void WindowGlue::send(const xpra::Value& packet) {
  client::ClientPipeline* p = pipeline_.load();
  if (!p) return;
  if (auto sent = p->session().send_packet(packet); !sent.ok())  // the session then ends, saying why
    PIXPATH_LOG(LogLevel::Debug, "input not sent: {}", sent.error().message());
}

Result<void> WindowGlue::pump() {
  if (!backing_) return ok();
  std::vector<Change> changes;
  std::optional<std::optional<paint::CursorImage>> cursor;
  {
    MutexLock lock(mu_);
    changes.swap(changes_);
    cursor.swap(cursor_);
  }
  if (cursor) {
    const paint::CursorImage* image = *cursor ? &**cursor : nullptr;
    if (auto set = backing_->set_cursor(image); set.ok()) {
      counts_.cursors++;
      PIXPATH_LOG(LogLevel::Debug, "cursor: {}", image ? fmt::format("{}x{} hot spot {},{}", image->w, image->h,
                                                                     image->xhot, image->yhot)
                                                      : std::string("the default"));
    } else {
      PIXPATH_LOG(LogLevel::Warning, "the server's cursor was not shown: {}", set.error().message());
    }
  }
  for (const Change& c : changes) {
    if (!backing_->has_native_window(c.wid)) continue;  // not created yet: hints() has the latest
    switch (c.kind) {
      case Change::Move: (void)backing_->move_window(c.wid, c.x, c.y); break;
      case Change::Title: (void)backing_->set_title(c.wid, c.title); break;
      case Change::Raise: (void)backing_->raise_window(c.wid); break;
    }
  }
  PIXPATH_TRY(std::vector<paint::WindowEvent> events, backing_->poll_events());
  for (paint::WindowEvent& e : events) {
    switch (e.kind) {
      case paint::EventKind::Key:
        if (e.keysym == 0 && keyboard_) keyboard_->translate(e);
        send(xpra::key_action_packet(e.wid, e.keyname, e.pressed, e.modifiers, e.keysym, e.text,
                                     int(e.keycode)));
        counts_.keys++;
        break;
      case paint::EventKind::Motion:
        send(xpra::pointer_position_packet(e.wid, e.root_x, e.root_y, e.x, e.y, e.modifiers,
                                           std::vector<int>(buttons_.begin(), buttons_.end())));
        counts_.motions++;
        break;
      case paint::EventKind::Button:
        if (e.pressed) buttons_.insert(e.button);
        else buttons_.erase(e.button);
        send(xpra::button_action_packet(e.wid, e.button, e.pressed, e.root_x, e.root_y, e.x, e.y,
                                        e.modifiers, std::vector<int>(buttons_.begin(), buttons_.end())));
        counts_.buttons++;
        break;
      case paint::EventKind::Focus:
        send(xpra::focus_packet(e.pressed ? e.wid : 0, {}));
        counts_.focus++;
        break;
      case paint::EventKind::Configure: {
        bool resize = false, override_redirect = true;
        {
          MutexLock lock(mu_);
          auto it = known_.find(e.wid);
          if (it == known_.end()) break;
          Known& k = it->second;
          override_redirect = k.override_redirect;
          if (k.x == e.root_x && k.y == e.root_y && k.w == e.w && k.h == e.h) break;
          resize = k.w != e.w || k.h != e.h;
          k.x = e.root_x, k.y = e.root_y, k.w = e.w, k.h = e.h;
        }
        if (override_redirect) break;  // menus and tooltips are placed by the server only
        PIXPATH_LOG(LogLevel::Debug, "window {}: the user moved/resized it to {}x{}+{}+{}", e.wid, e.w, e.h,
                    e.root_x, e.root_y);
        send(xpra::configure_window_packet(e.wid, e.root_x, e.root_y, e.w, e.h));
        if (resize) {
          if (client::ClientPipeline* p = pipeline_.load()) p->engine().window_resize(e.wid, e.w, e.h);
        }
        counts_.configures++;
        break;
      }
      case paint::EventKind::Close:
        PIXPATH_LOG(LogLevel::Debug, "window {}: the user closed it, asking the server to close it", e.wid);
        send(xpra::close_window_packet(e.wid));
        counts_.closes++;
        break;
    }
  }
  return ok();
}

}  // namespace pixpath::tools
