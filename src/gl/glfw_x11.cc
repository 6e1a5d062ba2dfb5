#include "internal/glfw_x11.h"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <X11/Xlib.h>

// From glfw3native.h, which cannot be included without the Xrandr headers; same C ABI
// (Display* and Window).
extern "C" {
Display* glfwGetX11Display(void);
Window glfwGetX11Window(GLFWwindow* window);
}

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace pixpath::gl::internal {
namespace {
int g_users = 0;  // GL thread only
std::string g_last_error;
void on_error(int code, const char* text) {
  g_last_error = std::to_string(code) + ": " + (text ? text : "?");
}

// ---- GLFW's callbacks -> paint::WindowEvent ----------------------------------------------

WindowEventSink* sink_of(GLFWwindow* w) { return static_cast<WindowEventSink*>(glfwGetWindowUserPointer(w)); }

void emit(WindowEventSink& s, paint::WindowEvent e) {
  e.wid = s.wid;
  if (s.emit) s.emit(std::move(e));
}

paint::WindowEvent pointer_event(const WindowEventSink& s, paint::EventKind kind) {
  paint::WindowEvent e;
  e.kind = kind;
  e.x = int(s.cx), e.y = int(s.cy);
  e.root_x = s.x + e.x, e.root_y = s.y + e.y;
  e.state = s.state;
  e.modifiers = paint::x_modifier_names(s.state);
  return e;
}

void on_key(GLFWwindow* w, int /*key*/, int scancode, int action, int mods) {
  WindowEventSink* s = sink_of(w);
  if (!s || scancode <= 0 || scancode > 255) return;
  s->state = x_state_of_glfw_mods(mods);
  paint::WindowEvent e;
  e.kind = paint::EventKind::Key;
  e.pressed = action != GLFW_RELEASE;  // GLFW_REPEAT: another press, as X sends it
  e.keycode = uint32_t(scancode);
  e.state = s->state;
  e.modifiers = paint::x_modifier_names(s->state);
  emit(*s, std::move(e));
}

void on_cursor(GLFWwindow* w, double x, double y) {
  WindowEventSink* s = sink_of(w);
  if (!s) return;
  s->cx = x, s->cy = y;
  emit(*s, pointer_event(*s, paint::EventKind::Motion));
}

void on_button(GLFWwindow* w, int button, int action, int mods) {
  WindowEventSink* s = sink_of(w);
  if (!s) return;
  s->state = x_state_of_glfw_mods(mods);
  paint::WindowEvent e = pointer_event(*s, paint::EventKind::Button);
  e.button = x_button_of_glfw(button);
  e.pressed = action == GLFW_PRESS;
  emit(*s, std::move(e));
}

void on_scroll(GLFWwindow* w, double dx, double dy) {
  WindowEventSink* s = sink_of(w);
  if (!s) return;
  // GLFW on X11 reports buttons 4/5 as dy +1/-1 and 6/7 as dx +1/-1: the X buttons again.
  const int button = dy > 0 ? 4 : dy < 0 ? 5 : dx > 0 ? 6 : dx < 0 ? 7 : 0;
  if (!button) return;
  for (bool pressed : {true, false}) {
    paint::WindowEvent e = pointer_event(*s, paint::EventKind::Button);
    e.button = button;
    e.pressed = pressed;
    emit(*s, std::move(e));
  }
}

void on_focus(GLFWwindow* w, int focused) {
  WindowEventSink* s = sink_of(w);
  if (!s) return;
  paint::WindowEvent e;
  e.kind = paint::EventKind::Focus;
  e.pressed = focused == GLFW_TRUE;
  emit(*s, std::move(e));
}

void configured(WindowEventSink& s, int x, int y, int w, int h) {
  if (s.x == x && s.y == y && s.w == w && s.h == h) return;
  s.x = x, s.y = y, s.w = w, s.h = h;
  paint::WindowEvent e;
  e.kind = paint::EventKind::Configure;
  e.root_x = x, e.root_y = y, e.w = w, e.h = h;
  emit(s, std::move(e));
}

void on_pos(GLFWwindow* w, int x, int y) {
  if (WindowEventSink* s = sink_of(w)) configured(*s, x, y, s->w, s->h);
}

void on_size(GLFWwindow* w, int width, int height) {
  if (WindowEventSink* s = sink_of(w)) configured(*s, s->x, s->y, width, height);
}

void on_close(GLFWwindow* w) {
  glfwSetWindowShouldClose(w, GLFW_FALSE);  // the server decides (close-window, then lost-window)
  WindowEventSink* s = sink_of(w);
  if (!s) return;
  paint::WindowEvent e;
  e.kind = paint::EventKind::Close;
  emit(*s, std::move(e));
}

}  // namespace

uint16_t x_state_of_glfw_mods(int mods) {
  uint16_t state = 0;
  if (mods & GLFW_MOD_SHIFT) state |= ShiftMask;
  if (mods & GLFW_MOD_CAPS_LOCK) state |= LockMask;
  if (mods & GLFW_MOD_CONTROL) state |= ControlMask;
  if (mods & GLFW_MOD_ALT) state |= Mod1Mask;
  if (mods & GLFW_MOD_NUM_LOCK) state |= Mod2Mask;
  if (mods & GLFW_MOD_SUPER) state |= Mod4Mask;
  return state;
}

int x_button_of_glfw(int button) {
  switch (button) {
    case GLFW_MOUSE_BUTTON_LEFT: return 1;
    case GLFW_MOUSE_BUTTON_MIDDLE: return 2;
    case GLFW_MOUSE_BUTTON_RIGHT: return 3;
    default: return button + 5;  // GLFW's 3.. are X's 8.. (4..7 are the wheel)
  }
}

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
  Display* dpy = glfwGetX11Display();
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

Result<NativeWindow> glfw_create_window(const NativeWindowOptions& o) {
  glfwDefaultWindowHints();
  glfwWindowHint(GLFW_CLIENT_API, GLFW_NO_API);
  const bool decorated = o.decorated && !o.override_redirect;
  glfwWindowHint(GLFW_DECORATED, decorated ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_RESIZABLE, decorated ? GLFW_TRUE : GLFW_FALSE);
  glfwWindowHint(GLFW_FOCUS_ON_SHOW, GLFW_FALSE);
  glfwWindowHint(GLFW_VISIBLE, GLFW_FALSE);
  GLFWwindow* w = glfwCreateWindow(o.width, o.height, o.title.c_str(), nullptr, nullptr);
  if (!w) {
    return Error(ErrorCode::Unavailable, "gl", "create window", "glfwCreateWindow failed: " + g_last_error);
  }
  NativeWindow out;
  out.glfw = w;
  out.x11 = glfwGetX11Window(w);
  if (o.override_redirect) {  // before it is mapped: the window manager never manages it
    XSetWindowAttributes a{};
    a.override_redirect = True;
    XChangeWindowAttributes(glfwGetX11Display(), out.x11, CWOverrideRedirect, &a);
  }
  if (WindowEventSink* s = o.sink) {
    s->x = o.x, s->y = o.y, s->w = o.width, s->h = o.height;
    glfwSetWindowUserPointer(w, s);
    glfwSetInputMode(w, GLFW_LOCK_KEY_MODS, GLFW_TRUE);  // caps and num lock in the mods
    glfwSetKeyCallback(w, on_key);
    glfwSetCursorPosCallback(w, on_cursor);
    glfwSetMouseButtonCallback(w, on_button);
    glfwSetScrollCallback(w, on_scroll);
    glfwSetWindowFocusCallback(w, on_focus);
    glfwSetWindowPosCallback(w, on_pos);
    glfwSetWindowSizeCallback(w, on_size);
    glfwSetWindowCloseCallback(w, on_close);
  }
  glfwSetWindowPos(w, o.x, o.y);
  glfwShowWindow(w);
  return out;
}

void glfw_destroy_window(NativeWindow& window) {
  if (window.glfw) glfwDestroyWindow(static_cast<GLFWwindow*>(window.glfw));
  window = {};
}

void glfw_resize_window(const NativeWindow& window, int width, int height) {
  auto* w = static_cast<GLFWwindow*>(window.glfw);
  if (!w) return;
  // The sink learns the size now: the ConfigureNotify that follows is no user resize.
  if (WindowEventSink* s = sink_of(w)) s->w = width, s->h = height;
  glfwSetWindowSize(w, width, height);
}

void glfw_move_window(const NativeWindow& window, int x, int y) {
  auto* w = static_cast<GLFWwindow*>(window.glfw);
  if (!w) return;
  if (WindowEventSink* s = sink_of(w)) s->x = x, s->y = y;
  glfwSetWindowPos(w, x, y);
}

void glfw_set_title(const NativeWindow& window, const std::string& title) {
  if (window.glfw) glfwSetWindowTitle(static_cast<GLFWwindow*>(window.glfw), title.c_str());
}

void glfw_raise_window(const NativeWindow& window) {
  if (!window.x11) return;
  Display* dpy = glfwGetX11Display();
  XRaiseWindow(dpy, window.x11);
  XFlush(dpy);
}

void* glfw_create_cursor(const paint::CursorImage& image) {
  if (image.w <= 0 || image.h <= 0 || image.bgra.size() != size_t(image.w) * size_t(image.h) * 4) return nullptr;
  // GLFW takes straight (not premultiplied) RGBA and premultiplies it again for Xcursor.
  std::vector<unsigned char> rgba(image.bgra.size());
  for (size_t i = 0; i < rgba.size(); i += 4) {
    const unsigned a = image.bgra[i + 3];
    auto straight = [a](unsigned v) { return a == 0 ? 0u : std::min(255u, (v * 255 + a / 2) / a); };
    rgba[i] = (unsigned char)straight(image.bgra[i + 2]);
    rgba[i + 1] = (unsigned char)straight(image.bgra[i + 1]);
    rgba[i + 2] = (unsigned char)straight(image.bgra[i]);
    rgba[i + 3] = (unsigned char)a;
  }
  GLFWimage img{image.w, image.h, rgba.data()};
  return glfwCreateCursor(&img, image.xhot, image.yhot);
}

void glfw_destroy_cursor(void* cursor) {
  if (cursor) glfwDestroyCursor(static_cast<GLFWcursor*>(cursor));
}

void glfw_set_cursor(const NativeWindow& window, void* cursor) {
  if (window.glfw) glfwSetCursor(static_cast<GLFWwindow*>(window.glfw), static_cast<GLFWcursor*>(cursor));
}

void glfw_poll_events() {
  if (g_users > 0) glfwPollEvents();
}

int glfw_connection_fd() {
  Display* dpy = g_users > 0 ? glfwGetX11Display() : nullptr;
  return dpy ? ConnectionNumber(dpy) : -1;
}

}  // namespace pixpath::gl::internal
