// YUV -> BGRX for painting video frames on the CPU: libyuv (what the CPU backing uses,
// include/pixpath/paint/yuv_convert.h) against libswscale (the alternative the issue named), one
// thread, same frames, same studio-range BT.601 / BT.709 matrices; and the video decoder
// itself (libavcodec h264 / vp8 P-frames of moving content) for scale. docs/performance.md,
// "Video frames on the CPU", has the figures and the command.
#include <benchmark/benchmark.h>

extern "C" {
#include <libswscale/swscale.h>
}

#include "codecs/testing/video_streams.h"
#include "pixpath/paint/yuv_convert.h"
#include "pixpath/codecs/video_decoder.h"

namespace {

using namespace pixpath;

void BM_LibyuvI420ToBgrx(benchmark::State& state) {
  const int w = int(state.range(0)), h = int(state.range(1));
  Picture yuv = codecs::testing::moving_yuv_frame(PixelFormat::YUV420P, w, h, 3);
  auto out = Picture::allocate(PixelFormat::BGRX, w, h);
  auto dst = out->write();
  auto src = yuv.read();
  for (auto _ : state) {
    if (!paint::yuv_to_rgb(*src, {state.range(2) != 0, false}, *dst).ok())
      state.SkipWithError("libyuv failed");
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * int64_t(w) * h);
}

void BM_SwscaleI420ToBgrx(benchmark::State& state) {
  const int w = int(state.range(0)), h = int(state.range(1));
  Picture yuv = codecs::testing::moving_yuv_frame(PixelFormat::YUV420P, w, h, 3);
  auto out = Picture::allocate(PixelFormat::BGRX, w, h);
  auto dst = out->write();
  auto src = yuv.read();
  SwsContext* sws = sws_getContext(w, h, AV_PIX_FMT_YUV420P, w, h, AV_PIX_FMT_BGR0,
                                   SWS_POINT, nullptr, nullptr, nullptr);
  const int* coefs = sws_getCoefficients(state.range(2) ? SWS_CS_ITU709 : SWS_CS_ITU601);
  int* inv = nullptr; int* tbl = nullptr; int src_range = 0, dst_range = 0, b = 0, c = 0, s = 0;
  sws_getColorspaceDetails(sws, &inv, &src_range, &tbl, &dst_range, &b, &c, &s);
  sws_setColorspaceDetails(sws, coefs, 0, coefs, 1, b, c, s);
  const uint8_t* sp[3] = {src->plane(0).data, src->plane(1).data, src->plane(2).data};
  const int ss[3] = {int(src->plane(0).stride), int(src->plane(1).stride), int(src->plane(2).stride)};
  uint8_t* dp[1] = {dst->plane(0).data};
  const int ds[1] = {int(dst->plane(0).stride)};
  for (auto _ : state) {
    sws_scale(sws, sp, ss, 0, h, dp, ds);
    benchmark::ClobberMemory();
  }
  sws_freeContext(sws);
  state.SetItemsProcessed(state.iterations() * int64_t(w) * h);
}

void BM_DecodePFrame(benchmark::State& state, const char* coding) {
  const int w = int(state.range(0)), h = int(state.range(1));
  auto s = codecs::testing::encode_video(coding, w, h, 31);
  if (!s.ok()) return state.SkipWithError(s.error().message().c_str());
  for (auto _ : state) {
    state.PauseTiming();
    codecs::VideoStreamParams p{coding, w, h, "YUV420P"};
    auto dec = codecs::VideoDecoder::create(p);
    (void)(*dec)->decode(s->packets[0]);
    state.ResumeTiming();
    for (size_t i = 1; i < s->packets.size(); ++i) {
      auto f = (*dec)->decode(s->packets[i]);
      if (!f.ok()) return state.SkipWithError(f.error().message().c_str());
      benchmark::DoNotOptimize(f);
    }
  }
  state.SetItemsProcessed(state.iterations() * int64_t(s->packets.size() - 1));  // frames
}

#define SIZES Args({1280, 720, 0})->Args({1920, 1080, 0})->Args({1920, 1080, 1})
BENCHMARK(BM_LibyuvI420ToBgrx)->SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_SwscaleI420ToBgrx)->SIZES->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_DecodePFrame, h264, "h264")->Args({1920, 1080})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_DecodePFrame, vp8, "vp8")->Args({1920, 1080})->Unit(benchmark::kMillisecond);

}  // namespace
