// Upload throughput into a window texture: host picture -> texture.
//   Mapped: the decoder's write into a mapped upload buffer (a memcpy stands in for it) and the
//           glTexSubImage2D from that buffer (the zero-copy path of direct decoding).
//   Client: glTexSubImage2D straight from a host picture (pictures decoded elsewhere).
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

std::shared_ptr<GlContext> context() {
  static std::shared_ptr<GlContext> ctx = [] {
    auto c = GlContext::create();
    return c.ok() ? *c : nullptr;
  }();
  return ctx;
}

void fill(const PictureView& v) {
  for (int p = 0; p < v.plane_count; ++p)
    for (int y = 0; y < v.planes[size_t(p)].height; ++y)
      std::memset(v.planes[size_t(p)].unchecked_row(y), (y * 7 + p) & 0xFF, v.planes[size_t(p)].row_bytes());
}

enum Path { kMapped, kClient };

void BM_Upload(benchmark::State& state, PixelFormat format, Path path) {
  auto ctx = context();
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

#define UPLOAD_SIZES ->Args({1920, 1080})->Args({3840, 2160})->Unit(benchmark::kMillisecond)->UseRealTime()
BENCHMARK_CAPTURE(BM_Upload, bgrx_mapped, PixelFormat::BGRX, kMapped) UPLOAD_SIZES;
BENCHMARK_CAPTURE(BM_Upload, bgrx_client, PixelFormat::BGRX, kClient) UPLOAD_SIZES;
BENCHMARK_CAPTURE(BM_Upload, yuv420_mapped, PixelFormat::YUV420P, kMapped) UPLOAD_SIZES;

}  // namespace
}  // namespace pixpath::gl
