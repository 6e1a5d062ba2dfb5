// The X connection of the X11 backing and what it reads from the display: the visual check,
// MIT-SHM, atoms, window properties, and the keyboard (keysyms per keycode, modifiers, the XKB
// rules names). Owner thread only (xcb itself is thread-safe; the backing is not).
#pragma once

#include <xcb/xcb.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/x11/x11_backing.h"

namespace pixpath::x11::internal {

inline Error x11_error(ErrorCode code, std::string_view stage, std::string reason) {
  return Error(code, "x11 backing", std::string(stage), std::move(reason));
}

// One xcb connection; disconnects when the last holder lets go.
struct Connection {
  xcb_connection_t* c = nullptr;
  xcb_screen_t* screen = nullptr;
  ~Connection();
  // display: empty = $DISPLAY. Unavailable when it cannot be opened.
  static Result<std::shared_ptr<Connection>> open(const std::string& display);
};

// Unavailable unless the root visual is 24-bit TrueColor, 32 bits per pixel, LSB first, with
// red 0xff0000, green 0xff00, blue 0xff (the BGRX layout of the CPU backing).
Result<void> check_bgrx_visual(xcb_connection_t* c, xcb_screen_t* screen);
// The server has MIT-SHM 1.1 or later (whether it can attach our segments shows at the first
// attach).
bool shm_available(xcb_connection_t* c);

struct Atoms {
  xcb_atom_t wm_protocols = 0, wm_delete_window = 0, net_wm_name = 0, utf8_string = 0,
             xkb_rules_names = 0;
};
Atoms intern_atoms(xcb_connection_t* c);
// Title, class, WM_DELETE_WINDOW, and the position/size hints (USPosition, USSize).
void set_window_properties(xcb_connection_t* c, const Atoms& atoms, xcb_window_t w,
                           const std::string& title, int x, int y, int width, int height);
void set_title(xcb_connection_t* c, const Atoms& atoms, xcb_window_t w, const std::string& title);
// Where a window's top-left corner is on the root window (a round trip).
std::optional<std::pair<int, int>> root_position(xcb_connection_t* c, xcb_window_t root, xcb_window_t w);

// A cursor (RenderCreateCursor) from premultiplied ARGB pixels; the caller frees it.
Result<uint32_t> make_cursor(xcb_connection_t* c, xcb_screen_t* screen, const paint::CursorImage& image);

// The core keyboard mapping.
struct Keymap {
  int min_keycode = 8, max_keycode = 255, per_keycode = 0;
  std::vector<uint32_t> keysyms;  // per_keycode entries per keycode from min_keycode
  uint32_t at(int keycode, int column) const;
  // The keysym a key gives with `state` (shift and caps lock as X's core rules apply them).
  uint32_t keysym(int keycode, uint16_t state) const;
};
Result<Keymap> read_keymap(xcb_connection_t* c);
KeyboardDescription describe_keyboard(xcb_connection_t* c, xcb_screen_t* screen, const Atoms& atoms,
                                      const Keymap& keymap);
std::string keysym_name(uint32_t keysym);  // XKeysymToString, or "0x..." when it has none
std::string keysym_text(uint32_t keysym);  // UTF-8 for keysyms that type a character
std::vector<std::string> modifier_names(uint16_t state);  // "shift", "lock", "control", "mod1".. "mod5"
// A key event's keysym, name, text and modifiers from its keycode and state.
void translate_key(const Keymap& keymap, WindowEvent& e);

}  // namespace pixpath::x11::internal
