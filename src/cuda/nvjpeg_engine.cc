// libpixpath_cuda.so: the nvJPEG engine behind pixpath::cuda::GpuJpegDecoder.
//
// Per device, made once and shared by every engine (window) on it: DeviceState holds the
// primary CUDA context, a stream-ordered memory pool (kept reserved: device memory stays flat),
// the nvJPEG handle with stream-ordered allocators and two decoders (HYBRID: Huffman on the CPU;
// GPU_HYBRID: Huffman on the GPU), a handle for the HARDWARE engines (batched API) where the
// GPU has them, the GL texture registrations, a pool of CUDA events, and a pool of decode
// slots. A slot is what one decoding thread needs: a stream, a JPEG state per decoder, two
// pinned buffers and JPEG streams used in turn (the host phase of picture N+1 may run while the
// transfer of picture N is still queued), device buffers and grow-only plane buffers.
//
// One picture: nvjpegJpegStreamParse -> nvjpegDecodeJpegHost -> ...TransferToDevice ->
// ...DecodeJpegDevice into planar YCbCr at the JPEG's own chroma resolution, then one kernel
// (ycc_to_rgba.cu) upsamples, converts, merges the jpega alpha and writes RGBA into pool
// memory, a scratch buffer for host readback, or a GL texture through a surface object.
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <functional>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "cuda/module_abi.h"
#include "selftest_jpeg.h"
#include "ycc_to_rgba.h"

// CUDA-GL interop without GL headers (GLuint and GLenum are unsigned int): the module never
// links GL; the GL context is the caller's, current on the calling thread.
extern "C" cudaError_t CUDARTAPI cudaGraphicsGLRegisterImage(cudaGraphicsResource** resource,
                                                             unsigned int image,
                                                             unsigned int target,
                                                             unsigned int flags);

namespace pixpath::cuda {
namespace {

constexpr unsigned int kGlTexture2D = 0x0DE1;
constexpr int kBackendAuto = 0, kBackendHybrid = 1, kBackendGpuHybrid = 2, kBackendHardware = 3;

// Backend routing for one picture, from the H200 measurements in docs/performance.md ("GPU
// decode", 2026-11-30, nvJPEG 13.0.1, driver 580.159.04, p50 of 100 decodes of screen content
// q50 4:2:0):
// - Baseline colour pictures go to the HARDWARE engines (batched API, batch of 1) where the GPU
//   has them: nvjpegDecode alone took 0.22 / 1.25 / 4.66 ms at 512x512 / 1080p / 4K, while the
//   decoupled API's host phase alone took 0.9-1.1 / 1.8-3.0 / 3.2-4.4 ms (HYBRID /
//   GPU_HYBRID, probe in gpu_jpeg_benchmark.cc --probe).
// - Otherwise (progressive, gray, no engines) the decoupled API: HYBRID (Huffman on the CPU)
//   below this many pixels, GPU_HYBRID above. Measured HYBRID / GPU_HYBRID decode_to_device:
//   256x256 0.23 / 1.38 ms, 512x512 0.84 / 1.58, 1024x768 1.37 / 1.83, 1280x1024 1.85 / 1.99,
//   1600x1200 2.26 / 2.15, 1920x1080 3.3-4.0 / 2.6-2.8, 3840x2160 9.3-10.6 / 5.2-6.3: the
//   crossover lies between 1.3 and 1.9 Mpixel.
// Several pictures in flight go to the HARDWARE engines as one batch (decode_batch_to_textures).
constexpr int64_t kHybridBelowPixels = 1'500'000;

// ---------------------------------------------------------------------------------------------
// Errors

Error gpu_error(ErrorCode code, std::string stage, std::string reason) {
  return Error(code, "jpeg", std::move(stage), std::move(reason));
}

const char* nvjpeg_status_name(nvjpegStatus_t s) {
  switch (s) {
    case NVJPEG_STATUS_SUCCESS: return "NVJPEG_STATUS_SUCCESS";
    case NVJPEG_STATUS_NOT_INITIALIZED: return "NVJPEG_STATUS_NOT_INITIALIZED";
    case NVJPEG_STATUS_INVALID_PARAMETER: return "NVJPEG_STATUS_INVALID_PARAMETER";
    case NVJPEG_STATUS_BAD_JPEG: return "NVJPEG_STATUS_BAD_JPEG";
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED: return "NVJPEG_STATUS_JPEG_NOT_SUPPORTED";
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: return "NVJPEG_STATUS_ALLOCATOR_FAILURE";
    case NVJPEG_STATUS_EXECUTION_FAILED: return "NVJPEG_STATUS_EXECUTION_FAILED";
    case NVJPEG_STATUS_ARCH_MISMATCH: return "NVJPEG_STATUS_ARCH_MISMATCH";
    case NVJPEG_STATUS_INTERNAL_ERROR: return "NVJPEG_STATUS_INTERNAL_ERROR";
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED: return "NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED";
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: return "NVJPEG_STATUS_INCOMPLETE_BITSTREAM";
  }
  return "NVJPEG_STATUS_?";
}

Error nvjpeg_error(const std::string& stage, const char* call, nvjpegStatus_t s) {
  ErrorCode code = ErrorCode::Internal;
  switch (s) {
    case NVJPEG_STATUS_BAD_JPEG: code = ErrorCode::CorruptData; break;
    case NVJPEG_STATUS_INCOMPLETE_BITSTREAM: code = ErrorCode::Truncated; break;
    case NVJPEG_STATUS_JPEG_NOT_SUPPORTED:
    case NVJPEG_STATUS_IMPLEMENTATION_NOT_SUPPORTED:
    case NVJPEG_STATUS_ARCH_MISMATCH: code = ErrorCode::Unsupported; break;
    case NVJPEG_STATUS_ALLOCATOR_FAILURE: code = ErrorCode::OutOfMemory; break;
    default: break;
  }
  std::string reason = std::string(call) + " failed: " + nvjpeg_status_name(s);
  if (s == NVJPEG_STATUS_BAD_JPEG) reason += " (corrupt or not a JPEG)";
  if (s == NVJPEG_STATUS_INCOMPLETE_BITSTREAM) reason += " (data ends early)";
  return gpu_error(code, stage, reason);
}

Error cuda_error(const std::string& stage, const char* call, cudaError_t e) {
  const ErrorCode code = e == cudaErrorMemoryAllocation ? ErrorCode::OutOfMemory
                         : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
                             ? ErrorCode::Unavailable
                             : ErrorCode::Internal;
  return gpu_error(code, stage,
                   std::string(call) + " failed: " + cudaGetErrorName(e) + " (" +
                       cudaGetErrorString(e) + ")");
}

#define NVJ_TRY(stage, expr)                                           \
  do {                                                                 \
    const nvjpegStatus_t pp_s_ = (expr);                               \
    if (pp_s_ != NVJPEG_STATUS_SUCCESS) return nvjpeg_error(stage, #expr, pp_s_); \
  } while (0)
#define CUDA_TRY(stage, expr)                                          \
  do {                                                                 \
    const cudaError_t pp_e_ = (expr);                                  \
    if (pp_e_ != cudaSuccess) return cuda_error(stage, #expr, pp_e_);  \
  } while (0)

// A test hook: PIXPATH_CUDA_INJECT_FAILURE=<stage> makes that stage fail ("decode", "convert",
// "texture"), to exercise the caller's CPU fallback.
bool inject_failure(const char* stage) {
  const char* v = std::getenv("PIXPATH_CUDA_INJECT_FAILURE");
  return v && std::strcmp(v, stage) == 0;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    o += c;
  }
  return o;
}

size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// ---------------------------------------------------------------------------------------------
// Driver facts

struct DriverFacts {
  std::string nvidia_version;  // "580.159.03", "" when unknown
  int nvidia_major = -1;
  int cuda_driver_version = 0;  // e.g. 13000
  int nvjpeg_major = 0, nvjpeg_minor = 0, nvjpeg_patch = 0;
  // The nvjpegDecode leak tied to the CUDA context (gpu-path.md): fixed in the Linux 525
  // series (522.6 on Windows). "known_bad" forces a longer self-test; "unknown" forces one.
  std::string leak_status;
};

DriverFacts read_driver_facts() {
  DriverFacts f;
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (in && std::getline(in, line)) {
    const auto pos = line.find("Kernel Module");
    if (pos != std::string::npos) {
      // "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build ..."
      std::istringstream ss(line.substr(pos + 13));
      std::string tok;
      while (ss >> tok)
        if (std::isdigit(static_cast<unsigned char>(tok[0])) && tok.find('.') != std::string::npos) {
          f.nvidia_version = tok;
          f.nvidia_major = std::atoi(tok.c_str());
          break;
        }
    }
  }
  (void)cudaDriverGetVersion(&f.cuda_driver_version);
  (void)nvjpegGetProperty(MAJOR_VERSION, &f.nvjpeg_major);
  (void)nvjpegGetProperty(MINOR_VERSION, &f.nvjpeg_minor);
  (void)nvjpegGetProperty(PATCH_LEVEL, &f.nvjpeg_patch);
  if (f.nvidia_major <= 0)
    f.leak_status = "unknown driver version: self-test decides";
  else if (f.nvidia_major < 525)
    f.leak_status = "driver before 525: nvjpegDecode leak known; extended self-test";
  else
    f.leak_status = "driver 525 or newer: nvjpegDecode leak fixed";
  return f;
}

// ---------------------------------------------------------------------------------------------
// Stream-ordered allocators for nvJPEG (nvjpegCreateExV2): device memory from the device's
// pool, pinned memory from cudaHostAlloc (kept by nvJPEG, padded to avoid reallocation).

int pool_malloc(void* ctx, void** ptr, size_t size, cudaStream_t stream) {
  return cudaMallocFromPoolAsync(ptr, size, static_cast<cudaMemPool_t>(ctx), stream) == cudaSuccess ? 0 : 1;
}
int pool_free(void*, void* ptr, size_t, cudaStream_t stream) {
  return cudaFreeAsync(ptr, stream) == cudaSuccess ? 0 : 1;
}
int pinned_malloc(void*, void** ptr, size_t size, cudaStream_t) {
  return cudaHostAlloc(ptr, size, cudaHostAllocDefault) == cudaSuccess ? 0 : 1;
}
int pinned_free(void*, void* ptr, size_t, cudaStream_t) {
  return cudaFreeHost(ptr) == cudaSuccess ? 0 : 1;
}

// A grow-only device buffer in the pool, stream-ordered on its owner's stream.
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t size = 0;
  Result<void> reserve(size_t bytes, cudaMemPool_t pool, cudaStream_t stream) {
    if (bytes <= size) return ok();
    if (ptr) (void)cudaFreeAsync(ptr, stream);
    ptr = nullptr;
    size = 0;
    const size_t want = align_up(bytes + bytes / 4, size_t{1} << 20);
    CUDA_TRY("gpu memory", cudaMallocFromPoolAsync(&ptr, want, pool, stream));
    size = want;
    return ok();
  }
  void release(cudaStream_t stream) {
    if (ptr) (void)cudaFreeAsync(ptr, stream);
    ptr = nullptr;
    size = 0;
  }
};

// Planar YCbCr (or Y) as nvJPEG writes it, at the JPEG's own chroma resolution.
struct PlaneSet {
  DeviceBuffer buffer;
  nvjpegImage_t image{};
  PlaneIn planes[3];
  int components = 0;
  ChromaLayout layout = ChromaLayout::k444;
  int width = 0, height = 0;

