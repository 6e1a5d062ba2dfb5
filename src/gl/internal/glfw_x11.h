// GLFW for X11 windows. GLFW creates and maps the X windows (GLFW_NO_API: no GL context of
// its own); pixpath renders into them through EGL window surfaces on the X display GLFW opened,
// so every window shares the one EGL context. GLFW's input callbacks become paint::WindowEvents
// (X keycodes and modifier state, X button numbers, root positions), handed to the window's
// sink from glfw_poll_events(). GL thread only (GLFW wants one thread).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "pixpath/core/result.h"
#include "pixpath/paint/window_input.h"

namespace pixpath::gl::internal {

// glfwInit (counted) and the X Display* it opened.
Result<void*> glfw_acquire();
void glfw_release();

// Where a window's events go, and what its callbacks track. Must outlive the window.
struct WindowEventSink {
  int64_t wid = 0;
  std::function<void(paint::WindowEvent)> emit;  // empty: events are dropped
  int x = 0, y = 0, w = 0, h = 0;  // the window on the root window, as last configured
  double cx = 0, cy = 0;           // the pointer inside the window, as last seen
  uint16_t state = 0;              // the X modifier state, as last seen
};

struct NativeWindowOptions {
  int width = 0, height = 0, x = 0, y = 0;
  std::string title;
  bool override_redirect = false;  // menus, tooltips: the window manager leaves it alone
  bool decorated = false;          // a normal, user-resizable window with decorations
  WindowEventSink* sink = nullptr;
};

struct NativeWindow {
  void* glfw = nullptr;       // GLFWwindow*
  unsigned long x11 = 0;      // the X Window
};
Result<NativeWindow> glfw_create_window(const NativeWindowOptions& options);
void glfw_destroy_window(NativeWindow& window);
void glfw_resize_window(const NativeWindow& window, int width, int height);
void glfw_move_window(const NativeWindow& window, int x, int y);
void glfw_set_title(const NativeWindow& window, const std::string& title);
void glfw_raise_window(const NativeWindow& window);
// A cursor (GLFWcursor*) from premultiplied BGRA pixels; nullptr when GLFW could not make one.
void* glfw_create_cursor(const paint::CursorImage& image);
void glfw_destroy_cursor(void* cursor);
void glfw_set_cursor(const NativeWindow& window, void* cursor);  // nullptr: the default cursor
void glfw_poll_events();
int glfw_connection_fd();  // the X connection GLFW reads events from, or -1

// GLFW's modifier bits (GLFW_MOD_*) as the X state they came from (GLFW translates ShiftMask,
// LockMask, ControlMask, Mod1Mask, Mod2Mask (num lock) and Mod4Mask; mod3 and mod5 are lost).
uint16_t x_state_of_glfw_mods(int mods);
// A GLFW mouse button as the X button it came from (GLFW numbers X buttons 8.. from 3).
int x_button_of_glfw(int button);

}  // namespace pixpath::gl::internal
