#include "pixpath/net/xpra/chunk_parser.h"

#include <brotli/encode.h>
#include <gtest/gtest.h>
#include <lz4.h>
#include <zlib.h>

#include <string>

#include <fmt/format.h>

#include "pixpath/net/xpra/bencode.h"
#include "pixpath/net/xpra/rencode.h"

namespace pixpath::xpra {
namespace {

std::vector<uint8_t> zlib_compress(std::span<const uint8_t> in, int level = 6) {
  uLongf size = compressBound(in.size());
  std::vector<uint8_t> out(size);
  EXPECT_EQ(compress2(out.data(), &size, in.data(), in.size(), level), Z_OK);
  out.resize(size);
  return out;
}

// xpra's lz4 framing: u32 little-endian uncompressed size, then one lz4 block.
std::vector<uint8_t> lz4_compress(std::span<const uint8_t> in, uint32_t claimed_size = UINT32_MAX) {
  std::vector<uint8_t> out(4 + LZ4_compressBound(int(in.size())));
  uint32_t n = claimed_size == UINT32_MAX ? uint32_t(in.size()) : claimed_size;
  out[0] = uint8_t(n);
  out[1] = uint8_t(n >> 8);
  out[2] = uint8_t(n >> 16);
  out[3] = uint8_t(n >> 24);
  int c = LZ4_compress_default(reinterpret_cast<const char*>(in.data()),
                               reinterpret_cast<char*>(out.data() + 4), int(in.size()),
                               int(out.size() - 4));
  EXPECT_GT(c, 0);
  out.resize(4 + size_t(c));
  return out;
}

std::vector<uint8_t> pixels(size_t n) {
  std::vector<uint8_t> p(n);
  for (size_t i = 0; i < n; ++i) p[i] = uint8_t((i * 7) ^ (i >> 5));
  return p;
}

Value hello_packet() {
  Value caps{Value::Dict{}};
  caps.set("version", "3.1.3");
  caps.set("encodings", Value::string_list({"rgb24", "png"}));
  return Value::list({"hello", caps});
}

// Three packets: an uncompressed hello; a draw whose data is a zlib-compressed raw chunk at
// index 7 and whose main chunk is lz4-compressed; a zlib-compressed ping.
std::vector<uint8_t> multi_chunk_stream() {
  std::vector<uint8_t> s = frame_packet(hello_packet());
  auto px = pixels(300);
  append_chunk(s, 0, 3, 7, zlib_compress(px));
  Value opts{Value::Dict{}};
  opts.set("rgb_format", "BGRX");
  Value draw = Value::list({"draw", 1, 0, 0, 10, 10, "rgb24", "", 42, 30, opts});
  append_chunk(s, 0, kLevelLz4 | 1, 0, lz4_compress(bencode_encode(draw)));
  Value ping = Value::list({"ping", int64_t{123456}, int64_t{789}, std::string(100, 'x')});
  append_chunk(s, 0, 6, 0, zlib_compress(bencode_encode(ping)));
  return s;
}

void check_stream_packets(const std::vector<Packet>& got) {
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].type, "hello");
  EXPECT_EQ(got[0].body, hello_packet());
  EXPECT_FALSE(got[0].compressed);
  EXPECT_EQ(got[1].type, "draw");
  const auto& d = got[1].body.as_list();
  ASSERT_EQ(d.size(), 11u);
  auto px = pixels(300);
  ASSERT_TRUE(d[7].is_bytes());
  EXPECT_EQ(d[7].as_view(), std::string_view(reinterpret_cast<const char*>(px.data()), px.size()));
  EXPECT_EQ(d[8].as_int(), 42);
  EXPECT_TRUE(got[1].compressed);
  EXPECT_EQ(got[1].main_level, kLevelLz4 | 1);
  EXPECT_EQ(got[2].type, "ping");
  EXPECT_EQ(got[2].body.as_list()[1].as_int(), 123456);
  EXPECT_EQ(got[2].main_level, 6);
}

