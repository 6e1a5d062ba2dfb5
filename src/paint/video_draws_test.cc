// Video draws through the paint engine and the CPU backing: streams of h264, vp8 and vp9 made
// by libavcodec's encoders are painted in order with one ack per draw; new streams, size
// changes, corrupt data and bad options end in the acks xpra expects; every frame buffer is
// released once the window is gone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <mutex>

#include "codecs/testing/video_streams.h"
#include "paint/internal/yuv_convert.h"
#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/counters.h"
#include "pixpath/paint/backing.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::paint {
namespace {

using codecs::testing::encode_video;

struct Harness {
  CpuBacking backing;
  std::mutex mu;
  std::vector<DamageAck> acks;
  std::unique_ptr<PaintEngine> engine;

  Harness() {
    PaintEngineConfig c;
    c.decode_threads = 2;
    c.on_ack = [this](const DamageAck& a, const PaintReport&) {
      std::lock_guard<std::mutex> l(mu);
      acks.push_back(a);
    };
    auto e = PaintEngine::create(backing, std::move(c));
    EXPECT_TRUE(e.ok());
    engine = std::move(e).value();
  }
  void settle() { ASSERT_TRUE(engine->wait_idle(std::chrono::seconds(20))); }
  DamageAck ack_for(int64_t seq) {
    std::lock_guard<std::mutex> l(mu);
    for (auto& a : acks)
      if (a.sequence == seq) return a;
    return DamageAck{seq, -1, 0, 0, -99, "no ack"};
  }
  void expect_one_ack_each(int64_t first, int64_t last) {
    std::lock_guard<std::mutex> l(mu);
    std::map<int64_t, int> n;
    for (auto& a : acks) n[a.sequence]++;
    for (int64_t s = first; s <= last; ++s) EXPECT_EQ(n[s], 1) << "sequence " << s;
  }
};

DrawPacket video_draw(int64_t wid, int64_t seq, const std::string& coding, int x, int y, int w,
                      int h, const std::vector<uint8_t>& data, std::optional<int64_t> frame,
                      std::string csc = "YUV420P") {
  DrawPacket p;
  p.wid = wid;
  p.sequence = seq;
  p.coding = coding;
  p.x = x, p.y = y, p.w = w, p.h = h;
  p.data = SharedBytes::copy_of(std::span<const uint8_t>(data));
  p.options.csc = std::move(csc);
  p.options.frame = frame;
  return p;
}

// PSNR (dB) of the window's (x, y, w, h) against `expected` (BGRX), over R, G and B.
double region_psnr(CpuBacking& b, int64_t wid, int x, int y, const Picture& expected) {
  auto snap = b.snapshot(wid);
  auto sv = snap->read();
  auto ev = expected.read();
  double se = 0;
  for (int j = 0; j < expected.height(); ++j) {
    const uint8_t* s = sv->plane(0).unchecked_row(y + j) + size_t(x) * 4;
    const uint8_t* e = ev->plane(0).unchecked_row(j);
    for (int i = 0; i < expected.width() * 4; ++i) {
      if (i % 4 == 3) continue;
      const double d = double(s[i]) - e[i];
      se += d * d;
    }
  }
  const double mse = se / (double(expected.width()) * expected.height() * 3);
  return mse == 0 ? INFINITY : 10 * std::log10(255.0 * 255.0 / mse);
}

Picture as_bgrx(const Picture& yuv) {
  auto out = Picture::allocate(PixelFormat::BGRX, yuv.width(), yuv.height());
  auto dv = out->write();
  EXPECT_TRUE(internal::yuv_to_rgb(*yuv.read(), {}, *dv).ok());
  return std::move(*out);
}

class VideoDraws : public ::testing::TestWithParam<std::string> {};

// The GPU route's video half where NVDEC cannot be had (here: no libcuda): a backing with
// window textures and a GPU decoder that names a CUDA device make every stream ask for the
// GPU; libavcodec cannot open the device, so the stream is decoded and painted on the CPU,
// counted and explained. (The GPU frames' own path is tested on the GPU machine:
// src/cuda_loader/gl_gpu_video_test.cc.)
class TextureCpuBacking final : public Backing {
 public:
  std::string_view name() const override { return "fake-gl"; }
  PixelFormat format() const override { return cpu.format(); }
  Result<void> create_window(int64_t wid, int w, int h) override { return cpu.create_window(wid, w, h); }
  Result<void> resize_window(int64_t wid, int w, int h) override { return cpu.resize_window(wid, w, h); }
  Result<void> destroy_window(int64_t wid) override { return cpu.destroy_window(wid); }
  std::optional<Size> window_size(int64_t wid) const override { return cpu.window_size(wid); }
  std::vector<int64_t> windows() const override { return cpu.windows(); }
  Result<DirectTarget> begin_direct(int64_t wid, Rect r) override { return cpu.begin_direct(wid, r); }
  Result<void> end_direct(DirectTarget t, bool done) override { return cpu.end_direct(t, done); }
  Result<void> paint(int64_t wid, int x, int y, const Picture& p, int w, int h) override {
    return cpu.paint(wid, x, y, p, w, h);
  }
  Result<void> paint_yuv(int64_t wid, int x, int y, const Picture& p, codecs::VideoColor c,
                         int w, int h) override {
    return cpu.paint_yuv(wid, x, y, p, c, w, h);
  }
  Result<void> scroll(int64_t wid, std::span<const ScrollRect> r) override { return cpu.scroll(wid, r); }
  Result<Picture> snapshot(int64_t wid) override { return cpu.snapshot(wid); }
  bool has_window_textures() const override { return true; }
  std::optional<WindowTexture> window_texture(int64_t wid) override {
    auto s = cpu.window_size(wid);
    if (!s) return std::nullopt;
    return WindowTexture{uint32_t(1000 + wid), s->w, s->h};
  }
  CpuBacking cpu;
};

class DeviceOnlyGpu final : public GpuDrawDecoder {
 public:
  Result<codecs::DecodeResult> decode_to_host(std::span<const uint8_t>, const GpuDecodeParams&) const override {
    return Error(ErrorCode::Unavailable, "jpeg", "gpu decode", "fake");
  }
  std::vector<Result<Picture>> decode_batch_to_device(std::span<const GpuDecodeJob> jobs) const override {
    return std::vector<Result<Picture>>(jobs.size(), Error(ErrorCode::Unavailable, "jpeg", "gpu decode", "fake"));
  }
  Result<std::shared_ptr<GpuFence>> copy_to_textures(std::span<const GpuCopyJob>) const override {
    return Error(ErrorCode::Unavailable, "jpeg", "gpu texture", "fake");
  }
  void forget_texture(uint32_t) const override {}
  Result<void> prepare_texture(const GlTextureRegion&) const override { return ok(); }
  int hardware_engines() const override { return 0; }
  int cuda_device() const override { return 0; }
};

TEST(VideoDraws, GpuRouteStreamsWithoutNvdecArePaintedOnTheCpuAndSayWhy) {
  auto s = encode_video("h264", 96, 64, 4);
  ASSERT_TRUE(s.ok()) << s.error().message();
  if (codecs::probe_video_gpu(0).ok()) GTEST_SKIP() << "a CUDA device opens here: NVDEC may take the stream";
  TextureCpuBacking backing;
  std::mutex mu;
  std::vector<std::pair<DamageAck, std::string>> acks;
  std::vector<std::string> logs;
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Auto;
  c.gpu_decoder = std::make_shared<DeviceOnlyGpu>();
  c.on_ack = [&](const DamageAck& a, const PaintReport& r) {
    std::lock_guard<std::mutex> l(mu);
    acks.emplace_back(a, std::string(r.decoder));
  };
  c.log = [&](std::string_view line) {
    std::lock_guard<std::mutex> l(mu);
    logs.emplace_back(line);
  };
  auto e = PaintEngine::create(backing, std::move(c));
  ASSERT_TRUE(e.ok()) << e.error().message();
  auto& engine = *e;
  EXPECT_EQ(engine->stats().video_decoder, "nvdec") << engine->stats().video_decoder_reason;
  engine->window_new(1, 128, 96);
  for (size_t i = 0; i < s->packets.size(); ++i)
    engine->submit(video_draw(1, int64_t(i + 1), "h264", 8, 4, 96, 64, s->packets[i], int64_t(i)));
  ASSERT_TRUE(engine->wait_idle(std::chrono::seconds(20)));
  const auto st = engine->stats();
  {
    std::lock_guard<std::mutex> l(mu);
    ASSERT_EQ(acks.size(), 4u);
    for (const auto& [a, dec] : acks) {
      EXPECT_GT(a.decode_time_us, 0) << a.message;
      EXPECT_EQ(dec, "gpu->cpu");
    }
    ASSERT_EQ(logs.size(), 1u) << "one line per stream";
    EXPECT_NE(logs[0].find("on the CPU"), std::string::npos) << logs[0];
  }
  EXPECT_EQ(st.video_gpu_streams_on_cpu, 1);
  EXPECT_FALSE(st.last_video_gpu_note.empty());
  EXPECT_EQ(st.video_cpu_frames.at("h264"), 4);
  EXPECT_EQ(st.video_gpu_frames.count("h264"), 0u);
  EXPECT_GE(region_psnr(backing.cpu, 1, 8, 4, as_bgrx(s->sources.back())), 30.0);
  std::printf("  %s\n  %s\n", st.video_decoder_reason.c_str(), st.last_video_gpu_note.c_str());
  engine->shutdown();
}

TEST(VideoDraws, CpuEnginesKeepVideoOnTheCpu) {
  Harness h;
  const auto st = h.engine->stats();
  EXPECT_EQ(st.video_decoder, "cpu");
  EXPECT_NE(st.video_decoder_reason.find("no GPU route"), std::string::npos) << st.video_decoder_reason;
}

TEST_P(VideoDraws, AStreamIsPaintedInOrderWithOneAckPerDraw) {
  const std::string coding = GetParam();
  auto s = encode_video(coding, 96, 64, 12);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const auto buffers_before = codecs::video_buffer_counters();
  const int64_t storages_before = counters().live_storages();
  {
    Harness h;
    h.engine->window_new(1, 128, 96);
    for (size_t i = 0; i < s->packets.size(); ++i)
      h.engine->submit(video_draw(1, int64_t(i + 1), coding, 8, 4, 96, 64, s->packets[i],
                                  int64_t(i)));
    h.settle();
    h.expect_one_ack_each(1, 12);
    for (int64_t i = 1; i <= 12; ++i)
      EXPECT_GT(h.ack_for(i).decode_time_us, 0) << i << ": " << h.ack_for(i).message;
    EXPECT_GE(region_psnr(h.backing, 1, 8, 4, as_bgrx(s->sources.back())), 30.0);
    auto st = h.engine->stats();
    EXPECT_EQ(st.video_draws, 12);
    EXPECT_EQ(st.video_frames, 12);
    EXPECT_EQ(st.video_streams, 1);
    EXPECT_EQ(st.video_errors, 0);
    h.engine->window_lost(1);
    h.settle();
    // the window's decoder is gone with it, and every frame buffer with the decoder
    EXPECT_EQ(codecs::video_buffer_counters().live(), buffers_before.live());
  }
  EXPECT_EQ(counters().live_storages(), storages_before);
}

TEST_P(VideoDraws, NewStreamsSizeChangesAndCorruptDataAckAsXpraExpects) {
  const std::string coding = GetParam();
  auto a = encode_video(coding, 64, 48, 4);
  auto b = encode_video(coding, 80, 64, 3);
  ASSERT_TRUE(a.ok() && b.ok());
  Harness h;
  h.engine->window_new(1, 100, 100);
  int64_t seq = 0;
  for (int i = 0; i < 2; ++i) h.engine->submit(video_draw(1, ++seq, coding, 0, 0, 64, 48, a->packets[i], i));
  // 2: another size without frame 0: a new stream that starts with a P-frame: an error
  h.engine->submit(video_draw(1, ++seq + 0, coding, 0, 0, 80, 64, b->packets[1], 1));
  const int64_t size_change = seq;
  // the server answers with a new stream: frame 0 at the new size
  for (int i = 0; i < 3; ++i) h.engine->submit(video_draw(1, ++seq, coding, 0, 0, 80, 64, b->packets[i], i));
  // corrupt data: an error; then a fresh key frame (frame 0) paints again
  std::vector<uint8_t> junk(300, 0x5a);
  h.engine->submit(video_draw(1, ++seq, coding, 0, 0, 80, 64, junk, 3));
  const int64_t corrupt = seq;
  h.engine->submit(video_draw(1, ++seq, coding, 0, 0, 64, 48, a->packets[0], 0));
  const int64_t recovered = seq;
  h.settle();
  h.expect_one_ack_each(1, seq);
  EXPECT_GT(h.ack_for(2).decode_time_us, 0);
  EXPECT_EQ(h.ack_for(size_change).decode_time_us, -1);
  const std::string m = h.ack_for(size_change).message;
  EXPECT_EQ(m.rfind(coding + " decode: ", 0), 0u) << m;
  EXPECT_NE(m.find("a new stream (" + coding + " 64x48 YUV420P -> " + coding +
                   " 80x64 YUV420P) that does not start with frame 0"),
            std::string::npos)
      << m;
  for (int64_t i = size_change + 1; i <= size_change + 3; ++i)
    EXPECT_GT(h.ack_for(i).decode_time_us, 0) << h.ack_for(i).message;
  EXPECT_EQ(h.ack_for(corrupt).decode_time_us, -1);
  EXPECT_EQ(h.ack_for(corrupt).message.rfind(coding + " decode: ", 0), 0u) << h.ack_for(corrupt).message;
  EXPECT_GT(h.ack_for(recovered).decode_time_us, 0) << h.ack_for(recovered).message;
  EXPECT_EQ(h.engine->stats().video_streams, 4);
}

INSTANTIATE_TEST_SUITE_P(All, VideoDraws, ::testing::Values("h264", "vp8", "vp9"));

TEST(VideoDraws, BadOptionsAreRefusedWithAClearMessage) {
  auto s = encode_video("h264", 64, 48, 1);
  ASSERT_TRUE(s.ok());
  Harness h;
  h.engine->window_new(1, 64, 48);
  h.engine->submit(video_draw(1, 1, "h264", 0, 0, 64, 48, s->packets[0], 0, ""));
  h.engine->submit(video_draw(1, 2, "h264", 0, 0, 64, 48, s->packets[0], 0, "BGRX"));
  auto absurd = video_draw(1, 3, "h264", 0, 0, 64, 48, s->packets[0], 0);
  absurd.options.scaled_width = 30000;
  absurd.options.scaled_height = 2;
  h.engine->submit(absurd);
  h.engine->submit(video_draw(1, 4, "h264", 0, 0, 16384, 16384, s->packets[0], 0));
  h.engine->submit(video_draw(1, 5, "h264", 0, 0, 64, 48, s->packets[0], 0));  // fine again
  h.settle();
  h.expect_one_ack_each(1, 5);
  EXPECT_EQ(h.ack_for(1).message,
            "h264 create decoder: the draw has no csc option (the input colourspace)");
  EXPECT_EQ(h.ack_for(2).message, "h264 create decoder: csc 'BGRX' cannot be decoded");
  EXPECT_EQ(h.ack_for(3).message,
            "h264 create decoder: stream size 30000x2 is outside 1x1..8192x8192");
  EXPECT_EQ(h.ack_for(4).message,
            "h264 create decoder: stream size 16384x16384 is outside 1x1..8192x8192");
  for (int i = 1; i <= 4; ++i) EXPECT_EQ(h.ack_for(i).decode_time_us, -1);
  EXPECT_GT(h.ack_for(5).decode_time_us, 0) << h.ack_for(5).message;
}

// A frame the decoder keeps without showing: vp8's key frame with its show_frame bit (frame
// tag bit 4) cleared decodes into the references and gives no picture, as a frame an encoder
// holds back does (xpra marks the draw `delayed`).
TEST(VideoDraws, DelayedDrawsWithoutAPictureAreNotErrors) {
  auto s = encode_video("vp8", 64, 48, 2);
  ASSERT_TRUE(s.ok());
  std::vector<uint8_t> hidden = s->packets[0];
  ASSERT_TRUE(hidden[0] & 0x10) << "the key frame is not shown?";
  hidden[0] &= uint8_t(~0x10);
  Harness h;
  h.engine->window_new(1, 64, 48);
  auto delayed = video_draw(1, 1, "vp8", 0, 0, 64, 48, hidden, 0);
  delayed.options.delayed = 1;
  h.engine->submit(delayed);
  h.engine->submit(video_draw(1, 2, "vp8", 0, 0, 64, 48, s->packets[1], 1));  // shown
  h.engine->submit(video_draw(1, 3, "vp8", 0, 0, 64, 48, hidden, 0));  // not delayed
  h.settle();
  h.expect_one_ack_each(1, 3);
  EXPECT_GT(h.ack_for(1).decode_time_us, 0) << h.ack_for(1).message;
  EXPECT_GT(h.ack_for(2).decode_time_us, 0) << h.ack_for(2).message;
  EXPECT_EQ(h.ack_for(3).decode_time_us, -1);
  EXPECT_NE(h.ack_for(3).message.find("not marked delayed"), std::string::npos)
      << h.ack_for(3).message;
  auto st = h.engine->stats();
  EXPECT_EQ(st.video_delayed, 1);
  EXPECT_EQ(st.video_frames, 1);
  EXPECT_EQ(st.video_errors, 1);
}

TEST(VideoDraws, ScaledFramesArePaintedAtTheDrawSize) {
  auto s = encode_video("vp8", 48, 32, 2);
  ASSERT_TRUE(s.ok());
  Harness h;
  h.engine->window_new(1, 120, 80);
  for (int i = 0; i < 2; ++i) {
    auto d = video_draw(1, i + 1, "vp8", 10, 10, 96, 64, s->packets[size_t(i)], i);
    d.options.scaled_width = 48;
    d.options.scaled_height = 32;
    h.engine->submit(d);
  }
  // partly outside the window: clipped
  auto d = video_draw(1, 3, "vp8", 100, 60, 48, 32, s->packets[0], 0);
  h.engine->submit(d);
  h.settle();
  h.expect_one_ack_each(1, 3);
  for (int i = 1; i <= 3; ++i) EXPECT_GT(h.ack_for(i).decode_time_us, 0) << h.ack_for(i).message;
}

}  // namespace
}  // namespace pixpath::paint

