// Input: what a client with a keyboard and a pointer tells an xpra server, in the packet forms
// both server generations read (xpra 3.1, and 6.x with its default backwards compatibility):
//
//   hello          "keyboard", "mouse"/"pointer" true and the keymap: flat "xkbmap_*" keys
//                  for 3.1, a nested "keymap" dict for 6.x (layout, variant, options,
//                  query_struct, mod_meanings, keycodes, x11_keycodes), the way xpra's own X11
//                  clients describe their keyboard; no "query" string, so the server keeps its
//                  own keycodes and translates ours by key name and level (the rules names are
//                  not sent either: the server's layout stays).
//   key-action     [wid, keyname, pressed, modifiers, keyval, string, keycode, group]
//   pointer-position [wid, [x, y, wx, wy], modifiers, buttons]  (x, y on the root window; wx, wy
//                  inside the window: 6.x places the pointer from those and the server's window)
//   button-action  [wid, button, pressed, [x, y, wx, wy], modifiers, buttons]  (4/5: the wheel)
//   focus          [wid, modifiers]  (wid 0: no window has the focus)
//   configure-window [wid, x, y, w, h, {}, 0, {}, false]  (the user moved or resized it)
//   close-window   [wid]
//   cursor         server -> client: [encoding, x, y, w, h, xhot, yhot, serial, pixels, name,
//                  default size, max size...] with encoding "raw" (pixels: w*h ARGB32 words,
//                  premultiplied, little-endian: bytes B, G, R, A, as XFixes gives them; the
//                  chunk layer has already decompressed them), or [""]: back to the default
//                  cursor. Both 3.1 and 6.x send this form to a client whose hello says
//                  "cursors" and lists "encodings.cursor" ["raw"] (6.x's newer "cursor-data"
//                  form only goes to clients that send a "cursor" dict, which pixpath does not).
//
// Functions only build Values; Session::send_packet sends them (any thread).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"
#include "pixpath/net/xpra/value.h"

namespace pixpath::xpra {

// The client's keyboard as an X11 client describes it.
struct Keymap {
  std::string rules, model, layout, variant, options;  // the XKB rules names ("evdev", "pc105", "us")
  // keycode -> keysym names per level.
  std::vector<std::pair<int, std::vector<std::string>>> x11_keycodes;
  struct Entry {
    uint32_t keyval = 0;  // the keysym
    std::string name;     // its name ("a", "Return")
    int keycode = 0, group = 0, level = 0;
  };
  std::vector<Entry> keycodes;
  std::map<std::string, std::string> mod_meanings;  // key name -> "shift", "control", "mod1" ...
};

// Sets the input capabilities (keyboard, pointer, keymap) in a hello; `nested` for 6.x.
void set_input_caps(Value& caps, const Keymap& keymap, bool nested);

using Modifiers = std::vector<std::string>;

Value key_action_packet(int64_t wid, std::string_view keyname, bool pressed, const Modifiers& modifiers,
                        uint32_t keyval, std::string_view text, int keycode, int group = 0);
Value pointer_position_packet(int64_t wid, int x, int y, int wx, int wy, const Modifiers& modifiers,
                              const std::vector<int>& buttons);
Value button_action_packet(int64_t wid, int button, bool pressed, int x, int y, int wx, int wy,
                           const Modifiers& modifiers, const std::vector<int>& buttons);
Value focus_packet(int64_t wid, const Modifiers& modifiers);
Value configure_window_packet(int64_t wid, int x, int y, int w, int h);
Value close_window_packet(int64_t wid);

// The server's cursor (the "cursor" packet above).
struct Cursor {
  bool is_default = true;  // [""]: the default cursor; the rest is unset
  int w = 0, h = 0, xhot = 0, yhot = 0;
  int64_t serial = 0;
  std::string name;
  SharedBytes bgra;  // w * h * 4 bytes, premultiplied alpha
};
// Cursors larger than this on either side are refused (X servers show at most 64..256).
inline constexpr int kMaxCursorSide = 1024;
// Parses a "cursor" packet (the whole list, type included). Protocol errors for a packet of
// the wrong shape, an encoding other than "raw", or pixels of the wrong size.
[[nodiscard]] Result<Cursor> parse_cursor_packet(const Value& packet);

}  // namespace pixpath::xpra
