// WindowGlue: attach's windows on either windowed backing (the X11 shared-memory one,
// pixpath/x11/x11_backing.h, or the OpenGL one, pixpath/gl/gl_backing.h), both through
// paint::WindowInput (pixpath/paint/window_input.h), made to behave like the server's: placed,
// titled, moved, raised as the server says, and the user's keys, pointer, focus, moves/resizes
// and close requests sent back the xpra way (pixpath/net/xpra/input.h). This is the one place
// where window events become xpra packets, for both backings. Key events without a keysym (the
// GL backing reports X keycodes + state) are translated with the display's keymap
// (pixpath/x11/x11_keyboard.h), the translation the X11 backing applies to its own.
//
//   server -> window   new-window/override-redirect: position, title, override-redirect (the
//                      backing asks hints() when the engine creates the window);
//                      window-metadata title, window-move-resize position, raise-window,
//                      cursor (the server's pointer cursor, on every window): queued by the
//                      observer callbacks (reader thread), applied by pump()
//   window -> server   keys (key-action), pointer motion (pointer-position), buttons and the
//                      wheel (button-action), focus, a user move/resize (configure-window; a
//                      new size also resizes the framebuffer through the engine), a close
//                      request (close-window; the server closes the application, which then
//                      ends with lost-window)
//
// Threading: the ClientObserver callbacks on the session's reader thread; hints() and pump()
// on the UI thread (the backing's owner). Lifetime: set_pipeline() before the UI loop runs;
// the backing, the keyboard and the pipeline outlive the calls.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pixpath/client/client_observer.h"
#include "pixpath/client/client_pipeline.h"
#include "pixpath/core/result.h"
#include "pixpath/core/thread_annotations.h"
#include "pixpath/net/xpra/input.h"
#include "pixpath/paint/window_input.h"
#include "pixpath/x11/x11_backing.h"
#include "pixpath/x11/x11_keyboard.h"

namespace pixpath::tools {

class WindowGlue final : public client::ClientObserver {
 public:
  WindowGlue() = default;
  // keyboard: translates key events that come without a keysym (may be null when the backing
  // gives keysyms itself).
  void set_backing(paint::WindowInput* backing, x11::Keyboard* keyboard = nullptr) {
    backing_ = backing, keyboard_ = keyboard;
  }
  void set_pipeline(client::ClientPipeline* pipeline) { pipeline_.store(pipeline); }

  // The keymap for the hello, from the backing's display.
  static xpra::Keymap keymap(const x11::KeyboardDescription& keyboard);
  // For the backing's hints option (UI thread).
  std::optional<paint::WindowHints> hints(int64_t wid);
  // UI thread: applies what the server changed, forwards what the user did. Fails when the X
  // connection broke.
  [[nodiscard]] Result<void> pump();

  struct Counts {
    int64_t keys = 0, motions = 0, buttons = 0, focus = 0, configures = 0, closes = 0, cursors = 0;
  };
  Counts counts() const { return counts_; }

  // ClientObserver (reader thread).
  void on_window_new(const xpra::WindowInfo&) override;
  void on_window_lost(int64_t wid) override;
  void on_metadata(const xpra::WindowMetadata&) override;
  void on_move_resize(const xpra::WindowGeometry&, bool resized) override;
  void on_raise(int64_t wid) override;
  void on_cursor(const xpra::Cursor&) override;

 private:
  struct Known {  // what the server said
    int x = 0, y = 0, w = 0, h = 0;
    bool override_redirect = false;
    std::string title;
  };
  struct Change {
    enum Kind { Move, Title, Raise } kind;
    int64_t wid;
    int x = 0, y = 0;
    std::string title;
  };
  void send(const xpra::Value& packet);

  paint::WindowInput* backing_ = nullptr;
  x11::Keyboard* keyboard_ = nullptr;
  std::atomic<client::ClientPipeline*> pipeline_{nullptr};
  Mutex mu_;
  std::map<int64_t, Known> known_ PIXPATH_GUARDED_BY(mu_);
  std::vector<Change> changes_ PIXPATH_GUARDED_BY(mu_);
  // The server's latest cursor, not yet applied (the inner nullopt: the default cursor).
  std::optional<std::optional<paint::CursorImage>> cursor_ PIXPATH_GUARDED_BY(mu_);
  std::set<int> buttons_;  // UI thread: buttons held
  Counts counts_;          // UI thread
};

}  // namespace pixpath::tools
