#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cuda_errors.h"
#include "nvjpeg_engine.h"
#include "self_test.h"

namespace pixpath::cuda {

Result<void> NvjpegEngine::run_self_test(int decodes) {
  auto& st = d_->self_test;
  if (st.ran) return st.passed ? ok() : Result<void>(gpu_error(ErrorCode::Unavailable, "gpu self-test", st.detail));
  st.ran = true;
  abi::DecodeRequest r;
  r.data = selftest_jpg;
  r.size = selftest_jpg_size;
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
      MutexLock lock(d_->batch_mu);
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

}  // namespace pixpath::cuda
