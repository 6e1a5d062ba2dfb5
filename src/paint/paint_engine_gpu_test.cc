// The paint engine's GPU route (paint_engine.h, "GPU decoding") without a GPU: the decoder
// choice on a machine without one, and the route's ordering, batching, ack timing and CPU
// fallbacks driven through a fake GpuDrawDecoder and a fake texture backing (a CPU backing that
// says its windows are textures; the fake "copies into the texture" by painting into it, in
// the order the engine issues the copies, which is what CUDA-GL map/unmap guarantee on a GPU).
// The same checks against the real nvJPEG decoder and GL textures are in
// src/cuda_loader/gl_gpu_paint_test.cc (label gpu).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "paint/testing/fake_texture_backing.h"
#include "paint/testing/test_support.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/core/storage.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::paint {
namespace {

using testing::bgrx;
using testing::FakeTextureBacking;
using testing::bgrx_bytes;
using testing::solid_draw;

// A patterned w x h jpeg (or jpega) draw.
DrawPacket jpeg_draw(int64_t wid, int64_t seq, int x, int y, int w, int h, int seed,
                     bool alpha = false) {
  auto bytes = bgrx_bytes(w, h, [&](int px, int py) {
    return bgrx(uint8_t(px * 7 + seed * 40), uint8_t(py * 5 + seed * 10), uint8_t((px ^ py) + seed));
  });
  auto pic = Picture::allocate(alpha ? PixelFormat::BGRA : PixelFormat::BGRX, w, h);
  EXPECT_TRUE(pic.ok());
  {
    auto v = pic->write();
    for (int r = 0; r < h; ++r)
      std::copy_n(&bytes[size_t(r) * w * 4], size_t(w) * 4, v->plane(0).row(r).data());
  }
  const auto* enc = codecs::CodecRegistry::builtin().encoder(alpha ? "jpega" : "jpeg");
  EXPECT_NE(enc, nullptr);
  auto e = enc->encode(*pic->read(), codecs::EncodeParams{});
  EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
  DrawPacket p;
  p.wid = wid;
  p.sequence = seq;
  p.x = x;
  p.y = y;
  p.w = w;
  p.h = h;
  p.coding = alpha ? "jpega" : "jpeg";
  p.options = e->options;
  p.data = SharedBytes::adopt(std::move(e->data));
  return p;
}

class FakeFence final : public GpuFence {
 public:
  bool ready() const override {
    std::lock_guard l(mu);
    return signalled;
  }
  Result<void> wait() const override {
    std::unique_lock l(mu);
    cv.wait(l, [&] { return signalled; });
    if (fail) return Error(ErrorCode::Internal, "jpeg", "gpu texture", "fence failure (fake)");
    return ok();
  }
  void signal(bool failed = false) {
    std::lock_guard l(mu);
    fail = failed;
    signalled = true;
    cv.notify_all();
  }
  mutable std::mutex mu;
  mutable std::condition_variable cv;
  bool signalled = false, fail = false;
};

// decode_to_device: the CPU jpeg decoder's RGBA in a storage labelled CudaDevice.
// copy_to_textures: paints into the fake backing at once (issue order), returns a fence the
// test signals (or signalled at once when auto_signal).
class FakeGpuDecoder final : public GpuDrawDecoder {
 public:
  explicit FakeGpuDecoder(FakeTextureBacking* backing) : backing_(backing) {}
  Result<Picture> decode_to_device(std::span<const uint8_t> data, const GpuDecodeParams& params,
                                   std::vector<Error>* warnings = nullptr) const {
    decodes++;
    if (fail_decode.load()) return Error(ErrorCode::Internal, "jpeg", "gpu decode", "failure injected (fake)");
    auto host = decode_host(data, params);
    if (!host.ok()) return host.error();
    if (warnings) warnings->insert(warnings->end(), host->warnings.begin(), host->warnings.end());
    Picture h = std::move(host->picture);
    const auto& plane = h.plane(0);
    MemoryLocation where;
    where.kind = MemoryKind::CudaDevice;
    where.device = 0;
    auto storage = PictureStorage::wrap(where, plane.storage->data(), plane.storage->size(), StorageFlags{},
                                        [keep = h] {});
    if (!storage.ok()) return storage.error();
    return Picture::wrap(PixelFormat::RGBA, h.width(), h.height(), std::move(storage).value(),
                         plane.offset, plane.stride);
  }
  Result<codecs::DecodeResult> decode_to_host(std::span<const uint8_t> data,
                                              const GpuDecodeParams& params) const override {
    host_decodes++;
    return decode_host(data, params);
  }
  // decode_to_device per job, after batch_delay (a slow GPU). With hold_first_call set, the
  // first call waits until release() (so that later draws queue up behind it).
  std::vector<Result<Picture>> decode_batch_to_device(std::span<const GpuDecodeJob> jobs) const override {
    if (batch_delay.count() > 0) std::this_thread::sleep_for(batch_delay);
    {
      std::unique_lock l(mu);
      batch_sizes.push_back(jobs.size());
      in_first_call = batch_sizes.size() == 1;
      cv.notify_all();
      if (hold_first_call && batch_sizes.size() == 1) cv.wait(l, [&] { return released; });
    }
    std::vector<Result<Picture>> out;
    for (const auto& j : jobs) out.push_back(decode_to_device(j.data, j.params, j.warnings));
    return out;
  }
  void wait_first_call() {
    std::unique_lock l(mu);
    cv.wait(l, [&] { return !batch_sizes.empty(); });
  }
  void release() {
    std::lock_guard l(mu);
    released = true;
    cv.notify_all();
  }
  Result<std::shared_ptr<GpuFence>> copy_to_textures(std::span<const GpuCopyJob> jobs) const override {
    std::lock_guard l(mu);
    copy_sizes.push_back(jobs.size());
    if (fail_copy.load()) return Error(ErrorCode::Internal, "jpeg", "gpu texture", "failure injected (fake)");
    for (const auto& j : jobs) {
      const auto& plane = j.picture->plane(0);
      EXPECT_EQ(plane.storage->kind(), MemoryKind::CudaDevice);
      auto s = PictureStorage::wrap(MemoryLocation::host(), plane.storage->data(), plane.storage->size(),
                                    StorageFlags{.read_only = true}, [] {});
      if (!s.ok()) return s.error();
      auto host = Picture::wrap(PixelFormat::RGBA, j.picture->width(), j.picture->height(),
                                std::move(s).value(), plane.offset, plane.stride);
      if (!host.ok()) return host.error();
      EXPECT_TRUE(backing_->cpu.paint(int64_t(j.target.texture) - 1000, j.target.x, j.target.y, *host).ok());
      textures_seen.insert(j.target.texture);
    }
    auto f = std::make_shared<FakeFence>();
    if (auto_signal) f->signal(fail_fence.load());
    fences.push_back(f);
    return std::shared_ptr<GpuFence>(f);
  }
  void forget_texture(uint32_t texture) const override {
    std::lock_guard l(mu);
    forgotten.push_back(texture);
  }
  Result<void> prepare_texture(const GlTextureRegion& t) const override {
    std::lock_guard l(mu);
    prepared.push_back(t.texture);
    if (fail_prepare) return Error(ErrorCode::Internal, "fake", "gpu texture", "prepare failure injected");
    return ok();
  }
  int hardware_engines() const override { return engines; }
  // As a GPU with engines: colour baseline draws are for the GPU (gpu_exactness_refusal), and 4
  // engines give the auto batch limit a GPU without engines has (8).
  int engines = 4;

