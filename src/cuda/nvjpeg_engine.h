// The nvJPEG engine behind pixpath::cuda::GpuJpegDecoder (one per window, sharing its device's
// DeviceState). Its parts, one file each:
//   nvjpeg_engine.cc   the ABI entry points (create, describe_devices), device memory, events
//   picture_decode.cc  one picture: parse, route, decode into planes, convert into pool memory
//   texture_interop.cc GL textures: registration, map/unmap, surfaces, the texture stream, fences
//   hardware_batch.cc  several pictures as one batch on the hardware JPEG engines
//   self_test.cc       the start-up self-test
//   video_convert.cc   video frames (NVDEC through libavcodec) -> RGBA (yuv_to_rgba.cu)
//
// One picture: nvjpegJpegStreamParse -> nvjpegDecodeJpegHost -> ...TransferToDevice ->
// ...DecodeJpegDevice into planar YCbCr at the JPEG's own chroma resolution, then one kernel
// (ycc_to_rgba.cu) upsamples, converts, merges the jpega alpha and writes RGBA into pool
// memory, a scratch buffer for host readback, or a GL texture through a surface object.
#pragma once

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cuda/module_abi.h"
#include "device_state.h"
#include "pixpath/core/thread_annotations.h"
#include "ycc_to_rgba.h"

namespace pixpath::cuda {

struct ParsedImage {
  int width = 0, height = 0, components = 0;
  nvjpegChromaSubsampling_t css = NVJPEG_CSS_UNKNOWN;
  nvjpegJpegEncoding_t encoding = NVJPEG_ENCODING_UNKNOWN;
  unsigned comp_w[3] = {}, comp_h[3] = {};
};

// Whether a picture may go to the hardware JPEG engines: colour baseline (SOF0) only. The
// engines also say yes (nvjpegDecodeBatchedSupported) to extended-sequential (SOF1) pictures
// with 16-bit quantisation tables, cjpeg's output below quality ~25, and decode them wrong: up
// to 236 levels off libjpeg-turbo on the H200 (driver 580.159, nvJPEG 13.0.1; issue 15,
// docs/exactness.md); the decoupled backends decode those within 3.
inline bool for_the_engines(const ParsedImage& p) {
  return p.components == 3 && p.encoding == NVJPEG_ENCODING_BASELINE_DCT;
}

class NvjpegEngine final : public abi::Engine {
 public:
  explicit NvjpegEngine(std::shared_ptr<DeviceState> d) : d_(std::move(d)) {}
  ~NvjpegEngine() override;

  // picture_decode.cc
  Result<abi::ImageHeader> inspect(const abi::DecodeRequest& r) override;
  Result<abi::DeviceImage> decode_to_device(const abi::DecodeRequest& r) override;
  Result<void> decode_to_host(const abi::DecodeRequest& r, uint8_t* dst, size_t dst_pitch,
                              int width, int height) override;

  // texture_interop.cc
  Result<void*> decode_to_texture(const abi::DecodeRequest& r, const abi::TextureTarget& t) override;
  Result<void> prepare_texture(const abi::TextureTarget& target) override;
  void forget_texture(uint32_t texture) override;
  Result<void*> copy_to_textures(const abi::DeviceCopy* copies, size_t count) override;
  int query_fence(void* fence) override;
  Result<void> wait_fence(void* fence) override;
  void release_fence(void* fence) override;

  // hardware_batch.cc
  int hardware_engines() override;
  abi::RouteCosts route_costs() override;
  std::vector<Result<void>> decode_batch_to_textures(const abi::DecodeRequest* requests,
                                                     const abi::TextureTarget* targets,
                                                     size_t count) override;
  std::vector<Result<abi::DeviceImage>> decode_batch_to_device(const abi::DecodeRequest* requests,
                                                               size_t count) override;

  // video_convert.cc
  Result<abi::DeviceImage> convert_yuv_to_device(const abi::YuvRequest& r) override;

  // nvjpeg_engine.cc
  void release_device(void* ptr, void* stream) override;
  Result<void> wait_event(void* event) override;
  void recycle_event(void* event) override;
  Result<void*> allocate_device(size_t bytes) override;
  Result<void> copy_device_2d(void* dst, size_t dst_pitch, const void* src, size_t src_pitch,
                              size_t row_bytes, int rows) override;
  int device() const override { return d_->device; }
  const void* context() const override { return d_->context; }
  std::string info_json() override;

