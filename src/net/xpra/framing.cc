#include "pixpath/net/xpra/framing.h"

#include <cstring>
#include <memory>

#include <algorithm>
#include <limits>

#include <brotli/decode.h>
#include <brotli/encode.h>
#include <fmt/format.h>
#include <lz4.h>
#include <zlib.h>

#include "pixpath/net/xpra/bencode.h"
#include "pixpath/net/xpra/rencode.h"

namespace pixpath::xpra {

Result<ChunkHeader> parse_chunk_header(std::span<const uint8_t> b) {
  if (b.size() < kChunkHeaderSize) {
    return Error(ErrorCode::Truncated, "xpra", "parse chunk header", "fewer than 8 bytes");
  }
  if (b[0] != 'P') {
    return Error(ErrorCode::Protocol, "xpra", "parse chunk header",
                 fmt::format("first byte is 0x{:02x}, not 'P': not an xpra peer, or the stream "
                             "lost sync",
                             b[0]));
  }
  ChunkHeader h;
  h.proto_flags = b[1];
  h.level = b[2];
  h.index = b[3];
  h.size = (uint32_t(b[4]) << 24) | (uint32_t(b[5]) << 16) | (uint32_t(b[6]) << 8) | b[7];
  return h;
}

void write_chunk_header(const ChunkHeader& h, uint8_t out[kChunkHeaderSize]) {
  out[0] = 'P';
  out[1] = h.proto_flags;
  out[2] = h.level;
  out[3] = h.index;
  out[4] = uint8_t(h.size >> 24);
  out[5] = uint8_t(h.size >> 16);
  out[6] = uint8_t(h.size >> 8);
  out[7] = uint8_t(h.size);
}

namespace {

Error inflate_error(ErrorCode code, std::string reason) {
  return Error(code, "xpra", "decompress chunk", std::move(reason));
}

Result<SharedBytes> inflate_zlib(const SharedBytes& in, size_t max_size) {
  z_stream zs{};
  if (inflateInit(&zs) != Z_OK) return inflate_error(ErrorCode::Internal, "inflateInit failed");
  std::vector<uint8_t> out;
  size_t cap = std::min<size_t>(max_size, std::max<size_t>(in.size() * 4, 4096));
  out.resize(cap);
  zs.next_in = const_cast<Bytef*>(in.data());
  zs.avail_in = static_cast<uInt>(in.size());
  size_t produced = 0;
  int rc = Z_OK;
  while (true) {
    if (produced == out.size()) {
      if (out.size() >= max_size) {
        inflateEnd(&zs);
        return inflate_error(ErrorCode::LimitExceeded,
                             fmt::format("zlib data inflates to more than {} bytes", max_size));
      }
      out.resize(std::min(max_size, out.size() * 2));
    }
    zs.next_out = out.data() + produced;
    zs.avail_out = static_cast<uInt>(std::min<size_t>(out.size() - produced, UINT32_MAX));
    size_t before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    produced += before - zs.avail_out;
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR && zs.avail_in == 0) {
      inflateEnd(&zs);
      return inflate_error(ErrorCode::Truncated, "zlib stream ends early");
    }
    if (rc != Z_OK && rc != Z_BUF_ERROR) {
      std::string msg = zs.msg ? zs.msg : "inflate failed";
      inflateEnd(&zs);
      return inflate_error(ErrorCode::CorruptData, "zlib: " + msg);
    }
  }
  size_t trailing = zs.avail_in;
  inflateEnd(&zs);
  if (trailing != 0) {
    return inflate_error(ErrorCode::CorruptData,
                         fmt::format("{} bytes after the end of the zlib stream", trailing));
  }
  out.resize(produced);
  return SharedBytes::adopt(std::move(out));
}

Result<SharedBytes> inflate_lz4(const SharedBytes& in, size_t max_size) {
  if (in.size() < 4) return inflate_error(ErrorCode::Truncated, "lz4 data without size prefix");
  const uint8_t* d = in.data();
  uint32_t size = uint32_t(d[0]) | (uint32_t(d[1]) << 8) | (uint32_t(d[2]) << 16) |
                  (uint32_t(d[3]) << 24);
  if (size > max_size) {
    return inflate_error(ErrorCode::LimitExceeded,
                         fmt::format("lz4 data claims {} bytes, limit is {}", size, max_size));
  }
  if (size > uint32_t(LZ4_MAX_INPUT_SIZE)) {
    return inflate_error(ErrorCode::CorruptData, fmt::format("lz4 size {} is impossible", size));
  }
  std::vector<uint8_t> out(size);
  int n = LZ4_decompress_safe(reinterpret_cast<const char*>(d + 4),
                              reinterpret_cast<char*>(out.data()), int(in.size() - 4), int(size));
  if (n < 0 || uint32_t(n) != size) {
    return inflate_error(ErrorCode::CorruptData,
                         n < 0 ? std::string("lz4 block is malformed")
                               : fmt::format("lz4 block gives {} bytes, prefix said {}", n, size));
  }
  return SharedBytes::adopt(std::move(out));
}

// One brotli stream, produced into a buffer that never grows beyond max_size.
Result<SharedBytes> inflate_brotli(const SharedBytes& in, size_t max_size) {
  struct Free {
    void operator()(BrotliDecoderState* s) const { BrotliDecoderDestroyInstance(s); }
  };
  std::unique_ptr<BrotliDecoderState, Free> state(
      BrotliDecoderCreateInstance(nullptr, nullptr, nullptr));
  if (!state) return inflate_error(ErrorCode::OutOfMemory, "no brotli decoder instance");
  std::vector<uint8_t> out(std::min<size_t>(max_size, std::max<size_t>(in.size() * 4, 4096)));
  size_t avail_in = in.size();
  const uint8_t* next_in = in.data();
  size_t produced = 0;
  while (true) {
    size_t avail_out = out.size() - produced;
    uint8_t* next_out = out.data() + produced;
    BrotliDecoderResult r = BrotliDecoderDecompressStream(state.get(), &avail_in, &next_in,
                                                          &avail_out, &next_out, nullptr);
    produced = out.size() - avail_out;
    if (r == BROTLI_DECODER_RESULT_SUCCESS) break;
    if (r == BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT) {
      return inflate_error(ErrorCode::Truncated, "brotli stream ends early");
    }
    if (r == BROTLI_DECODER_RESULT_ERROR) {
      return inflate_error(
          ErrorCode::CorruptData,
          fmt::format("brotli: {}",
                      BrotliDecoderErrorString(BrotliDecoderGetErrorCode(state.get()))));
    }
    // BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT
    if (out.size() >= max_size) {
      return inflate_error(ErrorCode::LimitExceeded,
                           fmt::format("brotli data inflates to more than {} bytes", max_size));
    }
    out.resize(std::min(max_size, out.size() * 2));
  }
  if (avail_in != 0) {
    return inflate_error(ErrorCode::CorruptData,
                         fmt::format("{} bytes after the end of the brotli stream", avail_in));
  }
  out.resize(produced);
  return SharedBytes::adopt(std::move(out));
}

Error compress_error(std::string reason) {
  return Error(ErrorCode::Internal, "xpra", "compress packet", std::move(reason));
}

}  // namespace

