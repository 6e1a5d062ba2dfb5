#include "internal/codec_common.h"

#include "pixpath/core/storage_pool.h"

namespace pixpath::codecs::internal {

std::string size_string(int width, int height) {
  return std::to_string(width) + "x" + std::to_string(height);
}

std::optional<Error> check_decode_size(std::string_view coding, int width, int height,
                                       const DecodeParams& params) {
  const DecodeLimits& l = params.limits;
  if (width <= 0 || height <= 0) {
    return codec_error(coding, ErrorCode::CorruptData, "read header",
                       "picture size " + size_string(width, height) + " is empty or negative");
  }
  if (width > l.max_width || height > l.max_height ||
      uint64_t(width) * uint64_t(height) > l.max_pixels) {
    return codec_error(coding, ErrorCode::LimitExceeded, "read header",
                       "picture size " + size_string(width, height) + " exceeds the limits (" +
                           size_string(l.max_width, l.max_height) + ", " +
                           std::to_string(l.max_pixels) + " pixels)");
  }
  if ((params.width && params.width != width) || (params.height && params.height != height)) {
    return codec_error(coding, ErrorCode::CorruptData, "read header",
                       "the data holds a " + size_string(width, height) +
                           " picture, the packet says " +
                           size_string(params.width, params.height));
  }
  return std::nullopt;
}

std::optional<Error> check_destination(std::string_view coding, const PictureView& dst,
                                       int width, int height) {
  if (dst.empty()) {
    return codec_error(coding, ErrorCode::InvalidArgument, "decode", "empty destination view");
  }
  if (dst.width != width || dst.height != height) {
    return codec_error(coding, ErrorCode::InvalidArgument, "decode",
                       "destination is " + size_string(dst.width, dst.height) +
                           ", the picture is " + size_string(width, height));
  }
  for (int i = 0; i < dst.plane_count; ++i) {
    const auto& p = dst.planes[size_t(i)];
    if (!p.data || p.stride < p.row_bytes()) {
      return codec_error(coding, ErrorCode::InvalidArgument, "decode",
                         "destination plane " + std::to_string(i) + " has no memory or a stride "
                         "shorter than its rows");
    }
  }
  return std::nullopt;
}

int packed_bpp(PixelFormat format) {
  const auto& fi = info(format);
  return fi.planes == 1 ? fi.bytes_per_pixel[0] : 0;
}

Result<DecodeResult> decode_into_new_picture(const Decoder& decoder, const SharedBytes& data,
                                             const DecodeParams& params,
                                             std::optional<PixelFormat> format,
                                             StoragePool* pool, size_t stride) {
  PIXPATH_TRY(ImageInfo inf, decoder.inspect(data.span(), params));
  PixelFormat fmt = format ? *format
                           : (inf.has_alpha && !info(inf.natural_format).has_alpha
                                  ? PixelFormat::RGBA
                                  : inf.natural_format);
  AllocateOptions ao;
  ao.pool = pool;
  if (info(fmt).planes == 1) ao.stride = stride;
  PictureLimits pl = PictureLimits::defaults();
  pl.max_width = params.limits.max_width;
  pl.max_height = params.limits.max_height;
  ao.limits = pl;
  auto pic = Picture::allocate(fmt, inf.width, inf.height, ao);
  if (!pic.ok()) return pic.error().within(std::string(decoder.coding()), "allocate");
  auto view = pic->write();
  if (!view.ok()) return view.error().within(std::string(decoder.coding()), "allocate");
  PIXPATH_TRY(DecodeReport rep, decoder.decode_into(data.span(), params, *view));
  DecodeResult out{std::move(*pic), std::move(rep.warnings)};
  return out;
}

}  // namespace pixpath::codecs::internal

namespace pixpath::codecs {

Result<DecodeResult> Decoder::decode(const SharedBytes& data, const DecodeParams& params,
                                     std::optional<PixelFormat> format, StoragePool* pool) const {
  return internal::decode_into_new_picture(*this, data, params, format, pool);
}

}  // namespace pixpath::codecs
