// Video frames decoded by NVDEC (through libavcodec's CUDA hwaccel, in the device's primary
// context) -> RGBA in pool memory, ready for copy_to_textures like a decoded JPEG. The frame's
// write was queued by libavcodec on its own stream (the legacy default stream when libavcodec
// made the CUDA device context): an event recorded there now, waited on by the slot's stream,
// orders the conversion after it without a host wait.
#include <string>

#include "cuda_errors.h"
#include "nvjpeg_engine.h"
#include "yuv_to_rgba.h"

namespace pixpath::cuda {

Result<abi::DeviceImage> NvjpegEngine::convert_yuv_to_device(const abi::YuvRequest& r) {
  if (r.width <= 0 || r.height <= 0 || !r.planes[0] || !r.planes[1] || r.layout < 0 || r.layout > 2 ||
      (r.layout != 0 && !r.planes[2]))
    return gpu_error(ErrorCode::InvalidArgument, "gpu video convert",
                     "bad frame: " + std::to_string(r.width) + "x" + std::to_string(r.height) + " layout " +
                         std::to_string(r.layout));
  PIXPATH_CHECK(bind());
  PIXPATH_TRY(auto slot, d_->acquire_slot());
  cudaStream_t stream = slot->stream;
  {
    PIXPATH_TRY(cudaEvent_t ready, d_->acquire_event());
    cudaStream_t src = r.legacy_stream ? cudaStreamLegacy : static_cast<cudaStream_t>(r.src_stream);
    const cudaError_t e1 = cudaEventRecord(ready, src);
    const cudaError_t e2 = e1 == cudaSuccess ? cudaStreamWaitEvent(stream, ready, 0) : e1;
    d_->recycle_event(ready);  // the wait took the event's state; it may be recorded again
    if (e1 != cudaSuccess) return cuda_error("gpu video convert", "cudaEventRecord(frame stream)", e1);
    if (e2 != cudaSuccess) return cuda_error("gpu video convert", "cudaStreamWaitEvent", e2);
  }
  const size_t pitch = align_up(size_t(r.width) * 4, 256);
  const size_t bytes = pitch * size_t(r.height);
  void* out = nullptr;
  CUDA_TRY("gpu video convert", cudaMallocFromPoolAsync(&out, bytes, d_->pool, stream));
  auto fail = [&](Error e) -> Result<abi::DeviceImage> {
    (void)cudaFreeAsync(out, stream);
    return e;
  };
  YuvJob job;
  for (int i = 0; i < 3; ++i) {
    job.plane[i] = r.planes[i];
    job.pitch[i] = r.pitch[i];
  }
  job.layout = static_cast<YuvLayout>(r.layout);
  job.width = r.width;
  job.height = r.height;
  job.bt709 = r.bt709;
  job.full_range = r.full_range;
  job.out = static_cast<uint8_t*>(out);
  job.out_pitch = pitch;
  if (inject_failure("video"))
    return fail(gpu_error(ErrorCode::Internal, "gpu video convert", "failure injected (PIXPATH_CUDA_INJECT_FAILURE)"));
  if (auto e = launch_yuv_to_rgba(job, stream); e != cudaSuccess)
    return fail(cuda_error("gpu video convert", "yuv_to_rgba<<<>>>", e));
  auto ev = d_->acquire_event();
  if (!ev) return fail(ev.error());
  if (auto e = cudaEventRecord(*ev, stream); e != cudaSuccess) {
    d_->recycle_event(*ev);
    return fail(cuda_error("gpu video convert", "cudaEventRecord", e));
  }
  abi::DeviceImage img;
  img.ptr = out;
  img.pitch = pitch;
  img.bytes = bytes;
  img.width = r.width;
  img.height = r.height;
  img.event = *ev;
  img.stream = stream;
  img.device = d_->device;
  img.context = d_->context;
  return img;
}

}  // namespace pixpath::cuda
