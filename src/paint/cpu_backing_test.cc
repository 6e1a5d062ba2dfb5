#include "pixpath/paint/cpu_backing.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "paint/testing/test_support.h"
#include "pixpath/core/counters.h"
#include "pixpath/codecs/image_io.h"

namespace pixpath::paint {
namespace {

using testing::bgrx;
using testing::bgrx_bytes;
using testing::pixel;

Picture bgrx_picture(int w, int h, uint32_t (*f)(int, int)) {
  auto bytes = bgrx_bytes(w, h, f);
  auto pic = Picture::allocate(PixelFormat::BGRX, w, h);
  auto v = pic->write();
  for (int y = 0; y < h; ++y)
    std::memcpy(v->plane(0).row(y).data(), &bytes[static_cast<size_t>(y) * w * 4],
                static_cast<size_t>(w) * 4);
  return *pic;
}

uint32_t coords(int x, int y) { return bgrx(static_cast<uint8_t>(x), static_cast<uint8_t>(y), 7); }

TEST(CpuBacking, CreateIsBlackAndResizeKeepsContent) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(1, 8, 6).ok());
  EXPECT_FALSE(b.create_window(1, 8, 6).ok());
  EXPECT_EQ(testing::window_pixel(b, 1, 3, 3), bgrx(0, 0, 0));
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(8, 6, coords)).ok());
  ASSERT_TRUE(b.resize_window(1, 10, 4).ok());
  EXPECT_EQ(*b.window_size(1), (Size{10, 4}));
  EXPECT_EQ(testing::window_pixel(b, 1, 7, 3), coords(7, 3));
  EXPECT_EQ(testing::window_pixel(b, 1, 9, 0), bgrx(0, 0, 0));
  ASSERT_TRUE(b.destroy_window(1).ok());
  EXPECT_FALSE(b.window_size(1));
  EXPECT_FALSE(b.paint(1, 0, 0, bgrx_picture(1, 1, coords)).ok());
}

TEST(CpuBacking, PaintClipsAndConverts) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(1, 4, 4).ok());
  // partly outside: only the inside part lands
  ASSERT_TRUE(b.paint(1, 2, 2, bgrx_picture(4, 4, coords)).ok());
  EXPECT_EQ(testing::window_pixel(b, 1, 3, 3), coords(1, 1));
  EXPECT_EQ(testing::window_pixel(b, 1, 1, 1), bgrx(0, 0, 0));
  // RGB source is converted
  auto rgb = Picture::allocate(PixelFormat::RGB, 1, 1);
  auto v = rgb->write();
  uint8_t* p = v->plane(0).row(0).data();
  p[0] = 10, p[1] = 20, p[2] = 30;
  ASSERT_TRUE(b.paint(1, 0, 0, *rgb).ok());
  EXPECT_EQ(testing::window_pixel(b, 1, 0, 0), bgrx(10, 20, 30));
}

TEST(CpuBacking, ScaledPaint) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(1, 8, 8).ok());
  auto src = bgrx_picture(2, 2, [](int, int) { return bgrx(200, 100, 50); });
  ASSERT_TRUE(b.paint(1, 2, 2, src, 4, 4).ok());
  for (int y = 2; y < 6; ++y)
    for (int x = 2; x < 6; ++x) EXPECT_EQ(testing::window_pixel(b, 1, x, y), bgrx(200, 100, 50));
  EXPECT_EQ(testing::window_pixel(b, 1, 6, 6), bgrx(0, 0, 0));
  EXPECT_EQ(testing::window_pixel(b, 1, 1, 1), bgrx(0, 0, 0));
  // scaled and clipped at the right edge
  ASSERT_TRUE(b.paint(1, 6, 0, src, 4, 4).ok());
  EXPECT_EQ(testing::window_pixel(b, 1, 7, 3), bgrx(200, 100, 50));
}

