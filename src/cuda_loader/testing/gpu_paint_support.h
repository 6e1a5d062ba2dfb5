// Shared by the GPU paint and video tests and the paint benchmark (src/cuda_loader/
// gl_gpu_paint_test.cc, gl_gpu_video_test.cc, bench/cuda/gpu_paint_benchmark.cc): the GPU
// decoder a test binary uses, recordings of JPEG screen updates, playing them through the
// paint engine into a GL backing with a chosen decoder, and comparing window snapshots.
#pragma once

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/gl/gl_backing.h"
#include "pixpath/paint/player.h"
#include "pixpath/paint/recording.h"

namespace pixpath::gl::testing {

// The GPU decoder of a GPU test binary, with a GL context shown to work (its vendor, renderer
// and version printed); `skip` says why the tests cannot run here (empty: they can). `also`
// adds a requirement on the decoder: the reason it is not met, or "" when it is.
struct TestGpu {
  std::shared_ptr<const cuda::GpuJpegDecoder> decoder;
  std::string skip;
};

inline TestGpu make_test_gpu(const std::function<std::string(const cuda::GpuJpegDecoder&)>& also = {}) {
  TestGpu r;
  auto d = cuda::GpuJpegDecoder::create();
  if (!d.ok()) {
    r.skip = "no GPU decoder: " + d.error().message();
    return r;
  }
  if (also) {
    r.skip = also(**d);
    if (!r.skip.empty()) return r;
  }
  auto gl = GlContext::create();
  if (!gl.ok()) {
    r.skip = "no GL context: " + gl.error().message();
    return r;
  }
  std::printf("  GL: %s %s / %s\n", (*gl)->info().egl_vendor.c_str(), (*gl)->info().renderer.c_str(),
              (*gl)->info().version.c_str());
  r.decoder = std::shared_ptr<const cuda::GpuJpegDecoder>(std::move(d).value());
  return r;
}

// A recording of one 3840x2160 window updated by the given JPEG files in turn: files of the
// window's size are whole-window updates, smaller ones go to the four quadrants in turn.
inline Result<void> write_jpeg_recording(const std::string& path,
                                         const std::vector<std::vector<uint8_t>>& jpegs,
                                         const std::vector<std::pair<int, int>>& sizes, int draws,
                                         int window_w = 3840, int window_h = 2160, int windows = 1) {
  PIXPATH_TRY(auto w, paint::RecordingWriter::create(path));
  for (int wid = 1; wid <= windows; ++wid) {
    paint::RecordedEvent e;
    e.type = paint::RecordType::WindowNew;
    e.wid = wid;
    e.w = window_w;
    e.h = window_h;
    PIXPATH_CHECK(w.write(e));
  }
  // With several windows the draws go round the windows, one frame time per round: every
  // window updating at once.
  for (int i = 0; i < draws; ++i) {
    const size_t k = size_t(i / windows) % jpegs.size();
    const int wid = 1 + i % windows;
    paint::RecordedEvent d;
    d.type = paint::RecordType::Draw;
    d.time_us = int64_t(i / windows + 1) * 16'666;
    d.wid = wid;
    auto [jw, jh] = sizes[k];
    int x = 0, y = 0;
    if (jw < window_w || jh < window_h) {
      const int q = (i / windows) % 4;
      x = (q & 1) ? window_w - jw : 0;
      y = (q & 2) ? window_h - jh : 0;
    }
    d.x = x, d.y = y, d.w = jw, d.h = jh;
    d.draw.wid = wid;
    d.draw.sequence = i + 1;
    d.draw.x = x, d.draw.y = y, d.draw.w = jw, d.draw.h = jh;
    d.draw.coding = "jpeg";
    d.draw.data = SharedBytes::copy_of(std::span<const uint8_t>(jpegs[k]));
    PIXPATH_CHECK(w.write(d));
  }
  return w.close();
}

// Width and height from a baseline/progressive JPEG's SOF marker; {0, 0} if none.
inline std::pair<int, int> jpeg_size(const std::vector<uint8_t>& j) {
  for (size_t i = 2; i + 9 < j.size();) {
    if (j[i] != 0xFF) return {0, 0};
    const uint8_t m = j[i + 1];
    const size_t len = size_t(j[i + 2]) << 8 | j[i + 3];
    if (m >= 0xC0 && m <= 0xC2) return {int(j[i + 7]) << 8 | j[i + 8], int(j[i + 5]) << 8 | j[i + 6]};
    i += 2 + len;
  }
  return {0, 0};
}

struct Played {
  paint::PlayResult result;
  std::map<int64_t, Picture> windows;  // snapshots at the end (BGRX/RGBX, X = 0xFF)
  GlStats gl;
};

// Plays `file` at full speed (at most `in_flight` draws queued; 0: the player's default) into a fresh GL backing with `decoder`; snapshots every window.
inline Result<Played> play_gl(const std::string& file, paint::DecoderChoice decoder,
                              std::shared_ptr<const cuda::GpuJpegDecoder> gpu, int threads = 2,
                              int in_flight = 0, int gpu_max_batch = 0,
                              int64_t gpu_min_pixels = 256 * 256, bool measured_routing = true) {
  PIXPATH_TRY(auto backing, GlBacking::create());
  paint::PlayOptions o;
  o.file = file;
  o.pace = paint::Pace::Max;
  o.decoder = decoder;
  o.gpu_decoder = std::move(gpu);
  o.decode_threads = threads;
  o.max_in_flight = in_flight;
  o.gpu_max_batch = gpu_max_batch;
  o.gpu_min_pixels = gpu_min_pixels;
  o.gpu_route_by_measurement = measured_routing;
  Played p;
  PIXPATH_TRY(p.result, paint::play_recording(o, *backing));
  for (int64_t wid : backing->windows()) {
    PIXPATH_TRY(Picture snap, backing->snapshot(wid));
    p.windows.emplace(wid, std::move(snap));
  }
  p.gl = backing->context()->stats();
  return p;
}

struct Diff {
  int max = 0;
  int64_t differing = 0;  // channel values that differ
  bool same_size = true;
};

inline Diff compare(const Picture& a, const Picture& b) {
  Diff d;
  if (a.width() != b.width() || a.height() != b.height() || a.format() != b.format()) {
    d.same_size = false;
    return d;
  }
  auto va = a.read();
  auto vb = b.read();
  for (int y = 0; y < a.height(); ++y) {
    const uint8_t* ra = va->plane(0).row(y).data();
    const uint8_t* rb = vb->plane(0).row(y).data();
    for (int x = 0; x < a.width() * 4; ++x) {
      if ((x & 3) == 3) continue;
      const int v = std::abs(int(ra[x]) - int(rb[x]));
      if (v) ++d.differing, d.max = std::max(d.max, v);
    }
  }
  return d;
}

}  // namespace pixpath::gl::testing
