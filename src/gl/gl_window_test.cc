#include "pixpath/gl/gl_window.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gl/testing/gl_test_util.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/pixel_format.h"

namespace pixpath::gl {
namespace {

using Px = std::array<uint8_t, 4>;

// A w x h RGBA image on the host: what the window should hold.
struct Image {
  int w = 0, h = 0;
  std::vector<Px> px;
  Image() = default;
  Image(int width, int height, Px fill) : w(width), h(height), px(size_t(width) * size_t(height), fill) {}
  Px& at(int x, int y) { return px[size_t(y) * size_t(w) + size_t(x)]; }
  const Px& at(int x, int y) const { return px[size_t(y) * size_t(w) + size_t(x)]; }
};

Image from_picture(const Picture& p) {
  auto v = p.read();
  EXPECT_TRUE(v.ok());
  Image img(p.width(), p.height(), {0, 0, 0, 0});
  for (int y = 0; y < p.height(); ++y) {
    const uint8_t* row = v->planes[0].unchecked_row(y);
    for (int x = 0; x < p.width(); ++x) std::memcpy(img.at(x, y).data(), row + 4 * x, 4);
  }
  return img;
}

// Compares a and b over their whole area; at most `tolerance` difference per channel.
::testing::AssertionResult same(const Image& got, const Image& want, int tolerance = 0) {
  if (got.w != want.w || got.h != want.h) {
    return ::testing::AssertionFailure() << "size " << got.w << "x" << got.h << " vs " << want.w << "x" << want.h;
  }
  int bad = 0, worst = 0;
  std::string first;
  for (int y = 0; y < got.h; ++y) {
    for (int x = 0; x < got.w; ++x) {
      for (int c = 0; c < 4; ++c) {
        int d = std::abs(int(got.at(x, y)[c]) - int(want.at(x, y)[c]));
        worst = std::max(worst, d);
        if (d > tolerance) {
          if (bad++ == 0) {
            char s[160];
            snprintf(s, sizeof s, "first at (%d,%d): got %d,%d,%d,%d want %d,%d,%d,%d", x, y, got.at(x, y)[0],
                     got.at(x, y)[1], got.at(x, y)[2], got.at(x, y)[3], want.at(x, y)[0], want.at(x, y)[1],
                     want.at(x, y)[2], want.at(x, y)[3]);
            first = s;
          }
          break;
        }
      }
    }
  }
  if (bad) return ::testing::AssertionFailure() << bad << " pixels differ (worst " << worst << "), " << first;
  return ::testing::AssertionSuccess() << "worst difference " << worst;
}

uint8_t pattern(int x, int y, int plane, int seed) {
  uint32_t v = uint32_t(x) * 73856093u ^ uint32_t(y) * 19349663u ^ uint32_t(plane + 1) * 83492791u ^
               uint32_t(seed) * 2654435761u;
  v ^= v >> 13;
  v *= 0x5bd1e995u;
  v ^= v >> 15;
  return uint8_t(v);
}

void fill_pattern(const PictureView& v, int seed) {
  for (int p = 0; p < v.plane_count; ++p) {
    const auto& pl = v.planes[size_t(p)];
    for (int y = 0; y < pl.height; ++y) {
      uint8_t* row = pl.unchecked_row(y);
      for (size_t i = 0; i < pl.row_bytes(); ++i) row[i] = pattern(int(i), y, p, seed);
    }
  }
}

// The RGBA a packed (or GRAY8) pixel stands for: X bytes are opaque.
Px packed_rgba(PixelFormat f, const uint8_t* p) {
  if (f == PixelFormat::GRAY8) return {p[0], p[0], p[0], 255};
  const auto& c = info(f).channels;
  return {p[c.r], p[c.g], p[c.b], c.a >= 0 ? p[c.a] : uint8_t(255)};
}

// CPU reference YUV -> RGB (double precision, rounded), the definition the shader follows.
Px yuv_rgba(int Y, int U, int V, YuvColor color) {
  const bool full = color.range == YuvRange::Full;
  const double kr = color.matrix == YuvMatrix::BT709 ? 0.2126 : 0.299;
  const double kb = color.matrix == YuvMatrix::BT709 ? 0.0722 : 0.114;
  const double kg = 1 - kr - kb;
  const double y = full ? Y / 255.0 : (Y - 16) / 219.0;
  const double cb = full ? (U - 128) / 255.0 : (U - 128) / 224.0;
  const double cr = full ? (V - 128) / 255.0 : (V - 128) / 224.0;
  const double r = y + 2 * (1 - kr) * cr;
  const double g = y - 2 * kb * (1 - kb) / kg * cb - 2 * kr * (1 - kr) / kg * cr;
  const double b = y + 2 * (1 - kb) * cb;
  auto q = [](double v) { return uint8_t(std::lround(std::clamp(v, 0.0, 1.0) * 255.0)); };
  return {q(r), q(g), q(b), 255};
}

// What painting `v` at (x, y) unscaled does to `img`.
void paint_reference(Image& img, const ConstPictureView& v, int x0, int y0, YuvColor color = {}) {
  const auto& fi = info(v.format);
  for (int y = 0; y < v.height; ++y) {
    for (int x = 0; x < v.width; ++x) {
      const int wx = x0 + x, wy = y0 + y;
      if (wx < 0 || wy < 0 || wx >= img.w || wy >= img.h) continue;
      Px out;
      if (v.format == PixelFormat::NV12) {
        const uint8_t* uv = v.planes[1].unchecked_row(y >> 1) + 2 * (x >> 1);
        out = yuv_rgba(v.planes[0].unchecked_row(y)[x], uv[0], uv[1], color);
      } else if (fi.planes == 3) {
        const int cx = x >> fi.chroma_shift_x, cy = y >> fi.chroma_shift_y;
        out = yuv_rgba(v.planes[0].unchecked_row(y)[x], v.planes[1].unchecked_row(cy)[cx],
                       v.planes[2].unchecked_row(cy)[cx], color);
      } else {
        out = packed_rgba(v.format, v.planes[0].unchecked_row(y) + size_t(x) * size_t(fi.bytes_per_pixel[0]));
      }
      img.at(wx, wy) = out;
    }
  }
}

struct Config {
  const char* name;
  GlContextOptions options;
};

std::vector<Config> configs() {
  std::vector<Config> out;
  out.push_back({"default", {}});
  GlContextOptions o;
  o.disable_buffer_storage = true;
  out.push_back({"no_buffer_storage", o});
  o.client_uploads = GlContextOptions::ClientUploads::Staged;  // and the ring's fallback mapping
  out.push_back({"no_buffer_storage_staged", o});
  o = {};
  o.client_uploads = GlContextOptions::ClientUploads::Staged;
  out.push_back({"staged_client_uploads", o});
  o.client_uploads = GlContextOptions::ClientUploads::Direct;
  out.push_back({"direct_client_uploads", o});
  o = {};
  o.disable_bgra = true;
  o.disable_copy_image = true;
  o.disable_timer_query = true;
  out.push_back({"no_bgra_no_copy_image", o});
  o = {};
  o.force_gles = true;
  out.push_back({"gles", o});
  return out;
}

const Px kBackground = {0, 0, 0, 255};

class GlWindowTest : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    testing::make_test_context(&ctx_, GetParam().options);
  }
  std::unique_ptr<GlWindow> window(int w, int h, GlWindowOptions o = {}) {
    auto win = GlWindow::create(ctx_, w, h, o);
    EXPECT_TRUE(win.ok()) << win.error().message();
    return win.ok() ? std::move(*win) : nullptr;
  }
  Image read(const GlWindow& w) {
    auto pic = w.readback();
    EXPECT_TRUE(pic.ok()) << pic.error().message();
    return pic.ok() ? from_picture(*pic) : Image();
  }
  std::shared_ptr<GlContext> ctx_;
};

