// pixpath's own baseline JPEG parser and the CPU reference of its parallel (self-synchronising)
// entropy decoder, against libjpeg-turbo's jpeg_read_coefficients.
#include "pixpath/codecs/jpeg_parallel_decode.h"

#include <gtest/gtest.h>
#include <turbojpeg.h>

#include "pixpath/codecs/jpeg_idct_kernels.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "codecs/testing/libjpeg_reference.h"
#include "codecs/testing/test_images.h"

namespace pixpath::codecs::jpeg {
namespace {

using testing::libjpeg_encode;
using testing::libjpeg_read_coefficients;
using testing::LibjpegCoefficients;
using testing::LibjpegEncodeOptions;
using testing::LibjpegRawPlanes;
using testing::damage_scan;
using testing::screen_pixels;

// The IDCT arithmetic of the libjpeg-turbo the tests link: Debian's x86-64 build runs its SIMD
// code unless JSIMD_FORCENONE=1 (ctest runs the IDCT tests both ways).
IdctArithmetic installed_arithmetic() {
  const char* none = std::getenv("JSIMD_FORCENONE");
  return none && std::string(none) == "1" ? IdctArithmetic::C : IdctArithmetic::Simd;
}

// Every block of every component through idct_islow_block: planes of stored_blocks * 8 samples.
std::vector<std::vector<uint8_t>> idct_planes(const CoefficientImage& img, const BaselineJpeg& j,
                                              IdctArithmetic mode) {
  std::vector<std::vector<uint8_t>> planes(size_t(img.component_count));
  for (int c = 0; c < img.component_count; ++c) {
    const uint32_t bw = img.blocks_w[size_t(c)], bh = img.blocks_h[size_t(c)];
    const uint16_t* q = j.quant[j.components[size_t(c)].quant].values.data();
    planes[size_t(c)].assign(size_t(bw) * 8 * bh * 8, 0);
    for (uint32_t by = 0; by < bh; ++by) {
      for (uint32_t bx = 0; bx < bw; ++bx) {
        idct_islow_block(img.block(c, bx, by), q,
                         planes[size_t(c)].data() + (size_t(by) * 8 * bw + bx) * 8, bw * 8, mode);
      }
    }
  }
  return planes;
}

// Compares idct_planes with libjpeg's raw IDCT output; "" when equal.
std::string compare_idct_with_libjpeg(const std::vector<uint8_t>& file, const CoefficientImage& img,
                                      const BaselineJpeg& j, IdctArithmetic mode) {
  LibjpegRawPlanes raw;
  std::string err;
  if (!testing::libjpeg_read_raw_planes(file, &raw, &err)) return "libjpeg raw: " + err;
  const auto ours = idct_planes(img, j, mode);
  for (int c = 0; c < raw.components; ++c) {
    const size_t ow = size_t(img.blocks_w[size_t(c)]) * 8;
    for (int y = 0; y < raw.height[size_t(c)]; ++y) {
      for (int x = 0; x < raw.width[size_t(c)]; ++x) {
        const int a = ours[size_t(c)][size_t(y) * ow + size_t(x)];
        const int b = raw.planes[size_t(c)][size_t(y) * size_t(raw.width[size_t(c)]) + size_t(x)];
        if (a != b) {
          return "IDCT component " + std::to_string(c) + " sample (" + std::to_string(x) + "," +
                 std::to_string(y) + "): " + std::to_string(a) + " != libjpeg " + std::to_string(b);
        }
      }
    }
  }
  return "";
}

struct Sampling {
  const char* name;
  int components;
  int h[3], v[3];
};
constexpr Sampling k444{"4:4:4", 3, {1, 1, 1}, {1, 1, 1}};
constexpr Sampling k422{"4:2:2", 3, {2, 1, 1}, {1, 1, 1}};
constexpr Sampling k420{"4:2:0", 3, {2, 1, 1}, {2, 1, 1}};
constexpr Sampling kGray{"gray", 1, {1, 0, 0}, {1, 0, 0}};

std::vector<uint8_t> noise_pixels(int w, int h, int components, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<uint8_t> out(size_t(w) * size_t(h) * size_t(components));
  for (auto& b : out) b = uint8_t(rng());
  return out;
}

LibjpegEncodeOptions options_for(const Sampling& s, int quality, int restart) {
  LibjpegEncodeOptions o;
  o.quality = quality;
  o.components = s.components;
  for (int i = 0; i < s.components; ++i) {
    o.h[i] = s.h[i];
    o.v[i] = s.v[i];
  }
  o.restart_interval = restart;
  return o;
}

std::vector<uint8_t> encode(const std::vector<uint8_t>& px, int w, int h,
                            const LibjpegEncodeOptions& o) {
  std::string err;
  auto j = libjpeg_encode(px.data(), w, h, o, &err);
  EXPECT_FALSE(j.empty()) << err;
  return j;
}

// Planes -> RGBA with jpeg_color_kernels.h against tjDecompress2; "" when identical (or when
// the picture is not gray/YCbCr with a supported upsampling: nothing to compare).
std::string compare_rgba_with_turbojpeg(const std::vector<uint8_t>& file, const BaselineJpeg& j,
                                        const CoefficientImage& img) {
  auto up = chroma_upsampling(j);
  if (!up.ok()) return "";
  const auto planes = idct_planes(img, j, installed_arithmetic());
  SamplePlane sp[3];
  for (int c = 0; c < j.component_count; ++c) {
    sp[c] = SamplePlane{planes[size_t(c)].data(), img.blocks_w[size_t(c)] * 8,
                        j.components[size_t(c)].sample_width, j.components[size_t(c)].sample_height};
  }
  const int w = j.width, h = j.height;
  std::vector<uint8_t> tj(size_t(w) * size_t(h) * 4);
  tjhandle t = tjInitDecompress();
  const int rc = tjDecompress2(t, file.data(), (unsigned long)file.size(), tj.data(), w, w * 4, h,
                               TJPF_RGBA, 0);
  tjDestroy(t);
  if (rc != 0) return "tjDecompress2 failed";
  const bool gray = j.component_count == 1;
  for (int y = 0; y < h; ++y) {
    for (int x = 0; x < w; ++x) {
      uint8_t px[4];
      jpeg_pixel_rgba(sp[0], gray ? nullptr : &sp[1], gray ? nullptr : &sp[2], *up, x, y, px);
      const uint8_t* ref = tj.data() + (size_t(y) * size_t(w) + size_t(x)) * 4;
      for (int k = 0; k < 4; ++k) {
        if (px[k] != ref[k]) {
          return "RGBA (" + std::to_string(x) + "," + std::to_string(y) + ")[" + std::to_string(k) +
                 "]: " + std::to_string(px[k]) + " != tjDecompress2 " + std::to_string(ref[k]);
        }
      }
    }
  }
  return "";
}

// Decodes `file` both ways (coefficients against jpeg_read_coefficients, IDCT against
// jpeg_read_raw_data, RGBA against tjDecompress2); the first difference, "" when equal.
std::string compare_with_libjpeg(const std::vector<uint8_t>& file, uint32_t subsequence_bits,
                                 ParallelDecodeStats* stats = nullptr, bool transfer_maps = true) {
  LibjpegCoefficients ref;
  std::string err;
  if (!libjpeg_read_coefficients(file, &ref, &err)) return "libjpeg: " + err;
  auto parsed = parse_baseline_jpeg(file);
  if (!parsed.ok()) return "parse: " + parsed.error().message();
  ParallelDecodeOptions opt;
  opt.subsequence_bits = subsequence_bits;
  opt.transfer_maps = transfer_maps;
  auto img = decode_coefficients_parallel(file, *parsed, opt, stats);
  if (!img.ok()) return "decode: " + img.error().message();
  if (!img->warnings.empty()) return "intact data reported as damaged: " + img->warnings[0].message();
  if (img->component_count != ref.components) return "component count";
  for (int c = 0; c < ref.components; ++c) {
    const int wib = ref.width_in_blocks[size_t(c)], hib = ref.height_in_blocks[size_t(c)];
    if (parsed->components[size_t(c)].width_in_blocks != wib ||
        parsed->components[size_t(c)].height_in_blocks != hib) {
      return "block grid of component " + std::to_string(c);
    }
    for (int by = 0; by < hib; ++by) {
      for (int bx = 0; bx < wib; ++bx) {
        const int16_t* ours = img->block(c, uint32_t(bx), uint32_t(by));
        const int16_t* theirs = ref.planes[size_t(c)].data() + (size_t(by) * size_t(wib) + size_t(bx)) * 64;
        for (int k = 0; k < 64; ++k) {
          if (ours[k] != theirs[k]) {
            return "component " + std::to_string(c) + " block (" + std::to_string(bx) + "," +
                   std::to_string(by) + ") coefficient " + std::to_string(k) + ": " +
                   std::to_string(ours[k]) + " != libjpeg " + std::to_string(theirs[k]);
          }
        }
      }
    }
  }
  const std::string idct = compare_idct_with_libjpeg(file, *img, *parsed, installed_arithmetic());
  if (!idct.empty()) return idct;
  return compare_rgba_with_turbojpeg(file, *parsed, *img);
}

// The brief's sweep: quality 1..100 x 4:4:4/4:2:2/4:2:0/gray x restart on/off x screen/noise,
// at subsequence sizes from 8 bits (a codeword crosses several) to 1024.
TEST(JpegParallelDecode, EqualsLibjpegOverQualitySamplingRestartContent) {
  const Sampling samplings[] = {k444, k422, k420, kGray};
  const uint32_t sub_bits[] = {8, 24, 32, 100, 256, 1024};
  int cases = 0;
  for (int q = 1; q <= 100; ++q) {
    for (const Sampling& s : samplings) {
      for (int restart : {0, 1 + q % 5}) {
        for (int content = 0; content < 2; ++content) {
          const int w = 37 + q % 23, h = 29 + q % 17;  // odd sizes: partial MCUs at the edges
          const auto px = content ? noise_pixels(w, h, s.components, uint32_t(q))
                                  : screen_pixels(w, h, s.components, uint32_t(q));
          const auto file = encode(px, w, h, options_for(s, q, restart));
          const uint32_t bits = sub_bits[size_t(cases) % std::size(sub_bits)];
          EXPECT_EQ(compare_with_libjpeg(file, bits), "")
              << s.name << " q" << q << " restart " << restart << (content ? " noise" : " screen")
              << " " << w << "x" << h << ", subsequences of " << bits << " bits";
          ++cases;
        }
      }
    }
  }
  EXPECT_EQ(cases, 1600);
}

// Larger pictures, where a scan has thousands of subsequences; also optimised Huffman tables.
TEST(JpegParallelDecode, EqualsLibjpegOnLargerPictures) {
  const Sampling samplings[] = {k444, k422, k420, kGray};
  for (const Sampling& s : samplings) {
    for (int q : {5, 50, 90, 100}) {
      for (bool optimize : {false, true}) {
        const int w = 333, h = 211;
        const auto px = screen_pixels(w, h, s.components, 7);
        auto o = options_for(s, q, q == 90 ? 17 : 0);
        o.optimize_coding = optimize;
        const auto file = encode(px, w, h, o);
        for (uint32_t bits : {64u, 1024u, 8192u}) {
          EXPECT_EQ(compare_with_libjpeg(file, bits), "")
              << s.name << " q" << q << (optimize ? " optimised" : "") << " " << bits << " bits";
        }
      }
    }
  }
}

// Sampling factors other than the usual ones: 4:4:0, 4:1:1, mixed, and a gray component that
// says 2x2 (a one-component scan ignores its factors).
TEST(JpegParallelDecode, EqualsLibjpegOnUnusualSampling) {
  const Sampling unusual[] = {{"4:4:0", 3, {1, 1, 1}, {2, 1, 1}},
                              {"4:1:1", 3, {4, 1, 1}, {1, 1, 1}},
                              {"Y2x1 Cb1x2 Cr1x1", 3, {2, 1, 1}, {1, 2, 1}},
                              {"Y4x2 (8 blocks) Cb1x1 Cr1x1", 3, {4, 1, 1}, {2, 1, 1}},
                              {"gray 2x2", 1, {2, 0, 0}, {2, 0, 0}}};
  for (const Sampling& s : unusual) {
    for (int q : {10, 75}) {
      for (int restart : {0, 3}) {
        const auto px = screen_pixels(101, 67, s.components, 3);
        const auto file = encode(px, 101, 67, options_for(s, q, restart));
        EXPECT_EQ(compare_with_libjpeg(file, 40), "") << s.name << " q" << q << " restart " << restart;
      }
    }
  }
}

// RGB stored as RGB (Adobe APP14, transform 0): the colour model and the coefficients.
TEST(JpegParallelDecode, AdobeRgbFile) {
  const auto px = screen_pixels(64, 48, 3, 5);
  auto o = options_for(k444, 80, 0);
  o.rgb = true;
  const auto file = encode(px, 64, 48, o);
  auto parsed = parse_baseline_jpeg(file);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_TRUE(parsed->adobe);
  EXPECT_EQ(parsed->adobe_transform, 0);
  EXPECT_EQ(parsed->color, ColorModel::Rgb);
  EXPECT_EQ(compare_with_libjpeg(file, 128), "");

  const auto ycc = encode(px, 64, 48, options_for(k444, 80, 0));
  auto p2 = parse_baseline_jpeg(ycc);
  ASSERT_TRUE(p2.ok());
  EXPECT_TRUE(p2->jfif);
  EXPECT_EQ(p2->color, ColorModel::YCbCr);
  auto p3 = parse_baseline_jpeg(encode(screen_pixels(16, 16, 1, 1), 16, 16, options_for(kGray, 50, 0)));
  ASSERT_TRUE(p3.ok());
  EXPECT_EQ(p3->color, ColorModel::Gray);
}

// 16-bit quantisation tables (quality 1 without force_baseline): libjpeg labels such a file
// SOF1 (refused); the same file labelled SOF0 is read by libjpeg and by this decoder alike.
TEST(JpegParallelDecode, SixteenBitQuantTables) {
  const auto px = noise_pixels(40, 40, 3, 9);
  auto o = options_for(k420, 1, 0);
  o.force_baseline = false;
  auto file = encode(px, 40, 40, o);
  auto refused = parse_baseline_jpeg(file);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code(), ErrorCode::Unsupported);
  EXPECT_NE(refused.error().message().find("SOF1"), std::string::npos) << refused.error().message();
  bool patched = false;
  for (size_t i = 0; i + 1 < file.size(); ++i) {
    if (file[i] == 0xFF && file[i + 1] == 0xC1) {
      file[i + 1] = 0xC0;
      patched = true;
      break;
    }
  }
  ASSERT_TRUE(patched);
  auto parsed = parse_baseline_jpeg(file);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  EXPECT_EQ(parsed->quant[0].precision, 1);
  EXPECT_GT(parsed->quant[0].values[63], 255);
  EXPECT_EQ(compare_with_libjpeg(file, 64), "");
}

// The method really runs: with small subsequences, speculative starts are wrong and the
// synchronisation rounds fix them (here without step 3a, whose transfer maps would find most
// of them first: JpegParallelDecode.TransferMapsFindTheStarts); restart intervals become
// segments with known starts.
TEST(JpegParallelDecode, SynchronisationIsExercised) {
  const auto px = screen_pixels(256, 128, 3, 11);
  const auto file = encode(px, 256, 128, options_for(k420, 75, 0));
  ParallelDecodeStats st;
  ASSERT_EQ(compare_with_libjpeg(file, 48, &st, /*transfer_maps=*/false), "");
  EXPECT_EQ(st.segments, 1u);
  EXPECT_GT(st.subsequences, 100u);
  EXPECT_GT(st.wrong_speculative_starts, st.subsequences / 4);
  EXPECT_GE(st.sync_rounds, 1);
  EXPECT_GE(st.sync_decodes, st.wrong_speculative_starts);
  EXPECT_EQ(st.transfer_passes, 0);

  const auto rst = encode(px, 256, 128, options_for(k420, 75, 4));
  auto parsed = parse_baseline_jpeg(rst);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->restart_interval, 4);
  EXPECT_EQ(parsed->total_mcus, 16u * 8u);
  ASSERT_EQ(parsed->segments.size(), 32u);
  EXPECT_EQ(parsed->segments[31].first_mcu, 124u);
  EXPECT_EQ(parsed->segments[31].mcu_count, 4u);
  ParallelDecodeStats st2;
  // One subsequence per restart interval at most 8192 bits long: every start is known.
  ASSERT_EQ(compare_with_libjpeg(rst, 8192, &st2), "");
  EXPECT_EQ(st2.segments, 32u);
  EXPECT_EQ(st2.subsequences, 32u);
  EXPECT_EQ(st2.wrong_speculative_starts, 0u);
  EXPECT_EQ(st2.sync_rounds, 0);
}

