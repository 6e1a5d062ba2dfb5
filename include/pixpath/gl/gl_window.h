// GlWindow: one window's content as an OpenGL texture, and the ways pixels get into it.
//
// The content lives in an immutable-storage RGBA8 texture (glTexStorage2D): row 0 of the
// texture is the top row of the window, bytes R, G, B, A. Paints never re-specify it; only
// resize() makes a new texture (copying what both sizes share). The texture is owned through
// a PictureStorage (MemoryKind::GlTexture) bound to the context's release domain, so a holder
// elsewhere (e.g. a CUDA registration) keeps it alive and its glDeleteTextures runs on the GL
// thread; texture_generation() changes whenever the texture object is replaced.
//
// Paths into the texture:
//   - begin_upload() / paint(UploadSlot): the zero-copy path. The slot is a PictureView inside
//     a mapped pixel-unpack buffer; a decoder writes the picture there, paint() uploads it with
//     glTexSubImage2D from the buffer (GL_UNPACK_ROW_LENGTH/ALIGNMENT from the stride). A
//     fence tells when the buffer may be reused; nothing waits for the GPU on this path.
//   - paint(Picture / ConstPictureView) for pixels already in host memory: uploaded straight
//     from that memory (client pointer), no intermediate copy.
//   - Packed RGB formats go straight into the texture on desktop GL: RGBA/RGBX as GL_RGBA,
//     BGRA/BGRX as GL_BGRA, RGB/BGR as GL_RGB/GL_BGR, ARGB/XRGB/ABGR/XBGR as GL_BGRA/GL_RGBA
//     with GL_UNSIGNED_INT_8_8_8_8; X bytes then get alpha 255 by a masked clear. On OpenGL ES
//     (no GL_BGRA into an RGBA8 texture) and for GRAY8 the bytes go to a staging texture and a
//     swizzling fragment shader draws them into the window texture.
//   - Planar YUV (YUV420P, YUV422P, YUV444P) and NV12: planes uploaded as R8 / RG8 into staging
//     textures, converted to RGB by a fragment shader drawing into the window texture through
//     a framebuffer object, BT.601 or BT.709, full or studio range. Chroma is replicated
//     (nearest) at 1:1, bilinear when scaled.
//   - A destination size different from the picture's size scales (bilinear, in the shader).
//
// Threading: GL thread only (the thread of the GlContext). An UploadSlot's view may be written
// from any thread, but the slot itself is created, painted and dropped on the GL thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "pixpath/core/picture.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/result.h"
#include "pixpath/gl/gl_context.h"
#include "pixpath/paint/window_input.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::gl {

enum class YuvMatrix { BT601, BT709 };
enum class YuvRange { Studio, Full };  // studio: Y 16..235, C 16..240; full: 0..255
struct YuvColor {
  YuvMatrix matrix = YuvMatrix::BT601;
  YuvRange range = YuvRange::Full;  // JPEG (JFIF) is BT.601 full range; video mostly studio
};

struct PaintParams {
  int x = 0, y = 0;             // destination in the window
  int width = 0, height = 0;    // destination size; 0 = the picture's own size (no scaling)
  std::string_view coding;      // names the paint box colour ("jpeg", "rgb24", ...)
  YuvColor yuv;                 // YUV formats only
};

struct GlWindowOptions {
  bool windowed = false;        // show it in an X11 window (needs an X11 GlContext)
  std::string title = "pixpath";
  int screen_x = 0, screen_y = 0;
  // Windowed: a menu or tooltip (override-redirect: no window manager, no decorations), or a
  // normal window with decorations that the user may resize (else undecorated, fixed size).
  bool override_redirect = false;
  bool decorated = false;
  // Windowed: the user's actions on the window (keys, pointer, focus, moves/resizes, close
  // requests) as paint::WindowEvents with this wid, delivered on the GL thread while events
  // are polled (present(), poll_window_events()). Key events carry the X keycode and state
  // only (keysym, keyname, text empty: see pixpath/paint/window_input.h).
  int64_t wid = 0;
  std::function<void(paint::WindowEvent)> on_event;
  bool paint_boxes = false;     // outline every paint in a colour per coding (debugging)
  // Colour of areas that were never painted (creation, growth by resize), RGBA.
  std::array<uint8_t, 4> background{0, 0, 0, 255};
};

class GlWindow;

// Windowed GL windows: handles the X events that wait, delivering the user's actions to the
// windows' on_event; the X connection's descriptor (readable when events wait), or -1.
void poll_window_events();
int window_event_fd();

// Mapped upload memory holding one picture. Move-only. Dropping it unpainted gives the memory
// back. Lifetime: view() is valid until the slot is painted, dropped, or its window destroyed.
class UploadSlot {
 public:
  UploadSlot() = default;
  UploadSlot(UploadSlot&& o) noexcept;
  UploadSlot& operator=(UploadSlot&& o) noexcept;
  ~UploadSlot();