Result<CompressedPayload> compress_payload(std::span<const uint8_t> data,
                                           PacketCompressor compressor, int level) {
  CompressedPayload c;
  if (level <= 0 || compressor == PacketCompressor::None) {
    c.bytes.assign(data.begin(), data.end());
    return c;
  }
  if (data.size() > std::numeric_limits<uint32_t>::max()) {
    return Error(ErrorCode::LimitExceeded, "xpra", "compress packet",
                 fmt::format("{} bytes do not fit a chunk", data.size()));
  }
  switch (compressor) {
    case PacketCompressor::Lz4: {
      if (data.size() > size_t(LZ4_MAX_INPUT_SIZE)) {
        return Error(ErrorCode::LimitExceeded, "xpra", "compress packet",
                     fmt::format("{} bytes are too many for lz4", data.size()));
      }
      level = std::clamp(level, 1, 15);
      c.level = uint8_t(kLevelLz4 | level);
      int bound = LZ4_compressBound(int(data.size()));
      c.bytes.resize(4 + size_t(bound));
      uint32_t n = uint32_t(data.size());
      for (int i = 0; i < 4; ++i) c.bytes[size_t(i)] = uint8_t(n >> (8 * i));
      // xpra's acceleration for a level: faster (less compression) for low levels.
      int acceleration = std::max(1, 5 - level / 3);
      int written = LZ4_compress_fast(reinterpret_cast<const char*>(data.data()),
                                      reinterpret_cast<char*>(c.bytes.data() + 4),
                                      int(data.size()), bound, acceleration);
      if (written <= 0 && !data.empty()) return compress_error("LZ4_compress_fast failed");
      c.bytes.resize(4 + size_t(std::max(written, 0)));
      return c;
    }
    case PacketCompressor::Brotli: {
      level = std::clamp(level, 1, 11);
      c.level = uint8_t(kLevelBrotli | level);
      size_t size = BrotliEncoderMaxCompressedSize(data.size());
      if (size == 0) return compress_error("input too large for brotli");
      c.bytes.resize(size);
      if (!BrotliEncoderCompress(std::max(level, 2), BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC,
                                 data.size(), data.data(), &size, c.bytes.data())) {
        return compress_error("BrotliEncoderCompress failed");
      }
      c.bytes.resize(size);
      return c;
    }
    case PacketCompressor::Zlib: {
      level = std::clamp(level, 1, 9);
      c.level = uint8_t(level);
      uLongf size = compressBound(uLong(data.size()));
      c.bytes.resize(size);
      if (compress2(c.bytes.data(), &size, data.data(), uLong(data.size()), level) != Z_OK) {
        return compress_error("zlib compress2 failed");
      }
      c.bytes.resize(size);
      return c;
    }
    case PacketCompressor::None: break;
  }
  return compress_error("unknown compressor");
}

