#include "pixpath/paint/cpu_backing.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "pixpath/core/counters.h"
#include "pixpath/paint/yuv_convert.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::paint {
namespace {

Error backing_error(ErrorCode code, std::string_view stage, std::string reason) {
  return Error(code, "cpu backing", std::string(stage), std::move(reason));
}

// Intersection of [x, x + rw) x [y, y + rh) with [0, w) x [0, h). In 64 bits: any int
// coordinates and offsets may come in (x + rw, src.x + dx overflowed int before; found by
// fuzz_scroll, tests/data/regressions/scroll/).
Rect clip(int64_t x, int64_t y, int64_t rw, int64_t rh, int w, int h) {
  const int64_t x0 = std::max<int64_t>(x, 0), y0 = std::max<int64_t>(y, 0);
  const int64_t x1 = std::min<int64_t>(x + rw, w), y1 = std::min<int64_t>(y + rh, h);
  if (x1 <= x0 || y1 <= y0) return {0, 0, 0, 0};
  return {int(x0), int(y0), int(x1 - x0), int(y1 - y0)};
}

}  // namespace

Result<Picture> CpuBacking::black_framebuffer(int w, int h) {
  if (w <= 0 || h <= 0)
    return backing_error(ErrorCode::InvalidArgument, "create window",
                         "size " + std::to_string(w) + "x" + std::to_string(h) + " is empty");
  Picture fb;
  if (options_.allocate) {
    PIXPATH_TRY(fb, options_.allocate(w, h));
    if (fb.format() != kFormat || fb.width() != w || fb.height() != h)
      return backing_error(ErrorCode::Internal, "create window",
                           "the framebuffer allocator returned a picture of another format or size");
  } else {
    PIXPATH_TRY(fb, Picture::allocate(kFormat, w, h));
  }
  PIXPATH_TRY(PictureView v, fb.write());
  const auto& p = v.plane(0);
  for (int y = 0; y < h; ++y) {
    uint32_t* row = reinterpret_cast<uint32_t*>(p.unchecked_row(y));
    std::fill(row, row + w, 0xFF000000u);  // B, G, R = 0, X = 0xFF
  }
  return fb;
}

Result<CpuBacking::Window*> CpuBacking::find(int64_t wid, std::string_view stage) {
  auto it = windows_.find(wid);
  if (it == windows_.end())
    return backing_error(ErrorCode::InvalidArgument, stage,
                         "no window " + std::to_string(wid));
  return &it->second;
}

Result<CpuBacking::Window*> CpuBacking::find_idle(int64_t wid, std::string_view stage) {
  PIXPATH_TRY(Window * win, find(wid, stage));
  if (win->open_targets > 0)
    return backing_error(ErrorCode::Busy, stage,
                         "window " + std::to_string(wid) + " has a direct target open");
  return win;
}

Result<PictureView> CpuBacking::writable(Window& win) {
  if (!win.framebuffer.writable()) {
    if (options_.allocate) {  // the copy goes into the presenter's memory too
      PIXPATH_TRY(Picture fb, options_.allocate(win.framebuffer.width(), win.framebuffer.height()));
      PIXPATH_TRY(ConstPictureView s, win.framebuffer.read());
      PIXPATH_TRY(PictureView d, fb.write());
      PIXPATH_CHECK(copy_pixels(s, d));
      win.framebuffer = std::move(fb);
    } else {
      PIXPATH_TRY(win.framebuffer, std::move(win.framebuffer).make_writable());
    }
  }
  return win.framebuffer.write();
}

Result<void> CpuBacking::create_window(int64_t wid, int w, int h) {
  if (windows_.count(wid))
    return backing_error(ErrorCode::InvalidArgument, "create window",
                         "window " + std::to_string(wid) + " exists");
  PIXPATH_TRY(Picture fb, black_framebuffer(w, h));
  windows_[wid].framebuffer = std::move(fb);
  changed(wid, {0, 0, w, h});
  return ok();
}

Result<void> CpuBacking::resize_window(int64_t wid, int w, int h) {
  PIXPATH_TRY(Window * win, find_idle(wid, "resize window"));
  if (win->framebuffer.width() == w && win->framebuffer.height() == h) return ok();
  PIXPATH_TRY(Picture fb, black_framebuffer(w, h));
  int cw = std::min(w, win->framebuffer.width()), ch = std::min(h, win->framebuffer.height());
  PIXPATH_TRY(ConstPictureView src, win->framebuffer.read());
  PIXPATH_TRY(PictureView dst, fb.write());
  PIXPATH_TRY(ConstPictureView s, crop_view(src, 0, 0, cw, ch));
  PIXPATH_TRY(PictureView d, crop_view(dst, 0, 0, cw, ch));
  PIXPATH_CHECK(copy_pixels(s, d));
  win->framebuffer = std::move(fb);
  changed(wid, {0, 0, w, h});
  return ok();
}

