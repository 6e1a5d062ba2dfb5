#include "yuv_to_rgba.h"

namespace pixpath::cuda {
namespace {

struct Coefficients {
  float ys, y_off;               // luma scale and offset (levels)
  float rv, gu, gv, bu;          // chroma contributions
};

Coefficients coefficients(bool bt709, bool full_range) {
  // As gl/paint_program.cc yuv_coefficients().
  const double kr = bt709 ? 0.2126 : 0.299;
  const double kb = bt709 ? 0.0722 : 0.114;
  const double kg = 1.0 - kr - kb;
  const double ys = full_range ? 1.0 : 255.0 / 219.0;
  const double cs = full_range ? 1.0 : 255.0 / 224.0;
  Coefficients c;
  c.ys = static_cast<float>(ys);
  c.y_off = full_range ? 0.0f : 16.0f;
  c.rv = static_cast<float>(2.0 * (1.0 - kr) * cs);
  c.gu = static_cast<float>(-2.0 * kb * (1.0 - kb) / kg * cs);
  c.gv = static_cast<float>(-2.0 * kr * (1.0 - kr) / kg * cs);
  c.bu = static_cast<float>(2.0 * (1.0 - kb) * cs);
  return c;
}

__device__ __forceinline__ uint8_t to_level(float v) {
  v = v < 0.0f ? 0.0f : (v > 255.0f ? 255.0f : v);
  return static_cast<uint8_t>(__float2int_rn(v));
}

__global__ void yuv_to_rgba_kernel(YuvJob job, Coefficients c) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= job.width || y >= job.height) return;
  const float luma = job.plane[0][static_cast<size_t>(y) * job.pitch[0] + x];
  int u = 128, v = 128;
  if (job.layout == YuvLayout::kNv12) {
    const uint8_t* uv = job.plane[1] + static_cast<size_t>(y >> 1) * job.pitch[1] + 2 * (x >> 1);
    u = uv[0];
    v = uv[1];
  } else {
    const int sh = job.layout == YuvLayout::kI420 ? 1 : 0;
    u = job.plane[1][static_cast<size_t>(y >> sh) * job.pitch[1] + (x >> sh)];
    v = job.plane[2][static_cast<size_t>(y >> sh) * job.pitch[2] + (x >> sh)];
  }
  const float yy = (luma - c.y_off) * c.ys;
  const float uu = static_cast<float>(u) - 128.0f, vv = static_cast<float>(v) - 128.0f;
  uchar4 px = make_uchar4(to_level(yy + c.rv * vv), to_level(yy + c.gu * uu + c.gv * vv),
                          to_level(yy + c.bu * uu), 255);
  *reinterpret_cast<uchar4*>(job.out + static_cast<size_t>(y) * job.out_pitch + 4 * static_cast<size_t>(x)) = px;
}

}  // namespace

cudaError_t launch_yuv_to_rgba(const YuvJob& job, cudaStream_t stream) {
  if (job.width <= 0 || job.height <= 0) return cudaSuccess;
  const dim3 block(32, 8);
  const dim3 grid((job.width + block.x - 1) / block.x, (job.height + block.y - 1) / block.y);
  yuv_to_rgba_kernel<<<grid, block, 0, stream>>>(job, coefficients(job.bt709, job.full_range));
  return cudaGetLastError();
}

}  // namespace pixpath::cuda
