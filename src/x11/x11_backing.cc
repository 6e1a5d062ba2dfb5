#include "pixpath/x11/x11_backing.h"

#include <sys/ipc.h>
#include <sys/shm.h>
#include <xcb/shm.h>
#include <xcb/xcb.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>

#include "internal/x11_connection.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/paint/backing_registry.h"

namespace pixpath::x11 {

using internal::x11_error;

struct X11Backing::Impl {
  X11BackingOptions options;
  std::shared_ptr<internal::Connection> conn;
  xcb_connection_t* c = nullptr;
  xcb_screen_t* screen = nullptr;
  xcb_gcontext_t gc = 0;
  bool shm = false;
  size_t max_request_bytes = 256 * 1024;
  internal::Atoms atoms;
  KeyboardDescription keyboard;
  internal::Keymap keymap;
  xcb_cursor_t cursor = 0;  // every window's (0: the default)
  X11Stats stats;
  std::unique_ptr<paint::CpuBacking> cpu;
  std::vector<uint8_t> put_buffer;  // plain PutImage rows

  struct Window {
    xcb_window_t xid = 0;
    int x = 0, y = 0, w = 0, h = 0;  // where the X window is (root coordinates) and its size
  };
  std::map<int64_t, Window> windows;

  // Framebuffer memory -> its segment. The release of a segment may run on another thread
  // (the last holder of a snapshot), hence the lock.
  Mutex segments_mu;
  std::map<const void*, uint32_t> segments PIXPATH_GUARDED_BY(segments_mu);

