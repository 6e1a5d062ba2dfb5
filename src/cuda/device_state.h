// Per device, made once and shared by every engine (window) on it: DeviceState holds the
// primary CUDA context, a stream-ordered memory pool (kept reserved: device memory stays flat),
// the nvJPEG handle with stream-ordered allocators and two decoders (HYBRID: Huffman on the CPU;
// GPU_HYBRID: Huffman on the GPU), a handle for the HARDWARE engines (batched API) where the
// GPU has them, the GL texture registrations, a pool of CUDA events, and a pool of decode
// slots. A slot is what one decoding thread needs: a stream, a JPEG state per decoder, two
// pinned buffers and JPEG streams used in turn (the host phase of picture N+1 may run while the
// transfer of picture N is still queued), device buffers and grow-only plane buffers.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "driver_info.h"
#include "pixpath/core/result.h"
#include "pixpath/core/thread_annotations.h"
#include "own_jpeg_decode.h"
#include "plane_buffers.h"
#include "route_costs.h"
#include "self_test.h"

namespace pixpath::cuda {

// abi::DecodeRequest::backend (GpuBackend).
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

// How many hardware batches may be in flight (batch states used in turn). Measured on the H200
// (docs/performance.md, 8 windows back to back): 3 in flight gave 918 / 916 frames/s of 4K q50
// against 892 with 2, but 3472 / 3451 frames/s of 512x512 against 11,839-11,858 with 2 (and
// 3213 vs 3270 at 1080p). So: 3 when the batch's pictures average 4 Mpixel or more, else 2.
// PIXPATH_CUDA_BATCH_DEPTH=1..4 fixes it (measurements). Defined in hardware_batch.cc.
constexpr int64_t kDeepBatchPixels = 4'000'000;
int batch_depth(int64_t mean_pixels);

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
  // pixpath's own decoder's buffers (grow-only), made on the slot's first own-decoder picture.
  std::unique_ptr<own_jpeg::DeviceBuffers> own;
  std::unique_ptr<own_jpeg::DeviceBuffers> own_alpha;  // jpega's alpha JPEG (r.own_alpha)
  // Own-decoder decodes queued on `stream` whose damage words the host has not read yet, and
  // the request's places for them (NvjpegEngine::finish_own reads them before the call returns).
  own_jpeg::PendingDecode own_pending, own_alpha_pending;
  own_jpeg::DamageWords* own_damage_out = nullptr;
  own_jpeg::DamageWords* own_alpha_damage_out = nullptr;
};

struct TextureRegistration {
  cudaGraphicsResource_t resource = nullptr;
  cudaArray_t array = nullptr;
  cudaSurfaceObject_t surface = 0;
  unsigned map_flags = cudaGraphicsMapFlagsNone;
};

struct BatchState {
  cudaStream_t stream = nullptr;
  cudaEvent_t decoded = nullptr, converted = nullptr;  // as in Slot (decode_batch_to_textures)
  // Timing events around the last nvjpegDecodeBatched on `stream` (the engines' pass time, read
  // when the state is next used, after its stream is idle), and that batch's size.
  cudaEvent_t pass_start = nullptr, pass_end = nullptr;
  int pass_pictures = 0;  // 0: no pass to read
  int64_t pass_pixels = 0;
  nvjpegJpegState_t state = nullptr;
  int initialized_size = 0;
  std::vector<nvjpegJpegStream_t> streams;
  std::vector<PlaneSet> planes;
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
  mutable Mutex batch_mu;  // the outcome counters below, and the batch states further down
  int hw_batch_failures_in_row PIXPATH_GUARDED_BY(batch_mu) = 0;
  int64_t hw_batch_failures PIXPATH_GUARDED_BY(batch_mu) = 0;
  int64_t hw_batches PIXPATH_GUARDED_BY(batch_mu) = 0;  // batches started on the engines
  std::string hw_batch_error PIXPATH_GUARDED_BY(batch_mu);
  std::string hw_batch_last_failure PIXPATH_GUARDED_BY(batch_mu);
  // Records a batch's outcome. Defined in hardware_batch.cc.
  void batch_outcome(const Result<void>& r) PIXPATH_REQUIRES(batch_mu);
  // Host time per phase of decode_planes (ns, summed) and the count: wait for the turn's
  // buffers, parse, nvjpegDecodeJpegHost, TransferToDevice (enqueue), DecodeJpegDevice (enqueue).
  std::atomic<int64_t> phase_ns[5] = {};
  std::atomic<int64_t> phase_count{0};
  std::atomic<int64_t> hw_single_ns{0}, hw_single_count{0};  // hardware route, host time
  // The route's measured costs (route_costs.h, abi::RouteCosts): own-decoder pictures in
  // decode_to_device, and the engines' passes of hardware batches.
  CostPerMpixel own_cost{kOwnPriorMsPerMpixel, CostPerMpixel::Track::Mean};
  CostPerMpixel engine_pass_cost{kEnginePassPriorMsPerMpixel, CostPerMpixel::Track::Floor};
  cudaStream_t release_stream = nullptr;
  SelfTest self_test;

