// png, png/L, png/P: libspng, decoded row by row straight into the destination rows.
//
// Direct outputs: RGBA and RGBX (SPNG_FMT_RGBA8, tRNS applied; X receives the alpha or 0xFF),
// RGB (SPNG_FMT_RGB8; alpha dropped), GRAY8 for grayscale PNGs of 8 bits or less
// (SPNG_FMT_G8). Interlaced PNGs too: spng_decode_row() writes each Adam7 pass's pixels at
// their final place in the row spng_get_row_info() names. Any other packed format decodes into a
// scratch picture first and is converted with convert_pixels (one counted copy). Palette PNGs
// (png/P) are expanded to RGB(A); gamma is not applied (xpra does not send gAMA).
// Limits: spng_set_image_limits and spng_set_chunk_limits before the header is read, the size
// checked against DecodeLimits, the decoded size against max_decompressed_bytes.
#include <spng.h>

#include <memory>
#include <string>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs::internal {
namespace {

struct CtxDeleter {
  void operator()(spng_ctx* c) const { spng_ctx_free(c); }
};
using Ctx = std::unique_ptr<spng_ctx, CtxDeleter>;

constexpr size_t kMaxChunkBytes = size_t{16} << 20;   // one ancillary chunk
constexpr size_t kMaxChunkCache = size_t{64} << 20;   // all stored ancillary chunks

ErrorCode spng_code(int rc) {
  switch (rc) {
    case SPNG_EOF: return ErrorCode::Truncated;
    case SPNG_EMEM: return ErrorCode::OutOfMemory;
    case SPNG_EUSER_WIDTH:
    case SPNG_EUSER_HEIGHT:
    case SPNG_ECHUNK_LIMITS:
      return ErrorCode::LimitExceeded;
    default: return ErrorCode::CorruptData;
  }
}

struct Header {
  Ctx ctx;
  spng_ihdr ihdr{};
  bool trns = false;
};

class PngDecoder final : public Decoder {
 public:
  explicit PngDecoder(std::string_view coding) : coding_(coding) {}

  std::string_view coding() const override { return coding_; }

  Result<ImageInfo> inspect(std::span<const uint8_t> data,
                            const DecodeParams& params) const override {
    PIXPATH_TRY(Header h, open(data, params));
    ImageInfo inf;
    inf.width = int(h.ihdr.width);
    inf.height = int(h.ihdr.height);
    const int ct = h.ihdr.color_type;
    inf.has_alpha = h.trns || ct == SPNG_COLOR_TYPE_GRAYSCALE_ALPHA ||
                    ct == SPNG_COLOR_TYPE_TRUECOLOR_ALPHA;
    if (gray8_ok(h)) {
      inf.natural_format = PixelFormat::GRAY8;
    } else {
      inf.natural_format = inf.has_alpha ? PixelFormat::RGBA : PixelFormat::RGB;
    }
    static const char* kTypes[] = {"gray", "?", "truecolor", "palette", "gray+alpha", "?",
                                   "truecolor+alpha"};
    inf.detail = std::string("png ") + (ct <= 6 ? kTypes[ct] : "?") + " " +
                 std::to_string(h.ihdr.bit_depth) + "-bit" +
                 (h.ihdr.interlace_method ? " interlaced" : "") + (h.trns ? " tRNS" : "");
    return inf;
  }

  bool can_write(PixelFormat f) const override {
    return f == PixelFormat::RGBA || f == PixelFormat::RGBX || f == PixelFormat::RGB ||
           f == PixelFormat::GRAY8;  // GRAY8: grayscale PNGs only
  }

  Result<DecodeReport> decode_into(std::span<const uint8_t> data, const DecodeParams& params,
                                   const PictureView& dst) const override {
    PIXPATH_TRY(Header h, open(data, params));
    const int w = int(h.ihdr.width), ht = int(h.ihdr.height);
    if (auto e = check_destination(coding_, dst, w, ht)) return *e;
    DecodeReport rep{w, ht, {}};
    int fmt = 0;
    switch (dst.format) {
      case PixelFormat::RGBA:
      case PixelFormat::RGBX: fmt = SPNG_FMT_RGBA8; break;
      case PixelFormat::RGB: fmt = SPNG_FMT_RGB8; break;
      case PixelFormat::GRAY8:
        if (!gray8_ok(h)) {
          return codec_error(coding_, ErrorCode::Unsupported, "decode",
                             "only grayscale PNGs of 8 bits or less decode to GRAY8");
        }
        fmt = SPNG_FMT_G8;
        break;
      default: break;
    }
    if (fmt) {
      PIXPATH_CHECK(decode_rows(h, fmt, dst, params));
      return rep;
    }
    if (!info(dst.format).packed_rgb) {
      return codec_error(coding_, ErrorCode::Unsupported, "decode",
                         "cannot decode into " + std::string(name(dst.format)));
    }
    // Another byte order: decode into scratch in spng's order, then convert (counted).
    const bool four = info(dst.format).bytes_per_pixel[0] == 4;
    auto tmp = Picture::allocate(four ? PixelFormat::RGBA : PixelFormat::RGB, w, ht);
    if (!tmp.ok()) return tmp.error().within(coding_, "decode");
    auto tv = tmp->write();
    if (!tv.ok()) return tv.error().within(coding_, "decode");
    PIXPATH_CHECK(decode_rows(h, four ? SPNG_FMT_RGBA8 : SPNG_FMT_RGB8, *tv, params));
    auto c = convert_pixels(*tv, dst);
    if (!c.ok()) return c.error().within(coding_, "convert");
    return rep;
  }

