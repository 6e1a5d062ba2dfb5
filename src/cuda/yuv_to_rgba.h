// The video frames' conversion kernel: 8-bit YUV planes decoded by NVDEC (NV12, or planar
// 4:2:0 / 4:4:4) -> RGBA in CUDA memory, BT.601 or BT.709, studio or full range, with the
// coefficients and chroma siting of the GL backing's YUV shader (gl/paint_program.cc: chroma
// replicated, i.e. sample (x >> shift, y >> shift) for unscaled paints; values rounded to the
// nearest level), so a frame painted from the GPU matches the one the CPU path paints within a
// level or two.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace pixpath::cuda {

enum class YuvLayout : int { kNv12 = 0, kI420 = 1, kI444 = 2 };

struct YuvJob {
  const uint8_t* plane[3] = {};  // NV12: Y, interleaved UV; planar: Y, U, V
  size_t pitch[3] = {};
  YuvLayout layout = YuvLayout::kNv12;
  int width = 0, height = 0;
  bool bt709 = false, full_range = false;
  uint8_t* out = nullptr;  // linear RGBA, out_pitch bytes per row
  size_t out_pitch = 0;
};

// Queues the conversion on `stream`. Returns the launch error, if any.
cudaError_t launch_yuv_to_rgba(const YuvJob& job, cudaStream_t stream);

}  // namespace pixpath::cuda
