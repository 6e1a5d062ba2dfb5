#include <lz4.h>
#include <zlib.h>

#include <cstring>
#include <random>

#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {

const PixelFormat kPacked[] = {PixelFormat::RGB,  PixelFormat::BGR,  PixelFormat::RGBX,
                               PixelFormat::BGRX, PixelFormat::XRGB, PixelFormat::XBGR,
                               PixelFormat::RGBA, PixelFormat::BGRA, PixelFormat::ARGB,
                               PixelFormat::ABGR};

enum class Comp { None, Zlib, Lz4, Lz4Bare };

// Packet bytes as an xpra server sends them: rows `rowstride` apart (padding filled with junk).
std::vector<uint8_t> packet(const Picture& pic, size_t rowstride, Comp comp, DrawOptions& o) {
  auto v = *pic.read();
  const size_t row = v.planes[0].row_bytes();
  std::vector<uint8_t> raw(rowstride * size_t(pic.height()), 0xEE);
  for (int y = 0; y < pic.height(); ++y) std::memcpy(raw.data() + size_t(y) * rowstride, v.planes[0].unchecked_row(y), row);
  o.rgb_format = std::string(name(pic.format()));
  switch (comp) {
    case Comp::None: return raw;
    case Comp::Zlib: {
      uLongf len = compressBound(uLong(raw.size()));
      std::vector<uint8_t> out(len);
      EXPECT_EQ(compress2(out.data(), &len, raw.data(), uLong(raw.size()), 3), Z_OK);
      out.resize(len);
      o.zlib = 3;
      return out;
    }
    case Comp::Lz4:
    case Comp::Lz4Bare: {
      const bool prefix = comp == Comp::Lz4;
      std::vector<uint8_t> out(4 + size_t(LZ4_compressBound(int(raw.size()))));
      const size_t at = prefix ? 4 : 0;
      if (prefix) {
        const uint32_t n = uint32_t(raw.size());
        std::memcpy(out.data(), &n, 4);  // little-endian host
      }
      const int n = LZ4_compress_default(reinterpret_cast<const char*>(raw.data()),
                                         reinterpret_cast<char*>(out.data() + at), int(raw.size()),
                                         int(out.size() - at));
      out.resize(at + size_t(n));
      o.lz4 = 1;
      return out;
    }
  }
  return {};
}

TEST(RgbDecoder, EveryFormatCompressionStrideAndDestination) {
  for (auto s : kTestSizes) {
    for (PixelFormat src_f : kPacked) {
      Picture src = screen_picture(src_f, s.w, s.h);
      const size_t row = size_t(s.w) * size_t(info(src_f).bytes_per_pixel[0]);
      for (size_t pad : {size_t{0}, size_t{13}}) {
        for (Comp comp : {Comp::None, Comp::Zlib, Comp::Lz4, Comp::Lz4Bare}) {
          DrawOptions o;
          auto data = packet(src, row + pad, comp, o);
          DecodeParams p;
          p.width = s.w;
          p.height = s.h;
          p.rowstride = int(row + pad);
          p.options = &o;
          const std::string coding = info(src_f).bytes_per_pixel[0] == 4 ? "rgb32" : "rgb24";
          for (PixelFormat f : {src_f, PixelFormat::BGRX, PixelFormat::RGB}) {
            SCOPED_TRACE(std::string(name(src_f)) + "->" + std::string(name(f)) + " pad " +
                         std::to_string(pad) + " comp " + std::to_string(int(comp)) + " " +
                         std::to_string(s.w) + "x" + std::to_string(s.h));
            GuardedDestination dst(f, s.w, s.h);
            const auto before = counters().copies;
            auto r = decoder(coding).decode_into(data, p, dst.view());
            ASSERT_TRUE(r.ok()) << r.error().message();
            EXPECT_TRUE(r->warnings.empty()) << r->warnings[0].message();
            if (f == src_f && comp != Comp::Lz4 && comp != Comp::Lz4Bare) {
              EXPECT_EQ(counters().copies, before);
            }
            EXPECT_TRUE(dst.guards_intact());
            EXPECT_EQ(max_difference(dst.view(), *convert(src, f).read()), 0);
          }
          // decode(): natural format.
          auto d = decoder(coding).decode(SharedBytes::copy_of(data), p);
          ASSERT_TRUE(d.ok()) << d.error().message();
          EXPECT_EQ(d->picture.format(), src_f);
          EXPECT_EQ(max_difference(*d->picture.read(), *src.read()), 0);
        }
      }
    }
  }
}

