#include <turbojpeg.h>

#include <cstring>
#include <random>

#include "codecs/testing/codec_test_util.h"

namespace pixpath::codecs::testing {
namespace {


std::string sub_name(Subsampling s) {
  switch (s) {
    case Subsampling::S444: return "444";
    case Subsampling::S422: return "422";
    case Subsampling::S420: return "420";
    case Subsampling::Gray: return "gray";
  }
  return "";
}

// Our encoder -> our decoder vs djpeg -dct int (TurboJPEG's defaults: islow IDCT, fancy
// upsampling): identical pixels expected.
TEST(JpegDecoder, MatchesDjpegExactly) {
  PIXPATH_REQUIRE_TOOL("djpeg");
  TempDir dir;
  for (auto s : kTestSizes) {
    for (auto sub : {Subsampling::S444, Subsampling::S422, Subsampling::S420, Subsampling::Gray}) {
      SCOPED_TRACE(std::to_string(s.w) + "x" + std::to_string(s.h) + " " + sub_name(sub));
      EncodeParams ep;
      ep.subsampling = sub;
      ep.quality = 85;
      auto jpg = encode("jpeg", screen_picture(PixelFormat::RGB, s.w, s.h), ep);
      spit(dir.file("a.jpg"), jpg);
      ASSERT_EQ(run_command("djpeg -dct int -pnm -outfile " + dir.file("a.pnm") + " " +
                            dir.file("a.jpg")), 0);
      Picture ref = read_reference(dir.file("a.pnm"));
      const PixelFormat f = sub == Subsampling::Gray ? PixelFormat::GRAY8 : PixelFormat::RGB;
      ASSERT_EQ(ref.format(), f);
      Picture ours = decode_as("jpeg", jpg, f);
      EXPECT_EQ(max_difference(*ours.read(), *ref.read()), 0);
    }
  }
}

// cjpeg-made streams: progressive, arithmetic, restart intervals, 4:4:0, 4:1:1, optimised.
TEST(JpegDecoder, CjpegVariantsMatchDjpeg) {
  PIXPATH_REQUIRE_TOOL("cjpeg");
  PIXPATH_REQUIRE_TOOL("djpeg");
  TempDir dir;
  const std::string variants[] = {
      "-baseline",          "-progressive",          "-arithmetic",
      "-restart 1",         "-restart 3B",           "-sample 1x2",
      "-sample 4x1",        "-progressive -arithmetic -sample 2x2",
      "-optimize -sample 2x1", "-grayscale -progressive", "-quality 30 -restart 2",
  };
  for (auto s : {TestSize{17, 13}, TestSize{131, 67}}) {
    write_reference(dir.file("src.ppm"), screen_picture(PixelFormat::RGB, s.w, s.h, 7));
    for (const auto& v : variants) {
      SCOPED_TRACE(v + " " + std::to_string(s.w) + "x" + std::to_string(s.h));
      ASSERT_EQ(run_command("cjpeg " + v + " -outfile " + dir.file("v.jpg") + " " +
                            dir.file("src.ppm")), 0);
      ASSERT_EQ(run_command("djpeg -dct int -pnm -outfile " + dir.file("v.pnm") + " " +
                            dir.file("v.jpg")), 0);
      auto jpg = slurp(dir.file("v.jpg"));
      Picture ref = read_reference(dir.file("v.pnm"));
      Picture ours = decode_as("jpeg", jpg, ref.format());
      EXPECT_EQ(max_difference(*ours.read(), *ref.read()), 0);
      auto inf = decoder("jpeg").inspect(jpg, {});
      ASSERT_TRUE(inf.ok());
      EXPECT_FALSE(inf->detail.empty());
    }
  }
}

TEST(JpegDecoder, EveryPackedFormatIntoGuardedCrop) {
  for (auto s : kTestSizes) {
    for (auto sub : {Subsampling::S444, Subsampling::S420}) {
      EncodeParams ep;
      ep.subsampling = sub;
      auto jpg = encode("jpeg", screen_picture(PixelFormat::RGB, s.w, s.h), ep);
      Picture rgb = decode_as("jpeg", jpg, PixelFormat::RGB);
      for (PixelFormat f : {PixelFormat::RGB, PixelFormat::BGR, PixelFormat::RGBX,
                            PixelFormat::BGRX, PixelFormat::XRGB, PixelFormat::XBGR,
                            PixelFormat::RGBA, PixelFormat::BGRA, PixelFormat::ARGB,
                            PixelFormat::ABGR}) {
        SCOPED_TRACE(std::string(name(f)) + " " + std::to_string(s.w) + "x" + std::to_string(s.h));
        ASSERT_TRUE(decoder("jpeg").can_write(f));
        GuardedDestination dst(f, s.w, s.h);
        const auto before = counters().copies;
        auto r = decoder("jpeg").decode_into(jpg, {}, dst.view());
        ASSERT_TRUE(r.ok()) << r.error().message();
        EXPECT_EQ(counters().copies, before) << "decode_into must not copy";
        EXPECT_TRUE(r->warnings.empty());
        EXPECT_TRUE(dst.guards_intact());
        Picture expect = convert(rgb, f);
        EXPECT_EQ(max_difference(dst.view(), *expect.read()), 0);
      }
    }
  }
}

// YUV planes without colour conversion, compared with a direct TurboJPEG call into contiguous
// planes, and GRAY8 from gray JPEGs.
TEST(JpegDecoder, YuvPlanesMatchTurboJpegAndKeepGuards) {
  tjhandle tj = tjInitDecompress();
  for (auto s : kTestSizes) {
    for (auto [sub, f, tjs] : {std::tuple{Subsampling::S420, PixelFormat::YUV420P, TJSAMP_420},
                               std::tuple{Subsampling::S422, PixelFormat::YUV422P, TJSAMP_422},
                               std::tuple{Subsampling::S444, PixelFormat::YUV444P, TJSAMP_444},
                               std::tuple{Subsampling::Gray, PixelFormat::GRAY8, TJSAMP_GRAY}}) {
      SCOPED_TRACE(std::string(name(f)) + " " + std::to_string(s.w) + "x" + std::to_string(s.h));
      EncodeParams ep;
      ep.subsampling = sub;
      auto jpg = encode("jpeg", screen_picture(PixelFormat::RGB, s.w, s.h), ep);
      auto inf = decoder("jpeg").inspect(jpg, {});
      ASSERT_TRUE(inf.ok());
      EXPECT_EQ(inf->natural_format, f);
      GuardedDestination dst(f, s.w, s.h);
      const auto before = counters().copies;
      auto r = decoder("jpeg").decode_into(jpg, {}, dst.view());
      ASSERT_TRUE(r.ok()) << r.error().message();
      // Odd sizes of 4:2:0 / 4:2:2 need TurboJPEG's padded planes and one counted copy.
      const bool exact = f == PixelFormat::YUV444P || f == PixelFormat::GRAY8 ||
                         (s.w % 2 == 0 && (f == PixelFormat::YUV422P || s.h % 2 == 0));
      if (exact) {
        EXPECT_EQ(counters().copies, before);
      }
      EXPECT_TRUE(dst.guards_intact());
      const int nplanes = info(f).planes;
      std::vector<std::vector<uint8_t>> ref(static_cast<size_t>(nplanes));
      unsigned char* planes[3] = {};
      int strides[3] = {};
      for (int i = 0; i < nplanes; ++i) {
        ref[size_t(i)].resize(size_t(tjPlaneSizeYUV(i, s.w, 0, s.h, tjs)));
        planes[i] = ref[size_t(i)].data();
        strides[i] = tjPlaneWidth(i, s.w, tjs);
      }
      ASSERT_EQ(tjDecompressToYUVPlanes(tj, jpg.data(), jpg.size(), planes, s.w, strides, s.h, 0), 0);
      for (int i = 0; i < nplanes; ++i) {
        const auto& p = dst.view().planes[size_t(i)];
        for (int y = 0; y < p.height; ++y) {
          ASSERT_EQ(std::memcmp(p.unchecked_row(y), planes[i] + size_t(y) * size_t(strides[i]),
                                p.row_bytes()), 0) << "plane " << i << " row " << y;
        }
      }
    }
  }
  tjDestroy(tj);
}

TEST(JpegDecoder, Refuses440ToYuvButDecodesItToRgb) {
  PIXPATH_REQUIRE_TOOL("cjpeg");
  TempDir dir;
  write_reference(dir.file("src.ppm"), screen_picture(PixelFormat::RGB, 33, 21));
  ASSERT_EQ(run_command("cjpeg -sample 1x2 -outfile " + dir.file("a.jpg") + " " + dir.file("src.ppm")), 0);
  auto jpg = slurp(dir.file("a.jpg"));
  auto inf = decoder("jpeg").inspect(jpg, {});
  ASSERT_TRUE(inf.ok());
  EXPECT_EQ(inf->natural_format, PixelFormat::RGB);
  for (PixelFormat f : {PixelFormat::YUV420P, PixelFormat::YUV422P, PixelFormat::YUV444P}) {
    GuardedDestination dst(f, 33, 21);
    auto r = decoder("jpeg").decode_into(jpg, {}, dst.view());
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code(), ErrorCode::Unsupported);
    EXPECT_NE(r.error().reason().find("4:4:0"), std::string::npos) << r.error().message();
    EXPECT_TRUE(dst.guards_intact());
  }
  GuardedDestination rgb(PixelFormat::BGRX, 33, 21);
  EXPECT_TRUE(decoder("jpeg").decode_into(jpg, {}, rgb.view()).ok());
}

TEST(JpegDecoder, DecodesTurboJpegCmyk) {  // YCCK; against Pillow: jpeg_compat_test.cc
  tjhandle tj = tjInitCompress();
  std::vector<uint8_t> cmyk(16 * 16 * 4, 0x40);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  ASSERT_EQ(tjCompress2(tj, cmyk.data(), 16, 0, 16, TJPF_CMYK, &out, &size, TJSAMP_444, 90, 0), 0);
  std::vector<uint8_t> jpg(out, out + size);
  tjFree(out);
  tjDestroy(tj);
  auto r = decoder("jpeg").inspect(jpg, {});
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_NE(r->detail.find("YCCK"), std::string::npos) << r->detail;
  // Stored 0x40 everywhere = inverted: ink c = m = y = k = 0xBF; r = (255 - k) - c (255 - k) / 255.
  const Picture rgb = decode_as("jpeg", jpg, PixelFormat::RGB);
  const uint8_t* px = rgb.read()->plane(0).row(7).data();
  for (int c = 0; c < 3; ++c) EXPECT_NEAR(px[c], 0x40 - 0xBF * 0x40 / 255, 1);
}

TEST(JpegDecoder, SizeAndLimitChecks) {
  auto jpg = encode("jpeg", screen_picture(PixelFormat::RGB, 64, 48));
  DecodeParams p;
  p.width = 63;
  p.height = 48;
  auto r = decoder("jpeg").inspect(jpg, p);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().stage(), "read header");
  DecodeParams lim;
  lim.limits.max_pixels = 1000;
  r = decoder("jpeg").inspect(jpg, lim);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
  GuardedDestination wrong(PixelFormat::RGBX, 32, 48);
  auto d = decoder("jpeg").decode_into(jpg, {}, wrong.view());
  ASSERT_FALSE(d.ok());
  EXPECT_TRUE(wrong.guards_intact());
}

