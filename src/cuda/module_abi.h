// The boundary between libpixpath_cuda.so (the GPU module) and the loader that dlopens it
// (src/cuda_loader). Private to pixpath: both sides are built from the same tree by the same
// compiler, so C++ types cross it; no CUDA or GL type does (handles are void*).
//
// The module links no pixpath library (its link uses -Wl,--no-undefined to prove it): it may
// use only the header-inline parts of pixpath/core/result.h. Pictures, storages and sync
// points are built by the loader around what the engine returns, so process-wide state
// (counters, storage ids, copier registry) exists once, in the program.
//
// Lifetime: the module is never unloaded; an Engine lives as long as the last shared_ptr to it
// (decoders, and the release actions of pictures it produced).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "own_jpeg_input.h"
#include "pixpath/core/result.h"

namespace pixpath::cuda::abi {

// 2: copy_to_textures and the fence calls (the paint engine's GPU path).
// 3: decode_to_texture returns a fence; decode_batch_to_device (the paint engine's GPU thread).
// 4: prepare_texture (registration at window creation, not at the first write).
// 5: DecodeRequest::own / own_damage (pixpath's own decoder, plain data made by the loader).
// 6: DecodeRequest::own_alpha / own_alpha_damage (jpega's alpha JPEG on the own decoder too).
// 7: convert_yuv_to_device (video frames decoded by NVDEC through libavcodec).
// 8: route_costs (the own decoder's and the engines' measured costs, for the batch split).
inline constexpr int kAbiVersion = 8;
inline constexpr const char* kEntryPoint = "pixpath_cuda_module_v1";

struct EngineOptions {
  std::string device;
  bool self_test = true;
  int self_test_decodes = 32;
};

struct DecodeRequest {
  const uint8_t* data = nullptr;
  size_t size = 0;
  int64_t alpha_offset = -1;  // jpega; -1 = none
  int width = 0, height = 0;  // expected; 0 = any
  int backend = 0;            // GpuBackend
  int max_width = 0, max_height = 0;
  uint64_t max_pixels = 0;
  // Non-null: decode the colour JPEG with pixpath's own decoder from this input (made by the
  // loader with make_own_jpeg_input; alive for the call) instead of nvJPEG, and write what it
  // found about damaged entropy data to *own_damage (when non-null). Never batched on the
  // hardware engines. With jpega alpha (alpha_offset >= 0) the loader sets both or neither of
  // own and own_alpha (the alpha JPEG, gray), so the whole picture is checked for damage.
  const own_jpeg::OwnJpegInput* own = nullptr;
  own_jpeg::DamageWords* own_damage = nullptr;
  const own_jpeg::OwnJpegInput* own_alpha = nullptr;
  own_jpeg::DamageWords* own_alpha_damage = nullptr;
};

// What the module measured (route_costs.h): milliseconds per megapixel of a picture on the own
// decoder (wall time in a decode call, the host's wait for its damage words included) and of
// one pass of the hardware engines (a batch's decode on its stream, over the passes it needs).
struct RouteCosts {
  double own_ms_per_mpixel = 0, engine_pass_ms_per_mpixel = 0;
};

struct ImageHeader {
  int width = 0, height = 0;
  int components = 0;
  bool has_alpha = false;
  std::string detail;  // "baseline 4:2:0", "progressive gray", ...
};

struct DeviceImage {
  void* ptr = nullptr;  // RGBA, `pitch` bytes per row, `bytes` in all
  size_t pitch = 0, bytes = 0;
  int width = 0, height = 0;
  void* event = nullptr;   // cudaEvent_t recorded after the write (owned by the engine's pool)
  void* stream = nullptr;  // cudaStream_t the write was queued on
  int device = 0;
  const void* context = nullptr;  // CUcontext (the device's primary context)
};

struct TextureTarget {
  uint32_t texture = 0;
  int texture_width = 0, texture_height = 0;
  int x = 0, y = 0;
};

// One decode_to_device() picture to copy into a texture region (copy_to_textures).
struct DeviceCopy {
  const void* src = nullptr;  // RGBA, src_pitch bytes per row
  size_t src_pitch = 0;
  int width = 0, height = 0;
  void* src_event = nullptr;  // cudaEvent_t recorded after the picture's write; null: none
  TextureTarget target;
};

// One video frame in CUDA memory (NVDEC's output through libavcodec, in the device's primary
// context) to convert into RGBA pool memory.
struct YuvRequest {
  const uint8_t* planes[3] = {};  // layout 0 NV12: Y, UV; 1 YUV420P / 2 YUV444P: Y, U, V
  size_t pitch[3] = {};
  int layout = 0;
  int width = 0, height = 0;
  bool bt709 = false, full_range = false;
  // The stream the frame's producer queued its write on (libavcodec's CUDA device context's
  // stream); legacy_stream: the legacy default stream (what libavcodec uses when it made the
  // context, AVCUDADeviceContext::stream null). The conversion waits for it on the GPU.
  void* src_stream = nullptr;
  bool legacy_stream = true;
};

class Engine {
 public:
  virtual ~Engine() = default;
  virtual Result<ImageHeader> inspect(const DecodeRequest& request) = 0;
  virtual Result<DeviceImage> decode_to_device(const DecodeRequest& request) = 0;
  // dst: host memory, width x height RGBA (the size inspect() gave), `pitch` bytes per row.
  virtual Result<void> decode_to_host(const DecodeRequest& request, uint8_t* dst, size_t pitch,
                                      int width, int height) = 0;
  // Returns a fence (as copy_to_textures) recorded after the unmap.
  virtual Result<void*> decode_to_texture(const DecodeRequest& request,
                                          const TextureTarget& target) = 0;
  virtual std::vector<Result<void>> decode_batch_to_textures(const DecodeRequest* requests,
                                                             const TextureTarget* targets,
                                                             size_t count) = 0;
  // Several pictures into CUDA memory: baseline colour pictures as one hardware batch (two or
  // more, where the GPU has engines), the rest one by one. One result per request, in order.
  virtual std::vector<Result<DeviceImage>> decode_batch_to_device(const DecodeRequest* requests,
                                                                  size_t count) = 0;
  virtual void forget_texture(uint32_t texture) = 0;
  // Registers the texture with CUDA and maps and unmaps it once on the texture stream (no host
  // wait), so its first write does not pay for either. GL context current.
  virtual Result<void> prepare_texture(const TextureTarget& target) = 0;
  // The hardware JPEG engines a batch spreads over (0: none, or batches disabled).
  virtual int hardware_engines() = 0;
  // The measured costs (priors until the first samples); cheap, any thread.
  virtual RouteCosts route_costs() = 0;
  // Copies device pictures into texture regions on the engine's paint stream (GL context
  // current): GPU-side waits on each src_event, one map of every distinct texture, 2-D copies,
  // one unmap; no host wait. Returns a fence (a cudaEvent_t recorded after the unmap, created
  // with blocking sync) to give back with release_fence().
  virtual Result<void*> copy_to_textures(const DeviceCopy* copies, size_t count) = 0;
  virtual int query_fence(void* fence) = 0;  // 1 signalled, 0 not yet, -1 failed
  virtual Result<void> wait_fence(void* fence) = 0;
  virtual void release_fence(void* fence) = 0;

