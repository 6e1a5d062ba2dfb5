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
#include <optional>

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

// A window of win_w x win_h and a filled pic_w x pic_h picture in `format`, on the context of
// `path`'s upload mode; nullopt (the state's error set) when either cannot be had.
struct Setup {
  std::shared_ptr<GlContext> ctx;
  std::unique_ptr<GlWindow> win;
  Picture pic;
};
std::optional<Setup> set_up(benchmark::State& state, PixelFormat format, Path path, int win_w, int win_h,
                            int pic_w, int pic_h) {
  auto ctx = context(mode_of(path));
  if (!ctx) {
    state.SkipWithError("no EGL display");
    return std::nullopt;
  }
  auto win = GlWindow::create(ctx, win_w, win_h);
  auto pic = Picture::allocate(format, pic_w, pic_h);
  if (!win.ok() || !pic.ok()) {
    state.SkipWithError("setup failed");
    return std::nullopt;
  }
  fill(*pic->write());
  return Setup{ctx, std::move(*win), std::move(*pic)};
}

// One paint of the picture at `params`: through an upload buffer the benchmark writes (kMapped,
// a memcpy standing in for the decoder's write) or as a host picture (kClient, kStaged).
bool paint_once(benchmark::State& state, Setup& s, Path path, const PaintParams& params) {
  Result<void> r;
  if (path == kMapped) {
    auto slot = s.win->begin_upload(s.pic.format(), s.pic.width(), s.pic.height());
    if (!slot.ok()) {
      state.SkipWithError(slot.error().message().c_str());
      return false;
    }
    auto src = s.pic.read();
    for (int p = 0; p < src->plane_count; ++p) {
      const auto& from = src->planes[size_t(p)];
      const auto& to = slot->view().planes[size_t(p)];
      for (int y = 0; y < from.height; ++y) std::memcpy(to.unchecked_row(y), from.unchecked_row(y), from.row_bytes());
    }
    r = s.win->paint(std::move(*slot), params);
  } else {
    r = s.win->paint(s.pic, params);
  }
  if (!r.ok()) state.SkipWithError(r.error().message().c_str());
  return r.ok();
}

void BM_Upload(benchmark::State& state, PixelFormat format, Path path) {
  const int w = int(state.range(0)), h = int(state.range(1));
  auto s = set_up(state, format, path, w, h, w, h);
  if (!s) return;
  size_t bytes = 0;
  auto src = s->pic.read();
  for (int p = 0; p < src->plane_count; ++p) bytes += src->planes[size_t(p)].row_bytes() * size_t(src->planes[size_t(p)].height);
  const auto copies_before = counters().copies;
  const GlStats stats_before = s->ctx->stats();
  int64_t n = 0;
  for (auto _ : state) {
    if (!paint_once(state, *s, path, {})) return;
    if (++n % 16 == 0) (void)s->ctx->wait_idle();
  }
  (void)s->ctx->wait_idle();
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
  state.counters["fps"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["host_copies"] = double(counters().copies - copies_before);
  auto stats = s->ctx->stats();
  const int64_t timed = stats.gpu_timed_paints - stats_before.gpu_timed_paints;
  if (timed > 0) {
    state.counters["gl_ms_per_paint"] = double(stats.gpu_time_ns - stats_before.gpu_time_ns) / 1e6 / double(timed);
  }
  state.SetLabel(s->ctx->info().renderer);
}

// Small pictures into a 3840x2160 window at rotating places, as the paint engine paints queued
// small draws decoded on the CPU: host time per paint (the UI thread's cost), the GPU waited for
// every 64 paints only.
void BM_SmallIntoLarge(benchmark::State& state, PixelFormat format, Path path) {
  const int side = int(state.range(0)), ww = 3840, wh = 2160;
  auto s = set_up(state, format, path, ww, wh, side, side);
  if (!s) return;
  const int cols = ww / side, rows = wh / side;
  int64_t n = 0;
  for (auto _ : state) {
    PaintParams params;
    params.x = int(n % cols) * side;
    params.y = int((n / cols) % rows) * side;
    if (!paint_once(state, *s, path, params)) return;
    if (++n % 64 == 0) (void)s->ctx->wait_idle();
  }
  (void)s->ctx->wait_idle();
  state.counters["paints_per_s"] = benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.SetLabel(s->ctx->info().renderer);
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
