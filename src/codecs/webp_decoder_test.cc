#include <cstring>
#include <random>

#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {

const PixelFormat kWebpFormats[] = {PixelFormat::RGB,  PixelFormat::BGR,  PixelFormat::RGBA,
                                PixelFormat::BGRA, PixelFormat::ARGB, PixelFormat::RGBX,
                                PixelFormat::BGRX, PixelFormat::XRGB, PixelFormat::ABGR,
                                PixelFormat::XBGR};

TEST(WebpDecoder, LosslessRoundTripEveryFormat) {
  for (auto s : kTestSizes) {
    for (PixelFormat src_f : {PixelFormat::RGB, PixelFormat::RGBA}) {
      Picture src = screen_picture(src_f, s.w, s.h);
      EncodeParams ep;
      ep.quality = 100;
      auto webp = encode("webp", src, ep);
      auto inf = decoder("webp").inspect(webp, {});
      ASSERT_TRUE(inf.ok());
      EXPECT_EQ(inf->has_alpha, src_f == PixelFormat::RGBA && s.w > 1);  // 1x1 is opaque
      Picture rgba = convert(src, PixelFormat::RGBA);
      for (PixelFormat f : kWebpFormats) {
        SCOPED_TRACE(std::string(name(f)) + " " + std::to_string(s.w) + "x" + std::to_string(s.h));
        GuardedDestination dst(f, s.w, s.h);
        const auto before = counters().copies;
        auto r = decoder("webp").decode_into(webp, {}, dst.view());
        ASSERT_TRUE(r.ok()) << r.error().message();
        if (decoder("webp").can_write(f)) {
          EXPECT_EQ(counters().copies, before);
        }
        EXPECT_TRUE(dst.guards_intact());
        // Lossless: exact, except that fully transparent pixels' colour may be dropped
        // (libwebp's "exact" is off by default), so compare only opaque-enough ones via RGBA.
        Picture got = Picture::allocate(PixelFormat::RGBA, s.w, s.h).value();
        ASSERT_TRUE(convert_pixels(dst.view(), *got.write()).ok());
        auto gv = *got.read();
        auto ev = *rgba.read();
        int bad = 0;
        const bool has_a = info(f).has_alpha || f == PixelFormat::RGBX || f == PixelFormat::BGRX || f == PixelFormat::XRGB;
        for (int y = 0; y < s.h; ++y) {
          for (int x = 0; x < s.w; ++x) {
            const uint8_t* g = gv.planes[0].unchecked_row(y) + 4 * x;
            const uint8_t* e = ev.planes[0].unchecked_row(y) + 4 * x;
            if (e[3] == 0) continue;
            bad += std::memcmp(g, e, 3) != 0;
            if (has_a && info(f).has_alpha) bad += g[3] != e[3];
          }
        }
        EXPECT_EQ(bad, 0);
      }
    }
  }
}

// Lossy: identical to dwebp's output (same library, same default fancy upsampling).
TEST(WebpDecoder, LossyMatchesDwebp) {
  PIXPATH_REQUIRE_TOOL("dwebp");
  PIXPATH_REQUIRE_TOOL("cwebp");
  TempDir dir;
  for (auto s : {TestSize{17, 13}, TestSize{131, 67}}) {
    for (PixelFormat src_f : {PixelFormat::RGB, PixelFormat::RGBA}) {
      SCOPED_TRACE(std::string(name(src_f)) + " " + std::to_string(s.w));
      Picture src = screen_picture(src_f, s.w, s.h);
      EncodeParams ep;
      ep.quality = 60;
      auto ours_webp = encode("webp", src, ep);
      spit(dir.file("a.webp"), ours_webp);
      // cwebp-made file too.
      write_reference(dir.file("src.png"), src);
      ASSERT_EQ(run_command("cwebp -q 70 " + dir.file("src.png") + " -o " + dir.file("c.webp")), 0);
      for (const std::string f : {"a.webp", "c.webp"}) {
        const bool alpha = src_f == PixelFormat::RGBA;
        ASSERT_EQ(run_command("dwebp " + dir.file(f) + (alpha ? " -pam" : " -ppm") + " -o " + dir.file("ref.pnm")), 0);
        Picture ref = read_reference(dir.file("ref.pnm"));
        Picture ours = decode_as("webp", slurp(dir.file(f)), ref.format());
        EXPECT_EQ(max_difference(*ours.read(), *ref.read()), 0) << f;
      }
    }
  }
}

TEST(WebpDecoder, TruncatedAndCorruptInput) {
  EncodeParams ep;
  ep.quality = 80;
  auto webp = encode("webp", screen_picture(PixelFormat::RGBA, 67, 45), ep);
  bool saw_error = false;
  for (size_t cut = 0; cut < webp.size(); cut += std::max<size_t>(1, webp.size() / 97)) {
    std::vector<uint8_t> t(webp.begin(), webp.begin() + long(cut));
    GuardedDestination dst(PixelFormat::BGRA, 67, 45);
    auto r = decoder("webp").decode_into(t, {}, dst.view());
    EXPECT_TRUE(dst.guards_intact());
    if (!r.ok()) {
      saw_error = true;
      EXPECT_EQ(r.error().subject(), "webp");
    }
  }
  EXPECT_TRUE(saw_error);
  std::mt19937 rng(9);
  for (int i = 0; i < 300; ++i) {
    auto c = webp;
    for (int k = 0; k < 3; ++k) c[rng() % c.size()] = uint8_t(rng());
    GuardedDestination dst(PixelFormat::RGB, 67, 45);
    (void)decoder("webp").decode_into(c, {}, dst.view());
    EXPECT_TRUE(dst.guards_intact());
  }
  DecodeParams lim;
  lim.limits.max_height = 44;
  auto r = decoder("webp").inspect(webp, lim);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
}

}  // namespace
}  // namespace pixpath::codecs::testing
