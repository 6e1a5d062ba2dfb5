#include "internal/draw_decoding.h"

#include <optional>
#include <string>

namespace pixpath::paint::internal {

codecs::DecodeParams decode_params(const DrawPacket& packet, const codecs::DecodeLimits& limits) {
  codecs::DecodeParams params;
  params.width = encoded_width(packet);
  params.height = encoded_height(packet);
  params.rowstride = packet.rowstride;
  params.options = &packet.options;
  params.limits = limits;
  return params;
}

bool direct_capable(const DrawPacket& packet, const codecs::Decoder& decoder, PixelFormat format) {
  return !packet.options.delta && !packet.options.store && packet.options.paint &&
         !is_scaled(packet) && packet.w > 0 && packet.h > 0 && decoder.can_write(format);
}

Result<Picture> decode_private(const DrawPacket& packet, const codecs::Decoder& decoder,
                               PixelFormat preferred, const codecs::DecodeLimits& limits,
                               std::vector<Error>& warnings) {
  std::optional<PixelFormat> format;
  if (!packet.options.delta && !packet.options.store && decoder.can_write(preferred))
    format = preferred;
  auto decoded = decoder.decode(packet.data, decode_params(packet, limits), format);
  if (!decoded.ok()) return decoded.error();
  Picture pic = std::move(decoded->picture);
  for (auto& w : decoded->warnings) warnings.push_back(std::move(w));
  if (pic.width() != encoded_width(packet) || pic.height() != encoded_height(packet))
    return Error(ErrorCode::CorruptData, packet.coding, "decode",
                 "decoded " + std::to_string(pic.width()) + "x" + std::to_string(pic.height()) +
                     ", the packet says " + std::to_string(encoded_width(packet)) + "x" +
                     std::to_string(encoded_height(packet)));
  return pic;
}

Result<void> decode_direct(const DrawPacket& packet, const codecs::Decoder& decoder,
                           const PictureView& target, const codecs::DecodeLimits& limits,
                           std::vector<Error>& warnings) {
  auto report = decoder.decode_into(packet.data.span(), decode_params(packet, limits), target);
  if (!report.ok()) return report.error();
  for (auto& w : report->warnings) warnings.push_back(std::move(w));
  return ok();
}

}  // namespace pixpath::paint::internal