Result<Value> decode_packet_payload(const SharedBytes& payload, uint8_t proto_flags,
                                    BencodeLimits limits) {
  PIXPATH_TRY(PacketEncoder encoder, packet_encoder_from_flags(proto_flags));
  if (encoder == PacketEncoder::Rencodeplus) return rencode_decode(payload, limits);
  return bencode_decode(payload, limits);
}

Result<SharedBytes> decompress_chunk(const SharedBytes& payload, uint8_t level, size_t max_size) {
  if (level == 0) return payload;
  if (level & kLevelLz4) return inflate_lz4(payload, max_size);
  if (level & kLevelLzo) return inflate_error(ErrorCode::Unsupported, "lzo packet compression");
  if (level & kLevelBrotli) {
    if (level & 0x80) {
      return inflate_error(ErrorCode::Unsupported,
                           fmt::format("unknown compression flags 0x{:02x}", level));
    }
    return inflate_brotli(payload, max_size);
  }
  if (level & 0xF0) {
    return inflate_error(ErrorCode::Unsupported,
                         fmt::format("unknown compression flags 0x{:02x}", level));
  }
  return inflate_zlib(payload, max_size);
}

void append_chunk(std::vector<uint8_t>& out, uint8_t proto_flags, uint8_t level, uint8_t index,
                  std::span<const uint8_t> payload) {
  uint8_t header[kChunkHeaderSize];
  write_chunk_header({proto_flags, level, index, uint32_t(payload.size())}, header);
  out.insert(out.end(), header, header + kChunkHeaderSize);
  out.insert(out.end(), payload.begin(), payload.end());
}

std::vector<uint8_t> frame_packet(const Value& packet) {
  std::vector<uint8_t> out(kChunkHeaderSize);
  bencode_encode(packet, out);
  write_chunk_header({kProtoBencode, 0, 0, uint32_t(out.size() - kChunkHeaderSize)}, out.data());
  return out;
}

Result<std::vector<uint8_t>> frame_packet(const Value& packet, const PacketFormat& format) {
  std::vector<uint8_t> encoded;
  if (format.encoder == PacketEncoder::Rencodeplus) {
    rencode_encode(packet, encoded);
  } else {
    bencode_encode(packet, encoded);
  }
  CompressedPayload payload;
  if (format.level > 0 && format.compressor != PacketCompressor::None &&
      encoded.size() > format.min_compress_size) {
    PIXPATH_TRY(payload, compress_payload(encoded, format.compressor, format.level));
  } else {
    payload.bytes = std::move(encoded);
  }
  if (payload.bytes.size() > std::numeric_limits<uint32_t>::max()) {
    return Error(ErrorCode::LimitExceeded, "xpra", "frame packet",
                 fmt::format("{} bytes do not fit a chunk", payload.bytes.size()));
  }
  std::vector<uint8_t> out;
  out.reserve(kChunkHeaderSize + payload.bytes.size());
  append_chunk(out, protocol_flags(format.encoder), payload.level, 0, payload.bytes);
  return out;
}

}  // namespace pixpath::xpra
