// Helpers shared by the built-in CPU codecs: error construction, limit checks, small
// byte-order helpers. Private to src/codecs.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "pixpath/codecs/decoder.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/pixel_format.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs::internal {

inline Error codec_error(std::string_view coding, ErrorCode code, std::string_view stage,
                         std::string reason) {
  return Error(code, std::string(coding), std::string(stage), std::move(reason));
}
inline Error codec_warning(std::string_view coding, ErrorCode code, std::string_view stage,
                           std::string reason) {
  return Error(code, std::string(coding), std::string(stage), std::move(reason),
               Severity::Warning);
}

// Checks a size read from untrusted input against the limits and against the size the caller
// expects (params.width/height, 0 = any). Call before allocating anything for the picture.
std::optional<Error> check_decode_size(std::string_view coding, int width, int height,
                                       const DecodeParams& params);

// Checks that dst is a host view of exactly width x height.
std::optional<Error> check_destination(std::string_view coding, const PictureView& dst,
                                       int width, int height);

// "1920x1080"
std::string size_string(int width, int height);

// The byte-per-pixel count of a packed format (0 for planar ones).
int packed_bpp(PixelFormat format);

// A view of one row range [y0, y0 + rows) of a packed view.
template <class View>
View row_range(const View& v, int y0, int rows) {
  View r = v;
  r.height = rows;
  r.planes[0].height = rows;
  r.planes[0].data = v.planes[0].data + static_cast<size_t>(y0) * v.planes[0].stride;
  return r;
}

inline uint32_t read_le32(const uint8_t* p) {
  return uint32_t{p[0]} | (uint32_t{p[1]} << 8) | (uint32_t{p[2]} << 16) | (uint32_t{p[3]} << 24);
}

// Default implementation of Decoder::decode(): inspect, allocate (from the pool when given),
// decode_into. Shared by decoders that cannot wrap their input.
Result<DecodeResult> decode_into_new_picture(const Decoder& decoder, const SharedBytes& data,
                                             const DecodeParams& params,
                                             std::optional<PixelFormat> format,
                                             StoragePool* pool, size_t stride = 0);

}  // namespace pixpath::codecs::internal
