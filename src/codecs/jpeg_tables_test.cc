// The JPEG marker scanner (jpeg_tables.h): frames and tables of real encoder output, the
// overshoot bound against a brute-force search, and broken marker structures.
#include <cstddef>
#include <cstdio>

#include <jpeglib.h>

#include <cmath>

#include "codecs/testing/codec_test_util.h"
#include "pixpath/codecs/jpeg_tables.h"

namespace pixpath::codecs::testing {
namespace {

// A small gray or 4:2:0 JPEG from libjpeg (force_baseline false: cjpeg's 16-bit tables).
std::vector<uint8_t> libjpeg_encode(int quality, bool force_baseline, bool gray, bool progressive = false,
                                    bool arithmetic = false) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&c, &out, &size);
  c.image_width = 40;
  c.image_height = 24;
  c.input_components = gray ? 1 : 3;
  c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, force_baseline ? TRUE : FALSE);
  if (progressive) jpeg_simple_progression(&c);
  c.arith_code = arithmetic ? TRUE : FALSE;
  jpeg_start_compress(&c, TRUE);
  std::vector<uint8_t> row(size_t(40) * c.input_components);
  for (int y = 0; y < 24; ++y) {
    for (size_t i = 0; i < row.size(); ++i) row[i] = uint8_t((i * 37 + size_t(y) * 91) & 255);
    JSAMPROW r = row.data();
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<uint8_t> v(out, out + size);
  free(out);
  return v;
}

TEST(JpegTables, FramesAndTablesOfEncoderOutput) {
  auto t = scan_jpeg_tables(libjpeg_encode(75, true, false));
  ASSERT_TRUE(t.ok()) << t.error().message();
  EXPECT_EQ(t->sof, 0xC0);
  EXPECT_EQ(t->process(), "baseline");
  EXPECT_EQ(t->precision, 8);
  EXPECT_EQ(t->width, 40);
  EXPECT_EQ(t->height, 24);
  ASSERT_EQ(t->component_count, 3);
  EXPECT_EQ(t->components[0].h_samp, 2);
  EXPECT_EQ(t->components[0].v_samp, 2);
  EXPECT_EQ(t->components[1].table_slot, 1);
  // libjpeg's standard tables at quality 75 (scale 50%): luma DC 16 -> 8, chroma DC 17 -> 9,
  // the luma (7,7) entry 99 -> 50 (natural order, not zigzag).
  EXPECT_EQ(t->components[0].quant[0], 8);
  EXPECT_EQ(t->components[1].quant[0], 9);
  EXPECT_EQ(t->components[0].quant[63], 50);
  EXPECT_EQ(t->components[0].quant[1], 6);   // (0,1): 11 -> 6 (rounded: (11*50+50)/100)
  EXPECT_EQ(t->components[0].quant[8], 6);   // (1,0): 12 -> 6
  EXPECT_FALSE(t->components[0].quant_16bit);
  EXPECT_TRUE(t->has_sos);
  EXPECT_TRUE(t->has_eoi);

  auto wide = scan_jpeg_tables(libjpeg_encode(5, false, true));
  ASSERT_TRUE(wide.ok()) << wide.error().message();
  EXPECT_EQ(wide->sof, 0xC1);  // extended sequential: 16-bit tables
  EXPECT_TRUE(wide->components[0].quant_16bit);
  EXPECT_EQ(wide->components[0].quant[63], 99 * 10);  // quality 5: scale 1000%
  auto prog = scan_jpeg_tables(libjpeg_encode(80, true, false, true));
  ASSERT_TRUE(prog.ok());
  EXPECT_EQ(prog->process(), "progressive");
  auto arith = scan_jpeg_tables(libjpeg_encode(80, true, true, false, true));
  ASSERT_TRUE(arith.ok());
  EXPECT_EQ(arith->process(), "arithmetic");
}

// The bound against a brute-force search of the worst sample (every coefficient's error at q/2
// with the sign that adds up).
TEST(JpegTables, OvershootBoundIsTheWorstCase) {
  std::array<uint16_t, 64> q{};
  for (int i = 0; i < 64; ++i) q[size_t(i)] = uint16_t(1 + (i * 13) % 97);
  double worst = 0;
  for (int y = 0; y < 8; ++y)
    for (int x = 0; x < 8; ++x) {
      double s = 0;
      for (int v = 0; v < 8; ++v)
        for (int u = 0; u < 8; ++u) {
          const double cu = u ? 1 : std::sqrt(0.5), cv = v ? 1 : std::sqrt(0.5);
          s += q[size_t(v * 8 + u)] / 2.0 * std::abs(cu * cv / 4 * std::cos((2 * x + 1) * u * M_PI / 16) *
                                                     std::cos((2 * y + 1) * v * M_PI / 16));
        }
      worst = std::max(worst, s);
    }
  const double bound = idct_overshoot_bound(q);
  EXPECT_NEAR(bound, worst, 1e-9);
  std::array<uint16_t, 64> ones{};
  ones.fill(1);
  EXPECT_LT(idct_overshoot_bound(ones), 8);  // quality 100: a few levels at most
}

TEST(JpegTables, BrokenStreamsAreErrorsNotCrashes) {
  const auto good = libjpeg_encode(75, true, false);
  EXPECT_FALSE(scan_jpeg_tables({}).ok());
  EXPECT_FALSE(scan_jpeg_tables(std::span(good).first(3)).ok());
  // Cut anywhere: an error or a result without EOI, never past the data.
  for (size_t n = 0; n < good.size(); n += 7) {
    auto t = scan_jpeg_tables(std::span(good).first(n));
    if (t.ok()) {
      EXPECT_FALSE(t->has_eoi) << n;
    }
  }
  auto bad_len = good;
  bad_len[4] = 0xFF;  // APP0 length beyond the data
  bad_len[5] = 0xFF;
  auto r = scan_jpeg_tables(bad_len);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().subject(), "jpeg");
  EXPECT_EQ(r.error().stage(), "scan tables");
  // A frame that names an undefined table.
  auto t = scan_jpeg_tables(good);
  ASSERT_TRUE(t.ok());
  std::vector<uint8_t> no_dqt;
  for (size_t i = 0; i < good.size();) {  // drop every DQT segment
    if (i >= 2 && good[i] == 0xFF && good[i + 1] == 0xDB) {
      i += 2 + ((size_t{good[i + 2]} << 8) | good[i + 3]);
      continue;
    }
    no_dqt.push_back(good[i++]);
  }
  auto nd = scan_jpeg_tables(no_dqt);
  ASSERT_FALSE(nd.ok());
  EXPECT_NE(nd.error().reason().find("undefined quantisation table"), std::string::npos) << nd.error().message();
}

}  // namespace
}  // namespace pixpath::codecs::testing
