// The GL backing against the CPU backing: the same draw packets through the paint engine must
// leave the same pixels (exactly, except scaled paints: +-2 per channel).
#include "pixpath/gl/gl_backing.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>

#include "codecs/testing/video_streams.h"
#include "gl/testing/gl_test_util.h"
#include "paint/testing/test_support.h"
#include "pixpath/codecs/video_decoder.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::gl {
namespace {



uint8_t noise(int x, int y, int seed) {
  uint32_t v = uint32_t(x) * 2654435761u ^ uint32_t(y) * 2246822519u ^ uint32_t(seed) * 3266489917u;
  v ^= v >> 15;
  v *= 0x2c1b3c6dU;
  v ^= v >> 12;
  return uint8_t(v);
}

// An uncompressed rgb draw with `bpp`-byte pixels in `rgb_format`, rows `pad` bytes longer.
DrawPacket raw_draw(int64_t seq, int x, int y, int w, int h, const char* rgb_format, int bpp, int pad,
                    int seed, bool lz4 = false) {
  const int stride = w * bpp + pad;
  std::vector<uint8_t> bytes(size_t(stride) * size_t(h));
  for (int r = 0; r < h; ++r)
    for (int i = 0; i < stride; ++i) bytes[size_t(r) * size_t(stride) + size_t(i)] = noise(i, r, seed);
  DrawPacket p;
  p.wid = 1;
  p.sequence = seq;
  p.x = x, p.y = y, p.w = w, p.h = h;
  p.coding = bpp == 3 ? "rgb24" : "rgb32";
  p.rowstride = stride;
  p.options.rgb_format = rgb_format;
  if (lz4) {
    p.options.lz4 = 1;
    p.data = SharedBytes::adopt(paint::testing::lz4_compress(bytes));
  } else {
    p.data = SharedBytes::copy_of(std::span<const uint8_t>(bytes));
  }
  p.received = std::chrono::steady_clock::now();
  return p;
}

// Runs `script` against `backing` through a paint engine and returns window 1's snapshot.
Picture run(paint::Backing& backing, const std::function<void(paint::PaintEngine&)>& script,
            std::vector<DamageAck>* acks) {
  paint::PaintEngineConfig c;
  c.decode_threads = 2;
  c.on_ack = [acks](const DamageAck& a, const paint::PaintReport&) { acks->push_back(a); };
  auto engine = paint::PaintEngine::create(backing, std::move(c));
  EXPECT_TRUE(engine.ok());
  if (!engine.ok()) return {};
  script(**engine);
  EXPECT_TRUE((*engine)->wait_idle(std::chrono::seconds(30)));
  auto snap = backing.snapshot(1);
  EXPECT_TRUE(snap.ok()) << snap.error().message();
  (*engine)->shutdown();
  return snap.ok() ? *snap : Picture();
}

::testing::AssertionResult same_pixels(const Picture& a, const Picture& b, int tolerance) {
  if (a.width() != b.width() || a.height() != b.height() || a.format() != b.format()) {
    return ::testing::AssertionFailure() << "different size/format: " << a.width() << "x" << a.height() << " "
                                         << name(a.format()) << " vs " << b.width() << "x" << b.height() << " "
                                         << name(b.format());
  }
  auto va = a.read(), vb = b.read();
  int bad = 0, worst = 0;
  std::string first;
  for (int y = 0; y < a.height(); ++y) {
    const uint8_t* ra = va->planes[0].unchecked_row(y);
    const uint8_t* rb = vb->planes[0].unchecked_row(y);
    for (int i = 0; i < a.width() * 4; ++i) {
      if (i % 4 == 3) continue;  // X: undefined in BGRX (the CPU backing keeps what a direct decode wrote)
      int d = std::abs(int(ra[i]) - int(rb[i]));
      worst = std::max(worst, d);
      if (d > tolerance && bad++ == 0) {
        first = "first at (" + std::to_string(i / 4) + "," + std::to_string(y) + ") byte " + std::to_string(i % 4) +
                ": " + std::to_string(ra[i]) + " vs " + std::to_string(rb[i]);
      }
    }
  }
  if (bad) return ::testing::AssertionFailure() << bad << " bytes differ (worst " << worst << "), " << first;
  return ::testing::AssertionSuccess();
}

class GlBackingTest : public ::testing::Test {
 protected:
  void SetUp() override { testing::make_test_context(&ctx_); }
  std::unique_ptr<GlBacking> gl_backing() {
    GlBackingOptions o;
    o.shared_context = ctx_;
    auto b = GlBacking::create(o);
    EXPECT_TRUE(b.ok()) << b.error().message();
    return b.ok() ? std::move(*b) : nullptr;
  }
  std::shared_ptr<GlContext> ctx_;
};

TEST_F(GlBackingTest, SamePixelsAsTheCpuBacking) {
  if (!ctx_) return;
  auto script = [](paint::PaintEngine& e) {
    e.window_new(1, 120, 90);
    int64_t seq = 1;
    e.submit(raw_draw(seq++, 0, 0, 120, 90, "BGRX", 4, 0, 1, true));  // direct into the texture
    e.submit(raw_draw(seq++, 10, 5, 37, 23, "BGRX", 4, 8, 2));
    e.submit(raw_draw(seq++, 50, 40, 31, 17, "RGB", 3, 3, 3));
    e.submit(raw_draw(seq++, 3, 60, 29, 19, "BGR", 3, 1, 4));
    e.submit(raw_draw(seq++, 70, 10, 21, 13, "RGBA", 4, 0, 5));
    e.submit(raw_draw(seq++, 100, 80, 40, 30, "BGRA", 4, 0, 6));  // partly outside: clipped
    DrawPacket scroll;
    scroll.wid = 1;
    scroll.sequence = seq++;
    scroll.coding = "scroll";
    scroll.options.scroll = {{0, 10, 120, 60, 0, -7}, {0, 50, 60, 30, 0, 9}, {5, 0, 40, 8, 2, 0}};
    scroll.received = std::chrono::steady_clock::now();
    e.submit(scroll);
    e.window_resize(1, 150, 70);
    e.submit(raw_draw(seq++, 120, 20, 30, 30, "BGRX", 4, 0, 7));
    e.window_resize(1, 140, 100);
    e.submit(raw_draw(seq++, 0, 85, 140, 15, "BGRX", 4, 0, 8, true));
  };
  paint::CpuBacking cpu;
  std::vector<DamageAck> cpu_acks, gl_acks;
  Picture want = run(cpu, script, &cpu_acks);
  auto gl = gl_backing();
  ASSERT_TRUE(gl);
  EXPECT_EQ(gl->format(), PixelFormat::BGRX);
  Picture got = run(*gl, script, &gl_acks);
  ASSERT_FALSE(want.empty());
  ASSERT_FALSE(got.empty());
  EXPECT_TRUE(same_pixels(got, want, 0));
  ASSERT_EQ(gl_acks.size(), cpu_acks.size());
  for (auto& a : gl_acks) EXPECT_GT(a.decode_time_us, 0) << a.sequence << ": " << a.message;
  auto stats = ctx_->stats();
  EXPECT_GE(stats.mapped_uploads, 1) << "no draw was decoded straight into an upload buffer";
  // Pictures decoded into upload buffers make no host copy; host pictures make one each when
  // they are staged (GlCaps::staged_client_uploads), none otherwise.
  EXPECT_EQ(stats.host_copies, stats.staged_uploads);
}

TEST_F(GlBackingTest, ScaledPaintsCloseToTheCpuBacking) {
  if (!ctx_) return;
  // Smooth content: the two bilinear filters may round differently, never by much.
  auto script = [](paint::PaintEngine& e) {
    e.window_new(1, 64, 48);
    auto smooth = paint::testing::bgrx_bytes(16, 12, [](int x, int y) {
      return paint::testing::bgrx(uint8_t(20 + x * 12), uint8_t(30 + y * 15), uint8_t(200 - x * 4 - y * 5));
    });
    DrawPacket p = paint::testing::rgb_draw(1, 1, 4, 2, 40, 30, smooth);
    p.rowstride = 16 * 4;
    p.options.scaled_width = 16;
    p.options.scaled_height = 12;
    p.received = std::chrono::steady_clock::now();
    e.submit(p);
  };
  paint::CpuBacking cpu;
  std::vector<DamageAck> a, b;
  Picture want = run(cpu, script, &a);
  auto gl = gl_backing();
  ASSERT_TRUE(gl);
  Picture got = run(*gl, script, &b);
  EXPECT_TRUE(same_pixels(got, want, 2));
}

// Video draws: the decoder's YUV planes go up to the GL window and the shader converts them
// (BT.601 studio range, as the stream says); the CPU backing converts with libyuv. The two
// agree within libyuv's fixed-point rounding, also when scaled and clipped.
TEST_F(GlBackingTest, VideoFramesCloseToTheCpuBacking) {
  if (!ctx_) return;
  if (codecs::video_codings().empty()) GTEST_SKIP() << "built without video (PIXPATH_WITH_VIDEO=OFF)";
  for (const char* coding : {"h264", "vp8"}) {
    SCOPED_TRACE(coding);
    auto stream = codecs::testing::encode_video(coding, 96, 64, 6);
    ASSERT_TRUE(stream.ok()) << stream.error().message();
    auto script = [&](paint::PaintEngine& e) {
      e.window_new(1, 140, 100);
      for (size_t i = 0; i < stream->packets.size(); ++i) {
        DrawPacket p;
        p.wid = 1;
        p.sequence = int64_t(i + 1);
        p.coding = coding;
        p.x = i == 5 ? 80 : 4;  // the last one partly outside: clipped
        p.y = 6;
        p.w = 96, p.h = 64;
        p.data = SharedBytes::copy_of(std::span<const uint8_t>(stream->packets[i]));
        p.options.csc = "YUV420P";
        p.options.frame = int64_t(i);
        p.received = std::chrono::steady_clock::now();
        e.submit(p);
      }
    };
    paint::CpuBacking cpu;
    std::vector<DamageAck> a, b;
    Picture want = run(cpu, script, &a);
    auto gl = gl_backing();
    ASSERT_TRUE(gl);
    Picture got = run(*gl, script, &b);
    ASSERT_EQ(b.size(), 6u);
    for (auto& ack : b) EXPECT_GT(ack.decode_time_us, 0) << ack.sequence << ": " << ack.message;
    EXPECT_TRUE(same_pixels(got, want, 4));
    EXPECT_GE(ctx_->stats().shader_paints, 6);
  }
}

TEST_F(GlBackingTest, DirectTargetsAndRefusals) {
  if (!ctx_) return;
  auto gl = gl_backing();
  ASSERT_TRUE(gl);
  ASSERT_TRUE(gl->create_window(7, 32, 32).ok());
  EXPECT_FALSE(gl->create_window(7, 8, 8).ok());
  EXPECT_FALSE(gl->begin_direct(7, {30, 30, 4, 4}).ok());  // not inside
  auto t = gl->begin_direct(7, {4, 4, 8, 8});
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_FALSE(gl->resize_window(7, 40, 40).ok());  // busy while a target is open
  EXPECT_FALSE(gl->snapshot(7).ok());
  for (int y = 0; y < 8; ++y) std::memset(t->view.planes[0].unchecked_row(y), 0x80, 32);
  ASSERT_TRUE(gl->end_direct(*t, true).ok());
  auto snap = gl->snapshot(7);
  ASSERT_TRUE(snap.ok());
  EXPECT_EQ(paint::testing::pixel(*snap, 5, 5), paint::testing::bgrx(0x80, 0x80, 0x80));
  EXPECT_EQ(paint::testing::pixel(*snap, 3, 3), paint::testing::bgrx(0, 0, 0));
  // An unwritten target leaves the window as it was.
  auto t2 = gl->begin_direct(7, {0, 0, 4, 4});
  ASSERT_TRUE(t2.ok());
  ASSERT_TRUE(gl->end_direct(*t2, false).ok());
  EXPECT_TRUE(gl->destroy_window(7).ok());
  EXPECT_TRUE(gl->windows().empty());
}

}  // namespace
}  // namespace pixpath::gl
