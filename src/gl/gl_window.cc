#include "pixpath/gl/gl_window.h"

#include <epoxy/egl.h>
#include <epoxy/gl.h>

#include <algorithm>
#include <optional>
#include <string>

#include "internal/context_impl.h"
#include "internal/glfw_x11.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/pixel_format.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::gl {
namespace {

Error gl_error(std::string stage, std::string reason, ErrorCode code = ErrorCode::InvalidArgument) {
  return Error(code, "gl window", std::move(stage), std::move(reason));
}

std::string hex(long v) {
  char s[32];
  snprintf(s, sizeof s, "0x%lx", v);
  return s;
}

// How glTexSubImage2D reads rows `stride` bytes apart of `row_bytes` bytes of `bpp`-byte
// pixels: GL_UNPACK_ROW_LENGTH (0 = width) and GL_UNPACK_ALIGNMENT; nullopt when GL cannot
// express the stride (then rows go up one at a time).
struct Unpack {
  GLint row_length = 0;
  GLint alignment = 1;
};
std::optional<Unpack> unpack_for(size_t stride, size_t row_bytes, int bpp) {
  const size_t b = static_cast<size_t>(bpp);
  if (stride % b == 0) {
    Unpack u;
    u.row_length = static_cast<GLint>(stride / b);
    for (GLint a : {8, 4, 2, 1}) {
      if (stride % static_cast<size_t>(a) == 0) {
        u.alignment = a;
        break;
      }
    }
    return u;
  }
  for (GLint a : {8, 4, 2}) {
    const size_t padded = (row_bytes + static_cast<size_t>(a) - 1) / static_cast<size_t>(a) * static_cast<size_t>(a);
    if (padded == stride) return Unpack{0, a};
  }
  return std::nullopt;
}

// Uploads a w x h block of rows `stride` apart from `src` (a client pointer, or an offset into
// the bound pixel-unpack buffer) to the texture bound to GL_TEXTURE_2D at (x, y).
void tex_sub_image(int x, int y, int w, int h, GLenum format, GLenum type, int bpp, size_t stride,
                   const uint8_t* src) {
  const size_t row_bytes = static_cast<size_t>(w) * static_cast<size_t>(bpp);
  if (auto u = unpack_for(stride, row_bytes, bpp)) {
    glPixelStorei(GL_UNPACK_ROW_LENGTH, u->row_length);
    glPixelStorei(GL_UNPACK_ALIGNMENT, u->alignment);
    glTexSubImage2D(GL_TEXTURE_2D, 0, x, y, w, h, format, type, src);
  } else {
    glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
    glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
    for (int r = 0; r < h; ++r) {
      glTexSubImage2D(GL_TEXTURE_2D, 0, x, y + r, w, 1, format, type, src + static_cast<size_t>(r) * stride);
    }
  }
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
}

// Packed formats glTexSubImage2D writes straight into the RGBA8 window texture.
struct DirectFormat {
  GLenum format = 0, type = 0;
  bool opaque_x = false;  // the 4th byte is padding: alpha must become 255 afterwards
};
std::optional<DirectFormat> direct_format(PixelFormat f, const GlCaps& caps) {
  const GLenum ub = GL_UNSIGNED_BYTE;
  // On little-endian hosts GL_UNSIGNED_INT_8_8_8_8 reads a pixel's bytes in reverse order.
  const GLenum rev = GL_UNSIGNED_INT_8_8_8_8;
  switch (f) {
    case PixelFormat::RGBA: return DirectFormat{GL_RGBA, ub, false};
    case PixelFormat::RGBX: return DirectFormat{GL_RGBA, ub, true};
    default: break;
  }
  if (caps.gles) return std::nullopt;
  switch (f) {
    case PixelFormat::RGB: return DirectFormat{GL_RGB, ub, false};
    default: break;
  }
  if (!caps.bgra_upload) return std::nullopt;
  switch (f) {
    case PixelFormat::BGRA: return DirectFormat{GL_BGRA, ub, false};
    case PixelFormat::BGRX: return DirectFormat{GL_BGRA, ub, true};
    case PixelFormat::BGR: return DirectFormat{GL_BGR, ub, false};
    case PixelFormat::ARGB: return DirectFormat{GL_BGRA, rev, false};  // bytes A R G B
    case PixelFormat::XRGB: return DirectFormat{GL_BGRA, rev, true};
    case PixelFormat::ABGR: return DirectFormat{GL_RGBA, rev, false};  // bytes A B G R
    case PixelFormat::XBGR: return DirectFormat{GL_RGBA, rev, true};
    default: return std::nullopt;
  }
}

// The format with alpha where `f` has a padding byte in its place; `f` itself otherwise.
PixelFormat opaque_twin(PixelFormat f) {
  switch (f) {
    case PixelFormat::BGRX: return PixelFormat::BGRA;
    case PixelFormat::RGBX: return PixelFormat::RGBA;
    case PixelFormat::XRGB: return PixelFormat::ARGB;
    case PixelFormat::XBGR: return PixelFormat::ABGR;
    default: return f;
  }
}

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

size_t round_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

}  // namespace

