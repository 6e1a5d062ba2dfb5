// Video draws through the paint engine and the CPU backing: streams of h264, vp8 and vp9 made
// by libavcodec's encoders are painted in order with one ack per draw; new streams, size
// changes, corrupt data and bad options end in the acks xpra expects; every frame buffer is
// released once the window is gone.
#include <gtest/gtest.h>

#include <cstdio>
#include <ctime>
#include <map>
#include <mutex>
#include <thread>

#include "codecs/testing/video_streams.h"
#include "pixpath/paint/yuv_convert.h"
#include "paint/testing/fake_texture_backing.h"
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
  std::vector<PaintReport> reports;  // reports[i] goes with acks[i]
  std::unique_ptr<PaintEngine> engine;

  explicit Harness(int video_threads = 0) {
    PaintEngineConfig c;
    c.decode_threads = 2;
    c.video_threads = video_threads;
    c.on_ack = [this](const DamageAck& a, const PaintReport& r) {
      std::lock_guard<std::mutex> l(mu);
      acks.push_back(a);
      reports.push_back(r);
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

// PSNR (dB) of the window's region at (x, y) against `expected` (BGRX), over R, G and B; 0
// when the window has no snapshot.
double region_psnr(Backing& b, int64_t wid, int x, int y, const Picture& expected) {
  auto snap = b.snapshot(wid);
  return snap.ok() ? codecs::testing::region_psnr(*snap, x, y, expected) : 0;
}

Picture as_bgrx(const Picture& yuv) {
  auto out = Picture::allocate(PixelFormat::BGRX, yuv.width(), yuv.height());
  auto dv = out->write();
  EXPECT_TRUE(yuv_to_rgb(*yuv.read(), {}, *dv).ok());
  return std::move(*out);
}

class VideoDraws : public ::testing::TestWithParam<std::string> {};

// The GPU route's video half where NVDEC cannot be had (here: no libcuda): a backing with
// window textures (testing::FakeTextureBacking) and a GPU decoder that names a CUDA device make
// every stream ask for the GPU; libavcodec cannot open the device, so the stream is decoded and
// painted on the CPU, counted and explained. (The GPU frames' own path is tested on the GPU machine:
// src/cuda_loader/gl_gpu_video_test.cc.)
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
  testing::FakeTextureBacking backing;
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

// Per window: the acks' sequences in the order they were delivered.
std::map<int64_t, std::vector<int64_t>> acks_per_window(Harness& h) {
  std::lock_guard<std::mutex> l(h.mu);
  std::map<int64_t, std::vector<int64_t>> out;
  for (const auto& a : h.acks) out[a.wid].push_back(a.sequence);
  return out;
}

// Several windows' streams at once, on fewer video threads than windows: each window's draws
// are decoded and painted in its order (one stream each, no errors), acked once, and every
// frame buffer goes with the windows.
TEST_P(VideoDraws, SeveralWindowsDecodeAtOnceEachInItsOrder) {
  const std::string coding = GetParam();
  constexpr int kWindows = 6, kFrames = 10;
  std::vector<codecs::testing::VideoStream> streams;
  for (int w = 0; w < kWindows; ++w) {
    auto s = encode_video(coding, 64 + 16 * w, 48 + 8 * w, kFrames);
    ASSERT_TRUE(s.ok()) << s.error().message();
    streams.push_back(std::move(s).value());
  }
  const auto buffers_before = codecs::video_buffer_counters();
  const int64_t storages_before = counters().live_storages();
  {
    Harness h(3);
    for (int w = 0; w < kWindows; ++w) h.engine->window_new(w + 1, 200, 150);
    int64_t seq = 0;
    std::map<int64_t, std::vector<int64_t>> given;
    for (int i = 0; i < kFrames; ++i)
      for (int w = 0; w < kWindows; ++w) {
        h.engine->submit(video_draw(w + 1, ++seq, coding, 4, 2, 64 + 16 * w, 48 + 8 * w,
                                    streams[size_t(w)].packets[size_t(i)], i));
        given[w + 1].push_back(seq);
      }
    h.settle();
    h.expect_one_ack_each(1, seq);
    for (int64_t i = 1; i <= seq; ++i)
      EXPECT_GT(h.ack_for(i).decode_time_us, 0) << i << ": " << h.ack_for(i).message;
    EXPECT_EQ(acks_per_window(h), given) << "each window's acks in its order";
    for (int w = 0; w < kWindows; ++w)
      EXPECT_GE(region_psnr(h.backing, w + 1, 4, 2, as_bgrx(streams[size_t(w)].sources.back())), 30.0)
          << "window " << w + 1;
    const auto st = h.engine->stats();
    EXPECT_EQ(st.video_threads, 3);
    EXPECT_EQ(st.video_threads_running, 3) << "6 windows on 3 lanes";
    EXPECT_EQ(st.video_streams, kWindows);
    EXPECT_EQ(st.video_frames, kWindows * kFrames);
    EXPECT_EQ(st.video_errors, 0) << st.last_video_error;
    for (int w = 0; w < kWindows; ++w) h.engine->window_lost(w + 1);
    h.settle();
    EXPECT_EQ(codecs::video_buffer_counters().live(), buffers_before.live());
  }
  EXPECT_EQ(counters().live_storages(), storages_before);
}

// A corrupt frame fails its own window's draw (and drops that window's decoder until its key
// frame), and the window decoding beside it on the same video thread never notices.
TEST_P(VideoDraws, ACorruptFrameInOneWindowDoesNotDisturbAnother) {
  const std::string coding = GetParam();
  auto s = encode_video(coding, 96, 64, 10);
  ASSERT_TRUE(s.ok()) << s.error().message();
  Harness h(1);  // both windows on one thread: the strongest case for interference
  h.engine->window_new(1, 128, 96);
  h.engine->window_new(2, 128, 96);
  const std::vector<uint8_t> junk(300, 0x5a);
  int64_t seq = 0, corrupt = 0, recovered = 0;
  for (int i = 0; i < 10; ++i) {
    if (i < 4) {
      h.engine->submit(video_draw(1, ++seq, coding, 0, 0, 96, 64, s->packets[size_t(i)], i));
    } else if (i == 4) {
      h.engine->submit(video_draw(1, corrupt = ++seq, coding, 0, 0, 96, 64, junk, i));
    } else if (i == 5) {  // the server's answer: a key frame
      h.engine->submit(video_draw(1, recovered = ++seq, coding, 0, 0, 96, 64, s->packets[0], 0));
    }
    h.engine->submit(video_draw(2, ++seq, coding, 0, 0, 96, 64, s->packets[size_t(i)], i));
  }
  h.settle();
  h.expect_one_ack_each(1, seq);
  for (int64_t i = 1; i <= seq; ++i) {
    if (i == corrupt) continue;
    EXPECT_GT(h.ack_for(i).decode_time_us, 0) << i << ": " << h.ack_for(i).message;
  }
  EXPECT_EQ(h.ack_for(corrupt).decode_time_us, -1);
  EXPECT_EQ(h.ack_for(corrupt).message.rfind(coding + " decode: ", 0), 0u) << h.ack_for(corrupt).message;
  EXPECT_GT(h.ack_for(recovered).decode_time_us, 0) << h.ack_for(recovered).message;
  EXPECT_GE(region_psnr(h.backing, 1, 0, 0, as_bgrx(s->sources[0])), 30.0);
  EXPECT_GE(region_psnr(h.backing, 2, 0, 0, as_bgrx(s->sources.back())), 30.0);
  const auto st = h.engine->stats();
  EXPECT_EQ(st.video_errors, 1);
  EXPECT_EQ(st.video_streams, 3);  // window 1's two, window 2's one
}

// window_lost in the middle of a stream: the window's decoder is flushed and dropped on its
// video thread in the window's order; its draws given after window_lost are acked 0 and never
// decoded (no decoder is made for them), a window_new starts afresh, the other window goes on.
TEST_P(VideoDraws, AWindowLostMidStreamLeavesTheOthersAlone) {
  const std::string coding = GetParam();
  auto s = encode_video(coding, 96, 64, 12);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const auto buffers_before = codecs::video_buffer_counters();
  Harness h(2);
  h.engine->window_new(1, 128, 96);
  h.engine->window_new(2, 128, 96);
  int64_t seq = 0;
  std::vector<int64_t> painted, skipped;
  for (int i = 0; i < 12; ++i) {
    if (i < 6) {
      h.engine->submit(video_draw(1, ++seq, coding, 0, 0, 96, 64, s->packets[size_t(i)], i));
      painted.push_back(seq);
    } else if (i == 6) {
      h.engine->window_lost(1);
    } else if (i < 10) {  // the server had sent these before it knew
      h.engine->submit(video_draw(1, ++seq, coding, 0, 0, 96, 64, s->packets[size_t(i)], i));
      skipped.push_back(seq);
    }
    h.engine->submit(video_draw(2, ++seq, coding, 0, 0, 96, 64, s->packets[size_t(i)], i));
    painted.push_back(seq);
  }
  h.engine->window_new(1, 128, 96);
  for (int i = 0; i < 4; ++i) {
    h.engine->submit(video_draw(1, ++seq, coding, 0, 0, 96, 64, s->packets[size_t(i)], i));
    painted.push_back(seq);
  }
  h.settle();
  h.expect_one_ack_each(1, seq);
  for (int64_t i : painted) EXPECT_GT(h.ack_for(i).decode_time_us, 0) << i << ": " << h.ack_for(i).message;
  for (int64_t i : skipped) {
    EXPECT_EQ(h.ack_for(i).decode_time_us, 0) << i;
    EXPECT_EQ(h.ack_for(i).message, "window 1 does not exist");
  }
  EXPECT_GE(region_psnr(h.backing, 1, 0, 0, as_bgrx(s->sources[3])), 30.0);
  EXPECT_GE(region_psnr(h.backing, 2, 0, 0, as_bgrx(s->sources.back())), 30.0);
  const auto st = h.engine->stats();
  EXPECT_EQ(st.video_streams, 3) << "no decoder for the draws after window_lost";
  EXPECT_EQ(st.video_errors, 0) << st.last_video_error;
  h.engine->window_lost(1);
  h.engine->window_lost(2);
  h.settle();
  EXPECT_EQ(codecs::video_buffer_counters().live(), buffers_before.live());
}

INSTANTIATE_TEST_SUITE_P(All, VideoDraws, ::testing::Values("h264", "vp8", "vp9"));

// Shutdown with every window's video in flight: the video threads stop after the draw in hand,
// every draw is acked exactly once (painted, or 0 "shutdown"), nothing hangs, and every frame
// buffer and storage is released with the engine.
TEST(VideoDraws, ShutdownMidStreamAcksEveryDrawOnceAndLeaksNothing) {
  constexpr int kWindows = 4, kFrames = 30;
  auto s = encode_video("h264", 320, 240, kFrames);
  ASSERT_TRUE(s.ok()) << s.error().message();
  const auto buffers_before = codecs::video_buffer_counters();
  const int64_t storages_before = counters().live_storages();
  int64_t seq = 0;
  {
    Harness h(2);
    for (int w = 1; w <= kWindows; ++w) h.engine->window_new(w, 320, 240);
    for (int i = 0; i < kFrames; ++i)
      for (int w = 1; w <= kWindows; ++w)
        h.engine->submit(video_draw(w, ++seq, "h264", 0, 0, 320, 240, s->packets[size_t(i)], i));
    // Some draws painted, the others in flight.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      h.engine->run_ui_once();
      {
        std::lock_guard<std::mutex> l(h.mu);
        if (h.acks.size() >= size_t(kWindows) || std::chrono::steady_clock::now() > deadline) break;
      }
      h.engine->wait_for_work(std::chrono::milliseconds(5));
    }
    h.engine->shutdown();
    h.expect_one_ack_each(1, seq);
    int painted = 0, stopped = 0;
    {
      std::lock_guard<std::mutex> l(h.mu);
      EXPECT_EQ(int64_t(h.acks.size()), seq);
      for (const auto& a : h.acks) {
        if (a.decode_time_us > 0) painted++;
        if (a.decode_time_us == 0) {
          stopped++;
          EXPECT_EQ(a.message.rfind("shutdown", 0), 0u) << a.message;
        }
        EXPECT_GE(a.decode_time_us, 0) << a.sequence << ": " << a.message;
      }
    }
    std::printf("  %d painted, %d acked 0 at shutdown\n", painted, stopped);
    EXPECT_GE(painted, kWindows);
    h.engine->submit(video_draw(1, ++seq, "h264", 0, 0, 320, 240, s->packets[0], 0));
    EXPECT_EQ(h.ack_for(seq).decode_time_us, 0);
    EXPECT_EQ(codecs::video_buffer_counters().live(), buffers_before.live());
  }
  EXPECT_EQ(counters().live_storages(), storages_before);
}

TEST(VideoDraws, VideoThreadsAreConfigurable) {
  CpuBacking backing;
  for (int bad : {-1, 65}) {
    PaintEngineConfig c;
    c.video_threads = bad;
    auto e = PaintEngine::create(backing, std::move(c));
    ASSERT_FALSE(e.ok());
    EXPECT_NE(e.error().message().find("video_threads must be 0 (auto) or 1..64"), std::string::npos)
        << e.error().message();
  }
  {
    Harness h;  // 0: auto
    EXPECT_GE(h.engine->stats().video_threads, 1);
    EXPECT_LE(h.engine->stats().video_threads, 4);
  }
  // One thread decodes every window's video, in each window's order.
  auto s = encode_video("vp8", 64, 48, 6);
  ASSERT_TRUE(s.ok());
  Harness h(1);
  EXPECT_EQ(h.engine->stats().video_threads, 1);
  EXPECT_EQ(h.engine->stats().video_threads_running, 0) << "no video draw yet: no video thread";
  int64_t seq = 0;
  for (int w = 1; w <= 3; ++w) h.engine->window_new(w, 64, 48);
  for (int i = 0; i < 6; ++i)
    for (int w = 1; w <= 3; ++w)
      h.engine->submit(video_draw(w, ++seq, "vp8", 0, 0, 64, 48, s->packets[size_t(i)], i));
  h.settle();
  h.expect_one_ack_each(1, seq);
  for (int64_t i = 1; i <= seq; ++i) EXPECT_GT(h.ack_for(i).decode_time_us, 0) << h.ack_for(i).message;
  for (int w = 1; w <= 3; ++w) EXPECT_GE(region_psnr(h.backing, w, 0, 0, as_bgrx(s->sources.back())), 30.0);
  EXPECT_EQ(h.engine->stats().video_threads_running, 1);
}

// A video thread decodes a window's draws only a few ahead of the UI thread's painting: while
// the UI thread paints nothing, decoded frames do not pile up (each would hold a frame buffer),
// and the windows beside it on the same thread still get theirs decoded.
TEST(VideoDraws, AVideoThreadDecodesOnlyAFewDrawsAheadOfTheUiThread) {
  constexpr int kFrames = 24;
  auto s = encode_video("vp8", 64, 48, kFrames);
  ASSERT_TRUE(s.ok());
  const auto buffers_before = codecs::video_buffer_counters();
  Harness h(1);
  h.engine->window_new(1, 64, 48);
  h.engine->window_new(2, 64, 48);
  h.settle();
  int64_t seq = 0;
  for (int i = 0; i < kFrames; ++i)
    for (int w = 1; w <= 2; ++w)
      h.engine->submit(video_draw(w, ++seq, "vp8", 0, 0, 64, 48, s->packets[size_t(i)], i));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // no run_ui_once meanwhile
  const int64_t held = codecs::video_buffer_counters().live() - buffers_before.live();
  std::printf("  %lld frame buffers live while the UI thread paints nothing\n", static_cast<long long>(held));
  // Per window: 3 decoded frames waiting, and vp8's references (last, golden, altref) at most.
  EXPECT_LE(held, 2 * (3 + 3)) << "frames decoded ahead of the UI thread";
  EXPECT_GE(held, 2) << "both windows' first frames decoded meanwhile";
  h.settle();
  h.expect_one_ack_each(1, seq);
  for (int64_t i = 1; i <= seq; ++i) EXPECT_GT(h.ack_for(i).decode_time_us, 0) << h.ack_for(i).message;
  for (int w = 1; w <= 2; ++w) EXPECT_GE(region_psnr(h.backing, w, 0, 0, as_bgrx(s->sources.back())), 30.0);
}

int64_t thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return int64_t(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
}

// The UI thread does not decode video: with large frames that do not paint (paint=false: the
// UI thread's part is only the ack), the CPU time this thread spends in run_ui_once() is a small
// part of the decode time the reports give. Decoding at the draw's turn on the UI thread (as
// the engine did before the video threads) spends at least the decode time there: this fails.
TEST(VideoDraws, TheUiThreadDoesNotDecode) {
  constexpr int kWindows = 3, kFrames = 8;
  auto s = encode_video("h264", 1920, 1080, kFrames);
  ASSERT_TRUE(s.ok()) << s.error().message();
  Harness h(kWindows);
  int64_t seq = 0;
  for (int w = 1; w <= kWindows; ++w) h.engine->window_new(w, 1920, 1080);
  h.settle();  // the windows' framebuffers are made before the clock starts
  for (int i = 0; i < kFrames; ++i)
    for (int w = 1; w <= kWindows; ++w) {
      auto d = video_draw(w, ++seq, "h264", 0, 0, 1920, 1080, s->packets[size_t(i)], i);
      d.options.paint = false;
      h.engine->submit(std::move(d));
    }
  int64_t ui_cpu_us = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (!h.engine->idle() && std::chrono::steady_clock::now() < deadline) {
    const int64_t t0 = thread_cpu_us();
    h.engine->run_ui_once();
    ui_cpu_us += thread_cpu_us() - t0;
    h.engine->wait_for_work(std::chrono::milliseconds(20));
  }
  ASSERT_TRUE(h.engine->idle());
  h.expect_one_ack_each(1, seq);
  int64_t decode_us = 0;
  {
    std::lock_guard<std::mutex> l(h.mu);
    for (size_t i = 0; i < h.acks.size(); ++i) {
      EXPECT_GT(h.acks[i].decode_time_us, 0) << h.acks[i].message;
      decode_us += h.reports[i].decode_us;
    }
  }
  std::printf("  decode %lld us (video threads), UI thread CPU in run_ui_once %lld us\n",
              static_cast<long long>(decode_us), static_cast<long long>(ui_cpu_us));
  ASSERT_GT(decode_us, 10000) << "frames too small to tell";
  EXPECT_LT(ui_cpu_us * 4, decode_us);
}

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
    ASSERT_TRUE(yuv_to_rgb(*pic->read(), gbr, *dv).ok());
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

// Three-byte RGB and BGR are the four-byte conversions without their fourth byte, for every
// subsampling, both matrices and ranges, and G, B, R planes.
TEST(VideoDraws, ThreeByteRgbMatchesFourByteConversion) {
  const int w = 37, h = 21;  // odd sizes: the last chroma column and row are half covered
  for (PixelFormat yuv : {PixelFormat::YUV420P, PixelFormat::YUV422P, PixelFormat::YUV444P}) {
    Picture src = codecs::testing::moving_yuv_frame(yuv, w, h, 5);
    std::vector<codecs::VideoColor> colors = {{false, false, false}, {true, false, false},
                                              {false, true, false}, {true, true, false}};
    if (yuv == PixelFormat::YUV444P) colors.push_back({false, false, true});
    for (const codecs::VideoColor& color : colors) {
      for (auto [three, four] : {std::pair{PixelFormat::RGB, PixelFormat::RGBA},
                                 std::pair{PixelFormat::BGR, PixelFormat::BGRA}}) {
        auto a = Picture::allocate(three, w, h);
        auto b = Picture::allocate(four, w, h);
        ASSERT_TRUE(yuv_to_rgb(*src.read(), color, *a->write()).ok());
        ASSERT_TRUE(yuv_to_rgb(*src.read(), color, *b->write()).ok());
        auto av = a->read();
        auto bv = b->read();
        int differ = 0;
        for (int y = 0; y < h; ++y)
          for (int x = 0; x < w; ++x)
            for (int c = 0; c < 3; ++c)
              differ += av->plane(0).unchecked_row(y)[x * 3 + c] != bv->plane(0).unchecked_row(y)[x * 4 + c];
        EXPECT_EQ(differ, 0) << name(yuv) << " -> " << name(three) << " bt709 " << color.bt709
                             << " full " << color.full_range << " gbr " << color.gbr;
      }
    }
  }
}

}  // namespace
}  // namespace pixpath::paint
