// webp encoder: libwebp's advanced API. quality < 100: lossy at that quality; quality >= 100:
// lossless. Imports the picture's rows with their stride (RGB, BGR, RGBA, BGRA, RGBX, BGRX);
// other orders are refused (convert first).
#include <webp/encode.h>

#include <algorithm>
#include <climits>
#include <memory>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"

namespace pixpath::codecs::internal {
namespace {

constexpr std::string_view kWebpEncoderCoding = "webp";

class WebpEncoder final : public Encoder {
 public:
  std::string_view coding() const override { return kWebpEncoderCoding; }
  bool can_read(PixelFormat f) const override {
    return f == PixelFormat::RGB || f == PixelFormat::BGR || f == PixelFormat::RGBA ||
           f == PixelFormat::BGRA || f == PixelFormat::RGBX || f == PixelFormat::BGRX;
  }
  Result<EncodedPicture> encode(const ConstPictureView& picture,
                                const EncodeParams& params) const override {
    if (picture.empty() || !can_read(picture.format)) {
      return codec_error(kWebpEncoderCoding, ErrorCode::Unsupported, "encode",
                         "webp encodes RGB, BGR, RGBA, BGRA, RGBX or BGRX pictures");
    }
    if (picture.width > WEBP_MAX_DIMENSION || picture.height > WEBP_MAX_DIMENSION ||
        picture.planes[0].stride > size_t(INT_MAX)) {
      return codec_error(kWebpEncoderCoding, ErrorCode::InvalidArgument, "encode", "picture too large");
    }
    WebPConfig config;
    if (!WebPConfigInit(&config)) {
      return codec_error(kWebpEncoderCoding, ErrorCode::Internal, "encode", "libwebp version mismatch");
    }
    config.lossless = params.quality >= 100 ? 1 : 0;
    config.quality = config.lossless ? 75.f : float(std::clamp(params.quality, 0, 100));
    config.method = 2;
    WebPPicture pic;
    if (!WebPPictureInit(&pic)) {
      return codec_error(kWebpEncoderCoding, ErrorCode::Internal, "encode", "libwebp version mismatch");
    }
    pic.width = picture.width;
    pic.height = picture.height;
    pic.use_argb = config.lossless;
    const uint8_t* d = picture.planes[0].data;
    const int stride = int(picture.planes[0].stride);
    int imported = 0;
    switch (picture.format) {
      case PixelFormat::RGB: imported = WebPPictureImportRGB(&pic, d, stride); break;
      case PixelFormat::BGR: imported = WebPPictureImportBGR(&pic, d, stride); break;
      case PixelFormat::RGBA: imported = WebPPictureImportRGBA(&pic, d, stride); break;
      case PixelFormat::BGRA: imported = WebPPictureImportBGRA(&pic, d, stride); break;
      case PixelFormat::RGBX: imported = WebPPictureImportRGBX(&pic, d, stride); break;
      case PixelFormat::BGRX: imported = WebPPictureImportBGRX(&pic, d, stride); break;
      default: break;
    }
    WebPMemoryWriter writer;
    WebPMemoryWriterInit(&writer);
    pic.writer = WebPMemoryWrite;
    pic.custom_ptr = &writer;
    const bool good = imported && WebPEncode(&config, &pic);
    const int err = pic.error_code;
    WebPPictureFree(&pic);
    if (!good) {
      WebPMemoryWriterClear(&writer);
      return codec_error(kWebpEncoderCoding, ErrorCode::Internal, "encode",
                         "WebPEncode failed (error " + std::to_string(err) + ")");
    }
    EncodedPicture e;
    e.width = picture.width;
    e.height = picture.height;
    e.data.assign(writer.mem, writer.mem + writer.size);
    e.options.quality = params.quality;
    WebPMemoryWriterClear(&writer);
    return e;
  }
};

}  // namespace

std::unique_ptr<Encoder> make_webp_encoder() { return std::make_unique<WebpEncoder>(); }

}  // namespace pixpath::codecs::internal