  void signal_all() {
    std::lock_guard l(mu);
    for (auto& f : fences) f->signal();
  }

  mutable std::atomic<int> decodes{0}, host_decodes{0};
  mutable std::atomic<bool> fail_decode{false}, fail_copy{false}, fail_fence{false};
  bool auto_signal = true;
  bool hold_first_call = false;
  std::chrono::milliseconds batch_delay{0};
  mutable bool released = false, in_first_call = false;
  mutable std::vector<size_t> batch_sizes;
  mutable std::condition_variable cv;
  mutable std::mutex mu;
  mutable std::vector<size_t> copy_sizes;
  mutable std::vector<std::shared_ptr<FakeFence>> fences;
  mutable std::vector<uint32_t> forgotten;
  mutable std::vector<uint32_t> prepared;
  bool fail_prepare = false;
  mutable std::set<uint32_t> textures_seen;

 private:
  // The CPU decoder's picture and warnings: a GPU decoder that reports damaged data (as the
  // own decoder does) would return the same warnings.
  static Result<codecs::DecodeResult> decode_host(std::span<const uint8_t> data, const GpuDecodeParams& params) {
    const auto* dec = codecs::CodecRegistry::builtin().decoder(params.alpha_offset ? "jpega" : "jpeg");
    codecs::DecodeParams dp;
    dp.width = params.width;
    dp.height = params.height;
    DrawOptions opts;
    opts.alpha_offset = params.alpha_offset;
    dp.options = &opts;
    return dec->decode(SharedBytes::copy_of(data), dp, PixelFormat::RGBA);
  }
  FakeTextureBacking* backing_;
};

struct Acks {
  std::mutex mu;
  std::vector<DamageAck> acks;
  std::vector<PaintReport> reports;
  AckSink sink() {
    return [this](const DamageAck& a, const PaintReport& r) {
      std::lock_guard l(mu);
      acks.push_back(a);
      reports.push_back(r);
    };
  }
  std::vector<int64_t> order() {
    std::lock_guard l(mu);
    std::vector<int64_t> s;
    for (auto& a : acks) s.push_back(a.sequence);
    return s;
  }
};

// The same draws through the CPU decoder into a CPU backing: the expected pixels.
Picture cpu_reference(const std::vector<DrawPacket>& draws, int64_t wid, int w, int h) {
  CpuBacking b;
  PaintEngineConfig c;
  auto e = PaintEngine::create(b, c);
  EXPECT_TRUE(e.ok());
  (*e)->window_new(wid, w, h);
  for (auto d : draws)
    if (d.wid == wid) (*e)->submit(std::move(d));
  EXPECT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  auto snap = b.snapshot(wid);
  EXPECT_TRUE(snap.ok());
  return std::move(snap).value();
}

void expect_same(const Picture& a, const Picture& b) {
  ASSERT_EQ(a.width(), b.width());
  ASSERT_EQ(a.height(), b.height());
  auto va = a.read();
  auto vb = b.read();
  int diff = 0;
  for (int y = 0; y < a.height(); ++y)
    for (int x = 0; x < a.width() * 4; ++x)
      if ((x & 3) != 3 && va->plane(0).row(y)[size_t(x)] != vb->plane(0).row(y)[size_t(x)]) ++diff;
  EXPECT_EQ(diff, 0);
}

TEST(PaintEngineGpu, AutoWithCpuBackingUsesCpuAndSaysWhy) {
  CpuBacking b;
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Auto;
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok());
  const auto st = (*e)->stats();
  EXPECT_EQ(st.decoder, "cpu");
  EXPECT_NE(st.decoder_reason.find("no window textures"), std::string::npos) << st.decoder_reason;
  EXPECT_EQ(st.gpu_routing, "");  // no GPU route, so no routing to report
}

