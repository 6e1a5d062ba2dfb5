#include "pixpath/net/xpra/framing.h"

#include <gtest/gtest.h>

#include <string>

#include "pixpath/net/xpra/packet_format.h"
#include "pixpath/net/xpra/rencode.h"

namespace pixpath::xpra {
namespace {

std::vector<uint8_t> sample(size_t n) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = uint8_t("xpra packet "[i % 12] + (i / 97) % 3);
  return v;
}

TEST(PacketFormat, NamesRoundTrip) {
  for (PacketEncoder e : supported_packet_encoders()) {
    EXPECT_EQ(parse_packet_encoder(to_string(e)), e);
  }
  for (PacketCompressor c : supported_packet_compressors()) {
    EXPECT_EQ(parse_packet_compressor(to_string(c)), c);
  }
  EXPECT_EQ(to_string(PacketEncoder::Rencodeplus), "rencodeplus");
  EXPECT_EQ(to_string(PacketEncoder::Bencode), "bencode");
  EXPECT_EQ(to_string(PacketCompressor::Brotli), "brotli");
  EXPECT_EQ(parse_packet_encoder("rencode"), std::nullopt);
  EXPECT_EQ(parse_packet_encoder("yaml"), std::nullopt);
  EXPECT_EQ(parse_packet_compressor("lzo"), std::nullopt);
  EXPECT_EQ(parse_packet_compressor("LZ4"), std::nullopt);
  ASSERT_EQ(supported_packet_encoders().size(), 2u);
  EXPECT_EQ(supported_packet_encoders()[0], PacketEncoder::Rencodeplus);
  EXPECT_EQ(supported_packet_compressors().size(), 4u);
}

TEST(PacketFormat, ProtocolFlags) {
  EXPECT_EQ(protocol_flags(PacketEncoder::Rencodeplus), 0x10);
  EXPECT_EQ(protocol_flags(PacketEncoder::Bencode), 0x00);
  EXPECT_EQ(packet_encoder_from_flags(0x10).value(), PacketEncoder::Rencodeplus);
  EXPECT_EQ(packet_encoder_from_flags(0x18).value(), PacketEncoder::Rencodeplus);
  EXPECT_EQ(packet_encoder_from_flags(0x00).value(), PacketEncoder::Bencode);
  EXPECT_EQ(packet_encoder_from_flags(0x08).value(), PacketEncoder::Bencode);
  for (uint8_t f : {0x01, 0x02, 0x04, 0x12, 0x11, 0x20, 0x80}) {
    auto r = packet_encoder_from_flags(f);
    ASSERT_FALSE(r.ok()) << int(f);
    EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
  }
  EXPECT_NE(packet_encoder_from_flags(0x01).error().reason().find("rencode (xpra before 4.x)"),
            std::string::npos);
  EXPECT_NE(packet_encoder_from_flags(0x04).error().reason().find("yaml"), std::string::npos);
}

TEST(Compression, LevelBytesAsXpraWritesThem) {
  auto data = sample(5000);
  struct Case {
    PacketCompressor c;
    int level;
    uint8_t byte;
  };
  for (Case k : {Case{PacketCompressor::Lz4, 1, 0x11}, Case{PacketCompressor::Lz4, 15, 0x1f},
                 Case{PacketCompressor::Lz4, 99, 0x1f}, Case{PacketCompressor::Brotli, 1, 0x41},
                 Case{PacketCompressor::Brotli, 11, 0x4b},
                 Case{PacketCompressor::Brotli, 20, 0x4b}, Case{PacketCompressor::Zlib, 6, 6},
                 Case{PacketCompressor::Zlib, 12, 9}, Case{PacketCompressor::Lz4, 0, 0},
                 Case{PacketCompressor::None, 5, 0}}) {
    auto c = compress_payload(data, k.c, k.level);
    ASSERT_TRUE(c.ok()) << c.error().message();
    EXPECT_EQ(c->level, k.byte) << to_string(k.c) << " " << k.level;
    if (k.byte == 0) {
      EXPECT_EQ(c->bytes, data);
    } else {
      EXPECT_LT(c->bytes.size(), data.size());
    }
    auto back = decompress_chunk(SharedBytes::copy_of(c->bytes), c->level, data.size());
    ASSERT_TRUE(back.ok()) << back.error().message();
    EXPECT_EQ(back->view(), std::string_view(reinterpret_cast<const char*>(data.data()),
                                             data.size()));
  }
}

TEST(Compression, Lz4PayloadIsSizePrefixed) {
  auto data = sample(1000);
  auto c = compress_payload(data, PacketCompressor::Lz4, 3);
  ASSERT_TRUE(c.ok());
  ASSERT_GE(c->bytes.size(), 4u);
  EXPECT_EQ(c->bytes[0], 1000 & 0xff);
  EXPECT_EQ(c->bytes[1], 1000 >> 8);
  EXPECT_EQ(c->bytes[2], 0);
  EXPECT_EQ(c->bytes[3], 0);
}

TEST(Compression, EmptyInput) {
  for (auto comp : {PacketCompressor::Lz4, PacketCompressor::Brotli, PacketCompressor::Zlib}) {
    auto c = compress_payload({}, comp, 3);
    ASSERT_TRUE(c.ok()) << to_string(comp);
    auto back = decompress_chunk(SharedBytes::copy_of(c->bytes), c->level, 100);
    ASSERT_TRUE(back.ok()) << to_string(comp) << ": " << back.error().message();
    EXPECT_EQ(back->size(), 0u);
  }
}

TEST(FramePacket, HeaderAndPayload) {
  Value packet = Value::list({"ping", 5});
  auto wire = frame_packet(packet, PacketFormat{PacketEncoder::Rencodeplus,
                                                PacketCompressor::None, 0});
  ASSERT_TRUE(wire.ok());
  std::vector<uint8_t> want = {'P', 0x10, 0, 0, 0, 0, 0, 7, 194, 132, 'p', 'i', 'n', 'g', 5};
  EXPECT_EQ(*wire, want);
  // The bencode form without compression is what the one-argument frame_packet writes.
  auto b = frame_packet(packet, PacketFormat{});
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, frame_packet(packet));
}

