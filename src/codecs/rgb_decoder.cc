// rgb24 / rgb32: raw pixels in the packet's rgb_format (BGRX, RGBX, BGRA, RGBA, RGB, BGR,
// XRGB, ...), rows `rowstride` bytes apart, optionally compressed with zlib or lz4.
//
// What an xpra 3.1 server sends (xpra/server/picture_encode.py rgb_encode, and
// xpra/net/compression.py): options {rgb_format, and at most one of zlib: level, lz4: 1};
// zlib data is a zlib-wrapped stream (Python zlib.compress); lz4 data is one LZ4 *block*
// produced by python-lz4's lz4.block.compress with its default store_size=True, i.e. prefixed
// by the uncompressed size as a 4-byte little-endian integer. The client requires the
// decompressed size to be rowstride * h. Here the prefix is recognised when it equals
// rowstride * h; otherwise the data is tried as a bare block.
//
// Paths (no intermediate copy unless stated):
//  - raw, decode(): wraps the packet bytes, read-only, zero copy (same format).
//  - raw, decode_into(): rows copied into dst (same format: the decode itself, not counted)
//    or converted with convert_pixels (counted).
//  - zlib: inflated straight into the destination rows, the rowstride padding into scratch;
//    for another format, inflated into a strip of rows and converted strip by strip.
//  - lz4: decoded straight into dst when dst.stride == rowstride and the format matches (the
//    case decode() sets up); otherwise the block (which cannot be decoded piecewise) is decoded
//    into scratch and copied (counted) or converted (counted).
// Decompression bombs: rowstride * h is checked against DecodeLimits::max_decompressed_bytes
// before anything is allocated, and never more than that is inflated.
#include <lz4.h>
#include <zlib.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>

#include "internal/builtin_codecs.h"
#include "internal/codec_common.h"
#include "pixpath/core/counters.h"
#include "pixpath/core/pixel_ops.h"
#include "pixpath/core/storage.h"

namespace pixpath::codecs::internal {
namespace {

enum class Compression { None, Zlib, Lz4 };

struct Layout {
  PixelFormat format = PixelFormat::RGB;
  int width = 0, height = 0;
  size_t row_bytes = 0, rowstride = 0, total = 0;
  Compression compression = Compression::None;
};

// Inflates a zlib stream in exact amounts.
class Inflater {
 public:
  Inflater(std::string_view coding, std::span<const uint8_t> in) : coding_(coding), in_(in) {
    ok_ = inflateInit(&z_) == Z_OK;
  }
  ~Inflater() {
    if (ok_) inflateEnd(&z_);
  }
  Inflater(const Inflater&) = delete;
  Inflater& operator=(const Inflater&) = delete;

  Result<void> init_status() const {
    if (!ok_) return codec_error(coding_, ErrorCode::OutOfMemory, "inflate", "inflateInit failed");
    return pixpath::ok();
  }

  // Inflates exactly n bytes into out.
  Result<void> read(uint8_t* out, size_t n) {
    while (n > 0) {
      feed();
      const uInt chunk = static_cast<uInt>(std::min<size_t>(n, UINT_MAX));
      z_.next_out = out;
      z_.avail_out = chunk;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      const size_t got = chunk - z_.avail_out;
      out += got;
      n -= got;
      produced_ += got;
      if (n == 0) break;
      if (rc == Z_STREAM_END) {
        return codec_error(coding_, ErrorCode::Truncated, "inflate",
                           "zlib stream ends after " + std::to_string(produced_) +
                               " bytes, " + std::to_string(produced_ + n) + " expected");
      }
      if (rc == Z_BUF_ERROR || (rc == Z_OK && got == 0 && z_.avail_in == 0 && pos_ == in_.size())) {
        return codec_error(coding_, ErrorCode::Truncated, "inflate",
                           "data ends after " + std::to_string(produced_) +
                               " decompressed bytes, " + std::to_string(produced_ + n) +
                               " expected (truncated)");
      }
      if (rc != Z_OK) {
        return codec_error(coding_, ErrorCode::CorruptData, "inflate",
                           z_.msg ? z_.msg : "zlib error " + std::to_string(rc));
      }
    }
    return pixpath::ok();
  }

  // Skips n bytes of output (row padding).
  Result<void> skip(size_t n) {
    uint8_t scratch[4096];
    while (n > 0) {
      const size_t k = std::min(n, sizeof scratch);
      PIXPATH_CHECK(read(scratch, k));
      n -= k;
    }
    return pixpath::ok();
  }