TEST(RgbDecoder, Lz4DecodeIsZeroCopyIntoMatchingStride) {
  Picture src = screen_picture(PixelFormat::BGRX, 300, 200);
  DrawOptions o;
  auto data = packet(src, 1216, Comp::Lz4, o);
  DecodeParams p{300, 200, 1216, &o, {}};
  const auto before = counters().copies;
  auto d = decoder("rgb32").decode(SharedBytes::copy_of(data), p);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(counters().copies, before);
  EXPECT_EQ(d->picture.plane(0).stride, 1216u);
  EXPECT_EQ(max_difference(*d->picture.read(), *src.read()), 0);
}

TEST(RgbDecoder, UncompressedDecodeWrapsThePacketBytes) {
  Picture src = screen_picture(PixelFormat::BGRX, 33, 7);
  DrawOptions o;
  auto raw = packet(src, 33 * 4 + 8, Comp::None, o);
  SharedBytes bytes = SharedBytes::adopt(raw);
  DecodeParams p{33, 7, 33 * 4 + 8, &o, {}};
  const auto before = counters();
  auto d = decoder("rgb32").decode(bytes, p);
  ASSERT_TRUE(d.ok()) << d.error().message();
  EXPECT_EQ(counters().copies, before.copies);
  EXPECT_EQ(d->picture.plane(0).storage->data(), static_cast<const void*>(bytes.data()));
  EXPECT_TRUE(d->picture.read_only());
  EXPECT_FALSE(d->picture.writable());
  EXPECT_GT(bytes.use_count(), 1);  // the picture keeps the packet alive
  EXPECT_EQ(max_difference(*d->picture.read(), *src.read()), 0);
  d = decoder("rgb32").decode(bytes, p);  // drop the first picture
  Picture pic = std::move(d->picture);
  bytes = SharedBytes();
  EXPECT_EQ(max_difference(*pic.read(), *src.read()), 0);  // still alive through the picture
}

TEST(RgbDecoder, RefusesShortLyingAndOversizedInput) {
  Picture src = screen_picture(PixelFormat::RGB, 40, 30);
  for (Comp comp : {Comp::None, Comp::Zlib, Comp::Lz4}) {
    DrawOptions o;
    auto data = packet(src, 120, comp, o);
    DecodeParams p{40, 30, 120, &o, {}};
    for (size_t cut : {size_t{0}, size_t{3}, data.size() / 2, data.size() - 1}) {
      std::vector<uint8_t> t(data.begin(), data.begin() + long(cut));
      GuardedDestination dst(PixelFormat::RGB, 40, 30);
      auto r = decoder("rgb24").decode_into(t, p, dst.view());
      EXPECT_TRUE(dst.guards_intact());
      if (comp == Comp::Zlib && cut == data.size() - 1) {
        // Only the adler32 trailer is missing: every pixel arrived, the loss is a warning.
        ASSERT_TRUE(r.ok());
        ASSERT_EQ(r->warnings.size(), 1u);
        EXPECT_EQ(r->warnings[0].code(), ErrorCode::Truncated);
        continue;
      }
      ASSERT_FALSE(r.ok()) << "comp " << int(comp) << " cut " << cut;
      EXPECT_EQ(r.error().subject(), "rgb24");
      auto d = decoder("rgb24").decode(SharedBytes::copy_of(t), p);
      EXPECT_FALSE(d.ok());
    }
    // A rowstride below the row, a size the data does not hold.
    DecodeParams bad = p;
    bad.rowstride = 119;
    EXPECT_FALSE(decoder("rgb24").inspect(data, bad).ok());
    bad = p;
    bad.height = 31;
    GuardedDestination dst(PixelFormat::RGB, 40, 31);
    EXPECT_FALSE(decoder("rgb24").decode_into(data, bad, dst.view()).ok());
    EXPECT_TRUE(dst.guards_intact());
  }
  // Decompression bomb: refused from the header alone.
  DrawOptions z;
  z.zlib = 1;
  DecodeParams bomb{16000, 16000, 64000, &z, {}};
  bomb.limits.max_decompressed_bytes = 1 << 20;
  auto r = decoder("rgb32").decode(SharedBytes::copy_of(std::string_view("x")), bomb);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
  // lz4 prefix lying about the size.
  DrawOptions o;
  auto data = packet(src, 120, Comp::Lz4, o);
  data[0] ^= 0x10;
  GuardedDestination dst(PixelFormat::RGB, 40, 30);
  auto l = decoder("rgb24").decode_into(data, DecodeParams{40, 30, 120, &o, {}}, dst.view());
  ASSERT_FALSE(l.ok());
  EXPECT_NE(l.error().reason().find("prefix"), std::string::npos) << l.error().message();
  // Unknown rgb_format, both compressors.
  DrawOptions f;
  f.rgb_format = "YUV420P";
  EXPECT_FALSE(decoder("rgb24").inspect(data, DecodeParams{40, 30, 120, &f, {}}).ok());
  DrawOptions both;
  both.zlib = 1;
  both.lz4 = 1;
  EXPECT_FALSE(decoder("rgb24").inspect(data, DecodeParams{40, 30, 120, &both, {}}).ok());
  std::mt19937 rng(1);
  for (Comp comp : {Comp::Zlib, Comp::Lz4}) {
    DrawOptions oc;
    auto good = packet(src, 120, comp, oc);
    for (int i = 0; i < 300; ++i) {
      auto c = good;
      for (int k = 0; k < 3; ++k) c[rng() % c.size()] = uint8_t(rng());
      GuardedDestination g(PixelFormat::BGRX, 40, 30);
      (void)decoder("rgb24").decode_into(c, DecodeParams{40, 30, 120, &oc, {}}, g.view());
      EXPECT_TRUE(g.guards_intact());
    }
  }
}

