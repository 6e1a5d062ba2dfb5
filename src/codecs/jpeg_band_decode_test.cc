// The band decoder (internal/jpeg_band_decode.h) against tjDecompress2 on the same bytes:
// identical output for every sampling, quality, size, restart interval, band count and packed
// format; what it declines (progressive, gray, damaged data) goes back to the caller untouched
// in meaning; the jpeg decoder takes the band path for large pictures when cores are spare.
// Label "threaded": the bands run on helper threads (TSan).
#include <gtest/gtest.h>
#include <turbojpeg.h>

#include <string>
#include <thread>
#include <vector>

#include "codecs/testing/libjpeg_reference.h"
#include "codecs/testing/test_images.h"
#include "codecs/internal/jpeg_band_decode.h"
#include "codecs/internal/turbojpeg_decode.h"
#include "pixpath/codecs/registry.h"

namespace pixpath::codecs::internal {
namespace {

using testing::LibjpegEncodeOptions;

std::vector<uint8_t> encode_screen(int w, int h, const LibjpegEncodeOptions& o) {
  const auto rgb = testing::screen_pixels(w, h, 3, uint32_t(w * 31 + h));
  std::string err;
  auto jpeg = testing::libjpeg_encode(rgb.data(), w, h, o, &err);
  EXPECT_FALSE(jpeg.empty()) << err;
  return jpeg;
}

JpegHeader header_of(const std::vector<uint8_t>& jpeg) {
  auto h = read_jpeg_header("jpeg", jpeg, DecodeParams{});
  EXPECT_TRUE(h.ok()) << (h.ok() ? "" : h.error().message());
  return h.ok() ? *h : JpegHeader{};
}

// tjDecompress2's pixels for the format (the CPU path before bands).
Picture reference(const std::vector<uint8_t>& jpeg, PixelFormat f, int tj_format) {
  const JpegHeader h = header_of(jpeg);
  Picture out = Picture::allocate(f, h.width, h.height).value();
  auto v = out.write().value();
  tjhandle t = tjInitDecompress();
  const int rc = tjDecompress2(t, jpeg.data(), (unsigned long)jpeg.size(), v.planes[0].data,
                               h.width, int(v.planes[0].stride), h.height, tj_format,
                               TJFLAG_ACCURATEDCT);
  EXPECT_TRUE(rc == 0 || tjGetErrorCode(t) == TJERR_WARNING) << tjGetErrorStr2(t);
  tjDestroy(t);
  return out;
}

Picture banded(const std::vector<uint8_t>& jpeg, PixelFormat f, int bands, bool* taken) {
  const JpegHeader h = header_of(jpeg);
  Picture out = Picture::allocate(f, h.width, h.height).value();
  *taken = jpeg_decode_packed_in_bands(jpeg, h, out.write().value(), bands);
  return out;
}

struct Sampling {
  const char* name;
  int h0, v0;
};

TEST(JpegBands, SameBytesAsTurboJpegForEverySamplingQualityAndBandCount) {
  const Sampling samplings[] = {{"4:4:4", 1, 1}, {"4:2:2", 2, 1}, {"4:2:0", 2, 2},
                                {"4:4:0", 1, 2}, {"4:1:1", 4, 1}};
  const int sizes[][2] = {{333, 97}, {640, 480}, {1021, 259}};
  int compared = 0;
  for (const auto& s : samplings) {
    for (int q : {5, 50, 90, 100}) {
      for (const auto& wh : sizes) {
        LibjpegEncodeOptions o;
        o.quality = q;
        o.h[0] = s.h0, o.v[0] = s.v0;
        o.restart_interval = (q == 50) ? 3 : 0;
        const auto jpeg = encode_screen(wh[0], wh[1], o);
        const Picture want = reference(jpeg, PixelFormat::RGB, TJPF_RGB);
        for (int bands : {2, 3, 4, 7}) {
          bool taken = false;
          const Picture got = banded(jpeg, PixelFormat::RGB, bands, &taken);
          ASSERT_TRUE(taken) << s.name << " q" << q << " " << wh[0] << "x" << wh[1];
          ASSERT_EQ(testing::max_difference(got.read().value(), want.read().value()), 0)
              << s.name << " q" << q << " " << wh[0] << "x" << wh[1] << ", " << bands << " bands";
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 5 * 4 * 3 * 4);
}

TEST(JpegBands, EveryPackedFormatAndArithmeticCoding) {
  LibjpegEncodeOptions o;
  o.quality = 80;
  const auto huffman = encode_screen(800, 600, o);
  o.arithmetic = true;
  const auto arithmetic = encode_screen(800, 600, o);
  const std::pair<PixelFormat, int> formats[] = {
      {PixelFormat::RGB, TJPF_RGB},   {PixelFormat::BGR, TJPF_BGR},   {PixelFormat::RGBX, TJPF_RGBX},
      {PixelFormat::BGRX, TJPF_BGRX}, {PixelFormat::XRGB, TJPF_XRGB}, {PixelFormat::XBGR, TJPF_XBGR},
      {PixelFormat::RGBA, TJPF_RGBA}, {PixelFormat::BGRA, TJPF_BGRA}, {PixelFormat::ARGB, TJPF_ARGB},
      {PixelFormat::ABGR, TJPF_ABGR}};
  for (const auto* jpeg : {&huffman, &arithmetic}) {
    for (const auto& [f, tj] : formats) {
      bool taken = false;
      const Picture got = banded(*jpeg, f, 3, &taken);
      ASSERT_TRUE(taken) << name(f);
      EXPECT_EQ(testing::max_difference(got.read().value(), reference(*jpeg, f, tj).read().value()), 0)
          << name(f) << (jpeg == &arithmetic ? " (arithmetic)" : "");
    }
  }
}

TEST(JpegBands, DeclinesWhatItDoesNotTake) {
  LibjpegEncodeOptions o;
  o.progressive = true;
  bool taken = true;
  banded(encode_screen(640, 480, o), PixelFormat::RGB, 3, &taken);
  EXPECT_FALSE(taken) << "progressive";
  o = {};
  o.components = 1;
  std::vector<uint8_t> gray_pixels(640 * 480, 77);
  std::string err;
  const auto gray = testing::libjpeg_encode(gray_pixels.data(), 640, 480, o, &err);
  ASSERT_FALSE(gray.empty()) << err;
  banded(gray, PixelFormat::RGB, 3, &taken);
  EXPECT_FALSE(taken) << "gray";
  const auto good = encode_screen(640, 480, LibjpegEncodeOptions{});
  banded(good, PixelFormat::GRAY8, 3, &taken);
  EXPECT_FALSE(taken) << "GRAY8 output";
  // Damaged entropy data and a cut-off stream: libjpeg warns, the band path declines, and the
  // jpeg decoder's whole-picture path reports what it always reported.
  auto damaged = good;
  for (size_t i = damaged.size() / 2; i < damaged.size() / 2 + 64; ++i) damaged[i] = 0xFF;
  banded(damaged, PixelFormat::RGB, 3, &taken);
  EXPECT_FALSE(taken) << "damaged";
  const std::vector<uint8_t> cut(good.begin(), good.begin() + std::ptrdiff_t(good.size() * 2 / 3));
  banded(cut, PixelFormat::RGB, 3, &taken);
  EXPECT_FALSE(taken) << "truncated";
}

TEST(JpegBands, BandCountFollowsSpareCores) {
  LibjpegEncodeOptions o;
  const JpegHeader small = header_of(encode_screen(640, 480, o));
  EXPECT_EQ(jpeg_band_count(small, PixelFormat::RGB), 1) << "under a megapixel";
  const JpegHeader large = header_of(encode_screen(1920, 1080, o));
  const int cores = int(std::max(1u, std::thread::hardware_concurrency()));
  {
    JpegBusyMark self;  // the caller's own mark, as turbojpeg_decode_packed sets it
    const int n = jpeg_band_count(large, PixelFormat::RGBX);
    EXPECT_EQ(n, cores >= 2 ? std::min(4, cores) : 1);
    EXPECT_EQ(jpeg_band_count(large, PixelFormat::GRAY8), 1);
    std::vector<JpegBusyMark> others(static_cast<size_t>(cores));  // every core busy
    EXPECT_EQ(jpeg_band_count(large, PixelFormat::RGBX), 1);
  }
  EXPECT_EQ(jpeg_threads_busy(), 0);
}

TEST(JpegBands, TheJpegDecoderTakesTheBandsAndMatches) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one core: the decoder never bands";
  LibjpegEncodeOptions o;
  o.quality = 60;
  const auto jpeg = encode_screen(1920, 1088, o);
  const Decoder* dec = CodecRegistry::builtin().decoder("jpeg");
  ASSERT_NE(dec, nullptr);
  const int64_t before = jpeg_banded_decodes();
  auto got = dec->decode(SharedBytes::copy_of(jpeg), DecodeParams{}, PixelFormat::RGBX, nullptr);
  ASSERT_TRUE(got.ok()) << got.error().message();
  EXPECT_EQ(jpeg_banded_decodes(), before + 1);
  EXPECT_TRUE(got->warnings.empty());
  EXPECT_EQ(testing::max_difference(got->picture.read().value(),
                                    reference(jpeg, PixelFormat::RGBX, TJPF_RGBX).read().value()),
            0);
  // Damaged entropy data: the bands decline, the whole-picture path reports the damage as a
  // warning and gives tjDecompress2's pixels, as before bands existed.
  auto damaged = jpeg;
  for (size_t i = damaged.size() / 2; i < damaged.size() / 2 + 64; ++i) damaged[i] = 0xFF;
  const int64_t before_damaged = jpeg_banded_decodes();
  auto hurt = dec->decode(SharedBytes::copy_of(damaged), DecodeParams{}, PixelFormat::RGBX, nullptr);
  ASSERT_TRUE(hurt.ok()) << hurt.error().message();
  EXPECT_EQ(jpeg_banded_decodes(), before_damaged);
  EXPECT_FALSE(hurt->warnings.empty());
  EXPECT_EQ(testing::max_difference(hurt->picture.read().value(),
                                    reference(damaged, PixelFormat::RGBX, TJPF_RGBX).read().value()),
            0);
  // Several threads decoding at once, each maybe in bands: the same pixels every time.
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  const Picture want = reference(jpeg, PixelFormat::RGB, TJPF_RGB);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 3; ++i) {
        auto r = dec->decode(SharedBytes::copy_of(jpeg), DecodeParams{}, PixelFormat::RGB, nullptr);
        if (!r.ok() || testing::max_difference(r->picture.read().value(), want.read().value()) != 0)
          wrong.fetch_add(1);
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(jpeg_threads_busy(), 0);
}

}  // namespace
}  // namespace pixpath::codecs::internal