TEST(ChunkParser, ParsesAWholeMultiChunkStream) {
  auto s = multi_chunk_stream();
  ChunkParser p;
  std::vector<Packet> got;
  ASSERT_TRUE(p.feed(s, got).ok());
  check_stream_packets(got);
  EXPECT_TRUE(p.idle());
  size_t total = 0;
  for (const auto& pk : got) total += pk.wire_size;
  EXPECT_EQ(total, s.size());
}

TEST(ChunkParser, EverySplitInTwoGivesTheSamePackets) {
  auto s = multi_chunk_stream();
  std::span<const uint8_t> all(s);
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    ChunkParser p;
    std::vector<Packet> got;
    ASSERT_TRUE(p.feed(all.subspan(0, cut), got).ok()) << "cut " << cut;
    ASSERT_TRUE(p.feed(all.subspan(cut), got).ok()) << "cut " << cut;
    check_stream_packets(got);
    if (testing::Test::HasFailure()) FAIL() << "cut at " << cut;
  }
}

TEST(ChunkParser, EverySplitInThreeGivesTheSamePackets) {
  auto s = multi_chunk_stream();
  std::span<const uint8_t> all(s);
  for (size_t a = 0; a <= s.size(); a += 3) {
    for (size_t b = a; b <= s.size(); ++b) {
      ChunkParser p;
      std::vector<Packet> got;
      ASSERT_TRUE(p.feed(all.subspan(0, a), got).ok());
      ASSERT_TRUE(p.feed(all.subspan(a, b - a), got).ok());
      ASSERT_TRUE(p.feed(all.subspan(b), got).ok());
      ASSERT_EQ(got.size(), 3u) << a << "," << b;
    }
  }
}

TEST(ChunkParser, OneByteAtATime) {
  auto s = multi_chunk_stream();
  ChunkParser p;
  std::vector<Packet> got;
  for (uint8_t b : s) ASSERT_TRUE(p.feed({&b, 1}, got).ok());
  check_stream_packets(got);
}

TEST(ChunkParser, UncompressedRawChunkIsASliceOfTheChunkBuffer) {
  std::vector<uint8_t> s;
  auto px = pixels(1000);
  append_chunk(s, 0, 0, 7, px);
  auto main = frame_packet(Value::list({"draw", 1, 0, 0, 10, 25, "rgb32", "", 1, 40, Value(Value::Dict{})}));
  s.insert(s.end(), main.begin(), main.end());
  ChunkParser p;
  std::vector<Packet> got;
  ASSERT_TRUE(p.feed(s, got).ok());
  ASSERT_EQ(got.size(), 1u);
  SharedBytes data = got[0].body.as_list()[7].as_bytes();
  EXPECT_EQ(data.size(), 1000u);
  got.clear();  // the slice keeps its chunk alive
  EXPECT_EQ(data.span()[999], px[999]);
}

Result<void> feed_all(ChunkParser& p, const std::vector<uint8_t>& s) {
  std::vector<Packet> got;
  return p.feed(s, got);
}

TEST(ChunkParser, RejectsABadMagicByteAtOnce) {
  ChunkParser p;
  std::vector<Packet> got;
  uint8_t g = 'G';
  auto r = p.feed({&g, 1}, got);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Protocol);
  // Poisoned: later bytes keep failing.
  auto again = frame_packet(hello_packet());
  EXPECT_FALSE(p.feed(again, got).ok());
}

TEST(ChunkParser, ChunkSizeLimitFailsBeforeAllocating) {
  FrameLimits lim;
  lim.max_chunk_size = 1000;
  ChunkParser p(lim);
  uint8_t header[8];
  write_chunk_header({0, 0, 0, 0xFFFFFFFFu}, header);  // 4 GiB claimed, nothing sent
  std::vector<Packet> got;
  auto r = p.feed({header, 8}, got);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
  EXPECT_NE(r.error().reason().find("4294967295"), std::string::npos) << r.error().message();
}

TEST(ChunkParser, DefaultLimitsRejectAHugeHeader) {
  ChunkParser p;
  uint8_t header[8];
  write_chunk_header({0, 0, 0, 0xFFFFFFFFu}, header);
  std::vector<Packet> got;
  EXPECT_FALSE(p.feed({header, 8}, got).ok());
}

