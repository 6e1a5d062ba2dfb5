// The packet encoders and packet compressors pixpath speaks, by the names xpra uses for them in
// its capabilities ("rencodeplus", "bencode"; "lz4", "brotli", "zlib", "none") and by the
// header bits that mark them on the wire (see framing.h):
//
//   encoder       protocol flags   servers
//   rencodeplus   0x10             xpra 4.x and later; the only one 6.x reads
//   bencode       0x00             xpra 3.x (3.1 in Debian 12)
//
//   compressor    level byte                    payload
//   none          0                             as encoded
//   lz4           0x10 | level (1..15)          u32 little-endian size, then one lz4 block
//   brotli        0x40 | quality (1..11)        one brotli stream (no size prefix)
//   zlib          level (1..9), no high bits    one zlib stream; xpra 3.x only
//
// Threading: plain values and pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "pixpath/core/result.h"

namespace pixpath::xpra {

enum class PacketEncoder { Rencodeplus, Bencode };
enum class PacketCompressor { None, Lz4, Brotli, Zlib };

// xpra's names, e.g. "rencodeplus"; parse_* accepts exactly those and gives nullopt otherwise.
std::string_view to_string(PacketEncoder encoder);
std::string_view to_string(PacketCompressor compressor);
std::optional<PacketEncoder> parse_packet_encoder(std::string_view name);
std::optional<PacketCompressor> parse_packet_compressor(std::string_view name);

// The protocol-flags value of a main chunk in `encoder` (0x10 or 0x00).
uint8_t protocol_flags(PacketEncoder encoder);
// The packet encoder the protocol flags of a main chunk name, ignoring the flush bit (0x08).
// Anything else (rencode 0x01, yaml 0x04, cipher 0x02, unknown bits) is Unsupported, subject
// "xpra", stage "decode packet", with the flags and what they name in the reason.
[[nodiscard]] Result<PacketEncoder> packet_encoder_from_flags(uint8_t proto_flags);

// What this build reads and writes, in order of preference (for `pixpath info` and for the
// client's hello).
std::span<const PacketEncoder> supported_packet_encoders();
std::span<const PacketCompressor> supported_packet_compressors();

// How to write outgoing packets (framing.h: frame_packet).
struct PacketFormat {
  PacketEncoder encoder = PacketEncoder::Bencode;
  PacketCompressor compressor = PacketCompressor::None;
  // 0 = do not compress; otherwise clamped to the compressor's range (lz4 1..15, brotli
  // 1..11 with 2 the least brotli actually uses, zlib 1..9).
  int level = 0;
  // Encoded packets of at most this many bytes are sent uncompressed (xpra: 378).
  size_t min_compress_size = 378;
};

}  // namespace pixpath::xpra
