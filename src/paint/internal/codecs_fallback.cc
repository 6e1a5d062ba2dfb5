// TEMPORARY: a minimal stand-in for pixpath_codecs (rgb24/rgb32 with zlib/lz4 only), compiled
// only while the codecs branch has not been merged (src/paint/CMakeLists.txt checks
// `if(NOT TARGET pixpath_codecs)`). Delete this file once pixpath_codecs exists.
#include <lz4.h>
#include <zlib.h>

#include <map>
#include <string>

#include "pixpath/codecs/registry.h"
#include "pixpath/core/pixel_ops.h"

namespace pixpath::codecs {

Result<DecodeResult> Decoder::decode(const SharedBytes& data, const DecodeParams& params,
                                     std::optional<PixelFormat> format, StoragePool*) const {
  PIXPATH_TRY(ImageInfo info, inspect(data.span(), params));
  PixelFormat f = format.value_or(info.natural_format);
  if (!can_write(f))
    return Error(ErrorCode::Unsupported, std::string(coding()), "decode",
                 "cannot write " + std::string(name(f)));
  PIXPATH_TRY(Picture pic, Picture::allocate(f, info.width, info.height));
  PIXPATH_TRY(PictureView v, pic.write());
  PIXPATH_TRY(DecodeReport report, decode_into(data.span(), params, v));
  return DecodeResult{std::move(pic), std::move(report.warnings)};
}

namespace {

class RgbDecoder final : public Decoder {
 public:
  explicit RgbDecoder(std::string coding) : coding_(std::move(coding)) {}
  std::string_view coding() const override { return coding_; }

  PixelFormat source_format(const DecodeParams& p) const {
    if (p.options && !p.options->rgb_format.empty()) {
      if (auto f = parse_pixel_format(p.options->rgb_format)) return *f;
    }
    return coding_ == "rgb24" ? PixelFormat::RGB : PixelFormat::RGBX;
  }

  Result<ImageInfo> inspect(std::span<const uint8_t>, const DecodeParams& p) const override {
    if (p.width <= 0 || p.height <= 0)
      return Error(ErrorCode::InvalidArgument, coding_, "inspect", "no size");
    if (p.options && !p.options->rgb_format.empty() &&
        !parse_pixel_format(p.options->rgb_format))
      return Error(ErrorCode::Unsupported, coding_, "inspect",
                   "rgb_format '" + p.options->rgb_format + "'");
    ImageInfo info;
    info.width = p.width;
    info.height = p.height;
    info.natural_format = source_format(p);
    info.has_alpha = pixpath::info(info.natural_format).has_alpha;
    return info;
  }
  bool can_write(PixelFormat f) const override { return pixpath::info(f).packed_rgb; }

  Result<DecodeReport> decode_into(std::span<const uint8_t> data, const DecodeParams& p,
                                   const PictureView& dst) const override {
    PIXPATH_TRY(ImageInfo info, inspect(data, p));
    if (dst.width != info.width || dst.height != info.height)
      return Error(ErrorCode::InvalidArgument, coding_, "decode", "destination size differs");
    const size_t bpp = static_cast<size_t>(pixpath::info(info.natural_format).bytes_per_pixel[0]);
    const size_t stride = p.rowstride > 0 ? static_cast<size_t>(p.rowstride) : bpp * info.width;
    const size_t need = stride * static_cast<size_t>(info.height);
    std::vector<uint8_t> buf;
    std::span<const uint8_t> raw = data;
    if (p.options && (p.options->zlib || p.options->lz4)) {
      if (need > p.limits.max_decompressed_bytes)
        return Error(ErrorCode::LimitExceeded, coding_, "decompress", "too large");
      buf.resize(need);
      if (p.options->lz4) {
        int n = LZ4_decompress_safe(reinterpret_cast<const char*>(data.data()),
                                    reinterpret_cast<char*>(buf.data()),
                                    static_cast<int>(data.size()), static_cast<int>(need));
        if (n < 0 || static_cast<size_t>(n) != need)
          return Error(ErrorCode::CorruptData, coding_, "lz4", "bad lz4 data");
      } else {
        uLongf n = need;
        if (uncompress(buf.data(), &n, data.data(), data.size()) != Z_OK || n != need)
          return Error(ErrorCode::CorruptData, coding_, "zlib", "bad zlib data");
      }
      raw = buf;
    }
    if (raw.size() < need)
      return Error(ErrorCode::Truncated, coding_, "decode",
                   std::to_string(raw.size()) + " bytes, need " + std::to_string(need));
    PIXPATH_TRY(ConstPictureView src,
                make_view(info.natural_format, info.width, info.height, raw.data(), stride));
    if (src.format == dst.format) {
      PIXPATH_CHECK(copy_pixels(src, dst));
    } else {
      PIXPATH_CHECK(convert_pixels(src, dst));
    }
    return DecodeReport{info.width, info.height, {}};
  }

 private:
  std::string coding_;
};

const RgbDecoder kRgb24("rgb24");
const RgbDecoder kRgb32("rgb32");

}  // namespace

const CodecRegistry& CodecRegistry::builtin() {
  static const CodecRegistry registry;
  return registry;
}
const Decoder* CodecRegistry::decoder(std::string_view coding) const {
  if (coding == "rgb24") return &kRgb24;
  if (coding == "rgb32") return &kRgb32;
  return nullptr;
}
const Encoder* CodecRegistry::encoder(std::string_view) const { return nullptr; }
std::vector<std::string> CodecRegistry::decodable_codings() const { return {"rgb24", "rgb32"}; }
std::vector<CodecDescription> CodecRegistry::describe() const { return {}; }
std::vector<LibraryVersion> CodecRegistry::library_versions() const { return {}; }

}  // namespace pixpath::codecs