TEST(RgbDecoder, TrailingBytesAreAWarning) {
  Picture src = screen_picture(PixelFormat::RGBX, 10, 10);
  DrawOptions o;
  auto data = packet(src, 40, Comp::None, o);
  data.push_back(1);
  GuardedDestination dst(PixelFormat::RGBX, 10, 10);
  auto r = decoder("rgb32").decode_into(data, DecodeParams{10, 10, 40, &o, {}}, dst.view());
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->warnings.size(), 1u);
  EXPECT_FALSE(r->warnings[0].fatal());
}

// What python-lz4 / zlib (as an xpra 3.1 server uses them) produce decodes.
TEST(RgbDecoder, DecodesXpraServerCompression) {
  if (std::system("/usr/bin/python3 -c 'import lz4.block' >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "python3 lz4 module is not installed";
  }
  TempDir dir;
  Picture src = screen_picture(PixelFormat::BGRX, 37, 11);
  DrawOptions o;
  spit(dir.file("raw"), packet(src, 37 * 4, Comp::None, o));
  ASSERT_EQ(run_command("/usr/bin/python3 -c \"import lz4.block,zlib,sys; d=open('" + dir.file("raw") +
                        "','rb').read(); open('" + dir.file("lz4") +
                        "','wb').write(lz4.block.compress(d, mode='fast', acceleration=6)); open('" +
                        dir.file("zlib") + "','wb').write(zlib.compress(d, 2))\""), 0);
  DrawOptions lz;
  lz.rgb_format = "BGRX";
  lz.lz4 = 1;
  DrawOptions zl;
  zl.rgb_format = "BGRX";
  zl.zlib = 2;
  for (auto [file, opts] : {std::pair{"lz4", &lz}, std::pair{"zlib", &zl}}) {
    auto d = decoder("rgb32").decode(SharedBytes::adopt(slurp(dir.file(file))), DecodeParams{37, 11, 148, opts, {}});
    ASSERT_TRUE(d.ok()) << d.error().message();
    EXPECT_TRUE(d->warnings.empty());
    EXPECT_EQ(max_difference(*d->picture.read(), *src.read()), 0) << file;
  }
}

TEST(RgbEncoder, ProducesWhatTheDecoderTakes) {
  for (PixelFormat f : {PixelFormat::BGRX, PixelFormat::RGB}) {
    for (auto comp : {RgbCompression::None, RgbCompression::Zlib, RgbCompression::Lz4}) {
      Picture src = screen_picture(f, 50, 20);
      EncodeParams ep;
      ep.compression = comp;
      EncodedPicture e;
      const std::string coding = f == PixelFormat::RGB ? "rgb24" : "rgb32";
      encode(coding, src, ep, &e);
      EXPECT_EQ(e.options.rgb_format, std::string(name(f)));
      EXPECT_EQ(e.rowstride, 50 * info(f).bytes_per_pixel[0]);
      auto d = decoder(coding).decode(SharedBytes::adopt(e.data), DecodeParams{50, 20, e.rowstride, &e.options, {}});
      ASSERT_TRUE(d.ok()) << d.error().message();
      EXPECT_EQ(max_difference(*d->picture.read(), *src.read()), 0);
    }
  }
}

}  // namespace
}  // namespace pixpath::codecs::testing
