#include "pixpath/core/picture_view.h"

#include <string>

#include "internal/checked_math.h"
#include "internal/picture_checks.h"

namespace pixpath {
namespace {

template <class Byte>
Result<BasicPictureView<Byte>> make_view_impl(PixelFormat format, int width, int height,
                                              std::span<Byte* const> planes,
                                              std::span<const size_t> strides) {
  const auto& fi = info(format);
  if (auto e = internal::check_dimensions("view", "make", format, width, height)) return *e;
  if (planes.size() != static_cast<size_t>(fi.planes) || strides.size() != planes.size()) {
    return Error(ErrorCode::InvalidArgument, "view", "make",
                 std::string(fi.name) + " needs " + std::to_string(fi.planes) + " plane(s), got " +
                     std::to_string(planes.size()));
  }
  BasicPictureView<Byte> v;
  v.format = format;
  v.width = width;
  v.height = height;
  v.plane_count = fi.planes;
  for (int i = 0; i < fi.planes; ++i) {
    const auto ui = static_cast<size_t>(i);
    BasicPlaneView<Byte> p{planes[ui], strides[ui], plane_width(format, i, width),
                           plane_height(format, i, height), fi.bytes_per_pixel[i]};
    if (!p.data) {
      return Error(ErrorCode::InvalidArgument, "view", "make",
                   "plane " + std::to_string(i) + " has no data");
    }
    if (p.stride < p.row_bytes()) {
      return Error(ErrorCode::InvalidArgument, "view", "make",
                   "plane " + std::to_string(i) + " stride " + std::to_string(p.stride) +
                       " is less than its row of " + std::to_string(p.row_bytes()) + " bytes");
    }
    if (!internal::checked_mul(p.stride, static_cast<size_t>(p.height))) {
      return Error(ErrorCode::LimitExceeded, "view", "make", "plane size overflows");
    }
    v.planes[ui] = p;
  }
  return v;
}

template <class View>
Result<View> crop_view_impl(const View& view, int x, int y, int w, int h) {
  if (auto e = internal::check_crop("view", view.format, view.width, view.height, x, y, w, h)) {
    return *e;
  }
  View out = view;
  out.width = w;
  out.height = h;
  const auto& fi = info(view.format);
  for (int i = 0; i < view.plane_count; ++i) {
    auto& p = out.planes[static_cast<size_t>(i)];
    const int sx = i == 0 ? 0 : fi.chroma_shift_x;
    const int sy = i == 0 ? 0 : fi.chroma_shift_y;
    p.data += static_cast<size_t>(y >> sy) * p.stride +
              static_cast<size_t>(x >> sx) * static_cast<size_t>(p.bytes_per_pixel);
    p.width = plane_width(view.format, i, w);
    p.height = plane_height(view.format, i, h);
  }
  return out;
}

}  // namespace

Result<ConstPictureView> make_view(PixelFormat format, int width, int height,
                                   std::span<const uint8_t* const> planes,
                                   std::span<const size_t> strides) {
  return make_view_impl<const uint8_t>(format, width, height, planes, strides);
}

Result<PictureView> make_view(PixelFormat format, int width, int height,
                              std::span<uint8_t* const> planes, std::span<const size_t> strides) {
  PIXPATH_TRY(auto v, make_view_impl<uint8_t>(format, width, height, planes, strides));
  PictureView out;
  static_cast<BasicPictureView<uint8_t>&>(out) = v;
  return out;
}

Result<ConstPictureView> make_view(PixelFormat format, int width, int height, const uint8_t* data,
                                   size_t stride) {
  const uint8_t* planes[1] = {data};
  const size_t strides[1] = {stride};
  return make_view(format, width, height, std::span<const uint8_t* const>(planes),
                   std::span<const size_t>(strides));
}

Result<PictureView> make_view(PixelFormat format, int width, int height, uint8_t* data,
                              size_t stride) {
  uint8_t* planes[1] = {data};
  const size_t strides[1] = {stride};
  return make_view(format, width, height, std::span<uint8_t* const>(planes),
                   std::span<const size_t>(strides));
}

Result<ConstPictureView> crop_view(const ConstPictureView& view, int x, int y, int w, int h) {
  return crop_view_impl(view, x, y, w, h);
}

Result<PictureView> crop_view(const PictureView& view, int x, int y, int w, int h) {
  return crop_view_impl(view, x, y, w, h);
}

}  // namespace pixpath