// ---- UploadSlot ------------------------------------------------------------------------

UploadSlot::UploadSlot(UploadSlot&& o) noexcept
    : context_(std::move(o.context_)), buffer_(o.buffer_), view_(o.view_) {
  std::copy(std::begin(o.offsets_), std::end(o.offsets_), offsets_);
  o.buffer_ = -1;
}

UploadSlot& UploadSlot::operator=(UploadSlot&& o) noexcept {
  if (this != &o) {
    reset();
    context_ = std::move(o.context_);
    buffer_ = o.buffer_;
    view_ = o.view_;
    std::copy(std::begin(o.offsets_), std::end(o.offsets_), offsets_);
    o.buffer_ = -1;
  }
  return *this;
}

UploadSlot::~UploadSlot() { reset(); }

void UploadSlot::reset() {
  if (buffer_ >= 0 && context_) {
    auto& impl = context_->impl();
    ScopedCurrent current(impl);
    impl.ring->cancel(buffer_);
  }
  buffer_ = -1;
  context_.reset();
  view_ = PictureView();
}

// ---- GlWindow --------------------------------------------------------------------------

struct GlWindow::Native {
  internal::NativeWindow window;
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
    PIXPATH_TRY(w->native_->window, internal::glfw_create_window(width, height, options.screen_x,
                                                                 options.screen_y, options.title));
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

Result<UploadSlot> GlWindow::begin_upload(PixelFormat format, int width, int height) {
  if (width <= 0 || height <= 0 || width > 16384 || height > 16384) {
    return gl_error("begin upload", "size " + std::to_string(width) + "x" + std::to_string(height) +
                                        " outside 1..16384");
  }
  const PixelFormatInfo& fi = info(format);
  size_t offsets[kMaxPlanes] = {};
  size_t strides[kMaxPlanes] = {};
  size_t total = 0;
  for (int p = 0; p < fi.planes; ++p) {
    const size_t bpp = static_cast<size_t>(fi.bytes_per_pixel[p]);
    const size_t row = static_cast<size_t>(plane_width(format, p, width)) * bpp;
    // 64-byte aligned rows where the pixel size divides 64; else a multiple of 64 * bpp, which
    // keeps GL_UNPACK_ROW_LENGTH exact.
    const size_t align = 64 % bpp == 0 ? 64 : 64 * bpp;
    strides[p] = round_up(row, align);
    offsets[p] = total;
    total += round_up(strides[p] * static_cast<size_t>(plane_height(format, p, height)), 256);
  }
  auto& impl = context_->impl();
  ScopedCurrent current(impl);
  PIXPATH_TRY(int buffer, impl.ring->reserve(total));
  UploadSlot slot;
  slot.context_ = context_;
  slot.buffer_ = buffer;
  uint8_t* base = impl.ring->data(buffer);
  uint8_t* planes[kMaxPlanes] = {};
  for (int p = 0; p < fi.planes; ++p) {
    planes[p] = base + offsets[p];
    slot.offsets_[p] = offsets[p];
  }
  auto view = make_view(format, width, height, std::span<uint8_t* const>(planes, static_cast<size_t>(fi.planes)),
                        std::span<const size_t>(strides, static_cast<size_t>(fi.planes)));
  if (!view.ok()) return view.error().within("gl window", "begin upload");  // slot cancels itself
  slot.view_ = *view;
  return slot;
}

Result<void> GlWindow::paint(UploadSlot slot, const PaintParams& params) {
  return paint_slot(std::move(slot), params, false);
}

Result<void> GlWindow::paint_slot(UploadSlot slot, const PaintParams& params, bool staged) {
  if (!slot.valid()) return gl_error("paint", "empty upload slot");
  if (slot.context_ != context_) return gl_error("paint", "upload slot of another GL context");
  auto& impl = context_->impl();
  ScopedCurrent current(impl);
  const uint8_t* base = slot.view_.planes[0].data - slot.offsets_[0];
  impl.ring->bind_for_upload(slot.buffer_);
  auto r = upload(slot.view_, true, base, params);
  impl.ring->submit(slot.buffer_);
  slot.buffer_ = -1;  // handed back to the ring
  if (r.ok()) {
    if (staged) {
      ++impl.stats.staged_uploads;
      ++impl.stats.host_copies;
    } else {
      ++impl.stats.mapped_uploads;
    }
  }
  return r;
}

Result<bool> GlWindow::paint_staged(const ConstPictureView& view, const PaintParams& params) {
  auto& impl = context_->impl();
  const bool scaled = (params.width > 0 && params.width != view.width) ||
                      (params.height > 0 && params.height != view.height);
  if (scaled || view.empty() || !direct_format(view.format, impl.caps)) return false;
  // The alpha twin of an X format: the copy writes X as 0xFF (convert_pixels), so the upload
  // needs no alpha pass into the window texture afterwards.
  const PixelFormat staged = opaque_twin(view.format);
  if (!direct_format(staged, impl.caps)) return false;
  auto slot = begin_upload(staged, view.width, view.height);
  if (!slot.ok()) return false;  // no upload buffer now: client memory it is
  auto copied = staged == view.format ? copy_pixels(view, slot->view()) : convert_pixels(view, slot->view());
  if (!copied.ok()) return copied.error().within("gl window", "stage upload");  // slot cancels itself
  PIXPATH_CHECK(paint_slot(std::move(*slot), params, true));
  return true;
}

Result<void> GlWindow::paint(const Picture& picture, const PaintParams& params) {
  if (picture.empty()) return gl_error("paint", "empty picture");
  if (!host_accessible(picture.location().kind)) {
    return gl_error("paint", std::string("pictures in ") + std::string(to_string(picture.location().kind)) +
                                 " memory are painted by their backend", ErrorCode::WrongMemoryKind);
  }
  for (int p = 0; p < picture.plane_count(); ++p) {
    if (picture.plane(p).storage->sync_point()) PIXPATH_CHECK(picture.plane(p).storage->wait_ready());
  }
  PIXPATH_TRY(ConstPictureView view, picture.read());
  return paint(view, params);
}

Result<void> GlWindow::paint(const ConstPictureView& view, const PaintParams& params) {
  auto& impl = context_->impl();
  ScopedCurrent current(impl);
  if (impl.caps.staged_client_uploads) {
    PIXPATH_TRY(bool painted, paint_staged(view, params));
    if (painted) return ok();
  }
  glBindBuffer(GL_PIXEL_UNPACK_BUFFER, 0);
  auto r = upload(view, false, nullptr, params);
  if (r.ok()) ++impl.stats.client_uploads;
  return r;
}

Result<void> GlWindow::upload(const ConstPictureView& view, bool from_buffer, const uint8_t* base,
                              const PaintParams& params) {
  (void)from_buffer;
  if (view.empty() || view.width <= 0 || view.height <= 0) return gl_error("paint", "empty picture");
  auto& impl = context_->impl();
  const int dw = params.width > 0 ? params.width : view.width;
  const int dh = params.height > 0 ? params.height : view.height;
  const bool scaled = dw != view.width || dh != view.height;
  const bool timed = impl.timer.begin();
  Result<void> r;
  if (!scaled && direct_format(view.format, impl.caps)) {
    r = upload_direct(view, base, params.x, params.y);
  } else {
    r = upload_shader(view, base, params);
    if (r.ok()) ++impl.stats.shader_paints;
  }
  if (r.ok() && options_.paint_boxes) paint_box(params.x, params.y, dw, dh, params.coding);
  if (timed) impl.timer.end();
  if (!r.ok()) return r;
  ++impl.stats.paints;
  for (int p = 0; p < view.plane_count; ++p) {
    impl.stats.bytes_uploaded += static_cast<int64_t>(view.planes[static_cast<size_t>(p)].row_bytes()) *
                                 view.planes[static_cast<size_t>(p)].height;
  }
  impl.timer.collect(impl.stats);
  return ok();
}

Result<void> GlWindow::upload_direct(const ConstPictureView& full, const uint8_t* base, int x, int y) {
  auto& impl = context_->impl();
  const DirectFormat df = *direct_format(full.format, impl.caps);
  // Clip to the window (the texture must never be written outside).
  const int x0 = std::max(x, 0), y0 = std::max(y, 0);
  const int x1 = std::min(x + full.width, width_), y1 = std::min(y + full.height, height_);
  if (x1 <= x0 || y1 <= y0) return ok();
  ConstPictureView view = full;
  if (x0 != x || y0 != y || x1 - x0 != full.width || y1 - y0 != full.height) {
    PIXPATH_TRY(view, crop_view(full, x0 - x, y0 - y, x1 - x0, y1 - y0));
  }
  const ConstPlaneView& p = view.planes[0];
  const uint8_t* src = base ? reinterpret_cast<const uint8_t*>(p.data - base) : p.data;
  glBindTexture(GL_TEXTURE_2D, texture());
  tex_sub_image(x0, y0, view.width, view.height, df.format, df.type, p.bytes_per_pixel, p.stride, src);
  if (df.opaque_x) {
    bind_fbo();
    glEnable(GL_SCISSOR_TEST);
    glScissor(x0, y0, view.width, view.height);
    glColorMask(GL_FALSE, GL_FALSE, GL_FALSE, GL_TRUE);
    glClearColor(0, 0, 0, 1);
    glClear(GL_COLOR_BUFFER_BIT);
    glColorMask(GL_TRUE, GL_TRUE, GL_TRUE, GL_TRUE);
    glDisable(GL_SCISSOR_TEST);
    glBindFramebuffer(GL_FRAMEBUFFER, 0);
  }
  return ok();
}

Result<void> GlWindow::upload_shader(const ConstPictureView& view, const uint8_t* base,
                                     const PaintParams& params) {
  auto& impl = context_->impl();
  const PixelFormatInfo& fi = info(view.format);
  auto ptr = [&](int plane) {
    const uint8_t* d = view.planes[static_cast<size_t>(plane)].data;
    return base ? reinterpret_cast<const uint8_t*>(d - base) : d;
  };
  auto stage = [&](internal::ScratchTexture& t, int plane, GLenum format, int bpp) {
    const ConstPlaneView& p = view.planes[static_cast<size_t>(plane)];
    t.ensure(p.width, p.height);
    glBindTexture(GL_TEXTURE_2D, t.name);
    tex_sub_image(0, 0, p.width, p.height, format, GL_UNSIGNED_BYTE, bpp, p.stride, ptr(plane));
  };
  const int dw = params.width > 0 ? params.width : view.width;
  const int dh = params.height > 0 ? params.height : view.height;
  const bool scaled = dw != view.width || dh != view.height;
  const GLint filter = scaled ? GL_LINEAR : GL_NEAREST;

  int mode = 0;
  GLuint tex[3] = {0, 0, 0};
  int tex_w = 0, tex_h = 0, ctex_w = 1, ctex_h = 1;
  int swz[4] = {0, 1, 2, 4};
  switch (view.format) {
    case PixelFormat::YUV420P:
    case PixelFormat::YUV422P:
    case PixelFormat::YUV444P:
      mode = 1;
      for (int i = 0; i < 3; ++i) {
        stage(impl.staging_r8[i], i, GL_RED, 1);
        tex[i] = impl.staging_r8[i].name;
      }
      tex_w = impl.staging_r8[0].width, tex_h = impl.staging_r8[0].height;
      ctex_w = impl.staging_r8[1].width, ctex_h = impl.staging_r8[1].height;
      break;
    case PixelFormat::NV12:
      mode = 2;
      stage(impl.staging_r8[0], 0, GL_RED, 1);
      stage(impl.staging_rg8, 1, GL_RG, 2);
      tex[0] = impl.staging_r8[0].name;
      tex[1] = impl.staging_rg8.name;
      tex_w = impl.staging_r8[0].width, tex_h = impl.staging_r8[0].height;
      ctex_w = impl.staging_rg8.width, ctex_h = impl.staging_rg8.height;
      break;
    case PixelFormat::GRAY8:
      stage(impl.staging_r8[0], 0, GL_RED, 1);
      tex[0] = impl.staging_r8[0].name;
      tex_w = impl.staging_r8[0].width, tex_h = impl.staging_r8[0].height;
      swz[0] = swz[1] = swz[2] = 0;
      swz[3] = 4;
      break;
    case PixelFormat::RG8:
      return gl_error("paint", "RG8 is a plane, not a picture", ErrorCode::Unsupported);
    default: {
      // Packed RGB: the bytes as they are, swizzled in the shader.
      auto& t = fi.bytes_per_pixel[0] == 3 ? impl.staging_rgb8 : impl.staging_rgba8;
      stage(t, 0, fi.bytes_per_pixel[0] == 3 ? GL_RGB : GL_RGBA, fi.bytes_per_pixel[0]);
      tex[0] = t.name;
      tex_w = t.width, tex_h = t.height;
      swz[0] = fi.channels.r;
      swz[1] = fi.channels.g;
      swz[2] = fi.channels.b;
      swz[3] = fi.channels.a >= 0 ? fi.channels.a : 4;
      break;
    }
  }
  const auto& prog = impl.paint_program;
  bind_fbo();
  glViewport(params.x, params.y, dw, dh);
  glDisable(GL_BLEND);
  glUseProgram(prog.program);
  glUniform1i(prog.u_mode, mode);
  glUniform2f(prog.u_dst_origin, static_cast<float>(params.x), static_cast<float>(params.y));
  glUniform2f(prog.u_dst_size, static_cast<float>(dw), static_cast<float>(dh));
  glUniform2f(prog.u_src_size, static_cast<float>(view.width), static_cast<float>(view.height));
  glUniform2f(prog.u_tex_size, static_cast<float>(tex_w), static_cast<float>(tex_h));
  glUniform2f(prog.u_chroma_shift, static_cast<float>(1 << fi.chroma_shift_x),
              static_cast<float>(1 << fi.chroma_shift_y));
  glUniform2f(prog.u_chroma_tex_size, static_cast<float>(ctex_w), static_cast<float>(ctex_h));
  glUniform4i(prog.u_swizzle, swz[0], swz[1], swz[2], swz[3]);
  if (mode != 0) {
    auto c = internal::yuv_coefficients(params.yuv.matrix == YuvMatrix::BT709,
                                        params.yuv.range == YuvRange::Full);
    glUniformMatrix3fv(prog.u_matrix, 1, GL_FALSE, c.matrix);
    glUniform3f(prog.u_offset, c.offset[0], c.offset[1], c.offset[2]);
  }
  for (int i = 0; i < 3; ++i) {
    glActiveTexture(GL_TEXTURE0 + static_cast<GLenum>(i));
    glBindTexture(GL_TEXTURE_2D, tex[i] ? tex[i] : tex[0]);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, filter);
    glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, filter);
  }
  glActiveTexture(GL_TEXTURE0);
  glBindVertexArray(impl.vao);
  glDrawArrays(GL_TRIANGLE_STRIP, 0, 4);
  glBindVertexArray(0);
  glUseProgram(0);
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