// A program without a GPU route (no factory) or a factory that fails: auto -> cpu with the
// reason; gpu -> Unavailable at create(). The real loader's reasons are checked in
// src/cuda_loader/gpu_jpeg_loader_test.cc.
TEST(PaintEngineGpu, NoGpuDecoderAutoFallsBackAndGpuRefuses) {
  const GpuDrawDecoderFactory failing = []() -> Result<std::shared_ptr<const GpuDrawDecoder>> {
    return Error(ErrorCode::Unavailable, "gpu", "load module", "no NVIDIA driver (fake)");
  };
  for (const bool with_factory : {false, true}) {
    SCOPED_TRACE(with_factory ? "failing factory" : "no factory");
    const std::string why = with_factory ? "no NVIDIA driver (fake)" : "no GPU route";
    FakeTextureBacking b;
    PaintEngineConfig c;
    c.decoder = DecoderChoice::Auto;
    if (with_factory) c.gpu_factory = failing;
    auto e = PaintEngine::create(b, c);
    ASSERT_TRUE(e.ok());
    const auto st = (*e)->stats();
    EXPECT_EQ(st.decoder, "cpu");
    EXPECT_NE(st.decoder_reason.find("no GPU decoder"), std::string::npos) << st.decoder_reason;
    EXPECT_NE(st.decoder_reason.find(why), std::string::npos) << st.decoder_reason;

    PaintEngineConfig g = c;
    g.decoder = DecoderChoice::Gpu;
    auto ge = PaintEngine::create(b, g);
    ASSERT_FALSE(ge.ok());
    EXPECT_EQ(ge.error().code(), ErrorCode::Unavailable);
    EXPECT_NE(ge.error().message().find("decoder gpu"), std::string::npos) << ge.error().message();
    EXPECT_NE(ge.error().message().find(why), std::string::npos) << ge.error().message();
    CpuBacking cb;
    auto ge2 = PaintEngine::create(cb, g);
    ASSERT_FALSE(ge2.ok());
    EXPECT_EQ(ge2.error().code(), ErrorCode::Unavailable);
  }
}

TEST(PaintEngineGpu, DecoderChoiceParses) {
  EXPECT_EQ(*parse_decoder_choice("auto"), DecoderChoice::Auto);
  EXPECT_EQ(*parse_decoder_choice("gpu"), DecoderChoice::Gpu);
  EXPECT_EQ(*parse_decoder_choice("cpu"), DecoderChoice::Cpu);
  EXPECT_FALSE(parse_decoder_choice("cuda").ok());
}

struct GpuHarness {
  FakeTextureBacking backing;
  std::shared_ptr<FakeGpuDecoder> gpu = std::make_shared<FakeGpuDecoder>(&backing);
  Acks acks;
  std::unique_ptr<PaintEngine> engine;
  explicit GpuHarness(DecoderChoice choice = DecoderChoice::Gpu, int max_batch = 8,
                      bool hold_first_call = false) {
    gpu->hold_first_call = hold_first_call;
    PaintEngineConfig c;
    c.decoder = choice;
    c.gpu_max_batch = max_batch;
    c.gpu_min_pixels = 0;  // the small test pictures take the GPU route
    c.gpu_decoder = gpu;
    c.on_ack = acks.sink();
    auto e = PaintEngine::create(backing, c);
    EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().message());
    engine = std::move(e).value();
  }
};

TEST(PaintEngineGpu, GpuRoutePaintsInOrderAndAcksAfterTheFence) {
  GpuHarness h;
  h.gpu->auto_signal = false;
  EXPECT_EQ(h.engine->stats().decoder, "gpu");
  std::vector<DrawPacket> draws = {jpeg_draw(1, 1, 0, 0, 64, 48, 1),
                                   solid_draw(1, 2, 8, 8, 16, 16, bgrx(200, 10, 10)),
                                   jpeg_draw(1, 3, 20, 4, 32, 32, 2),
                                   jpeg_draw(1, 4, 0, 0, 16, 16, 3, /*alpha=*/true)};
  h.engine->window_new(1, 64, 48);
  for (auto d : draws) h.engine->submit(std::move(d));
  // Everything is painted, but no ack may go out before its fence: the rgb draw (2) waits
  // behind the GPU ack of draw 1.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto copied = [&] {
    size_t n = 0;
    for (size_t k : h.gpu->copy_sizes) n += k;
    return n;
  };
  while (copied() < 3) {
    h.engine->run_ui_once();
    h.engine->wait_for_work(std::chrono::milliseconds(5));
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  }
  h.engine->run_ui_once();
  EXPECT_TRUE(h.acks.order().empty());
  EXPECT_FALSE(h.engine->idle());
  h.gpu->signal_all();
  ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
  EXPECT_EQ(h.acks.order(), (std::vector<int64_t>{1, 2, 3, 4}));
  for (size_t i = 0; i < h.acks.acks.size(); ++i) {
    EXPECT_GT(h.acks.acks[i].decode_time_us, 0) << h.acks.acks[i].message;
    EXPECT_EQ(h.acks.reports[i].decoder, i == 1 ? "cpu" : "gpu");
  }
  auto snap = h.backing.snapshot(1);
  ASSERT_TRUE(snap.ok());
  expect_same(*snap, cpu_reference(draws, 1, 64, 48));
  const auto st = h.engine->stats();
  EXPECT_EQ(st.gpu_decodes, 3);
  EXPECT_EQ(st.gpu_fallbacks, 0);
  EXPECT_EQ(h.backing.written, 3);
}

