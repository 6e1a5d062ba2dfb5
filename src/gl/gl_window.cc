#include "pixpath/gl/gl_window.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <algorithm>
#include <string>

#include "internal/context_impl.h"
#include "internal/gl_window_error.h"
#include "internal/glfw_x11.h"
#include "pixpath/core/pixel_format.h"

namespace pixpath::gl {
namespace {

using internal::gl_error;
using internal::hex;

std::array<uint8_t, 4> box_colour(std::string_view coding) {
  // After xpra's paint box colours, where it has one.
  if (coding == "jpeg") return {128, 0, 128, 255};       // purple
  if (coding == "jpega") return {160, 32, 240, 255};
  if (coding == "png" || coding == "png/L" || coding == "png/P") return {255, 255, 0, 255};
  if (coding == "webp") return {255, 192, 203, 255};     // pink
  if (coding == "rgb24" || coding == "rgb32" || coding == "rgb") return {255, 165, 0, 255};
  if (coding == "scroll") return {165, 42, 42, 255};     // brown
  if (coding == "h264") return {0, 0, 255, 255};
  if (coding == "vp8") return {0, 255, 0, 255};
  if (coding == "vp9") return {0, 255, 255, 255};
  if (coding == "void") return {128, 128, 128, 255};
  return {255, 255, 255, 255};
}

}  // namespace

// ---- GlWindow --------------------------------------------------------------------------

struct GlWindow::Native {
  internal::WindowEventSink sink;  // before window: the window's callbacks point here
  internal::NativeWindow window;
  void* cursor = nullptr;  // GLFWcursor*, or nullptr: the default
  EGLSurface surface = EGL_NO_SURFACE;
};

GlWindow::GlWindow(std::shared_ptr<GlContext> context, const GlWindowOptions& options)
    : context_(std::move(context)), options_(options) {}

GlWindow::~GlWindow() {
  auto& impl = context_->impl();
  ScopedCurrent current(impl);
  if (fbo_) glDeleteFramebuffers(1, &fbo_);
  texture_storage_.reset();  // deletes the texture here (or where its last holder lets go)
  if (native_) {
    if (native_->surface != EGL_NO_SURFACE) {
      if (eglGetCurrentSurface(EGL_DRAW) == native_->surface) (void)impl.make_current();
      eglDestroySurface(impl.display, native_->surface);
    }
    internal::glfw_destroy_window(native_->window);
    internal::glfw_destroy_cursor(native_->cursor);
  }
}

Result<std::unique_ptr<GlWindow>> GlWindow::create(std::shared_ptr<GlContext> context, int width,
                                                   int height, const GlWindowOptions& options) {
  if (!context) return gl_error("create", "no GL context");
  if (width <= 0 || height <= 0 || width > 16384 || height > 16384) {
    return gl_error("create", "size " + std::to_string(width) + "x" + std::to_string(height) +
                                  " outside 1..16384");
  }
  auto& impl = context->impl();
  ScopedCurrent current(impl);
  std::unique_ptr<GlWindow> w(new GlWindow(context, options));
  glGenFramebuffers(1, &w->fbo_);
  PIXPATH_CHECK(w->make_texture(width, height));
  glBindFramebuffer(GL_FRAMEBUFFER, w->fbo_);
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, w->texture(), 0);
  GLenum status = glCheckFramebufferStatus(GL_FRAMEBUFFER);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  if (status != GL_FRAMEBUFFER_COMPLETE) {
    return gl_error("create", "window framebuffer incomplete (" + hex(status) + ")", ErrorCode::Internal);
  }
  w->width_ = width;
  w->height_ = height;
  PIXPATH_CHECK(w->fill(0, 0, width, height, options.background));
  if (options.windowed) {
    if (!impl.uses_glfw) {
      return gl_error("create", "a windowed GlWindow needs a context on the X11 platform",
                      ErrorCode::Unavailable);
    }
    w->native_ = std::make_unique<Native>();
    w->native_->sink.wid = options.wid;
    w->native_->sink.emit = options.on_event;
    internal::NativeWindowOptions no;
    no.width = width, no.height = height, no.x = options.screen_x, no.y = options.screen_y;
    no.title = options.title;
    no.override_redirect = options.override_redirect;
    no.decorated = options.decorated;
    no.sink = &w->native_->sink;
    PIXPATH_TRY(w->native_->window, internal::glfw_create_window(no));
    unsigned long xwin = w->native_->window.x11;
    w->native_->surface = eglCreatePlatformWindowSurfaceEXT(impl.display, impl.config, &xwin, nullptr);
    if (w->native_->surface == EGL_NO_SURFACE) {
      return gl_error("create", "eglCreatePlatformWindowSurface failed (" + hex(eglGetError()) + ")",
                      ErrorCode::Unavailable);
    }
  }
  return w;
}

