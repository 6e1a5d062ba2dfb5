#include "internal/picture_checks.h"

#include <string>

namespace pixpath::internal {

std::optional<Error> check_dimensions(const char* subject, const char* stage, PixelFormat format,
                                      int width, int height, const PictureLimits& limits) {
  if (width <= 0 || height <= 0) {
    return Error(ErrorCode::InvalidArgument, subject, stage,
                 "size " + std::to_string(width) + "x" + std::to_string(height) +
                     " is not positive");
  }
  if (width > limits.max_width || height > limits.max_height) {
    return Error(ErrorCode::LimitExceeded, subject, stage,
                 "size " + std::to_string(width) + "x" + std::to_string(height) +
                     " exceeds the limit of " + std::to_string(limits.max_width) + "x" +
                     std::to_string(limits.max_height));
  }
  (void)format;
  return std::nullopt;
}

std::optional<Error> check_crop(const char* subject, PixelFormat format, int width, int height,
                                int x, int y, int w, int h) {
  auto rect = [&] {
    return std::to_string(w) + "x" + std::to_string(h) + "+" + std::to_string(x) + "+" +
           std::to_string(y);
  };
  // Written so that no sum can overflow: x <= width - w with both non-negative.
  if (x < 0 || y < 0 || w <= 0 || h <= 0 || w > width || h > height || x > width - w ||
      y > height - h) {
    return Error(ErrorCode::OutOfRange, subject, "crop",
                 "rectangle " + rect() + " is not inside " + std::to_string(width) + "x" +
                     std::to_string(height));
  }
  const auto& fi = info(format);
  const int mx = (1 << fi.chroma_shift_x) - 1, my = (1 << fi.chroma_shift_y) - 1;
  if ((x & mx) || (y & my) || ((w & mx) && x + w != width) || ((h & my) && y + h != height)) {
    return Error(ErrorCode::InvalidArgument, subject, "crop",
                 "rectangle " + rect() + " splits the chroma sub-sampling of " +
                     std::string(fi.name));
  }
  return std::nullopt;
}

}  // namespace pixpath::internal
