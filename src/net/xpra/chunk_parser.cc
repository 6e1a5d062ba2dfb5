#include "pixpath/net/xpra/chunk_parser.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "pixpath/net/xpra/bencode.h"

namespace pixpath::xpra {

namespace {
Error frame_error(ErrorCode code, std::string reason) {
  return Error(code, "xpra", "parse chunk", std::move(reason));
}
}  // namespace

Result<void> ChunkParser::fail(Error e) {
  poisoned_ = e;
  return e;
}

Result<void> ChunkParser::feed(std::span<const uint8_t> bytes, std::vector<Packet>& out) {
  if (poisoned_) return *poisoned_;
  size_t pos = 0;
  while (pos < bytes.size()) {
    if (!in_payload_) {
      size_t take = std::min(kChunkHeaderSize - header_fill_, bytes.size() - pos);
      std::memcpy(header_ + header_fill_, bytes.data() + pos, take);
      header_fill_ += take;
      pos += take;
      // Reject a bad magic byte as soon as it arrives rather than after 8 bytes.
      if (header_fill_ >= 1 && header_[0] != 'P') {
        return fail(frame_error(ErrorCode::Protocol,
                                fmt::format("chunk starts with byte 0x{:02x}, not 'P': not an "
                                            "xpra peer, or the stream lost sync",
                                            header_[0])));
      }
      if (header_fill_ < kChunkHeaderSize) continue;
      auto h = parse_chunk_header({header_, kChunkHeaderSize});
      if (!h.ok()) return fail(h.error());
      current_ = *h;
      if (current_.proto_flags & kProtoCipher) {
        return fail(frame_error(ErrorCode::Unsupported, "encrypted chunk (no cipher configured)"));
      }
      if (current_.index == 0) {
        // An encoding pixpath cannot read is refused at the header, before its payload.
        auto encoder = packet_encoder_from_flags(current_.proto_flags);
        if (!encoder.ok()) return fail(encoder.error().within("xpra", "parse chunk"));
      }
      if (current_.size > limits_.max_chunk_size) {
        return fail(frame_error(ErrorCode::LimitExceeded,
                                fmt::format("chunk of {} bytes, limit is {}", current_.size,
                                            limits_.max_chunk_size)));
      }
      if (packet_wire_bytes_ + kChunkHeaderSize + current_.size > limits_.max_packet_size) {
        return fail(frame_error(
            ErrorCode::LimitExceeded,
            fmt::format("packet of more than {} bytes (chunks so far {} + this chunk {}), limit "
                        "is {}",
                        packet_wire_bytes_ + kChunkHeaderSize + current_.size,
                        packet_wire_bytes_, current_.size, limits_.max_packet_size)));
      }
      if (current_.index > 0 && int(raw_.size()) >= limits_.max_raw_chunks) {
        return fail(frame_error(ErrorCode::LimitExceeded,
                                fmt::format("more than {} raw chunks before a main packet",
                                            limits_.max_raw_chunks)));
      }
      packet_wire_bytes_ += kChunkHeaderSize + current_.size;
      payload_.assign(current_.size, 0);  // size checked above
      payload_fill_ = 0;
      in_payload_ = true;
      header_fill_ = 0;
    }
    size_t take = std::min(payload_.size() - payload_fill_, bytes.size() - pos);
    if (take) std::memcpy(payload_.data() + payload_fill_, bytes.data() + pos, take);
    payload_fill_ += take;
    pos += take;
    if (payload_fill_ == payload_.size()) {
      in_payload_ = false;
      PIXPATH_CHECK(chunk_complete(out));
    }
  }
  return {};
}

Result<void> ChunkParser::chunk_complete(std::vector<Packet>& out) {
  SharedBytes wire = SharedBytes::adopt(std::move(payload_));
  payload_ = {};
  auto data = decompress_chunk(wire, current_.level, limits_.max_decompressed_size);
  if (!data.ok()) {
    return fail(data.error().within("xpra", fmt::format("parse chunk {}", current_.index)));
  }
  if (current_.level) packet_compressed_ = true;
  if (current_.index > 0) {
    for (const auto& [index, bytes] : raw_) {
      if (index == current_.index) {
        return fail(frame_error(ErrorCode::Protocol,
                                fmt::format("duplicate raw chunk at index {}", index)));
      }
    }
    raw_.emplace_back(current_.index, std::move(*data));
    return {};
  }
  auto body = decode_packet_payload(*data, current_.proto_flags,
                                    BencodeLimits{limits_.max_depth, limits_.max_items});
  if (!body.ok()) return fail(body.error().within("xpra", "parse packet"));
  Packet p;
  p.body = std::move(*body);
  if (!p.body.is_list() || p.body.as_list().empty()) {
    return fail(frame_error(ErrorCode::Protocol,
                            fmt::format("packet is a {}, not a non-empty list",
                                        p.body.type_name())));
  }
  auto& items = p.body.as_list();
  if (!items[0].is_bytes()) {
    return fail(frame_error(ErrorCode::Protocol,
                            fmt::format("packet type is {}, expected a string (did the peer use "
                                        "packet aliases?)",
                                        items[0].type_name())));
  }
  p.type = std::string(items[0].as_view());
  for (auto& [index, bytes] : raw_) {
    if (index >= items.size()) {
      return fail(frame_error(ErrorCode::Protocol,
                              fmt::format("raw chunk index {} but '{}' packet has {} items",
                                          index, p.type, items.size())));
    }
    items[index] = Value(std::move(bytes));
  }
  raw_.clear();
  p.wire_size = packet_wire_bytes_;
  p.compressed = packet_compressed_;
  p.main_level = current_.level;
  p.main_flags = current_.proto_flags;
  p.encoder = packet_encoder_from_flags(current_.proto_flags).value();  // checked at the header
  p.received = std::chrono::steady_clock::now();
  packet_wire_bytes_ = 0;
  packet_compressed_ = false;
  out.push_back(std::move(p));
  return {};
}

}  // namespace pixpath::xpra
