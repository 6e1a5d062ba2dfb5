// Pixel formats: the byte layout of one picture. Packed RGB formats are named by their byte
// order in memory (BGRX = bytes B, G, R, unused), as xpra's rgb_format names them.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace pixpath {

enum class PixelFormat : uint8_t {
  // packed, 3 bytes per pixel
  RGB, BGR,
  // packed, 4 bytes per pixel; X = ignored byte
  RGBX, BGRX, XRGB, XBGR, RGBA, BGRA, ARGB, ABGR,
  // one 8-bit channel (also: an alpha plane, a luma plane)
  GRAY8,
  // two interleaved 8-bit channels (the UV plane of NV12)
  RG8,
  // planar YUV, 8 bits: Y plane then U then V
  YUV420P, YUV422P, YUV444P,
  // Y plane then one interleaved UV plane, chroma halved both ways
  NV12,
};

inline constexpr int kPixelFormatCount = static_cast<int>(PixelFormat::NV12) + 1;
inline constexpr int kMaxPlanes = 3;

// Byte positions of the channels in a packed pixel; -1 when the format has no such channel.
struct ChannelLayout {
  int8_t r = -1, g = -1, b = -1, a = -1;
};

struct PixelFormatInfo {
  std::string_view name;
  int planes;                  // 1 for packed formats
  int bytes_per_pixel[kMaxPlanes];  // per plane, per (sub-sampled) pixel of that plane
  int chroma_shift_x;          // planes 1.. have width >> shift (rounded up)
  int chroma_shift_y;
  bool packed_rgb;             // RGB..ABGR
  bool has_alpha;              // RGBA, BGRA, ARGB, ABGR
  ChannelLayout channels;      // packed_rgb only
};

const PixelFormatInfo& info(PixelFormat format);
inline std::string_view name(PixelFormat format) { return info(format).name; }

// "BGRX" -> PixelFormat::BGRX (case-sensitive, as xpra writes them); also "GRAY8", "YUV420P"...
std::optional<PixelFormat> parse_pixel_format(std::string_view name);

// Width and height of plane `plane` of a width x height picture (chroma rounded up).
int plane_width(PixelFormat format, int plane, int width);
int plane_height(PixelFormat format, int plane, int height);

}  // namespace pixpath
