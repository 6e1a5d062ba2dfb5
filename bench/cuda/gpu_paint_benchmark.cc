// `pixpath play --pace max --backing gl` with the jpeg decoder on the CPU and on the GPU, side
// by side in one process (docs/performance.md, "GPU decode"). A plain program: it plays whole
// recordings through the player API.
//
//   gpu_paint_benchmark --make-recording OUT.pxrec --draws N [--windows W] JPEG...
//       (W 3840x2160 windows, 1 by default; the draws go round the windows: all updating at once)
//   gpu_paint_benchmark [--threads N] [--in-flight N] [--repeat R] [--gpu-batch B1,B2...] RECORDING...
//       (the cpu decoder, then the gpu decoder once per gpu_max_batch value, 0 = auto by default;
//       --no-cpu: the gpu runs only; --no-gpu: the cpu run only; --gpu-min-pixels N: the engine's
//       small-picture threshold; --gpu-routing measured|size: by measurement (the default) or
//       by that threshold alone)
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cuda_loader/testing/gpu_paint_support.h"
#include "pixpath/codecs/image_io.h"

using namespace pixpath;

namespace {

void print_row(const std::string& file, const std::string& decoder, const gl::testing::Played& p) {
  const auto& r = p.result;
  const paint::CodingStats* jpeg = nullptr;
  for (const auto& c : r.per_coding)
    if (c.coding == "jpeg") jpeg = &c;
  const auto& s = jpeg ? *jpeg : r.all;
  const double painted = double(std::max<int64_t>(1, r.all.painted));
  std::printf(
      "%-28s %-9s draws %5lld  %8.1f draws/s  jpeg total p50 %7.2f p99 %7.2f ms  decode p50 %6.2f  "
      "ui p50 %5.2f p99 %5.2f ms  gpu %lld cpu %lld fallbacks %lld  gpu decode calls %lld (largest %lld)  "
      "copy calls %lld  pixpath copies/paint %.2f  "
      "gl host copies %lld  gl uploaded MB %.1f  external writes %lld  errors %lld\n",
      file.c_str(), decoder.c_str(), (long long)r.all.draws, r.fps, s.total.p50 / 1000.0, s.total.p99 / 1000.0,
      s.decode.p50 / 1000.0, s.paint.p50 / 1000.0, s.paint.p99 / 1000.0, (long long)r.all.gpu,
      (long long)r.all.cpu, (long long)r.all.gpu_fallbacks, (long long)r.gpu_decode_calls,
      (long long)r.gpu_batched_max, (long long)r.gpu_copy_calls,
      double(r.copies) / painted, (long long)p.gl.host_copies, p.gl.bytes_uploaded / 1e6,
      (long long)p.gl.external_writes, (long long)r.all.errors);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> files;
  std::string make;
  int draws = 300, threads = 2, repeat = 1, in_flight = 0, windows = 1;
  std::vector<int> batches{0};
  bool cpu = true;
  int64_t gpu_min_pixels = 256 * 256;
  bool measured_routing = true;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--make-recording" && i + 1 < argc) make = argv[++i];
    else if (a == "--draws" && i + 1 < argc) draws = std::atoi(argv[++i]);
    else if (a == "--threads" && i + 1 < argc) threads = std::atoi(argv[++i]);
    else if (a == "--repeat" && i + 1 < argc) repeat = std::atoi(argv[++i]);
    else if (a == "--in-flight" && i + 1 < argc) in_flight = std::atoi(argv[++i]);
    else if (a == "--no-cpu") cpu = false;
    else if (a == "--no-gpu") batches.clear();
    else if (a == "--gpu-min-pixels" && i + 1 < argc) gpu_min_pixels = std::atoll(argv[++i]);
    else if (a == "--gpu-routing" && i + 1 < argc) measured_routing = std::string(argv[++i]) != "size";
    else if (a == "--windows" && i + 1 < argc) windows = std::max(1, std::atoi(argv[++i]));
    else if (a == "--gpu-batch" && i + 1 < argc) {
      batches.clear();
      for (std::string list = argv[++i]; !list.empty();) {
        const auto comma = list.find(',');
        batches.push_back(std::atoi(list.substr(0, comma).c_str()));
        list = comma == std::string::npos ? "" : list.substr(comma + 1);
      }
    }
    else files.push_back(a);
  }
  if (!make.empty()) {
    std::vector<std::vector<uint8_t>> jpegs;
    std::vector<std::pair<int, int>> sizes;
    for (const auto& f : files) {
      auto b = codecs::read_file(f);
      if (!b.ok()) return std::fprintf(stderr, "%s\n", b.error().message().c_str()), 1;
      sizes.push_back(gl::testing::jpeg_size(*b));
      std::printf("%s: %dx%d, %zu bytes\n", f.c_str(), sizes.back().first, sizes.back().second, b->size());
      jpegs.push_back(std::move(b).value());
    }
    auto r = gl::testing::write_jpeg_recording(make, jpegs, sizes, draws, 3840, 2160, windows);
    if (!r.ok()) return std::fprintf(stderr, "%s\n", r.error().message().c_str()), 1;
    std::printf("wrote %s: %d draws, %d window(s)\n", make.c_str(), draws, windows);
    return 0;
  }
  // --no-gpu needs no GPU decoder: the CPU route into GL runs on any GL (llvmpipe too).
  std::shared_ptr<const cuda::GpuJpegDecoder> gpu;
  if (!batches.empty()) {
    auto dec = cuda::GpuJpegDecoder::create();
    if (!dec.ok()) {
      std::printf("no GPU decoder: %s\n", dec.error().message().c_str());
      return 1;
    }
    gpu = std::move(dec).value();
  }
  {
    auto ctx = gl::GlContext::create();
    if (!ctx.ok()) return std::printf("no GL: %s\n", ctx.error().message().c_str()), 1;
    std::printf("threads %d, in flight %d (0: 4 per thread)\n", threads, in_flight);
    std::printf("GL: %s platform, %s| %s | %s\n", std::string(gl::to_string((*ctx)->info().platform)).c_str(),
                (*ctx)->info().egl_vendor.c_str(), (*ctx)->info().renderer.c_str(),
                (*ctx)->info().version.c_str());
  }
  int rc = 0;
  for (const auto& f : files) {
    const auto slash = f.rfind('/');
    const std::string name = slash == std::string::npos ? f : f.substr(slash + 1);
    for (int rep = 0; rep < repeat; ++rep) {
      // The cpu decoder first, then the gpu decoder once per batch limit, side by side.
      std::optional<gl::testing::Played> cpu_run;
      for (int k = cpu ? -1 : 0; k < int(batches.size()); ++k) {
        const bool gpu_run = k >= 0;
        std::string label = gpu_run ? "gpu b=" + std::to_string(batches[size_t(k)]) : "cpu";
        auto p = gl::testing::play_gl(f, gpu_run ? paint::DecoderChoice::Gpu : paint::DecoderChoice::Cpu,
                                      gpu_run ? gpu : nullptr, threads, in_flight,
                                      gpu_run ? batches[size_t(k)] : 0, gpu_min_pixels, measured_routing);
        if (!p.ok()) {
          std::printf("%s %s: %s\n", f.c_str(), label.c_str(), p.error().message().c_str());
          rc = 1;
          continue;
        }
        if (gpu_run && batches[size_t(k)] == 0) label = "gpu b=" + std::to_string(p->result.gpu_max_batch) + "a";
        print_row(name, label, *p);
        if (gpu_run && !p->result.gpu_route_table.empty())
          std::printf("  gpu routing (%lld explored): %s\n", (long long)p->result.gpu_route_explored,
                      p->result.gpu_route_table.c_str());
        if (gpu_run && !p->result.last_gpu_error.empty())
          std::printf("  last gpu error: %s\n", p->result.last_gpu_error.c_str());
        if (!gpu_run) {
          cpu_run = std::move(p).value();
          continue;
        }
        if (!cpu_run) continue;
        for (const auto& [wid, pic] : cpu_run->windows) {
          auto it = p->windows.find(wid);
          if (it == p->windows.end()) continue;
          auto d = gl::testing::compare(pic, it->second);
          std::printf("  window %lld %dx%d: cpu vs %s snapshot max difference %d (%lld channel values differ)\n",
                      (long long)wid, pic.width(), pic.height(), label.c_str(), d.max, (long long)d.differing);
        }
      }
    }
  }
  if (gpu) std::printf("decoder info: %s\n", gpu->info_json().c_str());
  return rc;
}