  // Lays out planes of the given sizes in the buffer.
  Result<void> prepare(int comps, const unsigned (&w)[3], const unsigned (&h)[3],
                       cudaMemPool_t pool, cudaStream_t stream) {
    size_t offsets[3] = {}, total = 0;
    size_t pitches[3] = {};
    for (int c = 0; c < comps; ++c) {
      pitches[c] = align_up(std::max(1u, w[c]), 64);
      offsets[c] = total;
      total += pitches[c] * std::max(1u, h[c]);
    }
    PIXPATH_CHECK(buffer.reserve(total, pool, stream));
    image = nvjpegImage_t{};
    for (int c = 0; c < comps; ++c) {
      auto* p = static_cast<unsigned char*>(buffer.ptr) + offsets[c];
      image.channel[c] = p;
      image.pitch[c] = pitches[c];
      planes[c] = PlaneIn{p, static_cast<int>(pitches[c]), static_cast<int>(w[c]), static_cast<int>(h[c])};
    }
    components = comps;
    return ok();
  }
};

ChromaLayout layout_for(nvjpegChromaSubsampling_t css, int components) {
  if (components == 1) return ChromaLayout::kGray;
  switch (css) {
    case NVJPEG_CSS_444: return ChromaLayout::k444;
    case NVJPEG_CSS_422: return ChromaLayout::k422;
    case NVJPEG_CSS_420: return ChromaLayout::k420;
    case NVJPEG_CSS_440: return ChromaLayout::k440;
    case NVJPEG_CSS_GRAY: return ChromaLayout::kGray;
    default: return ChromaLayout::kNearest;
  }
}

const char* css_name(nvjpegChromaSubsampling_t css) {
  switch (css) {
    case NVJPEG_CSS_444: return "4:4:4";
    case NVJPEG_CSS_422: return "4:2:2";
    case NVJPEG_CSS_420: return "4:2:0";
    case NVJPEG_CSS_440: return "4:4:0";
    case NVJPEG_CSS_411: return "4:1:1";
    case NVJPEG_CSS_410: return "4:1:0";
    case NVJPEG_CSS_410V: return "4:1:0V";
    case NVJPEG_CSS_GRAY: return "gray";
    default: return "unknown";
  }
}

const char* encoding_name(nvjpegJpegEncoding_t e) {
  switch (e) {
    case NVJPEG_ENCODING_BASELINE_DCT: return "baseline";
    case NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN: return "extended";
    case NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN: return "progressive";
    case NVJPEG_ENCODING_LOSSLESS_HUFFMAN: return "lossless";
    default: return "unknown";
  }
}

// ---------------------------------------------------------------------------------------------
// Per device state

struct BackendState {
  nvjpegJpegState_t state = nullptr;
  nvjpegBufferDevice_t device_buffer = nullptr;
  nvjpegBufferPinned_t pinned[2] = {};
};

struct Slot {
  cudaStream_t stream = nullptr;
  BackendState hybrid, gpu;
  nvjpegJpegStream_t jpeg_stream[2] = {};
  cudaEvent_t turn_done[2] = {};  // recorded after the transfer that used turn k's pinned buffer
  int turn = 0;
  nvjpegDecodeParams_t params = nullptr;
  PlaneSet color, alpha;
  DeviceBuffer scratch_rgba;  // host readback
  // One picture on the hardware engines: a batched-API state initialised for batch size 1.
  nvjpegJpegState_t hw_state = nullptr;
  nvjpegJpegStream_t hw_stream = nullptr;
  // decode_to_texture: `decoded` on `stream` after the planes are written (the texture stream
  // waits for it); `converted` on the texture stream after the conversion read them (`stream`
  // waits for it before the next picture overwrites them).
  cudaEvent_t decoded = nullptr, converted = nullptr;
};

struct TextureRegistration {
  cudaGraphicsResource_t resource = nullptr;
  cudaArray_t array = nullptr;
  cudaSurfaceObject_t surface = 0;
  unsigned map_flags = cudaGraphicsMapFlagsNone;
};

// A picture covering the whole texture is mapped write-discard (CUDA neither reads nor keeps the
// old contents), which saves part of the map's synchronisation; a region update keeps them.
// PIXPATH_CUDA_NO_WRITE_DISCARD=1 turns this off (benchmark A/B).
Result<void> set_map_flags(TextureRegistration& reg, bool whole_texture) {
  static const bool disabled = std::getenv("PIXPATH_CUDA_NO_WRITE_DISCARD") != nullptr;
  const unsigned want = whole_texture && !disabled ? cudaGraphicsMapFlagsWriteDiscard : cudaGraphicsMapFlagsNone;
  if (want == reg.map_flags) return ok();
  CUDA_TRY("gpu texture", cudaGraphicsResourceSetMapFlags(reg.resource, want));
  reg.map_flags = want;
  return ok();
}

// How many hardware batches may be in flight (batch states used in turn). Measured on the H200
// (docs/performance.md, 8 windows back to back): 3 in flight gave 918 / 916 frames/s of 4K q50
// against 892 with 2, but 3472 / 3451 frames/s of 512x512 against 11,839-11,858 with 2 (and
// 3213 vs 3270 at 1080p). So: 3 when the batch's pictures average 4 Mpixel or more, else 2.
// PIXPATH_CUDA_BATCH_DEPTH=1..4 fixes it (measurements).
constexpr int64_t kDeepBatchPixels = 4'000'000;
int batch_depth(int64_t mean_pixels) {
  static const int forced = [] {
    const char* v = std::getenv("PIXPATH_CUDA_BATCH_DEPTH");
    const int d = v ? std::atoi(v) : 0;
    return d < 0 ? 0 : (d > 4 ? 4 : d);
  }();
  if (forced) return forced;
  return mean_pixels >= kDeepBatchPixels ? 3 : 2;
}

struct BatchState {
  cudaStream_t stream = nullptr;
  cudaEvent_t decoded = nullptr, converted = nullptr;  // as in Slot (decode_batch_to_textures)
  nvjpegJpegState_t state = nullptr;
  int initialized_size = 0;
  std::vector<nvjpegJpegStream_t> streams;
  std::vector<PlaneSet> planes;
};

struct SelfTest {
  bool ran = false, passed = false;
  int decodes = 0;
  int64_t free_before = 0, free_after = 0;
  double mean_rgb[3] = {};
  std::string detail;
};

class DeviceState {
 public:
  int device = 0;
  CUcontext context = nullptr;
  cudaDeviceProp props{};
  std::string pci_bus_id;
  DriverFacts driver;
  cudaMemPool_t pool = nullptr;
  nvjpegHandle_t handle = nullptr;
  nvjpegJpegDecoder_t decoder_hybrid = nullptr, decoder_gpu = nullptr;
  nvjpegHandle_t hw_handle = nullptr;
  unsigned hw_engines = 0, hw_cores = 0;
  std::string hw_status;
  // A hardware batch fails as a whole (nvjpegDecodeBatched reports no per-picture status): its
  // pictures are then decoded one by one. After kBatchFailuresToDisable failures in a row (not
  // one corrupt picture: a broken path) batches are disabled; hw_batch_error says why.
  static constexpr int kBatchFailuresToDisable = 3;
  int hw_batch_failures_in_row = 0;
  int64_t hw_batch_failures = 0, hw_batches = 0;
  std::string hw_batch_error, hw_batch_last_failure;
  // Records a batch's outcome (batch_mu held).
  void batch_outcome(const Result<void>& r) {
    ++hw_batches;
    if (r) {
      hw_batch_failures_in_row = 0;
      return;
    }
    ++hw_batch_failures;
    hw_batch_last_failure = r.error().stage() + ": " + r.error().reason();
    if (++hw_batch_failures_in_row >= kBatchFailuresToDisable) {
      hw_batch_error = hw_batch_last_failure;
      std::fprintf(stderr, "pixpath cuda: hardware batches disabled after %d failures in a row: %s\n",
                   hw_batch_failures_in_row, hw_batch_error.c_str());
    }
  }
  // Host time per phase of decode_planes (ns, summed) and the count: wait for the turn's
  // buffers, parse, nvjpegDecodeJpegHost, TransferToDevice (enqueue), DecodeJpegDevice (enqueue).
  std::atomic<int64_t> phase_ns[5] = {};
  std::atomic<int64_t> phase_count{0};
  std::atomic<int64_t> hw_single_ns{0}, hw_single_count{0};  // hardware route, host time
  cudaStream_t release_stream = nullptr;
  SelfTest self_test;

  std::mutex slots_mu;
  std::vector<std::unique_ptr<Slot>> free_slots;
  int slots_created = 0;

  std::mutex events_mu;
  std::vector<cudaEvent_t> free_events;

  std::mutex textures_mu;
  std::map<uint32_t, TextureRegistration> textures;

  mutable std::mutex batch_mu;
  // Two batch states used in turn: the host part of batch N+1 (parse, submit) overlaps the
  // hardware decode of batch N; a state's stream is synchronised before it is reused.
  BatchState batch[4];
  int batch_turn = 0;
  int64_t last_batch_mean_pixels = 0;

  ~DeviceState() {
    (void)cudaSetDevice(device);
    (void)cudaDeviceSynchronize();
    {
      std::lock_guard lock(textures_mu);
      for (auto& [name, reg] : textures) {
        if (reg.surface) (void)cudaDestroySurfaceObject(reg.surface);
        // Unregistering needs the GL context current; at teardown it may be gone. Leave it.
      }
    }
    for (auto& s : free_slots) destroy_slot(*s);
    for (auto e : free_events) (void)cudaEventDestroy(e);
    for (auto& bs : batch) {
      if (bs.state) {
        for (auto js : bs.streams) nvjpegJpegStreamDestroy(js);
        for (auto& p : bs.planes) p.buffer.release(bs.stream);
        nvjpegJpegStateDestroy(bs.state);
      }
      if (bs.stream) (void)cudaStreamDestroy(bs.stream);
      for (auto e : {bs.decoded, bs.converted})
        if (e) (void)cudaEventDestroy(e);
    }
    if (decoder_hybrid) nvjpegDecoderDestroy(decoder_hybrid);
    if (decoder_gpu) nvjpegDecoderDestroy(decoder_gpu);
    if (hw_handle) nvjpegDestroy(hw_handle);
    if (handle) nvjpegDestroy(handle);
    if (release_stream) (void)cudaStreamSynchronize(release_stream), (void)cudaStreamDestroy(release_stream);
    if (pool) (void)cudaMemPoolDestroy(pool);
  }