// Truncation: a stream cut after its header decodes with a "premature end" warning (libjpeg
// fills the rest), one cut inside the header fails; nothing crashes or writes outside dst.
TEST(JpegDecoder, TruncatedAndCorruptInput) {
  for (bool progressive : {false, true}) {
    auto jpg = encode("jpeg", screen_picture(PixelFormat::RGB, 67, 45));
    if (progressive) {
      if (!have_tool("jpegtran")) continue;
      TempDir dir;
      spit(dir.file("a.jpg"), jpg);
      ASSERT_EQ(run_command("jpegtran -progressive -outfile " + dir.file("p.jpg") + " " + dir.file("a.jpg")), 0);
      jpg = slurp(dir.file("p.jpg"));
    }
    bool saw_warning = false, saw_error = false;
    for (size_t cut = 0; cut < jpg.size(); cut += std::max<size_t>(1, jpg.size() / 97)) {
      std::vector<uint8_t> t(jpg.begin(), jpg.begin() + long(cut));
      GuardedDestination dst(PixelFormat::BGRX, 67, 45);
      auto r = decoder("jpeg").decode_into(t, {}, dst.view());
      EXPECT_TRUE(dst.guards_intact());
      if (r.ok()) {
        if (!r->warnings.empty()) {
          saw_warning = true;
          EXPECT_EQ(r->warnings[0].severity(), Severity::Warning);
          EXPECT_EQ(r->warnings[0].subject(), "jpeg");
        }
      } else {
        saw_error = true;
        EXPECT_EQ(r.error().subject(), "jpeg");
        EXPECT_FALSE(r.error().reason().empty());
      }
    }
    EXPECT_TRUE(saw_warning);
    EXPECT_TRUE(saw_error);
    std::mt19937 rng(3);
    for (int i = 0; i < 300; ++i) {
      auto c = jpg;
      for (int k = 0; k < 4; ++k) c[rng() % c.size()] = uint8_t(rng());
      GuardedDestination dst(PixelFormat::RGB, 67, 45);
      (void)decoder("jpeg").decode_into(c, {}, dst.view());
      EXPECT_TRUE(dst.guards_intact());
      // Regression: a TurboJPEG 2.1 handle that failed on a corrupt stream made the next valid
      // JPEG on the same thread fail ("Bogus DQT index"); the per-thread handle is now replaced
      // after every failure.
      GuardedDestination good(PixelFormat::RGB, 67, 45);
      auto r = decoder("jpeg").decode_into(jpg, {}, good.view());
      ASSERT_TRUE(r.ok()) << "after corrupt input " << i << ": " << r.error().message();
      EXPECT_TRUE(r->warnings.empty());
    }
  }
}

