#include "pixpath/core/pixel_format.h"

#include <array>

namespace pixpath {
namespace {

constexpr PixelFormatInfo packed3(std::string_view n, ChannelLayout c) {
  return {n, 1, {3, 0, 0}, 0, 0, true, false, c};
}
constexpr PixelFormatInfo packed4(std::string_view n, ChannelLayout c) {
  return {n, 1, {4, 0, 0}, 0, 0, true, c.a >= 0, c};
}

constexpr std::array<PixelFormatInfo, kPixelFormatCount> kInfo = {{
    packed3("RGB", {0, 1, 2, -1}),
    packed3("BGR", {2, 1, 0, -1}),
    packed4("RGBX", {0, 1, 2, -1}),
    packed4("BGRX", {2, 1, 0, -1}),
    packed4("XRGB", {1, 2, 3, -1}),
    packed4("XBGR", {3, 2, 1, -1}),
    packed4("RGBA", {0, 1, 2, 3}),
    packed4("BGRA", {2, 1, 0, 3}),
    packed4("ARGB", {1, 2, 3, 0}),
    packed4("ABGR", {3, 2, 1, 0}),
    {"GRAY8", 1, {1, 0, 0}, 0, 0, false, false, {}},
    {"RG8", 1, {2, 0, 0}, 0, 0, false, false, {}},
    {"YUV420P", 3, {1, 1, 1}, 1, 1, false, false, {}},
    {"YUV422P", 3, {1, 1, 1}, 1, 0, false, false, {}},
    {"YUV444P", 3, {1, 1, 1}, 0, 0, false, false, {}},
    {"NV12", 2, {1, 2, 0}, 1, 1, false, false, {}},
}};

}  // namespace

const PixelFormatInfo& info(PixelFormat format) { return kInfo[static_cast<size_t>(format)]; }

std::optional<PixelFormat> parse_pixel_format(std::string_view n) {
  for (int i = 0; i < kPixelFormatCount; ++i) {
    if (kInfo[i].name == n) return static_cast<PixelFormat>(i);
  }
  return std::nullopt;
}

int plane_width(PixelFormat format, int plane, int width) {
  if (plane == 0) return width;
  const int s = info(format).chroma_shift_x;
  return (width + (1 << s) - 1) >> s;
}

int plane_height(PixelFormat format, int plane, int height) {
  if (plane == 0) return height;
  const int s = info(format).chroma_shift_y;
  return (height + (1 << s) - 1) >> s;
}

}  // namespace pixpath
