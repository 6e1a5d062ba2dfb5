// rgb24 / rgb32 encoders: the picture's rows packed (rowstride = width * bytes per pixel) in
// its own format, compressed as an xpra 3.1 server does: lz4 = one LZ4 block prefixed by the
// uncompressed size (4 bytes, little-endian; options.lz4 = 1), zlib = a zlib stream
// (options.zlib = level). options.rgb_format names the byte order.
#include <lz4.h>
#include <zlib.h>

#include <climits>
#include <cstring>
#include <algorithm>
#include <memory>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"

namespace pixpath::codecs::internal {
namespace {

class RgbEncoder final : public Encoder {
 public:
  explicit RgbEncoder(std::string_view coding) : coding_(coding) {}
  std::string_view coding() const override { return coding_; }
  bool can_read(PixelFormat f) const override {
    return info(f).packed_rgb && packed_bpp(f) == (coding_ == "rgb24" ? 3 : 4);
  }

  Result<EncodedPicture> encode(const ConstPictureView& picture,
                                const EncodeParams& params) const override {
    if (picture.empty() || !can_read(picture.format)) {
      return codec_error(coding_, ErrorCode::Unsupported, "encode",
                         coding_ + " encodes packed RGB pictures of " +
                             (coding_ == "rgb24" ? "3" : "4") + " bytes per pixel");
    }
    const auto& p = picture.planes[0];
    const size_t row = p.row_bytes();
    const size_t total = row * size_t(picture.height);
    EncodedPicture e;
    e.width = picture.width;
    e.height = picture.height;
    e.rowstride = int(row);
    e.options.rgb_format = std::string(name(picture.format));
    std::vector<uint8_t> raw(total);
    for (int y = 0; y < picture.height; ++y) {
      std::memcpy(raw.data() + size_t(y) * row, p.unchecked_row(y), row);
    }
    switch (params.compression) {
      case RgbCompression::None: e.data = std::move(raw); break;
      case RgbCompression::Lz4: {
        if (total > size_t(LZ4_MAX_INPUT_SIZE)) {
          return codec_error(coding_, ErrorCode::LimitExceeded, "encode", "too large for lz4");
        }
        const int bound = LZ4_compressBound(int(total));
        e.data.resize(4 + size_t(bound));
        e.data[0] = uint8_t(total);
        e.data[1] = uint8_t(total >> 8);
        e.data[2] = uint8_t(total >> 16);
        e.data[3] = uint8_t(total >> 24);
        const int n = LZ4_compress_default(reinterpret_cast<const char*>(raw.data()),
                                           reinterpret_cast<char*>(e.data.data() + 4), int(total),
                                           bound);
        if (n <= 0) return codec_error(coding_, ErrorCode::Internal, "encode", "lz4 failed");
        e.data.resize(4 + size_t(n));
        e.options.lz4 = 1;
        break;
      }
      case RgbCompression::Zlib: {
        const int level = std::clamp(params.level, 1, 9);
        uLongf len = compressBound(uLong(total));
        e.data.resize(len);
        if (compress2(e.data.data(), &len, raw.data(), uLong(total), level) != Z_OK) {
          return codec_error(coding_, ErrorCode::Internal, "encode", "zlib failed");
        }
        e.data.resize(len);
        e.options.zlib = level;
        break;
      }
    }
    return e;
  }

 private:
  std::string coding_;
};

}  // namespace

std::unique_ptr<Encoder> make_rgb_encoder(std::string_view coding) {
  return std::make_unique<RgbEncoder>(coding);
}

}  // namespace pixpath::codecs::internal