  bool valid() const { return buffer_ >= 0; }
  const PictureView& view() const { return view_; }
  PixelFormat format() const { return view_.format; }
  int width() const { return view_.width; }
  int height() const { return view_.height; }

 private:
  friend class GlWindow;
  void reset();
  std::shared_ptr<GlContext> context_;
  int buffer_ = -1;
  size_t offsets_[kMaxPlanes] = {};
  PictureView view_;
};

class GlWindow {
 public:
  [[nodiscard]] static Result<std::unique_ptr<GlWindow>> create(std::shared_ptr<GlContext> context,
                                                                int width, int height,
                                                                const GlWindowOptions& options = {});
  ~GlWindow();
  GlWindow(const GlWindow&) = delete;
  GlWindow& operator=(const GlWindow&) = delete;

  int width() const { return width_; }
  int height() const { return height_; }
  const std::shared_ptr<GlContext>& context() const { return context_; }

  // Mapped memory for a width x height picture in `format` (any format but 3-byte RGB/BGR
  // with an odd stride need; strides are 64-byte aligned where the pixel size allows).
  [[nodiscard]] Result<UploadSlot> begin_upload(PixelFormat format, int width, int height);
  // Uploads what was written into the slot and paints it at params (the slot is consumed).
  [[nodiscard]] Result<void> paint(UploadSlot slot, const PaintParams& params);
  // Paints pixels from host memory. The picture must be host-accessible and ready (its sync
  // point, if any, is waited for). With GlCaps::staged_client_uploads an unscaled picture of a
  // directly uploadable format is copied into an upload buffer (X bytes made opaque, so no
  // alpha pass follows) and uploaded from there; otherwise, or when no buffer can be had, it
  // is uploaded straight from host memory.
  [[nodiscard]] Result<void> paint(const Picture& picture, const PaintParams& params);
  [[nodiscard]] Result<void> paint(const ConstPictureView& view, const PaintParams& params);
  // Fills a rectangle with one RGBA colour.
  [[nodiscard]] Result<void> fill(int x, int y, int width, int height, std::array<uint8_t, 4> rgba);

  // xpra "scroll": each rectangle (relative to the content before any of them moved) is copied
  // to (x + dx, y + dy), clipped to the window. Overlapping sources and destinations are
  // handled (through a temporary texture).
  [[nodiscard]] Result<void> scroll(std::span<const ScrollRect> rects);

  // New size; the content both sizes share stays, new areas get the background colour.
  [[nodiscard]] Result<void> resize(int width, int height);

  // The content as a host picture (RGBA or BGRA; RGBX or BGRX with X = 0xFF), read with
  // glReadPixels from the texture's framebuffer. Waits for the GPU: for snapshots and tests, not for the paint path.
  [[nodiscard]] Result<Picture> readback(PixelFormat format = PixelFormat::RGBA) const;

  // Windowed: draws the texture into the X window and swaps. Headless: does nothing.
  [[nodiscard]] Result<void> present();
  bool windowed() const;
  // Windowed only (else nothing happens): place, title, raise the X window.
  void move(int x, int y);
  void set_title(const std::string& title);
  void raise();
  // The window's pointer cursor (nullptr: the default). Fails when GLFW cannot make it.
  [[nodiscard]] Result<void> set_cursor(const paint::CursorImage* image);

  // The texture (GL name, RGBA8, width() x height()) and a count that changes when resize()
  // replaces it (re-register it with CUDA then).
  uint32_t texture() const;
  uint64_t texture_generation() const { return texture_generation_; }
  // The content as a Picture in GL texture memory (sharing the texture's storage).
  [[nodiscard]] Result<Picture> content() const;

  void set_paint_boxes(bool on) { options_.paint_boxes = on; }

 private:
  struct Native;
  GlWindow(std::shared_ptr<GlContext> context, const GlWindowOptions& options);
  Result<void> make_texture(int width, int height);
  Result<void> paint_slot(UploadSlot slot, const PaintParams& params, bool staged);
  // Result: whether it painted (false: not applicable, paint from client memory instead).
  Result<bool> paint_staged(const ConstPictureView& view, const PaintParams& params);
  Result<void> upload(const ConstPictureView& view, bool from_buffer, const uint8_t* buffer_base,
                      const PaintParams& params);
  Result<void> upload_direct(const ConstPictureView& view, const uint8_t* base, int x, int y);
  Result<void> upload_shader(const ConstPictureView& view, const uint8_t* base,
                             const PaintParams& params);
  void paint_box(int x, int y, int w, int h, std::string_view coding);
  void bind_fbo() const;

  std::shared_ptr<GlContext> context_;
  GlWindowOptions options_;
  int width_ = 0, height_ = 0;
  StorageRef texture_storage_;
  uint32_t fbo_ = 0;
  uint64_t texture_generation_ = 0;
  std::unique_ptr<Native> native_;
};

}  // namespace pixpath::gl