TEST(ChunkParser, PacketSizeLimitCountsRawChunks) {
  FrameLimits lim;
  lim.max_chunk_size = 1000;
  lim.max_packet_size = 1500;
  ChunkParser p(lim);
  std::vector<uint8_t> s;
  append_chunk(s, 0, 0, 1, pixels(900));
  append_chunk(s, 0, 0, 2, pixels(900));
  auto r = feed_all(p, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
}

TEST(ChunkParser, DecompressedSizeLimitZlib) {
  FrameLimits lim;
  lim.max_decompressed_size = 10000;
  ChunkParser p(lim);
  std::vector<uint8_t> zeros(1 << 20);  // a zlib bomb: 1 MiB of zeros is ~1 KB compressed
  std::vector<uint8_t> s;
  append_chunk(s, 0, 9, 1, zlib_compress(zeros, 9));
  auto r = feed_all(p, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded) << r.error().message();
}

TEST(ChunkParser, DecompressedSizeLimitLz4ChecksThePrefixFirst) {
  FrameLimits lim;
  lim.max_decompressed_size = 10000;
  ChunkParser p(lim);
  std::vector<uint8_t> s;
  append_chunk(s, 0, kLevelLz4 | 1, 1, lz4_compress(pixels(100), 0x7FFFFFFF));
  auto r = feed_all(p, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
}

TEST(ChunkParser, Lz4SizePrefixMismatchIsCorrupt) {
  ChunkParser p;
  std::vector<uint8_t> s;
  append_chunk(s, 0, kLevelLz4 | 1, 1, lz4_compress(pixels(100), 150));
  auto r = feed_all(p, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::CorruptData) << r.error().message();
}

TEST(ChunkParser, TruncatedZlibIsAnError) {
  ChunkParser p;
  auto z = zlib_compress(pixels(5000));
  z.resize(z.size() / 2);
  std::vector<uint8_t> s;
  append_chunk(s, 0, 6, 1, z);
  auto r = feed_all(p, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Truncated) << r.error().message();
}

TEST(ChunkParser, NestingDepthLimit) {
  FrameLimits lim;
  lim.max_depth = 3;
  ChunkParser p(lim);
  std::vector<uint8_t> s;
  std::string deep = "l4:pinglllleeeee";
  append_chunk(s, 0, 0, 0, std::span(reinterpret_cast<const uint8_t*>(deep.data()), deep.size()));
  auto r = feed_all(p, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
}

TEST(ChunkParser, TooManyRawChunks) {
  ChunkParser p;
  std::vector<uint8_t> s;
  for (int i = 1; i <= 5; ++i) append_chunk(s, 0, 0, uint8_t(i), pixels(10));
  auto r = feed_all(p, s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
}

TEST(ChunkParser, DuplicateRawChunkAndOutOfRangeIndex) {
  {
    ChunkParser p;
    std::vector<uint8_t> s;
    append_chunk(s, 0, 0, 2, pixels(10));
    append_chunk(s, 0, 0, 2, pixels(10));
    EXPECT_EQ(feed_all(p, s).error().code(), ErrorCode::Protocol);
  }
  {
    ChunkParser p;
    std::vector<uint8_t> s;
    append_chunk(s, 0, 0, 9, pixels(10));
    auto main = frame_packet(Value::list({"ping", 1}));
    s.insert(s.end(), main.begin(), main.end());
    EXPECT_EQ(feed_all(p, s).error().code(), ErrorCode::Protocol);
  }
}

TEST(ChunkParser, RejectsRencodeCipherAndUnknownCompression) {
  for (uint8_t flags : {kProtoRencode, kProtoCipher, kProtoYaml}) {
    ChunkParser p;
    std::vector<uint8_t> s;
    append_chunk(s, flags, 0, 0, pixels(4));
    EXPECT_FALSE(feed_all(p, s).ok()) << int(flags);
  }
  for (uint8_t level : {uint8_t(kLevelLzo | 1), uint8_t(kLevelBrotli | 0x80 | 1), uint8_t(0x80)}) {
    ChunkParser p;
    std::vector<uint8_t> s;
    append_chunk(s, 0, level, 0, pixels(4));
    auto r = feed_all(p, s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Unsupported) << r.error().message();
  }
}

TEST(ChunkParser, PacketMustBeAListStartingWithBytes) {
  for (const char* body : {"i1e", "le", "li3ee"}) {
    ChunkParser p;
    std::vector<uint8_t> s;
    append_chunk(s, 0, 0, 0, std::span(reinterpret_cast<const uint8_t*>(body), strlen(body)));
    auto r = feed_all(p, s);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_EQ(r.error().code(), ErrorCode::Protocol);
  }
}


// --- xpra 6.x: rencodeplus packets, brotli compression, the flush flag ---

std::vector<uint8_t> brotli_compress(std::span<const uint8_t> in, int quality = 5) {
  size_t size = BrotliEncoderMaxCompressedSize(in.size());
  std::vector<uint8_t> out(size);
  EXPECT_TRUE(BrotliEncoderCompress(quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC,
                                    in.size(), in.data(), &size, out.data()));
  out.resize(size);
  return out;
}

Value rencode_hello() {
  Value caps{Value::Dict{}};
  caps.set("version", "6.5.5");
  caps.set("rencodeplus", true);
  caps.set("compressors", Value::string_list({"lz4", "brotli", "none"}));
  caps.set("latency", Value::from_double(0.5));
  caps.set("nothing", Value::none());
  return Value::list({"hello", caps});
}

// As a 6.x server sends them: main chunks flagged rencodeplus | flush; a draw whose pixels are an
// lz4-compressed raw chunk (flags 0) and whose main chunk is brotli-compressed; an uncompressed
// ping; a bencoded packet last (a 3.x peer), to show the parser follows each chunk's flags.
std::vector<uint8_t> rencode_stream() {
  std::vector<uint8_t> s;
  append_chunk(s, kProtoRencodeplus | kProtoFlush, 0, 0, rencode_encode(rencode_hello()));
  auto px = pixels(600);
  append_chunk(s, 0, kLevelLz4 | 3, 7, lz4_compress(px));
  Value opts{Value::Dict{}};
  opts.set("rgb_format", "BGRX");
  opts.set("lz4", 1);
  Value draw = Value::list({"draw", 1, 0, 0, 10, 20, "rgb24", Value(SharedBytes{}), 42, 30,
                            opts});
  append_chunk(s, kProtoRencodeplus, kLevelBrotli | 5, 0, brotli_compress(rencode_encode(draw)));
  append_chunk(s, kProtoRencodeplus | kProtoFlush, 0, 0,
               rencode_encode(Value::list({"ping", int64_t{1700000000000}, 5})));
  append_chunk(s, kProtoBencode, 0, 0, bencode_encode(Value::list({"bell", 1})));
  return s;
}

void check_rencode_packets(const std::vector<Packet>& got) {
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].type, "hello");
  EXPECT_EQ(got[0].encoder, PacketEncoder::Rencodeplus);
  EXPECT_EQ(got[0].main_flags, kProtoRencodeplus | kProtoFlush);
  EXPECT_TRUE(identical(got[0].body, rencode_hello())) << got[0].body.debug_string();
  EXPECT_EQ(got[1].type, "draw");
  EXPECT_TRUE(got[1].compressed);
  EXPECT_EQ(got[1].main_level, kLevelBrotli | 5);
  const auto& d = got[1].body.as_list();
  ASSERT_EQ(d.size(), 11u);
  auto px = pixels(600);
  ASSERT_TRUE(d[7].is_bytes());
  EXPECT_FALSE(d[7].is_string());
  EXPECT_EQ(d[7].as_view(), std::string_view(reinterpret_cast<const char*>(px.data()), px.size()));
  EXPECT_TRUE(d[6].is_string());
  EXPECT_EQ(d[8].as_int(), 42);
  EXPECT_EQ(got[2].type, "ping");
  EXPECT_EQ(got[2].body.as_list()[1].as_int(), 1700000000000);
  EXPECT_EQ(got[3].type, "bell");
  EXPECT_EQ(got[3].encoder, PacketEncoder::Bencode);
}

TEST(ChunkParser, DecodesRencodeplusBrotliAndBencodeByEachChunksFlags) {
  auto s = rencode_stream();
  ChunkParser p;
  std::vector<Packet> got;
  ASSERT_TRUE(p.feed(s, got).ok());
  check_rencode_packets(got);
  EXPECT_TRUE(p.idle());
}

TEST(ChunkParser, RencodeStreamSplitAnywhere) {
  auto s = rencode_stream();
  std::span<const uint8_t> all(s);
  for (size_t cut = 0; cut <= s.size(); ++cut) {
    ChunkParser p;
    std::vector<Packet> got;
    ASSERT_TRUE(p.feed(all.subspan(0, cut), got).ok()) << "cut " << cut;
    ASSERT_TRUE(p.feed(all.subspan(cut), got).ok()) << "cut " << cut;
    check_rencode_packets(got);
    if (testing::Test::HasFailure()) FAIL() << "cut at " << cut;
  }
}

TEST(ChunkParser, FramePacketOutputParsesBack) {
  Value packet = rencode_hello();
  packet.as_list()[1].set("filler", std::string(2000, 'f'));
  for (auto encoder : {PacketEncoder::Rencodeplus, PacketEncoder::Bencode}) {
    for (auto compressor : {PacketCompressor::None, PacketCompressor::Lz4,
                            PacketCompressor::Brotli, PacketCompressor::Zlib}) {
      auto wire = frame_packet(packet, PacketFormat{encoder, compressor, 3});
      ASSERT_TRUE(wire.ok()) << wire.error().message();
      ChunkParser p;
      std::vector<Packet> got;
      ASSERT_TRUE(p.feed(*wire, got).ok());
      ASSERT_EQ(got.size(), 1u);
      EXPECT_EQ(got[0].encoder, encoder);
      EXPECT_EQ(got[0].compressed, compressor != PacketCompressor::None);
      if (encoder == PacketEncoder::Rencodeplus) {
        EXPECT_TRUE(identical(got[0].body, packet)) << to_string(compressor);
      } else {
        // bencode has no floats or None, so compare what it can carry.
        EXPECT_EQ(got[0].body.as_list()[1].find("filler")->as_view(), std::string(2000, 'f'));
      }
    }
  }
}

TEST(ChunkParser, UnknownProtocolFlagsAreRefusedAtTheHeader) {
  for (uint8_t flags : {uint8_t(0x20), uint8_t(0x40), uint8_t(0x11), uint8_t(0x14),
                        uint8_t(kProtoRencode | kProtoFlush), uint8_t(kProtoYaml)}) {
    ChunkParser p;
    uint8_t header[8];
    write_chunk_header({flags, 0, 0, 1000}, header);  // no payload needed to refuse it
    std::vector<Packet> got;
    auto r = p.feed({header, 8}, got);
    ASSERT_FALSE(r.ok()) << int(flags);
    EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
    EXPECT_NE(r.error().reason().find(fmt::format("0x{:02x}", flags)), std::string::npos)
        << r.error().message();
    EXPECT_NE(r.error().reason().find("rencodeplus (0x10)"), std::string::npos);
  }
  // Raw chunks carry no packet encoding: their flags do not matter (only cipher does).
  ChunkParser p;
  std::vector<uint8_t> s;
  append_chunk(s, kProtoFlush, 0, 1, pixels(10));
  append_chunk(s, kProtoRencodeplus, 0, 0, rencode_encode(Value::list({"x", Value(SharedBytes{})})));
  std::vector<Packet> got;
  ASSERT_TRUE(p.feed(s, got).ok());
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].body.as_list()[1].as_bytes().size(), 10u);
}