TEST(CpuBacking, ScrollRectanglesAreRelativeToTheContentBefore) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(1, 4, 4).ok());
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(4, 4, coords)).ok());
  // swap the top and bottom halves: the second rectangle must read the original top half
  std::vector<ScrollRect> rects = {{0, 0, 4, 2, 0, 2}, {0, 2, 4, 2, 0, -2}};
  ASSERT_TRUE(b.scroll(1, rects).ok());
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x)
      EXPECT_EQ(testing::window_pixel(b, 1, x, y), coords(x, (y + 2) % 4)) << x << "," << y;
  // overlapping scroll up by one row (xterm): row y takes old row y + 1
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(4, 4, coords)).ok());
  std::vector<ScrollRect> up = {{0, 1, 4, 3, 0, -1}};
  ASSERT_TRUE(b.scroll(1, up).ok());
  for (int y = 0; y < 3; ++y) EXPECT_EQ(testing::window_pixel(b, 1, 2, y), coords(2, y + 1));
  EXPECT_EQ(testing::window_pixel(b, 1, 2, 3), coords(2, 3));  // left as it was
  // destination partly outside: clipped, no error
  std::vector<ScrollRect> out = {{0, 0, 4, 4, 0, 3}};
  ASSERT_TRUE(b.scroll(1, out).ok());
}

// fuzz_scroll found x + w and x + dx overflowing int in the clipping (UBSan: signed integer
// overflow); tests/data/regressions/scroll/x_plus_w_overflows_int is its input.
TEST(CpuBacking, ScrollAndPaintWithExtremeCoordinatesClipSafely) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(1, 4, 4).ok());
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(4, 4, coords)).ok());
  const int big = std::numeric_limits<int>::max(), small = std::numeric_limits<int>::min();
  for (const auto& rects : std::vector<std::vector<ScrollRect>>{
           {{1711276032, 0, 1717960704, 4, 0, 0}},
           {{0, 0, 4, 4, big, 0}},
           {{0, 0, 4, 4, small, small}},
           {{small, small, big, big, 1, 1}},
           {{big, big, big, big, small, small}, {0, 1, 4, 3, 0, -1}}}) {
    ASSERT_TRUE(b.scroll(1, rects).ok());
  }
  // Only the last set's second rectangle touched the window: one row up.
  EXPECT_EQ(testing::window_pixel(b, 1, 2, 0), coords(2, 1));
  EXPECT_TRUE(b.paint(1, big - 1, 0, bgrx_picture(4, 4, coords)).ok());
  EXPECT_TRUE(b.paint(1, small, small, bgrx_picture(4, 4, coords)).ok());
  EXPECT_EQ(testing::window_pixel(b, 1, 2, 0), coords(2, 1));  // both wholly outside
}

TEST(CpuBacking, DirectTargetBlocksOtherUseOfTheWindow) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(1, 4, 4).ok());
  EXPECT_FALSE(b.begin_direct(1, {2, 2, 4, 4}).ok());  // not inside
  auto t = b.begin_direct(1, {1, 1, 2, 2});
  ASSERT_TRUE(t.ok());
  auto resized = b.resize_window(1, 8, 8);
  auto snap = b.snapshot(1);
  auto painted = b.paint(1, 0, 0, bgrx_picture(1, 1, coords));
  ASSERT_FALSE(resized.ok());
  ASSERT_FALSE(snap.ok());
  ASSERT_FALSE(painted.ok());
  for (const Error& e : {resized.error(), snap.error(), painted.error()})
    EXPECT_EQ(e.code(), ErrorCode::Busy) << e.message();
  std::memset(t->view.plane(0).row(0).data(), 0x40, 8);
  ASSERT_TRUE(b.end_direct(*t, true).ok());
  EXPECT_EQ(testing::window_pixel(b, 1, 1, 1), 0xFF404040u);
  EXPECT_EQ(testing::window_pixel(b, 1, 1, 2), bgrx(0, 0, 0));
}

TEST(CpuBacking, SnapshotSharesAndNextPaintCopiesOnce) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(1, 16, 16).ok());
  auto before = counters();
  auto snap = b.snapshot(1);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(counters().copies, before.copies);  // snapshot: no copy
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(1, 1, coords)).ok());
  EXPECT_EQ(counters().copies, before.copies + 2);  // copy-on-write + the paint itself
  EXPECT_EQ(pixel(*snap, 0, 0), bgrx(0, 0, 0));     // the snapshot did not change
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(1, 1, coords)).ok());
  EXPECT_EQ(counters().copies, before.copies + 3);
}

TEST(CpuBacking, SnapshotPngRoundTrips) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(5, 7, 3).ok());
  ASSERT_TRUE(b.paint(5, 0, 0, bgrx_picture(7, 3, coords)).ok());
  auto png = snapshot_png(b, 5);
  ASSERT_TRUE(png.ok()) << png.error().message();
  auto rgba = codecs::read_image_as(*png, PixelFormat::RGBA);
  ASSERT_TRUE(rgba.ok()) << rgba.error().message();
  ASSERT_EQ(rgba->width(), 7);
  auto v = rgba->read();
  const uint8_t* p = v->plane(0).row(2).data() + 4 * 4;
  EXPECT_EQ(p[0], 4);  // r = x
  EXPECT_EQ(p[1], 2);  // g = y
  EXPECT_EQ(p[2], 7);
  EXPECT_EQ(p[3], 255);
}

}  // namespace
}  // namespace pixpath::paint

