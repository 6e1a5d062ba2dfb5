#include <random>

#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {


TEST(PngDecoder, RoundTripEveryFormatIntoGuardedCrop) {
  for (auto s : kTestSizes) {
    for (PixelFormat src_f : {PixelFormat::RGB, PixelFormat::RGBA, PixelFormat::BGRX}) {
      Picture src = screen_picture(src_f, s.w, s.h);
      auto png = encode("png", src);
      Picture rgba = convert(src, PixelFormat::RGBA);
      for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::RGBX, PixelFormat::RGB,
                            PixelFormat::BGRA, PixelFormat::BGRX, PixelFormat::BGR,
                            PixelFormat::XRGB, PixelFormat::ABGR}) {
        SCOPED_TRACE(std::string(name(src_f)) + "->" + std::string(name(f)) + " " +
                     std::to_string(s.w) + "x" + std::to_string(s.h));
        GuardedDestination dst(f, s.w, s.h);
        const auto before = counters().copies;
        auto r = decoder("png").decode_into(png, {}, dst.view());
        ASSERT_TRUE(r.ok()) << r.error().message();
        if (decoder("png").can_write(f)) {
          EXPECT_EQ(counters().copies, before);
        }
        EXPECT_TRUE(dst.guards_intact());
        Picture expect = convert(rgba, f);
        if (f == PixelFormat::RGBX && src_f != PixelFormat::RGBA) {
          EXPECT_EQ(max_difference(dst.view(), *expect.read()), 0);
        } else if (f != PixelFormat::RGBX) {
          EXPECT_EQ(max_difference(dst.view(), *expect.read()), 0);
        }
      }
    }
  }
}

TEST(PngDecoder, GrayRoundTrip) {
  for (auto s : kTestSizes) {
    Picture src = screen_picture(PixelFormat::GRAY8, s.w, s.h);
    auto png = encode("png/L", src);
    auto inf = decoder("png/L").inspect(png, {});
    ASSERT_TRUE(inf.ok());
    EXPECT_EQ(inf->natural_format, PixelFormat::GRAY8);
    GuardedDestination dst(PixelFormat::GRAY8, s.w, s.h);
    ASSERT_TRUE(decoder("png/L").decode_into(png, {}, dst.view()).ok());
    EXPECT_TRUE(dst.guards_intact());
    EXPECT_EQ(max_difference(dst.view(), *src.read()), 0);
    GuardedDestination rgb(PixelFormat::BGRX, s.w, s.h);
    ASSERT_TRUE(decoder("png/L").decode_into(png, {}, rgb.view()).ok());
    EXPECT_EQ(max_difference(rgb.view(), *convert(src, PixelFormat::BGRX).read()), 0);
  }
  // A colour PNG cannot be written as GRAY8 (no luma conversion).
  auto png = encode("png", screen_picture(PixelFormat::RGB, 8, 8));
  GuardedDestination g(PixelFormat::GRAY8, 8, 8);
  auto r = decoder("png").decode_into(png, {}, g.view());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
}

