// Backing: where one client's windows are painted — one framebuffer (or texture) per window.
// The CPU backing (cpu_backing.h) implements it with host memory; the GL backing (a later
// issue) with textures. The paint engine (paint_engine.h) drives a backing; nothing else
// should write to it while an engine runs.
//
// Threading: every method runs on the backing's owner thread (the UI thread; for GL the one
// whose context is current), EXCEPT that the PictureView inside a DirectTarget may be written
// by one other thread between begin_direct() and end_direct() (see below). The backing never
// calls back into the engine.
//
// Direct targets (zero-copy decoding). begin_direct() hands out a writable view onto a
// rectangle of a window's framebuffer, in the backing's format(), so a decoder can write its
// pixels straight to where they are shown. Between begin_direct() and end_direct():
//   - the caller (one thread) may write the view's pixels, and nothing else;
//   - the owner must not resize, destroy, scroll, paint or snapshot that window (the engine
//     guarantees it by keeping that window's later work queued behind the target); the CPU
//     backing refuses such calls with ErrorCode::Busy instead of racing;
//   - the view stays valid (the framebuffer is neither moved nor reallocated).
// end_direct() (owner thread) closes the target; `written` says whether the pixels are now
// complete (a GL backing uploads them then; the CPU backing has nothing left to do).
//
// Window textures (GPU output; the GL backing). A backing whose windows are RGBA8 GL textures
// (row 0 = top row, bytes R, G, B, A) says so with has_window_textures() and hands out the
// texture name with window_texture(); the paint engine's GPU decoder then writes decoded
// pictures straight into it on the owner thread (CUDA-GL interop), ordered against the
// backing's own GL work by the interop's map/unmap. The texture is replaced only by
// resize_window() and deleted by destroy_window(): callers that registered it elsewhere must
// unregister it before calling either. After such a write the caller calls texture_written().
//
// Content on resize: the top-left min(old, new) area is kept, new area is black.
// Rectangles partly outside the window are clipped (paint, scroll); direct targets must lie
// wholly inside.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/picture.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/pixel_format.h"
#include "pixpath/core/release_domain.h"
#include "pixpath/core/result.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::paint {

struct Rect {
  int x = 0, y = 0, w = 0, h = 0;
  bool operator==(const Rect&) const = default;
};

struct Size {
  int w = 0, h = 0;
  bool operator==(const Size&) const = default;
};

// A window's content as a GL texture (see "Window textures" above). Lifetime: the name is
// valid until that window's next resize_window() or destroy_window().
struct WindowTexture {
  uint32_t texture = 0;  // GL texture name in the owner thread's context (RGBA8)
  int width = 0, height = 0;
};

// A rectangle of a window's framebuffer lent out for writing. Lifetime: `view` is valid until
// end_direct() is called with this target.
struct DirectTarget {
  int64_t wid = 0;
  Rect rect;
  PictureView view;
  uint64_t token = 0;  // backing-private
};

class Backing {
 public:
  virtual ~Backing() = default;

  virtual std::string_view name() const = 0;  // "cpu", "gl"
  // The framebuffer format: what decoders should write into direct targets.
  virtual PixelFormat format() const = 0;
  // Where storages this backing hands out must be released (null: anywhere). The engine
  // drains it on the owner thread.
  virtual std::shared_ptr<ReleaseDomain> release_domain() const { return nullptr; }

  // Window lifecycle. create_window fails if wid exists; resize keeps content.
  virtual Result<void> create_window(int64_t wid, int w, int h) = 0;
  virtual Result<void> resize_window(int64_t wid, int w, int h) = 0;
  virtual Result<void> destroy_window(int64_t wid) = 0;
  virtual std::optional<Size> window_size(int64_t wid) const = 0;
  virtual std::vector<int64_t> windows() const = 0;

  // Zero-copy decoding (see the header comment). `r` must lie inside the window.
  virtual Result<DirectTarget> begin_direct(int64_t wid, Rect r) = 0;
  virtual Result<void> end_direct(DirectTarget target, bool written) = 0;

  // Paints `picture` (any packed RGB format or GRAY8) with its top-left at (x, y); when
  // (w, h) differ from the picture's size it is scaled to w x h first (xpra's scaled_size).
  // w = h = 0: the picture's own size.
  virtual Result<void> paint(int64_t wid, int x, int y, const Picture& picture, int w = 0,
                             int h = 0) = 0;
  // Paints a planar YUV picture (YUV420P, YUV422P, YUV444P: a video frame, read-only) as
  // paint() does, converting with `color` (BT.601/709, studio/full range). The default
  // converts it on the CPU (libyuv) into a picture in format() and paints that; the CPU
  // backing converts straight into the framebuffer, the GL backing in a shader.
  virtual Result<void> paint_yuv(int64_t wid, int x, int y, const Picture& yuv,
                                 codecs::VideoColor color, int w = 0, int h = 0);
  // xpra's scroll: every rectangle is copied from the content as it was before any of them
  // was applied, to (x + dx, y + dy).
  virtual Result<void> scroll(int64_t wid, std::span<const ScrollRect> rects) = 0;
  // The window's current content, in format(). May share the framebuffer (copy-on-write:
  // the backing's next write copies if the snapshot is still alive).
  virtual Result<Picture> snapshot(int64_t wid) = 0;

  // Window textures (optional; see the header comment). Defaults: none.
  virtual bool has_window_textures() const { return false; }
  virtual std::optional<WindowTexture> window_texture(int64_t /*wid*/) { return std::nullopt; }
  // `r` of window_texture(wid) was written by other means (e.g. CUDA); the backing presents or
  // counts it. Owner thread.
  virtual Result<void> texture_written(int64_t /*wid*/, Rect /*r*/) { return ok(); }
};

// PNG bytes (8-bit RGB) of a backing window's content.
Result<std::vector<uint8_t>> snapshot_png(Backing& backing, int64_t wid);

}  // namespace pixpath::paint
