// CPU codec throughput on screen content, into a destination buffer the caller owns.
// JPEG: pixpath's decoder vs a direct tjDecompress2 call into the same buffer (same flags),
// in the same run: the difference is pixpath's overhead (header checks, per-thread handle).
// Also rgb24/rgb32 + lz4 and PNG (the png decoder's fast path and its libspng path side by side;
// BM_PngFile: a PNG file given by PIXPATH_BENCH_PNG). Sizes 1920x1080 and 3840x2160.
#include <benchmark/benchmark.h>
#include <turbojpeg.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

#include "codecs/internal/builtin_codecs.h"
#include "codecs/testing/test_images.h"
#include "pixpath/codecs/registry.h"

namespace pixpath::codecs {
namespace {

struct Jpeg {
  std::vector<uint8_t> data;
  int w = 0, h = 0;
};

const std::vector<uint8_t>& encoded(const std::string& coding, int w, int h, EncodeParams ep,
                                    PixelFormat f, EncodedPicture* full = nullptr) {
  static std::map<std::string, EncodedPicture> cache;
  const std::string key = coding + std::to_string(w) + "x" + std::to_string(h) + "q" +
                          std::to_string(ep.quality) + "s" + std::to_string(int(ep.subsampling)) +
                          "c" + std::to_string(int(ep.compression)) + std::string(name(f));
  auto it = cache.find(key);
  if (it == cache.end()) {
    Picture src = testing::screen_picture(f, w, h, 42);
    auto e = CodecRegistry::builtin().encoder(coding)->encode(*src.read(), ep);
    if (!e.ok()) std::abort();
    it = cache.emplace(key, std::move(*e)).first;
  }
  if (full) *full = it->second;
  return it->second.data;
}

EncodeParams jpeg_params(int quality, int sub) {
  EncodeParams ep;
  ep.quality = quality;
  ep.subsampling = sub == 444 ? Subsampling::S444 : Subsampling::S420;
  return ep;
}

// Args: width, height, quality, subsampling (420/444).
void BM_JpegPixpath(benchmark::State& state) {
  const int w = int(state.range(0)), h = int(state.range(1));
  const auto& data = encoded("jpeg", w, h, jpeg_params(int(state.range(2)), int(state.range(3))), PixelFormat::RGB);
  Picture dst = Picture::allocate(PixelFormat::BGRX, w, h).value();
  PictureView v = dst.write().value();
  const Decoder& d = *CodecRegistry::builtin().decoder("jpeg");
  for (auto _ : state) {
    auto r = d.decode_into(data, {}, v);
    if (!r.ok()) state.SkipWithError(r.error().message().c_str());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * w * h * 4);
  state.counters["MPix/s"] = benchmark::Counter(double(w) * h * double(state.iterations()) / 1e6, benchmark::Counter::kIsRate);
}

void BM_JpegTurboJpegDirect(benchmark::State& state) {
  const int w = int(state.range(0)), h = int(state.range(1));
  const auto& data = encoded("jpeg", w, h, jpeg_params(int(state.range(2)), int(state.range(3))), PixelFormat::RGB);
  Picture dst = Picture::allocate(PixelFormat::BGRX, w, h).value();
  PictureView v = dst.write().value();
  tjhandle tj = tjInitDecompress();
  for (auto _ : state) {
    if (tjDecompress2(tj, data.data(), data.size(), v.planes[0].data, w, int(v.planes[0].stride), h,
                      TJPF_BGRX, TJFLAG_ACCURATEDCT | TJFLAG_LIMITSCANS) != 0) {
      state.SkipWithError(tjGetErrorStr2(tj));
    }
    benchmark::ClobberMemory();
  }
  tjDestroy(tj);
  state.SetBytesProcessed(int64_t(state.iterations()) * w * h * 4);
  state.counters["MPix/s"] = benchmark::Counter(double(w) * h * double(state.iterations()) / 1e6, benchmark::Counter::kIsRate);
}

// Args: width, height. rgb32 BGRX + lz4 (as xpra sends it) into a BGRX buffer of the same
// stride (zero-copy path) and into a padded (framebuffer-like) stride.
void BM_Rgb32Lz4(benchmark::State& state) {
  const int w = int(state.range(0)), h = int(state.range(1));
  const bool padded = state.range(2) != 0;
  EncodeParams ep;
  ep.compression = RgbCompression::Lz4;
  EncodedPicture e;
  encoded("rgb32", w, h, ep, PixelFormat::BGRX, &e);
  AllocateOptions ao;
  ao.stride = size_t(w) * 4 + (padded ? 256 : 0);
  Picture dst = Picture::allocate(PixelFormat::BGRX, w, h, ao).value();
  PictureView v = dst.write().value();
  DecodeParams p;
  p.width = w;
  p.height = h;
  p.rowstride = e.rowstride;
  p.options = &e.options;
  const Decoder& d = *CodecRegistry::builtin().decoder("rgb32");
  for (auto _ : state) {
    auto r = d.decode_into(e.data, p, v);
    if (!r.ok()) state.SkipWithError(r.error().message().c_str());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * w * h * 4);
}

void BM_Rgb24ZlibToBgrx(benchmark::State& state) {
  const int w = int(state.range(0)), h = int(state.range(1));
  EncodeParams ep;
  ep.compression = RgbCompression::Zlib;
  EncodedPicture e;
  encoded("rgb24", w, h, ep, PixelFormat::RGB, &e);
  Picture dst = Picture::allocate(PixelFormat::BGRX, w, h).value();
  PictureView v = dst.write().value();
  DecodeParams p{w, h, e.rowstride, &e.options, {}};
  const Decoder& d = *CodecRegistry::builtin().decoder("rgb24");
  for (auto _ : state) {
    auto r = d.decode_into(e.data, p, v);
    if (!r.ok()) state.SkipWithError(r.error().message().c_str());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * w * h * 4);
}

// PNG decodes into `format`, through the png decoder's fast path (libdeflate + own unfiltering)
// or, with libspng != 0, its libspng path (internal::set_png_fast_path; PIXPATH_PNG_LIBSPNG=1
// forces libspng for every case). Fails when the fast path was asked for and did not decode.
void png_decode_loop(benchmark::State& state, const std::vector<uint8_t>& data, int w, int h,
                     PixelFormat format, bool libspng) {
  Picture dst = Picture::allocate(format, w, h).value();
  PictureView v = dst.write().value();
  const Decoder& d = *CodecRegistry::builtin().decoder("png");
  const bool was_on = internal::png_fast_path();
  const bool fast = !libspng && was_on;
  internal::set_png_fast_path(fast);
  const uint64_t before = internal::png_fast_path_decodes();
  for (auto _ : state) {
    auto r = d.decode_into(data, {}, v);
    if (!r.ok()) state.SkipWithError(r.error().message().c_str());
    benchmark::ClobberMemory();
  }
  const uint64_t fast_decodes = internal::png_fast_path_decodes() - before;
  internal::set_png_fast_path(was_on);
  if (fast && fast_decodes != uint64_t(state.iterations())) {
    state.SkipWithError("the png fast path did not decode every iteration");
  }
  state.SetLabel(fast ? "fast path" : "libspng");
  state.SetBytesProcessed(int64_t(state.iterations()) * w * h * int64_t(info(format).bytes_per_pixel[0]));
}

// Args: width, height, libspng. PNG (RGB, zlib level 1 as our encoder's default) into RGBX.
void BM_Png(benchmark::State& state) {
  const int w = int(state.range(0)), h = int(state.range(1));
  const auto& data = encoded("png", w, h, {}, PixelFormat::RGB);
  png_decode_loop(state, data, w, h, PixelFormat::RGBX, state.range(2) != 0);
}

// Args: libspng, output (0 RGB, 1 RGBX). A PNG file named by PIXPATH_BENCH_PNG (skipped when
// unset): e.g. a real 1080p screen capture encoded as docs/performance.md says.
void BM_PngFile(benchmark::State& state) {
  static const std::vector<uint8_t> data = [] {
    std::vector<uint8_t> bytes;
    if (const char* path = std::getenv("PIXPATH_BENCH_PNG")) {
      if (FILE* f = std::fopen(path, "rb")) {
        uint8_t buf[65536];
        size_t n;
        while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) bytes.insert(bytes.end(), buf, buf + n);
        std::fclose(f);
      }
    }
    return bytes;
  }();
  if (data.empty()) {
    state.SkipWithError("set PIXPATH_BENCH_PNG to a PNG file");
    for (auto _ : state) {
    }
    return;
  }
  auto inf = CodecRegistry::builtin().decoder("png")->inspect(data, {});
  if (!inf.ok()) {
    state.SkipWithError(inf.error().message().c_str());
    for (auto _ : state) {
    }
    return;
  }
  png_decode_loop(state, data, inf->width, inf->height,
                  state.range(1) ? PixelFormat::RGBX : PixelFormat::RGB, state.range(0) != 0);
}

void JpegArgs(benchmark::internal::Benchmark* b) {
  for (auto [w, h] : {std::pair{1920, 1080}, std::pair{3840, 2160}}) {
    for (int q : {50, 90}) {
      for (int s : {420, 444}) b->Args({w, h, q, s});
    }
  }
  b->ArgNames({"w", "h", "q", "sub"})->Unit(benchmark::kMillisecond)->UseRealTime();
}
void SizeArgs(benchmark::internal::Benchmark* b) {
  b->Args({1920, 1080})->Args({3840, 2160})->ArgNames({"w", "h"})->Unit(benchmark::kMillisecond)->UseRealTime();
}

BENCHMARK(BM_JpegPixpath)->Apply(JpegArgs);
BENCHMARK(BM_JpegTurboJpegDirect)->Apply(JpegArgs);
BENCHMARK(BM_Rgb32Lz4)->Args({1920, 1080, 0})->Args({1920, 1080, 1})->Args({3840, 2160, 0})->Args({3840, 2160, 1})
    ->ArgNames({"w", "h", "padded"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Rgb24ZlibToBgrx)->Apply(SizeArgs);
BENCHMARK(BM_Png)->Args({1920, 1080, 0})->Args({1920, 1080, 1})->Args({3840, 2160, 0})->Args({3840, 2160, 1})
    ->ArgNames({"w", "h", "libspng"})->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_PngFile)->Args({0, 0})->Args({1, 0})->Args({0, 1})->Args({1, 1})
    ->ArgNames({"libspng", "rgbx"})->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace pixpath::codecs