TEST(JpegDecoder, DecodeDefaultsToRgbx) {
  auto jpg = encode("jpeg", screen_picture(PixelFormat::RGB, 20, 10));
  auto r = decoder("jpeg").decode(SharedBytes::copy_of(jpg), {});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->picture.format(), PixelFormat::RGBX);
  EXPECT_TRUE(r->picture.writable());
}

// ---- jpega ----

TEST(JpegaDecoder, ColourAndAlphaIntoEveryAlphaFormat) {
  for (auto s : kTestSizes) {
    Picture src = screen_picture(PixelFormat::RGBA, s.w, s.h);
    EncodedPicture enc;
    auto data = encode("jpega", src, {}, &enc);
    ASSERT_TRUE(enc.options.alpha_offset);
    DecodeParams p;
    p.options = &enc.options;
    // Reference: the two JPEGs decoded on their own.
    std::vector<uint8_t> colour(data.begin(), data.begin() + *enc.options.alpha_offset);
    std::vector<uint8_t> alpha(data.begin() + *enc.options.alpha_offset, data.end());
    Picture rgb = decode_as("jpeg", colour, PixelFormat::RGB);
    Picture a = decode_as("jpeg", alpha, PixelFormat::GRAY8);
    for (PixelFormat f : {PixelFormat::RGBA, PixelFormat::BGRA, PixelFormat::ARGB, PixelFormat::ABGR}) {
      GuardedDestination dst(f, s.w, s.h);
      auto r = decoder("jpega").decode_into(data, p, dst.view());
      ASSERT_TRUE(r.ok()) << r.error().message();
      EXPECT_TRUE(dst.guards_intact());
      Picture expect = convert(rgb, f);
      auto ev = *expect.write();
      ASSERT_TRUE(merge_alpha(*rgb.read(), *a.read(), ev).ok());
      EXPECT_EQ(max_difference(dst.view(), ev), 0);
    }
    GuardedDestination bad(PixelFormat::RGBX, s.w, s.h);
    EXPECT_FALSE(decoder("jpega").decode_into(data, p, bad.view()).ok());
  }
}

