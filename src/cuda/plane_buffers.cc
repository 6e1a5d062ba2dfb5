#include "plane_buffers.h"

#include <algorithm>

#include "cuda_errors.h"

namespace pixpath::cuda {

int pool_malloc(void* ctx, void** ptr, size_t size, cudaStream_t stream) {
  return cudaMallocFromPoolAsync(ptr, size, static_cast<cudaMemPool_t>(ctx), stream) == cudaSuccess ? 0 : 1;
}
int pool_free(void*, void* ptr, size_t, cudaStream_t stream) {
  return cudaFreeAsync(ptr, stream) == cudaSuccess ? 0 : 1;
}
int pinned_malloc(void*, void** ptr, size_t size, cudaStream_t) {
  return cudaHostAlloc(ptr, size, cudaHostAllocDefault) == cudaSuccess ? 0 : 1;
}
int pinned_free(void*, void* ptr, size_t, cudaStream_t) {
  return cudaFreeHost(ptr) == cudaSuccess ? 0 : 1;
}

Result<void> DeviceBuffer::reserve(size_t bytes, cudaMemPool_t pool, cudaStream_t stream) {
  if (bytes <= size) return ok();
  if (ptr) (void)cudaFreeAsync(ptr, stream);
  ptr = nullptr;
  size = 0;
  const size_t want = align_up(bytes + bytes / 4, size_t{1} << 20);
  CUDA_TRY("gpu memory", cudaMallocFromPoolAsync(&ptr, want, pool, stream));
  size = want;
  return ok();
}

void DeviceBuffer::release(cudaStream_t stream) {
  if (ptr) (void)cudaFreeAsync(ptr, stream);
  ptr = nullptr;
  size = 0;
}

Result<void> PlaneSet::prepare(int comps, const unsigned (&w)[3], const unsigned (&h)[3],
                               cudaMemPool_t pool, cudaStream_t stream) {
  size_t offsets[3] = {}, total = 0;
  size_t pitches[3] = {};
  for (int c = 0; c < comps; ++c) {
    pitches[c] = align_up(std::max(1u, w[c]), 64);
    offsets[c] = total;
    total += pitches[c] * std::max(1u, h[c]);
  }
  PIXPATH_CHECK(buffer.reserve(total, pool, stream));
  image = nvjpegImage_t{};
  for (int c = 0; c < comps; ++c) {
    auto* p = static_cast<unsigned char*>(buffer.ptr) + offsets[c];
    image.channel[c] = p;
    image.pitch[c] = pitches[c];
    planes[c] = PlaneIn{p, static_cast<int>(pitches[c]), static_cast<int>(w[c]), static_cast<int>(h[c])};
  }
  components = comps;
  return ok();
}

ChromaLayout layout_for(nvjpegChromaSubsampling_t css, int components) {
  if (components == 1) return ChromaLayout::kGray;
  switch (css) {
    case NVJPEG_CSS_444: return ChromaLayout::k444;
    case NVJPEG_CSS_422: return ChromaLayout::k422;
    case NVJPEG_CSS_420: return ChromaLayout::k420;
    case NVJPEG_CSS_440: return ChromaLayout::k440;
    case NVJPEG_CSS_GRAY: return ChromaLayout::kGray;
    default: return ChromaLayout::kNearest;
  }
}

const char* css_name(nvjpegChromaSubsampling_t css) {
  switch (css) {
    case NVJPEG_CSS_444: return "4:4:4";
    case NVJPEG_CSS_422: return "4:2:2";
    case NVJPEG_CSS_420: return "4:2:0";
    case NVJPEG_CSS_440: return "4:4:0";
    case NVJPEG_CSS_411: return "4:1:1";
    case NVJPEG_CSS_410: return "4:1:0";
    case NVJPEG_CSS_410V: return "4:1:0V";
    case NVJPEG_CSS_GRAY: return "gray";
    default: return "unknown";
  }
}

const char* encoding_name(nvjpegJpegEncoding_t e) {
  switch (e) {
    case NVJPEG_ENCODING_BASELINE_DCT: return "baseline";
    case NVJPEG_ENCODING_EXTENDED_SEQUENTIAL_DCT_HUFFMAN: return "extended";
    case NVJPEG_ENCODING_PROGRESSIVE_DCT_HUFFMAN: return "progressive";
    case NVJPEG_ENCODING_LOSSLESS_HUFFMAN: return "lossless";
    default: return "unknown";
  }
}

}  // namespace pixpath::cuda