  static void destroy_backend(BackendState& b) {
    if (b.state) nvjpegJpegStateDestroy(b.state);
    if (b.device_buffer) nvjpegBufferDeviceDestroy(b.device_buffer);
    for (auto p : b.pinned)
      if (p) nvjpegBufferPinnedDestroy(p);
  }
  void destroy_slot(Slot& s) {
    if (s.stream) (void)cudaStreamSynchronize(s.stream);
    if (s.hw_stream) nvjpegJpegStreamDestroy(s.hw_stream);
    if (s.hw_state) nvjpegJpegStateDestroy(s.hw_state);
    destroy_backend(s.hybrid);
    destroy_backend(s.gpu);
    for (auto js : s.jpeg_stream)
      if (js) nvjpegJpegStreamDestroy(js);
    for (auto e : {s.turn_done[0], s.turn_done[1], s.decoded, s.converted})
      if (e) (void)cudaEventDestroy(e);
    if (s.params) nvjpegDecodeParamsDestroy(s.params);
    s.color.buffer.release(s.stream);
    s.alpha.buffer.release(s.stream);
    s.scratch_rgba.release(s.stream);
    if (s.stream) (void)cudaStreamSynchronize(s.stream), (void)cudaStreamDestroy(s.stream);
  }

  Result<void> make_backend(BackendState& b, nvjpegJpegDecoder_t decoder) {
    NVJ_TRY("gpu init", nvjpegDecoderStateCreate(handle, decoder, &b.state));
    nvjpegDevAllocatorV2_t dev{pool_malloc, pool_free, pool};
    nvjpegPinnedAllocatorV2_t pin{pinned_malloc, pinned_free, nullptr};
    NVJ_TRY("gpu init", nvjpegBufferDeviceCreateV2(handle, &dev, &b.device_buffer));
    for (auto& p : b.pinned) NVJ_TRY("gpu init", nvjpegBufferPinnedCreateV2(handle, &pin, &p));
    NVJ_TRY("gpu init", nvjpegStateAttachDeviceBuffer(b.state, b.device_buffer));
    return ok();
  }

  Result<std::unique_ptr<Slot>> make_slot() {
    auto s = std::make_unique<Slot>();
    auto fail = [&](Error e) -> Result<std::unique_ptr<Slot>> {
      destroy_slot(*s);
      return e;
    };
    if (auto e = cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking); e != cudaSuccess)
      return fail(cuda_error("gpu init", "cudaStreamCreateWithFlags", e));
    if (auto r = make_backend(s->hybrid, decoder_hybrid); !r) return fail(r.error());
    if (auto r = make_backend(s->gpu, decoder_gpu); !r) return fail(r.error());
    for (int k = 0; k < 2; ++k) {
      if (auto st = nvjpegJpegStreamCreate(handle, &s->jpeg_stream[k]); st != NVJPEG_STATUS_SUCCESS)
        return fail(nvjpeg_error("gpu init", "nvjpegJpegStreamCreate", st));
      if (auto e = cudaEventCreateWithFlags(&s->turn_done[k], cudaEventDisableTiming); e != cudaSuccess)
        return fail(cuda_error("gpu init", "cudaEventCreateWithFlags", e));
    }
    for (auto* e : {&s->decoded, &s->converted})
      if (auto err = cudaEventCreateWithFlags(e, cudaEventDisableTiming); err != cudaSuccess)
        return fail(cuda_error("gpu init", "cudaEventCreateWithFlags", err));
    if (auto st = nvjpegDecodeParamsCreate(handle, &s->params); st != NVJPEG_STATUS_SUCCESS)
      return fail(nvjpeg_error("gpu init", "nvjpegDecodeParamsCreate", st));
    return s;
  }

  // A decode slot for the calling thread's call; back into the pool when the guard goes.
  class SlotGuard {
   public:
    SlotGuard(DeviceState* d, std::unique_ptr<Slot> s) : d_(d), s_(std::move(s)) {}
    SlotGuard(SlotGuard&&) = default;
    ~SlotGuard() {
      if (s_) {
        std::lock_guard lock(d_->slots_mu);
        d_->free_slots.push_back(std::move(s_));
      }
    }
    Slot& operator*() const { return *s_; }
    Slot* operator->() const { return s_.get(); }

   private:
    DeviceState* d_;
    std::unique_ptr<Slot> s_;
  };

  Result<SlotGuard> acquire_slot() {
    {
      std::lock_guard lock(slots_mu);
      if (!free_slots.empty()) {
        auto s = std::move(free_slots.back());
        free_slots.pop_back();
        return SlotGuard(this, std::move(s));
      }
    }
    PIXPATH_TRY(auto s, make_slot());
    {
      std::lock_guard lock(slots_mu);
      ++slots_created;
    }
    return SlotGuard(this, std::move(s));
  }

  Result<cudaEvent_t> acquire_event() {
    {
      std::lock_guard lock(events_mu);
      if (!free_events.empty()) {
        auto e = free_events.back();
        free_events.pop_back();
        return e;
      }
    }
    cudaEvent_t e = nullptr;
    CUDA_TRY("gpu init", cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    return e;
  }
  void recycle_event(cudaEvent_t e) {
    std::lock_guard lock(events_mu);
    free_events.push_back(e);
  }

  Result<void> init(int dev) {
    device = dev;
    CUDA_TRY("gpu device", cudaSetDevice(dev));
    CUDA_TRY("gpu device", cudaFree(nullptr));  // creates/binds the primary context
    if (cuCtxGetCurrent(&context) != CUDA_SUCCESS || !context)
      return gpu_error(ErrorCode::Unavailable, "gpu device", "no current CUDA context after cudaSetDevice");
    CUDA_TRY("gpu device", cudaGetDeviceProperties(&props, dev));
    char bus[32] = {};
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) pci_bus_id = bus;
    driver = read_driver_facts();

    cudaMemPoolProps pp{};
    pp.allocType = cudaMemAllocationTypePinned;
    pp.handleTypes = cudaMemHandleTypeNone;
    pp.location.type = cudaMemLocationTypeDevice;
    pp.location.id = dev;
    CUDA_TRY("gpu init", cudaMemPoolCreate(&pool, &pp));
    uint64_t keep = UINT64_MAX;  // never give reserved memory back: flat device memory
    CUDA_TRY("gpu init", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep));
    CUDA_TRY("gpu init", cudaStreamCreateWithFlags(&release_stream, cudaStreamNonBlocking));

    nvjpegDevAllocatorV2_t dev_alloc{pool_malloc, pool_free, pool};
    nvjpegPinnedAllocatorV2_t pin_alloc{pinned_malloc, pinned_free, nullptr};
    NVJ_TRY("gpu init", nvjpegCreateExV2(NVJPEG_BACKEND_DEFAULT, &dev_alloc, &pin_alloc,
                                         NVJPEG_FLAGS_DEFAULT, &handle));
    NVJ_TRY("gpu init", nvjpegSetDeviceMemoryPadding(size_t{4} << 20, handle));
    NVJ_TRY("gpu init", nvjpegSetPinnedMemoryPadding(size_t{1} << 20, handle));
    NVJ_TRY("gpu init", nvjpegDecoderCreate(handle, NVJPEG_BACKEND_HYBRID, &decoder_hybrid));
    NVJ_TRY("gpu init", nvjpegDecoderCreate(handle, NVJPEG_BACKEND_GPU_HYBRID, &decoder_gpu));

    // The hardware JPEG engines (A100/A30/H100/H200...): batched API only.
    const nvjpegStatus_t hs = nvjpegCreateExV2(NVJPEG_BACKEND_HARDWARE, &dev_alloc, &pin_alloc,
                                               NVJPEG_FLAGS_DEFAULT, &hw_handle);
    if (hs == NVJPEG_STATUS_SUCCESS) {
      (void)nvjpegGetHardwareDecoderInfo(hw_handle, &hw_engines, &hw_cores);
      (void)nvjpegSetDeviceMemoryPadding(size_t{4} << 20, hw_handle);
      (void)nvjpegSetPinnedMemoryPadding(size_t{1} << 20, hw_handle);
      hw_status = "available";
    } else {
      hw_handle = nullptr;
      hw_status = std::string("not available (") + nvjpeg_status_name(hs) + ")";
    }
    return ok();
  }

  std::string describe() const {
    std::string batch_error, batch_last;
    int64_t batches = 0, batch_failures = 0;
    {
      std::lock_guard lock(batch_mu);
      batch_error = hw_batch_error;
      batch_last = hw_batch_last_failure;
      batches = hw_batches;
      batch_failures = hw_batch_failures;
    }
    std::ostringstream j;
    j << "{\"index\":" << device << ",\"name\":\"" << json_escape(props.name) << "\""
      << ",\"pci_bus_id\":\"" << pci_bus_id << "\""
      << ",\"compute_capability\":\"" << props.major << "." << props.minor << "\""
      << ",\"multiprocessors\":" << props.multiProcessorCount
      << ",\"memory_bytes\":" << props.totalGlobalMem
      << ",\"nvidia_driver\":\"" << driver.nvidia_version << "\""
      << ",\"cuda_driver_api\":" << driver.cuda_driver_version
      << ",\"nvjpeg\":\"" << driver.nvjpeg_major << "." << driver.nvjpeg_minor << "." << driver.nvjpeg_patch << "\""
      << ",\"nvjpeg_leak_check\":\"" << json_escape(driver.leak_status) << "\""
      << ",\"hardware_decoder\":\"" << json_escape(hw_status) << "\""
      << ",\"hardware_batch_error\":\"" << json_escape(batch_error) << "\""
      << ",\"hardware_batches\":" << batches << ",\"hardware_batch_failures\":" << batch_failures
      << ",\"hardware_batch_last_failure\":\"" << json_escape(batch_last) << "\""
      << ",\"hardware_engines\":" << hw_engines << ",\"hardware_cores_per_engine\":" << hw_cores
      << ",\"hybrid_below_pixels\":" << kHybridBelowPixels;
    if (const int64_t n = phase_count.load()) {
      j << ",\"host_us_per_decode\":{";
      const char* names[5] = {"wait_turn", "parse", "decode_host", "transfer_enqueue", "decode_device_enqueue"};
      for (int i = 0; i < 5; ++i)
        j << (i ? "," : "") << "\"" << names[i] << "\":" << double(phase_ns[i].load()) / 1000.0 / double(n);
      j << ",\"decodes\":" << n << "}";
    }
    if (const int64_t n = hw_single_count.load())
      j << ",\"hardware_single\":{\"decodes\":" << n << ",\"host_us_per_decode\":"
        << double(hw_single_ns.load()) / 1000.0 / double(n) << "}";
    if (self_test.ran) {
      j << ",\"self_test\":{\"passed\":" << (self_test.passed ? "true" : "false")
        << ",\"decodes\":" << self_test.decodes << ",\"free_before\":" << self_test.free_before
        << ",\"free_after\":" << self_test.free_after << ",\"mean_rgb\":[" << self_test.mean_rgb[0]
        << "," << self_test.mean_rgb[1] << "," << self_test.mean_rgb[2] << "],\"detail\":\""
        << json_escape(self_test.detail) << "\"}";
    }
    j << "}";
    return j.str();
  }
};