#define NEED_CONTEXT() \
  if (!ctx_) return

const PixelFormat kPacked[] = {PixelFormat::RGB,  PixelFormat::BGR,  PixelFormat::RGBX, PixelFormat::BGRX,
                               PixelFormat::XRGB, PixelFormat::XBGR, PixelFormat::RGBA, PixelFormat::BGRA,
                               PixelFormat::ARGB, PixelFormat::ABGR, PixelFormat::GRAY8};

TEST_P(GlWindowTest, HostPicturesUploadExactly) {
  NEED_CONTEXT();
  auto win = window(96, 64);
  ASSERT_TRUE(win);
  Image want(96, 64, kBackground);
  int seed = 0;
  for (PixelFormat f : kPacked) {
    // Odd size, odd place, a stride with padding that is not a multiple of 4 for 3-byte pixels.
    const int w = 37, h = 23, x = 5 + seed * 3, y = 7 + seed * 2;
    const size_t bpp = size_t(info(f).bytes_per_pixel[0]);
    AllocateOptions ao;
    ao.stride = size_t(w) * bpp + (bpp == 3 ? 1 : 12);
    auto pic = Picture::allocate(f, w, h, ao);
    ASSERT_TRUE(pic.ok()) << pic.error().message();
    auto v = pic->write();
    ASSERT_TRUE(v.ok());
    fill_pattern(*v, ++seed);
    const auto copies = counters().copies;
    const auto before = ctx_->stats();
    auto r = win->paint(*pic, {.x = x, .y = y, .coding = "rgb24"});
    ASSERT_TRUE(r.ok()) << name(f) << ": " << r.error().message();
    // Staged: one copy into the upload buffer per picture GL takes as it is (not GRAY8, which
    // goes through the shader); straight from host memory: none.
    const auto after = ctx_->stats();
    const int64_t staged = after.staged_uploads - before.staged_uploads;
    if (!ctx_->caps().staged_client_uploads) {
      EXPECT_EQ(staged, 0) << name(f);
    } else if (f == PixelFormat::RGBA || f == PixelFormat::RGBX) {
      EXPECT_EQ(staged, 1) << name(f);  // GL takes these as they are on every configuration
    }
    EXPECT_EQ(after.client_uploads - before.client_uploads + staged, 1) << name(f);
    EXPECT_EQ(counters().copies - copies, staged) << name(f) << ": host copies other than the staging copy";
    EXPECT_EQ(after.host_copies - before.host_copies, staged) << name(f);
    paint_reference(want, *v, x, y);
    EXPECT_TRUE(same(read(*win), want)) << name(f);
  }
}

