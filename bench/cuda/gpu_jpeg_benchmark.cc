// Side-by-side timing of the GPU picture path on one machine (docs/performance.md, "GPU decode"):
//   cpu        tjDecompress2 to RGBA (pixpath's CPU path), one thread
//   nvjpeg     nvJPEG's own single-picture decode (nvjpegDecode, DEFAULT backend, RGBI) to device
//              memory, then a stream synchronisation; and the same + a GL fence wait (the end the
//              texture rows' GL fence has)
//   device     pixpath decode_to_device (RGBA, CUDA memory) + wait on its event
//   texture    pixpath decode_to_texture into an immutable RGBA8 texture + a wait on its fence (a
//              CUDA event after the unmap: the pixels are in the texture), and + a GL fence wait
//   hybrid / gpu_hybrid   decode_to_device with the backend forced (routing threshold)
//   batch8     8 windows updating at once: decode_batch_to_textures of 8 pictures (hardware
//              engines) + a GL fence; and back to back without waits, aggregate frames/s; and
//              decode_batch_to_device of 8 back to back (the paint engine's GPU thread)
//   --sync-probe FILE...  where the texture path's time goes (host round trips, interop alone)
//   --first-calls FILE    what the first calls of a fresh decoder cost (start-up of a session)
// Every figure is the median (p50) of --iters host wall times after warm-up, each ending in a
// host wait. Usage: cuda_gpu_jpeg_benchmark [--iters N] [--batch-iters N] FILE.jpg...
#include <cuda_runtime_api.h>
#include <nvjpeg.h>
#include <turbojpeg.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "cuda/testing/headless_gl.h"
#include "pixpath/cuda/gpu_jpeg.h"

using namespace pixpath;
using namespace pixpath::cuda;
using Clock = std::chrono::steady_clock;

