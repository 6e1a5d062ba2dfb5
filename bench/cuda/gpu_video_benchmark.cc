// Video draws on the GPU (issue 16), H200 targets: a 4K h264 P-frame from its bytes to pixels in
// the window texture p50 <= 3 ms, 1080p <= 1 ms; 8 windows of 1080p video at 60 fps each without
// drops. Streams are encoded here (libx264, moving synthetic content).
//   latency: per frame, from the packet handed to the decoder (NVDEC through libavcodec's CUDA
//     hwaccel) to the copy's fence signalled (convert_video_frame + copy_to_textures into the GL
//     backing's window texture), P-frames only; beside it, the CPU route (libavcodec on the CPU,
//     the GL backing's YUV shader, glFinish) on the same stream.
//   engine: N windows (default 8) of 1080p video through the paint engine, each fed at 60 fps
//     (all windows' draws of a tick submitted together, then the UI loop runs until the next
//     tick): frames/s, late ticks (a window's earlier draw not yet acked when its next arrives),
//     errors, and received -> painted p50/p90. Each window's video decodes on one of the engine's
//     video threads (--video-threads N, default 0: the engine's choice, min(4, cores)).
// Usage: gpu_video_benchmark [--frames N] [--windows N] [--seconds S] [--video-threads N]
//                            [--only latency|engine]
// Prints one line per measurement and, at the end, a JSON line (prefix "json: ").
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "codecs/testing/video_streams.h"
#include "pixpath/codecs/video_decoder.h"
#include "bench_report.h"
#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/gl/gl_backing.h"
#include "pixpath/paint/paint_engine.h"

