// Views: non-owning windows onto host pixels, for loops.
//
// Lifetime: a view does not own or keep alive the memory it points to. It is valid while the
// Picture (or raw buffer) it came from is alive and, for a PictureView, while that Picture
// stays the only owner. Never store a view beyond the call that made it.
//
// Accessors: row(y) is checked (aborts on an out-of-range row: a programming error, never
// input-driven); unchecked_row(y) is the named fast path for loops that checked their bounds.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>

#include "pixpath/core/pixel_format.h"
#include "pixpath/core/result.h"

namespace pixpath {

template <class Byte>
struct BasicPlaneView {
  Byte* data = nullptr;
  size_t stride = 0;
  int width = 0;   // pixels of this plane
  int height = 0;  // rows of this plane
  int bytes_per_pixel = 0;

  size_t row_bytes() const { return static_cast<size_t>(width) * bytes_per_pixel; }
  std::span<Byte> row(int y) const {
    if (y < 0 || y >= height) std::abort();
    return {data + static_cast<size_t>(y) * stride, row_bytes()};
  }
  Byte* unchecked_row(int y) const { return data + static_cast<size_t>(y) * stride; }
};
using ConstPlaneView = BasicPlaneView<const uint8_t>;
using PlaneView = BasicPlaneView<uint8_t>;

template <class Byte>
struct BasicPictureView {
  PixelFormat format = PixelFormat::GRAY8;
  int width = 0, height = 0;
  int plane_count = 0;
  std::array<BasicPlaneView<Byte>, kMaxPlanes> planes{};

  const BasicPlaneView<Byte>& plane(int i) const {
    if (i < 0 || i >= plane_count) std::abort();
    return planes[static_cast<size_t>(i)];
  }
  bool empty() const { return plane_count == 0; }
};

using ConstPictureView = BasicPictureView<const uint8_t>;

class PictureView : public BasicPictureView<uint8_t> {
 public:
  operator ConstPictureView() const {  // NOLINT: a write view is also a read view
    ConstPictureView v;
    v.format = format;
    v.width = width;
    v.height = height;
    v.plane_count = plane_count;
    for (int i = 0; i < plane_count; ++i) {
      const auto& p = planes[static_cast<size_t>(i)];
      v.planes[static_cast<size_t>(i)] = {p.data, p.stride, p.width, p.height, p.bytes_per_pixel};
    }
    return v;
  }
};

// Views over raw memory the caller owns (a mapped GL buffer, a decoder's output). Checks
// stride >= row bytes and overflow. Planar formats take one pointer and stride per plane.
Result<ConstPictureView> make_view(PixelFormat format, int width, int height,
                                   std::span<const uint8_t* const> planes,
                                   std::span<const size_t> strides);
Result<PictureView> make_view(PixelFormat format, int width, int height,
                              std::span<uint8_t* const> planes, std::span<const size_t> strides);
// Packed convenience.
Result<ConstPictureView> make_view(PixelFormat format, int width, int height, const uint8_t* data,
                                   size_t stride);
Result<PictureView> make_view(PixelFormat format, int width, int height, uint8_t* data,
                              size_t stride);

// A sub-rectangle of a view (same rules as Picture::crop).
Result<ConstPictureView> crop_view(const ConstPictureView& view, int x, int y, int w, int h);
Result<PictureView> crop_view(const PictureView& view, int x, int y, int w, int h);

}  // namespace pixpath
