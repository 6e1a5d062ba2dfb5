// The one conversion kernel of the GPU path: nvJPEG's planar YCbCr (at the JPEG's own chroma
// resolution) -> RGBA, with chroma upsampling, the jpega alpha merge and the write into CUDA
// memory or into a GL texture region (a surface object), all in one pass.
//
// Matches libjpeg-turbo's default decompression (tjDecompress2 without TJFLAG_FASTUPSAMPLE):
// "fancy" triangle-filter upsampling for 4:2:2 (h2v1), 4:4:0 (h1v2) and 4:2:0 (h2v2) with the
// same rounding biases and edge replication, and jdcolor.c's fixed-point BT.601 full-range
// YCbCr -> RGB (16 fractional bits, same rounding). What can remain different is the IDCT: on
// the H200 the hardware engines' planes gave output identical to tjDecompress2, the decoupled
// HYBRID / GPU_HYBRID backends differ by up to 3 levels (gpu_jpeg_test.cc states the
// tolerance). 4:1:1 / 4:1:0 are upsampled by replication (nearest).
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

namespace pixpath::cuda {

enum class ChromaLayout : int { k444 = 0, k422 = 1, k420 = 2, k440 = 3, kGray = 4, kNearest = 5 };

struct PlaneIn {
  const uint8_t* ptr = nullptr;
  int pitch = 0;
  int width = 0, height = 0;
};

struct ConvertJob {
  PlaneIn y, cb, cr;
  PlaneIn alpha;  // ptr == nullptr: opaque (alpha 255)
  ChromaLayout layout = ChromaLayout::k444;
  int width = 0, height = 0;
  // Destination: exactly one of
  uint8_t* out = nullptr;  // linear RGBA, out_pitch bytes per row
  size_t out_pitch = 0;
  cudaSurfaceObject_t surface = 0;  // an RGBA8 texture's array; the picture goes at (x0, y0)
  int x0 = 0, y0 = 0;
};

// Queues the conversion on `stream`. Returns the launch error, if any.
cudaError_t launch_ycc_to_rgba(const ConvertJob& job, cudaStream_t stream);

}  // namespace pixpath::cuda