  // After the picture: a warning when the stream holds more, or was not terminated.
  std::optional<Error> check_end() {
    uint8_t extra;
    feed();
    z_.next_out = &extra;
    z_.avail_out = 1;
    const int rc = inflate(&z_, Z_NO_FLUSH);
    if (z_.avail_out == 0) {
      return codec_warning(coding_, ErrorCode::CorruptData, "inflate",
                           "the stream holds more than rowstride * height = " +
                               std::to_string(produced_) + " bytes; the rest is ignored");
    }
    if (rc != Z_STREAM_END) {
      return codec_warning(coding_, ErrorCode::Truncated, "inflate",
                           "the zlib stream is not terminated (its end is missing)");
    }
    return std::nullopt;
  }

 private:
  void feed() {
    if (z_.avail_in == 0 && pos_ < in_.size()) {
      const size_t k = std::min<size_t>(in_.size() - pos_, UINT_MAX);
      z_.next_in = const_cast<Bytef*>(in_.data() + pos_);
      z_.avail_in = static_cast<uInt>(k);
      pos_ += k;
    }
  }

  std::string_view coding_;
  std::span<const uint8_t> in_;
  size_t pos_ = 0;
  size_t produced_ = 0;
  z_stream z_{};
  bool ok_ = false;
};

class RgbDecoder final : public Decoder {
 public:
  explicit RgbDecoder(std::string_view coding) : coding_(coding) {}

  std::string_view coding() const override { return coding_; }

  Result<ImageInfo> inspect(std::span<const uint8_t> data,
                            const DecodeParams& params) const override {
    PIXPATH_TRY(Layout l, layout(params));
    if (l.compression == Compression::None && data.size() < l.total) return truncated(l, data);
    ImageInfo inf;
    inf.width = l.width;
    inf.height = l.height;
    inf.natural_format = l.format;
    inf.has_alpha = info(l.format).has_alpha;
    inf.detail = std::string(name(l.format)) + " rowstride " + std::to_string(l.rowstride) +
                 (l.compression == Compression::Zlib  ? " zlib"
                  : l.compression == Compression::Lz4 ? " lz4"
                                                      : "");
    return inf;
  }

  bool can_write(PixelFormat f) const override { return info(f).packed_rgb; }

  Result<DecodeReport> decode_into(std::span<const uint8_t> data, const DecodeParams& params,
                                   const PictureView& dst) const override {
    PIXPATH_TRY(Layout l, layout(params));
    if (auto e = check_destination(coding_, dst, l.width, l.height)) return *e;
    if (!info(dst.format).packed_rgb) {
      return codec_error(coding_, ErrorCode::Unsupported, "decode",
                         "cannot decode into " + std::string(name(dst.format)));
    }
    DecodeReport rep{l.width, l.height, {}};
    switch (l.compression) {
      case Compression::None: {
        if (data.size() < l.total) return truncated(l, data);
        if (data.size() > l.total) rep.warnings.push_back(trailing(l, data.size()));
        PIXPATH_CHECK(place(l, data.data(), dst, /*count_same=*/false));
        break;
      }
      case Compression::Zlib: PIXPATH_CHECK(inflate_into(l, data, dst, rep)); break;
      case Compression::Lz4: PIXPATH_CHECK(lz4_into(l, data, dst)); break;
    }
    return rep;
  }

  Result<DecodeResult> decode(const SharedBytes& data, const DecodeParams& params,
                              std::optional<PixelFormat> format,
                              StoragePool* pool) const override {
    PIXPATH_TRY(Layout l, layout(params));
    if (l.compression != Compression::None || (format && *format != l.format)) {
      // lz4 decodes straight into a picture with the packet's rowstride.
      return decode_into_new_picture(*this, data, params, format.value_or(l.format), pool,
                                     format && *format != l.format ? 0 : l.rowstride);
    }
    if (data.size() < l.total) return truncated(l, data.span());
    DecodeResult out;
    if (data.size() > l.total) out.warnings.push_back(trailing(l, data.size()));
    // Zero copy: the picture wraps the packet bytes, read-only, keeping them alive.
    SharedBytes keep = data;
    auto storage = PictureStorage::wrap(
        MemoryLocation::host(), const_cast<uint8_t*>(data.data()), data.size(),
        StorageFlags{.read_only = true, .externally_owned = true},
        [keep]() mutable { keep = SharedBytes(); });
    if (!storage.ok()) return storage.error().within(coding_, "wrap");
    PictureLimits pl = PictureLimits::defaults();
    pl.max_width = params.limits.max_width;
    pl.max_height = params.limits.max_height;
    pl.max_bytes = std::max<uint64_t>(pl.max_bytes, data.size());
    auto pic = Picture::wrap(l.format, l.width, l.height, std::move(*storage), 0, l.rowstride, pl);
    if (!pic.ok()) return pic.error().within(coding_, "wrap");
    out.picture = std::move(*pic);
    return out;
  }

