// jpega: a colour JPEG followed, at byte options->alpha_offset, by a grayscale JPEG holding
// the alpha plane. Output RGBA, BGRA, ARGB or ABGR.
//
// The colour JPEG is decoded straight into the destination (TurboJPEG writes 0xFF alpha); the
// alpha JPEG into a GRAY8 scratch plane whose bytes are then written into the A channel. That
// scratch plane is the one copy this coding needs; it is counted (count_copy) as w*h bytes.
#include <turbojpeg.h>

#include <memory>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"
#include "internal/turbojpeg_decode.h"
#include "pixpath/core/counters.h"

namespace pixpath::codecs::internal {
namespace {

constexpr std::string_view kJpegaCoding = "jpega";

struct Parts {
  std::span<const uint8_t> colour, alpha;
};

Result<Parts> split(std::span<const uint8_t> data, const DecodeParams& params) {
  if (!params.options || !params.options->alpha_offset) {
    return codec_error(kJpegaCoding, ErrorCode::InvalidArgument, "split",
                       "no alpha-offset option: cannot find the alpha JPEG");
  }
  const int64_t off = *params.options->alpha_offset;
  if (off <= 0 || static_cast<uint64_t>(off) >= data.size()) {
    return codec_error(kJpegaCoding, ErrorCode::CorruptData, "split",
                       "alpha-offset " + std::to_string(off) + " is outside the " +
                           std::to_string(data.size()) + " bytes of data");
  }
  return Parts{data.first(size_t(off)), data.subspan(size_t(off))};
}

bool alpha_format(PixelFormat f) {
  return f == PixelFormat::RGBA || f == PixelFormat::BGRA || f == PixelFormat::ARGB ||
         f == PixelFormat::ABGR;
}

// Both parts' headers; the alpha JPEG must have the colour JPEG's size.
struct Headers {
  Parts parts;
  JpegHeader colour, alpha;
};

Result<Headers> read_headers(std::span<const uint8_t> data, const DecodeParams& params) {
  PIXPATH_TRY(Parts parts, split(data, params));
  PIXPATH_TRY(JpegHeader c, read_jpeg_header(kJpegaCoding, parts.colour, params));
  DecodeParams ap = params;
  ap.width = c.width;
  ap.height = c.height;
  auto a = read_jpeg_header(kJpegaCoding, parts.alpha, ap);
  if (!a.ok()) return a.error().within(std::string(kJpegaCoding), "read alpha header");
  return Headers{parts, std::move(c), std::move(*a)};
}

class JpegaDecoder final : public Decoder {
 public:
  std::string_view coding() const override { return kJpegaCoding; }

  Result<ImageInfo> inspect(std::span<const uint8_t> data,
                            const DecodeParams& params) const override {
    PIXPATH_TRY(Headers h, read_headers(data, params));
    const JpegHeader& c = h.colour;
    ImageInfo inf;
    inf.width = c.width;
    inf.height = c.height;
    inf.natural_format = PixelFormat::RGBA;
    inf.has_alpha = true;
    inf.detail = c.detail + " + alpha " + h.alpha.detail;
    return inf;
  }

  bool can_write(PixelFormat f) const override { return alpha_format(f); }

  Result<DecodeReport> decode_into(std::span<const uint8_t> data, const DecodeParams& params,
                                   const PictureView& dst) const override {
    if (!alpha_format(dst.format)) {
      return codec_error(kJpegaCoding, ErrorCode::Unsupported, "decode",
                         "jpega decodes into RGBA, BGRA, ARGB or ABGR, not " +
                             std::string(name(dst.format)));
    }
    PIXPATH_TRY(Headers h, read_headers(data, params));
    const Parts& parts = h.parts;
    const JpegHeader& c = h.colour;
    if (auto e = check_destination(kJpegaCoding, dst, c.width, c.height)) return *e;

    DecodeReport rep{c.width, c.height, {}};
    // Alpha first into scratch, so a broken alpha JPEG leaves dst untouched.
    const size_t n = size_t(c.width) * size_t(c.height);
    std::unique_ptr<uint8_t[]> alpha(new (std::nothrow) uint8_t[n]);
    if (!alpha) return codec_error(kJpegaCoding, ErrorCode::OutOfMemory, "decode alpha", "no memory");
    auto av = make_view(PixelFormat::GRAY8, c.width, c.height, alpha.get(), size_t(c.width));
    if (!av.ok()) return av.error().within(std::string(kJpegaCoding), "decode alpha");
    auto ra = turbojpeg_decode_packed(kJpegaCoding, parts.alpha, h.alpha, *av, rep.warnings);
    if (!ra.ok()) return ra.error().within(std::string(kJpegaCoding), "decode alpha");
    PIXPATH_CHECK(turbojpeg_decode_packed(kJpegaCoding, parts.colour, c, dst, rep.warnings));

    const int ai = info(dst.format).channels.a;
    const auto& p = dst.planes[0];
    for (int y = 0; y < c.height; ++y) {
      uint8_t* row = p.unchecked_row(y) + ai;
      const uint8_t* s = alpha.get() + size_t(y) * size_t(c.width);
      for (int x = 0; x < c.width; ++x) row[size_t(x) * 4] = s[x];
    }
    count_copy(static_cast<int64_t>(n));
    return rep;
  }
};

}  // namespace

std::unique_ptr<Decoder> make_jpega_decoder() { return std::make_unique<JpegaDecoder>(); }

}  // namespace pixpath::codecs::internal