// Step 3a: the transfer maps find the start states that the rounds would otherwise carry one
// subsequence a round; the result stays libjpeg's, and the rounds after it have less or
// nothing left to do.
TEST(JpegParallelDecode, TransferMapsFindTheStarts) {
  struct Case { int w, h; Sampling sampling; int quality; uint32_t bits; };
  for (const Case& c : {Case{1024, 512, k420, 50, 1024}, Case{1024, 512, k444, 90, 1024},
                        Case{512, 256, k420, 75, 256}, Case{1024, 512, kGray, 60, 512}}) {
    const auto file = encode(screen_pixels(c.w, c.h, c.sampling.components, 7), c.w, c.h,
                             options_for(c.sampling, c.quality, 0));
    ParallelDecodeStats with, without;
    ASSERT_EQ(compare_with_libjpeg(file, c.bits, &with), "") << c.w << "x" << c.h << " q" << c.quality;
    ASSERT_EQ(compare_with_libjpeg(file, c.bits, &without, false), "");
    std::printf("%dx%d q%d, %u-bit subsequences: %zu subsequences, transfer maps %d passes, %zu "
                "starts found; rounds %d after them, %d without\n", c.w, c.h, c.quality, c.bits,
                with.subsequences, with.transfer_passes, with.transfer_resolved, with.sync_rounds,
                without.sync_rounds);
    EXPECT_GE(with.transfer_passes, 1);
    EXPECT_GT(with.transfer_resolved, with.subsequences / 2);
    EXPECT_GE(without.sync_rounds, 2);
    EXPECT_LT(with.sync_rounds, without.sync_rounds);
  }
}