  Mutex slots_mu;
  std::vector<std::unique_ptr<Slot>> free_slots PIXPATH_GUARDED_BY(slots_mu);
  int slots_created PIXPATH_GUARDED_BY(slots_mu) = 0;

  Mutex events_mu;
  std::vector<cudaEvent_t> free_events PIXPATH_GUARDED_BY(events_mu);

  Mutex textures_mu;
  std::map<uint32_t, TextureRegistration> textures PIXPATH_GUARDED_BY(textures_mu);

  // Two batch states used in turn: the host part of batch N+1 (parse, submit) overlaps the
  // hardware decode of batch N; a state's stream is synchronised before it is reused.
  BatchState batch[4] PIXPATH_GUARDED_BY(batch_mu);
  int batch_turn PIXPATH_GUARDED_BY(batch_mu) = 0;
  int64_t last_batch_mean_pixels PIXPATH_GUARDED_BY(batch_mu) = 0;

  ~DeviceState();

  static void destroy_backend(BackendState& b);
  void destroy_slot(Slot& s);
  Result<void> make_backend(BackendState& b, nvjpegJpegDecoder_t decoder);
  Result<std::unique_ptr<Slot>> make_slot();

  // A decode slot for the calling thread's call; back into the pool when the guard goes.
  class SlotGuard {
   public:
    SlotGuard(DeviceState* d, std::unique_ptr<Slot> s) : d_(d), s_(std::move(s)) {}
    SlotGuard(SlotGuard&&) = default;
    ~SlotGuard() {
      if (s_) {
        MutexLock lock(d_->slots_mu);
        d_->free_slots.push_back(std::move(s_));
      }
    }
    Slot& operator*() const { return *s_; }
    Slot* operator->() const { return s_.get(); }

   private:
    DeviceState* d_;
    std::unique_ptr<Slot> s_;
  };

  Result<SlotGuard> acquire_slot();
  Result<cudaEvent_t> acquire_event();
  void recycle_event(cudaEvent_t e);

  Result<void> init(int dev);

  // The device, the driver, the hardware engines, per-phase host times and the self-test, as
  // one JSON object (info_json, describe_devices).
  nlohmann::ordered_json describe() const;
};

// Compact JSON text; strings that are not UTF-8 are repaired, not refused.
std::string json_text(const nlohmann::ordered_json& j);

// The device asked for: "" (PIXPATH_CUDA_DEVICE, else 0), an index ("1", "cuda:1"), a PCI bus
// id ("0000:3b:00.0") or part of the name ("H200").
Result<int> select_device(std::string spec);
// The per-device cache: one DeviceState per device for the whole process while any engine uses
// it.
Result<std::shared_ptr<DeviceState>> device_state(int dev);

}  // namespace pixpath::cuda
