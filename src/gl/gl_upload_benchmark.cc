// Upload throughput into a window texture: host picture -> texture.
//   Mapped: the decoder's write into a mapped upload buffer (a memcpy stands in for it) and the
//           glTexSubImage2D from that buffer (the zero-copy path of direct decoding).
//   Client: glTexSubImage2D straight from a host picture (pictures decoded elsewhere).
//   Staged: the same picture copied into an upload buffer first (GlContextOptions::client_uploads).
//   Yuv420: planes uploaded as R8 and converted in the fragment shader.
// The GPU is waited for every 16 paints and at the end, inside the timed loop, so the figures
// are sustained throughput, not queueing.
#include <benchmark/benchmark.h>

#include <cstring>

#include "pixpath/core/counters.h"
#include "pixpath/gl/gl_context.h"
#include "pixpath/gl/gl_window.h"

namespace pixpath::gl {
namespace {

using ClientUploads = GlContextOptions::ClientUploads;

// One context per client-upload mode, created on first use.
std::shared_ptr<GlContext> context(ClientUploads mode = ClientUploads::Auto) {
  static std::shared_ptr<GlContext> ctx[3];
  auto& c = ctx[int(mode)];
  if (!c) {
    GlContextOptions o;
    o.client_uploads = mode;
    auto made = GlContext::create(o);
    if (made.ok()) c = *made;
  }
  return c;
}

void fill(const PictureView& v) {
  for (int p = 0; p < v.plane_count; ++p)
    for (int y = 0; y < v.planes[size_t(p)].height; ++y)
      std::memset(v.planes[size_t(p)].unchecked_row(y), (y * 7 + p) & 0xFF, v.planes[size_t(p)].row_bytes());
}

// kClient: Picture painted from host memory, straight (Direct); kStaged: the same through the
// upload ring (Staged); kMapped: the decoder's write into an upload buffer stood in by a memcpy.
enum Path { kMapped, kClient, kStaged };

ClientUploads mode_of(Path path) { return path == kStaged ? ClientUploads::Staged : ClientUploads::Direct; }

void BM_Upload(benchmark::State& state, PixelFormat format, Path path) {
  auto ctx = context(mode_of(path));
  if (!ctx) {
    state.SkipWithError("no EGL display");
    return;
  }
  const int w = int(state.range(0)), h = int(state.range(1));
  auto win = GlWindow::create(ctx, w, h);
  auto pic = Picture::allocate(format, w, h);
  if (!win.ok() || !pic.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  auto pv = pic->write();
  fill(*pv);
  ConstPictureView src = *pv;
  size_t bytes = 0;
  for (int p = 0; p < src.plane_count; ++p) bytes += src.planes[size_t(p)].row_bytes() * size_t(src.planes[size_t(p)].height);
  const auto copies_before = counters().copies;
  const GlStats stats_before = ctx->stats();
  int64_t n = 0;
  for (auto _ : state) {
    if (path == kMapped) {
      auto slot = (*win)->begin_upload(format, w, h);
      if (!slot.ok()) {
        state.SkipWithError(slot.error().message().c_str());
        return;
      }
      for (int p = 0; p < src.plane_count; ++p) {  // stands in for the decoder's write
        const auto& s = src.planes[size_t(p)];
        const auto& d = slot->view().planes[size_t(p)];
        for (int y = 0; y < s.height; ++y) std::memcpy(d.unchecked_row(y), s.unchecked_row(y), s.row_bytes());
      }
      if (!(*win)->paint(std::move(*slot), {}).ok()) state.SkipWithError("paint failed");
    } else {
      if (!(*win)->paint(*pic, {}).ok()) state.SkipWithError("paint failed");
    }
    if (++n % 16 == 0) (void)ctx->wait_idle();
  }
  (void)ctx->wait_idle();
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["fps"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["host_copies"] = double(counters().copies - copies_before);
  auto stats = ctx->stats();
  const int64_t timed = stats.gpu_timed_paints - stats_before.gpu_timed_paints;
  if (timed > 0) {
    state.counters["gl_ms_per_paint"] = double(stats.gpu_time_ns - stats_before.gpu_time_ns) / 1e6 / double(timed);
  }
  state.SetLabel(ctx->info().renderer);
}

// Small pictures into a 3840x2160 window at rotating places, as the paint engine paints queued
// small draws decoded on the CPU: host time per paint (the UI thread's cost), the GPU waited for
// every 64 paints only.
void BM_SmallIntoLarge(benchmark::State& state, PixelFormat format, Path path) {
  auto ctx = context(mode_of(path));
  if (!ctx) {
    state.SkipWithError("no EGL display");
    return;
  }
  const int w = int(state.range(0)), h = w, ww = 3840, wh = 2160;
  auto win = GlWindow::create(ctx, ww, wh);
  auto pic = Picture::allocate(format, w, h);
  if (!win.ok() || !pic.ok()) {
    state.SkipWithError("setup failed");
    return;
  }
  auto pv = pic->write();
  fill(*pv);
  ConstPictureView src = *pv;
  const int cols = ww / w, rows = wh / h;
  int64_t n = 0;
  for (auto _ : state) {
    PaintParams params;
    params.x = int(n % cols) * w;
    params.y = int((n / cols) % rows) * h;
    if (path == kMapped) {
      auto slot = (*win)->begin_upload(format, w, h);
      if (!slot.ok()) {
        state.SkipWithError(slot.error().message().c_str());
        return;
      }
      const auto& s = src.planes[0];
      const auto& d = slot->view().planes[0];
      for (int y = 0; y < s.height; ++y) std::memcpy(d.unchecked_row(y), s.unchecked_row(y), s.row_bytes());
      if (!(*win)->paint(std::move(*slot), params).ok()) state.SkipWithError("paint failed");
    } else {
      if (!(*win)->paint(*pic, params).ok()) state.SkipWithError("paint failed");
    }
    if (++n % 64 == 0) (void)ctx->wait_idle();
  }
  (void)ctx->wait_idle();
  state.counters["paints_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(ctx->info().renderer);
}

#define SMALL_SIZES ->Arg(128)->Arg(256)->Arg(512)->Unit(benchmark::kMicrosecond)->UseRealTime()
BENCHMARK_CAPTURE(BM_SmallIntoLarge, bgrx_client, PixelFormat::BGRX, kClient) SMALL_SIZES;
BENCHMARK_CAPTURE(BM_SmallIntoLarge, bgra_client, PixelFormat::BGRA, kClient) SMALL_SIZES;
BENCHMARK_CAPTURE(BM_SmallIntoLarge, rgbx_client, PixelFormat::RGBX, kClient) SMALL_SIZES;
BENCHMARK_CAPTURE(BM_SmallIntoLarge, rgba_client, PixelFormat::RGBA, kClient) SMALL_SIZES;
BENCHMARK_CAPTURE(BM_SmallIntoLarge, bgrx_staged, PixelFormat::BGRX, kStaged) SMALL_SIZES;
BENCHMARK_CAPTURE(BM_SmallIntoLarge, rgba_staged, PixelFormat::RGBA, kStaged) SMALL_SIZES;
BENCHMARK_CAPTURE(BM_SmallIntoLarge, bgrx_mapped, PixelFormat::BGRX, kMapped) SMALL_SIZES;

#define UPLOAD_SIZES ->Args({1920, 1080})->Args({3840, 2160})->Unit(benchmark::kMillisecond)->UseRealTime()
BENCHMARK_CAPTURE(BM_Upload, bgrx_mapped, PixelFormat::BGRX, kMapped) UPLOAD_SIZES;
BENCHMARK_CAPTURE(BM_Upload, bgrx_client, PixelFormat::BGRX, kClient) UPLOAD_SIZES;
BENCHMARK_CAPTURE(BM_Upload, bgrx_staged, PixelFormat::BGRX, kStaged) UPLOAD_SIZES;
BENCHMARK_CAPTURE(BM_Upload, yuv420_mapped, PixelFormat::YUV420P, kMapped) UPLOAD_SIZES;

}  // namespace
}  // namespace pixpath::gl