// The per-device cache: one DeviceState per device for the whole process while any engine uses
// it.
std::mutex g_devices_mu;
std::map<int, std::weak_ptr<DeviceState>> g_devices;

Result<int> select_device(std::string spec) {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return gpu_error(ErrorCode::Unavailable, "gpu device",
                     std::string("no usable CUDA driver or device: ") + cudaGetErrorName(e) + " (" +
                         cudaGetErrorString(e) + ")");
  if (count == 0) return gpu_error(ErrorCode::Unavailable, "gpu device", "no CUDA device");
  if (spec.empty())
    if (const char* env = std::getenv("PIXPATH_CUDA_DEVICE")) spec = env;
  if (spec.rfind("cuda:", 0) == 0) spec = spec.substr(5);
  if (spec.empty()) return 0;
  if (std::all_of(spec.begin(), spec.end(), [](unsigned char c) { return std::isdigit(c); })) {
    const int i = std::atoi(spec.c_str());
    if (i >= count)
      return gpu_error(ErrorCode::InvalidArgument, "gpu device",
                       "device " + spec + " asked for, " + std::to_string(count) + " present");
    return i;
  }
  if (spec.find(':') != std::string::npos) {
    int i = -1;
    if (cudaDeviceGetByPCIBusId(&i, spec.c_str()) == cudaSuccess) return i;
    return gpu_error(ErrorCode::InvalidArgument, "gpu device", "no CUDA device at PCI bus id " + spec);
  }
  auto lower = [](std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) == cudaSuccess &&
        lower(p.name).find(lower(spec)) != std::string::npos)
      return i;
  }
  return gpu_error(ErrorCode::InvalidArgument, "gpu device", "no CUDA device named like '" + spec + "'");
}

Result<std::shared_ptr<DeviceState>> device_state(int dev) {
  std::lock_guard lock(g_devices_mu);
  if (auto s = g_devices[dev].lock()) return s;
  auto s = std::make_shared<DeviceState>();
  PIXPATH_CHECK(s->init(dev));
  g_devices[dev] = s;
  return s;
}

// ---------------------------------------------------------------------------------------------
// The engine

struct ParsedImage {
  int width = 0, height = 0, components = 0;
  nvjpegChromaSubsampling_t css = NVJPEG_CSS_UNKNOWN;
  nvjpegJpegEncoding_t encoding = NVJPEG_ENCODING_UNKNOWN;
  unsigned comp_w[3] = {}, comp_h[3] = {};
};

class NvjpegEngine final : public abi::Engine {
 public:
  explicit NvjpegEngine(std::shared_ptr<DeviceState> d) : d_(std::move(d)) {}
  ~NvjpegEngine() override {
    (void)bind();
    if (paint_stream_) (void)cudaStreamSynchronize(paint_stream_), (void)cudaStreamDestroy(paint_stream_);
    for (auto e : free_fences_) (void)cudaEventDestroy(e);
  }

  Result<abi::ImageHeader> inspect(const abi::DecodeRequest& r) override {
    PIXPATH_CHECK(bind());
    PIXPATH_TRY(auto slot, d_->acquire_slot());
    PIXPATH_TRY(auto color, split(r).first);
    slot->turn ^= 1;
    CUDA_TRY("gpu parse", cudaEventSynchronize(slot->turn_done[slot->turn]));
    nvjpegJpegStream_t js = slot->jpeg_stream[slot->turn];
    PIXPATH_TRY(ParsedImage img, parse(d_->handle, js, color.first, color.second, r));
    abi::ImageHeader h;
    h.width = img.width;
    h.height = img.height;
    h.components = img.components;
    h.has_alpha = r.alpha_offset >= 0;
    h.detail = std::string(encoding_name(img.encoding)) + " " + css_name(img.css);
    return h;
  }

  Result<abi::DeviceImage> decode_to_device(const abi::DecodeRequest& r) override {
    PIXPATH_CHECK(bind());
    PIXPATH_TRY(auto slot, d_->acquire_slot());
    PIXPATH_TRY(ParsedImage img, decode_all(*slot, r, nullptr));
    return convert_to_device(convert_job(*slot, img, r), slot->stream);
  }

  Result<void> decode_to_host(const abi::DecodeRequest& r, uint8_t* dst, size_t dst_pitch,
                              int width, int height) override {
    PIXPATH_CHECK(bind());
    PIXPATH_TRY(auto slot, d_->acquire_slot());
    PIXPATH_TRY(ParsedImage img, decode_all(*slot, r, nullptr));
    if (img.width != width || img.height != height)
      return gpu_error(ErrorCode::InvalidArgument, "gpu decode", "destination size does not match the JPEG");
    const size_t pitch = align_up(size_t(width) * 4, 256);
    PIXPATH_CHECK(slot->scratch_rgba.reserve(pitch * size_t(height), d_->pool, slot->stream));
    ConvertJob job = convert_job(*slot, img, r);
    job.out = static_cast<uint8_t*>(slot->scratch_rgba.ptr);
    job.out_pitch = pitch;
    CUDA_TRY("gpu convert", launch_ycc_to_rgba(job, slot->stream));
    CUDA_TRY("gpu readback", cudaMemcpy2DAsync(dst, dst_pitch, slot->scratch_rgba.ptr, pitch,
                                               size_t(width) * 4, height, cudaMemcpyDeviceToHost,
                                               slot->stream));
    CUDA_TRY("gpu readback", cudaStreamSynchronize(slot->stream));
    return ok();
  }

  // Host bytes into a texture region: decode on the slot's stream; on the texture stream, map,
  // wait for the decode on the GPU, convert through a surface object into the mapped array,
  // unmap, fence. The host waits for nothing but nvJPEG's own calls. The map is queued as soon as
  // the picture's size is known, before the decode, so that the texture stream is ready when the
  // planes are. Measured on the H200 (docs/performance.md, "Where the texture path's time goes"):
  // every hand-over of the GPU between the GL and the CUDA context costs 0.2-0.3 ms, even with no
  // interop at all, and the CUDA work running meanwhile waits (the map is done 0.33 ms after the
  // start, but the decode ends 0.2 ms later than alone). Mapping after the decode, and writing
  // with the copy engine instead of the kernel, cost the same; mapping from another thread is
  // refused (the map needs the GL context's thread).
  Result<void*> decode_to_texture(const abi::DecodeRequest& r, const abi::TextureTarget& t) override {
    PIXPATH_CHECK(bind());
    PIXPATH_TRY(TextureRegistration* reg, registration(t));
    PIXPATH_TRY(auto slot, d_->acquire_slot());
    Slot& s = *slot;
    std::unique_lock paint(paint_mu_, std::defer_lock);  // held from the map to the fence
    cudaStream_t ts = nullptr;
    bool mapped = false;
    const bool trace = texture_trace_on();
    cudaEvent_t tev[5] = {};  // start, map done, decoded, converted, unmapped
    if (trace) {
      for (auto& e : tev) (void)cudaEventCreate(&e);
      (void)cudaEventRecord(tev[0], s.stream);
    }
    auto map = [&]() -> Result<void> {
      const auto& pl = s.color;  // sized by the decode before it calls this
      PIXPATH_CHECK(set_map_flags(*reg, t.x == 0 && t.y == 0 && pl.width == t.texture_width &&
                                            pl.height == t.texture_height));
      paint.lock();
      PIXPATH_TRY(ts, texture_stream());
      CUDA_TRY("gpu texture", cudaGraphicsMapResources(1, &reg->resource, ts));
      if (trace) (void)cudaEventRecord(tev[1], ts);
      mapped = true;
      return ok();
    };
    auto result = [&]() -> Result<void> {
      PIXPATH_TRY(ParsedImage img, decode_all(s, r, map));
      if (!mapped) PIXPATH_CHECK(map());
      if (t.x + img.width > t.texture_width || t.y + img.height > t.texture_height)
        return does_not_fit(img.width, img.height, t);
      CUDA_TRY("gpu decode", cudaEventRecord(s.decoded, s.stream));
      if (trace) (void)cudaEventRecord(tev[2], s.stream);
      CUDA_TRY("gpu texture", cudaStreamWaitEvent(ts, s.decoded, 0));
      PIXPATH_CHECK(surface_for(*reg, ts));
      ConvertJob job = convert_job(s, img, r);
      job.surface = reg->surface;
      job.x0 = t.x;
      job.y0 = t.y;
      if (inject_failure("texture"))
        return gpu_error(ErrorCode::Internal, "gpu texture", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)");
      CUDA_TRY("gpu convert", launch_ycc_to_rgba(job, ts));
      if (trace) (void)cudaEventRecord(tev[3], ts);
      // The slot's next picture overwrites the planes: its stream waits for this conversion.
      CUDA_TRY("gpu convert", cudaEventRecord(s.converted, ts));
      CUDA_TRY("gpu convert", cudaStreamWaitEvent(s.stream, s.converted, 0));
      return ok();
    }();
    if (mapped) {
      const cudaError_t e = cudaGraphicsUnmapResources(1, &reg->resource, ts);
      if (result && e != cudaSuccess) return cuda_error("gpu texture", "cudaGraphicsUnmapResources", e);
    }
    if (trace) {
      if (mapped && result) {
        (void)cudaEventRecord(tev[4], ts);
        (void)cudaEventSynchronize(tev[4]);
        float ms[4] = {};
        for (int i = 0; i < 4; ++i) (void)cudaEventElapsedTime(&ms[i], tev[i == 0 ? 0 : (i == 1 ? 0 : i)], tev[i + 1]);
        std::lock_guard lock(trace_.mu);
        trace_.map.push_back(ms[0]);
        trace_.decode.push_back(ms[1]);
        trace_.convert_after_decode.push_back(ms[2]);
        trace_.unmap.push_back(ms[3]);
      }
      (void)cudaStreamSynchronize(ts);
      for (auto e : tev) (void)cudaEventDestroy(e);
    }
    if (!result) return result.error();
    return record_fence();
  }

