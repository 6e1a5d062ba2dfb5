#include "ycc_to_rgba.h"

namespace pixpath::cuda {
namespace {

__device__ __forceinline__ int at(const PlaneIn& p, int x, int y) {
  return p.ptr[static_cast<size_t>(y) * p.pitch + x];
}

// libjpeg-turbo jdsample.c, fancy upsampling, per output sample.
__device__ __forceinline__ int chroma(const PlaneIn& p, ChromaLayout layout, int x, int y,
                                      int width, int height) {
  switch (layout) {
    case ChromaLayout::k444:
      return at(p, min(x, p.width - 1), min(y, p.height - 1));
    case ChromaLayout::k422: {  // h2v1_fancy_upsample
      const int cx = x >> 1, cy = min(y, p.height - 1);
      const int c = at(p, cx, cy);
      if (x & 1) return (3 * c + at(p, min(cx + 1, p.width - 1), cy) + 2) >> 2;
      return (3 * c + at(p, max(cx - 1, 0), cy) + 1) >> 2;
    }
    case ChromaLayout::k440: {  // h1v2_fancy_upsample
      const int cx = min(x, p.width - 1), cy = y >> 1;
      const int c = at(p, cx, cy);
      if (y & 1) return (3 * c + at(p, cx, min(cy + 1, p.height - 1)) + 2) >> 2;
      return (3 * c + at(p, cx, max(cy - 1, 0)) + 1) >> 2;
    }
    case ChromaLayout::k420: {  // h2v2_fancy_upsample
      const int cx = x >> 1, cy = y >> 1;
      const int cyn = (y & 1) ? min(cy + 1, p.height - 1) : max(cy - 1, 0);
      const int cxn = (x & 1) ? min(cx + 1, p.width - 1) : max(cx - 1, 0);
      const int sum = 3 * at(p, cx, cy) + at(p, cx, cyn);
      const int sum_n = 3 * at(p, cxn, cy) + at(p, cxn, cyn);
      return (3 * sum + sum_n + ((x & 1) ? 7 : 8)) >> 4;
    }
    case ChromaLayout::kGray:
      return 128;
    case ChromaLayout::kNearest:
    default: {
      const int cx = min(static_cast<int>((static_cast<long long>(x) * p.width) / width), p.width - 1);
      const int cy = min(static_cast<int>((static_cast<long long>(y) * p.height) / height), p.height - 1);
      return at(p, cx, cy);
    }
  }
}

__device__ __forceinline__ uint8_t clamp255(int v) {
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

template <bool kSurface>
__global__ void ycc_to_rgba_kernel(ConvertJob job) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= job.width || y >= job.height) return;
  const int luma = at(job.y, x, y);
  uchar4 px;
  if (job.layout == ChromaLayout::kGray) {
    px = make_uchar4(luma, luma, luma, 255);
  } else {
    // jdcolor.c ycc_rgb_convert: SCALEBITS 16, ONE_HALF rounding, arithmetic shifts.
    const int cb = chroma(job.cb, job.layout, x, y, job.width, job.height) - 128;
    const int cr = chroma(job.cr, job.layout, x, y, job.width, job.height) - 128;
    const int r = luma + ((91881 * cr + 32768) >> 16);
    const int g = luma + ((-22554 * cb - 46802 * cr + 32768) >> 16);
    const int b = luma + ((116130 * cb + 32768) >> 16);
    px = make_uchar4(clamp255(r), clamp255(g), clamp255(b), 255);
  }
  if (job.alpha.ptr) px.w = static_cast<uint8_t>(at(job.alpha, x, y));
  if constexpr (kSurface) {
    surf2Dwrite(px, job.surface, (job.x0 + x) * 4, job.y0 + y);
  } else {
    *reinterpret_cast<uchar4*>(job.out + static_cast<size_t>(y) * job.out_pitch + 4 * static_cast<size_t>(x)) = px;
  }
}

}  // namespace

cudaError_t launch_ycc_to_rgba(const ConvertJob& job, cudaStream_t stream) {
  if (job.width <= 0 || job.height <= 0) return cudaSuccess;
  const dim3 block(32, 8);
  const dim3 grid((job.width + block.x - 1) / block.x, (job.height + block.y - 1) / block.y);
  if (job.surface)
    ycc_to_rgba_kernel<true><<<grid, block, 0, stream>>>(job);
  else
    ycc_to_rgba_kernel<false><<<grid, block, 0, stream>>>(job);
  return cudaGetLastError();
}

}  // namespace pixpath::cuda
