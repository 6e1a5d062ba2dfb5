// The own decoder's errors: subject "jpeg", stage "own gpu decode", and the reason (a failed
// CUDA call names itself and its status). OWN_CUDA_TRY returns such an error from the enclosing
// function when a CUDA call fails.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "pixpath/core/result.h"

namespace pixpath::cuda::own_jpeg {

inline Error gpu_error(ErrorCode code, std::string reason) {
  return Error(code, "jpeg", "own gpu decode", std::move(reason));
}
inline Error cuda_error(const char* what, cudaError_t e) {
  return gpu_error(ErrorCode::Internal, std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace pixpath::cuda::own_jpeg

#define OWN_CUDA_TRY(what, expr)                                                      \
  do {                                                                                \
    const cudaError_t own_e_ = (expr);                                                \
    if (own_e_ != cudaSuccess) return ::pixpath::cuda::own_jpeg::cuda_error(what, own_e_); \
  } while (0)
