// Pixel operations against memcpy, at 1920x1080 and 3840x2160, through the public API (views
// of 64-byte-aligned pictures, the kernel table this CPU gets).
//
// Byte convention: bytes/s counts every byte read plus every byte written, once.
//   memcpy of a 4-byte-per-pixel frame:  4 read + 4 written = 8 bytes per pixel
//   convert S -> D:                       bpp(S) + bpp(D)
//   merge_alpha S + A -> D:               bpp(S) + 1 + 4
//   xor_into (dst ^= src), 4 bytes/px:    4 + 4 read + 4 written = 12
// The ratio to memcpy in docs/performance.md compares these bytes/s figures.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "pixpath/core/picture.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath {
namespace {

Picture filled(PixelFormat f, int w, int h, uint8_t seed) {
  Picture p = Picture::allocate(f, w, h).value();
  auto v = p.write().value();
  for (int i = 0; i < v.plane_count; ++i) {
    for (int y = 0; y < v.plane(i).height; ++y) {
      auto row = v.plane(i).row(y);
      for (size_t x = 0; x < row.size(); ++x) row[x] = static_cast<uint8_t>(x * 7 + y + seed);
    }
  }
  return p;
}

int64_t frame_pixels(const benchmark::State& state) { return state.range(0) * state.range(1); }

void BM_Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(frame_pixels(state)) * 4;
  std::vector<uint8_t> src(bytes, 1), dst(bytes, 2);
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), bytes);
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes) * 2);
}

template <PixelFormat S, PixelFormat D>
void BM_Convert(benchmark::State& state) {
  const int w = static_cast<int>(state.range(0)), h = static_cast<int>(state.range(1));
  Picture src = filled(S, w, h, 1), dst = filled(D, w, h, 2);
  auto sv = src.read().value();
  auto dv = dst.write().value();
  for (auto _ : state) {
    if (!convert_pixels(sv, dv).ok()) state.SkipWithError("convert failed");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * frame_pixels(state) *
                          (info(S).bytes_per_pixel[0] + info(D).bytes_per_pixel[0]));
}

template <PixelFormat S, PixelFormat D>
void BM_MergeAlpha(benchmark::State& state) {
  const int w = static_cast<int>(state.range(0)), h = static_cast<int>(state.range(1));
  Picture src = filled(S, w, h, 1), alpha = filled(PixelFormat::GRAY8, w, h, 3),
          dst = filled(D, w, h, 2);
  auto sv = src.read().value();
  auto av = alpha.read().value();
  auto dv = dst.write().value();
  for (auto _ : state) {
    if (!merge_alpha(sv, av, dv).ok()) state.SkipWithError("merge failed");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * frame_pixels(state) *
                          (info(S).bytes_per_pixel[0] + 1 + 4));
}

void BM_XorInto(benchmark::State& state) {
  const int w = static_cast<int>(state.range(0)), h = static_cast<int>(state.range(1));
  Picture src = filled(PixelFormat::BGRX, w, h, 1), dst = filled(PixelFormat::BGRX, w, h, 2);
  auto sv = src.read().value();
  auto dv = dst.write().value();
  for (auto _ : state) {
    if (!xor_into(dv, sv).ok()) state.SkipWithError("xor failed");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * frame_pixels(state) * 12);
}

#define PIXPATH_SIZES ->Args({1920, 1080})->Args({3840, 2160})->Unit(benchmark::kMicrosecond)

BENCHMARK(BM_Memcpy) PIXPATH_SIZES;
BENCHMARK(BM_Convert<PixelFormat::BGRX, PixelFormat::RGBA>) PIXPATH_SIZES;
BENCHMARK(BM_Convert<PixelFormat::RGB, PixelFormat::BGRX>) PIXPATH_SIZES;
BENCHMARK(BM_Convert<PixelFormat::BGRX, PixelFormat::RGB>) PIXPATH_SIZES;
BENCHMARK(BM_Convert<PixelFormat::RGBA, PixelFormat::BGRA>) PIXPATH_SIZES;
BENCHMARK(BM_MergeAlpha<PixelFormat::RGB, PixelFormat::RGBA>) PIXPATH_SIZES;
BENCHMARK(BM_MergeAlpha<PixelFormat::BGRX, PixelFormat::BGRA>) PIXPATH_SIZES;
BENCHMARK(BM_XorInto) PIXPATH_SIZES;

}  // namespace
}  // namespace pixpath
