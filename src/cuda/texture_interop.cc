// The GL texture side of the engine: a texture is registered with CUDA once
// (cudaGraphicsGLRegisterImage), mapped and unmapped on the one texture stream around each
// write, written through a surface object (the conversion kernel) or a 2-D copy, and followed by
// a fence the caller waits on with GL or the host.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "cuda_errors.h"
#include "nvjpeg_engine.h"

// CUDA-GL interop without GL headers (GLuint and GLenum are unsigned int): the module never
// links GL; the GL context is the caller's, current on the calling thread.
extern "C" cudaError_t CUDARTAPI cudaGraphicsGLRegisterImage(cudaGraphicsResource** resource,
                                                             unsigned int image,
                                                             unsigned int target,
                                                             unsigned int flags);

namespace pixpath::cuda {
namespace {

constexpr unsigned int kGlTexture2D = 0x0DE1;

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

}  // namespace

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
Result<void*> NvjpegEngine::decode_to_texture(const abi::DecodeRequest& r, const abi::TextureTarget& t) {
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
    PIXPATH_TRY(ts, lock_texture_stream(paint));
    CUDA_TRY("gpu texture", cudaGraphicsMapResources(1, &reg->resource, ts));
    if (trace) (void)cudaEventRecord(tev[1], ts);
    mapped = true;
    return ok();
  };
  auto result = [&]() -> Result<void> {
    PIXPATH_TRY(ParsedImage img, decode_all(s, r, map));
    // The own decoder's damage words, and the end of its decode, before the conversion and the
    // unmap are queued. Measured on the H200 (2026-12-03): with the unmap queued while the
    // decode still ran, 1080p / 4K q50 reached the GL end 0.19 / 0.28 ms later; making the
    // decode wait for the map on the GPU, or the unmap for the conversion, gained nothing.
    PIXPATH_CHECK(finish_own(s));
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
  (void)finish_own(s);  // after a failure: nothing left queued for the slot's next user
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
      MutexLock lock(trace_.mu);
      trace_.map.push_back(ms[0]);
      trace_.decode.push_back(ms[1]);
      trace_.convert_after_decode.push_back(ms[2]);
      trace_.unmap.push_back(ms[3]);
    }
    (void)cudaStreamSynchronize(ts);
    for (auto e : tev) (void)cudaEventDestroy(e);
  }
  if (!result) return result.error();
  return record_fence(paint);
}

bool NvjpegEngine::texture_trace_on() {
  static const bool on = std::getenv("PIXPATH_CUDA_TEXTURE_TRACE") != nullptr;
  return on;
}

nlohmann::ordered_json NvjpegEngine::texture_trace_json() {
  MutexLock lock(trace_.mu);
  auto med = [](std::vector<float> v) {
    if (v.empty()) return -1.0f;
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  nlohmann::ordered_json j;
  j["frames"] = trace_.map.size();
  j["start_to_map_done"] = med(trace_.map);
  j["start_to_decoded"] = med(trace_.decode);
  j["decoded_to_converted"] = med(trace_.convert_after_decode);
  j["converted_to_unmapped"] = med(trace_.unmap);
  return j;
}

Result<void> NvjpegEngine::prepare_texture(const abi::TextureTarget& target) {
  PIXPATH_CHECK(bind());
  PIXPATH_TRY(TextureRegistration* reg, registration(target));
  MutexLock paint(paint_mu_);
  PIXPATH_TRY(cudaStream_t ts, texture_stream());
  CUDA_TRY("gpu texture", cudaGraphicsMapResources(1, &reg->resource, ts));
  CUDA_TRY("gpu texture", cudaGraphicsUnmapResources(1, &reg->resource, ts));
  return ok();
}

void NvjpegEngine::forget_texture(uint32_t texture) {
  (void)bind();
  MutexLock lock(d_->textures_mu);
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
Result<void*> NvjpegEngine::copy_to_textures(const abi::DeviceCopy* copies, size_t count) {
  PIXPATH_CHECK(bind());
  if (count == 0) return gpu_error(ErrorCode::InvalidArgument, "gpu texture", "nothing to copy");
  if (inject_failure("texture"))
    return gpu_error(ErrorCode::Internal, "gpu texture", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)");
  MutexLock lock(paint_mu_);
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

Result<cudaStream_t> NvjpegEngine::texture_stream() {
  if (!paint_stream_) CUDA_TRY("gpu texture", cudaStreamCreateWithFlags(&paint_stream_, cudaStreamNonBlocking));
  return paint_stream_;
}

Result<cudaStream_t> NvjpegEngine::lock_texture_stream(std::unique_lock<Mutex>& paint) {
  if (!paint.owns_lock()) paint.lock();
  return texture_stream();
}

Result<void*> NvjpegEngine::record_fence(std::unique_lock<Mutex>& paint) {
  if (!paint.owns_lock())
    return gpu_error(ErrorCode::Internal, "gpu texture", "fence asked for without the texture lock");
  return record_fence();
}

Result<void*> NvjpegEngine::record_fence() {
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

int NvjpegEngine::query_fence(void* fence) {
  const cudaError_t e = cudaEventQuery(static_cast<cudaEvent_t>(fence));
  return e == cudaSuccess ? 1 : (e == cudaErrorNotReady ? 0 : -1);
}

Result<void> NvjpegEngine::wait_fence(void* fence) {
  CUDA_TRY("gpu texture", cudaEventSynchronize(static_cast<cudaEvent_t>(fence)));
  return ok();
}

void NvjpegEngine::release_fence(void* fence) {
  MutexLock lock(paint_mu_);
  free_fences_.push_back(static_cast<cudaEvent_t>(fence));
}

Error NvjpegEngine::does_not_fit(int width, int height, const abi::TextureTarget& t) {
  return gpu_error(ErrorCode::OutOfRange, "gpu texture",
                   "picture " + std::to_string(width) + "x" + std::to_string(height) + " at " +
                       std::to_string(t.x) + "," + std::to_string(t.y) + " does not fit the " +
                       std::to_string(t.texture_width) + "x" + std::to_string(t.texture_height) +
                       " texture");
}

Result<NvjpegEngine::TextureSet> NvjpegEngine::texture_set(const std::vector<TextureWrite>& writes) {
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

Result<TextureRegistration*> NvjpegEngine::registration(const abi::TextureTarget& t) {
  if (t.texture == 0 || t.texture_width <= 0 || t.texture_height <= 0 || t.x < 0 || t.y < 0)
    return gpu_error(ErrorCode::InvalidArgument, "gpu texture", "no texture, or a negative position");
  MutexLock lock(d_->textures_mu);
  auto it = d_->textures.find(t.texture);
  if (it != d_->textures.end()) return &it->second;
  TextureRegistration reg;
  CUDA_TRY("gpu texture", cudaGraphicsGLRegisterImage(&reg.resource, t.texture, kGlTexture2D,
                                                      cudaGraphicsRegisterFlagsSurfaceLoadStore));
  return &d_->textures.emplace(t.texture, reg).first->second;
}

Result<void> NvjpegEngine::surface_for(TextureRegistration& reg, cudaStream_t stream) {
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

}  // namespace pixpath::cuda
