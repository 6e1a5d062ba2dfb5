// The NVIDIA driver's CUDA and NVDEC entry points, loaded at run time through ffnvcodec's loader
// header (Debian libffmpeg-nvenc-dev), once per process and kept: nvdec_caps() and
// bench/cuda/nvdec_probe use them. Internal to pixpath; only where that header exists
// (PIXPATH_HAVE_FFNVCODEC). A user includes <ffnvcodec/dynlink_loader.h> for the tables' types.
#pragma once

#if __has_include(<ffnvcodec/dynlink_loader.h>)
#define PIXPATH_HAVE_FFNVCODEC 1

#include <string>

typedef struct CudaFunctions CudaFunctions;
typedef struct CuvidFunctions CuvidFunctions;

namespace pixpath::codecs::nvdec {

struct Driver {
  CudaFunctions* cu = nullptr;   // null when `error` says why
  CuvidFunctions* cv = nullptr;  // null when `error` says why
  std::string error;             // empty: both loaded (cuInit is the caller's)
};

// Thread-safe; the first call loads libcuda.so.1 and libnvcuvid.so.1.
const Driver& driver();

}  // namespace pixpath::codecs::nvdec

#endif