  // PIXPATH_CUDA_TEXTURE_TRACE=1 (measurements only): decode_to_texture records timed events
  // (start, map done, planes decoded, converted, unmapped) and waits for them, and info_json
  // reports the median GPU time of each step; the path is then synchronous.
  struct TextureTrace {
    std::mutex mu;
    std::vector<float> map, decode, convert_after_decode, unmap;
  };
  static bool texture_trace_on() {
    static const bool on = std::getenv("PIXPATH_CUDA_TEXTURE_TRACE") != nullptr;
    return on;
  }
  std::string texture_trace_json() {
    std::lock_guard lock(trace_.mu);
    auto med = [](std::vector<float> v) {
      if (v.empty()) return -1.0f;
      std::sort(v.begin(), v.end());
      return v[v.size() / 2];
    };
    std::ostringstream j;
    j << ",\"texture_trace_ms\":{\"frames\":" << trace_.map.size() << ",\"start_to_map_done\":" << med(trace_.map)
      << ",\"start_to_decoded\":" << med(trace_.decode)
      << ",\"decoded_to_converted\":" << med(trace_.convert_after_decode)
      << ",\"converted_to_unmapped\":" << med(trace_.unmap) << "}";
    return j.str();
  }

  int hardware_engines() override {
    if (!d_->hw_handle) return 0;
    std::lock_guard lock(d_->batch_mu);
    return d_->hw_batch_error.empty() ? int(d_->hw_engines) : 0;
  }

  std::vector<Result<void>> decode_batch_to_textures(const abi::DecodeRequest* requests,
                                                     const abi::TextureTarget* targets,
                                                     size_t count) override {
    std::vector<Result<void>> results(count, Result<void>());
    if (count == 0) return results;
    if (auto b = bind(); !b) {
      for (auto& r : results) r = b.error();
      return results;
    }
    std::vector<bool> done(count, false);
    if (d_->hw_handle && count >= 2) {
      std::lock_guard lock(d_->batch_mu);
      if (d_->hw_batch_error.empty())  // a failed batch: what is not done goes one by one below
        d_->batch_outcome(batch_hardware(requests, targets, count, results, done));
    }
    for (size_t i = 0; i < count; ++i) {
      if (done[i]) continue;
      auto fence = decode_to_texture(requests[i], targets[i]);
      if (fence) release_fence(*fence);  // the caller waits with GL (the unmap orders it)
      else results[i] = fence.error();
    }
    return results;
  }

  // The paint engine's GPU thread: the pictures of several draws (often several windows) at
  // once. Two or more baseline colour pictures go to the hardware engines as one batch (one
  // picture costs a whole engine pass; a batch spreads over all of them), then one conversion
  // per picture into pool memory on the batch's stream, each with its own event. The rest, and
  // everything when the GPU has no engines, one by one.
  std::vector<Result<abi::DeviceImage>> decode_batch_to_device(const abi::DecodeRequest* requests,
                                                               size_t count) override {
    std::vector<Result<abi::DeviceImage>> results;
    results.reserve(count);
    for (size_t i = 0; i < count; ++i) results.emplace_back(abi::DeviceImage{});
    if (count == 0) return results;
    if (auto b = bind(); !b) {
      for (auto& r : results) r = b.error();
      return results;
    }
    std::vector<bool> done(count, false);
    if (d_->hw_handle && count >= 2) {
      std::lock_guard lock(d_->batch_mu);
      if (d_->hw_batch_error.empty()) {
        auto e = batch_to_device(requests, count, results, done);
        d_->batch_outcome(e);
        if (!e) {  // the batch failed as a whole: every picture again, one by one
          for (size_t i = 0; i < count; ++i)
            if (done[i] && results[i]) release_image(*results[i]);
          std::fill(done.begin(), done.end(), false);
        }
      }
    }
    for (size_t i = 0; i < count; ++i)
      if (!done[i]) results[i] = decode_to_device(requests[i]);
    return results;
  }

  Result<void> prepare_texture(const abi::TextureTarget& target) override {
    PIXPATH_CHECK(bind());
    PIXPATH_TRY(TextureRegistration* reg, registration(target));
    std::lock_guard paint(paint_mu_);
    PIXPATH_TRY(cudaStream_t ts, texture_stream());
    CUDA_TRY("gpu texture", cudaGraphicsMapResources(1, &reg->resource, ts));
    CUDA_TRY("gpu texture", cudaGraphicsUnmapResources(1, &reg->resource, ts));
    return ok();
  }

  void forget_texture(uint32_t texture) override {
    (void)bind();
    std::lock_guard lock(d_->textures_mu);
    auto it = d_->textures.find(texture);
    if (it == d_->textures.end()) return;
    (void)cudaDeviceSynchronize();  // rare: a window's texture re-created or deleted
    if (it->second.surface) (void)cudaDestroySurfaceObject(it->second.surface);
    (void)cudaGraphicsUnregisterResource(it->second.resource);
    d_->textures.erase(it);
  }

