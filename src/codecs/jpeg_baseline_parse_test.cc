// parse_baseline_jpeg's Headers depth (the GPU route's share of several windows decides on it):
// the same headers as the whole parse, none of the entropy-coded data read.
#include "pixpath/codecs/jpeg_baseline_parse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "codecs/testing/libjpeg_reference.h"
#include "codecs/testing/test_images.h"

namespace pixpath::codecs::jpeg {
namespace {

std::vector<uint8_t> encode(int w, int h, int components, int hs, int vs, int quality, int restart) {
  testing::LibjpegEncodeOptions o;
  o.components = components;
  o.h[0] = hs;
  o.v[0] = vs;
  o.quality = quality;
  o.restart_interval = restart;
  const auto px = testing::screen_pixels(w, h, components, 7);
  std::string error;
  auto file = testing::libjpeg_encode(px.data(), w, h, o, &error);
  EXPECT_FALSE(file.empty()) << error;
  return file;
}

Result<BaselineJpeg> headers(const std::vector<uint8_t>& file) {
  return parse_baseline_jpeg(file, {}, ParseDepth::Headers);
}

TEST(JpegBaselineParse, HeadersDepthGivesTheWholeParsesHeaders) {
  struct Case {
    int components, hs, vs, quality, restart;
  };
  for (const Case c : {Case{3, 2, 2, 50, 0}, Case{3, 2, 1, 90, 4}, Case{3, 1, 1, 20, 0}, Case{1, 1, 1, 75, 2}}) {
    SCOPED_TRACE(std::to_string(c.components) + " components " + std::to_string(c.hs) + "x" +
                 std::to_string(c.vs) + " q" + std::to_string(c.quality) + " restart " + std::to_string(c.restart));
    const auto file = encode(301, 157, c.components, c.hs, c.vs, c.quality, c.restart);
    auto whole = parse_baseline_jpeg(file);
    auto head = headers(file);
    ASSERT_TRUE(whole.ok()) << whole.error().message();
    ASSERT_TRUE(head.ok()) << head.error().message();
    EXPECT_EQ(head->width, whole->width);
    EXPECT_EQ(head->height, whole->height);
    EXPECT_EQ(head->component_count, whole->component_count);
    for (int k = 0; k < whole->component_count; ++k) {
      const auto &a = head->components[size_t(k)], &b = whole->components[size_t(k)];
      EXPECT_EQ(a.h, b.h);
      EXPECT_EQ(a.v, b.v);
      EXPECT_EQ(a.quant, b.quant);
      EXPECT_EQ(a.dc_table, b.dc_table);
      EXPECT_EQ(a.ac_table, b.ac_table);
      EXPECT_EQ(a.width_in_blocks, b.width_in_blocks);
    }
    EXPECT_EQ(head->total_mcus, whole->total_mcus);
    EXPECT_EQ(head->restart_interval, whole->restart_interval);
    EXPECT_EQ(head->color, whole->color);
    EXPECT_EQ(head->scan_begin, whole->scan_begin);
    EXPECT_TRUE(head->has_eoi);
    EXPECT_TRUE(whole->has_eoi);
    // Nothing of the entropy-coded data.
    EXPECT_TRUE(head->segments.empty());
    EXPECT_EQ(head->scan_end, 0u);
    EXPECT_EQ(head->stuffed_bytes, 0u);
    EXPECT_FALSE(whole->segments.empty());
  }
}

TEST(JpegBaselineParse, HeadersDepthTellsEoiFromTheLastBytesOnly) {
  const auto file = encode(200, 120, 3, 2, 2, 60, 2);
  // Truncated: no EOI either way.
  const std::vector<uint8_t> cut(file.begin(), file.end() - 100);
  auto head = headers(cut);
  ASSERT_TRUE(head.ok()) << head.error().message();
  EXPECT_FALSE(head->has_eoi);
  auto whole = parse_baseline_jpeg(cut);
  EXPECT_TRUE(!whole.ok() || !whole->has_eoi);
  // Bytes after EOI: the whole parse finds the EOI, the headers say the data does not end with it.
  auto trailing = file;
  trailing.insert(trailing.end(), {0x00, 0x01, 0x02});
  ASSERT_TRUE(headers(trailing).ok());
  EXPECT_FALSE(headers(trailing)->has_eoi);
  ASSERT_TRUE(parse_baseline_jpeg(trailing).ok());
  EXPECT_TRUE(parse_baseline_jpeg(trailing)->has_eoi);
  // A restart marker out of order in the entropy data: the whole parse refuses it, the headers
  // do not read that far.
  auto bad_rst = file;
  bool swapped = false;
  for (size_t i = head->scan_begin; i + 1 < bad_rst.size() && !swapped; ++i) {
    if (bad_rst[i] == 0xFF && bad_rst[i + 1] == 0xD0) {
      bad_rst[i + 1] = 0xD5;
      swapped = true;
    }
  }
  ASSERT_TRUE(swapped) << "no RST0 in the test picture";
  EXPECT_FALSE(parse_baseline_jpeg(bad_rst).ok());
  EXPECT_TRUE(headers(bad_rst).ok());
  // What the headers refuse, they refuse at either depth.
  testing::LibjpegEncodeOptions progressive;
  progressive.progressive = true;
  const auto px = testing::screen_pixels(64, 64, 3, 3);
  std::string error;
  const auto prog = testing::libjpeg_encode(px.data(), 64, 64, progressive, &error);
  ASSERT_FALSE(prog.empty()) << error;
  ASSERT_FALSE(headers(prog).ok());
  EXPECT_EQ(headers(prog).error().code(), ErrorCode::Unsupported);
}

// frame_tables: the fields scan_jpeg_tables gives (the GPU route's refusal rules read them from
// either), at both depths; has_eoi at the Headers depth only where the data ends with EOI.
TEST(JpegBaselineParse, FrameTablesAgreeWithTheMarkerScan) {
  struct Case {
    int components, hs, vs, restart;
  };
  for (const Case c : {Case{3, 2, 2, 0}, Case{3, 2, 1, 3}, Case{3, 1, 1, 0}, Case{3, 1, 2, 0}, Case{1, 1, 1, 1}}) {
    SCOPED_TRACE(std::to_string(c.components) + " components " + std::to_string(c.hs) + "x" + std::to_string(c.vs));
    const auto file = encode(160, 96, c.components, c.hs, c.vs, 70, c.restart);
    const std::vector<uint8_t> cut(file.begin(), file.end() - 40);
    for (const auto* data : {&file, &cut}) {
      auto scanned = scan_jpeg_tables(*data);
      ASSERT_TRUE(scanned.ok()) << scanned.error().message();
      for (const ParseDepth depth : {ParseDepth::Whole, ParseDepth::Headers}) {
        auto parsed = parse_baseline_jpeg(*data, {}, depth);
        if (!parsed.ok()) {
          EXPECT_TRUE(depth == ParseDepth::Whole && data == &cut) << parsed.error().message();
          continue;
        }
        const JpegTables t = frame_tables(*parsed);
        EXPECT_EQ(t.sof, scanned->sof);
        EXPECT_EQ(t.precision, scanned->precision);
        EXPECT_EQ(t.width, scanned->width);
        EXPECT_EQ(t.height, scanned->height);
        EXPECT_EQ(t.component_count, scanned->component_count);
        for (int k = 0; k < t.component_count; ++k) {
          EXPECT_EQ(t.components[size_t(k)].id, scanned->components[size_t(k)].id);
          EXPECT_EQ(t.components[size_t(k)].h_samp, scanned->components[size_t(k)].h_samp);
          EXPECT_EQ(t.components[size_t(k)].v_samp, scanned->components[size_t(k)].v_samp);
        }
        EXPECT_EQ(t.has_eoi, scanned->has_eoi);
        EXPECT_EQ(t.process(), scanned->process());
      }
    }
  }
}

}  // namespace
}  // namespace pixpath::codecs::jpeg