  // self_test.cc: the start-up self-test: real pictures, output checked against libjpeg-turbo's
  // mean colour, device memory checked flat (cudaMemGetInfo) over many decodes.
  Result<void> run_self_test(int decodes);

 private:
  Result<void> bind();

  // ---- picture_decode.cc
  using Bytes = std::pair<const uint8_t*, size_t>;
  // jpega: colour JPEG then alpha JPEG.
  std::pair<Result<Bytes>, Bytes> split(const abi::DecodeRequest& r);
  Result<ParsedImage> parse(nvjpegHandle_t handle, nvjpegJpegStream_t js, const uint8_t* data,
                            size_t size, const abi::DecodeRequest& r, bool header_only = false);
  // Parses and decodes one JPEG into `planes` on the slot's stream. `before_host` runs once
  // the stream is parsed and routed, before the host (Huffman) phase.
  Result<ParsedImage> decode_planes(Slot& s, const uint8_t* data, size_t size,
                                    const abi::DecodeRequest& r, PlaneSet& planes, bool luma_only,
                                    const std::function<Result<void>()>& before_host);
  // One baseline colour picture on the hardware engines. nullopt: the engines do not take it.
  Result<std::optional<ParsedImage>> decode_hardware(Slot& s, const uint8_t* data, size_t size,
                                                     const abi::DecodeRequest& r, PlaneSet& planes,
                                                     const std::function<Result<void>()>& before_host);
  // Colour (and, for jpega, alpha) planes of one request.
  // pixpath's own decoder (r.own): planes into the slot's own buffers, s.color pointed at them.
  Result<ParsedImage> decode_own(Slot& s, const abi::DecodeRequest& r,
                                 const std::function<Result<void>()>& before_host);
  // Queues the decode; an own-decoder picture's damage words are read by finish_own, which
  // every caller runs before its slot goes back (and before it returns the result).
  Result<ParsedImage> decode_all(Slot& s, const abi::DecodeRequest& r,
                                 const std::function<Result<void>()>& before_host);
  // Waits on the host for the slot's queued own-decoder read-backs (not for later work on its
  // stream) and writes the damage words to the request's places. No-op when none is queued.
  Result<void> finish_own(Slot& s);
  // decode_all + the conversion into pool memory on the slot's stream; finish_own not run.
  Result<abi::DeviceImage> queue_to_device(Slot& s, const abi::DecodeRequest& r);
  ConvertJob convert_job(Slot& s, const ParsedImage& img, const abi::DecodeRequest& r);
  // RGBA in new pool memory from planes, on `stream`, followed by an event of its own.
  Result<abi::DeviceImage> convert_to_device(ConvertJob job, cudaStream_t stream);
  void release_image(const abi::DeviceImage& img);

  // ---- texture_interop.cc
  // Every write into a GL texture (decode_to_texture, decode_batch_to_textures, copy_to_textures)
  // is queued on this one stream, in the order the calls were made, so two writes into one
  // texture never race.
  Result<cudaStream_t> texture_stream() PIXPATH_REQUIRES(paint_mu_);
  // A fence (blocking-sync event) recorded on the texture stream now.
  Result<void*> record_fence() PIXPATH_REQUIRES(paint_mu_);
  // For the decode callbacks that take paint_mu_ only once the picture is sized (through
  // `paint`, a deferred std::unique_lock of it, held until the fence): locks it and returns the
  // texture stream, and records the fence with it held. Clang's analysis cannot follow a
  // std::unique_lock, hence none in these two small functions; owns_lock() is checked instead.
  Result<cudaStream_t> lock_texture_stream(std::unique_lock<Mutex>& paint)
      PIXPATH_NO_THREAD_SAFETY_ANALYSIS;
  Result<void*> record_fence(std::unique_lock<Mutex>& paint) PIXPATH_NO_THREAD_SAFETY_ANALYSIS;
  static Error does_not_fit(int width, int height, const abi::TextureTarget& t);
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
  Result<TextureSet> texture_set(const std::vector<TextureWrite>& writes);
  Result<TextureRegistration*> registration(const abi::TextureTarget& t);
  // The surface object for the texture's mapped array; made again only if the array changed.
  Result<void> surface_for(TextureRegistration& reg, cudaStream_t stream);