Result<void> CpuBacking::destroy_window(int64_t wid) {
  PIXPATH_TRY(Window * win, find_idle(wid, "destroy window"));
  (void)win;
  windows_.erase(wid);
  return ok();
}

std::optional<Size> CpuBacking::window_size(int64_t wid) const {
  auto it = windows_.find(wid);
  if (it == windows_.end()) return std::nullopt;
  return Size{it->second.framebuffer.width(), it->second.framebuffer.height()};
}

std::vector<int64_t> CpuBacking::windows() const {
  std::vector<int64_t> out;
  for (const auto& [wid, win] : windows_) out.push_back(wid);
  return out;
}

Result<DirectTarget> CpuBacking::begin_direct(int64_t wid, Rect r) {
  PIXPATH_TRY(Window * win, find_idle(wid, "begin direct"));
  const int fw = win->framebuffer.width(), fh = win->framebuffer.height();
  if (r.w <= 0 || r.h <= 0 || r.x < 0 || r.y < 0 || r.x > fw - r.w || r.y > fh - r.h)
    return backing_error(ErrorCode::OutOfRange, "begin direct",
                         "rectangle " + std::to_string(r.w) + "x" + std::to_string(r.h) + "+" +
                             std::to_string(r.x) + "+" + std::to_string(r.y) +
                             " is not inside the window");
  PIXPATH_TRY(PictureView all, writable(*win));
  PIXPATH_TRY(PictureView v, crop_view(all, r.x, r.y, r.w, r.h));
  win->open_targets++;
  return DirectTarget{wid, r, v, next_token_++};
}

Result<void> CpuBacking::end_direct(DirectTarget target, bool written) {
  PIXPATH_TRY(Window * win, find(target.wid, "end direct"));
  if (win->open_targets <= 0)
    return backing_error(ErrorCode::InvalidArgument, "end direct", "no target is open");
  win->open_targets--;
  if (written) changed(target.wid, target.rect);
  return ok();
}

Result<void> CpuBacking::paint(int64_t wid, int x, int y, const Picture& picture, int w, int h) {
  PIXPATH_TRY(Window * win, find_idle(wid, "paint"));
  if (picture.empty())
    return backing_error(ErrorCode::InvalidArgument, "paint", "empty picture");
  if (w == 0 && h == 0) {
    w = picture.width();
    h = picture.height();
  }
  if (w <= 0 || h <= 0)
    return backing_error(ErrorCode::InvalidArgument, "paint", "empty destination size");
  const Rect dst_rect = clip(x, y, w, h, win->framebuffer.width(), win->framebuffer.height());
  if (dst_rect.w == 0) return ok();  // wholly outside: nothing to do
  PIXPATH_TRY(ConstPictureView src, picture.read());
  PIXPATH_TRY(PictureView all, writable(*win));
  const bool scaled = (w != picture.width() || h != picture.height());
  if (!scaled) {
    PIXPATH_TRY(ConstPictureView s,
                crop_view(src, dst_rect.x - x, dst_rect.y - y, dst_rect.w, dst_rect.h));
    PIXPATH_TRY(PictureView d, crop_view(all, dst_rect.x, dst_rect.y, dst_rect.w, dst_rect.h));
    PIXPATH_CHECK(s.format == kFormat ? copy_pixels(s, d) : convert_pixels(s, d));
    changed(wid, dst_rect);
    return ok();
  }
  // Scaled: bring the source to the framebuffer's format, scale into a w x h picture, then
  // copy the visible part (scaling straight into the framebuffer when nothing is clipped).
  Picture converted;
  ConstPictureView s = src;
  if (src.format != kFormat) {
    PIXPATH_TRY(converted, Picture::allocate(kFormat, src.width, src.height));
    PIXPATH_TRY(PictureView cv, converted.write());
    PIXPATH_CHECK(convert_pixels(src, cv));
    PIXPATH_TRY(s, converted.read());
  }
  if (dst_rect == Rect{x, y, w, h}) {
    PIXPATH_TRY(PictureView d, crop_view(all, x, y, w, h));
    PIXPATH_CHECK(scale_pixels(s, d));
    changed(wid, dst_rect);
    return ok();
  }
  PIXPATH_TRY(Picture full, Picture::allocate(kFormat, w, h));
  PIXPATH_TRY(PictureView fv, full.write());
  PIXPATH_CHECK(scale_pixels(s, fv));
  PIXPATH_TRY(ConstPictureView fs, full.read());
  PIXPATH_TRY(ConstPictureView part,
              crop_view(fs, dst_rect.x - x, dst_rect.y - y, dst_rect.w, dst_rect.h));
  PIXPATH_TRY(PictureView d, crop_view(all, dst_rect.x, dst_rect.y, dst_rect.w, dst_rect.h));
  PIXPATH_CHECK(copy_pixels(part, d));
  changed(wid, dst_rect);
  return ok();
}

