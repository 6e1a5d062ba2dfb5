// The GPU module's errors: every failure is a pixpath::Error with the subject "jpeg", the stage
// ("gpu decode", "gpu texture", ...) and the reason, which names the failed call and its status.
// NVJ_TRY / CUDA_TRY return such an error from the enclosing function when a call fails.
#pragma once

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <string>

#include "pixpath/core/result.h"

namespace pixpath::cuda {

Error gpu_error(ErrorCode code, std::string stage, std::string reason);
const char* nvjpeg_status_name(nvjpegStatus_t s);
// The code follows the status: a corrupt or truncated JPEG, an unsupported one, out of memory.
Error nvjpeg_error(const std::string& stage, const char* call, nvjpegStatus_t s);
Error cuda_error(const std::string& stage, const char* call, cudaError_t e);

// A test hook: PIXPATH_CUDA_INJECT_FAILURE=<stage> makes that stage fail ("decode", "convert",
// "texture"), to exercise the caller's CPU fallback.
bool inject_failure(const char* stage);

}  // namespace pixpath::cuda

#define NVJ_TRY(stage, expr)                                           \
  do {                                                                 \
    const nvjpegStatus_t pp_s_ = (expr);                               \
    if (pp_s_ != NVJPEG_STATUS_SUCCESS) return ::pixpath::cuda::nvjpeg_error(stage, #expr, pp_s_); \
  } while (0)
#define CUDA_TRY(stage, expr)                                          \
  do {                                                                 \
    const cudaError_t pp_e_ = (expr);                                  \
    if (pp_e_ != cudaSuccess) return ::pixpath::cuda::cuda_error(stage, #expr, pp_e_);  \
  } while (0)
