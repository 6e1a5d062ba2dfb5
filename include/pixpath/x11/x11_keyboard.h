// Keyboard: an X display's keyboard as xpra's X11 clients describe it (for the hello) and the
// translation of key events (X keycode + modifier state) into keysym, name and text — the same
// translation the X11 backing applies to its own key events, offered for backings that report
// keycodes only (the OpenGL windows: GLFW gives the X keycode as the scancode on X11).
//
// It has its own X connection, on which it only reads the keymap; the display's MappingNotify
// (someone ran setxkbmap or xmodmap) makes it read the keymap again at the next translate().
// Threading: one thread at a time.
#pragma once

#include <memory>
#include <string>

#include "pixpath/core/result.h"
#include "pixpath/x11/x11_backing.h"

namespace pixpath::x11 {

class Keyboard {
 public:
  // display: empty = $DISPLAY. Unavailable when it cannot be opened.
  [[nodiscard]] static Result<std::unique_ptr<Keyboard>> open(const std::string& display = {});
  ~Keyboard();

  const KeyboardDescription& description() const;
  // Fills a Key event's keysym, keyname, text and modifiers from its keycode and state.
  void translate(WindowEvent& e);

  struct Impl;

 private:
  explicit Keyboard(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pixpath::x11
