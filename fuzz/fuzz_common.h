// Shared by the decoder fuzz targets: decode into every kind of destination the decoder
// takes, with limits small enough for the fuzzer's memory budget.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <span>
#include <vector>

#include "pixpath/codecs/registry.h"

namespace pixpath::codecs::fuzz {

inline DecodeLimits fuzz_limits() {
  DecodeLimits l;
  l.max_width = 4096;
  l.max_height = 4096;
  l.max_pixels = 2048 * 2048;
  l.max_decompressed_bytes = 64 << 20;
  return l;
}

// Decodes `data` into a padded buffer of `format` and checks the padding afterwards.
inline void decode_into_format(const Decoder& d, std::span<const uint8_t> data,
                               const DecodeParams& params, PixelFormat format) {
  auto inf = d.inspect(data, params);
  if (!inf.ok()) return;
  const auto& fi = info(format);
  const int w = inf->width, h = inf->height;
  std::vector<std::vector<uint8_t>> mem(size_t(fi.planes));
  uint8_t* ptrs[kMaxPlanes] = {};
  size_t strides[kMaxPlanes] = {};
  constexpr size_t kPad = 16;
  for (int i = 0; i < fi.planes; ++i) {
    const size_t row = size_t(plane_width(format, i, w)) * size_t(fi.bytes_per_pixel[i]);
    strides[i] = row + 7;
    mem[size_t(i)].assign(strides[i] * size_t(plane_height(format, i, h)) + kPad, 0x5A);
    ptrs[i] = mem[size_t(i)].data();
  }
  auto view = make_view(format, w, h, std::span<uint8_t* const>(ptrs, size_t(fi.planes)),
                        std::span<const size_t>(strides, size_t(fi.planes)));
  if (!view.ok()) return;
  (void)d.decode_into(data, params, *view);
  for (int i = 0; i < fi.planes; ++i) {
    const auto& m = mem[size_t(i)];
    for (size_t k = m.size() - kPad; k < m.size(); ++k) {
      if (m[k] != 0x5A) std::abort();  // wrote past the destination
    }
  }
}

}  // namespace pixpath::codecs::fuzz