TEST(ChunkParser, BrotliBombFailsAtTheLimit) {
  FrameLimits lim;
  lim.max_decompressed_size = 100000;
  std::vector<uint8_t> zeros(16u << 20);  // 16 MiB of zeros is a few hundred bytes of brotli
  auto bomb = brotli_compress(zeros, 5);
  ASSERT_LT(bomb.size(), 2000u);
  for (uint8_t index : {uint8_t(0), uint8_t(3)}) {
    ChunkParser p(lim);
    std::vector<uint8_t> s;
    append_chunk(s, kProtoRencodeplus, kLevelBrotli | 5, index, bomb);
    auto r = feed_all(p, s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded) << r.error().message();
    EXPECT_NE(r.error().reason().find("more than 100000 bytes"), std::string::npos)
        << r.error().message();
  }
  // Exactly at the limit is fine.
  auto fits = brotli_compress(std::vector<uint8_t>(100000, 1));
  auto ok = decompress_chunk(SharedBytes::copy_of(fits), kLevelBrotli | 5, 100000);
  ASSERT_TRUE(ok.ok()) << ok.error().message();
  EXPECT_EQ(ok->size(), 100000u);
}

TEST(ChunkParser, BadBrotliPayloads) {
  auto good = brotli_compress(pixels(5000));
  {
    auto cut = good;
    cut.resize(cut.size() / 2);
    auto r = decompress_chunk(SharedBytes::copy_of(cut), kLevelBrotli | 1, 1 << 20);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Truncated) << r.error().message();
  }
  {
    auto trailing = good;
    trailing.push_back(0);
    auto r = decompress_chunk(SharedBytes::copy_of(trailing), kLevelBrotli | 1, 1 << 20);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::CorruptData) << r.error().message();
  }
  {
    auto garbage = pixels(300);
    auto r = decompress_chunk(SharedBytes::copy_of(garbage), kLevelBrotli | 1, 1 << 20);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().code(), ErrorCode::LimitExceeded) << r.error().message();
  }
  {
    auto r = decompress_chunk(SharedBytes{}, kLevelBrotli | 1, 1 << 20);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Truncated) << r.error().message();
  }
}

