// xpra chunk framing: every chunk on the wire starts with an 8-byte header in network byte
// order:
//
//   byte 0    'P' (0x50)
//   byte 1    protocol flags: 0 bencode, 1 rencode, 2 cipher, 4 yaml
//   byte 2    level: low 4 bits the compression level, high bits the algorithm
//             (0x10 lz4, 0x20 lzo, 0x40 brotli; a level with no algorithm bit is zlib)
//   byte 3    chunk index: 0 the main packet, > 0 a raw item of the next main packet
//   bytes 4-7 payload size (u32)
//
// lz4 payloads are lz4 "block" data prefixed by the uncompressed size as a little-endian u32
// (python-lz4's store_size format, which xpra uses); zlib payloads are zlib streams.
// Raw chunks (index > 0) arrive before their main packet and replace the item at that index.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"
#include "pixpath/net/xpra/value.h"

namespace pixpath::xpra {

inline constexpr size_t kChunkHeaderSize = 8;
inline constexpr uint8_t kProtoBencode = 0x0, kProtoRencode = 0x1, kProtoCipher = 0x2,
                         kProtoYaml = 0x4;
inline constexpr uint8_t kLevelLz4 = 0x10, kLevelLzo = 0x20, kLevelBrotli = 0x40;

// Limits the parser enforces before it allocates anything. Defaults suit a desktop-sized
// session (a 4K BGRX frame is 33 MB uncompressed). Violations are ErrorCode::LimitExceeded.
struct FrameLimits {
  size_t max_chunk_size = 64u << 20;         // payload size of one chunk as sent
  size_t max_packet_size = 128u << 20;       // all chunks of one packet, as sent
  size_t max_decompressed_size = 128u << 20; // one chunk after zlib / lz4
  int max_depth = 32;                        // bencode nesting
  int max_raw_chunks = 4;                    // raw chunks before one main packet (xpra: < 4)
  size_t max_items = size_t{1} << 18;        // bencode values in one packet (BencodeLimits)
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

// Decompresses a chunk payload according to `level` (zlib or lz4), refusing to produce more
// than `max_size` bytes (the lz4 size prefix is checked before allocating). level 0 returns
// `payload` itself.
[[nodiscard]] Result<SharedBytes> decompress_chunk(const SharedBytes& payload, uint8_t level,
                                                   size_t max_size);

// Builds the wire bytes of one uncompressed bencoded packet (one chunk, index 0).
[[nodiscard]] std::vector<uint8_t> frame_packet(const Value& packet);
// Appends one chunk with the given header fields and payload (payload already compressed as
// `level` says); for tests and tools that need to forge streams.
void append_chunk(std::vector<uint8_t>& out, uint8_t proto_flags, uint8_t level, uint8_t index,
                  std::span<const uint8_t> payload);

}  // namespace pixpath::xpra
