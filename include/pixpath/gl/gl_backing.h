// GlBacking: the paint engine's Backing (pixpath/paint/backing.h) on OpenGL — one GlWindow
// (immutable RGBA8 texture) per window, all in one GlContext.
//
// Direct targets are mapped upload buffers (GlWindow::begin_upload): the decoder writes the
// rectangle there on its worker thread, end_direct() uploads it into the texture with
// glTexSubImage2D from the buffer. format() is BGRX on desktop GL (uploaded as GL_BGRA, the
// layout libjpeg-turbo, libwebp and xpra's rgb24/32 data come in) and RGBX on OpenGL ES (where
// GL_BGRA cannot go into an RGBA8 texture). Pictures given to paint() upload straight from their
// host memory; YUV pictures (YUV420P/422P/444P, NV12) are converted in a shader with
// GlBackingOptions::yuv. snapshot() reads the texture back (glReadPixels) into a new BGRX/RGBX
// picture with X = 0xFF, so it compares byte for byte with the CPU backing's snapshot.
//
// Window textures: has_window_textures() is true; window_texture() gives GlWindow::texture() so
// the paint engine's GPU decoder (pixpath/cuda/gpu_jpeg.h) writes decoded JPEGs straight into
// it; texture_written() then presents (windowed) and counts the paint (GlStats::external_writes).
//
// Windowed (options.windowed, X11 through DISPLAY): each window is also an X window, presented
// after every change (present_after_paint) or by present(), placed and titled as
// options.hints says (the server's geometry; override-redirect for menus and tooltips, which
// get no decorations; normal windows are decorated and user-resizable). As paint::WindowInput
// it reports what the user does (keys as X keycodes + state, pointer, focus, moves/resizes,
// close requests) and moves, titles and raises windows, like the X11 backing.
//
// Threading: the owner thread is the thread that created the backing (the GL context is
// current there); see backing.h for direct targets.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "pixpath/gl/gl_context.h"
#include "pixpath/gl/gl_window.h"
#include "pixpath/paint/backing.h"
#include "pixpath/paint/window_input.h"

namespace pixpath::gl {

struct GlBackingOptions {
  GlContextOptions context;              // platform choice (windowed forces X11)
  std::shared_ptr<GlContext> shared_context;  // paint with this context instead of a new one
  bool windowed = false;
  bool present_after_paint = true;       // windowed only
  bool paint_boxes = false;
  YuvColor yuv;                          // for YUV pictures given to paint()
  // Windowed: asked in create_window() (owner thread) for the new window's placement; empty or
  // nullopt: (0, 0), a normal window titled "pixpath window N".
  std::function<std::optional<paint::WindowHints>(int64_t wid)> hints;
};

class GlBacking final : public paint::Backing, public paint::WindowInput {
 public:
  [[nodiscard]] static Result<std::unique_ptr<GlBacking>> create(const GlBackingOptions& options = {});
  ~GlBacking() override;

  std::string_view name() const override { return "gl"; }
  PixelFormat format() const override { return format_; }
  std::shared_ptr<ReleaseDomain> release_domain() const override;

  Result<void> create_window(int64_t wid, int w, int h) override;
  Result<void> resize_window(int64_t wid, int w, int h) override;
  Result<void> destroy_window(int64_t wid) override;
  std::optional<paint::Size> window_size(int64_t wid) const override;
  std::vector<int64_t> windows() const override;

  Result<paint::DirectTarget> begin_direct(int64_t wid, paint::Rect r) override;
  Result<void> end_direct(paint::DirectTarget target, bool written) override;

  Result<void> paint(int64_t wid, int x, int y, const Picture& picture, int w = 0, int h = 0) override;
  // Video frames: the planes go up through the upload path and the YUV shader converts them
  // with the stream's colour (BT.601/709, studio/full range), scaling on the GPU.
  Result<void> paint_yuv(int64_t wid, int x, int y, const Picture& yuv, codecs::VideoColor color,
                         int w = 0, int h = 0) override;
  Result<void> scroll(int64_t wid, std::span<const ScrollRect> rects) override;
  Result<Picture> snapshot(int64_t wid) override;

  // Window textures (the GPU decoder's route): every window is an immutable RGBA8 texture.
  bool has_window_textures() const override { return true; }
  std::optional<paint::WindowTexture> window_texture(int64_t wid) override;
  Result<void> texture_written(int64_t wid, paint::Rect r) override;

  // GL specifics.
  const std::shared_ptr<GlContext>& context() const { return context_; }
  GlWindow* window(int64_t wid);
  Result<void> present(int64_t wid);
  void set_paint_boxes(bool on);
  bool windowed() const { return options_.windowed; }

  // WindowInput (owner thread; headless: no events, nothing to move).
  [[nodiscard]] Result<std::vector<paint::WindowEvent>> poll_events() override;
  [[nodiscard]] Result<void> move_window(int64_t wid, int x, int y) override;
  [[nodiscard]] Result<void> set_title(int64_t wid, const std::string& title) override;
  [[nodiscard]] Result<void> raise_window(int64_t wid) override;
  [[nodiscard]] Result<void> set_cursor(const paint::CursorImage* cursor) override;
  bool has_native_window(int64_t wid) const override;
  int event_fd() const override;

 private:
  GlBacking(std::shared_ptr<GlContext> context, const GlBackingOptions& options);
  Result<GlWindow*> find(int64_t wid, std::string_view stage);
  Result<void> after_change(GlWindow& window);

  struct Window {
    std::unique_ptr<GlWindow> gl;
    int open_targets = 0;
  };
  struct OpenTarget {
    int64_t wid = 0;
    paint::Rect rect;
    UploadSlot slot;
  };
  std::shared_ptr<GlContext> context_;
  GlBackingOptions options_;
  PixelFormat format_ = PixelFormat::BGRX;
  std::map<int64_t, Window> windows_;
  std::map<uint64_t, OpenTarget> targets_;
  uint64_t next_token_ = 1;
  std::vector<paint::WindowEvent> events_;  // from the windows' callbacks, not yet polled
  std::optional<paint::CursorImage> cursor_;  // every window's; nullopt: the default
};

// The factory the command line registers as backing "gl".
[[nodiscard]] Result<std::unique_ptr<paint::Backing>> make_gl_backing(const GlBackingOptions& options = {});

// Registers "gl" (headless EGL: device platform on NVIDIA, Mesa surfaceless elsewhere) and
// "gl-window" (an X11 window per xpra window; needs DISPLAY) in the paint backing registry.
// Call once at start-up.
void register_gl_backings();

}  // namespace pixpath::gl