// Step 1's arrays (what the GPU decoder uploads): every segment covered by its subsequences
// without gaps, slots and DC chunks per segment; its limits.
TEST(JpegParallelDecode, PlanCoversEverySegment) {
  const auto file = encode(screen_pixels(100, 60, 3, 4), 100, 60, options_for(k420, 80, 2));
  auto j = parse_baseline_jpeg(file);
  ASSERT_TRUE(j.ok());
  auto p = plan_parallel_decode(file, *j, ParallelDecodeOptions{40});
  ASSERT_TRUE(p.ok()) << p.error().message();
  ASSERT_EQ(p->seg_first_sub.size(), j->segments.size() + 1);
  for (size_t s = 0; s < j->segments.size(); ++s) {
    uint32_t at = p->scan.segment_begin[s] * 8;
    for (uint32_t k = p->seg_first_sub[s]; k < p->seg_first_sub[s + 1]; ++k) {
      EXPECT_EQ(p->sub_begin[k], at);
      EXPECT_EQ(p->sub_seg[k], s);
      EXPECT_LE(p->sub_end[k] - p->sub_begin[k], 40u);
      at = p->sub_end[k];
    }
    EXPECT_EQ(at, p->seg_end_bit[s]);
    EXPECT_EQ(p->seg_slots[s], j->segments[s].mcu_count * uint32_t(j->blocks_per_mcu) * 64);
  }
  EXPECT_EQ(p->restart_mcus, 2u);
  EXPECT_EQ(p->scan_blocks, j->total_mcus * uint32_t(j->blocks_per_mcu));
  EXPECT_EQ(p->coefficients, p->offset[2] + uint64_t(p->blocks_w[2]) * p->blocks_h[2] * 64);
  auto small = plan_parallel_decode(file, *j, ParallelDecodeOptions{7});
  ASSERT_FALSE(small.ok());
  EXPECT_EQ(small.error().code(), ErrorCode::InvalidArgument);
  auto limited = plan_parallel_decode(file, *j, ParallelDecodeOptions{1024, 1000});
  ASSERT_FALSE(limited.ok());
  EXPECT_EQ(limited.error().code(), ErrorCode::LimitExceeded);
}

TEST(JpegParallelDecode, UnstuffsAndCutsAtRestartMarkers) {
  // Noise at quality 100 has many 0xFF bytes in its entropy data.
  const auto px = noise_pixels(64, 64, 1, 2);
  const auto file = encode(px, 64, 64, options_for(kGray, 100, 8));
  auto parsed = parse_baseline_jpeg(file);
  ASSERT_TRUE(parsed.ok());
  EXPECT_GT(parsed->stuffed_bytes, 0u);
  EXPECT_TRUE(parsed->has_eoi);
  const UnstuffedScan u = unstuff_scan(file, *parsed);
  ASSERT_EQ(u.segment_begin.size(), parsed->segments.size() + 1);
  size_t stuffed = 0;
  for (size_t s = 0; s < parsed->segments.size(); ++s) {
    const auto& seg = parsed->segments[s];
    // Each segment: its bytes with every 0xFF 0x00 made 0xFF.
    std::vector<uint8_t> expect;
    for (uint32_t i = seg.begin; i < seg.end; ++i) {
      expect.push_back(file[i]);
      if (file[i] == 0xFF) {
        ASSERT_EQ(file[i + 1], 0x00);
        ++i;
        ++stuffed;
      }
    }
    std::vector<uint8_t> got(u.bytes.begin() + u.segment_begin[s], u.bytes.begin() + u.segment_begin[s + 1]);
    EXPECT_EQ(got, expect) << "segment " << s;
    if (s > 0) {  // a restart marker RSTn precedes every later segment
      EXPECT_EQ(file[seg.begin - 2], 0xFF);
      EXPECT_EQ(file[seg.begin - 1], 0xD0 + (s - 1) % 8);
    }
  }
  EXPECT_EQ(stuffed, parsed->stuffed_bytes);
  EXPECT_EQ(u.bytes.size(), u.segment_begin.back() + UnstuffedScan::kUnstuffedPadding);
}