  // PIXPATH_CUDA_TEXTURE_TRACE=1 (measurements only): decode_to_texture records timed events
  // (start, map done, planes decoded, converted, unmapped) and waits for them, and info_json
  // reports the median GPU time of each step; the path is then synchronous.
  struct TextureTrace {
    Mutex mu;
    std::vector<float> map PIXPATH_GUARDED_BY(mu);
    std::vector<float> decode PIXPATH_GUARDED_BY(mu);
    std::vector<float> convert_after_decode PIXPATH_GUARDED_BY(mu);
    std::vector<float> unmap PIXPATH_GUARDED_BY(mu);
  };
  static bool texture_trace_on();
  nlohmann::ordered_json texture_trace_json();

  // PIXPATH_CUDA_BATCH_TRACE=1 (measurements only): decode_batch_to_device times its host steps
  // (the whole call; the hardware batch's wait for its idle stream, its nvjpegDecodeBatched
  // call and the whole hardware part), decode_to_device its picture's queueing and, on the own
  // decoder, its wait for the damage words; info_json reports each step's median and count.
  // Every sample is kept (a measurement run's few thousand).
  struct BatchTrace {
    Mutex mu;
    std::map<std::string, std::vector<float>> ms PIXPATH_GUARDED_BY(mu);
  };
  static bool batch_trace_on();
  // The host time since `since` as one sample of `step` (when the trace is on).
  void batch_trace_add(const char* step, std::chrono::steady_clock::time_point since);
  nlohmann::ordered_json batch_trace_json();

  // ---- hardware_batch.cc
  // The hardware part of a batch: parses every request and picks the baseline
  // colour pictures without alpha the engines take; when there are two or more, decodes them as
  // one batch into the planes of the next batch state (picked[j] is the request in plane set j).
  // `before_decode` runs once the pictures are parsed and sized, before the decode is queued.
  // Requests that fail to parse are marked done with their error through `fail`. An empty
  // `picked` means nothing was decoded here.
  Result<BatchState*> batch_decode(const abi::DecodeRequest* requests, size_t count,
                                   std::vector<size_t>& picked, std::vector<bool>& done,
                                   const std::function<void(size_t, Error)>& fail,
                                   const std::function<Result<void>(BatchState&)>& before_decode)
      PIXPATH_REQUIRES(d_->batch_mu);
  // The previous pass of `b` (its stream idle) into the route's measured costs.
  void record_engine_pass(BatchState& b) PIXPATH_REQUIRES(d_->batch_mu);
  static ConvertJob plane_job(const PlaneSet& ps);
  // decode_batch_to_textures' hardware part: every distinct texture is mapped on
  // the texture stream before the batch is queued (the map's wait for GL overlaps the decode),
  // each picture converted into its region once the batch is decoded, then one unmap.
  Result<void> batch_hardware(const abi::DecodeRequest* requests, const abi::TextureTarget* targets,
                              size_t count, std::vector<Result<void>>& results,
                              std::vector<bool>& done) PIXPATH_REQUIRES(d_->batch_mu);
  // decode_batch_to_device's hardware part: one conversion per picture into new
  // pool memory on the batch's stream, each followed by its own event.
  Result<void> batch_to_device(const abi::DecodeRequest* requests, size_t count,
                               std::vector<Result<abi::DeviceImage>>& results, std::vector<bool>& done)
      PIXPATH_REQUIRES(d_->batch_mu);

  std::shared_ptr<DeviceState> d_;
  Mutex paint_mu_;
  cudaStream_t paint_stream_ PIXPATH_GUARDED_BY(paint_mu_) = nullptr;  // the texture stream
  std::vector<cudaEvent_t> free_fences_ PIXPATH_GUARDED_BY(paint_mu_);
  TextureTrace trace_;
  BatchTrace batch_trace_;
};

}  // namespace pixpath::cuda