TEST(PaintEngineGpu, DeltaScaledAndStoreTakeTheCpu) {
  GpuHarness h;
  h.engine->window_new(1, 64, 48);
  auto scaled = jpeg_draw(1, 1, 0, 0, 32, 24, 1);
  scaled.options.scaled_width = 32;
  scaled.options.scaled_height = 24;
  scaled.w = 64;
  scaled.h = 48;
  h.engine->submit(std::move(scaled));
  auto stored = jpeg_draw(1, 2, 0, 0, 16, 16, 2);
  stored.options.store = 7;
  h.engine->submit(std::move(stored));
  ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
  EXPECT_EQ(h.gpu->decodes.load(), 0);
  ASSERT_EQ(h.acks.acks.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(h.acks.acks[i].decode_time_us, 0) << h.acks.acks[i].message;
    EXPECT_EQ(h.acks.reports[i].decoder, "cpu");
  }
}

TEST(PaintEngineGpu, DecodeFailureFallsBackToCpu) {
  GpuHarness h;
  h.gpu->fail_decode = true;
  std::vector<DrawPacket> draws = {jpeg_draw(1, 1, 0, 0, 40, 30, 1), jpeg_draw(1, 2, 5, 5, 20, 20, 2)};
  h.engine->window_new(1, 40, 30);
  for (auto d : draws) h.engine->submit(std::move(d));
  ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
  EXPECT_EQ(h.acks.order(), (std::vector<int64_t>{1, 2}));
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_GT(h.acks.acks[i].decode_time_us, 0);
    EXPECT_EQ(h.acks.reports[i].decoder, "gpu->cpu");
  }
  EXPECT_EQ(h.engine->stats().gpu_fallbacks, 2);
  EXPECT_NE(h.engine->stats().last_gpu_error.find("failure injected"), std::string::npos);
  expect_same(*h.backing.snapshot(1), cpu_reference(draws, 1, 40, 30));
}

TEST(PaintEngineGpu, CopyAndFenceFailuresFallBackInOrder) {
  for (int mode = 0; mode < 2; ++mode) {
    GpuHarness h;
    if (mode == 0) h.gpu->fail_copy = true;
    else h.gpu->fail_fence = true;
    std::vector<DrawPacket> draws = {jpeg_draw(1, 1, 0, 0, 40, 30, 1),
                                     solid_draw(1, 2, 0, 0, 10, 10, bgrx(1, 200, 3))};
    h.engine->window_new(1, 40, 30);
    for (auto d : draws) h.engine->submit(std::move(d));
    ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
    EXPECT_EQ(h.acks.order(), (std::vector<int64_t>{1, 2})) << "mode " << mode;
    EXPECT_GT(h.acks.acks[0].decode_time_us, 0);
    EXPECT_EQ(h.acks.reports[0].decoder, "gpu->cpu");
    EXPECT_EQ(h.engine->stats().gpu_fallbacks, 1);
    if (mode == 0) expect_same(*h.backing.snapshot(1), cpu_reference(draws, 1, 40, 30));
  }
}

TEST(PaintEngineGpu, WindowsReadyTogetherShareOneCopyCall) {
  GpuHarness h;
  h.engine->window_new(1, 48, 32);
  h.engine->window_new(2, 48, 32);
  h.engine->window_new(3, 48, 32);
  h.engine->run_ui_once();
  h.engine->submit(jpeg_draw(1, 1, 0, 0, 48, 32, 1));
  h.engine->submit(jpeg_draw(2, 2, 0, 0, 48, 32, 2));
  h.engine->submit(jpeg_draw(3, 3, 0, 0, 48, 32, 3));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (h.engine->stats().gpu_decodes < 3) {  // decoded, not yet copied: no run_ui_once
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  }
  ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
  ASSERT_EQ(h.gpu->copy_sizes.size(), 1u);
  EXPECT_EQ(h.gpu->copy_sizes[0], 3u);
  EXPECT_EQ(h.engine->stats().gpu_copy_calls, 1);
  EXPECT_EQ(h.acks.acks.size(), 3u);
}

// Draws that wait for the GPU thread together are decoded in one call (one hardware batch),
// at most gpu_max_batch at a time; a draw alone is not held back for company.
TEST(PaintEngineGpu, DrawsWaitingTogetherShareOneGpuDecodeCall) {
  for (int max_batch : {8, 2}) {
    SCOPED_TRACE("gpu_max_batch " + std::to_string(max_batch));
    GpuHarness h(DecoderChoice::Gpu, max_batch, /*hold_first_call=*/true);
    for (int64_t wid = 1; wid <= 4; ++wid) h.engine->window_new(wid, 48, 32);
    h.engine->submit(jpeg_draw(1, 1, 0, 0, 48, 32, 1));
    h.gpu->wait_first_call();  // the GPU thread holds draw 1; the rest queue up
    for (int64_t wid = 2; wid <= 4; ++wid) h.engine->submit(jpeg_draw(wid, wid, 0, 0, 48, 32, int(wid)));
    h.engine->submit(jpeg_draw(2, 5, 8, 8, 16, 16, 5));  // a second draw of window 2
    h.gpu->release();
    ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
    const std::vector<size_t> want =
        max_batch == 8 ? std::vector<size_t>{1, 4} : std::vector<size_t>{1, 2, 2};
    {
      std::lock_guard l(h.gpu->mu);
      EXPECT_EQ(h.gpu->batch_sizes, want);
    }
    const auto st = h.engine->stats();
    EXPECT_EQ(st.gpu_decodes, 5);
    EXPECT_EQ(st.gpu_decode_calls, int64_t(want.size()));
    EXPECT_EQ(st.gpu_batched_max, max_batch == 8 ? 4 : 2);
    ASSERT_EQ(h.acks.acks.size(), 5u);
    for (const auto& a : h.acks.acks) EXPECT_GT(a.decode_time_us, 0) << a.message;
    // Window 2's two draws were painted in order.
    std::vector<DrawPacket> w2 = {jpeg_draw(2, 2, 0, 0, 48, 32, 2), jpeg_draw(2, 5, 8, 8, 16, 16, 5)};
    expect_same(*h.backing.snapshot(2), cpu_reference(w2, 2, 48, 32));
  }
}

