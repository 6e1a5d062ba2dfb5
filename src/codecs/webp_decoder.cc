// webp (lossy and lossless, with and without alpha): libwebp's advanced API, decoding straight
// into the destination with its stride (is_external_memory).
//
// Direct outputs: RGB, BGR, RGBA, BGRA, ARGB (MODE_*), and RGBX/BGRX/XRGB through the RGBA/
// BGRA/ARGB modes (the X byte receives the alpha, 0xFF for opaque pictures). Alpha is not
// premultiplied. XBGR/ABGR decode to scratch RGBA and are converted (one counted copy).
// Animated WebP is refused.
#include <webp/decode.h>

#include <algorithm>
#include <climits>
#include <memory>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs::internal {
namespace {

constexpr std::string_view kWebpCoding = "webp";

int webp_mode(PixelFormat f) {
  switch (f) {
    case PixelFormat::RGB: return MODE_RGB;
    case PixelFormat::BGR: return MODE_BGR;
    case PixelFormat::RGBA:
    case PixelFormat::RGBX: return MODE_RGBA;
    case PixelFormat::BGRA:
    case PixelFormat::BGRX: return MODE_BGRA;
    case PixelFormat::ARGB:
    case PixelFormat::XRGB: return MODE_ARGB;
    default: return -1;
  }
}

const char* status_text(VP8StatusCode s) {
  switch (s) {
    case VP8_STATUS_OK: return "ok";
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated)";
  }
  return "unknown error";
}

Error webp_error(std::string_view stage, VP8StatusCode s) {
  ErrorCode code = s == VP8_STATUS_NOT_ENOUGH_DATA      ? ErrorCode::Truncated
                   : s == VP8_STATUS_OUT_OF_MEMORY      ? ErrorCode::OutOfMemory
                   : s == VP8_STATUS_UNSUPPORTED_FEATURE ? ErrorCode::Unsupported
                                                         : ErrorCode::CorruptData;
  return codec_error(kWebpCoding, code, stage, status_text(s));
}

Result<WebPBitstreamFeatures> features(std::span<const uint8_t> data, const DecodeParams& params) {
  WebPBitstreamFeatures f{};
  if (data.size() < 12 || std::memcmp(data.data(), "RIFF", 4) != 0 ||
      std::memcmp(data.data() + 8, "WEBP", 4) != 0) {
    return codec_error(kWebpCoding, data.size() < 12 ? ErrorCode::Truncated : ErrorCode::CorruptData,
                       "read header",
                       "not a WebP stream (" + std::to_string(data.size()) +
                           " bytes, no RIFF/WEBP header)");
  }
  const VP8StatusCode s = WebPGetFeatures(data.data(), data.size(), &f);
  if (s != VP8_STATUS_OK) return webp_error("read header", s);
  if (f.has_animation) {
    return codec_error(kWebpCoding, ErrorCode::Unsupported, "read header", "animated WebP");
  }
  if (auto e = check_decode_size(kWebpCoding, f.width, f.height, params)) return *e;
  return f;
}

Result<void> decode_mode(std::span<const uint8_t> data, const PictureView& dst, int mode) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) {
    return codec_error(kWebpCoding, ErrorCode::Internal, "init", "libwebp version mismatch");
  }
  auto& out = config.output;
  out.colorspace = static_cast<WEBP_CSP_MODE>(mode);
  out.is_external_memory = 1;
  const auto& p = dst.planes[0];
  if (p.stride > size_t(INT_MAX)) {
    return codec_error(kWebpCoding, ErrorCode::InvalidArgument, "decode", "destination stride too large");
  }
  out.u.RGBA.rgba = p.data;
  out.u.RGBA.stride = static_cast<int>(p.stride);
  // Exactly the bytes the view covers: libwebp checks stride * (h - 1) + row <= size.
  out.u.RGBA.size = p.stride * size_t(p.height - 1) + p.row_bytes();
  const VP8StatusCode s = WebPDecode(data.data(), data.size(), &config);
  WebPFreeDecBuffer(&out);  // frees nothing for external memory; required by the API
  if (s != VP8_STATUS_OK) return webp_error("decode", s);
  return ok();
}

class WebpDecoder final : public Decoder {
 public:
  std::string_view coding() const override { return kWebpCoding; }

  Result<ImageInfo> inspect(std::span<const uint8_t> data,
                            const DecodeParams& params) const override {
    PIXPATH_TRY(WebPBitstreamFeatures f, features(data, params));
    ImageInfo inf;
    inf.width = f.width;
    inf.height = f.height;
    inf.has_alpha = f.has_alpha != 0;
    inf.natural_format = inf.has_alpha ? PixelFormat::RGBA : PixelFormat::RGB;
    inf.detail = std::string(f.format == 2 ? "lossless" : f.format == 1 ? "lossy" : "mixed") +
                 (inf.has_alpha ? " with alpha" : "");
    return inf;
  }

  bool can_write(PixelFormat f) const override { return webp_mode(f) >= 0; }

  Result<DecodeReport> decode_into(std::span<const uint8_t> data, const DecodeParams& params,
                                   const PictureView& dst) const override {
    PIXPATH_TRY(WebPBitstreamFeatures f, features(data, params));
    if (auto e = check_destination(kWebpCoding, dst, f.width, f.height)) return *e;
    DecodeReport rep{f.width, f.height, {}};
    const int mode = webp_mode(dst.format);
    if (mode >= 0) {
      PIXPATH_CHECK(decode_mode(data, dst, mode));
      return rep;
    }
    if (!info(dst.format).packed_rgb) {
      return codec_error(kWebpCoding, ErrorCode::Unsupported, "decode",
                         "cannot decode into " + std::string(name(dst.format)));
    }
    auto tmp = Picture::allocate(PixelFormat::RGBA, f.width, f.height);
    if (!tmp.ok()) return tmp.error().within(std::string(kWebpCoding), "decode");
    auto tv = tmp->write();
    if (!tv.ok()) return tv.error().within(std::string(kWebpCoding), "decode");
    PIXPATH_CHECK(decode_mode(data, *tv, MODE_RGBA));
    auto c = convert_pixels(*tv, dst);
    if (!c.ok()) return c.error().within(std::string(kWebpCoding), "convert");
    return rep;
  }
};

}  // namespace

std::unique_ptr<Decoder> make_webp_decoder() { return std::make_unique<WebpDecoder>(); }

}  // namespace pixpath::codecs::internal
