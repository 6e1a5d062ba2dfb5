// jpeg: TurboJPEG (2.x API) straight into the destination.
//
// Packed outputs (RGB, BGR, RGBX, BGRX, XRGB, XBGR, RGBA, BGRA, ARGB, ABGR, GRAY8) are written
// by tjDecompress2 with the destination's pitch: no intermediate buffer. Planar outputs
// (YUV420P / YUV422P / YUV444P, GRAY8 for gray JPEGs) take the JPEG's own samples without
// colour conversion and must match its subsampling; 4:4:0 and 4:1:1 JPEGs (and JPEGs coded in
// RGB) have no planar pixpath format and decode to packed RGB only. CMYK/YCCK decode to packed
// RGB formats only, converted as Pillow converts them (turbojpeg_decode.h).
// decode() without a format gives RGBX (4 bytes per pixel, what xpra's own client asks for).
// Large sequential YCbCr JPEGs decoded into packed formats use spare cores: the picture is cut
// into bands decoded on helper threads (internal/jpeg_band_decode.h), byte for byte the same.
#include <turbojpeg.h>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"
#include "internal/turbojpeg_decode.h"

namespace pixpath::codecs::internal {
namespace {

constexpr std::string_view kJpegCoding = "jpeg";

class JpegDecoder final : public Decoder {
 public:
  std::string_view coding() const override { return kJpegCoding; }

  Result<ImageInfo> inspect(std::span<const uint8_t> data,
                            const DecodeParams& params) const override {
    PIXPATH_TRY(JpegHeader h, read_jpeg_header(kJpegCoding, data, params));
    ImageInfo inf;
    inf.width = h.width;
    inf.height = h.height;
    inf.natural_format = jpeg_planar_format(h).value_or(PixelFormat::RGB);
    inf.detail = h.detail;
    return inf;
  }

  bool can_write(PixelFormat f) const override {
    return turbojpeg_packed_format(f) || f == PixelFormat::YUV420P ||
           f == PixelFormat::YUV422P || f == PixelFormat::YUV444P;
  }

  Result<DecodeReport> decode_into(std::span<const uint8_t> data, const DecodeParams& params,
                                   const PictureView& dst) const override {
    PIXPATH_TRY(JpegHeader h, read_jpeg_header(kJpegCoding, data, params));
    DecodeReport rep{h.width, h.height, {}};
    if (info(dst.format).planes > 1) {
      PIXPATH_CHECK(turbojpeg_decode_planes(kJpegCoding, data, h, dst, rep.warnings));
    } else {
      PIXPATH_CHECK(turbojpeg_decode_packed(kJpegCoding, data, h, dst, rep.warnings));
    }
    return rep;
  }

  Result<DecodeResult> decode(const SharedBytes& data, const DecodeParams& params,
                              std::optional<PixelFormat> format,
                              StoragePool* pool) const override {
    return decode_into_new_picture(*this, data, params, format.value_or(PixelFormat::RGBX),
                                   pool);
  }
};

}  // namespace

std::unique_ptr<Decoder> make_jpeg_decoder() { return std::make_unique<JpegDecoder>(); }

}  // namespace pixpath::codecs::internal