// gpu_max_batch 0 (the default): auto_gpu_batch(): on nvJPEG's route kGpuBatchPerEngine per
// hardware engine, on the own decoder's route one per engine plus one, 8 without engines.
TEST(PaintEngineGpu, AutoBatchFollowsTheHardwareEngines) {
  EXPECT_EQ(auto_gpu_batch(7, false), 14);
  EXPECT_EQ(auto_gpu_batch(7, true), 8);
  EXPECT_EQ(auto_gpu_batch(0, true), 8);
  EXPECT_EQ(auto_gpu_batch(40, false), 64);
  for (int engines : {0, 7}) {
    FakeTextureBacking b;
    auto gpu = std::make_shared<FakeGpuDecoder>(&b);
    gpu->engines = engines;
    PaintEngineConfig c;
    c.decoder = DecoderChoice::Gpu;
    c.gpu_decoder = gpu;
    auto e = PaintEngine::create(b, c);
    ASSERT_TRUE(e.ok());
    EXPECT_EQ((*e)->stats().gpu_max_batch, auto_gpu_batch(engines, gpu->reports_damage()));
    EXPECT_EQ((*e)->stats().gpu_max_batch, engines ? kGpuBatchPerEngine * engines : 8);  // the fake: nvJPEG-like
  }
}

// A draw under gpu_min_pixels (256x256 by default) is decoded on the CPU: straight into the
// framebuffer with nothing earlier of its window unpainted, else into a picture the backing
// paints; a draw of 256x256 or more takes the GPU.
TEST(PaintEngineGpu, SmallPicturesStayOnTheCpu) {
  FakeTextureBacking b;
  auto gpu = std::make_shared<FakeGpuDecoder>(&b);
  Acks acks;
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Gpu;
  c.gpu_decoder = gpu;
  c.on_ack = acks.sink();
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok());
  (*e)->window_new(1, 300, 300);
  (*e)->window_new(2, 300, 300);
  // No run_ui_once between the submits: each later draw of window 1 is queued behind draw 1.
  std::vector<DrawPacket> w1 = {jpeg_draw(1, 1, 0, 0, 255, 256, 1), jpeg_draw(1, 2, 10, 10, 100, 100, 2),
                                jpeg_draw(1, 3, 0, 0, 256, 256, 3)};
  std::vector<DrawPacket> w2 = {jpeg_draw(2, 4, 0, 0, 256, 256, 4)};
  for (auto d : w1) (*e)->submit(d);
  for (auto d : w2) (*e)->submit(d);
  ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  ASSERT_EQ(acks.acks.size(), 4u);
  std::map<int64_t, std::pair<std::string, bool>> by_seq;
  for (size_t i = 0; i < acks.acks.size(); ++i) {
    EXPECT_GT(acks.acks[i].decode_time_us, 0) << acks.acks[i].message;
    by_seq[acks.acks[i].sequence] = {std::string(acks.reports[i].decoder), acks.reports[i].direct};
  }
  EXPECT_EQ(by_seq[1], std::make_pair(std::string("cpu"), true));   // small, first: direct
  EXPECT_EQ(by_seq[2], std::make_pair(std::string("cpu"), false));  // small, queued: CPU too
  EXPECT_EQ(by_seq[3], std::make_pair(std::string("gpu"), false));  // 256x256: GPU
  EXPECT_EQ(by_seq[4], std::make_pair(std::string("gpu"), false));
  EXPECT_EQ(gpu->decodes.load(), 2);
  expect_same(*b.snapshot(1), cpu_reference(w1, 1, 300, 300));
  expect_same(*b.snapshot(2), cpu_reference(w2, 2, 300, 300));
}

// Routing by measurement (gpu_route_by_measurement, on by default): a size the threshold sends
// to the GPU moves to the CPU once the CPU is measured to paint it sooner (here the GPU takes
// 30 ms a batch); the CPU was explored to learn its figure, the GPU, 8x slower or more, is
// explored again only one draw in 256, and stats() shows the figures.
TEST(PaintEngineGpu, MeasuredRoutingTakesTheFasterRoute) {
  FakeTextureBacking b;
  auto gpu = std::make_shared<FakeGpuDecoder>(&b);
  gpu->batch_delay = std::chrono::milliseconds(30);
  Acks acks;
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Gpu;
  c.gpu_decoder = gpu;
  c.gpu_min_pixels = 64 * 64;  // 128x128 starts on the GPU
  c.on_ack = acks.sink();
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok());
  (*e)->window_new(1, 300, 300);
  std::vector<DrawPacket> draws;
  for (int i = 0; i < 96; ++i) draws.push_back(jpeg_draw(1, i + 1, i % 3 * 50, i % 5 * 30, 128, 128, i % 7));
  for (const auto& d : draws) {  // one at a time: each route's latency alone
    (*e)->submit(d);
    ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  }
  ASSERT_EQ(acks.reports.size(), draws.size());
  int late_gpu = 0;
  for (size_t i = 0; i < acks.reports.size(); ++i) {
    EXPECT_GT(acks.acks[i].decode_time_us, 0) << acks.acks[i].message;
    if (i >= 64) late_gpu += acks.reports[i].decoder == "gpu";
  }
  EXPECT_EQ(late_gpu, 0);
  const auto st = (*e)->stats();
  EXPECT_EQ(st.gpu_routing, "measured");
  EXPECT_GT(st.gpu_route_explored, 0);
  EXPECT_NE(st.gpu_route_table.find("128x128+ cpu"), std::string::npos) << st.gpu_route_table;
  EXPECT_NE(st.gpu_route_table.find("-> cpu"), std::string::npos) << st.gpu_route_table;
  expect_same(*b.snapshot(1), cpu_reference(draws, 1, 300, 300));
}