namespace {

using namespace pixpath;
using Clock = std::chrono::steady_clock;
using bench::Pct;
using bench::pct;

double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

bench::JsonItems json_items;
void add_json(const std::string& item) { json_items.add(item); }

// One stream at w x h through the GPU route and the CPU route, frame by frame.
void latency(const std::shared_ptr<const cuda::GpuJpegDecoder>& gpu, int w, int h, int frames) {
  std::printf("== latency %dx%d h264, %d frames (encoding...)\n", w, h, frames);
  std::fflush(stdout);
  auto s = codecs::testing::encode_video("h264", w, h, frames);
  if (!s.ok()) return (void)std::printf("  encode failed: %s\n", s.error().message().c_str());
  size_t bytes = 0;
  for (size_t i = 1; i < s->packets.size(); ++i) bytes += s->packets[i].size();
  std::printf("  P-frames: mean %zu bytes\n", bytes / std::max<size_t>(1, s->packets.size() - 1));
  auto backing = gl::GlBacking::create();
  if (!backing.ok()) return (void)std::printf("  GL backing: %s\n", backing.error().message().c_str());
  if (auto r = (*backing)->create_window(1, w, h); !r.ok())
    return (void)std::printf("  window: %s\n", r.error().message().c_str());
  const auto tex = (*backing)->window_texture(1);
  if (!tex) return (void)std::printf("  the GL backing has no window texture\n");
  (void)gpu->prepare_texture({tex->texture, tex->width, tex->height, 0, 0});
  for (int route = 0; route < 2; ++route) {
    codecs::VideoStreamParams p;
    p.coding = "h264";
    p.width = w;
    p.height = h;
    p.csc = "YUV420P";
    p.gpu_device = route == 0 ? gpu->cuda_device() : -1;
    p.gpu_context = route == 0 ? gpu->cuda_context() : nullptr;
    auto dec = codecs::VideoDecoder::create(p);
    if (!dec.ok()) {
      std::printf("  %s decoder: %s\n", route == 0 ? "GPU" : "CPU", dec.error().message().c_str());
      continue;
    }
    std::vector<double> total, decode;
    std::string failure;
    for (size_t i = 0; i < s->packets.size() && failure.empty(); ++i) {
      const auto t0 = Clock::now();
      auto f = (*dec)->decode(s->packets[i]);
      const double t_dec = ms_since(t0);
      if (!f.ok() || !f->has_value()) {
        failure = "frame " + std::to_string(i) + ": " + (f.ok() ? "no picture" : f.error().message());
        break;
      }
      codecs::VideoFrame frame = std::move(**f);
      if (route == 0) {
        if (!frame.on_gpu()) {
          failure = "NVDEC did not take the stream: " + (*dec)->stats().gpu_note;
          break;
        }
        auto rgba = gpu->convert_video_frame(frame, "h264");
        frame.picture = Picture();
        if (!rgba.ok()) {
          failure = rgba.error().message();
          break;
        }
        const paint::GpuCopyJob job{&*rgba, {tex->texture, tex->width, tex->height, 0, 0}};
        auto fence = gpu->copy_to_textures(std::span<const paint::GpuCopyJob>(&job, 1));
        if (!fence.ok()) {
          failure = fence.error().message();
          break;
        }
        if (auto r = (*fence)->wait(); !r.ok()) {
          failure = r.error().message();
          break;
        }
      } else {
        auto r = (*backing)->paint_yuv(1, 0, 0, frame.picture, frame.color, w, h);
        frame.picture = Picture();
        if (r.ok()) r = (*backing)->context()->wait_idle();
        if (!r.ok()) {
          failure = r.error().message();
          break;
        }
      }
      if (i > 0) total.push_back(ms_since(t0)), decode.push_back(t_dec);  // P-frames only
    }
    const char* name = route == 0 ? "gpu (NVDEC -> convert -> texture, fence)" : "cpu (libavcodec -> YUV shader, glFinish)";
    if (!failure.empty()) {
      std::printf("  %s: FAILED: %s\n", name, failure.c_str());
      add_json("{\"bench\":\"latency\",\"size\":\"" + std::to_string(w) + "x" + std::to_string(h) + "\",\"route\":\"" +
               (route == 0 ? "gpu" : "cpu") + "\",\"error\":true}");
      continue;
    }
    const Pct t = pct(total), d = pct(decode);
    std::printf("  %s: bytes -> texture p50 %.3f ms p90 %.3f ms (decode call p50 %.3f p90 %.3f), %zu P-frames\n", name,
                t.p50, t.p90, d.p50, d.p90, t.n);
    char buf[256];
    std::snprintf(buf, sizeof buf,
                  "{\"bench\":\"latency\",\"size\":\"%dx%d\",\"route\":\"%s\",\"p50_ms\":%.3f,\"p90_ms\":%.3f,"
                  "\"decode_p50_ms\":%.3f,\"frames\":%zu}",
                  w, h, route == 0 ? "gpu" : "cpu", t.p50, t.p90, d.p50, t.n);
    add_json(buf);
  }
  gpu->forget_texture(tex->texture);
  (void)(*backing)->destroy_window(1);
}

// N windows of 1080p at 60 fps each through the paint engine.
void engine(const std::shared_ptr<const cuda::GpuJpegDecoder>& gpu, int windows, double seconds, bool use_gpu,
            int video_threads) {
  const int w = 1920, h = 1080, fps = 60;
  const int ticks = int(seconds * fps);
  std::printf("== engine: %d windows of %dx%d h264 at %d fps, %d ticks, video on the %s\n", windows, w, h, fps, ticks,
              use_gpu ? "GPU" : "CPU");
  std::fflush(stdout);
  auto s = codecs::testing::encode_video("h264", w, h, ticks);
  if (!s.ok()) return (void)std::printf("  encode failed: %s\n", s.error().message().c_str());
  auto backing = gl::GlBacking::create();
  if (!backing.ok()) return (void)std::printf("  GL backing: %s\n", backing.error().message().c_str());
  std::mutex mu;
  std::map<int64_t, int64_t> acked_per_window;  // highest sequence acked
  std::vector<double> total_ms, steady_ms;  // steady: draws after the first second (streams open)
  int64_t acks = 0, errors = 0, gpu_acks = 0;
  double first_ack_ms = 0;  // the slowest window's first frame: decoder start-up
  const auto begin = Clock::now();
  std::string last_error;
  paint::PaintEngineConfig c;
  c.decoder = use_gpu ? paint::DecoderChoice::Auto : paint::DecoderChoice::Cpu;
  c.video_threads = video_threads;
  if (use_gpu) c.gpu_decoder = gpu;
  c.on_ack = [&](const DamageAck& a, const paint::PaintReport& r) {
    std::lock_guard<std::mutex> l(mu);
    acks++;
    if (a.decode_time_us < 0) errors++, last_error = a.message;
    if (r.decoder == "gpu") gpu_acks++;
    total_ms.push_back(double(r.total_us) / 1000.0);
    if (a.sequence > fps) steady_ms.push_back(double(r.total_us) / 1000.0);
    if (a.sequence == 1) first_ack_ms = std::max(first_ack_ms, ms_since(begin));
    acked_per_window[a.wid] = std::max(acked_per_window[a.wid], a.sequence);
  };
  c.log = [](std::string_view line) { std::printf("  engine: %.*s\n", int(line.size()), line.data()); };
  auto e = paint::PaintEngine::create(**backing, std::move(c));
  if (!e.ok()) return (void)std::printf("  engine: %s\n", e.error().message().c_str());
  auto& eng = *e;
  for (int wid = 1; wid <= windows; ++wid) eng->window_new(wid, w, h);
  std::vector<SharedBytes> packets;
  for (const auto& p : s->packets) packets.push_back(SharedBytes::copy_of(std::span<const uint8_t>(p)));
  int64_t late = 0, late_steady = 0;
  const auto start = Clock::now();
  const auto period = std::chrono::microseconds(1'000'000 / fps);
  for (int t = 0; t < ticks; ++t) {
    const auto due = start + period * t;
    while (Clock::now() < due) {
      eng->run_ui_once();
      eng->wait_for_work(std::chrono::duration_cast<std::chrono::microseconds>(due - Clock::now()));
    }
    {
      std::lock_guard<std::mutex> l(mu);
      if (t > 0)
        for (int wid = 1; wid <= windows; ++wid)
          if (acked_per_window[wid] < int64_t(t)) {  // its draw of the previous tick is not painted yet
            late++;
            if (t > fps) late_steady++;
          }
    }
    for (int wid = 1; wid <= windows; ++wid) {
      DrawPacket p;
      p.wid = wid;
      p.sequence = t + 1;
      p.coding = "h264";
      p.x = 0, p.y = 0, p.w = w, p.h = h;
      p.data = packets[size_t(t) % packets.size()];
      p.options.csc = "YUV420P";
      p.options.frame = t;
      eng->submit(std::move(p));
    }
  }
  const bool idle = eng->wait_idle(std::chrono::seconds(60));
  const double wall = ms_since(start) / 1000.0;
  const auto st = eng->stats();
  eng->shutdown();
  const Pct p = pct(total_ms);
  const Pct ps = pct(steady_ms);
  const double fps_all = double(acks - errors) / wall;
  std::printf("  %s: %lld acks (%lld on the GPU), %lld errors%s, %.1f frames/s in all (%.1f per window, target %d), "
              "late ticks %lld of %lld, received -> painted p50 %.2f ms p90 %.2f ms%s\n",
              use_gpu ? "gpu" : "cpu", static_cast<long long>(acks), static_cast<long long>(gpu_acks),
              static_cast<long long>(errors), last_error.empty() ? "" : (" (last: " + last_error + ")").c_str(), fps_all,
              fps_all / windows, fps, static_cast<long long>(late), static_cast<long long>(int64_t(ticks - 1) * windows),
              p.p50, p.p90, idle ? "" : " (NOT IDLE after 60 s)");
  std::printf("  after the first second: late ticks %lld of %lld, received -> painted p50 %.2f ms p90 %.2f ms; "
              "first frame of the slowest window after %.1f ms (stream start-up)\n",
              static_cast<long long>(late_steady), static_cast<long long>(std::max(0, ticks - 1 - fps) * windows), ps.p50,
              ps.p90, first_ack_ms);
  std::printf("  stats: %d video threads; video_decoder %s (%s); gpu streams on the CPU %lld (%s); gpu failures %lld\n",
              st.video_threads, st.video_decoder.c_str(), st.video_decoder_reason.c_str(),
              static_cast<long long>(st.video_gpu_streams_on_cpu), st.last_video_gpu_note.c_str(),
              static_cast<long long>(st.video_gpu_failures));
  char buf[480];
  std::snprintf(buf, sizeof buf,
                "{\"bench\":\"engine\",\"route\":\"%s\",\"windows\":%d,\"video_threads\":%d,\"fps_target\":%d,\"frames_per_s\":%.1f,"
                "\"late_ticks\":%lld,\"late_ticks_after_1s\":%lld,\"errors\":%lld,\"gpu_acks\":%lld,\"p50_ms\":%.2f,"
                "\"p90_ms\":%.2f,\"steady_p90_ms\":%.2f,\"first_frame_ms\":%.1f}",
                use_gpu ? "gpu" : "cpu", windows, st.video_threads, fps, fps_all, static_cast<long long>(late),
                static_cast<long long>(late_steady), static_cast<long long>(errors), static_cast<long long>(gpu_acks),
                p.p50, p.p90, ps.p90, first_ack_ms);
  add_json(buf);
}

}  // namespace

