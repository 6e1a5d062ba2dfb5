// CpuBacking: a Backing with one host framebuffer per window, in BGRX.
//
// Why BGRX: it is what a little-endian X11 server's 24/32-bit visuals hold, so xpra's most
// common rgb24/rgb32 data (rgb_format "BGRX"/"BGRA") paints with a plain row copy;
// libjpeg-turbo and libwebp write BGRX/BGRA directly (decode_into needs no conversion); it is
// Cairo's RGB24 and GL's fast BGRA upload layout, so a later presenter can use it as is.
// Windows have no alpha here (X is ignored and written as 0xFF), as on an opaque X visual.
//
// Each framebuffer is a Picture: snapshot() shares it (no copy), and the next write to that
// window copies it once if the snapshot is still alive (copy-on-write, counted in
// counters().copies).
//
// Framebuffer memory and presentation (CpuBackingOptions): a presenter (the X11 shared-memory
// backing, pixpath/x11/x11_backing.h) gives its own allocator, so each framebuffer IS the memory
// it shows from (no copy per paint), and is told which rectangle of which window changed after
// every create, resize, paint, scroll and written direct target. The allocator must return a
// writable BGRX picture of exactly w x h; it is used for new framebuffers and for the copy a
// snapshot forces (copy-on-write).
//
// Threading: owner-thread only, as every Backing (see backing.h for direct targets); the
// options' functions run on the owner thread.
#pragma once

#include <functional>
#include <map>
#include <memory>

#include "pixpath/paint/backing.h"

namespace pixpath::paint {

struct CpuBackingOptions {
  // A new writable w x h BGRX framebuffer (contents need not be initialised); empty: host memory.
  std::function<Result<Picture>(int w, int h)> allocate;
  // `r` (inside the window) of window `wid` changed (after the change is complete).
  std::function<void(int64_t wid, Rect r)> changed;
};

class CpuBacking final : public Backing {
 public:
  CpuBacking() = default;
  explicit CpuBacking(CpuBackingOptions options) : options_(std::move(options)) {}
  static constexpr PixelFormat kFormat = PixelFormat::BGRX;

  std::string_view name() const override { return "cpu"; }
  PixelFormat format() const override { return kFormat; }

  Result<void> create_window(int64_t wid, int w, int h) override;
  Result<void> resize_window(int64_t wid, int w, int h) override;
  Result<void> destroy_window(int64_t wid) override;
  std::optional<Size> window_size(int64_t wid) const override;
  std::vector<int64_t> windows() const override;

  Result<DirectTarget> begin_direct(int64_t wid, Rect r) override;
  Result<void> end_direct(DirectTarget target, bool written) override;

  Result<void> paint(int64_t wid, int x, int y, const Picture& picture, int w = 0,
                     int h = 0) override;
  // Unscaled and wholly inside the window: converted straight into the framebuffer.
  Result<void> paint_yuv(int64_t wid, int x, int y, const Picture& yuv, codecs::VideoColor color,
                         int w = 0, int h = 0) override;
  Result<void> scroll(int64_t wid, std::span<const ScrollRect> rects) override;
  Result<Picture> snapshot(int64_t wid) override;

  // The framebuffer of `wid` without taking a reference (a snapshot would make the next write
  // copy), for a presenter reading from it; null when there is no such window. Lifetime: until
  // the next call on that window.
  const Picture* framebuffer(int64_t wid) const {
    auto it = windows_.find(wid);
    return it == windows_.end() ? nullptr : &it->second.framebuffer;
  }

 private:
  struct Window {
    Picture framebuffer;
    int open_targets = 0;
  };
  Result<Window*> find(int64_t wid, std::string_view stage);
  Result<Window*> find_idle(int64_t wid, std::string_view stage);
  // A writable view of the whole framebuffer (copies it once if a snapshot shares it).
  Result<PictureView> writable(Window& win);

  Result<Picture> black_framebuffer(int w, int h);
  void changed(int64_t wid, Rect r) {
    if (options_.changed && r.w > 0 && r.h > 0) options_.changed(wid, r);
  }

  CpuBackingOptions options_;
  std::map<int64_t, Window> windows_;
  uint64_t next_token_ = 1;
};

}  // namespace pixpath::paint