// Fuzz findings (tests/data/regressions/jpeg_baseline/): the parallel decode at the fuzzer's
// subsequence size and at others gives what one subsequence per segment (a serial decode)
// gives, quickly even where the data never resynchronises (sync_never_converges: the rounds
// stop after kMaxSyncRounds and a serial walk finishes).
TEST(JpegParallelDecode, FuzzRegressionsMatchTheSerialDecode) {
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  ASSERT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set (ctest sets it)";
  const std::string dir = std::string(root) + "/regressions/jpeg_baseline";
  int files = 0;
  bool swept = false;
  for (const char* name : {"sync_never_converges"}) {
    const auto data = testing::slurp(dir + "/" + name);
    ASSERT_FALSE(data.empty()) << dir << "/" << name;
    ++files;
    auto parsed = parse_baseline_jpeg(data);
    if (!parsed.ok()) continue;
    auto serial = decode_coefficients_parallel(data, *parsed, ParallelDecodeOptions{1u << 30});
    for (uint32_t bits : {8 + uint32_t(data.size() % 512), 8u, 24u, 64u}) {
      ParallelDecodeStats st;
      auto par = decode_coefficients_parallel(data, *parsed, ParallelDecodeOptions{bits}, &st);
      swept = swept || st.serial_sweep;
      ASSERT_EQ(par.ok(), serial.ok()) << name << " " << bits << " bits";
      if (par.ok()) {
        EXPECT_EQ(par->coefficients, serial->coefficients) << name << " " << bits << " bits";
        ASSERT_EQ(par->warnings.size(), serial->warnings.size()) << name << " " << bits << " bits";
        for (size_t k = 0; k < par->warnings.size(); ++k) {
          EXPECT_EQ(par->warnings[k].message(), serial->warnings[k].message());
        }
      } else {
        EXPECT_EQ(par.error().code(), serial.error().code()) << par.error().message();
      }
    }
  }
  EXPECT_EQ(files, 1);
  EXPECT_TRUE(swept) << "no input needed the serial walk";
}

// --- Damaged entropy data: reported as warnings (issue 15: damaged files are never silent) ---

// libjpeg-turbo's verdict on a file: the warning text of tjDecompress2 ("" when none), or
// "error: ..." when it fails.
std::string libjpeg_warning(const std::vector<uint8_t>& file) {
  tjhandle t = tjInitDecompress();
  int w = 0, h = 0, sub = 0, cs = 0;
  std::string out;
  if (tjDecompressHeader3(t, file.data(), (unsigned long)file.size(), &w, &h, &sub, &cs) != 0) {
    out = std::string("error: ") + tjGetErrorStr2(t);
  } else {
    std::vector<uint8_t> px(size_t(w) * size_t(h) * 4);
    const int pf = cs == TJCS_CMYK || cs == TJCS_YCCK ? TJPF_CMYK : TJPF_RGBA;
    if (tjDecompress2(t, file.data(), (unsigned long)file.size(), px.data(), w, w * 4, h, pf, 0) != 0) {
      out = (tjGetErrorCode(t) == TJERR_WARNING ? "" : "error: ") + std::string(tjGetErrorStr2(t));
    }
  }
  tjDestroy(t);
  return out;
}

std::string joined(const std::vector<Error>& warnings) {
  std::string s;
  for (const Error& w : warnings) s += (s.empty() ? "" : " | ") + w.message();
  return s;
}

// Decodes at several subsequence sizes; every size must report the same warnings.
std::vector<Error> parallel_warnings(const std::vector<uint8_t>& file, const BaselineJpeg& j) {
  std::vector<Error> first;
  bool have = false;
  for (uint32_t bits : {8u, 24u, 64u, 1024u, 1u << 30}) {
    auto img = decode_coefficients_parallel(file, j, ParallelDecodeOptions{bits});
    EXPECT_TRUE(img.ok()) << img.error().message();
    if (!img.ok()) return {};
    if (!have) {
      first = img->warnings;
      have = true;
    } else {
      EXPECT_EQ(joined(img->warnings), joined(first)) << bits << " bits";
    }
  }
  return first;
}

// Step 5 in pieces (write_piece, as the GPU writes): the same coefficients and warnings as one
// write-out a subsequence, on intact and on damaged data (bit flips, random bytes, cuts),
// with and without the transfer maps; on intact pictures whose starts the transfer maps find,
// every subsequence splits into all its pieces (a variant's checkpoints, or the path record of
// a walk that met its variant late or not at all).
TEST(JpegParallelDecode, WritePiecesEqualTheWholeWriteOut) {
  struct Case { int w, h; Sampling sampling; int quality; int restart; uint32_t bits; };
  std::mt19937 rng(11);
  int damaged = 0;
  for (const Case& c : {Case{1024, 512, k420, 50, 0, 768}, Case{512, 256, k444, 90, 0, 256},
                        Case{320, 200, kGray, 30, 3, 64}, Case{256, 128, k422, 75, 0, 24}}) {
    const auto file = encode(screen_pixels(c.w, c.h, c.sampling.components, 5), c.w, c.h,
                             options_for(c.sampling, c.quality, c.restart));
    ParallelDecodeStats st;
    ASSERT_EQ(compare_with_libjpeg(file, c.bits, &st), "") << c.w << "x" << c.h;
    std::printf("%dx%d q%d, %u-bit subsequences: %zu subsequences, %zu write pieces\n", c.w, c.h,
                c.quality, c.bits, st.subsequences, st.write_pieces);
    // Very short subsequences leave some starts to the rounds, whose traces carry no path.
    if (c.bits >= 64) {
      EXPECT_EQ(st.write_pieces, st.subsequences * kWritePieces) << c.w << "x" << c.h;
    } else {
      EXPECT_GT(st.write_pieces, st.subsequences) << c.w << "x" << c.h;
    }
    auto parsed = parse_baseline_jpeg(file);
    ASSERT_TRUE(parsed.ok());
    for (int trial = 0; trial < 40; ++trial) {
      const auto bad = damage_scan(file, parsed->scan_begin, parsed->scan_end, trial, rng);
      auto p = parse_baseline_jpeg(bad);
      if (!p.ok()) continue;
      ParallelDecodeOptions pieces{c.bits};
      pieces.transfer_maps = trial % 2 == 0;
      ParallelDecodeOptions whole = pieces;
      whole.write_pieces = false;
      ParallelDecodeStats sp, sw;
      auto a = decode_coefficients_parallel(bad, *p, pieces, &sp);
      auto b = decode_coefficients_parallel(bad, *p, whole, &sw);
      ASSERT_TRUE(a.ok() && b.ok());
      EXPECT_EQ(sw.write_pieces, sw.subsequences);
      EXPECT_EQ(a->coefficients, b->coefficients) << c.w << "x" << c.h << " trial " << trial;
      EXPECT_EQ(joined(a->warnings), joined(b->warnings)) << c.w << "x" << c.h << " trial " << trial;
      damaged += !a->warnings.empty();
    }
  }
  EXPECT_GT(damaged, 40) << "the damaged inputs should show";
}