// pnmtopng-made files (truecolor, palette, gray, interlaced, alpha) decode to the source pixels
// exactly; pngtopnm reads our files back exactly.
TEST(PngDecoder, MatchesNetpbm) {
  PIXPATH_REQUIRE_TOOL("pnmtopng");
  PIXPATH_REQUIRE_TOOL("pngtopnm");
  TempDir dir;
  for (auto s : {TestSize{17, 13}, TestSize{130, 41}}) {
    Picture rgb = screen_picture(PixelFormat::RGB, s.w, s.h);
    // Few colours: pnmtopng writes a palette PNG.
    Picture few = screen_picture(PixelFormat::RGB, s.w, s.h);
    {
      auto v = *few.write();
      for (int y = 0; y < s.h; ++y)
        for (size_t x = 0; x < v.planes[0].row_bytes(); ++x) v.planes[0].unchecked_row(y)[x] &= 0xC0;
    }
    Picture gray = screen_picture(PixelFormat::GRAY8, s.w, s.h);
    Picture rgba = screen_picture(PixelFormat::RGBA, s.w, s.h);
    struct Case {
      std::string name;
      const Picture* pic;
      std::string flags;
      std::string coding;
      std::string expect_detail;
    };
    Case cases[] = {{"truecolor", &rgb, "", "png", "png"},  // pnmtopng picks a palette if it can
                    {"interlaced", &rgb, "-interlace", "png", "interlaced"},
                    {"palette", &few, "", "png/P", "palette"},
                    {"palette-interlaced", &few, "-interlace", "png/P", "palette"},
                    {"gray", &gray, "", "png/L", "gray"}};
    for (const auto& c : cases) {
      SCOPED_TRACE(c.name);
      write_reference(dir.file("src.pnm"), *c.pic);
      ASSERT_EQ(run_command("pnmtopng " + c.flags + " " + dir.file("src.pnm") + " > " + dir.file("a.png")), 0);
      auto png = slurp(dir.file("a.png"));
      auto inf = decoder(c.coding).inspect(png, {});
      ASSERT_TRUE(inf.ok()) << inf.error().message();
      EXPECT_NE(inf->detail.find(c.expect_detail), std::string::npos) << inf->detail;
      Picture ours = decode_as(c.coding, png, c.pic->format());
      EXPECT_EQ(max_difference(*ours.read(), *c.pic->read()), 0);
    }
    // Alpha through -alpha=FILE.
    Picture alpha = Picture::allocate(PixelFormat::GRAY8, s.w, s.h).value();
    {
      auto av = *alpha.write();
      auto rv = *rgba.read();
      for (int y = 0; y < s.h; ++y)
        for (int x = 0; x < s.w; ++x) av.planes[0].unchecked_row(y)[x] = rv.planes[0].unchecked_row(y)[4 * x + 3];
    }
    write_reference(dir.file("rgb.ppm"), convert(rgba, PixelFormat::RGB));
    write_reference(dir.file("alpha.pgm"), alpha);
    ASSERT_EQ(run_command("pnmtopng -alpha=" + dir.file("alpha.pgm") + " " + dir.file("rgb.ppm") + " > " + dir.file("b.png")), 0);
    Picture ours = decode_as("png", slurp(dir.file("b.png")), PixelFormat::RGBA);
    EXPECT_EQ(max_difference(*ours.read(), *rgba.read()), 0);
    // And the other way: pngtopnm on our encoding.
    spit(dir.file("ours.png"), encode("png", rgb));
    ASSERT_EQ(run_command("pngtopnm " + dir.file("ours.png") + " > " + dir.file("back.ppm")), 0);
    EXPECT_EQ(max_difference(*read_reference(dir.file("back.ppm")).read(), *rgb.read()), 0);
  }
}

TEST(PngDecoder, LimitsAndCorruptInput) {
  auto png = encode("png", screen_picture(PixelFormat::RGBA, 67, 45));
  DecodeParams lim;
  lim.limits.max_width = 64;
  auto r = decoder("png").inspect(png, lim);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
  DecodeParams bytes;
  bytes.limits.max_decompressed_bytes = 1000;
  r = decoder("png").inspect(png, bytes);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
  bool saw_error = false;
  for (size_t cut = 0; cut < png.size(); cut += std::max<size_t>(1, png.size() / 101)) {
    std::vector<uint8_t> t(png.begin(), png.begin() + long(cut));
    GuardedDestination dst(PixelFormat::RGBA, 67, 45);
    auto d = decoder("png").decode_into(t, {}, dst.view());
    EXPECT_TRUE(dst.guards_intact());
    if (!d.ok()) {
      saw_error = true;
      EXPECT_EQ(d.error().subject(), "png");
    }
  }
  EXPECT_TRUE(saw_error);
  std::mt19937 rng(5);
  for (int i = 0; i < 300; ++i) {
    auto c = png;
    for (int k = 0; k < 3; ++k) c[rng() % c.size()] = uint8_t(rng());
    GuardedDestination dst(PixelFormat::BGRX, 67, 45);
    (void)decoder("png").decode_into(c, {}, dst.view());
    EXPECT_TRUE(dst.guards_intact());
  }
}

}  // namespace
}  // namespace pixpath::codecs::testing