// A host picture larger than the upload budget cannot be staged: it goes up straight from host
// memory, with the same pixels.
TEST(GlWindowStaging, OverTheUploadBudgetGoesStraightFromHostMemory) {
  std::shared_ptr<GlContext> ctx;
  GlContextOptions o;
  o.client_uploads = GlContextOptions::ClientUploads::Staged;
  o.upload_budget_bytes = size_t{256} << 10;
  testing::make_test_context(&ctx, o);
  if (!ctx) return;
  ASSERT_TRUE(ctx->caps().staged_client_uploads);
  auto win = GlWindow::create(ctx, 400, 300);
  ASSERT_TRUE(win.ok()) << win.error().message();
  Image want(400, 300, kBackground);
  int seed = 7;
  for (int side : {64, 300}) {  // 16 KiB: staged; 352 KiB: over the 256 KiB budget
    auto pic = Picture::allocate(PixelFormat::BGRX, side, side);
    ASSERT_TRUE(pic.ok());
    auto v = pic->write();
    fill_pattern(*v, ++seed);
    const auto before = ctx->stats();
    ASSERT_TRUE((*win)->paint(*pic, {.x = 3, .y = 2}).ok());
    const auto after = ctx->stats();
    EXPECT_EQ(after.staged_uploads - before.staged_uploads, side == 64 ? 1 : 0) << side;
    EXPECT_EQ(after.client_uploads - before.client_uploads, side == 64 ? 0 : 1) << side;
    paint_reference(want, *v, 3, 2);
    auto back = (*win)->readback();
    ASSERT_TRUE(back.ok());
    EXPECT_TRUE(same(from_picture(*back), want)) << side;
  }
}

TEST_P(GlWindowTest, MappedUploadsExactly) {
  NEED_CONTEXT();
  auto win = window(80, 50);
  ASSERT_TRUE(win);
  Image want(80, 50, kBackground);
  int seed = 100;
  for (PixelFormat f : kPacked) {
    auto slot = win->begin_upload(f, 31, 19);
    ASSERT_TRUE(slot.ok()) << slot.error().message();
    fill_pattern(slot->view(), ++seed);  // the decoder's write
    paint_reference(want, slot->view(), seed % 40, seed % 25);
    auto r = win->paint(std::move(*slot), {.x = seed % 40, .y = seed % 25});
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_TRUE(same(read(*win), want)) << name(f);
  }
  auto stats = ctx_->stats();
  EXPECT_EQ(stats.mapped_uploads, int64_t(std::size(kPacked)));
  EXPECT_EQ(stats.host_copies, 0);
}