  // The paint engine's path: pictures were decoded into CUDA memory on worker threads; here,
  // on the GL thread, they only get copied into the window textures. Nothing waits on the host:
  // the stream waits for each picture's event on the GPU, map/unmap order the copies against
  // GL work issued before and after them, and the returned fence says when they are done.
  Result<void*> copy_to_textures(const abi::DeviceCopy* copies, size_t count) override {
    PIXPATH_CHECK(bind());
    if (count == 0) return gpu_error(ErrorCode::InvalidArgument, "gpu texture", "nothing to copy");
    if (inject_failure("texture"))
      return gpu_error(ErrorCode::Internal, "gpu texture", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)");
    std::lock_guard lock(paint_mu_);
    PIXPATH_CHECK(texture_stream());
    std::vector<TextureWrite> writes;
    writes.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      const auto& c = copies[i];
      const auto& t = c.target;
      if (!c.src || c.width <= 0 || c.height <= 0 || t.x + c.width > t.texture_width ||
          t.y + c.height > t.texture_height)
        return does_not_fit(c.width, c.height, t);
      writes.push_back({t, c.width, c.height});
    }
    PIXPATH_TRY(TextureSet set, texture_set(writes));
    const auto& regs = set.regs;
    auto& resources = set.resources;
    for (size_t i = 0; i < count; ++i)
      if (copies[i].src_event)
        CUDA_TRY("gpu texture", cudaStreamWaitEvent(paint_stream_, static_cast<cudaEvent_t>(copies[i].src_event), 0));
    CUDA_TRY("gpu texture", cudaGraphicsMapResources(int(resources.size()), resources.data(), paint_stream_));
    Result<void> status = ok();
    for (size_t i = 0; i < count && status; ++i) {
      const auto& c = copies[i];
      cudaArray_t array = nullptr;
      if (auto e = cudaGraphicsSubResourceGetMappedArray(&array, regs[i]->resource, 0, 0); e != cudaSuccess) {
        status = cuda_error("gpu texture", "cudaGraphicsSubResourceGetMappedArray", e);
        break;
      }
      if (auto e = cudaMemcpy2DToArrayAsync(array, size_t(c.target.x) * 4, size_t(c.target.y), c.src,
                                            c.src_pitch, size_t(c.width) * 4, size_t(c.height),
                                            cudaMemcpyDeviceToDevice, paint_stream_);
          e != cudaSuccess)
        status = cuda_error("gpu texture", "cudaMemcpy2DToArrayAsync", e);
    }
    const cudaError_t ue = cudaGraphicsUnmapResources(int(resources.size()), resources.data(), paint_stream_);
    if (!status) return status.error();
    if (ue != cudaSuccess) return cuda_error("gpu texture", "cudaGraphicsUnmapResources", ue);
    return record_fence();
  }

  // Every write into a GL texture (decode_to_texture, decode_batch_to_textures, copy_to_textures)
  // is queued on this one stream, in the order the calls were made, so two writes into one
  // texture never race. Callers hold paint_mu_.
  Result<cudaStream_t> texture_stream() {
    if (!paint_stream_) CUDA_TRY("gpu texture", cudaStreamCreateWithFlags(&paint_stream_, cudaStreamNonBlocking));
    return paint_stream_;
  }
  // A fence (blocking-sync event) recorded on the texture stream now. Callers hold paint_mu_.
  Result<void*> record_fence() {
    cudaEvent_t fence = nullptr;
    if (!free_fences_.empty()) {
      fence = free_fences_.back();
      free_fences_.pop_back();
    } else {
      CUDA_TRY("gpu texture", cudaEventCreateWithFlags(&fence, cudaEventBlockingSync | cudaEventDisableTiming));
    }
    if (auto e = cudaEventRecord(fence, paint_stream_); e != cudaSuccess) {
      free_fences_.push_back(fence);
      return cuda_error("gpu texture", "cudaEventRecord", e);
    }
    return static_cast<void*>(fence);
  }
  int query_fence(void* fence) override {
    const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(fence));
    return e == cudaSuccess ? 1 : (e == cudaErrorNotReady ? 0 : -1);
  }
  Result<void> wait_fence(void* fence) override {
    CUDA_TRY("gpu texture", cudaEventSynchronize(static_cast<cudaEvent_t>(fence)));
    return ok();
  }
  void release_fence(void* fence) override {
    std::lock_guard lock(paint_mu_);
    free_fences_.push_back(static_cast<cudaEvent_t>(fence));
  }

  void release_device(void* ptr, void* stream) override {
    (void)cudaSetDevice(d_->device);
    (void)cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream));
  }
  Result<void> wait_event(void* event) override {
    CUDA_TRY("gpu sync", cudaEventSynchronize(static_cast<cudaEvent_t>(event)));
    return ok();
  }
  void recycle_event(void* event) override { d_->recycle_event(static_cast<cudaEvent_t>(event)); }

  Result<void*> allocate_device(size_t bytes) override {
    PIXPATH_CHECK(bind());
    void* p = nullptr;
    CUDA_TRY("gpu memory", cudaMallocFromPoolAsync(&p, bytes, d_->pool, d_->release_stream));
    CUDA_TRY("gpu memory", cudaStreamSynchronize(d_->release_stream));
    return p;
  }
  Result<void> copy_device_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                              size_t row_bytes, int rows) override {
    PIXPATH_CHECK(bind());
    CUDA_TRY("gpu copy", cudaMemcpy2D(dst, dst_pitch, src, src_pitch, row_bytes, rows,
                                      cudaMemcpyDeviceToDevice));
    return ok();
  }

  int device() const override { return d_->device; }
  const void* context() const override { return d_->context; }
  std::string info_json() override {
    std::string s = d_->describe();
    s.pop_back();
    std::lock_guard lock(d_->slots_mu);
    return s + ",\"decode_slots\":" + std::to_string(d_->slots_created) +
           (texture_trace_on() ? texture_trace_json() : std::string()) + "}";
  }

  // The start-up self-test: real pictures, output checked against libjpeg-turbo's mean colour,
  // device memory checked flat (cudaMemGetInfo) over many decodes.
  Result<void> run_self_test(int decodes) {
    auto& st = d_->self_test;
    if (st.ran) return st.passed ? ok() : Result<void>(gpu_error(ErrorCode::Unavailable, "gpu self-test", st.detail));
    st.ran = true;
    abi::DecodeRequest r;
    r.data = selftest_jpg;
    r.size = selftest_jpg_len;
    std::vector<uint8_t> host(320 * 240 * 4);
    auto one = [&](int backend) -> Result<void> {
      r.backend = backend;
      PIXPATH_TRY(auto img, decode_to_device(r));
      release_device(img.ptr, img.stream);
      recycle_event(img.event);
      PIXPATH_CHECK(decode_to_host(r, host.data(), 320 * 4, 320, 240));
      return ok();
    };
    auto fail = [&](std::string why) -> Result<void> {
      st.detail = why;
      return gpu_error(ErrorCode::Unavailable, "gpu self-test", why);
    };
    // Hardware batches of two: the batch path is checked with the rest.
    auto batch = [&]() -> Result<void> {
      if (!d_->hw_handle) return ok();
      abi::DecodeRequest pair[2] = {r, r};
      pair[0].backend = pair[1].backend = kBackendAuto;
      for (auto& img : decode_batch_to_device(pair, 2)) {
        if (!img) return img.error();
        release_device(img->ptr, img->stream);
        recycle_event(img->event);
      }
      return ok();
    };
    for (int i = 0; i < 3; ++i)  // warm-up: slots, pool, nvJPEG buffers
      for (int b : {kBackendHybrid, kBackendGpuHybrid, kBackendAuto})
        if (auto e = one(b); !e) return fail(e.error().stage() + ": " + e.error().reason());
    // Every hardware batch state's first batch costs 90-130 ms on the H200 (measured with
    // cuda_gpu_jpeg_benchmark --first-calls), whatever the pictures' size: paid here, once per
    // device, instead of by a session's first frames. One batch per state the rotation can
    // reach (the deepest rotation: pictures of kDeepBatchPixels or more).
    for (int k = 0; k < batch_depth(kDeepBatchPixels); ++k) {
      {
        std::lock_guard lock(d_->batch_mu);
        d_->last_batch_mean_pixels = kDeepBatchPixels;  // so the next turn is the next state
      }
      if (auto e = batch(); !e) return fail(e.error().stage() + ": " + e.error().reason());
    }
    if (auto e = cudaDeviceSynchronize(); e != cudaSuccess) return fail(cudaGetErrorString(e));
    size_t free0 = 0, free1 = 0, total = 0;
    (void)cudaMemGetInfo(&free0, &total);
    for (int i = 0; i < decodes; ++i) {
      if (auto e = one(i % 3 == 0 ? kBackendHybrid : (i % 3 == 1 ? kBackendGpuHybrid : kBackendAuto)); !e)
        return fail(e.error().stage() + ": " + e.error().reason());
      if (i % 4 == 3)
        if (auto e = batch(); !e) return fail(e.error().stage() + ": " + e.error().reason());
    }
    if (auto e = cudaDeviceSynchronize(); e != cudaSuccess) return fail(cudaGetErrorString(e));
    (void)cudaMemGetInfo(&free1, &total);
    st.decodes = decodes;
    st.free_before = static_cast<int64_t>(free0);
    st.free_after = static_cast<int64_t>(free1);
    double sum[3] = {};
    for (size_t i = 0; i < host.size(); i += 4)
      for (int c = 0; c < 3; ++c) sum[c] += host[i + c];
    const double ref[3] = {154.745, 154.487, 197.088};  // djpeg of the same file
    for (int c = 0; c < 3; ++c) st.mean_rgb[c] = sum[c] / (320.0 * 240.0);
    for (int c = 0; c < 3; ++c)
      if (std::abs(st.mean_rgb[c] - ref[c]) > 1.0)
        return fail("decoded colours differ from libjpeg-turbo's (mean channel " + std::to_string(c) +
                    ": " + std::to_string(st.mean_rgb[c]) + " vs " + std::to_string(ref[c]) + ")");
    const int64_t grew = st.free_before - st.free_after;
    if (grew > (int64_t{8} << 20))
      return fail("device memory grew by " + std::to_string(grew >> 20) + " MiB over " +
                  std::to_string(decodes) + " decodes (nvJPEG leak? driver " +
                  d_->driver.nvidia_version + ")");
    st.passed = true;
    st.detail = "device memory flat within " + std::to_string(std::max<int64_t>(grew, 0) >> 10) + " KiB";
    return ok();
  }

 private:
  Result<void> bind() {
    CUDA_TRY("gpu device", cudaSetDevice(d_->device));
    return ok();
  }

  using Bytes = std::pair<const uint8_t*, size_t>;
  // jpega: colour JPEG then alpha JPEG.
  std::pair<Result<Bytes>, Bytes> split(const abi::DecodeRequest& r) {
    if (!r.data || r.size == 0)
      return {gpu_error(ErrorCode::InvalidArgument, "gpu parse", "no data"), {}};
    if (r.alpha_offset < 0) return {Bytes{r.data, r.size}, {}};
    if (r.alpha_offset == 0 || static_cast<uint64_t>(r.alpha_offset) >= r.size)
      return {gpu_error(ErrorCode::CorruptData, "gpu parse",
                        "alpha-offset " + std::to_string(r.alpha_offset) + " outside the " +
                            std::to_string(r.size) + " data bytes"),
              {}};
    const size_t a = static_cast<size_t>(r.alpha_offset);
    return {Bytes{r.data, a}, Bytes{r.data + a, r.size - a}};
  }

  Result<ParsedImage> parse(nvjpegHandle_t handle, nvjpegJpegStream_t js, const uint8_t* data,
                            size_t size, const abi::DecodeRequest& r, bool header_only = false) {
    if (header_only)
      NVJ_TRY("gpu parse", nvjpegJpegStreamParseHeader(handle, data, size, js));
    else
      NVJ_TRY("gpu parse", nvjpegJpegStreamParse(handle, data, size, 0, 0, js));
    ParsedImage p;
    unsigned w = 0, h = 0, n = 0;
    NVJ_TRY("gpu parse", nvjpegJpegStreamGetFrameDimensions(js, &w, &h));
    NVJ_TRY("gpu parse", nvjpegJpegStreamGetComponentsNum(js, &n));
    NVJ_TRY("gpu parse", nvjpegJpegStreamGetChromaSubsampling(js, &p.css));
    (void)nvjpegJpegStreamGetJpegEncoding(js, &p.encoding);
    if (n != 1 && n != 3)
      return gpu_error(ErrorCode::Unsupported, "gpu parse",
                       std::to_string(n) + "-component JPEG (CMYK?) is not decoded on the GPU");
    if (w == 0 || h == 0) return gpu_error(ErrorCode::CorruptData, "gpu parse", "zero-sized frame");
    if ((r.max_width && w > unsigned(r.max_width)) || (r.max_height && h > unsigned(r.max_height)) ||
        (r.max_pixels && uint64_t(w) * h > r.max_pixels))
      return gpu_error(ErrorCode::LimitExceeded, "gpu parse",
                       std::to_string(w) + "x" + std::to_string(h) + " exceeds the decode limits");
    if ((r.width && unsigned(r.width) != w) || (r.height && unsigned(r.height) != h))
      return gpu_error(ErrorCode::CorruptData, "gpu parse",
                       "JPEG is " + std::to_string(w) + "x" + std::to_string(h) + ", packet says " +
                           std::to_string(r.width) + "x" + std::to_string(r.height));
    p.width = int(w);
    p.height = int(h);
    p.components = int(n);
    for (unsigned c = 0; c < n; ++c)
      NVJ_TRY("gpu parse", nvjpegJpegStreamGetComponentDimensions(js, c, &p.comp_w[c], &p.comp_h[c]));
    return p;
  }

  // Parses and decodes one JPEG into `planes` on the slot's stream. `before_host` runs once
  // the stream is parsed and routed, before the host (Huffman) phase.
  Result<ParsedImage> decode_planes(Slot& s, const uint8_t* data, size_t size,
                                    const abi::DecodeRequest& r, PlaneSet& planes, bool luma_only,
                                    const std::function<Result<void>()>& before_host) {
    using PhaseClock = std::chrono::steady_clock;
    auto t_prev = PhaseClock::now();
    auto phase = [&](int i) {
      const auto t = PhaseClock::now();
      d_->phase_ns[i].fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(t - t_prev).count(),
                                std::memory_order_relaxed);
      t_prev = t;
    };
    if (d_->hw_handle && !luma_only && (r.backend == kBackendAuto || r.backend == kBackendHardware)) {
      PIXPATH_TRY(std::optional<ParsedImage> hw, decode_hardware(s, data, size, r, planes, before_host));
      if (hw) return *hw;  // else: not for the engines (progressive, gray...): decoupled below
    }
    s.turn ^= 1;
    const int k = s.turn;
    // The pinned buffer and JPEG stream of this turn were last used two pictures ago; their
    // transfer must be done before the host phase writes them again.
    CUDA_TRY("gpu decode", cudaEventSynchronize(s.turn_done[k]));
    phase(0);
    nvjpegJpegStream_t js = s.jpeg_stream[k];
    PIXPATH_TRY(ParsedImage img, parse(d_->handle, js, data, size, r));
    phase(1);
    const bool y_only = luma_only || img.components == 1;
    NVJ_TRY("gpu decode", nvjpegDecodeParamsSetOutputFormat(s.params, y_only ? NVJPEG_OUTPUT_Y : NVJPEG_OUTPUT_YUV));

    // Route: the asked backend, else by size; fall over to the other when nvJPEG says the
    // picture is not supported there (e.g. progressive on GPU_HYBRID).
    int want = r.backend;
    if (want == kBackendAuto || want == kBackendHardware)
      want = int64_t(img.width) * img.height < kHybridBelowPixels ? kBackendHybrid : kBackendGpuHybrid;
    BackendState* b = nullptr;
    nvjpegJpegDecoder_t dec = nullptr;
    for (int attempt = 0; attempt < 2 && !b; ++attempt) {
      const int cand = attempt == 0 ? want : (want == kBackendHybrid ? kBackendGpuHybrid : kBackendHybrid);
      nvjpegJpegDecoder_t cd = cand == kBackendHybrid ? d_->decoder_hybrid : d_->decoder_gpu;
      int unsupported = 1;
      if (nvjpegDecoderJpegSupported(cd, js, s.params, &unsupported) == NVJPEG_STATUS_SUCCESS &&
          unsupported == 0) {
        b = cand == kBackendHybrid ? &s.hybrid : &s.gpu;
        dec = cd;
      }
    }
    if (!b)
      return gpu_error(ErrorCode::Unsupported, "gpu decode",
                       std::string("nvJPEG supports this ") + encoding_name(img.encoding) + " " +
                           css_name(img.css) + " JPEG on no backend");
    unsigned w[3] = {}, h[3] = {};
    const int comps = y_only ? 1 : 3;
    for (int c = 0; c < comps; ++c) w[c] = img.comp_w[c], h[c] = img.comp_h[c];
    PIXPATH_CHECK(planes.prepare(comps, w, h, d_->pool, s.stream));
    planes.layout = y_only ? ChromaLayout::kGray : layout_for(img.css, img.components);
    planes.width = img.width;
    planes.height = img.height;

    if (inject_failure("decode"))
      return gpu_error(ErrorCode::Internal, "gpu decode", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)");
    NVJ_TRY("gpu decode", nvjpegStateAttachPinnedBuffer(b->state, b->pinned[k]));
    if (before_host) PIXPATH_CHECK(before_host());
    t_prev = PhaseClock::now();
    NVJ_TRY("gpu decode", nvjpegDecodeJpegHost(d_->handle, dec, b->state, s.params, js));
    phase(2);
    NVJ_TRY("gpu decode", nvjpegDecodeJpegTransferToDevice(d_->handle, dec, b->state, js, s.stream));
    CUDA_TRY("gpu decode", cudaEventRecord(s.turn_done[k], s.stream));
    phase(3);
    NVJ_TRY("gpu decode", nvjpegDecodeJpegDevice(d_->handle, dec, b->state, &planes.image, s.stream));
    phase(4);
    d_->phase_count.fetch_add(1, std::memory_order_relaxed);
    return img;
  }

  // One baseline colour picture on the hardware engines. nullopt: the engines do not take it.
  Result<std::optional<ParsedImage>> decode_hardware(Slot& s, const uint8_t* data, size_t size,
                                                     const abi::DecodeRequest& r, PlaneSet& planes,
                                                     const std::function<Result<void>()>& before_host) {
    const auto t0 = std::chrono::steady_clock::now();
    if (!s.hw_state) {
      NVJ_TRY("gpu init", nvjpegJpegStateCreate(d_->hw_handle, &s.hw_state));
      NVJ_TRY("gpu init", nvjpegJpegStreamCreate(d_->hw_handle, &s.hw_stream));
      NVJ_TRY("gpu init", nvjpegDecodeBatchedInitialize(d_->hw_handle, s.hw_state, 1, 1, NVJPEG_OUTPUT_YUV));
    }
    PIXPATH_TRY(ParsedImage img, parse(d_->hw_handle, s.hw_stream, data, size, r, /*header_only=*/true));
    int unsupported = 1;
    if (img.components != 3 ||
        nvjpegDecodeBatchedSupported(d_->hw_handle, s.hw_stream, &unsupported) != NVJPEG_STATUS_SUCCESS ||
        unsupported != 0)
      return std::optional<ParsedImage>();
    unsigned w[3], h[3];
    for (int c = 0; c < 3; ++c) w[c] = img.comp_w[c], h[c] = img.comp_h[c];
    PIXPATH_CHECK(planes.prepare(3, w, h, d_->pool, s.stream));
    planes.layout = layout_for(img.css, 3);
    planes.width = img.width;
    planes.height = img.height;
    if (inject_failure("decode"))
      return gpu_error(ErrorCode::Internal, "gpu decode", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)");
    // Reported on H100: the hardware path may not honour stream order. Start from an idle
    // stream: the previous picture's conversion has read these planes.
    CUDA_TRY("gpu decode", cudaStreamSynchronize(s.stream));
    if (before_host) PIXPATH_CHECK(before_host());
    const unsigned char* ptr = data;
    NVJ_TRY("gpu decode", nvjpegDecodeBatched(d_->hw_handle, s.hw_state, &ptr, &size, &planes.image, s.stream));
    d_->hw_single_ns.fetch_add(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count(),
        std::memory_order_relaxed);
    d_->hw_single_count.fetch_add(1, std::memory_order_relaxed);
    return std::optional<ParsedImage>(img);
  }

  // Colour (and, for jpega, alpha) planes of one request.
  Result<ParsedImage> decode_all(Slot& s, const abi::DecodeRequest& r,
                                 const std::function<Result<void>()>& before_host) {
    auto [color, alpha] = split(r);
    if (!color) return color.error();
    PIXPATH_TRY(ParsedImage img, decode_planes(s, color->first, color->second, r, s.color, false, before_host));
    if (r.alpha_offset >= 0) {
      abi::DecodeRequest ar = r;
      ar.width = img.width;
      ar.height = img.height;
      auto a = decode_planes(s, alpha.first, alpha.second, ar, s.alpha, true, nullptr);
      if (!a) return gpu_error(a.error().code(), "gpu alpha", a.error().stage() + ": " + a.error().reason());
    }
    return img;
  }

  ConvertJob convert_job(Slot& s, const ParsedImage& img, const abi::DecodeRequest& r) {
    ConvertJob job;
    job.y = s.color.planes[0];
    if (s.color.components == 3) {
      job.cb = s.color.planes[1];
      job.cr = s.color.planes[2];
    }
    job.layout = s.color.layout;
    if (r.alpha_offset >= 0) job.alpha = s.alpha.planes[0];
    job.width = img.width;
    job.height = img.height;
    return job;
  }

  static Error does_not_fit(int width, int height, const abi::TextureTarget& t) {
    return gpu_error(ErrorCode::OutOfRange, "gpu texture",
                     "picture " + std::to_string(width) + "x" + std::to_string(height) + " at " +
                         std::to_string(t.x) + "," + std::to_string(t.y) + " does not fit the " +
                         std::to_string(t.texture_width) + "x" + std::to_string(t.texture_height) +
                         " texture");
  }

  // One picture of `width` x `height` written into a texture region.
  struct TextureWrite {
    abi::TextureTarget target;
    int width = 0, height = 0;
  };
  // The textures of several writes mapped together: each write's registration (regs[i]), every
  // distinct resource once, and the map flags set (write-discard where one picture alone
  // covers its whole texture).
  struct TextureSet {
    std::vector<TextureRegistration*> regs;
    std::vector<cudaGraphicsResource_t> resources;
  };
  Result<TextureSet> texture_set(const std::vector<TextureWrite>& writes) {
    TextureSet set;
    set.regs.reserve(writes.size());
    for (const auto& w : writes) {
      PIXPATH_TRY(TextureRegistration* reg, registration(w.target));
      set.regs.push_back(reg);
      if (std::find(set.resources.begin(), set.resources.end(), reg->resource) == set.resources.end())
        set.resources.push_back(reg->resource);
    }
    for (size_t i = 0; i < writes.size(); ++i) {
      const auto& w = writes[i];
      const auto users = std::count(set.regs.begin(), set.regs.end(), set.regs[i]);
      PIXPATH_CHECK(set_map_flags(*set.regs[i], users == 1 && w.target.x == 0 && w.target.y == 0 &&
                                                    w.width == w.target.texture_width &&
                                                    w.height == w.target.texture_height));
    }
    return set;
  }

  Result<TextureRegistration*> registration(const abi::TextureTarget& t) {
    if (t.texture == 0 || t.texture_width <= 0 || t.texture_height <= 0 || t.x < 0 || t.y < 0)
      return gpu_error(ErrorCode::InvalidArgument, "gpu texture", "no texture, or a negative position");
    std::lock_guard lock(d_->textures_mu);
    auto it = d_->textures.find(t.texture);
    if (it != d_->textures.end()) return &it->second;
    TextureRegistration reg;
    CUDA_TRY("gpu texture", cudaGraphicsGLRegisterImage(&reg.resource, t.texture, kGlTexture2D,
                                                        cudaGraphicsRegisterFlagsSurfaceLoadStore));
    return &d_->textures.emplace(t.texture, reg).first->second;
  }

  // The surface object for the texture's mapped array; made again only if the array changed.
  Result<void> surface_for(TextureRegistration& reg, cudaStream_t stream) {
    cudaArray_t array = nullptr;
    CUDA_TRY("gpu texture", cudaGraphicsSubResourceGetMappedArray(&array, reg.resource, 0, 0));
    if (array == reg.array && reg.surface) return ok();
    if (reg.surface) {
      CUDA_TRY("gpu texture", cudaStreamSynchronize(stream));
      (void)cudaDestroySurfaceObject(reg.surface);
      reg.surface = 0;
    }
    cudaResourceDesc desc{};
    desc.resType = cudaResourceTypeArray;
    desc.res.array.array = array;
    CUDA_TRY("gpu texture", cudaCreateSurfaceObject(&reg.surface, &desc));
    reg.array = array;
    return ok();
  }

  // The hardware part of a batch (batch_mu held): parses every request and picks the baseline
  // colour pictures without alpha the engines take; when there are two or more, decodes them as
  // one batch into the planes of the next batch state (picked[j] is the request in plane set j).
  // `before_decode` runs once the pictures are parsed and sized, before the decode is queued.
  // Requests that fail to parse are marked done with their error through `fail`. An empty
  // `picked` means nothing was decoded here.
  Result<BatchState*> batch_decode(const abi::DecodeRequest* requests, size_t count,
                                   std::vector<size_t>& picked, std::vector<bool>& done,
                                   const std::function<void(size_t, Error)>& fail,
                                   const std::function<Result<void>(BatchState&)>& before_decode) {
    // The depth follows the previous batch's picture size (windows keep their sizes).
    d_->batch_turn = (d_->batch_turn + 1) % batch_depth(d_->last_batch_mean_pixels);
    auto& b = d_->batch[d_->batch_turn];
    if (!b.stream) {
      CUDA_TRY("gpu batch", cudaStreamCreateWithFlags(&b.stream, cudaStreamNonBlocking));
      CUDA_TRY("gpu batch", cudaEventCreateWithFlags(&b.decoded, cudaEventDisableTiming));
      CUDA_TRY("gpu batch", cudaEventCreateWithFlags(&b.converted, cudaEventDisableTiming));
      NVJ_TRY("gpu batch", nvjpegJpegStateCreate(d_->hw_handle, &b.state));
    }
    while (b.streams.size() < count) {
      nvjpegJpegStream_t js = nullptr;
      NVJ_TRY("gpu batch", nvjpegJpegStreamCreate(d_->hw_handle, &js));
      b.streams.push_back(js);
    }
    if (b.planes.size() < count) b.planes.resize(count);

    picked.clear();
    std::vector<ParsedImage> parsed(count);
    for (size_t i = 0; i < count; ++i) {
      const auto& r = requests[i];
      if (r.alpha_offset >= 0 || (r.backend != kBackendAuto && r.backend != kBackendHardware)) continue;
      nvjpegJpegStream_t js = b.streams[i];
      auto p = parse(d_->hw_handle, js, r.data, r.size, r, /*header_only=*/true);
      if (!p) {
        fail(i, p.error());
        done[i] = true;
        continue;
      }
      int unsupported = 1;
      if (p->components != 3 ||
          nvjpegDecodeBatchedSupported(d_->hw_handle, js, &unsupported) != NVJPEG_STATUS_SUCCESS ||
          unsupported != 0)
        continue;  // decoded one by one
      parsed[i] = *p;
      picked.push_back(i);
    }
    if (picked.size() < 2) {
      picked.clear();
      return &b;
    }
    const int n = static_cast<int>(picked.size());
    int64_t pixels = 0;
    for (size_t i : picked) pixels += int64_t(parsed[i].width) * parsed[i].height;
    d_->last_batch_mean_pixels = pixels / n;
    if (b.initialized_size != n) {
      NVJ_TRY("gpu batch", nvjpegDecodeBatchedInitialize(d_->hw_handle, b.state, n, 1, NVJPEG_OUTPUT_YUV));
      b.initialized_size = n;
    }
    std::vector<const unsigned char*> datas;
    std::vector<size_t> lengths;
    std::vector<nvjpegImage_t> dests;
    for (int j = 0; j < n; ++j) {
      const size_t i = picked[size_t(j)];
      auto& ps = b.planes[size_t(j)];
      const auto& img = parsed[i];
      unsigned w[3], h[3];
      for (int c = 0; c < 3; ++c) w[c] = img.comp_w[c], h[c] = img.comp_h[c];
      PIXPATH_CHECK(ps.prepare(3, w, h, d_->pool, b.stream));
      ps.layout = layout_for(img.css, 3);
      ps.width = img.width;
      ps.height = img.height;
      datas.push_back(requests[i].data);
      lengths.push_back(requests[i].size);
      dests.push_back(ps.image);
    }
    if (inject_failure("decode")) {  // a failure of each picture, not of the batch path
      for (size_t i : picked) {
        fail(i, gpu_error(ErrorCode::Internal, "gpu decode", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)"));
        done[i] = true;
      }
      picked.clear();
      return &b;
    }
    // Reported on H100: the hardware path may not honour stream order; start from an idle
    // stream (this also guarantees the previous batch's conversions read their planes).
    CUDA_TRY("gpu batch", cudaStreamSynchronize(b.stream));
    if (before_decode) PIXPATH_CHECK(before_decode(b));
    NVJ_TRY("gpu batch", nvjpegDecodeBatched(d_->hw_handle, b.state, datas.data(), lengths.data(),
                                             dests.data(), b.stream));
    return &b;
  }

  static ConvertJob plane_job(const PlaneSet& ps) {
    ConvertJob job;
    job.y = ps.planes[0];
    job.cb = ps.planes[1];
    job.cr = ps.planes[2];
    job.layout = ps.layout;
    job.width = ps.width;
    job.height = ps.height;
    return job;
  }

  // decode_batch_to_textures' hardware part (batch_mu held): every distinct texture is mapped on
  // the texture stream before the batch is queued (the map's wait for GL overlaps the decode),
  // each picture converted into its region once the batch is decoded, then one unmap.
  Result<void> batch_hardware(const abi::DecodeRequest* requests, const abi::TextureTarget* targets,
                              size_t count, std::vector<Result<void>>& results,
                              std::vector<bool>& done) {
    std::vector<size_t> picked;
    TextureSet set;
    const auto& regs = set.regs;
    auto& resources = set.resources;
    std::unique_lock paint(paint_mu_, std::defer_lock);
    cudaStream_t ts = nullptr;
    bool mapped = false;
    auto map_all = [&](BatchState& b) -> Result<void> {
      std::vector<TextureWrite> writes;
      for (size_t j = 0; j < picked.size(); ++j)
        writes.push_back({targets[picked[j]], b.planes[j].width, b.planes[j].height});
      PIXPATH_TRY(set, texture_set(writes));
      paint.lock();
      PIXPATH_TRY(ts, texture_stream());
      CUDA_TRY("gpu texture", cudaGraphicsMapResources(int(resources.size()), resources.data(), ts));
      mapped = true;
      return ok();
    };
    auto decoded = batch_decode(requests, count, picked, done,
                                [&](size_t i, Error e) { results[i] = std::move(e); }, map_all);
    if (!decoded) {
      if (mapped) (void)cudaGraphicsUnmapResources(int(resources.size()), resources.data(), ts);
      return decoded.error();
    }
    if (picked.empty()) return ok();
    BatchState& b = **decoded;
    Result<void> status = ok();
    auto queue = [&]() -> Result<void> {
      CUDA_TRY("gpu batch", cudaEventRecord(b.decoded, b.stream));
      CUDA_TRY("gpu texture", cudaStreamWaitEvent(ts, b.decoded, 0));
      for (size_t j = 0; j < picked.size(); ++j) {
        const size_t i = picked[j];
        const auto& t = targets[i];
        const auto& ps = b.planes[j];
        if (t.x + ps.width > t.texture_width || t.y + ps.height > t.texture_height) {
          results[i] = gpu_error(ErrorCode::OutOfRange, "gpu texture", "picture does not fit the texture");
          done[i] = true;
          continue;
        }
        PIXPATH_CHECK(surface_for(*regs[j], ts));
        ConvertJob job = plane_job(ps);
        job.surface = regs[j]->surface;
        job.x0 = t.x;
        job.y0 = t.y;
        CUDA_TRY("gpu convert", launch_ycc_to_rgba(job, ts));
        done[i] = true;
      }
      // The next use of this batch state overwrites the planes: its stream waits for these.
      CUDA_TRY("gpu convert", cudaEventRecord(b.converted, ts));
      CUDA_TRY("gpu convert", cudaStreamWaitEvent(b.stream, b.converted, 0));
      return ok();
    };
    status = queue();
    const cudaError_t ue = cudaGraphicsUnmapResources(int(resources.size()), resources.data(), ts);
    if (status && ue != cudaSuccess) return cuda_error("gpu texture", "cudaGraphicsUnmapResources", ue);
    return status;
  }

  // decode_batch_to_device's hardware part (batch_mu held): one conversion per picture into new
  // pool memory on the batch's stream, each followed by its own event.
  Result<void> batch_to_device(const abi::DecodeRequest* requests, size_t count,
                               std::vector<Result<abi::DeviceImage>>& results, std::vector<bool>& done) {
    std::vector<size_t> picked;
    PIXPATH_TRY(BatchState* bp, batch_decode(requests, count, picked, done,
                                             [&](size_t i, Error e) { results[i] = std::move(e); }, nullptr));
    for (size_t j = 0; j < picked.size(); ++j) {
      const size_t i = picked[j];
      PIXPATH_TRY(abi::DeviceImage img, convert_to_device(plane_job(bp->planes[j]), bp->stream));
      results[i] = img;
      done[i] = true;
    }
    return ok();
  }

  // RGBA in new pool memory from planes, on `stream`, followed by an event of its own.
  Result<abi::DeviceImage> convert_to_device(ConvertJob job, cudaStream_t stream) {
    const size_t pitch = align_up(size_t(job.width) * 4, 256);
    const size_t bytes = pitch * size_t(job.height);
    void* out = nullptr;
    CUDA_TRY("gpu memory", cudaMallocFromPoolAsync(&out, bytes, d_->pool, stream));
    auto fail = [&](Error e) -> Result<abi::DeviceImage> {
      (void)cudaFreeAsync(out, stream);
      return e;
    };
    job.out = static_cast<uint8_t*>(out);
    job.out_pitch = pitch;
    if (inject_failure("convert"))
      return fail(gpu_error(ErrorCode::Internal, "gpu convert", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)"));
    if (auto e = launch_ycc_to_rgba(job, stream); e != cudaSuccess)
      return fail(cuda_error("gpu convert", "ycc_to_rgba<<<>>>", e));
    auto ev = d_->acquire_event();
    if (!ev) return fail(ev.error());
    if (auto e = cudaEventRecord(*ev, stream); e != cudaSuccess) {
      d_->recycle_event(*ev);
      return fail(cuda_error("gpu convert", "cudaEventRecord", e));
    }
    abi::DeviceImage img;
    img.ptr = out;
    img.pitch = pitch;
    img.bytes = bytes;
    img.width = job.width;
    img.height = job.height;
    img.event = *ev;
    img.stream = stream;
    img.device = d_->device;
    img.context = d_->context;
    return img;
  }

  void release_image(const abi::DeviceImage& img) {
    release_device(img.ptr, img.stream);
    d_->recycle_event(static_cast<cudaEvent_t>(img.event));
  }

  std::shared_ptr<DeviceState> d_;
  std::mutex paint_mu_;
  cudaStream_t paint_stream_ = nullptr;  // copy_to_textures (the GL thread's stream)
  std::vector<cudaEvent_t> free_fences_;
  TextureTrace trace_;
};

Result<std::shared_ptr<abi::Engine>> create_engine(const abi::EngineOptions& options) {
  PIXPATH_TRY(int dev, select_device(options.device));
  PIXPATH_TRY(auto state, device_state(dev));
  auto engine = std::make_shared<NvjpegEngine>(state);
  // Self-test: always when the driver's leak status is not known-good; longer when known-bad.
  const bool must = state->driver.nvidia_major < 525;
  if (options.self_test || must) {
    int n = std::max(options.self_test_decodes, must ? 64 : 8);
    if (state->driver.nvidia_major > 0 && state->driver.nvidia_major < 525) n = std::max(n, 512);
    PIXPATH_CHECK(engine->run_self_test(n));
  }
  return std::shared_ptr<abi::Engine>(engine);
}

Result<std::string> describe_devices() {
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return gpu_error(ErrorCode::Unavailable, "gpu device",
                     std::string("no usable CUDA driver or device: ") + cudaGetErrorName(e));
  std::string out = "{\"devices\":[";
  for (int i = 0; i < count; ++i) {
    auto s = device_state(i);
    if (i) out += ",";
    out += s ? (*s)->describe() : "{\"index\":" + std::to_string(i) + ",\"error\":\"" + json_escape(s.error().reason()) + "\"}";
  }
  return out + "]}";
}

}  // namespace
}  // namespace pixpath::cuda

extern "C" __attribute__((visibility("default"))) const pixpath::cuda::abi::ModuleEntry*
pixpath_cuda_module_v1() {
  static const pixpath::cuda::abi::ModuleEntry entry{pixpath::cuda::abi::kAbiVersion,
                                                    &pixpath::cuda::create_engine,
                                                    &pixpath::cuda::describe_devices};
  return &entry;
}