// Step 6's tiles: block_scan_index inverts block_coefficient_offset for every layout the
// decoder takes, and the tiled DC scan equals one serial pass over the differences wherever
// tiles and restart intervals fall (intervals shorter and longer than a tile, none at all).
TEST(JpegParallelDecode, DcTilesEqualOneSerialPass) {
  for (const Sampling& s : {k420, k422, k444, kGray}) {
    for (int restart : {0, 1, 7, 50}) {
      const auto file = encode(screen_pixels(300, 180, s.components, 9), 300, 180,
                               options_for(s, 60, restart));
      auto j = parse_baseline_jpeg(file);
      ASSERT_TRUE(j.ok());
      const ScanTables t = build_scan_tables(*j);
      const BlockLayout& l = t.layout;
      const uint32_t blocks = j->total_mcus * uint32_t(j->blocks_per_mcu);
      for (uint32_t b = 0; b < blocks; ++b) {
        const uint64_t at = block_coefficient_offset(l, b);
        const uint32_t c = l.block_component[b % l.blocks_per_mcu];
        const uint64_t in_plane = (at - l.comp_offset[c]) / 64;
        const uint32_t bx = uint32_t(in_plane % l.comp_blocks_w[c]), by = uint32_t(in_plane / l.comp_blocks_w[c]);
        ASSERT_EQ(block_scan_index(l, c, bx, by), b) << s.components << " components, block " << b;
      }
      // Random differences, as step 5 leaves them; the serial pass is libjpeg's last_dc_val.
      std::mt19937 rng(uint32_t(restart) + 3);
      std::vector<int16_t> coef(size_t(blocks) * 64, 0), serial;
      for (uint32_t b = 0; b < blocks; ++b) coef[block_coefficient_offset(l, b)] = int16_t(rng() % 4001) - 2000;
      serial = coef;
      uint32_t last[4] = {};
      for (uint32_t b = 0; b < blocks; ++b) {
        if (dc_segment_starts_at(b, l.blocks_per_mcu, uint32_t(restart))) last[0] = last[1] = last[2] = last[3] = 0;
        const uint32_t c = l.block_component[b % l.blocks_per_mcu];
        int16_t& dc = serial[block_coefficient_offset(l, b)];
        last[c] += uint32_t(int32_t(dc));
        dc = int16_t(int32_t(last[c]));
      }
      auto plan = plan_parallel_decode(file, *j, ParallelDecodeOptions{256});
      ASSERT_TRUE(plan.ok());
      EXPECT_EQ(plan->restart_mcus, uint32_t(restart));
      EXPECT_EQ(plan->scan_blocks, blocks);
      predict_dc_in_tiles(l, plan->restart_mcus, plan->scan_blocks, coef.data());
      ASSERT_EQ(coef, serial) << s.components << " components, restart " << restart;
    }
  }
}

// The project's damaged files: what djpeg says of them, this decoder says too.
TEST(JpegParallelDamage, DamagedFilesAreReported) {
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  ASSERT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set (ctest sets it)";
  const std::string dir = std::string(root) + "/jpeg/";
  {  // djpeg: "Corrupt JPEG data: 2 extraneous bytes before marker 0xd9". Its coefficients
     // are libjpeg-turbo's; there are 4 whole bytes after the last MCU (libjpeg-turbo does not
     // count the 2 already in its bit buffer), and one run goes past coefficient 63 (which
     // libjpeg-turbo decodes without a word).
    const auto file = testing::slurp(dir + "cjpeg-q75-bitflips.jpg");
    ASSERT_NE(libjpeg_warning(file).find("2 extraneous bytes"), std::string::npos);
    auto j = parse_baseline_jpeg(file);
    ASSERT_TRUE(j.ok()) << j.error().message();
    const auto w = parallel_warnings(file, *j);
    ASSERT_EQ(w.size(), 2u) << joined(w);
    for (const Error& e : w) {
      EXPECT_EQ(e.code(), ErrorCode::CorruptData);
      EXPECT_EQ(e.severity(), Severity::Warning);
      EXPECT_EQ(e.subject(), "jpeg");
      EXPECT_EQ(e.stage(), "parallel decode");
    }
    EXPECT_EQ(w[0].reason(), "Corrupt JPEG data: a zero run past coefficient 63 in the scan");
    EXPECT_EQ(w[1].reason(), "Corrupt JPEG data: 4 extraneous bytes after the last MCU in the scan");
    LibjpegCoefficients ref;
    std::string err;
    ASSERT_TRUE(libjpeg_read_coefficients(file, &ref, &err)) << err;
    auto img = decode_coefficients_parallel(file, *j);
    ASSERT_TRUE(img.ok());
    for (int c = 0; c < ref.components; ++c) {
      const size_t n = ref.planes[size_t(c)].size();
      ASSERT_EQ(size_t(img->blocks_w[size_t(c)]) * img->blocks_h[size_t(c)] * 64, n);
      EXPECT_TRUE(std::equal(ref.planes[size_t(c)].begin(), ref.planes[size_t(c)].end(),
                             img->coefficients.begin() + std::ptrdiff_t(img->offset[size_t(c)])))
          << "component " << c;
    }
  }
  {  // djpeg: "Premature end of JPEG file"
    const auto file = testing::slurp(dir + "cjpeg-q75-truncated.jpg");
    ASSERT_NE(libjpeg_warning(file).find("Premature end"), std::string::npos);
    auto j = parse_baseline_jpeg(file);
    ASSERT_TRUE(j.ok()) << j.error().message();
    const auto w = parallel_warnings(file, *j);
    ASSERT_EQ(w.size(), 2u) << joined(w);
    EXPECT_EQ(w[0].code(), ErrorCode::Truncated);
    EXPECT_NE(w[0].reason().find("Premature end of JPEG data: the entropy-coded data ends before"),
              std::string::npos) << w[0].message();
    EXPECT_EQ(w[1].code(), ErrorCode::Truncated);
    EXPECT_NE(w[1].reason().find("no EOI"), std::string::npos) << w[1].message();
  }
}

// No false positives: every JPEG in tests/data (and the GPU self-test picture) that this
// decoder takes is reported damaged exactly when libjpeg-turbo warns about it.
TEST(JpegParallelDamage, AgreesWithLibjpegOnEveryFileOfTheProject) {
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  ASSERT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set (ctest sets it)";
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(root)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  files.push_back(std::filesystem::path(root) / "../../src/cuda/data/selftest.jpg");
  int taken = 0, intact = 0, damaged = 0;
  for (const auto& path : files) {
    const auto file = testing::slurp(path.string());
    if (file.size() < 2 || file[0] != 0xFF || file[1] != 0xD8) continue;
    auto j = parse_baseline_jpeg(file);
    if (!j.ok()) continue;
    ++taken;
    const std::string lib = libjpeg_warning(file);
    const auto w = parallel_warnings(file, *j);
    EXPECT_EQ(w.empty(), lib.empty()) << path << ": libjpeg says '" << lib << "', we say '"
                                      << joined(w) << "'";
    (w.empty() ? intact : damaged)++;
  }
  EXPECT_GE(intact, 3) << "cjpeg-q75, cjpeg-440-q75, selftest";
  EXPECT_GE(damaged, 2) << "the truncated and the bit-flipped file";
  EXPECT_GE(taken, intact + damaged);
}