TEST_P(GlWindowTest, PaintsOutsideTheWindowAreClipped) {
  NEED_CONTEXT();
  auto win = window(40, 30);
  ASSERT_TRUE(win);
  Image want(40, 30, kBackground);
  auto pic = Picture::allocate(PixelFormat::BGRX, 25, 20);
  ASSERT_TRUE(pic.ok());
  auto v = pic->write();
  fill_pattern(*v, 7);
  for (auto [x, y] : {std::pair{-10, -5}, std::pair{30, 20}, std::pair{-30, 0}}) {
    ASSERT_TRUE(win->paint(*pic, {.x = x, .y = y}).ok());
    paint_reference(want, *v, x, y);
  }
  EXPECT_TRUE(same(read(*win), want));
}

TEST_P(GlWindowTest, YuvConvertsWithinTwo) {
  NEED_CONTEXT();
  auto win = window(72, 48);
  ASSERT_TRUE(win);
  Image want(72, 48, kBackground);
  int seed = 200;
  for (PixelFormat f : {PixelFormat::YUV420P, PixelFormat::YUV422P, PixelFormat::YUV444P, PixelFormat::NV12}) {
    for (YuvMatrix m : {YuvMatrix::BT601, YuvMatrix::BT709}) {
      for (YuvRange range : {YuvRange::Full, YuvRange::Studio}) {
        for (bool mapped : {false, true}) {
          const YuvColor color{m, range};
          const int w = 33, h = 17, x = (seed * 7) % 39, y = (seed * 5) % 31;
          ++seed;
          PaintParams params{.x = x, .y = y, .coding = "jpeg", .yuv = color};
          if (mapped) {
            auto slot = win->begin_upload(f, w, h);
            ASSERT_TRUE(slot.ok()) << slot.error().message();
            fill_pattern(slot->view(), seed);
            paint_reference(want, slot->view(), x, y, color);
            ASSERT_TRUE(win->paint(std::move(*slot), params).ok());
          } else {
            auto pic = Picture::allocate(f, w, h);
            ASSERT_TRUE(pic.ok());
            auto v = pic->write();
            fill_pattern(*v, seed);
            paint_reference(want, *v, x, y, color);
            auto r = win->paint(*pic, params);
            ASSERT_TRUE(r.ok()) << r.error().message();
          }
          auto result = same(read(*win), want, 2);
          EXPECT_TRUE(result) << name(f) << (m == YuvMatrix::BT709 ? " BT.709" : " BT.601")
                              << (range == YuvRange::Full ? " full" : " studio") << (mapped ? " mapped" : " host");
        }
      }
    }
  }
}

// Bilinear reference with pixel centres at .5 and clamping at the edges (what the shader does).
Image scale_reference(const Image& src, int dw, int dh) {
  Image out(dw, dh, {0, 0, 0, 0});
  for (int y = 0; y < dh; ++y) {
    for (int x = 0; x < dw; ++x) {
      double sx = std::clamp((x + 0.5) * src.w / dw, 0.5, src.w - 0.5) - 0.5;
      double sy = std::clamp((y + 0.5) * src.h / dh, 0.5, src.h - 0.5) - 0.5;
      int x0 = int(sx), y0 = int(sy);
      int x1 = std::min(x0 + 1, src.w - 1), y1 = std::min(y0 + 1, src.h - 1);
      double fx = sx - x0, fy = sy - y0;
      for (int c = 0; c < 4; ++c) {
        double v = (1 - fy) * ((1 - fx) * src.at(x0, y0)[c] + fx * src.at(x1, y0)[c]) +
                   fy * ((1 - fx) * src.at(x0, y1)[c] + fx * src.at(x1, y1)[c]);
        out.at(x, y)[c] = uint8_t(std::lround(v));
      }
    }
  }
  return out;
}