TEST(FramePacket, SmallPacketsStayUncompressed) {
  Value small = Value::list({"ping", 5});
  Value big = Value::list({"big", std::string(1000, 'a')});
  PacketFormat f{PacketEncoder::Rencodeplus, PacketCompressor::Brotli, 5};
  auto s = frame_packet(small, f);
  auto l = frame_packet(big, f);
  ASSERT_TRUE(s.ok() && l.ok());
  EXPECT_EQ((*s)[2], 0);
  EXPECT_EQ((*l)[2], kLevelBrotli | 5);
  EXPECT_LT(l->size(), 200u);
  f.min_compress_size = 0;
  auto forced = frame_packet(small, f);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ((*forced)[2], kLevelBrotli | 5);
  auto header = parse_chunk_header(*forced);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(header->size, forced->size() - kChunkHeaderSize);
}

TEST(DecodePacketPayload, FollowsTheFlags) {
  Value packet = Value::list({"x", 1});
  auto r = decode_packet_payload(SharedBytes::copy_of(rencode_encode(packet)), 0x18);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(identical(*r, packet));
  auto b = decode_packet_payload(SharedBytes::copy_of(bencode_encode(packet)), 0x00);
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(*b, packet);
  // The wrong decoder for the bytes fails cleanly.
  auto wrong = decode_packet_payload(SharedBytes::copy_of(bencode_encode(packet)), 0x10);
  EXPECT_FALSE(wrong.ok());
  auto yaml = decode_packet_payload(SharedBytes::copy_of(std::string_view("- x\n")), 0x04);
  ASSERT_FALSE(yaml.ok());
  EXPECT_EQ(yaml.error().code(), ErrorCode::Unsupported);
}

}  // namespace
}  // namespace pixpath::xpra
