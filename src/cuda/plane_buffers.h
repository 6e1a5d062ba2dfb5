// Device memory for decoded planes: nvJPEG's stream-ordered allocators (nvjpegCreateExV2),
// grow-only buffers in the device's memory pool, and the planar YCbCr (or Y) set nvJPEG writes
// at the JPEG's own chroma resolution, with the names of nvJPEG's subsampling and encodings.
#pragma once

#include <cuda_runtime_api.h>
#include <nvjpeg.h>

#include <cstddef>

#include "pixpath/core/result.h"
#include "ycc_to_rgba.h"

namespace pixpath::cuda {

inline size_t align_up(size_t v, size_t a) { return (v + a - 1) / a * a; }

// Stream-ordered allocators for nvJPEG (nvjpegCreateExV2): device memory from the device's
// pool (ctx: the cudaMemPool_t), pinned memory from cudaHostAlloc (kept by nvJPEG, padded to
// avoid reallocation).
int pool_malloc(void* ctx, void** ptr, size_t size, cudaStream_t stream);
int pool_free(void*, void* ptr, size_t, cudaStream_t stream);
int pinned_malloc(void*, void** ptr, size_t size, cudaStream_t);
int pinned_free(void*, void* ptr, size_t, cudaStream_t);

// A grow-only device buffer in the pool, stream-ordered on its owner's stream.
struct DeviceBuffer {
  void* ptr = nullptr;
  size_t size = 0;
  Result<void> reserve(size_t bytes, cudaMemPool_t pool, cudaStream_t stream);
  void release(cudaStream_t stream);
};

// Planar YCbCr (or Y) as nvJPEG writes it, at the JPEG's own chroma resolution.
struct PlaneSet {
  DeviceBuffer buffer;
  nvjpegImage_t image{};
  PlaneIn planes[3];
  int components = 0;
  ChromaLayout layout = ChromaLayout::k444;
  int width = 0, height = 0;

  // Lays out planes of the given sizes in the buffer.
  Result<void> prepare(int comps, const unsigned (&w)[3], const unsigned (&h)[3],
                       cudaMemPool_t pool, cudaStream_t stream);
};

ChromaLayout layout_for(nvjpegChromaSubsampling_t css, int components);
const char* css_name(nvjpegChromaSubsampling_t css);
const char* encoding_name(nvjpegJpegEncoding_t e);

}  // namespace pixpath::cuda