 private:
  Result<Layout> layout(const DecodeParams& params) const {
    Layout l;
    const DrawOptions* o = params.options;
    std::string fname = o && !o->rgb_format.empty() ? o->rgb_format
                        : coding_ == "rgb24"        ? "RGB"
                                                    : "RGBX";
    auto f = parse_pixel_format(fname);
    if (!f || !info(*f).packed_rgb) {
      return codec_error(coding_, ErrorCode::Unsupported, "read options",
                         "rgb_format '" + fname + "' is not a packed RGB format");
    }
    l.format = *f;
    if (params.width <= 0 || params.height <= 0) {
      return codec_error(coding_, ErrorCode::InvalidArgument, "read options",
                         "rgb data carries no size: the packet's w x h must be given (got " +
                             size_string(params.width, params.height) + ")");
    }
    if (auto e = check_decode_size(coding_, params.width, params.height, params)) return *e;
    l.width = params.width;
    l.height = params.height;
    l.row_bytes = size_t(l.width) * size_t(packed_bpp(l.format));
    if (params.rowstride < 0) {
      return codec_error(coding_, ErrorCode::CorruptData, "read options", "negative rowstride");
    }
    l.rowstride = params.rowstride ? size_t(params.rowstride) : l.row_bytes;
    if (l.rowstride < l.row_bytes) {
      return codec_error(coding_, ErrorCode::CorruptData, "read options",
                         "rowstride " + std::to_string(l.rowstride) + " is less than a row of " +
                             std::to_string(l.width) + " " + fname + " pixels (" +
                             std::to_string(l.row_bytes) + " bytes)");
    }
    // rowstride < 2^31, height <= max_height: no overflow in 64 bits.
    l.total = l.rowstride * size_t(l.height);
    const int zl = o ? o->zlib : 0, lz = o ? o->lz4 : 0;
    if (zl && lz) {
      return codec_error(coding_, ErrorCode::CorruptData, "read options",
                         "both zlib and lz4 are set: at most one compressor is allowed");
    }
    l.compression = zl > 0 ? Compression::Zlib : lz > 0 ? Compression::Lz4 : Compression::None;
    if (l.compression != Compression::None && l.total > params.limits.max_decompressed_bytes) {
      return codec_error(coding_, ErrorCode::LimitExceeded, "read options",
                         "rowstride * height = " + std::to_string(l.total) +
                             " bytes exceeds the decompression limit of " +
                             std::to_string(params.limits.max_decompressed_bytes));
    }
    return l;
  }

  Error truncated(const Layout& l, std::span<const uint8_t> data) const {
    return codec_error(coding_, ErrorCode::Truncated, "read data",
                       "data ends at byte " + std::to_string(data.size()) +
                           " of rowstride * height = " + std::to_string(l.rowstride) + " * " +
                           std::to_string(l.height) + " = " + std::to_string(l.total));
  }
  Error trailing(const Layout& l, size_t size) const {
    return codec_warning(coding_, ErrorCode::CorruptData, "read data",
                         std::to_string(size - l.total) +
                             " bytes after rowstride * height are ignored");
  }

  // Rows of `src` (l.rowstride apart, l.format) into dst: copy when the formats match (counted
  // only when the caller says it is an extra copy), else convert (counted by convert_pixels).
  Result<void> place(const Layout& l, const uint8_t* src, const PictureView& dst, bool count_same,
                     int y0 = 0, int rows = -1) const {
    if (rows < 0) rows = l.height;
    auto sv = make_view(l.format, l.width, rows, src, l.rowstride);
    if (!sv.ok()) return sv.error().within(coding_, "decode");
    PictureView dv = row_range(dst, y0, rows);
    if (dst.format == l.format) {
      const auto& p = dv.planes[0];
      for (int y = 0; y < rows; ++y) {
        std::memcpy(p.unchecked_row(y), src + size_t(y) * l.rowstride, l.row_bytes);
      }
      if (count_same) count_copy(int64_t(l.row_bytes) * rows);
      return ok();
    }
    auto c = convert_pixels(*sv, dv);
    if (!c.ok()) return c.error().within(coding_, "convert");
    return ok();
  }