// A gray 8x8 baseline JPEG with hand-made tables, so each kind of damage can be written bit by
// bit: DC table {0: "0"}; AC table {EOB: "00", 0x01: "01", ZRL: "10", 0xF1: "110"} ("111" is
// no code). `bits` is the scan ("0"/"1" characters), padded with ones to a byte.
std::vector<uint8_t> hand_made_gray(const std::string& bits, const std::vector<uint8_t>& extra = {},
                                    bool eoi = true, int blocks = 1) {
  std::vector<uint8_t> f = {0xFF, 0xD8,
                            0xFF, 0xDB, 0x00, 0x43, 0x00};  // DQT: table 0, all ones
  f.insert(f.end(), 64, 1);
  const uint8_t sof[] = {0xFF, 0xC0, 0x00, 0x0B, 8, 0x00, 0x08, uint8_t(blocks * 8 >> 8),
                         uint8_t(blocks * 8), 1, 1, 0x11, 0};
  f.insert(f.end(), std::begin(sof), std::end(sof));
  const uint8_t dht_dc[] = {0xFF, 0xC4, 0x00, 0x14, 0x00, 1, 0, 0, 0, 0, 0, 0, 0,
                            0,    0,    0,    0,    0,    0, 0, 0, 0x00};
  f.insert(f.end(), std::begin(dht_dc), std::end(dht_dc));
  const uint8_t dht_ac[] = {0xFF, 0xC4, 0x00, 0x17, 0x10, 0, 3, 1, 0, 0, 0, 0, 0, 0,
                            0,    0,    0,    0,    0,    0, 0, 0x00, 0x01, 0xF0, 0xF1};
  f.insert(f.end(), std::begin(dht_ac), std::end(dht_ac));
  const uint8_t sos[] = {0xFF, 0xDA, 0x00, 0x08, 1, 1, 0x00, 0, 63, 0};
  f.insert(f.end(), std::begin(sos), std::end(sos));
  std::string b = bits;
  while (b.size() % 8) b += '1';
  for (size_t i = 0; i < b.size(); i += 8) {
    const uint8_t byte = uint8_t(std::stoi(b.substr(i, 8), nullptr, 2));
    f.push_back(byte);
    if (byte == 0xFF) f.push_back(0x00);
  }
  f.insert(f.end(), extra.begin(), extra.end());
  if (eoi) {
    f.push_back(0xFF);
    f.push_back(0xD9);
  }
  return f;
}

