// Chroma upsampling and YCbCr -> RGB of one output pixel, bit-exact to libjpeg-turbo's default
// decompression (tjDecompress2 without TJFLAG_FASTUPSAMPLE): jdsample.c's "fancy" triangle
// filters h2v1 (4:2:2), h1v2 (4:4:0) and h2v2 (4:2:0) with their rounding biases and edge
// replication, and jdcolor.c's ycc_rgb_convert (16 fractional bits, ONE_HALF rounding, clamp).
// libjpeg-turbo's SIMD versions give the same values. For pixpath's own decoder: the CPU tests
// and the CUDA kernel call the same functions (PIXPATH_HD, see jpeg_entropy_kernels.h).
// Not covered: libjpeg-turbo falls back to box upsampling for a chroma plane 1 or 2 samples
// wide (fancy upsampling needs 3); callers refuse such pictures.
// Threading: pure functions. Lifetime: SamplePlane views memory the caller owns.
#pragma once

#include <cstdint>

#include "pixpath/codecs/jpeg_entropy_kernels.h"  // PIXPATH_HD

namespace pixpath::codecs::jpeg {

enum class Upsampling : uint8_t { None, H2V1, H1V2, H2V2 };

// One component's samples (the IDCT output): `width` x `height` real samples.
struct SamplePlane {
  const uint8_t* data = nullptr;
  uint32_t pitch = 0;
  int width = 0, height = 0;
};

PIXPATH_HD int sample_at(const SamplePlane& p, int x, int y) {
  return p.data[static_cast<uint64_t>(y) * p.pitch + static_cast<uint32_t>(x)];
}

PIXPATH_HD int clamp_index(int v, int hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

// The chroma sample at output pixel (x, y).
PIXPATH_HD int upsampled(const SamplePlane& p, Upsampling u, int x, int y) {
  switch (u) {
    case Upsampling::H2V1: {  // h2v1_fancy_upsample
      const int cx = x >> 1, cy = clamp_index(y, p.height - 1);
      const int c3 = 3 * sample_at(p, cx, cy);
      return (x & 1) ? (c3 + sample_at(p, clamp_index(cx + 1, p.width - 1), cy) + 2) >> 2
                     : (c3 + sample_at(p, clamp_index(cx - 1, p.width - 1), cy) + 1) >> 2;
    }
    case Upsampling::H1V2: {  // h1v2_fancy_upsample
      const int cx = clamp_index(x, p.width - 1), cy = y >> 1;
      const int c3 = 3 * sample_at(p, cx, cy);
      return (y & 1) ? (c3 + sample_at(p, cx, clamp_index(cy + 1, p.height - 1)) + 2) >> 2
                     : (c3 + sample_at(p, cx, clamp_index(cy - 1, p.height - 1)) + 1) >> 2;
    }
    case Upsampling::H2V2: {  // h2v2_fancy_upsample: column sums of two rows, then across
      const int cx = x >> 1, cy = y >> 1;
      const int cyn = clamp_index((y & 1) ? cy + 1 : cy - 1, p.height - 1);
      const int cxn = clamp_index((x & 1) ? cx + 1 : cx - 1, p.width - 1);
      const int sum = 3 * sample_at(p, cx, cy) + sample_at(p, cx, cyn);
      const int sum_n = 3 * sample_at(p, cxn, cy) + sample_at(p, cxn, cyn);
      return (3 * sum + sum_n + ((x & 1) ? 7 : 8)) >> 4;
    }
    case Upsampling::None:
    default:
      return sample_at(p, clamp_index(x, p.width - 1), clamp_index(y, p.height - 1));
  }
}

PIXPATH_HD uint8_t clamp_sample(int v) {
  return static_cast<uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

// jdcolor.c ycc_rgb_convert for one pixel.
PIXPATH_HD void ycc_to_rgb(int y, int cb, int cr, uint8_t* rgb) {
  cb -= 128;
  cr -= 128;
  // Arithmetic right shifts of negative values, as libjpeg's RIGHT_SHIFT on these compilers.
  rgb[0] = clamp_sample(y + ((91881 * cr + 32768) >> 16));
  rgb[1] = clamp_sample(y + ((-22554 * cb - 46802 * cr + 32768) >> 16));
  rgb[2] = clamp_sample(y + ((116130 * cb + 32768) >> 16));
}

// Output pixel (x, y) of a gray (cb/cr null) or YCbCr picture as RGBA (alpha 255).
PIXPATH_HD void jpeg_pixel_rgba(const SamplePlane& luma, const SamplePlane* cb,
                                const SamplePlane* cr, Upsampling chroma, int x, int y,
                                uint8_t* rgba) {
  const int l = sample_at(luma, x, y);
  if (!cb || !cr) {
    rgba[0] = rgba[1] = rgba[2] = static_cast<uint8_t>(l);
  } else {
    ycc_to_rgb(l, upsampled(*cb, chroma, x, y), upsampled(*cr, chroma, x, y), rgba);
  }
  rgba[3] = 255;
}

}  // namespace pixpath::codecs::jpeg