TEST(JpegaDecoder, BadAlphaOffsetAndMismatchedSizes) {
  Picture src = screen_picture(PixelFormat::RGBA, 32, 16);
  EncodedPicture enc;
  auto data = encode("jpega", src, {}, &enc);
  for (int64_t off : {int64_t{-1}, int64_t{0}, int64_t(data.size()), int64_t{1} << 40, int64_t{7}}) {
    DrawOptions o;
    o.alpha_offset = off;
    DecodeParams p;
    p.options = &o;
    GuardedDestination dst(PixelFormat::RGBA, 32, 16);
    auto r = decoder("jpega").decode_into(data, p, dst.view());
    ASSERT_FALSE(r.ok()) << off;
    EXPECT_EQ(r.error().subject(), "jpega");
    EXPECT_TRUE(dst.guards_intact());
  }
  auto r = decoder("jpega").inspect(data, {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().reason().find("alpha-offset"), std::string::npos);
  // Alpha JPEG of another size.
  auto colour = encode("jpeg", screen_picture(PixelFormat::RGB, 32, 16));
  EncodeParams gray;
  gray.subsampling = Subsampling::Gray;
  auto alpha = encode("jpeg", screen_picture(PixelFormat::GRAY8, 16, 16), gray);
  std::vector<uint8_t> mixed = colour;
  mixed.insert(mixed.end(), alpha.begin(), alpha.end());
  DrawOptions o;
  o.alpha_offset = int64_t(colour.size());
  DecodeParams p;
  p.options = &o;
  auto m = decoder("jpega").inspect(mixed, p);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.error().message().find("16x16"), std::string::npos) << m.error().message();
}

TEST(JpegEncoder, RestartIntervalIsWritten) {
  EncodeParams ep;
  ep.restart_interval = 2;
  auto jpg = encode("jpeg", screen_picture(PixelFormat::BGRX, 40, 70), ep);
  auto inf = decoder("jpeg").inspect(jpg, {});
  ASSERT_TRUE(inf.ok());
  EXPECT_NE(inf->detail.find("restart"), std::string::npos) << inf->detail;
  int rst = 0;
  for (size_t i = 0; i + 1 < jpg.size(); ++i) rst += jpg[i] == 0xFF && jpg[i + 1] >= 0xD0 && jpg[i + 1] <= 0xD7;
  EXPECT_GT(rst, 0);
}

}  // namespace
}  // namespace pixpath::codecs::testing