TEST_P(GlWindowTest, ScaledPaints) {
  NEED_CONTEXT();
  auto win = window(100, 80);
  ASSERT_TRUE(win);
  // A smooth picture (scaling noise is meaningless): 20x15 BGRX gradients, painted at 2.5x / 0.5x.
  const int sw = 20, sh = 15;
  auto pic = Picture::allocate(PixelFormat::BGRX, sw, sh);
  ASSERT_TRUE(pic.ok());
  auto v = pic->write();
  Image src(sw, sh, {0, 0, 0, 255});
  for (int y = 0; y < sh; ++y) {
    for (int x = 0; x < sw; ++x) {
      uint8_t* p = v->planes[0].unchecked_row(y) + 4 * x;
      p[0] = uint8_t(10 + x * 11);  // B
      p[1] = uint8_t(20 + y * 13);  // G
      p[2] = uint8_t(200 - x * 5 - y * 4);
      p[3] = 0;
      src.at(x, y) = {p[2], p[1], p[0], 255};
    }
  }
  for (auto [dw, dh] : {std::pair{50, 37}, std::pair{10, 8}}) {
    ASSERT_TRUE(win->fill(0, 0, 100, 80, {0, 0, 0, 255}).ok());
    auto r = win->paint(*pic, {.x = 3, .y = 4, .width = dw, .height = dh});
    ASSERT_TRUE(r.ok()) << r.error().message();
    Image got = read(*win), want(100, 80, kBackground);
    Image scaled = scale_reference(src, dw, dh);
    for (int y = 0; y < dh; ++y)
      for (int x = 0; x < dw; ++x) want.at(3 + x, 4 + y) = scaled.at(x, y);
    EXPECT_TRUE(same(got, want, 2)) << dw << "x" << dh;
  }
}

// What xpra's scroll does on the CPU: every source relative to the picture before the scroll.
void scroll_reference(Image& img, std::span<const ScrollRect> rects) {
  const Image before = img;
  for (const auto& r : rects) {
    for (int y = r.y; y < r.y + r.h; ++y) {
      for (int x = r.x; x < r.x + r.w; ++x) {
        const int tx = x + r.dx, ty = y + r.dy;
        if (x < 0 || y < 0 || x >= img.w || y >= img.h || tx < 0 || ty < 0 || tx >= img.w || ty >= img.h) continue;
        img.at(tx, ty) = before.at(x, y);
      }
    }
  }
}

TEST_P(GlWindowTest, ScrollOverlapping) {
  NEED_CONTEXT();
  auto win = window(64, 96);
  ASSERT_TRUE(win);
  auto pic = Picture::allocate(PixelFormat::RGBA, 64, 96);
  ASSERT_TRUE(pic.ok());
  auto v = pic->write();
  fill_pattern(*v, 300);
  ASSERT_TRUE(win->paint(*pic, {}).ok());
  Image want(64, 96, kBackground);
  paint_reference(want, *v, 0, 0);
  // Overlapping up-scroll, a down-scroll that reads what the first one writes, one partly
  // outside the window, one sideways.
  const ScrollRect rects[] = {{0, 10, 64, 60, 0, -7}, {0, 50, 32, 30, 0, 9}, {10, 80, 20, 30, 0, 5},
                              {4, 2, 30, 6, 3, 0}};
  for (int round = 0; round < 3; ++round) {
    ASSERT_TRUE(win->scroll(rects).ok());
    scroll_reference(want, rects);
    EXPECT_TRUE(same(read(*win), want)) << "round " << round;
  }
}

TEST_P(GlWindowTest, ResizeKeepsContent) {
  NEED_CONTEXT();
  auto win = window(50, 40);
  ASSERT_TRUE(win);
  auto pic = Picture::allocate(PixelFormat::RGBA, 50, 40);
  ASSERT_TRUE(pic.ok());
  auto v = pic->write();
  fill_pattern(*v, 400);
  ASSERT_TRUE(win->paint(*pic, {}).ok());
  const auto gen = win->texture_generation();
  ASSERT_TRUE(win->resize(70, 45).ok());
  EXPECT_NE(win->texture_generation(), gen);
  Image want(70, 45, kBackground);
  paint_reference(want, *v, 0, 0);
  EXPECT_TRUE(same(read(*win), want));
  ASSERT_TRUE(win->resize(30, 44).ok());
  Image smaller(30, 44, kBackground);
  paint_reference(smaller, *v, 0, 0);
  EXPECT_TRUE(same(read(*win), smaller));
  // Paints after the resize land in the new texture.
  auto small = Picture::allocate(PixelFormat::BGRA, 10, 10);
  auto sv = small->write();
  fill_pattern(*sv, 401);
  ASSERT_TRUE(win->paint(*small, {.x = 25, .y = 40}).ok());
  paint_reference(smaller, *sv, 25, 40);
  EXPECT_TRUE(same(read(*win), smaller));
}

