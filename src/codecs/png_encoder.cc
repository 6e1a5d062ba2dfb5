// png and png/L encoders: libspng, row by row from the picture's rows (any stride).
// png: RGB -> truecolor, RGBA -> truecolor+alpha; other packed orders are converted one row at
// a time (counted). png/L: GRAY8 -> grayscale. zlib level = EncodeParams::level.
#include <spng.h>

#include <cstdlib>
#include <algorithm>
#include <climits>
#include <memory>
#include <vector>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"
#include "internal/spng_context.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs::internal {
namespace {

class PngEncoder final : public Encoder {
 public:
  explicit PngEncoder(std::string_view coding) : coding_(coding) {}
  std::string_view coding() const override { return coding_; }
  bool can_read(PixelFormat f) const override {
    if (coding_ == "png/L") return f == PixelFormat::GRAY8;
    return info(f).packed_rgb || f == PixelFormat::GRAY8;
  }

  Result<EncodedPicture> encode(const ConstPictureView& picture,
                                const EncodeParams& params) const override {
    if (picture.empty() || !can_read(picture.format)) {
      return codec_error(coding_, ErrorCode::Unsupported, "encode",
                         "cannot encode " + std::string(picture.empty() ? "an empty picture"
                                                                        : name(picture.format)));
    }
    const PixelFormat in = picture.format;
    const bool gray = in == PixelFormat::GRAY8;
    const bool alpha = info(in).has_alpha;
    const PixelFormat row_format = gray ? PixelFormat::GRAY8
                                   : alpha ? PixelFormat::RGBA
                                           : PixelFormat::RGB;
    SpngContext ctx(spng_ctx_new(SPNG_CTX_ENCODER));
    if (!ctx) return codec_error(coding_, ErrorCode::OutOfMemory, "encode", "spng_ctx_new failed");
    spng_ctx* c = ctx.get();
    spng_ihdr ihdr{};
    ihdr.width = uint32_t(picture.width);
    ihdr.height = uint32_t(picture.height);
    ihdr.bit_depth = 8;
    ihdr.color_type = gray    ? SPNG_COLOR_TYPE_GRAYSCALE
                      : alpha ? SPNG_COLOR_TYPE_TRUECOLOR_ALPHA
                              : SPNG_COLOR_TYPE_TRUECOLOR;
    int rc = spng_set_option(c, SPNG_ENCODE_TO_BUFFER, 1);
    if (!rc) rc = spng_set_option(c, SPNG_IMG_COMPRESSION_LEVEL, std::clamp(params.level, 0, 9));
    if (!rc) rc = spng_set_ihdr(c, &ihdr);
    if (!rc) rc = spng_encode_image(c, nullptr, 0, SPNG_FMT_PNG,
                                    SPNG_ENCODE_PROGRESSIVE | SPNG_ENCODE_FINALIZE);
    if (rc) return fail(rc);
    const auto& p = picture.planes[0];
    std::vector<uint8_t> row;
    if (row_format != in) row.resize(size_t(picture.width) * size_t(packed_bpp(row_format)));
    for (int y = 0; y < picture.height; ++y) {
      const uint8_t* src = p.unchecked_row(y);
      size_t len = p.row_bytes();
      if (row_format != in) {
        auto sv = make_view(in, picture.width, 1, src, p.stride);
        auto dv = make_view(row_format, picture.width, 1, row.data(), row.size());
        if (!sv.ok() || !dv.ok()) return codec_error(coding_, ErrorCode::Internal, "encode", "view");
        auto cv = convert_pixels(*sv, *dv);
        if (!cv.ok()) return cv.error().within(coding_, "encode");
        src = row.data();
        len = row.size();
      }
      rc = spng_encode_row(c, src, len);
      if (rc && rc != SPNG_EOI) return fail(rc);
    }
    size_t size = 0;
    int err = 0;
    void* buf = spng_get_png_buffer(c, &size, &err);
    if (!buf) return fail(err ? err : SPNG_EINTERNAL);
    std::unique_ptr<void, decltype(&std::free)> owned(buf, &std::free);
    EncodedPicture e;
    e.width = picture.width;
    e.height = picture.height;
    auto* b = static_cast<const uint8_t*>(buf);
    e.data.assign(b, b + size);
    return e;
  }

 private:
  Error fail(int rc) const {
    return codec_error(coding_, ErrorCode::Internal, "encode", spng_strerror(rc));
  }
  std::string coding_;
};

}  // namespace

std::unique_ptr<Encoder> make_png_encoder(std::string_view coding) {
  return std::make_unique<PngEncoder>(coding);
}

}  // namespace pixpath::codecs::internal