Result<void> GlWindow::make_texture(int width, int height) {
  auto& impl = context_->impl();
  GLuint tex = 0;
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  while (glGetError() != GL_NO_ERROR) {
  }
  glTexStorage2D(GL_TEXTURE_2D, 1, GL_RGBA8, width, height);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  GLenum err = glGetError();
  if (err != GL_NO_ERROR) {
    glDeleteTextures(1, &tex);
    return gl_error("create texture", std::to_string(width) + "x" + std::to_string(height) +
                                          " RGBA8 failed (" + hex(err) + ")", ErrorCode::OutOfMemory);
  }
  MemoryLocation where;
  where.kind = MemoryKind::GlTexture;
  where.context = impl.context;
  where.gl_name = tex;
  std::weak_ptr<int> alive = impl.alive;
  GlContext::Impl* owner = &impl;
  ReleaseAction release = [alive, owner, tex]() mutable {
    if (alive.expired()) return;  // the context went first, and every GL name with it
    ScopedCurrent current(*owner);
    glDeleteTextures(1, &tex);
  };
  PIXPATH_TRY(texture_storage_,
              PictureStorage::wrap(where, nullptr, size_t(width) * size_t(height) * 4, {},
                                   std::move(release), impl.domain));
  ++texture_generation_;
  return ok();
}

uint32_t GlWindow::texture() const {
  return texture_storage_ ? texture_storage_->location().gl_name : 0;
}

bool GlWindow::windowed() const { return native_ != nullptr; }

void GlWindow::move(int x, int y) {
  if (native_) internal::glfw_move_window(native_->window, x, y);
}

void GlWindow::set_title(const std::string& title) {
  if (native_) internal::glfw_set_title(native_->window, title);
}

void GlWindow::raise() {
  if (native_) internal::glfw_raise_window(native_->window);
}

Result<void> GlWindow::set_cursor(const paint::CursorImage* image) {
  if (!native_) return ok();
  void* cursor = nullptr;
  if (image) {
    cursor = internal::glfw_create_cursor(*image);
    if (!cursor) {
      return gl_error("set cursor", "GLFW could not make a " + std::to_string(image->w) + "x" +
                                        std::to_string(image->h) + " cursor", ErrorCode::Unavailable);
    }
  }
  internal::glfw_set_cursor(native_->window, cursor);
  internal::glfw_destroy_cursor(native_->cursor);
  native_->cursor = cursor;
  return ok();
}

void poll_window_events() { internal::glfw_poll_events(); }
int window_event_fd() { return internal::glfw_connection_fd(); }

Result<Picture> GlWindow::content() const {
  return Picture::wrap(PixelFormat::RGBA, width_, height_, texture_storage_, 0,
                       static_cast<size_t>(width_) * 4);
}

void GlWindow::bind_fbo() const { glBindFramebuffer(GL_FRAMEBUFFER, fbo_); }

