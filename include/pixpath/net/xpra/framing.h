// xpra chunk framing: every chunk on the wire starts with an 8-byte header in network byte
// order:
//
//   byte 0    'P' (0x50)
//   byte 1    protocol flags: the packet encoder of a main chunk (0x00 bencode, 0x10
//             rencodeplus; xpra also knew 0x01 rencode and 0x04 yaml), ORed with 0x08 "flush"
//             (xpra 6.x: no packet follows at once) and 0x02 cipher
//   byte 2    level: low 4 bits the compression level, high bits the algorithm
//             (0x10 lz4, 0x20 lzo, 0x40 brotli; a level with no algorithm bit is zlib)
//   byte 3    chunk index: 0 the main packet, > 0 a raw item of the next main packet
//   bytes 4-7 payload size (u32)
//
// lz4 payloads are lz4 "block" data prefixed by the uncompressed size as a little-endian u32
// (python-lz4's store_size format, which xpra 3.x and 6.x both use); brotli payloads are one
// plain brotli stream (xpra 6.x, whose level byte is 0x40 | quality); zlib payloads are zlib
// streams (xpra 3.x only). packet_format.h names the encoders and compressors.
// Raw chunks (index > 0) arrive before their main packet and replace the item at that index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"
#include "pixpath/net/xpra/bencode.h"
#include "pixpath/net/xpra/packet_format.h"
#include "pixpath/net/xpra/value.h"

namespace pixpath::xpra {

inline constexpr size_t kChunkHeaderSize = 8;
inline constexpr uint8_t kProtoBencode = 0x0, kProtoRencode = 0x1, kProtoCipher = 0x2,
                         kProtoYaml = 0x4, kProtoFlush = 0x8, kProtoRencodeplus = 0x10;
inline constexpr uint8_t kLevelLz4 = 0x10, kLevelLzo = 0x20, kLevelBrotli = 0x40;

// Limits the parser enforces before it allocates anything. Defaults suit a desktop-sized
// session (a 4K BGRX frame is 33 MB uncompressed). Violations are ErrorCode::LimitExceeded.
struct FrameLimits {
  size_t max_chunk_size = 64u << 20;         // payload size of one chunk as sent
  size_t max_packet_size = 128u << 20;       // all chunks of one packet, as sent
  size_t max_decompressed_size = 128u << 20; // one chunk after zlib / lz4 / brotli
  int max_depth = 32;                        // bencode / rencodeplus nesting
  int max_raw_chunks = 4;                    // raw chunks before one main packet (xpra: < 4)
  size_t max_items = size_t{1} << 18;        // values in one packet (BencodeLimits)
};

struct ChunkHeader {
  uint8_t proto_flags = 0;
  uint8_t level = 0;
  uint8_t index = 0;
  uint32_t size = 0;
};

// Parses the 8 header bytes (precondition: bytes.size() >= 8). Fails on a bad magic byte.
[[nodiscard]] Result<ChunkHeader> parse_chunk_header(std::span<const uint8_t> bytes);
void write_chunk_header(const ChunkHeader& header, uint8_t out[kChunkHeaderSize]);

// Decompresses a chunk payload according to `level` (zlib, lz4 or brotli), refusing to produce
// more than `max_size` bytes: the lz4 size prefix is checked before allocating, and zlib and
// brotli output is produced into a buffer that grows up to `max_size` and no further (a
// decompression bomb fails with LimitExceeded). Bytes after the end of a zlib or brotli stream
// are an error. level 0 returns `payload` itself. Errors: subject "xpra", stage "decompress
// chunk"; lzo and unknown algorithm bits are Unsupported.
[[nodiscard]] Result<SharedBytes> decompress_chunk(const SharedBytes& payload, uint8_t level,
                                                   size_t max_size);

// A compressed payload and the level byte that marks it.
struct CompressedPayload {
  uint8_t level = 0;
  std::vector<uint8_t> bytes;
};
// Compresses `data` with `compressor` at `level` (clamped as PacketFormat says; a level <= 0 or
// PacketCompressor::None gives level byte 0 and the data itself). Fails only when a library
// does (or the data is beyond what lz4 or the u32 size field can carry).
[[nodiscard]] Result<CompressedPayload> compress_payload(std::span<const uint8_t> data,
                                                         PacketCompressor compressor, int level);

// Decodes a main chunk's (decompressed) payload with the packet encoder its protocol flags name
// (the flush bit is ignored). Errors: the decoder's (stage "bencode decode" / "rencode
// decode"), or Unsupported, subject "xpra", stage "decode packet", for flags naming an encoder
// pixpath does not read (rencode, yaml, cipher, unknown bits).
[[nodiscard]] Result<Value> decode_packet_payload(const SharedBytes& payload, uint8_t proto_flags,
                                                  BencodeLimits limits = {});

// Builds the wire bytes of one uncompressed bencoded packet (one chunk, index 0).
[[nodiscard]] std::vector<uint8_t> frame_packet(const Value& packet);
// Builds the wire bytes of one packet (one chunk, index 0) encoded and compressed as `format`
// says: the packet is compressed when format.level > 0, a compressor is chosen and the encoded
// packet is longer than format.min_compress_size. Errors: compress_payload's, or
// LimitExceeded when the payload does not fit the u32 size field.
[[nodiscard]] Result<std::vector<uint8_t>> frame_packet(const Value& packet,
                                                        const PacketFormat& format);
// Appends one chunk with the given header fields and payload (payload already compressed as
// `level` says); for tests and tools that need to forge streams.
void append_chunk(std::vector<uint8_t>& out, uint8_t proto_flags, uint8_t level, uint8_t index,
                  std::span<const uint8_t> payload);

}  // namespace pixpath::xpra
