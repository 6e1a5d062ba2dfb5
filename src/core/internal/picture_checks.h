// Checks shared by pictures and views: dimensions against limits, crop rectangles.
#pragma once

#include <optional>

#include "pixpath/core/limits.h"
#include "pixpath/core/pixel_format.h"
#include "pixpath/core/result.h"

namespace pixpath::internal {

// nullopt when width x height is acceptable for `format` under `limits`.
std::optional<Error> check_dimensions(const char* subject, const char* stage, PixelFormat format,
                                      int width, int height,
                                      const PictureLimits& limits = PictureLimits::defaults());

// nullopt when (x, y, w, h) lies inside width x height and respects chroma sub-sampling.
std::optional<Error> check_crop(const char* subject, PixelFormat format, int width, int height,
                                int x, int y, int w, int h);

}  // namespace pixpath::internal
