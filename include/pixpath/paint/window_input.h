// WindowInput: the user-facing side of a windowed backing — what both window backings (the X11
// shared-memory one, pixpath/x11/x11_backing.h, and the OpenGL one, pixpath/gl/gl_backing.h
// with windowed = true) offer so that one piece of glue (attach's, src/tools/window_glue.h)
// places their windows like the server's and forwards what the user does, the xpra way.
//
// Events are in X11 terms on both backings (both show their windows on an X display): key
// events carry the X keycode and the X modifier state; buttons are X button numbers (4..7 the
// wheel). A backing that cannot tell the keysym of a key (the GL one: GLFW reports keycodes,
// not keysyms) leaves keysym, keyname and text empty; the glue fills them from the display's
// keymap (pixpath/x11/x11_keyboard.h), so that translation lives in one place.
//
// Threading: the backing's owner thread, as every Backing call.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pixpath/core/result.h"

namespace pixpath::paint {

// Where and how to show a new window (asked for when the window is created).
struct WindowHints {
  int x = 0, y = 0;
  bool override_redirect = false;  // menus, tooltips: no decorations, placed by the server only
  std::string title;
};

enum class EventKind { Key, Motion, Button, Focus, Configure, Close };

// One user action on a backing window.
struct WindowEvent {
  EventKind kind = EventKind::Motion;
  int64_t wid = 0;
  // Key and Button: pressed or released. Focus: gained (true) or lost.
  bool pressed = false;
  // Key: the X keycode and the X modifier state (ShiftMask 1, LockMask 2, ControlMask 4,
  // Mod1Mask 8 .. Mod5Mask 128) when it happened; the keysym its level gives (shift/lock), the
  // keysym's name ("a", "Return", "Shift_L" ...) and its text (UTF-8, empty for function keys):
  // 0 and empty where the backing cannot tell (see above).
  uint32_t keycode = 0, keysym = 0;
  uint16_t state = 0;
  std::string keyname, text;
  // Key, Motion, Button: the modifiers held, as xpra names them ("shift", "lock", "control",
  // "mod1" .. "mod5"), from `state` (x_modifier_names).
  std::vector<std::string> modifiers;
  // Motion, Button: the pointer on the root window and inside the window; Configure: the
  // window's new position on the root window and size.
  int root_x = 0, root_y = 0, x = 0, y = 0, w = 0, h = 0;
  int button = 0;  // Button: 1 left, 2 middle, 3 right, 4/5 wheel up/down, 6/7 wheel left/right
};

// A pointer cursor image: w * h ARGB32 pixels, premultiplied alpha, little-endian (bytes B, G,
// R, A per pixel: what XFixes and the X Render extension use), and its hot spot.
struct CursorImage {
  int w = 0, h = 0, xhot = 0, yhot = 0;
  std::vector<uint8_t> bgra;
};

// The X modifier state as xpra names the modifiers.
inline std::vector<std::string> x_modifier_names(uint16_t state) {
  static const char* kNames[8] = {"shift", "lock", "control", "mod1", "mod2", "mod3", "mod4", "mod5"};
  std::vector<std::string> v;
  for (int i = 0; i < 8; ++i)
    if (state & (1u << i)) v.emplace_back(kNames[i]);
  return v;
}

class WindowInput {
 public:
  virtual ~WindowInput() = default;
  // Handles what waits and returns the user's actions, oldest first; pointer motion is
  // coalesced to the latest position per window. Fails when the display went away.
  [[nodiscard]] virtual Result<std::vector<WindowEvent>> poll_events() = 0;
  [[nodiscard]] virtual Result<void> move_window(int64_t wid, int x, int y) = 0;
  [[nodiscard]] virtual Result<void> set_title(int64_t wid, const std::string& title) = 0;
  [[nodiscard]] virtual Result<void> raise_window(int64_t wid) = 0;
  // The pointer cursor of every window, those created later included; nullptr: the display's
  // default cursor again.
  [[nodiscard]] virtual Result<void> set_cursor(const CursorImage* cursor) = 0;
  // Whether the window has an on-screen window yet (changes before that go to the hints).
  virtual bool has_native_window(int64_t wid) const = 0;
  // A file descriptor readable when events wait (the X connection), or -1.
  virtual int event_fd() const = 0;
};

}  // namespace pixpath::paint