  // Release of a DeviceImage's memory (stream-ordered after its write, any thread).
  virtual void release_device(void* ptr, void* stream) = 0;
  virtual Result<void> wait_event(void* event) = 0;
  virtual void recycle_event(void* event) = 0;
  // For the CUDA MemoryKindCopier: plain pool memory and a 2-D device copy (synchronous).
  virtual Result<void*> allocate_device(size_t bytes) = 0;
  virtual Result<void> copy_device_2d(void* dst, size_t dst_pitch, const void* src,
                                      size_t src_pitch, size_t row_bytes, int rows) = 0;

  // RGBA in new pool memory from a video frame's planes (ABI 6): a GPU-side wait for the
  // frame's producer stream, one kernel, an event; no host wait. As decode_to_device returns.
  virtual Result<DeviceImage> convert_yuv_to_device(const YuvRequest& request) = 0;

  virtual int device() const = 0;
  virtual const void* context() const = 0;
  virtual std::string info_json() = 0;
};

struct ModuleEntry {
  int abi_version = kAbiVersion;
  Result<std::shared_ptr<Engine>> (*create)(const EngineOptions& options) = nullptr;
  Result<std::string> (*describe_devices)() = nullptr;  // JSON
};

}  // namespace pixpath::cuda::abi

extern "C" const pixpath::cuda::abi::ModuleEntry* pixpath_cuda_module_v1();