// gpu_route_by_measurement off: the threshold alone, however slow the GPU (measured routing
// would have sent the 8th draw to the CPU to learn its figure).
TEST(PaintEngineGpu, SizeRoutingIsTheThresholdAlone) {
  FakeTextureBacking b;
  auto gpu = std::make_shared<FakeGpuDecoder>(&b);
  gpu->batch_delay = std::chrono::milliseconds(5);
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Gpu;
  c.gpu_decoder = gpu;
  c.gpu_min_pixels = 64 * 64;
  c.gpu_route_by_measurement = false;
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok());
  (*e)->window_new(1, 300, 300);
  for (int i = 0; i < 12; ++i) {
    (*e)->submit(jpeg_draw(1, i + 1, 0, 0, 128, 128, i));
    ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  }
  EXPECT_EQ(gpu->decodes.load(), 12);
  const auto st = (*e)->stats();
  EXPECT_EQ(st.gpu_routing, "size");
  EXPECT_EQ(st.gpu_route_explored, 0);
  EXPECT_EQ(st.gpu_route_table, "");
}

TEST(PaintEngineGpu, GpuMaxBatchIsChecked) {
  FakeTextureBacking b;
  PaintEngineConfig c;
  c.gpu_max_batch = 65;
  auto e = PaintEngine::create(b, c);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.error().message().find("gpu_max_batch"), std::string::npos);
}

TEST(PaintEngineGpu, ResizeAndDestroyForgetTheTexture) {
  GpuHarness h;
  h.engine->window_new(1, 32, 32);
  h.engine->submit(jpeg_draw(1, 1, 0, 0, 32, 32, 1));
  h.engine->window_resize(1, 48, 48);
  h.engine->submit(jpeg_draw(1, 2, 16, 16, 32, 32, 2));
  h.engine->window_lost(1);
  ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
  // Registered when the window was made and again when it was resized, forgotten before the
  // resize and before the window went.
  EXPECT_EQ(h.gpu->prepared, (std::vector<uint32_t>{1001, 1001}));
  EXPECT_EQ(h.gpu->forgotten, (std::vector<uint32_t>{1001, 1001}));
  EXPECT_EQ(h.acks.order(), (std::vector<int64_t>{1, 2}));
}

// A failed prepare is not fatal: the draw still takes the GPU, and the texture is still
// forgotten before the window goes (the module may hold its registration).
TEST(PaintEngineGpu, FailedPrepareStillForgetsTheTexture) {
  GpuHarness h;
  h.gpu->fail_prepare = true;
  h.engine->window_new(1, 32, 32);  // never drawn into: only the prepare touched its texture
  h.engine->window_new(2, 32, 32);
  h.engine->submit(jpeg_draw(2, 1, 0, 0, 32, 32, 1));
  h.engine->window_lost(1);
  ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
  EXPECT_EQ(h.gpu->prepared, (std::vector<uint32_t>{1001, 1002}));
  EXPECT_EQ(h.gpu->forgotten, (std::vector<uint32_t>{1001}));
  ASSERT_EQ(h.acks.acks.size(), 1u);
  EXPECT_EQ(h.acks.reports[0].decoder, "gpu");
}

TEST(PaintEngineGpu, NoTextureIsPreparedOffTheTextureRoute) {
  CpuBacking b;
  FakeTextureBacking unused;
  auto gpu = std::make_shared<FakeGpuDecoder>(&unused);
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Gpu;
  c.gpu_decoder = gpu;
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok());
  (*e)->window_new(1, 32, 32);
  ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  EXPECT_TRUE(gpu->prepared.empty());
}

TEST(PaintEngineGpu, OutsideTheWindowTakesTheCpu) {
  GpuHarness h;
  h.engine->window_new(1, 32, 32);
  h.engine->submit(jpeg_draw(1, 1, 16, 16, 32, 32, 1));  // clipped by the CPU paint
  ASSERT_TRUE(h.engine->wait_idle(std::chrono::seconds(20)));
  ASSERT_EQ(h.acks.acks.size(), 1u);
  EXPECT_GT(h.acks.acks[0].decode_time_us, 0);
  EXPECT_EQ(h.acks.reports[0].decoder, "gpu->cpu");
}

TEST(PaintEngineGpu, GpuWithCpuBackingDecodesToHost) {
  CpuBacking b;
  FakeTextureBacking unused;
  auto gpu = std::make_shared<FakeGpuDecoder>(&unused);
  Acks acks;
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Gpu;
  c.gpu_decoder = gpu;
  c.gpu_min_pixels = 0;
  c.on_ack = acks.sink();
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)->stats().decoder, "gpu-host");
  std::vector<DrawPacket> draws = {jpeg_draw(1, 1, 0, 0, 40, 30, 1)};
  (*e)->window_new(1, 40, 30);
  (*e)->submit(draws[0]);
  ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  EXPECT_EQ(gpu->host_decodes.load(), 1);
  ASSERT_EQ(acks.acks.size(), 1u);
  EXPECT_EQ(acks.reports[0].decoder, "gpu");
  expect_same(*b.snapshot(1), cpu_reference(draws, 1, 40, 30));
}

