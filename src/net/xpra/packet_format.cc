#include "pixpath/net/xpra/packet_format.h"

#include <array>

#include <fmt/format.h>

#include "pixpath/net/xpra/framing.h"

namespace pixpath::xpra {

std::string_view to_string(PacketEncoder encoder) {
  switch (encoder) {
    case PacketEncoder::Rencodeplus: return "rencodeplus";
    case PacketEncoder::Bencode: return "bencode";
  }
  return "?";
}

std::string_view to_string(PacketCompressor compressor) {
  switch (compressor) {
    case PacketCompressor::None: return "none";
    case PacketCompressor::Lz4: return "lz4";
    case PacketCompressor::Brotli: return "brotli";
    case PacketCompressor::Zlib: return "zlib";
  }
  return "?";
}

std::optional<PacketEncoder> parse_packet_encoder(std::string_view name) {
  for (PacketEncoder e : supported_packet_encoders()) {
    if (to_string(e) == name) return e;
  }
  return std::nullopt;
}

std::optional<PacketCompressor> parse_packet_compressor(std::string_view name) {
  for (PacketCompressor c : supported_packet_compressors()) {
    if (to_string(c) == name) return c;
  }
  return std::nullopt;
}

uint8_t protocol_flags(PacketEncoder encoder) {
  return encoder == PacketEncoder::Rencodeplus ? kProtoRencodeplus : kProtoBencode;
}

Result<PacketEncoder> packet_encoder_from_flags(uint8_t proto_flags) {
  const uint8_t f = proto_flags & uint8_t(~kProtoFlush);
  if (f == kProtoRencodeplus) return PacketEncoder::Rencodeplus;
  if (f == kProtoBencode) return PacketEncoder::Bencode;
  std::string_view what = f == kProtoRencode ? "rencode (xpra before 4.x)"
                          : f == kProtoYaml  ? "yaml"
                          : (f & kProtoCipher) ? "an encrypted (no cipher is configured)"
                                               : "an unknown";
  return Error(ErrorCode::Unsupported, "xpra", "decode packet",
               fmt::format("protocol flags 0x{:02x} name {} packet encoding; pixpath reads "
                           "bencode (0x00) and rencodeplus (0x10)",
                           proto_flags, what));
}

std::span<const PacketEncoder> supported_packet_encoders() {
  static constexpr std::array kAll{PacketEncoder::Rencodeplus, PacketEncoder::Bencode};
  return kAll;
}

std::span<const PacketCompressor> supported_packet_compressors() {
  // lz4, brotli and zlib are required dependencies of pixpath_xpra, so every build has them.
  static constexpr std::array kAll{PacketCompressor::Lz4, PacketCompressor::Brotli,
                                   PacketCompressor::Zlib, PacketCompressor::None};
  return kAll;
}

}  // namespace pixpath::xpra
