// GlWindow's uploads, apart from the window itself: pictures into the window texture, straight
// (glTexSubImage2D of a packed format the texture takes as is) or through the YUV/scaling
// shaders (planes into scratch textures, then a draw), from client memory or from a mapped
// buffer of the context's upload ring (UploadSlot, begin_upload; staged client uploads copy
// into one first where the driver reads client memory slowly).
#include <epoxy/gl.h>

#include <algorithm>
#include <optional>
#include <string>

#include "internal/context_impl.h"
#include "internal/gl_window_error.h"
#include "pixpath/core/pixel_format.h"
#include "pixpath/core/pixel_ops.h"
#include "pixpath/gl/gl_window.h"

namespace pixpath::gl {
namespace {

using internal::gl_error;

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
}  // namespace pixpath::gl