TEST(PaintEngineGpu, ShutdownWaitsForOutstandingFences) {
  GpuHarness h;
  h.gpu->auto_signal = false;
  h.engine->window_new(1, 32, 32);
  h.engine->submit(jpeg_draw(1, 1, 0, 0, 32, 32, 1));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (h.gpu->fences.empty()) {
    h.engine->run_ui_once();
    h.engine->wait_for_work(std::chrono::milliseconds(2));
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
  }
  std::thread signaller([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    h.gpu->signal_all();
  });
  h.engine->shutdown();
  signaller.join();
  ASSERT_EQ(h.acks.acks.size(), 1u);
  EXPECT_GT(h.acks.acks[0].decode_time_us, 0);
  EXPECT_EQ(h.gpu->forgotten, (std::vector<uint32_t>{1001}));
}

std::vector<uint8_t> jpeg_file(const std::string& name) {
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  EXPECT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set (ctest sets it)";
  auto bytes = codecs::read_file(std::string(root ? root : ".") + "/jpeg/" + name);
  EXPECT_TRUE(bytes.ok()) << (bytes.ok() ? "" : bytes.error().message());
  return bytes.ok() ? std::move(bytes).value() : std::vector<uint8_t>{};
}

// Submits each file of tests/data/jpeg as a jpeg draw to its own 96x64 window (wid = sequence
// = 1, 2, ... in order).
void submit_jpeg_files(PaintEngine& engine, const std::vector<const char*>& files) {
  int64_t seq = 1;
  for (const char* f : files) {
    engine.window_new(seq, 96, 64);
    DrawPacket p;
    p.wid = seq;
    p.sequence = seq;
    p.w = 96;
    p.h = 64;
    p.coding = "jpeg";
    p.data = SharedBytes::adopt(jpeg_file(f));
    engine.submit(std::move(p));
    ++seq;
  }
}

// gpu_exactness_refusal (gpu_draw_decoder.h) on the files of tests/data/jpeg (README.md there).
TEST(GpuRoute, RefusesWhatTheGpuCannotDecodeExactly) {
  struct Case {
    const char* file;
    const char* with_engines;     // the refusal's key words; nullptr: taken
    const char* without_engines;
    const char* own_decoder;      // the own decoder's route (engines or not)
  };
  const Case cases[] = {
      {"cjpeg-q75.jpg", nullptr, "no hardware JPEG engines", nullptr},
      {"cjpeg-gray-progressive-q75.jpg", nullptr, nullptr, "progressive gray"},
      {"cjpeg-progressive-q75.jpg", "progressive", "progressive", "progressive"},
      {"cjpeg-extended-q10.jpg", "extended sequential", "extended", "extended"},
      {"cjpeg-440-q75.jpg", "sampling", "4:4:0", "4:4:0"},
      {"cjpeg-arithmetic-q80.jpg", "arithmetic", "arithmetic", "arithmetic"},
      {"pillow-cmyk-q90.jpg", "CMYK", "CMYK", "CMYK"},
      {"turbojpeg-ycck-420-q85.jpg", "CMYK", "CMYK", "CMYK"},
      {"cjpeg-q75-truncated.jpg", "EOI", "EOI", "EOI"},
      // Only a decode can tell: the own decoder's does, and reports it.
      {"cjpeg-q75-bitflips.jpg", nullptr, "no hardware JPEG engines", nullptr},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.file);
    const auto data = jpeg_file(c.file);
    ASSERT_FALSE(data.empty());
    for (const bool engines : {true, false}) {
      const char* expect = engines ? c.with_engines : c.without_engines;
      auto why = gpu_exactness_refusal(data, engines);
      if (!expect) {
        EXPECT_FALSE(why) << *why;
      } else {
        ASSERT_TRUE(why) << "taken, expected a refusal naming " << expect;
        EXPECT_NE(why->find(expect), std::string::npos) << *why;
      }
    }
    for (const bool engines : {true, false}) {
      auto why = gpu_exactness_refusal(data, engines, true, /*own_decoder=*/true);
      if (!c.own_decoder) {
        EXPECT_FALSE(why) << *why;
      } else {
        ASSERT_TRUE(why) << "taken by the own decoder's route, expected a refusal naming " << c.own_decoder;
        EXPECT_NE(why->find(c.own_decoder), std::string::npos) << *why;
      }
    }
    // Asked for a decoupled backend by name: only what nvJPEG cannot decode, and truncation.
    auto named = gpu_exactness_refusal(data, false, /*exactness=*/false);
    const std::string f = c.file;
    const bool undecodable = f.find("arithmetic") != std::string::npos || f.find("cmyk") != std::string::npos ||
                             f.find("ycck") != std::string::npos || f.find("truncated") != std::string::npos;
    EXPECT_EQ(named.has_value(), undecodable) << (named ? *named : "taken");
  }
  // What the scan cannot read is left to the decoder.
  const std::vector<uint8_t> garbage(100, 0x5a);
  EXPECT_FALSE(gpu_exactness_refusal(garbage, true));
}