TEST_P(GlWindowTest, PaintBoxesOutlineEachPaint) {
  NEED_CONTEXT();
  GlWindowOptions o;
  o.paint_boxes = true;
  auto win = window(40, 40, o);
  ASSERT_TRUE(win);
  auto pic = Picture::allocate(PixelFormat::RGBA, 10, 8);
  auto v = pic->write();
  fill_pattern(*v, 500);
  ASSERT_TRUE(win->paint(*pic, {.x = 5, .y = 6, .coding = "jpeg"}).ok());
  Image got = read(*win);
  const Px purple = {128, 0, 128, 255};
  EXPECT_EQ(got.at(5, 6), purple);
  EXPECT_EQ(got.at(14, 13), purple);
  EXPECT_EQ(got.at(9, 6), purple);
  EXPECT_EQ(got.at(5, 10), purple);
  Image inner(40, 40, kBackground);
  paint_reference(inner, *v, 5, 6);
  EXPECT_EQ(got.at(7, 8), inner.at(7, 8));
}

TEST_P(GlWindowTest, UploadBuffersAreReusedWithoutFinish) {
  NEED_CONTEXT();
  auto win = window(256, 256);
  ASSERT_TRUE(win);
  for (int i = 0; i < 60; ++i) {
    auto slot = win->begin_upload(PixelFormat::BGRX, 256, 256);
    ASSERT_TRUE(slot.ok()) << slot.error().message();
    fill_pattern(slot->view(), i);
    ASSERT_TRUE(win->paint(std::move(*slot), {}).ok());
  }
  // An unpainted slot gives its buffer back.
  { auto dropped = win->begin_upload(PixelFormat::RGBA, 64, 64); ASSERT_TRUE(dropped.ok()); }
  auto stats = ctx_->stats();
  EXPECT_LE(stats.upload_buffers_created, ctx_->options().max_upload_buffers);
  EXPECT_EQ(stats.bytes_uploaded, int64_t(60) * 256 * 256 * 4);
  std::printf("60 paints: %lld buffers created, %lld blocking waits\n",
              (long long)stats.upload_buffers_created, (long long)stats.upload_waits);
}

TEST_P(GlWindowTest, GpuTimeArrivesAsynchronously) {
  NEED_CONTEXT();
  if (!ctx_->caps().timer_query) GTEST_SKIP() << "no GL_TIME_ELAPSED on this context";
  auto win = window(128, 128);
  ASSERT_TRUE(win);
  auto pic = Picture::allocate(PixelFormat::RGBA, 128, 128);
  auto v = pic->write();
  fill_pattern(*v, 600);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(win->paint(*pic, {}).ok());
  (void)read(*win);  // the GPU is done with everything after a readback
  auto stats = ctx_->stats();
  EXPECT_EQ(stats.gpu_timed_paints, 5);
  EXPECT_GT(stats.gpu_time_ns, 0);
}

TEST_P(GlWindowTest, ContentIsAGlTextureStorageReleasedOnTheGlThread) {
  NEED_CONTEXT();
  const auto before = counters().of(MemoryKind::GlTexture).live_storages;
  Picture content;
  {
    auto win = window(16, 16);
    ASSERT_TRUE(win);
    auto c = win->content();
    ASSERT_TRUE(c.ok()) << c.error().message();
    content = *c;
    EXPECT_EQ(content.location().kind, MemoryKind::GlTexture);
    EXPECT_EQ(content.location().gl_name, win->texture());
    EXPECT_FALSE(content.read().ok());  // GL memory has no host view
  }
  // The window is gone; the texture lives on while `content` holds it.
  EXPECT_EQ(counters().of(MemoryKind::GlTexture).live_storages, before + 1);
  content = Picture();
  EXPECT_EQ(counters().of(MemoryKind::GlTexture).live_storages, before);
}

INSTANTIATE_TEST_SUITE_P(Paths, GlWindowTest, ::testing::ValuesIn(configs()),
                         [](const auto& p) { return std::string(p.param.name); });

}  // namespace
}  // namespace pixpath::gl