 private:
  static bool gray8_ok(const Header& h) {
    return h.ihdr.color_type == SPNG_COLOR_TYPE_GRAYSCALE && h.ihdr.bit_depth <= 8 && !h.trns;
  }

  Error spng_error(std::string_view stage, int rc) const {
    return codec_error(coding_, spng_code(rc), stage, spng_strerror(rc));
  }

  Result<Header> open(std::span<const uint8_t> data, const DecodeParams& params) const {
    static constexpr uint8_t kSig[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (data.size() < 8 || std::memcmp(data.data(), kSig, 8) != 0) {
      return codec_error(coding_, data.size() < 8 ? ErrorCode::Truncated : ErrorCode::CorruptData,
                         "read header",
                         "not a PNG stream (" + std::to_string(data.size()) +
                             " bytes, no PNG signature)");
    }
    Header h;
    h.ctx.reset(spng_ctx_new(0));
    if (!h.ctx) return codec_error(coding_, ErrorCode::OutOfMemory, "init", "spng_ctx_new failed");
    spng_ctx* c = h.ctx.get();
    int rc = spng_set_image_limits(c, uint32_t(params.limits.max_width),
                                   uint32_t(params.limits.max_height));
    if (!rc) rc = spng_set_chunk_limits(c, kMaxChunkBytes, kMaxChunkCache);
    if (!rc) rc = spng_set_png_buffer(c, data.data(), data.size());
    if (rc) return spng_error("init", rc);
    if ((rc = spng_get_ihdr(c, &h.ihdr))) return spng_error("read header", rc);
    if (h.ihdr.width > uint32_t(INT32_MAX) || h.ihdr.height > uint32_t(INT32_MAX)) {
      return codec_error(coding_, ErrorCode::LimitExceeded, "read header", "size too large");
    }
    if (auto e = check_decode_size(coding_, int(h.ihdr.width), int(h.ihdr.height), params)) {
      return *e;
    }
    spng_trns trns{};
    h.trns = spng_get_trns(c, &trns) == 0;
    size_t out = 0;
    if ((rc = spng_decoded_image_size(c, SPNG_FMT_RGBA8, &out))) return spng_error("read header", rc);
    if (out > params.limits.max_decompressed_bytes) {
      return codec_error(coding_, ErrorCode::LimitExceeded, "read header",
                         "decoded picture needs " + std::to_string(out) +
                             " bytes, over the limit of " +
                             std::to_string(params.limits.max_decompressed_bytes));
    }
    return h;
  }

  Result<void> decode_rows(Header& h, int fmt, const PictureView& dst,
                           const DecodeParams&) const {
    spng_ctx* c = h.ctx.get();
    const int flags = SPNG_DECODE_PROGRESSIVE | (fmt == SPNG_FMT_G8 ? 0 : SPNG_DECODE_TRNS);
    int rc = spng_decode_image(c, nullptr, 0, fmt, flags);
    if (rc) return spng_error("decode", rc);
    const auto& p = dst.planes[0];
    const size_t row_bytes = p.row_bytes();
    for (;;) {
      spng_row_info ri{};
      rc = spng_get_row_info(c, &ri);
      if (rc == SPNG_EOI) break;
      if (rc) return spng_error("decode", rc);
      if (ri.row_num >= uint32_t(p.height)) {
        return codec_error(coding_, ErrorCode::Internal, "decode", "row out of range");
      }
      rc = spng_decode_row(c, p.unchecked_row(int(ri.row_num)), row_bytes);
      if (rc == SPNG_EOI) break;
      if (rc) return spng_error("decode", rc);
    }
    return ok();
  }

  std::string coding_;
};

}  // namespace

std::unique_ptr<Decoder> make_png_decoder(std::string_view coding) {
  return std::make_unique<PngDecoder>(coding);
}

}  // namespace pixpath::codecs::internal