// The engine keeps refused draws off the GPU (counted, with the reason), decodes them on the
// CPU, and counts a damaged draw's warnings per coding (painted anyway, never silently).
TEST(PaintEngineGpu, RefusedDrawsStayOnTheCpuAndWarningsAreCounted) {
  FakeTextureBacking b;
  FakeGpuDecoder gpu(&b);
  gpu.engines = 7;
  Acks acks;
  std::vector<std::string> log;
  std::mutex log_mu;
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Gpu;
  c.gpu_decoder = std::shared_ptr<const GpuDrawDecoder>(&gpu, [](const GpuDrawDecoder*) {});
  c.gpu_min_pixels = 0;
  c.on_ack = acks.sink();
  c.log = [&](std::string_view line) {
    std::lock_guard l(log_mu);
    log.emplace_back(line);
  };
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok()) << e.error().message();
  const char* files[] = {"cjpeg-q75.jpg", "cjpeg-progressive-q75.jpg", "cjpeg-arithmetic-q80.jpg",
                         "cjpeg-q75-truncated.jpg", "cjpeg-q75-bitflips.jpg"};
  submit_jpeg_files(**e, std::vector<const char*>(std::begin(files), std::end(files)));
  ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  const auto st = (*e)->stats();
  EXPECT_EQ(st.gpu_routed_to_cpu, 3);  // progressive, arithmetic, truncated
  EXPECT_NE(st.last_gpu_route_reason.find("EOI"), std::string::npos) << st.last_gpu_route_reason;
  EXPECT_EQ(gpu.decodes.load() + gpu.host_decodes.load(), 2);  // the intact and the bit-flipped one
  // The truncated draw was decoded on the CPU with a warning; the bit-flipped one went to the
  // (fake) GPU, which reports the damage as a GPU decoder that decodes the entropy-coded data
  // itself does (GpuDecodeJob::warnings): counted and acknowledged the same way.
  ASSERT_EQ(st.decode_warnings.count("jpeg"), 1u);
  EXPECT_EQ(st.decode_warnings.at("jpeg"), 2);
  std::lock_guard l(acks.mu);
  ASSERT_EQ(acks.acks.size(), 5u);
  for (size_t i = 0; i < acks.acks.size(); ++i) {
    const int64_t s = acks.acks[i].sequence;
    EXPECT_GT(acks.acks[i].decode_time_us, 0) << s;  // all painted
    EXPECT_EQ(acks.reports[i].warnings, s == 4 || s == 5 ? 1 : 0) << s;
    EXPECT_EQ(acks.reports[i].decoder, s == 1 || s == 5 ? "gpu" : "cpu") << s;
  }
  std::lock_guard ll(log_mu);
  // The first warning is logged; the second follows within the second (counted, not logged).
  const auto said = [&](const char* what) {
    return std::count_if(log.begin(), log.end(),
                         [&](const std::string& line) { return line.find(what) != std::string::npos; });
  };
  EXPECT_EQ(said("Premature end of JPEG file") + said("Corrupt JPEG data"), 1);
}

// decode_to_host's warnings (a damaged picture the GPU decoder reported) are counted and
// acknowledged as the CPU decoders' are.
TEST(PaintEngineGpu, GpuHostRouteCountsTheDecodersWarnings) {
  CpuBacking b;
  FakeTextureBacking unused;
  auto gpu = std::make_shared<FakeGpuDecoder>(&unused);
  Acks acks;
  PaintEngineConfig c;
  c.decoder = DecoderChoice::Gpu;
  c.gpu_decoder = gpu;
  c.gpu_min_pixels = 0;
  c.on_ack = acks.sink();
  c.log = [](std::string_view) {};
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok());
  submit_jpeg_files(**e, {"cjpeg-q75-bitflips.jpg", "cjpeg-q75.jpg"});
  ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  EXPECT_EQ(gpu->host_decodes.load(), 2);
  const auto st = (*e)->stats();
  ASSERT_EQ(st.decode_warnings.count("jpeg"), 1u);
  EXPECT_EQ(st.decode_warnings.at("jpeg"), 1);
  EXPECT_NE(st.last_decode_warning.find("Corrupt JPEG data"), std::string::npos) << st.last_decode_warning;
  std::lock_guard l(acks.mu);
  ASSERT_EQ(acks.acks.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(acks.reports[i].decoder, "gpu");
    EXPECT_EQ(acks.reports[i].warnings, acks.acks[i].sequence == 1 ? 1 : 0);
  }
}

// On the CPU route: both damaged files warn, per coding, and the draws are painted.
TEST(PaintEngineGpu, CpuRouteCountsWarningsOfDamagedDraws) {
  CpuBacking b;
  Acks acks;
  PaintEngineConfig c;
  c.on_ack = acks.sink();
  c.log = [](std::string_view) {};
  auto e = PaintEngine::create(b, c);
  ASSERT_TRUE(e.ok());
  submit_jpeg_files(**e, {"cjpeg-q75-truncated.jpg", "cjpeg-q75-bitflips.jpg", "cjpeg-q75.jpg"});
  ASSERT_TRUE((*e)->wait_idle(std::chrono::seconds(20)));
  const auto st = (*e)->stats();
  EXPECT_EQ(st.decode_warnings.at("jpeg"), 2);
  EXPECT_EQ(st.gpu_routed_to_cpu, 0);
  std::lock_guard l(acks.mu);
  ASSERT_EQ(acks.acks.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_GT(acks.acks[i].decode_time_us, 0);
    EXPECT_EQ(acks.reports[i].warnings, acks.acks[i].sequence == 3 ? 0 : 1);
  }
}

}  // namespace
}  // namespace pixpath::paint