  Result<void> inflate_into(const Layout& l, std::span<const uint8_t> data,
                            const PictureView& dst, DecodeReport& rep) const {
    Inflater z(coding_, data);
    PIXPATH_CHECK(z.init_status());
    const size_t pad = l.rowstride - l.row_bytes;
    if (dst.format == l.format) {
      const auto& p = dst.planes[0];
      for (int y = 0; y < l.height; ++y) {
        PIXPATH_CHECK(z.read(p.unchecked_row(y), l.row_bytes));
        PIXPATH_CHECK(z.skip(pad));
      }
    } else {
      const int strip_rows =
          int(std::clamp<size_t>((size_t{256} << 10) / l.rowstride, 1, size_t(l.height)));
      std::unique_ptr<uint8_t[]> strip(new (std::nothrow) uint8_t[l.rowstride * size_t(strip_rows)]);
      if (!strip) return codec_error(coding_, ErrorCode::OutOfMemory, "inflate", "no memory");
      for (int y = 0; y < l.height; y += strip_rows) {
        const int rows = std::min(strip_rows, l.height - y);
        PIXPATH_CHECK(z.read(strip.get(), l.rowstride * size_t(rows)));
        PIXPATH_CHECK(place(l, strip.get(), dst, false, y, rows));
      }
    }
    if (auto w = z.check_end()) rep.warnings.push_back(*w);
    return ok();
  }

  Result<void> lz4_into(const Layout& l, std::span<const uint8_t> data,
                        const PictureView& dst) const {
    std::span<const uint8_t> block = data;
    std::string prefix_note;
    if (data.size() >= 4) {
      const uint32_t stated = read_le32(data.data());
      if (stated == l.total) {
        block = data.subspan(4);
      } else {
        prefix_note = " (as a size prefix its first 4 bytes would say " + std::to_string(stated) +
                      ")";
      }
    }
    if (block.size() > size_t(INT_MAX) || l.total > size_t(INT_MAX)) {
      return codec_error(coding_, ErrorCode::LimitExceeded, "lz4 decompress",
                         "lz4 blocks are limited to 2 GiB");
    }
    const char* src = reinterpret_cast<const char*>(block.data());
    const auto& p = dst.planes[0];
    if (dst.format == l.format && p.stride == l.rowstride) {
      // Straight into dst, stopping at the last row's last pixel (its padding is not there).
      const size_t target = l.rowstride * size_t(l.height - 1) + l.row_bytes;
      const int n = LZ4_decompress_safe_partial(src, reinterpret_cast<char*>(p.data),
                                                int(block.size()), int(target), int(target));
      if (n < 0 || size_t(n) < target) return lz4_failed(l, n, prefix_note);
      return ok();
    }
    std::unique_ptr<char[]> tmp(new (std::nothrow) char[l.total]);
    if (!tmp) return codec_error(coding_, ErrorCode::OutOfMemory, "lz4 decompress", "no memory");
    const int n = LZ4_decompress_safe(src, tmp.get(), int(block.size()), int(l.total));
    if (n < 0 || size_t(n) != l.total) return lz4_failed(l, n, prefix_note);
    return place(l, reinterpret_cast<const uint8_t*>(tmp.get()), dst, /*count_same=*/true);
  }

  Error lz4_failed(const Layout& l, int n, const std::string& note) const {
    if (n >= 0) {
      return codec_error(coding_, ErrorCode::Truncated, "lz4 decompress",
                         "lz4 block decodes to " + std::to_string(n) +
                             " bytes, rowstride * height = " + std::to_string(l.total) +
                             " expected" + note);
    }
    return codec_error(coding_, ErrorCode::CorruptData, "lz4 decompress",
                       "corrupt or truncated lz4 block (expected " + std::to_string(l.total) +
                           " bytes)" + note);
  }

  std::string coding_;
};

}  // namespace

std::unique_ptr<Decoder> make_rgb_decoder(std::string_view coding) {
  return std::make_unique<RgbDecoder>(coding);
}

}  // namespace pixpath::codecs::internal