namespace pixpath::paint {
namespace {

// xpra 6.x's x264 at high quality: csc YUV444P, but the planes are G, B, R (identity matrix).
TEST(VideoDraws, GbrPlanesAreInterleavedNotConverted) {
  auto pic = Picture::allocate(PixelFormat::YUV444P, 3, 2);
  {
    auto v = pic->write();
    for (int p = 0; p < 3; ++p)
      for (int y = 0; y < 2; ++y)
        for (int x = 0; x < 3; ++x) v->plane(p).unchecked_row(y)[x] = uint8_t(p * 100 + y * 10 + x);
  }
  codecs::VideoColor gbr;
  gbr.gbr = true;
  for (PixelFormat f : {PixelFormat::BGRX, PixelFormat::RGBA}) {
    auto out = Picture::allocate(f, 3, 2);
    auto dv = out->write();
    ASSERT_TRUE(internal::yuv_to_rgb(*pic->read(), gbr, *dv).ok());
    const uint8_t* px = dv->plane(0).unchecked_row(1) + 2 * 4;  // (2, 1): G 12, B 112, R 212
    if (f == PixelFormat::BGRX) {
      EXPECT_EQ(px[0], 112);
      EXPECT_EQ(px[1], 12);
      EXPECT_EQ(px[2], 212);
    } else {
      EXPECT_EQ(px[0], 212);
      EXPECT_EQ(px[1], 12);
      EXPECT_EQ(px[2], 112);
    }
    EXPECT_EQ(px[3], 255);
  }
}

}  // namespace
}  // namespace pixpath::paint