TEST(JpegParallelDamage, EachKindOfDamage) {
  // DC "0" (difference 0); AC: ZRL x3 (z = 48), 0x01 with bit "1" (z = 49), then EOB.
  const std::string good = "0" "10" "10" "10" "01" "1" "00";
  struct Case {
    const char* what;
    std::vector<uint8_t> file;
    ErrorCode code;
    const char* says;     // "" = intact
    bool libjpeg_warns;   // libjpeg-turbo's verdict on the same file
  };
  const std::string ends = "Premature end of JPEG data: the entropy-coded data ends before the last MCU in the scan";
  const std::string past = "Corrupt JPEG data: a zero run past coefficient 63 in the scan";
  const Case cases[] = {
      {"intact", hand_made_gray(good), ErrorCode::Internal, "", false},
      // "111" is no code: both decoders skip 16 or 17 bits and read "00" (EOB) there.
      {"bad code", hand_made_gray("0" "111" + std::string(13, '0') + "00"), ErrorCode::CorruptData,
       "Corrupt JPEG data: bad Huffman code in the scan", true},
      // 0xF1 at z = 49: coefficient 64. libjpeg-turbo writes it to 63 without a word.
      {"run past 63", hand_made_gray("0" "10" "10" "10" "01" "1" "110" "1"), ErrorCode::CorruptData,
       past.c_str(), false},
      // ZRL at z = 49: 49 + 16 > 64.
      {"ZRL past 63", hand_made_gray("0" "10" "10" "10" "01" "1" "10"), ErrorCode::CorruptData,
       past.c_str(), false},
      // 24 bits of whole codewords: DC, ZRL, seven 0x01: the block is at z = 23.
      {"ends early", hand_made_gray("0" "10" "011011011011011011011"), ErrorCode::Truncated,
       ends.c_str(), true},
      // 8 bits: the last codeword "0?" needs a bit the data does not have.
      {"ends inside a codeword", hand_made_gray("0" "10" "10" "10" "0"), ErrorCode::Truncated,
       ends.c_str(), true},
      // libjpeg-turbo has these bytes in its bit buffer already at the end of the scan and
      // counts only what it has not read (before a restart marker it counts them).
      {"extra bytes", hand_made_gray(good, {0x12, 0x34, 0x56}), ErrorCode::CorruptData,
       "Corrupt JPEG data: 3 extraneous bytes after the last MCU in the scan", false},
      {"no EOI", hand_made_gray(good, {}, false), ErrorCode::Truncated,
       "Premature end of JPEG file: no EOI marker after the scan", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    EXPECT_EQ(!libjpeg_warning(c.file).empty(), c.libjpeg_warns) << libjpeg_warning(c.file);
    auto j = parse_baseline_jpeg(c.file);
    ASSERT_TRUE(j.ok()) << j.error().message();
    const auto w = parallel_warnings(c.file, *j);
    if (std::string(c.says).empty()) {
      EXPECT_TRUE(w.empty()) << joined(w);
      continue;
    }
    ASSERT_EQ(w.size(), 1u) << joined(w);
    EXPECT_EQ(w[0].code(), c.code);
    EXPECT_EQ(w[0].reason(), c.says);
  }
  // The intact block decodes to what libjpeg reads: DC 0, coefficient 49 (zigzag) = 1.
  const auto file = hand_made_gray(good);
  auto j = parse_baseline_jpeg(file);
  ASSERT_TRUE(j.ok());
  auto img = decode_coefficients_parallel(file, *j);
  ASSERT_TRUE(img.ok());
  for (int k = 0; k < 64; ++k) {
    EXPECT_EQ(img->block(0, 0, 0)[kZigzagToNatural[size_t(k)]], k == 49 ? 1 : 0) << k;
  }
  LibjpegCoefficients ref;
  std::string err;
  ASSERT_TRUE(libjpeg_read_coefficients(file, &ref, &err)) << err;
  EXPECT_EQ(std::vector<int16_t>(img->block(0, 0, 0), img->block(0, 0, 0) + 64), ref.planes[0]);
}

// Synchronisation that does not converge is no damage by itself: blocks of "0" (DC difference
// 0) + "00" (EOB) in 3-bit steps, cut into 8-bit subsequences, never resynchronise from a wrong
// phase (every pattern decodes and keeps its phase), so the rounds give up and the serial walk
// finishes; the data is intact and nothing is reported.
TEST(JpegParallelDamage, UnconvergedSynchronisationIsNotDamage) {
  std::string bits;
  for (int b = 0; b < 400; ++b) bits += "000";
  const auto file = hand_made_gray(bits, {}, true, 400);
  EXPECT_EQ(libjpeg_warning(file), "");
  auto j = parse_baseline_jpeg(file);
  ASSERT_TRUE(j.ok()) << j.error().message();
  ParallelDecodeStats st;
  ParallelDecodeOptions opt{8};
  opt.transfer_maps = false;  // step 3a finds these starts (below): the rounds alone here
  auto img = decode_coefficients_parallel(file, *j, opt, &st);
  ASSERT_TRUE(img.ok()) << img.error().message();
  EXPECT_TRUE(st.serial_sweep) << st.sync_rounds << " rounds";
  EXPECT_TRUE(img->warnings.empty()) << joined(img->warnings);
  LibjpegCoefficients ref;
  std::string err;
  ASSERT_TRUE(libjpeg_read_coefficients(file, &ref, &err)) << err;
  EXPECT_EQ(img->coefficients, ref.planes[0]);
  ParallelDecodeStats st_maps;
  auto with_maps = decode_coefficients_parallel(file, *j, ParallelDecodeOptions{8}, &st_maps);
  ASSERT_TRUE(with_maps.ok()) << with_maps.error().message();
  EXPECT_TRUE(with_maps->warnings.empty()) << joined(with_maps->warnings);
  EXPECT_EQ(with_maps->coefficients, ref.planes[0]);
  EXPECT_GT(st_maps.transfer_resolved, 0u);
}

// Random damage in encoded pictures (bytes changed, bits flipped, cut short), with and without
// restart intervals: whenever libjpeg-turbo warns, this decoder warns too (up to the first
// damage both decode the same codewords). This decoder also reports damage libjpeg-turbo
// decodes without a word: a run past coefficient 63; a bad Huffman code met by its fast path
// (jdhuff.c HUFF_DECODE_FAST makes it symbol 0 silently); whole bytes after an interval's last
// MCU that its bit buffer had already read (it counts only bytes it has not). Those are
// CorruptData; a premature end is seen by both.
TEST(JpegParallelDamage, NeverSilentWhereLibjpegWarns) {
  const auto px = screen_pixels(120, 72, 3, 21);
  std::mt19937 rng(5);
  int libjpeg_warned = 0, we_warned = 0, only_ours = 0;
  for (const Sampling& s : {k420, k444, kGray}) {
    for (int restart : {0, 3}) {
      const auto spx = s.components == 1 ? screen_pixels(120, 72, 1, 21) : px;
      const auto file = encode(spx, 120, 72, options_for(s, 20 + 30 * restart, restart));
      auto good = parse_baseline_jpeg(file);
      ASSERT_TRUE(good.ok());
      for (int trial = 0; trial < 150; ++trial) {
        auto bad = file;
        const size_t span = good->scan_end - good->scan_begin;
        if (trial % 3 == 0) {
          bad[good->scan_begin + rng() % span] ^= uint8_t(1u << (rng() % 8));
        } else if (trial % 3 == 1) {
          bad[good->scan_begin + rng() % span] = uint8_t(rng());
        } else {
          bad.resize(good->scan_begin + rng() % span);
        }
        auto p = parse_baseline_jpeg(bad);
        if (!p.ok()) continue;  // e.g. a changed byte made a marker: libjpeg resyncs, we refuse
        const std::string lib = libjpeg_warning(bad);
        if (lib.rfind("error: ", 0) == 0) continue;
        auto img = decode_coefficients_parallel(bad, *p, ParallelDecodeOptions{8 + uint32_t(trial % 200)});
        ASSERT_TRUE(img.ok()) << img.error().message();
        libjpeg_warned += !lib.empty();
        we_warned += !img->warnings.empty();
        if (!lib.empty()) {
          EXPECT_FALSE(img->warnings.empty()) << s.name << " restart " << restart << " trial "
                                              << trial << ": libjpeg says " << lib;
        } else if (!img->warnings.empty()) {
          ++only_ours;
          for (const Error& w : img->warnings) {
            EXPECT_EQ(w.code(), ErrorCode::CorruptData) << joined(img->warnings);
          }
        } else {
          // Both silent: the change was harmless to the code stream's structure.
        }
      }
    }
  }
  EXPECT_GT(libjpeg_warned, 300);
  EXPECT_GE(we_warned, libjpeg_warned);
  std::printf("damaged pictures: libjpeg-turbo warned on %d, this decoder on %d (%d that "
              "libjpeg-turbo decodes silently)\n", libjpeg_warned, we_warned, only_ours);
}

Error parse_error_of(const std::vector<uint8_t>& file) {
  auto r = parse_baseline_jpeg(file);
  if (r.ok()) return Error(ErrorCode::Internal, "test", "parse", "accepted");
  return r.error();
}

TEST(JpegBaselineParse, RefusesWhatItCannotDecode) {
  const auto px = screen_pixels(48, 32, 3, 1);
  auto o = options_for(k420, 75, 0);
  o.progressive = true;
  Error e = parse_error_of(encode(px, 48, 32, o));
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  EXPECT_NE(e.message().find("progressive"), std::string::npos) << e.message();

  o = options_for(k420, 75, 0);
  o.arithmetic = true;
  e = parse_error_of(encode(px, 48, 32, o));
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  EXPECT_NE(e.message().find("arithmetic"), std::string::npos) << e.message();

  o = options_for(k444, 75, 0);
  o.separate_scans = true;
  e = parse_error_of(encode(px, 48, 32, o));
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  EXPECT_NE(e.message().find("scan"), std::string::npos) << e.message();

  // Lossless and 12-bit by patching a baseline file's frame header.
  const auto base = encode(px, 48, 32, options_for(k420, 75, 0));
  size_t sof = 0;
  for (size_t i = 0; i + 1 < base.size(); ++i) {
    if (base[i] == 0xFF && base[i + 1] == 0xC0) { sof = i; break; }
  }
  ASSERT_GT(sof, 0u);
  auto lossless = base;
  lossless[sof + 1] = 0xC3;
  e = parse_error_of(lossless);
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  EXPECT_NE(e.message().find("lossless"), std::string::npos) << e.message();
  auto twelve = base;
  twelve[sof + 4] = 12;
  e = parse_error_of(twelve);
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  EXPECT_NE(e.message().find("12-bit"), std::string::npos) << e.message();
  EXPECT_EQ(e.stage(), "baseline parse SOF");

  // Absurd dimensions: 65535 x 65535.
  auto huge = base;
  huge[sof + 5] = huge[sof + 6] = huge[sof + 7] = huge[sof + 8] = 0xFF;
  e = parse_error_of(huge);
  EXPECT_EQ(e.code(), ErrorCode::LimitExceeded);
  BaselineLimits small;
  small.max_width = 40;
  auto r = parse_baseline_jpeg(base, small);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code(), ErrorCode::LimitExceeded);
}