  Result<Picture> allocate(int w, int h);
  void present(int64_t wid, paint::Rect r);
  void put(const Window& win, const Picture& fb, paint::Rect r);
};

namespace {

constexpr uint32_t kEventMask = XCB_EVENT_MASK_EXPOSURE | XCB_EVENT_MASK_STRUCTURE_NOTIFY |
                                XCB_EVENT_MASK_KEY_PRESS | XCB_EVENT_MASK_KEY_RELEASE |
                                XCB_EVENT_MASK_BUTTON_PRESS | XCB_EVENT_MASK_BUTTON_RELEASE |
                                XCB_EVENT_MASK_POINTER_MOTION | XCB_EVENT_MASK_FOCUS_CHANGE;

}  // namespace

Result<Picture> X11Backing::Impl::allocate(int w, int h) {
  const size_t stride = size_t(w) * 4, bytes = stride * size_t(h);
  if (shm) {
    const int id = shmget(IPC_PRIVATE, bytes, IPC_CREAT | 0600);
    void* addr = id >= 0 ? shmat(id, nullptr, 0) : reinterpret_cast<void*>(-1);
    if (addr != reinterpret_cast<void*>(-1)) {
      const uint32_t seg = xcb_generate_id(c);
      xcb_generic_error_t* e = xcb_request_check(c, xcb_shm_attach_checked(c, seg, uint32_t(id), 0));
      shmctl(id, IPC_RMID, nullptr);  // freed once both sides detach
      if (!e) {
        {
          MutexLock lock(segments_mu);
          segments[addr] = seg;
        }
        std::weak_ptr<internal::Connection> weak = conn;
        ReleaseAction release = [this, weak, addr, seg]() {
          if (auto alive = weak.lock()) {
            {
              MutexLock lock(segments_mu);
              segments.erase(addr);
            }
            xcb_shm_detach(alive->c, seg);
            xcb_flush(alive->c);
          }
          shmdt(addr);
        };
        PIXPATH_TRY(StorageRef storage, PictureStorage::wrap(MemoryLocation::host(), addr, bytes, {},
                                                             std::move(release)));
        return Picture::wrap(paint::CpuBacking::kFormat, w, h, std::move(storage), 0, stride);
      }
      std::free(e);
      shmdt(addr);
    } else if (id >= 0) {
      shmctl(id, IPC_RMID, nullptr);
    }
    // The X server cannot attach our segments (another host, another IPC namespace): from now
    // on host memory and plain PutImage.
    shm = false;
  }
  return Picture::allocate(paint::CpuBacking::kFormat, w, h, {.stride = stride});
}

void X11Backing::Impl::put(const Window& win, const Picture& fb, paint::Rect r) {
  const PlaneRef& plane = fb.plane(0);
  const uint8_t* base = static_cast<const uint8_t*>(plane.storage->data()) + plane.offset;
  if (shm) {
    uint32_t seg = 0;
    {
      MutexLock lock(segments_mu);
      auto it = segments.find(plane.storage->data());
      if (it != segments.end()) seg = it->second;
    }
    if (seg && plane.stride == size_t(fb.width()) * 4) {
      xcb_shm_put_image(c, win.xid, gc, uint16_t(fb.width()), uint16_t(fb.height()), uint16_t(r.x),
                        uint16_t(r.y), uint16_t(r.w), uint16_t(r.h), int16_t(r.x), int16_t(r.y),
                        screen->root_depth, XCB_IMAGE_FORMAT_Z_PIXMAP, 0, seg,
                        uint32_t(plane.offset));
      stats.shm_puts++;
      return;
    }
  }
  const size_t row = size_t(r.w) * 4;
  const int rows_per_put = std::max<int>(1, int((max_request_bytes - 64) / row));
  for (int y0 = 0; y0 < r.h; y0 += rows_per_put) {
    const int n = std::min(rows_per_put, r.h - y0);
    put_buffer.resize(row * size_t(n));
    for (int i = 0; i < n; ++i) {
      std::memcpy(put_buffer.data() + row * size_t(i),
                  base + plane.stride * size_t(r.y + y0 + i) + size_t(r.x) * 4, row);
    }
    xcb_put_image(c, XCB_IMAGE_FORMAT_Z_PIXMAP, win.xid, gc, uint16_t(r.w), uint16_t(n),
                  int16_t(r.x), int16_t(r.y + y0), 0, screen->root_depth, uint32_t(put_buffer.size()),
                  put_buffer.data());
    stats.plain_puts++;
  }
}

void X11Backing::Impl::present(int64_t wid, paint::Rect r) {
  auto it = windows.find(wid);
  const Picture* fb = cpu->framebuffer(wid);
  if (it == windows.end() || !fb || fb->empty()) return;
  put(it->second, *fb, r);
  xcb_flush(c);
}

// ---- X11Backing ---------------------------------------------------------------------------

X11Backing::X11Backing(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

X11Backing::~X11Backing() {
  // Framebuffers first (their segments detach while the connection is alive), then windows.
  for (auto& [wid, win] : impl_->windows) (void)impl_->cpu->destroy_window(wid);
  impl_->cpu.reset();
  for (auto& [wid, win] : impl_->windows) xcb_destroy_window(impl_->c, win.xid);
  if (impl_->cursor) xcb_free_cursor(impl_->c, impl_->cursor);
  xcb_flush(impl_->c);
}

Result<std::unique_ptr<X11Backing>> X11Backing::create(X11BackingOptions options) {
  auto impl = std::make_unique<Impl>();
  impl->options = std::move(options);
  PIXPATH_TRY(impl->conn, internal::Connection::open(impl->options.display));
  impl->c = impl->conn->c;
  impl->screen = impl->conn->screen;
  PIXPATH_CHECK(internal::check_bgrx_visual(impl->c, impl->screen));
  impl->max_request_bytes = size_t(xcb_get_maximum_request_length(impl->c)) * 4;
  impl->atoms = internal::intern_atoms(impl->c);
  if (impl->options.shared_memory) impl->shm = internal::shm_available(impl->c);
  impl->gc = xcb_generate_id(impl->c);
  const uint32_t gc_values[] = {0};
  xcb_create_gc(impl->c, impl->gc, impl->screen->root, XCB_GC_GRAPHICS_EXPOSURES, gc_values);
  PIXPATH_TRY(impl->keymap, internal::read_keymap(impl->c));
  impl->keyboard = internal::describe_keyboard(impl->c, impl->screen, impl->atoms, impl->keymap);
  Impl* raw = impl.get();
  paint::CpuBackingOptions co;
  co.allocate = [raw](int w, int h) { return raw->allocate(w, h); };
  co.changed = [raw](int64_t wid, paint::Rect r) { raw->present(wid, r); };
  impl->cpu = std::make_unique<paint::CpuBacking>(std::move(co));
  return std::unique_ptr<X11Backing>(new X11Backing(std::move(impl)));
}

bool X11Backing::shared_memory() const { return impl_->shm; }
int X11Backing::fd() const { return xcb_get_file_descriptor(impl_->c); }
const KeyboardDescription& X11Backing::keyboard() const { return impl_->keyboard; }
X11Stats X11Backing::stats() const { return impl_->stats; }

std::optional<uint32_t> X11Backing::x_window(int64_t wid) const {
  auto it = impl_->windows.find(wid);
  if (it == impl_->windows.end()) return std::nullopt;
  return it->second.xid;
}

Result<void> X11Backing::create_window(int64_t wid, int w, int h) {
  Impl& m = *impl_;
  if (m.windows.count(wid))
    return x11_error(ErrorCode::InvalidArgument, "create window", "window " + std::to_string(wid) + " exists");
  if (w <= 0 || h <= 0 || w > 32767 || h > 32767)
    return x11_error(ErrorCode::InvalidArgument, "create window",
                     "size " + std::to_string(w) + "x" + std::to_string(h) + " outside 1..32767");
  WindowHints hints;
  if (m.options.hints) {
    if (auto given = m.options.hints(wid)) hints = *given;
  }
  if (hints.title.empty()) hints.title = "pixpath";
  Impl::Window win;
  win.xid = xcb_generate_id(m.c);
  win.x = hints.x, win.y = hints.y, win.w = w, win.h = h;
  // No background (the framebuffer covers every pixel: no flash of black on expose).
  const uint32_t values[] = {XCB_BACK_PIXMAP_NONE, hints.override_redirect ? 1u : 0u, kEventMask};
  xcb_create_window(m.c, m.screen->root_depth, win.xid, m.screen->root, int16_t(win.x), int16_t(win.y),
                    uint16_t(w), uint16_t(h), 0, XCB_WINDOW_CLASS_INPUT_OUTPUT, m.screen->root_visual,
                    XCB_CW_BACK_PIXMAP | XCB_CW_OVERRIDE_REDIRECT | XCB_CW_EVENT_MASK, values);
  internal::set_window_properties(m.c, m.atoms, win.xid, hints.title, win.x, win.y, w, h);
  if (m.cursor) xcb_change_window_attributes(m.c, win.xid, XCB_CW_CURSOR, &m.cursor);
  m.windows[wid] = win;
  if (auto made = m.cpu->create_window(wid, w, h); !made.ok()) {
    xcb_destroy_window(m.c, win.xid);
    m.windows.erase(wid);
    return made.error();
  }
  xcb_map_window(m.c, win.xid);
  xcb_flush(m.c);
  return ok();
}

Result<void> X11Backing::resize_window(int64_t wid, int w, int h) {
  Impl& m = *impl_;
  auto it = m.windows.find(wid);
  if (it == m.windows.end())
    return x11_error(ErrorCode::InvalidArgument, "resize window", "no window " + std::to_string(wid));
  if (w <= 0 || h <= 0 || w > 32767 || h > 32767)
    return x11_error(ErrorCode::InvalidArgument, "resize window",
                     "size " + std::to_string(w) + "x" + std::to_string(h) + " outside 1..32767");
  if (it->second.w != w || it->second.h != h) {
    const uint32_t values[] = {uint32_t(w), uint32_t(h)};
    xcb_configure_window(m.c, it->second.xid, XCB_CONFIG_WINDOW_WIDTH | XCB_CONFIG_WINDOW_HEIGHT, values);
    it->second.w = w, it->second.h = h;
  }
  return m.cpu->resize_window(wid, w, h);  // shows the kept content (changed)
}

Result<void> X11Backing::destroy_window(int64_t wid) {
  Impl& m = *impl_;
  PIXPATH_CHECK(m.cpu->destroy_window(wid));
  auto it = m.windows.find(wid);
  if (it != m.windows.end()) {
    xcb_destroy_window(m.c, it->second.xid);
    xcb_flush(m.c);
    m.windows.erase(it);
  }
  return ok();
}

std::optional<paint::Size> X11Backing::window_size(int64_t wid) const { return impl_->cpu->window_size(wid); }
std::vector<int64_t> X11Backing::windows() const { return impl_->cpu->windows(); }
Result<paint::DirectTarget> X11Backing::begin_direct(int64_t wid, paint::Rect r) {
  return impl_->cpu->begin_direct(wid, r);
}
Result<void> X11Backing::end_direct(paint::DirectTarget target, bool written) {
  return impl_->cpu->end_direct(std::move(target), written);
}
Result<void> X11Backing::paint(int64_t wid, int x, int y, const Picture& picture, int w, int h) {
  return impl_->cpu->paint(wid, x, y, picture, w, h);
}
Result<void> X11Backing::scroll(int64_t wid, std::span<const ScrollRect> rects) {
  return impl_->cpu->scroll(wid, rects);
}
Result<Picture> X11Backing::snapshot(int64_t wid) { return impl_->cpu->snapshot(wid); }

Result<void> X11Backing::move_window(int64_t wid, int x, int y) {
  Impl& m = *impl_;
  auto it = m.windows.find(wid);
  if (it == m.windows.end())
    return x11_error(ErrorCode::InvalidArgument, "move window", "no window " + std::to_string(wid));
  if (it->second.x == x && it->second.y == y) return ok();
  const uint32_t values[] = {uint32_t(x), uint32_t(y)};
  xcb_configure_window(m.c, it->second.xid, XCB_CONFIG_WINDOW_X | XCB_CONFIG_WINDOW_Y, values);
  it->second.x = x, it->second.y = y;
  xcb_flush(m.c);
  return ok();
}

Result<void> X11Backing::set_title(int64_t wid, const std::string& title) {
  Impl& m = *impl_;
  auto it = m.windows.find(wid);
  if (it == m.windows.end())
    return x11_error(ErrorCode::InvalidArgument, "set title", "no window " + std::to_string(wid));
  internal::set_title(m.c, m.atoms, it->second.xid, title);
  xcb_flush(m.c);
  return ok();
}

Result<void> X11Backing::raise_window(int64_t wid) {
  Impl& m = *impl_;
  auto it = m.windows.find(wid);
  if (it == m.windows.end())
    return x11_error(ErrorCode::InvalidArgument, "raise window", "no window " + std::to_string(wid));
  const uint32_t values[] = {XCB_STACK_MODE_ABOVE};
  xcb_configure_window(m.c, it->second.xid, XCB_CONFIG_WINDOW_STACK_MODE, values);
  xcb_flush(m.c);
  return ok();
}

Result<void> X11Backing::set_cursor(const paint::CursorImage* image) {
  Impl& m = *impl_;
  xcb_cursor_t cursor = 0;
  if (image) {
    PIXPATH_TRY(cursor, internal::make_cursor(m.c, m.screen, *image));
  }
  for (const auto& [wid, win] : m.windows) xcb_change_window_attributes(m.c, win.xid, XCB_CW_CURSOR, &cursor);
  if (m.cursor) xcb_free_cursor(m.c, m.cursor);  // the server keeps it while a window uses it
  m.cursor = cursor;
  xcb_flush(m.c);
  return ok();
}

Result<std::vector<WindowEvent>> X11Backing::poll_events() {
  Impl& m = *impl_;
  std::vector<WindowEvent> out;
  std::map<int64_t, size_t> last_motion;  // wid -> index in out
  auto wid_of = [&](xcb_window_t xid) -> std::optional<int64_t> {
    for (const auto& [wid, w] : m.windows)
      if (w.xid == xid) return wid;
    return std::nullopt;
  };
  while (xcb_generic_event_t* ev = xcb_poll_for_event(m.c)) {
    const uint8_t type = ev->response_type & 0x7f;
    WindowEvent e;
    bool emit = false;
    switch (type) {
      case XCB_EXPOSE: {
        auto* x = reinterpret_cast<xcb_expose_event_t*>(ev);
        if (auto wid = wid_of(x->window)) {
          const Picture* fb = m.cpu->framebuffer(*wid);
          if (fb) {
            const int x1 = std::min<int>(x->x + x->width, fb->width());
            const int y1 = std::min<int>(x->y + x->height, fb->height());
            if (x1 > x->x && y1 > x->y) {
              m.put(m.windows[*wid], *fb, {x->x, x->y, x1 - x->x, y1 - x->y});
              m.stats.exposes++;
            }
          }
        }
        break;
      }
      case XCB_KEY_PRESS:
      case XCB_KEY_RELEASE: {
        auto* k = reinterpret_cast<xcb_key_press_event_t*>(ev);
        if (auto wid = wid_of(k->event)) {
          e.kind = EventKind::Key;
          e.wid = *wid;
          e.pressed = type == XCB_KEY_PRESS;
          e.keycode = k->detail;
          e.state = k->state;
          internal::translate_key(m.keymap, e);
          emit = true;
        }
        break;
      }
      case XCB_BUTTON_PRESS:
      case XCB_BUTTON_RELEASE: {
        auto* b = reinterpret_cast<xcb_button_press_event_t*>(ev);
        if (auto wid = wid_of(b->event)) {
          e.kind = EventKind::Button;
          e.wid = *wid;
          e.pressed = type == XCB_BUTTON_PRESS;
          e.button = b->detail;
          e.root_x = b->root_x, e.root_y = b->root_y, e.x = b->event_x, e.y = b->event_y;
          e.modifiers = internal::modifier_names(b->state);
          emit = true;
        }
        break;
      }
      case XCB_MOTION_NOTIFY: {
        auto* mo = reinterpret_cast<xcb_motion_notify_event_t*>(ev);
        if (auto wid = wid_of(mo->event)) {
          e.kind = EventKind::Motion;
          e.wid = *wid;
          e.root_x = mo->root_x, e.root_y = mo->root_y, e.x = mo->event_x, e.y = mo->event_y;
          e.modifiers = internal::modifier_names(mo->state);
          if (auto it = last_motion.find(*wid); it != last_motion.end()) {
            out[it->second] = std::move(e);  // coalesced: the latest position wins
          } else {
            last_motion[*wid] = out.size();
            emit = true;
          }
        }
        break;
      }
      case XCB_FOCUS_IN:
      case XCB_FOCUS_OUT: {
        auto* f = reinterpret_cast<xcb_focus_in_event_t*>(ev);
        if (f->detail == XCB_NOTIFY_DETAIL_INFERIOR || f->detail == XCB_NOTIFY_DETAIL_POINTER) break;
        if (auto wid = wid_of(f->event)) {
          e.kind = EventKind::Focus;
          e.wid = *wid;
          e.pressed = type == XCB_FOCUS_IN;
          emit = true;
        }
        break;
      }
      case XCB_CONFIGURE_NOTIFY: {
        auto* cn = reinterpret_cast<xcb_configure_notify_event_t*>(ev);
        auto wid = wid_of(cn->window);
        if (!wid) break;
        Impl::Window& win = m.windows[*wid];
        int rx = cn->x, ry = cn->y;
        if (!(ev->response_type & 0x80)) {  // real (not synthetic): relative to a parent
          auto pos = internal::root_position(m.c, m.screen->root, win.xid);
          if (pos) rx = pos->first, ry = pos->second;
        }
        if (rx == win.x && ry == win.y && cn->width == win.w && cn->height == win.h) break;
        win.x = rx, win.y = ry, win.w = cn->width, win.h = cn->height;
        e.kind = EventKind::Configure;
        e.wid = *wid;
        e.root_x = rx, e.root_y = ry, e.w = cn->width, e.h = cn->height;
        emit = true;
        break;
      }
      case XCB_CLIENT_MESSAGE: {
        auto* cm = reinterpret_cast<xcb_client_message_event_t*>(ev);
        if (cm->type == m.atoms.wm_protocols && cm->format == 32 &&
            cm->data.data32[0] == m.atoms.wm_delete_window) {
          if (auto wid = wid_of(cm->window)) {
            e.kind = EventKind::Close;
            e.wid = *wid;
            emit = true;
          }
        }
        break;
      }
      case XCB_MAPPING_NOTIFY: {
        if (auto km = internal::read_keymap(m.c); km.ok()) m.keymap = std::move(*km);
        break;
      }
      default:
        break;
    }
    std::free(ev);
    if (emit) out.push_back(std::move(e));
  }
  if (int err = xcb_connection_has_error(m.c))
    return x11_error(ErrorCode::Unavailable, "events",
                     "the X connection broke (xcb error " + std::to_string(err) + ")");
  return out;
}

void register_x11_backing() {
  paint::register_backing("x11", []() -> Result<std::unique_ptr<paint::Backing>> {
    PIXPATH_TRY(auto b, X11Backing::create({}));
    return std::unique_ptr<paint::Backing>(std::move(b));
  });
}

}  // namespace pixpath::x11
