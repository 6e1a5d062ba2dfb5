#include "internal/glfw_x11.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

// From glfw3native.h, which cannot be included without the Xrandr headers; same C ABI
// (Display* and Window).
extern "C" {
struct _XDisplay;
_XDisplay* glfwGetX11Display(void);
unsigned long glfwGetX11Window(GLFWwindow* window);
}

#include <cstdlib>

namespace pixpath::gl::internal {
namespace {
int g_users = 0;  // GL thread only
std::string g_last_error;
void on_error(int code, const char* text) {
  g_last_error = std::to_string(code) + ": " + (text ? text : "?");
}
}  // namespace

Result<void*> glfw_acquire() {
  if (g_users == 0) {
    glfwSetErrorCallback(on_error);
    if (!std::getenv("DISPLAY")) {
      return Error(ErrorCode::Unavailable, "gl", "open X display", "DISPLAY is not set");
    }
#if GLFW_VERSION_MAJOR > 3 || (GLFW_VERSION_MAJOR == 3 && GLFW_VERSION_MINOR >= 4)
    glfwInitHint(GLFW_PLATFORM, GLFW_PLATFORM_X11);
#endif
    if (!glfwInit()) {
      return Error(ErrorCode::Unavailable, "gl", "open X display", "glfwInit failed: " + g_last_error);
    }
  }
  _XDisplay* dpy = glfwGetX11Display();
  if (!dpy) {
    if (g_users == 0) glfwTerminate();
    return Error(ErrorCode::Unavailable, "gl", "open X display", "GLFW has no X11 display: " + g_last_error);
  }
  ++g_users;
  return static_cast<void*>(dpy);
}

void glfw_release() {
  if (g_users > 0 && --g_users == 0) glfwTerminate();
}

Result<NativeWindow> glfw_create_window(int width, int height, int x, int y, const std::string& title) {
  glfwDefaultWindowHints();
  glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
  glfwWindowHint(GLFW_DECORATED, GLFW_FALSE);
  glfwWindowHint(GLFW_RESIZABLE, GLFW_FALSE);
  glfwWindowHint(GLFW_FOCUS_ON_SHOW, GLFW_FALSE);
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  GLFWwindow* w = glfwCreateWindow(width, height, title.c_str(), nullptr, nullptr);
  if (!w) {
    return Error(ErrorCode::Unavailable, "gl", "create window", "glfwCreateWindow failed: " + g_last_error);
  }
  glfwSetWindowPos(w, x, y);
  glfwShowWindow(w);
  NativeWindow out;
  out.glfw = w;
  out.x11 = glfwGetX11Window(w);
  return out;
}

void glfw_destroy_window(NativeWindow& window) {
  if (window.glfw) glfwDestroyWindow(static_cast<GLFWwindow*>(window.glfw));
  window = {};
}

void glfw_resize_window(const NativeWindow& window, int width, int height) {
  if (window.glfw) glfwSetWindowSize(static_cast<GLFWwindow*>(window.glfw), width, height);
}

void glfw_poll_events() { glfwPollEvents(); }

}  // namespace pixpath::gl::internal