TEST(JpegBaselineParse, BrokenInputIsAnErrorNeverACrash) {
  const auto px = screen_pixels(96, 64, 3, 4);
  const auto file = encode(px, 96, 64, options_for(k420, 60, 5));
  auto good = parse_baseline_jpeg(file);
  ASSERT_TRUE(good.ok());

  EXPECT_EQ(parse_error_of({}).code(), ErrorCode::CorruptData);
  EXPECT_EQ(parse_error_of({0xFF, 0xD8}).code(), ErrorCode::Truncated);

  // Every prefix: an error from the parser or the decoder, or (cut after the last entropy
  // byte) the full picture. With restart markers a cut scan lacks intervals (a parse error);
  // without, a cut in the first half of the scan parses and fails to decode.
  const auto plain = encode(px, 96, 64, options_for(k420, 60, 0));
  auto plain_parsed = parse_baseline_jpeg(plain);
  ASSERT_TRUE(plain_parsed.ok());
  for (const auto* f : {&file, &plain}) {
    const bool has_restarts = f == &file;
    const auto& whole = has_restarts ? *good : *plain_parsed;
    for (size_t n = 0; n < f->size(); ++n) {
      std::vector<uint8_t> cut(f->begin(), f->begin() + std::ptrdiff_t(n));
      auto p = parse_baseline_jpeg(cut);
      const bool early = n > whole.scan_begin && n < (whole.scan_begin + whole.scan_end) / 2;
      if (!p.ok()) {
        EXPECT_FALSE(early && !has_restarts) << "cut at " << n << ": " << p.error().message();
        if (early && has_restarts) {
          EXPECT_EQ(p.error().code(), ErrorCode::Truncated);
        }
        continue;
      }
      auto img = decode_coefficients_parallel(cut, *p, ParallelDecodeOptions{64});
      ASSERT_TRUE(img.ok()) << "cut at " << n << ": " << img.error().message();
      // Every cut lacks EOI at least; one in the scan's first half ends before the last MCU.
      ASSERT_FALSE(img->warnings.empty()) << "cut at " << n;
      EXPECT_EQ(img->warnings[0].code(), ErrorCode::Truncated) << img->warnings[0].message();
      if (early) {
        EXPECT_NE(img->warnings[0].reason().find("ends before the last MCU"), std::string::npos)
            << "cut at " << n << ": " << img->warnings[0].message();
      }
    }
  }

  // Restart markers out of order.
  auto reordered = file;
  for (size_t i = good->scan_begin; i + 1 < good->scan_end; ++i) {
    if (reordered[i] == 0xFF && reordered[i + 1] == 0xD1) {
      reordered[i + 1] = 0xD3;
      break;
    }
  }
  Error e = parse_error_of(reordered);
  EXPECT_EQ(e.code(), ErrorCode::CorruptData);
  EXPECT_NE(e.message().find("RST3"), std::string::npos) << e.message();

  // A DHT with more codes of one length than fit.
  auto bad_dht = file;
  for (size_t i = 2; i + 5 < bad_dht.size(); ++i) {
    if (bad_dht[i] == 0xFF && bad_dht[i + 1] == 0xC4) {
      bad_dht[i + 5] = 3;  // 3 codes of length 1
      break;
    }
  }
  e = parse_error_of(bad_dht);
  EXPECT_EQ(e.code(), ErrorCode::CorruptData) << e.message();

  // Random byte changes in the entropy data: no crash (ASan checks), an error or pixels.
  std::mt19937 rng(17);
  for (int trial = 0; trial < 300; ++trial) {
    auto bad = file;
    for (int k = 0; k < 1 + trial % 4; ++k) {
      const size_t at = good->scan_begin + rng() % (good->scan_end - good->scan_begin);
      bad[at] = uint8_t(rng());
    }
    auto p = parse_baseline_jpeg(bad);
    if (!p.ok()) continue;
    auto img = decode_coefficients_parallel(bad, *p, ParallelDecodeOptions{8 + uint32_t(trial % 64)});
    ASSERT_TRUE(img.ok()) << img.error().message();
    for (const Error& w : img->warnings) {
      EXPECT_TRUE(w.code() == ErrorCode::CorruptData || w.code() == ErrorCode::Truncated)
          << w.message();
      EXPECT_EQ(w.stage(), "parallel decode");
      EXPECT_EQ(w.severity(), Severity::Warning);
    }
  }
}

TEST(JpegBaselineParse, UndefinedHuffmanTableIsLeftToOtherDecoders) {
  // Remove the DHT segments: libjpeg-turbo would use the standard (Motion-JPEG) tables.
  const auto px = screen_pixels(32, 32, 3, 1);
  const auto file = encode(px, 32, 32, options_for(k420, 75, 0));
  std::vector<uint8_t> stripped(file.begin(), file.begin() + 2);
  size_t i = 2;
  while (i + 4 <= file.size()) {
    const uint8_t m = file[i + 1];
    const size_t len = (size_t(file[i + 2]) << 8) | file[i + 3];
    if (m == 0xDA) {
      stripped.insert(stripped.end(), file.begin() + std::ptrdiff_t(i), file.end());
      break;
    }
    if (m != 0xC4) {
      stripped.insert(stripped.end(), file.begin() + std::ptrdiff_t(i),
                      file.begin() + std::ptrdiff_t(i + 2 + len));
    }
    i += 2 + len;
  }
  Error e = parse_error_of(stripped);
  EXPECT_EQ(e.code(), ErrorCode::Unsupported);
  EXPECT_NE(e.message().find("Huffman table"), std::string::npos) << e.message();
}

// Where the two arithmetics part: blocks whose samples go past [-512, 511] (the C table wraps,
// SIMD saturates) and whose 16-bit sums overflow (SIMD wraps), through libjpeg's own decoder.
// Quantisation step 16: a DC-only block has every sample at v = 2 * coefficient.
TEST(JpegIdct, ExtremeBlocksMatchTheInstalledLibjpegTurbo) {
  // Consecutive DC differences stay within +-2047 (what a baseline encoder can code).
  const int dcs[] = {0,    60,   150, 255,  256,  300,   450, -300, -256,
                     -257, -400, 500, 1000, 2000, 500, -1000, -2047};
  const int n = int(std::size(dcs));
  std::vector<int16_t> coefs(size_t(n) * 64, 0);
  for (int b = 0; b < n; ++b) {
    coefs[size_t(b) * 64] = int16_t(dcs[b]);
    if (b % 3 == 1) coefs[size_t(b) * 64 + 9] = int16_t(40 * (b % 2 ? 1 : -1));  // AC, row 1
    if (b % 4 == 2) coefs[size_t(b) * 64 + 3] = int16_t(-900 + 97 * b);          // AC, row 0
    if (b % 5 == 3) coefs[size_t(b) * 64 + 63] = int16_t(1023);
  }
  std::string err;
  const auto file = testing::libjpeg_write_gray_coefficients(coefs, n, 16, &err);
  ASSERT_FALSE(file.empty()) << err;
  auto parsed = parse_baseline_jpeg(file);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message();
  auto img = decode_coefficients_parallel(file, *parsed);
  ASSERT_TRUE(img.ok()) << img.error().message();
  for (int b = 0; b < n; ++b) ASSERT_EQ(img->block(0, uint32_t(b), 0)[0], dcs[b]);
  const std::string c = compare_idct_with_libjpeg(file, *img, *parsed, IdctArithmetic::C);
  const std::string simd = compare_idct_with_libjpeg(file, *img, *parsed, IdctArithmetic::Simd);
  EXPECT_NE(c, simd) << "the test blocks do not tell the two arithmetics apart";
  EXPECT_EQ(installed_arithmetic() == IdctArithmetic::C ? c : simd, "")
      << (installed_arithmetic() == IdctArithmetic::C ? "C" : "SIMD") << " arithmetic";
  // The C table.
  EXPECT_EQ(range_limit_c(600), 0);
  EXPECT_EQ(range_limit_c(-600), 255);
  EXPECT_EQ(range_limit_c(511), 255);
  EXPECT_EQ(range_limit_c(-512), 0);
  EXPECT_EQ(range_limit_c(-1), 127);
  EXPECT_EQ(range_limit_c(1100), 204);  // 1100 & 1023 = 76 -> 204
}

}  // namespace
}  // namespace pixpath::codecs::jpeg