Result<void> CpuBacking::paint_yuv(int64_t wid, int x, int y, const Picture& yuv,
                                   codecs::VideoColor color, int w, int h) {
  PIXPATH_TRY(Window * win, find_idle(wid, "paint"));
  if (yuv.empty()) return backing_error(ErrorCode::InvalidArgument, "paint", "empty picture");
  if (w == 0 && h == 0) {
    w = yuv.width();
    h = yuv.height();
  }
  const Rect inside = clip(x, y, w, h, win->framebuffer.width(), win->framebuffer.height());
  if (w != yuv.width() || h != yuv.height() || !(inside == Rect{x, y, w, h}))
    return Backing::paint_yuv(wid, x, y, yuv, color, w, h);  // via a converted picture
  PIXPATH_TRY(ConstPictureView src, yuv.read());
  PIXPATH_TRY(PictureView all, writable(*win));
  PIXPATH_TRY(PictureView d, crop_view(all, x, y, w, h));
  return yuv_to_rgb(src, color, d);
}

Result<void> CpuBacking::scroll(int64_t wid, std::span<const ScrollRect> rects) {
  PIXPATH_TRY(Window * win, find_idle(wid, "scroll"));
  const int fw = win->framebuffer.width(), fh = win->framebuffer.height();
  // One rectangle (xterm's usual scroll): move the rows in place, in the order that never
  // overwrites a row before it is read (memmove handles the overlap inside a row).
  if (rects.size() == 1 && rects[0].w > 0 && rects[0].h > 0) {
    const ScrollRect& r = rects[0];
    Rect src = clip(r.x, r.y, r.w, r.h, fw, fh);
    Rect dst = clip(int64_t{src.x} + r.dx, int64_t{src.y} + r.dy, src.w, src.h, fw, fh);
    if (src.w == 0 || dst.w == 0) return ok();
    src = {dst.x - r.dx, dst.y - r.dy, dst.w, dst.h};
    PIXPATH_TRY(PictureView all, writable(*win));
    const auto& plane = all.plane(0);
    const size_t bytes = static_cast<size_t>(dst.w) * 4;
    auto move_row = [&](int i) {
      std::memmove(plane.unchecked_row(dst.y + i) + static_cast<size_t>(dst.x) * 4,
                   plane.unchecked_row(src.y + i) + static_cast<size_t>(src.x) * 4, bytes);
    };
    if (r.dy <= 0)
      for (int i = 0; i < dst.h; ++i) move_row(i);
    else
      for (int i = dst.h - 1; i >= 0; --i) move_row(i);
    count_copy(static_cast<int64_t>(bytes) * dst.h);
    changed(wid, dst);
    return ok();
  }
  // Several rectangles. Phase 1: copy every source rectangle (clipped to the window and to where its destination
  // lands inside the window) as it is before any rectangle is applied.
  struct Move {
    Picture pixels;
    int dst_x, dst_y;
  };
  std::vector<Move> moves;
  moves.reserve(rects.size());
  {
    PIXPATH_TRY(ConstPictureView all, win->framebuffer.read());
    for (const ScrollRect& r : rects) {
      if (r.w <= 0 || r.h <= 0) continue;
      Rect src = clip(r.x, r.y, r.w, r.h, fw, fh);
      // the part whose destination is visible
      Rect dst = clip(int64_t{src.x} + r.dx, int64_t{src.y} + r.dy, src.w, src.h, fw, fh);
      if (src.w == 0 || dst.w == 0) continue;
      src = {dst.x - r.dx, dst.y - r.dy, dst.w, dst.h};
      PIXPATH_TRY(ConstPictureView sv, crop_view(all, src.x, src.y, src.w, src.h));
      PIXPATH_TRY(Picture copy, Picture::allocate(kFormat, src.w, src.h));
      PIXPATH_TRY(PictureView cv, copy.write());
      PIXPATH_CHECK(copy_pixels(sv, cv));
      moves.push_back({std::move(copy), dst.x, dst.y});
    }
  }
  // Phase 2: write them to their destinations.
  PIXPATH_TRY(PictureView all, writable(*win));
  for (const Move& m : moves) {
    PIXPATH_TRY(ConstPictureView s, m.pixels.read());
    PIXPATH_TRY(PictureView d, crop_view(all, m.dst_x, m.dst_y, s.width, s.height));
    PIXPATH_CHECK(copy_pixels(s, d));
    changed(wid, {m.dst_x, m.dst_y, s.width, s.height});
  }
  return ok();
}

Result<Picture> CpuBacking::snapshot(int64_t wid) {
  PIXPATH_TRY(Window * win, find_idle(wid, "snapshot"));
  return win->framebuffer;  // shares: copy-on-write on the next paint
}

}  // namespace pixpath::paint