int main(int argc, char** argv) {
  int frames = 120, windows = 8, video_threads = 0;
  double seconds = 4;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : ""; };
    if (a == "--frames") frames = std::max(2, std::atoi(next()));
    else if (a == "--windows") windows = std::max(1, std::atoi(next()));
    else if (a == "--seconds") seconds = std::max(0.5, std::atof(next()));
    else if (a == "--video-threads") video_threads = std::clamp(std::atoi(next()), 0, 64);
    else if (a == "--only") only = next();
    else {
      std::fprintf(stderr,
                   "usage: gpu_video_benchmark [--frames N] [--windows N] [--seconds S] [--video-threads N] "
                   "[--only latency|engine]\n");
      return 2;
    }
  }
  auto d = cuda::GpuJpegDecoder::create();
  if (!d.ok()) {
    std::printf("no GPU decoder: %s\n", d.error().message().c_str());
    return 1;
  }
  std::shared_ptr<const cuda::GpuJpegDecoder> gpu(std::move(d).value());
  if (auto p = codecs::probe_video_gpu(gpu->cuda_device(), gpu->cuda_context()); !p.ok()) {
    std::printf("libavcodec cannot open CUDA device %d: %s\n", gpu->cuda_device(), p.error().message().c_str());
    return 1;
  }
  for (const auto& c : codecs::describe_video_codecs()) {
    std::string hw;
    for (const auto& x : c.hwaccels) hw += " " + x;
    std::printf("%s: libavcodec %s, hwaccels:%s\n", c.coding.c_str(), c.decoder.c_str(), hw.empty() ? " none" : hw.c_str());
  }
  if (only.empty() || only == "latency") {
    latency(gpu, 1920, 1080, frames);
    latency(gpu, 3840, 2160, frames);
  }
  if (only.empty() || only == "engine") {
    engine(gpu, windows, seconds, true, video_threads);
    engine(gpu, windows, seconds, false, video_threads);
  }
  std::printf("json: [%s]\n", json_items.text().c_str());
  return 0;
}