TEST(ChunkParser, TruncatedRencodePacket) {
  auto body = rencode_encode(rencode_hello());
  for (size_t n : {size_t(0), size_t(1), body.size() / 2, body.size() - 1}) {
    ChunkParser p;
    std::vector<uint8_t> s;
    append_chunk(s, kProtoRencodeplus, 0, 0, std::span(body).subspan(0, n));
    auto r = feed_all(p, s);
    ASSERT_FALSE(r.ok()) << n;
    EXPECT_EQ(r.error().code(), ErrorCode::Truncated) << r.error().message();
    EXPECT_NE(r.error().message().find("rencode decode"), std::string::npos)
        << r.error().message();
  }
}

TEST(ChunkParser, RencodeLimitsComeFromFrameLimits) {
  FrameLimits lim;
  lim.max_depth = 4;
  lim.max_items = 50;
  {
    ChunkParser p(lim);
    std::vector<uint8_t> s;
    std::vector<uint8_t> deep = {194, 132, 'd', 'e', 'e', 'p', 193, 193, 193, 193, 0};
    append_chunk(s, kProtoRencodeplus, 0, 0, deep);
    auto r = feed_all(p, s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded) << r.error().message();
  }
  {
    ChunkParser p(lim);
    std::vector<uint8_t> s;
    Value::List many(60, Value(1));
    append_chunk(s, kProtoRencodeplus, 0, 0,
                 rencode_encode(Value::list({"many", Value(many)})));
    auto r = feed_all(p, s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded) << r.error().message();
  }
}

TEST(ChunkParser, RencodePacketTypeMustBeAString) {
  for (std::vector<uint8_t> body : {std::vector<uint8_t>{193, 5}, std::vector<uint8_t>{192},
                                    std::vector<uint8_t>{131, 'a', 'b', 'c'}}) {
    ChunkParser p;
    std::vector<uint8_t> s;
    append_chunk(s, kProtoRencodeplus, 0, 0, body);
    auto r = feed_all(p, s);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Protocol) << r.error().message();
  }
}

}  // namespace
}  // namespace pixpath::xpra
