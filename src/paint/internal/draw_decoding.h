// How a draw packet maps onto a Decoder call: the encoded size, the parameters, and whether
// it may be decoded straight into a backing's framebuffer. Stateless, any thread.
#pragma once

#include <string_view>
#include <vector>

#include "pixpath/codecs/decoder.h"
#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::paint::internal {

// Codings the engine paints without a decoder.
inline bool is_builtin_coding(std::string_view coding) {
  return coding == "scroll" || coding == "void";
}

// The size the data actually holds: scaled_size when present, else w x h.
inline int encoded_width(const DrawPacket& p) { return p.options.scaled_width.value_or(p.w); }
inline int encoded_height(const DrawPacket& p) { return p.options.scaled_height.value_or(p.h); }
inline bool is_scaled(const DrawPacket& p) {
  return encoded_width(p) != p.w || encoded_height(p) != p.h;
}

codecs::DecodeParams decode_params(const DrawPacket& packet, const codecs::DecodeLimits& limits);

// True when the packet can be decoded into a `format` view of exactly w x h with no private
// picture: no delta/store (those keep the decoded pixels), not scaled, painted.
bool direct_capable(const DrawPacket& packet, const codecs::Decoder& decoder, PixelFormat format);

// Decodes into a new picture: in `preferred` when the decoder writes it directly and the
// packet does not use delta buckets (they need the pixels as the server XORed them), else in
// the decoder's natural format. Checks the decoded size. The decoder's warnings (damaged data
// that still decoded) are appended to `warnings`.
Result<Picture> decode_private(const DrawPacket& packet, const codecs::Decoder& decoder,
                               PixelFormat preferred, const codecs::DecodeLimits& limits,
                               std::vector<Error>& warnings);

Result<void> decode_direct(const DrawPacket& packet, const codecs::Decoder& decoder,
                           const PictureView& target, const codecs::DecodeLimits& limits,
                           std::vector<Error>& warnings);

}  // namespace pixpath::paint::internal
