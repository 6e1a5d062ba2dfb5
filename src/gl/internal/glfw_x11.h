// GLFW for X11 windows. GLFW creates and maps the X windows (GLFW_NO_API: no GL context of
// its own); pixpath renders into them through EGL window surfaces on the X display GLFW opened,
// so every window shares the one EGL context. GL thread only (GLFW wants one thread).
#pragma once

#include <string>

#include "pixpath/core/result.h"

namespace pixpath::gl::internal {

// glfwInit (counted) and the X Display* it opened.
Result<void*> glfw_acquire();
void glfw_release();

struct NativeWindow {
  void* glfw = nullptr;       // GLFWwindow*
  unsigned long x11 = 0;      // the X Window
};
Result<NativeWindow> glfw_create_window(int width, int height, int x, int y, const std::string& title);
void glfw_destroy_window(NativeWindow& window);
void glfw_resize_window(const NativeWindow& window, int width, int height);
void glfw_poll_events();

}  // namespace pixpath::gl::internal
