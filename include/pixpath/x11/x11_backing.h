// X11Backing: the paint engine's Backing (pixpath/paint/backing.h) shown in plain X11 windows
// without OpenGL — for displays where GL is software rendering (no GPU), where uploading to
// llvmpipe costs more than the paint itself.
//
// Each window's framebuffer is the CPU backing's BGRX framebuffer (cpu_backing.h, which does
// every paint, scroll and direct target), allocated in a MIT-SHM segment the X server has
// attached: a changed rectangle is shown with one xcb_shm_put_image from that memory, so a
// paint costs no copy beyond the decode itself. Where MIT-SHM is unavailable (a remote display,
// a server without the extension, or shared_memory = false) the framebuffers are host memory
// and changed rectangles go out with plain PutImage (one copy into the request). Needs a
// 24-bit TrueColor root visual with 32 bits per pixel in little-endian order (the BGRX layout);
// create() refuses other displays with ErrorCode::Unavailable.
//
// Windows: one X window per backing window, created unmapped-then-mapped at the position the
// hints function gives (the server's geometry), with its title, override-redirect for menus and
// tooltips (no decorations), WM_DELETE_WINDOW and USPosition/USSize hints so a window manager
// keeps the server's placement. Expose is answered from the framebuffer (no repaint needed).
// poll_events() returns what the user did (keys, pointer, focus, moves/resizes, close
// requests) for the caller to forward; the backing itself never talks to a server.
//
// SHM lifetime: a segment is detached when its framebuffer's last holder lets go (a snapshot may
// hold it longer than the window); a framebuffer outliving the backing is simply unmapped (the
// X server drops the connection's segments itself).
//
// Threading: the owner thread (the one that created it) for everything, as every Backing;
// direct targets' views may be written by one other thread (backing.h). fd() may be polled from
// the owner thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pixpath/paint/backing.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/window_input.h"

namespace pixpath::x11 {

using paint::EventKind;
using paint::WindowEvent;
using paint::WindowHints;

// The client display's keyboard, as xpra's X11 clients describe it in their hello.
struct KeyboardDescription {
  std::string rules, model, layout, variant, options;  // _XKB_RULES_NAMES (may be empty)
  struct Keycode {
    int keycode = 0;
    std::vector<std::string> keysyms;  // names per level ("a", "A", ...); "" for none
  };
  std::vector<Keycode> keycodes;  // every keycode with at least one keysym
  struct Entry {
    uint32_t keysym = 0;
    std::string name;
    int keycode = 0, group = 0, level = 0;
  };
  std::vector<Entry> entries;  // (keysym, name, keycode, group, level) for every keysym
  std::map<std::string, std::string> mod_meanings;  // keysym name -> "shift", "control", "mod1" ...
};

struct X11BackingOptions {
  std::string display;        // empty: $DISPLAY
  bool shared_memory = true;  // false: plain PutImage even where MIT-SHM works
  // Asked in create_window() (owner thread) for the new window's placement; empty or nullopt:
  // (0, 0), a normal window titled "pixpath".
  std::function<std::optional<WindowHints>(int64_t wid)> hints;
};

struct X11Stats {
  int64_t shm_puts = 0;    // rectangles shown from shared memory
  int64_t plain_puts = 0;  // PutImage requests (no shared memory)
  int64_t exposes = 0;     // rectangles shown again for Expose
};

class X11Backing final : public paint::Backing, public paint::WindowInput {
 public:
  [[nodiscard]] static Result<std::unique_ptr<X11Backing>> create(X11BackingOptions options = {});
  ~X11Backing() override;

  std::string_view name() const override { return "x11"; }
  PixelFormat format() const override { return paint::CpuBacking::kFormat; }

  Result<void> create_window(int64_t wid, int w, int h) override;
  Result<void> resize_window(int64_t wid, int w, int h) override;
  Result<void> destroy_window(int64_t wid) override;
  std::optional<paint::Size> window_size(int64_t wid) const override;
  std::vector<int64_t> windows() const override;
  Result<paint::DirectTarget> begin_direct(int64_t wid, paint::Rect r) override;
  Result<void> end_direct(paint::DirectTarget target, bool written) override;
  Result<void> paint(int64_t wid, int x, int y, const Picture& picture, int w = 0,
                     int h = 0) override;
  Result<void> scroll(int64_t wid, std::span<const ScrollRect> rects) override;
  Result<Picture> snapshot(int64_t wid) override;

  // WindowInput (owner thread). poll_events() also answers Expose (no repaint needed).
  [[nodiscard]] Result<std::vector<WindowEvent>> poll_events() override;
  [[nodiscard]] Result<void> move_window(int64_t wid, int x, int y) override;
  [[nodiscard]] Result<void> set_title(int64_t wid, const std::string& title) override;
  [[nodiscard]] Result<void> raise_window(int64_t wid) override;
  [[nodiscard]] Result<void> set_cursor(const paint::CursorImage* cursor) override;
  bool has_native_window(int64_t wid) const override { return x_window(wid).has_value(); }
  int event_fd() const override { return fd(); }

  // X11 specifics (owner thread).
  bool shared_memory() const;          // framebuffers are MIT-SHM segments
  int fd() const;                      // the X connection, readable when events wait
  std::optional<uint32_t> x_window(int64_t wid) const;  // the X window id
  const KeyboardDescription& keyboard() const;
  X11Stats stats() const;

  struct Impl;

 private:
  explicit X11Backing(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Registers "x11" in the paint backing registry (needs DISPLAY). Call once at start-up.
void register_x11_backing();

}  // namespace pixpath::x11