namespace pixpath::paint {
namespace {

TEST(CpuBacking, SingleRectScrollInPlaceBothDirections) {
  CpuBacking b;
  ASSERT_TRUE(b.create_window(1, 6, 6).ok());
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(6, 6, coords)).ok());
  std::vector<ScrollRect> down = {{1, 0, 4, 4, 1, 2}};  // overlapping, down and right
  auto before = counters();
  ASSERT_TRUE(b.scroll(1, down).ok());
  EXPECT_EQ(counters().copies, before.copies + 1);  // in place: one copy, no temporary
  for (int y = 2; y < 6; ++y)
    for (int x = 2; x < 6; ++x)
      EXPECT_EQ(testing::window_pixel(b, 1, x, y), coords(x - 1, y - 2)) << x << "," << y;
  EXPECT_EQ(testing::window_pixel(b, 1, 0, 0), coords(0, 0));
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(6, 6, coords)).ok());
  std::vector<ScrollRect> up = {{0, 2, 6, 4, 0, -2}};
  ASSERT_TRUE(b.scroll(1, up).ok());
  for (int y = 0; y < 4; ++y) EXPECT_EQ(testing::window_pixel(b, 1, 3, y), coords(3, y + 2));
}

// A presenter's allocator holds every framebuffer (new, resized, and the copy a snapshot forces)
// and hears every changed rectangle, clipped to the window.
TEST(CpuBacking, PresenterAllocatesFramebuffersAndHearsChanges) {
  int allocations = 0;
  std::vector<std::pair<int64_t, Rect>> changes;
  CpuBackingOptions o;
  o.allocate = [&](int w, int h) {
    ++allocations;
    return Picture::allocate(CpuBacking::kFormat, w, h, {.stride = size_t(w) * 4});
  };
  o.changed = [&](int64_t wid, Rect r) { changes.emplace_back(wid, r); };
  CpuBacking b(std::move(o));
  ASSERT_TRUE(b.create_window(1, 8, 6).ok());
  EXPECT_EQ(allocations, 1);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes.back().second, (Rect{0, 0, 8, 6}));
  ASSERT_TRUE(b.paint(1, 6, 4, bgrx_picture(4, 4, coords)).ok());
  EXPECT_EQ(changes.back().second, (Rect{6, 4, 2, 2}));  // clipped
  std::vector<ScrollRect> up = {{0, 2, 8, 4, 0, -2}};
  ASSERT_TRUE(b.scroll(1, up).ok());
  EXPECT_EQ(changes.back().second, (Rect{0, 0, 8, 4}));
  auto t = b.begin_direct(1, {1, 1, 2, 2});
  ASSERT_TRUE(t.ok());
  const size_t before = changes.size();
  ASSERT_TRUE(b.end_direct(std::move(*t), false).ok());
  EXPECT_EQ(changes.size(), before) << "an unwritten target changes nothing";
  t = b.begin_direct(1, {1, 1, 2, 2});
  ASSERT_TRUE(b.end_direct(std::move(*t), true).ok());
  EXPECT_EQ(changes.back().second, (Rect{1, 1, 2, 2}));
  // A live snapshot: the next write copies into the presenter's memory, not the heap.
  auto snap = b.snapshot(1);
  ASSERT_TRUE(snap.ok());
  const void* shown = b.framebuffer(1)->plane(0).storage->data();
  ASSERT_TRUE(b.paint(1, 0, 0, bgrx_picture(1, 1, coords)).ok());
  EXPECT_EQ(allocations, 2);
  EXPECT_NE(b.framebuffer(1)->plane(0).storage->data(), shown);
  EXPECT_EQ(b.framebuffer(1)->plane(0).stride, size_t(8) * 4);
  ASSERT_TRUE(b.resize_window(1, 10, 3).ok());
  EXPECT_EQ(allocations, 3);
  EXPECT_EQ(changes.back().second, (Rect{0, 0, 10, 3}));
  EXPECT_EQ(testing::window_pixel(b, 1, 0, 0), coords(0, 0));
}

}  // namespace
}  // namespace pixpath::paint