namespace {

using testing::fence_poll;
using testing::percentiles;
using testing::read_file;
using testing::Stats;
using testing::time_it;

void row(const std::string& file, int w, int h, size_t bytes, const char* route, const Stats& s,
         const char* note = "") {
  std::printf("| %s | %dx%d | %zu | %s | %.3f | %.3f | %.3f | %s |\n", file.c_str(), w, h, bytes, route,
              s.p50, s.p10, s.p90, note);
  std::fflush(stdout);
}


// --probe FILE: nvJPEG's own APIs in several set-ups, to find what the decoupled path costs
// (host time of each phase, p50 of 60).
int pool_malloc(void* ctx, void** ptr, size_t size, cudaStream_t stream) {
  return cudaMallocFromPoolAsync(ptr, size, static_cast<cudaMemPool_t>(ctx), stream) == cudaSuccess ? 0 : 1;
}
int pool_free(void*, void* ptr, size_t, cudaStream_t stream) { return cudaFreeAsync(ptr, stream) == cudaSuccess ? 0 : 1; }
std::atomic<int> g_pinned_allocs{0}, g_dev_allocs{0};
int pinned_malloc(void*, void** ptr, size_t size, cudaStream_t) {
  ++g_pinned_allocs;
  return cudaHostAlloc(ptr, size, cudaHostAllocDefault) == cudaSuccess ? 0 : 1;
}
int pinned_free(void*, void* ptr, size_t, cudaStream_t) { return cudaFreeHost(ptr) == cudaSuccess ? 0 : 1; }
int counting_pool_malloc(void* ctx, void** ptr, size_t size, cudaStream_t stream) {
  ++g_dev_allocs;
  return pool_malloc(ctx, ptr, size, stream);
}

int probe(const char* path) {
  const auto data = read_file(path);
  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaMemPool_t pool;
  cudaMemPoolProps pp{};
  pp.allocType = cudaMemAllocationTypePinned;
  pp.location.type = cudaMemLocationTypeDevice;
  pp.location.id = 0;
  cudaMemPoolCreate(&pool, &pp);
  uint64_t keep = UINT64_MAX;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  void* out = nullptr;
  cudaMalloc(&out, size_t{64} << 20);
  for (int variant = 0; variant < 8; ++variant) {
    const bool v2 = variant >= 4;
    const bool alternate = variant == 6;
    const bool rgbi = variant == 7;
    const nvjpegBackend_t backend = (variant % 2) ? NVJPEG_BACKEND_GPU_HYBRID : NVJPEG_BACKEND_HYBRID;
    const bool single_call = variant == 2 || variant == 3;
    nvjpegHandle_t h = nullptr;
    nvjpegDevAllocatorV2_t dev{counting_pool_malloc, pool_free, pool};
    nvjpegPinnedAllocatorV2_t pin{pinned_malloc, pinned_free, nullptr};
    if (v2) nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, &dev, &pin, 0, &h);
    else nvjpegCreateSimple(&h);
    nvjpegJpegDecoder_t dec;
    nvjpegDecoderCreate(h, backend, &dec);
    nvjpegJpegState_t st;
    nvjpegDecoderStateCreate(h, dec, &st);
    nvjpegBufferPinned_t pb[2];
    nvjpegBufferDevice_t db;
    if (v2) {
      nvjpegBufferPinnedCreateV2(h, &pin, &pb[0]);
      nvjpegBufferPinnedCreateV2(h, &pin, &pb[1]);
      nvjpegBufferDeviceCreateV2(h, &dev, &db);
    } else {
      nvjpegBufferPinnedCreate(h, nullptr, &pb[0]);
      nvjpegBufferPinnedCreate(h, nullptr, &pb[1]);
      nvjpegBufferDeviceCreate(h, nullptr, &db);
    }
    nvjpegStateAttachDeviceBuffer(st, db);
    nvjpegStateAttachPinnedBuffer(st, pb[0]);
    nvjpegJpegStream_t js;
    nvjpegJpegStreamCreate(h, &js);
    nvjpegDecodeParams_t prm;
    nvjpegDecodeParamsCreate(h, &prm);
    nvjpegDecodeParamsSetOutputFormat(prm, rgbi ? NVJPEG_OUTPUT_RGBI : NVJPEG_OUTPUT_YUV);
    std::vector<double> ph[5];
    int turn = 0;
    const int a0 = g_pinned_allocs, d0 = g_dev_allocs;
    bool ok = true;
    for (int i = 0; i < 70 && ok; ++i) {
      auto t0 = Clock::now();
      ok = nvjpegJpegStreamParse(h, data.data(), data.size(), 0, 0, js) == NVJPEG_STATUS_SUCCESS;
      unsigned w = 0, hh = 0;
      nvjpegJpegStreamGetFrameDimensions(js, &w, &hh);
      nvjpegImage_t img{};
      unsigned char* o = static_cast<unsigned char*>(out);
      if (rgbi) {
        img.channel[0] = o; img.pitch[0] = size_t(w) * 3;
      } else {
        for (int c = 0; c < 3; ++c) { img.channel[c] = o + size_t(c) * w * hh; img.pitch[c] = w; }
      }
      auto t1 = Clock::now();
      if (alternate) { turn ^= 1; nvjpegStateAttachPinnedBuffer(st, pb[turn]); }
      if (single_call) {
        ok = ok && nvjpegDecodeJpeg(h, dec, st, js, &img, prm, stream) == NVJPEG_STATUS_SUCCESS;
      } else {
        ok = ok && nvjpegDecodeJpegHost(h, dec, st, prm, js) == NVJPEG_STATUS_SUCCESS;
      }
      auto t2 = Clock::now();
      if (!single_call) {
        ok = ok && nvjpegDecodeJpegTransferToDevice(h, dec, st, js, stream) == NVJPEG_STATUS_SUCCESS;
        ok = ok && nvjpegDecodeJpegDevice(h, dec, st, &img, stream) == NVJPEG_STATUS_SUCCESS;
      }
      auto t3 = Clock::now();
      cudaStreamSynchronize(stream);
      auto t4 = Clock::now();
      if (i >= 10) {
        auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
        ph[0].push_back(ms(t0, t1)); ph[1].push_back(ms(t1, t2)); ph[2].push_back(ms(t2, t3));
        ph[3].push_back(ms(t3, t4)); ph[4].push_back(ms(t0, t4));
      }
    }
    for (auto& v : ph) std::sort(v.begin(), v.end());
    auto med = [](std::vector<double>& v) { return v.empty() ? -1.0 : v[v.size() / 2]; };
    std::printf("probe %s v%d %s %s%s%s%s: parse %.3f host %.3f enqueue %.3f sync %.3f total %.3f ms; allocs during loop pinned %d device %d%s\n",
                path, variant, backend == NVJPEG_BACKEND_HYBRID ? "HYBRID" : "GPU_HYBRID",
                v2 ? "v2-allocators" : "default-allocators", alternate ? " alternate-pinned" : "",
                single_call ? " nvjpegDecodeJpeg" : " decoupled", rgbi ? " RGBI" : " YUV", med(ph[0]), med(ph[1]),
                med(ph[2]), med(ph[3]), med(ph[4]), int(g_pinned_allocs) - a0, int(g_dev_allocs) - d0, ok ? "" : " FAILED");
    std::fflush(stdout);
    nvjpegDecodeParamsDestroy(prm);
    nvjpegJpegStreamDestroy(js);
    nvjpegJpegStateDestroy(st);
    nvjpegBufferPinnedDestroy(pb[0]);
    nvjpegBufferPinnedDestroy(pb[1]);
    nvjpegBufferDeviceDestroy(db);
    nvjpegDecoderDestroy(dec);
    nvjpegDestroy(h);
  }
  return 0;
}


