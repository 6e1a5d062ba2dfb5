// ChunkParser: turns a byte stream from an xpra peer into decoded packets, fed in arbitrary
// pieces (one byte at a time works as well as whole buffers).
//
// Main chunks are decoded with the packet encoder their protocol flags name (bencode 0x00 or
// rencodeplus 0x10, either with the flush bit 0x08); any other encoding is refused as soon as
// its header arrives. Each chunk's payload is read into its own buffer, allocated only after the header's size was
// checked against FrameLimits; a packet's byte strings (including raw chunks substituted into
// the main packet) are SharedBytes slices of those buffers, so they stay valid as long as the
// caller keeps the Packet (or any slice of it).
//
// After any error the parser is poisoned: the stream has lost sync and every later feed()
// returns the same error.
// Threading: not thread-safe; one parser belongs to one reader.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"
#include "pixpath/net/xpra/framing.h"
#include "pixpath/net/xpra/value.h"

namespace pixpath::xpra {

struct Packet {
  std::string type;  // packet[0] as text
  Value body;        // the whole list, type included, raw chunks substituted
  size_t wire_size = 0;      // bytes on the wire, headers included, all chunks
  bool compressed = false;   // the main chunk or a raw chunk was compressed
  uint8_t main_level = 0;    // level byte of the main chunk (0x10 | n lz4, 0x40 | n brotli, n zlib)
  uint8_t main_flags = 0;    // protocol flags of the main chunk (encoder, 0x08 flush)
  PacketEncoder encoder = PacketEncoder::Bencode;  // how the main chunk was encoded
  std::chrono::steady_clock::time_point received{};  // when the last chunk completed
};

class ChunkParser {
 public:
  explicit ChunkParser(FrameLimits limits = {}) : limits_(limits) {}

  // Consumes all of `bytes`; appends every packet completed by them to `out`.
  [[nodiscard]] Result<void> feed(std::span<const uint8_t> bytes, std::vector<Packet>& out);

  // True when no chunk is partly read (a clean place for the stream to end).
  bool idle() const { return header_fill_ == 0 && !in_payload_ && raw_.empty(); }

 private:
  Result<void> fail(Error e);
  Result<void> chunk_complete(std::vector<Packet>& out);

  FrameLimits limits_;
  std::optional<Error> poisoned_;
  uint8_t header_[kChunkHeaderSize] = {};
  size_t header_fill_ = 0;
  ChunkHeader current_{};
  std::vector<uint8_t> payload_;
  bool in_payload_ = false;
  size_t payload_fill_ = 0;
  std::vector<std::pair<uint8_t, SharedBytes>> raw_;  // raw chunks waiting for their packet
  size_t packet_wire_bytes_ = 0;
  bool packet_compressed_ = false;
};

}  // namespace pixpath::xpra