Result<void> GlWindow::fill(int x, int y, int w, int h, std::array<uint8_t, 4> rgba) {
  ScopedCurrent current(context_->impl());
  bind_fbo();
  glEnable(GL_SCISSOR_TEST);
  glScissor(x, y, w, h);
  glClearColor(rgba[0] / 255.0f, rgba[1] / 255.0f, rgba[2] / 255.0f, rgba[3] / 255.0f);
  glClear(GL_COLOR_BUFFER_BIT);
  glDisable(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  return ok();
}

void GlWindow::paint_box(int x, int y, int w, int h, std::string_view coding) {
  const auto c = box_colour(coding);
  bind_fbo();
  glEnable(GL_SCISSOR_TEST);
  glClearColor(c[0] / 255.0f, c[1] / 255.0f, c[2] / 255.0f, c[3] / 255.0f);
  const int edges[4][4] = {{x, y, w, 1}, {x, y + h - 1, w, 1}, {x, y, 1, h}, {x + w - 1, y, 1, h}};
  for (const auto& e : edges) {
    glScissor(e[0], e[1], e[2], e[3]);
    glClear(GL_COLOR_BUFFER_BIT);
  }
  glDisable(GL_SCISSOR_TEST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
}

Result<void> GlWindow::scroll(std::span<const ScrollRect> rects) {
  auto& impl = context_->impl();
  ScopedCurrent current(impl);
  struct Move {
    int sx, sy, w, h;   // clipped source
    int tx, ty;         // where it sits in the temporary texture
    int dx, dy;
  };
  std::vector<Move> moves;
  int temp_w = 0, temp_h = 0;
  for (const ScrollRect& r : rects) {
    const int x0 = std::max(r.x, 0), y0 = std::max(r.y, 0);
    const int x1 = std::min(r.x + r.w, width_), y1 = std::min(r.y + r.h, height_);
    if (x1 <= x0 || y1 <= y0) continue;
    moves.push_back({x0, y0, x1 - x0, y1 - y0, 0, temp_h, r.dx, r.dy});
    temp_w = std::max(temp_w, x1 - x0);
    temp_h += y1 - y0;
  }
  if (moves.empty()) return ok();
  const bool timed = impl.timer.begin();
  // Every source is read before any destination is written: sources are relative to the
  // content before the scroll, and a rectangle may overlap its own destination (copying a
  // texture onto itself with overlap is undefined for glCopyImageSubData and glBlitFramebuffer).
  impl.scroll_temp.ensure(temp_w, temp_h);
  const GLuint tex = texture();
  for (const Move& m : moves) impl.copy_texture(tex, m.sx, m.sy, impl.scroll_temp.name, m.tx, m.ty, m.w, m.h);
  for (const Move& m : moves) {
    const int x0 = std::max(m.sx + m.dx, 0), y0 = std::max(m.sy + m.dy, 0);
    const int x1 = std::min(m.sx + m.dx + m.w, width_), y1 = std::min(m.sy + m.dy + m.h, height_);
    if (x1 <= x0 || y1 <= y0) continue;
    impl.copy_texture(impl.scroll_temp.name, m.tx + (x0 - (m.sx + m.dx)), m.ty + (y0 - (m.sy + m.dy)),
                      tex, x0, y0, x1 - x0, y1 - y0);
    if (options_.paint_boxes) paint_box(x0, y0, x1 - x0, y1 - y0, "scroll");
  }
  if (timed) impl.timer.end();
  ++impl.stats.scrolls;
  return ok();
}

Result<void> GlWindow::resize(int width, int height) {
  if (width <= 0 || height <= 0 || width > 16384 || height > 16384) {
    return gl_error("resize", "size " + std::to_string(width) + "x" + std::to_string(height) +
                                  " outside 1..16384");
  }
  if (width == width_ && height == height_) return ok();
  auto& impl = context_->impl();
  ScopedCurrent current(impl);
  StorageRef old = texture_storage_;
  const int old_w = width_, old_h = height_;
  PIXPATH_CHECK(make_texture(width, height));
  bind_fbo();
  glFramebufferTexture2D(GL_FRAMEBUFFER, GL_COLOR_ATTACHMENT0, GL_TEXTURE_2D, texture(), 0);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  width_ = width;
  height_ = height;
  PIXPATH_CHECK(fill(0, 0, width, height, options_.background));
  impl.copy_texture(old->location().gl_name, 0, 0, texture(), 0, 0, std::min(old_w, width),
                    std::min(old_h, height));
  old.reset();
  if (native_) internal::glfw_resize_window(native_->window, width, height);
  ++impl.stats.resizes;
  return ok();
}

Result<Picture> GlWindow::readback(PixelFormat format) const {
  const bool bgr_order = format == PixelFormat::BGRA || format == PixelFormat::BGRX;
  const bool opaque = format == PixelFormat::RGBX || format == PixelFormat::BGRX;
  if (!bgr_order && !opaque && format != PixelFormat::RGBA) {
    return gl_error("readback", "RGBA, BGRA, RGBX or BGRX only, not " + std::string(name(format)),
                    ErrorCode::Unsupported);
  }
  auto& impl = context_->impl();
  ScopedCurrent current(impl);
  PIXPATH_TRY(Picture pic, Picture::allocate(format, width_, height_));
  PIXPATH_TRY(PictureView v, pic.write());
  const bool swap = bgr_order && impl.caps.gles;  // ES reads RGBA only (without extensions)
  glBindBuffer(GL_PIXEL_PACK_BUFFER, 0);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
  glPixelStorei(GL_PACK_ROW_LENGTH, static_cast<GLint>(v.planes[0].stride / 4));
  glPixelStorei(GL_PACK_ALIGNMENT, 4);
  while (glGetError() != GL_NO_ERROR) {
  }
  glReadPixels(0, 0, width_, height_, bgr_order && !swap ? GL_BGRA : GL_RGBA, GL_UNSIGNED_BYTE,
               v.planes[0].data);
  GLenum err = glGetError();
  glPixelStorei(GL_PACK_ROW_LENGTH, 0);
  glBindFramebuffer(GL_READ_FRAMEBUFFER, 0);
  if (err != GL_NO_ERROR) return gl_error("readback", "glReadPixels failed (" + hex(err) + ")", ErrorCode::Internal);
  if (swap || opaque) {
    for (int y = 0; y < height_; ++y) {
      uint8_t* row = v.planes[0].unchecked_row(y);
      for (int x = 0; x < width_; ++x) {
        if (swap) std::swap(row[4 * x], row[4 * x + 2]);
        if (opaque) row[4 * x + 3] = 0xFF;
      }
    }
  }
  ++impl.stats.readbacks;
  return pic;
}

Result<void> GlWindow::present() {
  if (!native_) return ok();
  auto& impl = context_->impl();
  if (!eglMakeCurrent(impl.display, native_->surface, native_->surface, impl.context)) {
    return gl_error("present", "eglMakeCurrent on the window failed (" + hex(eglGetError()) + ")",
                    ErrorCode::Internal);
  }
  glBindFramebuffer(GL_READ_FRAMEBUFFER, fbo_);
  glBindFramebuffer(GL_DRAW_FRAMEBUFFER, 0);
  glViewport(0, 0, width_, height_);
  // Texture row 0 is the window's top row; GL's window origin is the bottom left: flip.
  glBlitFramebuffer(0, 0, width_, height_, 0, height_, width_, 0, GL_COLOR_BUFFER_BIT, GL_NEAREST);
  glBindFramebuffer(GL_FRAMEBUFFER, 0);
  eglSwapInterval(impl.display, 0);
  const bool swapped = eglSwapBuffers(impl.display, native_->surface);
  const EGLint swap_error = eglGetError();
  PIXPATH_CHECK(impl.make_current());
  internal::glfw_poll_events();
  if (!swapped) return gl_error("present", "eglSwapBuffers failed (" + hex(swap_error) + ")", ErrorCode::Internal);
  return ok();
}

}  // namespace pixpath::gl
