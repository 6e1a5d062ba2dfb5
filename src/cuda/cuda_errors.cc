#include "cuda_errors.h"

#include <cstdlib>
#include <cstring>

namespace pixpath::cuda {

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

bool inject_failure(const char* stage) {
  const char* v = std::getenv("PIXPATH_CUDA_INJECT_FAILURE");
  return v && std::strcmp(v, stage) == 0;
}

}  // namespace pixpath::cuda