// --sync-probe FILE...: where the texture path's time over nvJPEG's own decode goes. Host
// round trips on an idle GPU (a GL fence waited on blocking or by polling, a CUDA stream
// synchronisation), then CUDA-GL interop alone (map, a 2-D copy into the texture's array,
// unmap) ended by each kind of wait, with the host time of the map and unmap calls; then per
// file: nvJPEG alone, decode_to_device, and decode_to_texture ended by each kind of wait.
extern "C" cudaError_t CUDARTAPI cudaGraphicsGLRegisterImage(cudaGraphicsResource** resource, unsigned int image,
                                                             unsigned int target, unsigned int flags);

int sync_probe(const std::vector<const char*>& files, int iters) {
  testing::HeadlessGl gl;
  if (!gl.ok()) return std::fprintf(stderr, "headless GL: %s\n", gl.error().c_str()), 2;
  std::printf("GL: %s\n", gl.renderer().c_str());
  auto created = GpuJpegDecoder::create();
  if (!created.ok()) return std::fprintf(stderr, "GPU decoder: %s\n", created.error().message().c_str()), 2;
  auto& dec = **created;
  std::printf("\n| what | size | p50 ms | p10 ms | p90 ms | note |\n|---|---|---|---|---|---|\n");
  auto line = [](const std::string& what, const std::string& size, const Stats& s, const std::string& note = "") {
    std::printf("| %s | %s | %.3f | %.3f | %.3f | %s |\n", what.c_str(), size.c_str(), s.p50, s.p10, s.p90, note.c_str());
    std::fflush(stdout);
  };
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  cudaEvent_t spin_ev = nullptr, block_ev = nullptr;
  cudaEventCreateWithFlags(&spin_ev, cudaEventDisableTiming);
  cudaEventCreateWithFlags(&block_ev, cudaEventDisableTiming | cudaEventBlockingSync);
  // PIXPATH_PROBE_FILES_ONLY=1: only the per-file rows (A/B runs of PIXPATH_CUDA_TEXTURE_WRITE).
  const bool files_only = std::getenv("PIXPATH_PROBE_FILES_ONLY") != nullptr;
  if (!files_only) {
  line("GL fence, nothing queued, blocking glClientWaitSync", "-", time_it(iters, 10, testing::HeadlessGl::fence_wait));
  line("GL fence, nothing queued, polling glClientWaitSync", "-", time_it(iters, 10, fence_poll));
  line("cudaStreamSynchronize, empty stream", "-", time_it(iters, 10, [&] { return cudaStreamSynchronize(stream) == cudaSuccess; }));
  line("cudaEventSynchronize (blocking-sync event), empty stream", "-", time_it(iters, 10, [&] {
         return cudaEventRecord(block_ev, stream) == cudaSuccess && cudaEventSynchronize(block_ev) == cudaSuccess;
       }));
  for (auto [w, h] : {std::pair{3840, 2160}, std::pair{1920, 1080}}) {
    const std::string size = std::to_string(w) + "x" + std::to_string(h);
    GLuint tex = testing::HeadlessGl::make_texture(w, h);
    cudaGraphicsResource_t res = nullptr;
    if (cudaGraphicsGLRegisterImage(&res, tex, GL_TEXTURE_2D, cudaGraphicsRegisterFlagsSurfaceLoadStore) != cudaSuccess) {
      std::fprintf(stderr, "register failed\n");
      return 2;
    }
    void* src = nullptr;
    size_t pitch = size_t(w) * 4;
    cudaMalloc(&src, pitch * h);
    cudaMemset(src, 0x80, pitch * h);
    void* dst = nullptr;
    cudaMalloc(&dst, pitch * h);
    std::vector<double> map_ms, unmap_ms;
    auto interop = [&](bool record) {
      const auto t0 = Clock::now();
      if (cudaGraphicsMapResources(1, &res, stream) != cudaSuccess) return false;
      const auto t1 = Clock::now();
      cudaArray_t a = nullptr;
      cudaGraphicsSubResourceGetMappedArray(&a, res, 0, 0);
      cudaMemcpy2DToArrayAsync(a, 0, 0, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream);
      const auto t2 = Clock::now();
      if (cudaGraphicsUnmapResources(1, &res, stream) != cudaSuccess) return false;
      const auto t3 = Clock::now();
      if (record) {
        map_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
        unmap_ms.push_back(std::chrono::duration<double, std::milli>(t3 - t2).count());
      }
      return true;
    };
    line("2-D copy into CUDA memory + cudaStreamSynchronize (no interop)", size, time_it(iters, 10, [&] {
           return cudaMemcpy2DAsync(dst, pitch, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess &&
                  cudaStreamSynchronize(stream) == cudaSuccess;
         }));
    line("1-D copy in CUDA memory + cudaStreamSynchronize + GL fence poll (no interop)", size, time_it(iters, 10, [&] {
           return cudaMemcpyAsync(dst, src, pitch * h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess &&
                  cudaStreamSynchronize(stream) == cudaSuccess && fence_poll();
         }));
    line("cudaMemsetAsync + cudaStreamSynchronize + GL fence poll (no interop)", size, time_it(iters, 10, [&] {
           return cudaMemsetAsync(dst, 1, pitch * h, stream) == cudaSuccess &&
                  cudaStreamSynchronize(stream) == cudaSuccess && fence_poll();
         }));
    line("GL fence poll, then 2-D copy in CUDA memory + cudaStreamSynchronize", size, time_it(iters, 10, [&] {
           return fence_poll() &&
                  cudaMemcpy2DAsync(dst, pitch, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess &&
                  cudaStreamSynchronize(stream) == cudaSuccess;
         }));
    line("2-D copy into CUDA memory + GL fence poll (no interop)", size, time_it(iters, 10, [&] {
           return cudaMemcpy2DAsync(dst, pitch, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream) == cudaSuccess &&
                  cudaStreamSynchronize(stream) == cudaSuccess && fence_poll();
         }));
    line("map + copy + unmap + cudaStreamSynchronize", size, time_it(iters, 10, [&] {
           return interop(true) && cudaStreamSynchronize(stream) == cudaSuccess;
         }));
    line("  host time of cudaGraphicsMapResources (same loop)", size, percentiles(map_ms));
    line("  host time of cudaGraphicsUnmapResources (same loop)", size, percentiles(unmap_ms));
    line("map + copy + unmap + spinning event", size, time_it(iters, 10, [&] {
           return interop(false) && cudaEventRecord(spin_ev, stream) == cudaSuccess && cudaEventSynchronize(spin_ev) == cudaSuccess;
         }));
    line("map + copy + unmap + blocking-sync event", size, time_it(iters, 10, [&] {
           return interop(false) && cudaEventRecord(block_ev, stream) == cudaSuccess && cudaEventSynchronize(block_ev) == cudaSuccess;
         }));
    line("map + copy + unmap + GL fence blocking", size, time_it(iters, 10, [&] { return interop(false) && testing::HeadlessGl::fence_wait(); }));
    line("map + copy + unmap + GL fence poll", size, time_it(iters, 10, [&] { return interop(false) && fence_poll(); }));
    line("map + copy + unmap + stream sync + GL fence poll", size, time_it(iters, 10, [&] {
           return interop(false) && cudaStreamSynchronize(stream) == cudaSuccess && fence_poll();
         }));
    // Map held across the copy while the host does other work first (the overlap idea): map,
    // then wait for the map to be done, then time only copy + unmap + `wait`.
    auto mapped_beforehand = [&](const std::function<void()>& wait) {
      std::vector<double> v;
      for (int i = 0; i < iters + 10; ++i) {
        cudaGraphicsMapResources(1, &res, stream);
        cudaStreamSynchronize(stream);
        const auto t0 = Clock::now();
        cudaArray_t a = nullptr;
        cudaGraphicsSubResourceGetMappedArray(&a, res, 0, 0);
        cudaMemcpy2DToArrayAsync(a, 0, 0, src, pitch, pitch, h, cudaMemcpyDeviceToDevice, stream);
        cudaGraphicsUnmapResources(1, &res, stream);
        wait();
        if (i >= 10) v.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
      return percentiles(std::move(v));
    };
    line("mapped beforehand: copy + unmap + cudaStreamSynchronize", size,
         mapped_beforehand([&] { cudaStreamSynchronize(stream); }));
    line("mapped beforehand: copy + unmap + GL fence poll", size, mapped_beforehand([] { fence_poll(); }));
    cudaStreamSynchronize(stream);
    cudaGraphicsUnregisterResource(res);
    cudaFree(src);
    cudaFree(dst);
    glDeleteTextures(1, &tex);
  }
  }  // files_only
  const char* mode = std::getenv("PIXPATH_CUDA_TEXTURE_WRITE");
  const std::string write = std::string(" [texture write: ") + (mode ? mode : "surface") + "]";

  nvjpegHandle_t nvj = nullptr;
  nvjpegJpegState_t nvj_state = nullptr;
  nvjpegCreateSimple(&nvj);
  nvjpegJpegStateCreate(nvj, &nvj_state);
  for (const char* path : files) {
    const auto data = read_file(path);
    GpuDecodeParams params;
    auto info = dec.inspect(data, params);
    if (!info.ok()) continue;
    const int w = info->width, h = info->height;
    std::string name = path;
    name = name.substr(name.rfind('/') + 1);
    void* rgbi = nullptr;
    cudaMalloc(&rgbi, size_t(w) * h * 3);
    nvjpegImage_t out{};
    out.channel[0] = static_cast<unsigned char*>(rgbi);
    out.pitch[0] = size_t(w) * 3;
    line("nvjpegDecode RGBI + cudaStreamSynchronize (nvJPEG alone)", name, time_it(iters, 5, [&] {
           return nvjpegDecode(nvj, nvj_state, data.data(), data.size(), NVJPEG_OUTPUT_RGBI, &out, stream) == NVJPEG_STATUS_SUCCESS &&
                  cudaStreamSynchronize(stream) == cudaSuccess;
         }));
    cudaFree(rgbi);
    line("decode_to_device + its event", name, time_it(iters, 5, [&] {
           auto pic = dec.decode_to_device(data, params);
           return pic.ok() && pic->plane(0).storage->wait_ready().ok();
         }));
    GLuint tex = testing::HeadlessGl::make_texture(w, h);
    const GlTextureRegion region{tex, w, h, 0, 0};
    line("decode_to_texture + its fence" + write, name, time_it(iters, 5, [&] {
           auto f = dec.decode_to_texture(data, params, region);
           return f.ok() && (*f)->wait().ok();
         }));
    line("decode_to_texture + cudaDeviceSynchronize", name, time_it(iters, 5, [&] {
           return dec.decode_to_texture(data, params, region).ok() && cudaDeviceSynchronize() == cudaSuccess;
         }));
    line("decode_to_texture + GL fence poll", name, time_it(iters, 5, [&] {
           return dec.decode_to_texture(data, params, region).ok() && fence_poll();
         }));
    line("decode_to_texture + GL fence blocking", name, time_it(iters, 5, [&] {
           return dec.decode_to_texture(data, params, region).ok() && testing::HeadlessGl::fence_wait();
         }));
    line("decode_to_texture + cudaDeviceSynchronize + GL fence poll", name, time_it(iters, 5, [&] {
           return dec.decode_to_texture(data, params, region).ok() && cudaDeviceSynchronize() == cudaSuccess && fence_poll();
         }));
    dec.forget_texture(tex);
    glDeleteTextures(1, &tex);
  }
  std::printf("decoder after: %s\n", dec.info_json().c_str());
  nvjpegJpegStateDestroy(nvj_state);
  nvjpegDestroy(nvj);
  return 0;
}

// --first-calls FILE: what a session's first GPU draws pay that later ones do not. A fresh
// decoder; each call timed on the host to its completion, the first time and the second.
int first_calls(const char* path) {
  testing::HeadlessGl gl;
  if (!gl.ok()) return std::fprintf(stderr, "headless GL: %s\n", gl.error().c_str()), 2;
  const auto data = read_file(path);
  auto ms_since = [](Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); };
  auto t0 = Clock::now();
  auto created = GpuJpegDecoder::create();
  if (!created.ok()) return std::fprintf(stderr, "GPU decoder: %s\n", created.error().message().c_str()), 2;
  std::printf("create (with self-test): %.2f ms\n", ms_since(t0));
  auto& dec = **created;
  const std::string info_after_create = dec.info_json();
  const auto at = info_after_create.find("\"hardware_batches\"");
  std::printf("after create: %s\n", at == std::string::npos ? "no hardware_batches field"
                                                               : info_after_create.substr(at, 24).c_str());
  auto info = dec.inspect(data, {});
  if (!info.ok()) return 2;
  const int w = info->width, h = info->height;
  for (int round = 1; round <= 2; ++round) {
    t0 = Clock::now();
    auto pic = dec.decode_to_device(data, {});
    const bool ok = pic.ok() && pic->plane(0).storage->wait_ready().ok();
    std::printf("decode_to_device, call %d: %.2f ms%s\n", round, ms_since(t0), ok ? "" : " FAILED");
  }
  std::vector<Picture> kept;
  for (int n : {2, 2, 7, 7, 8, 8, 14, 14, 3, 3}) {
    std::vector<GpuDecodeJob> jobs(size_t(n), GpuDecodeJob{data, {}});
    t0 = Clock::now();
    auto pics = dec.decode_batch_to_device(jobs);
    bool ok = true;
    for (auto& p : pics) ok = ok && p.ok() && p->plane(0).storage->wait_ready().ok();
    std::printf("decode_batch_to_device of %d: %.2f ms%s\n", n, ms_since(t0), ok ? "" : " FAILED");
    if (kept.empty())
      for (auto& p : pics)
        if (p.ok()) kept.push_back(std::move(p).value());
  }
  if (kept.empty()) return 2;
  for (auto [windows, prepare] : {std::pair{1, false}, std::pair{8, false}, std::pair{1, true}, std::pair{8, true}}) {
    std::vector<GLuint> texs;
    for (int i = 0; i < windows; ++i) texs.push_back(testing::HeadlessGl::make_texture(w, h));
    if (prepare) {
      t0 = Clock::now();
      for (auto t : texs)
        if (!dec.prepare_texture({t, w, h, 0, 0}).ok()) std::printf("prepare_texture FAILED\n");
      std::printf("prepare_texture of %d new texture(s): %.2f ms (no wait)\n", windows, ms_since(t0));
      testing::HeadlessGl::fence_wait();  // the window's creation is long past by its first draw
      cudaDeviceSynchronize();
    }
    for (int round = 1; round <= 2; ++round) {
      std::vector<GpuCopyJob> jobs;
      for (int i = 0; i < windows; ++i) jobs.push_back({&kept[0], {texs[size_t(i)], w, h, 0, 0}});
      t0 = Clock::now();
      auto f = dec.copy_to_textures(jobs);
      const bool ok = f.ok() && (*f)->wait().ok();
      std::printf("copy_to_textures into %d new%s texture(s), call %d: %.2f ms%s\n", windows,
                  prepare ? ", prepared" : "", round, ms_since(t0), ok ? "" : " FAILED");
    }
    for (auto t : texs) {
      dec.forget_texture(t);
      glDeleteTextures(1, &t);
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 50, batch_iters = 30;
  std::vector<const char*> files;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters") && i + 1 < argc) iters = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--batch-iters") && i + 1 < argc) batch_iters = std::atoi(argv[++i]);
    else files.push_back(argv[i]);
  }
  if (argc == 3 && !std::strcmp(argv[1], "--probe")) return probe(argv[2]);
  if (argc == 3 && !std::strcmp(argv[1], "--first-calls")) return first_calls(argv[2]);
  if (argc >= 2 && !std::strcmp(argv[1], "--sync-probe")) {
    files.erase(files.begin());  // "--sync-probe" itself
    return sync_probe(files, iters);
  }
  // --phases FILE: only decode_to_device (auto) of one file, then the engine's host time per
  // phase (a fresh process, so the engine's counters hold this file alone).
  if (argc == 3 && !std::strcmp(argv[1], "--phases")) {
    auto created = GpuJpegDecoder::create();
    if (!created.ok()) return std::fprintf(stderr, "%s\n", created.error().message().c_str()), 2;
    const auto data = read_file(argv[2]);
    const Stats s = time_it(100, 10, [&] {
      auto pic = (*created)->decode_to_device(data, {});
      return pic.ok() && pic->plane(0).storage->wait_ready().ok();
    });
    std::printf("phases %s: decode_to_device p50 %.3f ms; %s\n", argv[2], s.p50, (*created)->info_json().c_str());
    return 0;
  }
  testing::HeadlessGl gl;
  if (argc == 2 && !std::strcmp(argv[1], "--gl-check")) {
    std::printf("GL check: %s\n", gl.ok() ? gl.renderer().c_str() : gl.error().c_str());
    return gl.ok() ? 0 : 1;
  }
  if (!gl.ok()) {
    std::fprintf(stderr, "headless GL: %s\n", gl.error().c_str());
    return 2;
  }
  std::printf("GL: %s\n", gl.renderer().c_str());
  auto created = GpuJpegDecoder::create();
  if (!created.ok()) {
    std::fprintf(stderr, "GPU decoder: %s\n", created.error().message().c_str());
    return 2;
  }
  auto& dec = **created;
  std::printf("decoder: %s\n", dec.info_json().c_str());

  nvjpegHandle_t nvj = nullptr;
  nvjpegJpegState_t nvj_state = nullptr;
  cudaStream_t stream = nullptr;
  if (nvjpegCreateSimple(&nvj) != NVJPEG_STATUS_SUCCESS || nvjpegJpegStateCreate(nvj, &nvj_state) != NVJPEG_STATUS_SUCCESS ||
      cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    std::fprintf(stderr, "nvJPEG baseline setup failed\n");
    return 2;
  }
  tjhandle tj = tjInitDecompress();

  std::printf("\n| file | size | bytes | route | p50 ms | p10 ms | p90 ms | note |\n|---|---|---|---|---|---|---|---|\n");
  for (const char* path : files) {
    const auto data = read_file(path);
    std::string name = path;
    name = name.substr(name.rfind('/') + 1);
    int w = 0, h = 0, sub = 0, cs = 0;
    if (tjDecompressHeader3(tj, data.data(), (unsigned long)data.size(), &w, &h, &sub, &cs) != 0) {
      std::fprintf(stderr, "%s: not a JPEG\n", path);
      continue;
    }
    const bool big = int64_t(w) * h > 4'000'000;
    const int n = big ? iters : iters * 2;
    std::vector<uint8_t> rgba(size_t(w) * h * 4);
    row(name, w, h, data.size(), "cpu tjDecompress2 RGBA", time_it(big ? 15 : 30, 2, [&] {
          return tjDecompress2(tj, data.data(), (unsigned long)data.size(), rgba.data(), w, w * 4, h, TJPF_RGBA, 0) == 0;
        }));

    void* rgbi = nullptr;
    cudaMalloc(&rgbi, size_t(w) * h * 3);
    nvjpegImage_t out{};
    out.channel[0] = static_cast<unsigned char*>(rgbi);
    out.pitch[0] = size_t(w) * 3;
    row(name, w, h, data.size(), "nvjpegDecode RGBI (nvJPEG alone)", time_it(n, 5, [&] {
          if (nvjpegDecode(nvj, nvj_state, data.data(), data.size(), NVJPEG_OUTPUT_RGBI, &out, stream) != NVJPEG_STATUS_SUCCESS)
            return false;
          return cudaStreamSynchronize(stream) == cudaSuccess;
        }));
    // The same end as the texture rows' GL fence: GL's first work after CUDA work waits for a
    // hand-over (0.31 ms on the H200), which nvJPEG's own output pays too before GL can show it.
    row(name, w, h, data.size(), "nvjpegDecode RGBI + GL fence wait (nvJPEG alone, GL end)", time_it(n, 5, [&] {
          if (nvjpegDecode(nvj, nvj_state, data.data(), data.size(), NVJPEG_OUTPUT_RGBI, &out, stream) != NVJPEG_STATUS_SUCCESS)
            return false;
          return cudaStreamSynchronize(stream) == cudaSuccess && testing::HeadlessGl::fence_wait();
        }));
    cudaFree(rgbi);

    auto device_route = [&](GpuBackend b) {
      GpuDecodeParams p;
      p.backend = b;
      return time_it(n, 5, [&] {
        auto pic = dec.decode_to_device(data, p);
        if (!pic.ok()) {
          std::fprintf(stderr, "%s\n", pic.error().message().c_str());
          return false;
        }
        return pic->plane(0).storage->wait_ready().ok();
      });
    };
    row(name, w, h, data.size(), "pixpath decode_to_device RGBA (auto)", device_route(GpuBackend::Auto));
    row(name, w, h, data.size(), "pixpath decode_to_device, HARDWARE", device_route(GpuBackend::Hardware));
    row(name, w, h, data.size(), "pixpath decode_to_device, HYBRID", device_route(GpuBackend::Hybrid));
    row(name, w, h, data.size(), "pixpath decode_to_device, GPU_HYBRID", device_route(GpuBackend::GpuHybrid));

    GLuint tex = testing::HeadlessGl::make_texture(w, h);
    row(name, w, h, data.size(), "pixpath decode_to_texture + its fence", time_it(n, 5, [&] {
          auto r = dec.decode_to_texture(data, {}, {tex, w, h, 0, 0});
          if (!r.ok()) {
            std::fprintf(stderr, "%s\n", r.error().message().c_str());
            return false;
          }
          return (*r)->wait().ok();
        }), "CUDA event after the unmap");
    row(name, w, h, data.size(), "pixpath decode_to_texture + GL fence wait", time_it(n, 5, [&] {
          auto r = dec.decode_to_texture(data, {}, {tex, w, h, 0, 0});
          if (!r.ok()) {
            std::fprintf(stderr, "%s\n", r.error().message().c_str());
            return false;
          }
          return testing::HeadlessGl::fence_wait();
        }));
    row(name, w, h, data.size(), "pixpath decode_to_texture, host call only", time_it(n, 5, [&] {
          return dec.decode_to_texture(data, {}, {tex, w, h, 0, 0}).ok();
        }), "returns before the GPU is done");
    dec.forget_texture(tex);
    glDeleteTextures(1, &tex);

    // 8 windows updating at once.
    std::vector<GLuint> texs;
    std::vector<GpuTextureJob> jobs;
    for (int i = 0; i < 8; ++i) texs.push_back(testing::HeadlessGl::make_texture(w, h));
    for (int i = 0; i < 8; ++i) jobs.push_back({data, {}, {texs[size_t(i)], w, h, 0, 0}});
    auto batch = [&] {
      for (auto& r : dec.decode_batch_to_textures(jobs))
        if (!r.ok()) {
          std::fprintf(stderr, "%s\n", r.error().message().c_str());
          return false;
        }
      return true;
    };
    row(name, w, h, data.size(), "batch of 8 windows (hardware) + GL fence, per batch",
        time_it(batch_iters, 3, [&] { return batch() && testing::HeadlessGl::fence_wait(); }));
    row(name, w, h, data.size(), "batch of 8 windows, host call only", time_it(batch_iters, 3, batch),
        "returns before the GPU is done");
    testing::HeadlessGl::fence_wait();
    {
      const auto t0 = Clock::now();
      bool ok = true;
      for (int i = 0; i < batch_iters && ok; ++i) ok = batch();
      ok = ok && testing::HeadlessGl::fence_wait();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("| %s | %dx%d | %zu | batch of 8, back to back | aggregate %.0f frames/s | | | %d batches in %.3f s |\n",
                  name.c_str(), w, h, data.size(), ok ? 8.0 * batch_iters / s : 0.0, batch_iters, s);
    }
    {
      const auto t0 = Clock::now();
      bool ok = true;
      for (int i = 0; i < batch_iters && ok; ++i)
        for (auto& j : jobs) ok = ok && dec.decode_to_texture(j.data, {}, j.target).ok();
      ok = ok && testing::HeadlessGl::fence_wait();
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("| %s | %dx%d | %zu | 8 windows one by one (decode_to_texture each), back to back | aggregate %.0f frames/s | | | %d rounds in %.3f s |\n",
                  name.c_str(), w, h, data.size(), ok ? 8.0 * batch_iters / s : 0.0, batch_iters, s);
    }
    {
      std::vector<GpuDecodeJob> djobs(8, GpuDecodeJob{data, {}});
      // As the paint engine's GPU thread: the next batch is asked for before the previous one's
      // pictures are waited on (their events), so batches overlap as they do there.
      const auto t0 = Clock::now();
      bool ok = true;
      std::vector<Result<Picture>> previous;
      auto wait_all = [&](std::vector<Result<Picture>>& v) {
        for (auto& r : v) ok = ok && r.ok() && r->plane(0).storage->wait_ready().ok();
        v.clear();
      };
      for (int i = 0; i < batch_iters && ok; ++i) {
        auto current = dec.decode_batch_to_device(djobs);
        wait_all(previous);
        previous = std::move(current);
      }
      wait_all(previous);
      const double s = std::chrono::duration<double>(Clock::now() - t0).count();
      std::printf("| %s | %dx%d | %zu | decode_batch_to_device of 8, back to back | aggregate %.0f frames/s | | | %d batches in %.3f s |\n",
                  name.c_str(), w, h, data.size(), ok ? 8.0 * batch_iters / s : 0.0, batch_iters, s);
    }
    for (auto t : texs) {
      dec.forget_texture(t);
      glDeleteTextures(1, &t);
    }
    std::fflush(stdout);
  }
  std::printf("\ndecoder after: %s\n", dec.info_json().c_str());
  tjDestroy(tj);
  nvjpegJpegStateDestroy(nvj_state);
  nvjpegDestroy(nvj);
  return 0;
}
