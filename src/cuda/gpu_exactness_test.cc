// The GPU path against the CPU path, picture by picture (label gpu): screen-like content made
// here (glyph rows dark on light and light on dark, coloured text, anti-aliased strokes, UI
// rectangles, a gradient), encoded with libjpeg-turbo at quality 1..100 x 4:2:0 / 4:2:2 /
// 4:4:4 / gray, with baseline (8-bit) quantisation tables as TurboJPEG and xpra's servers write
// them, with cjpeg's default (16-bit tables: extended sequential, below quality 24) where those
// differ, and progressive at six qualities. Each picture is decoded
//   - by pixpath's CPU path (the jpeg decoder, libjpeg-turbo),
//   - by the GPU decoder itself (decode_to_host) with the route's refusals off
//     (PIXPATH_CUDA_ACCEPT_ALL=1) on each backend: auto (the hardware engines for baseline
//     colour), HYBRID, GPU_HYBRID: the table of what nvJPEG makes of every picture,
//   - by the GPU decoder as pixpath routes it (refusals on: paint::gpu_exactness_refusal),
//   - through the paint engine's routing (decoder gpu, CPU backing: GPU-routed draws decoded by
//     decode_to_host, refused ones on the CPU),
// and every picture the GPU route accepts must be within +-1 of the CPU path in every channel,
// every refused one must come back refused (Unsupported, stage "gpu route"), and the engine
// must decode exactly the accepted ones on the GPU. PIXPATH_EXACTNESS_LOG=FILE writes the table
// there (docs/exactness.md). Without a GPU every test skips, naming the reason.
#include <gtest/gtest.h>

#include <jpeglib.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "pixpath/codecs/jpeg_tables.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/cuda/gpu_jpeg.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/gpu_draw_decoder.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::cuda {
namespace {

// A 5x7 "font": each glyph a random bitmap with at least a stem, drawn with 1-px strokes;
// every third row anti-aliased (grey edge pixels), as X fonts with subpixel-less AA look.
std::vector<uint8_t> screen_content(int w, int h, unsigned seed) {
  std::vector<uint8_t> rgb(size_t(w) * h * 3, 255);
  std::mt19937 rng(seed);
  auto put = [&](int x, int y, int r, int g, int b) {
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    auto* p = &rgb[(size_t(y) * w + x) * 3];
    p[0] = uint8_t(r), p[1] = uint8_t(g), p[2] = uint8_t(b);
  };
  auto blend = [&](int x, int y, int r, int g, int b, int a) {  // a of 255
    if (x < 0 || y < 0 || x >= w || y >= h) return;
    auto* p = &rgb[(size_t(y) * w + x) * 3];
    p[0] = uint8_t((p[0] * (255 - a) + r * a) / 255);
    p[1] = uint8_t((p[1] * (255 - a) + g * a) / 255);
    p[2] = uint8_t((p[2] * (255 - a) + b * a) / 255);
  };
  auto fill = [&](int x0, int y0, int x1, int y1, int r, int g, int b) {
    for (int y = y0; y < y1; ++y)
      for (int x = x0; x < x1; ++x) put(x, y, r, g, b);
  };
  // Left half: a page (white), right half: a terminal (near black), a blue title bar on top.
  fill(w / 2, 0, w, h, 12, 12, 16);
  fill(0, 0, w, 14, 40, 70, 160);
  struct Ink { int r, g, b; };
  const Ink page_inks[] = {{0, 0, 0}, {33, 33, 33}, {200, 0, 0}, {0, 0, 190}, {0, 120, 0}};
  const Ink term_inks[] = {{255, 255, 255}, {230, 230, 0}, {0, 230, 230}, {255, 80, 80}, {120, 255, 120}};
  int row = 0;
  for (int cy = 17; cy + 9 < h; cy += 10, ++row) {
    const bool aa = row % 3 == 2;
    for (int cx = 2; cx + 6 < w; cx += 6) {
      if (rng() % 7 == 0) continue;  // a space
      const bool term = cx >= w / 2;
      const Ink ink = term ? term_inks[rng() % 5] : page_inks[rng() % 5];
      const uint32_t bits = uint32_t(rng()) | 0x4210842u;  // a stem in column 1
      for (int gy = 0; gy < 7; ++gy)
        for (int gx = 0; gx < 5; ++gx) {
          if (!((bits >> ((gy * 5 + gx) % 32)) & 1)) continue;
          if (aa) {
            blend(cx + gx, cy + gy, ink.r, ink.g, ink.b, 200);
            blend(cx + gx + 1, cy + gy, ink.r, ink.g, ink.b, 70);
          } else {
            put(cx + gx, cy + gy, ink.r, ink.g, ink.b);
          }
        }
    }
  }
  // UI: buttons with 1-px borders, a gradient, a saturated red and green block.
  for (int i = 0; i < 6; ++i) {
    const int x0 = (w / 8) * (i + 1), y0 = h - 40;
    fill(x0, y0, x0 + w / 10, y0 + 20, 220, 220, 220);
    for (int x = x0; x < x0 + w / 10; ++x) put(x, y0, 0, 0, 0), put(x, y0 + 19, 0, 0, 0);
    for (int y = y0; y < y0 + 20; ++y) put(x0, y, 0, 0, 0), put(x0 + w / 10 - 1, y, 0, 0, 0);
  }
  for (int y = h / 3; y < h / 3 + 40 && y < h; ++y)
    for (int x = w / 4; x < w / 4 + 120 && x < w; ++x) put(x, y, x & 255, (x * 2 + y) & 255, 255 - (y & 255));
  fill(w / 2 + 20, h / 2, w / 2 + 60, h / 2 + 30, 255, 0, 0);
  fill(w / 2 + 60, h / 2, w / 2 + 100, h / 2 + 30, 0, 255, 0);
  return rgb;
}

std::vector<uint8_t> to_gray(const std::vector<uint8_t>& rgb) {
  std::vector<uint8_t> g(rgb.size() / 3);
  for (size_t i = 0; i < g.size(); ++i)
    g[i] = uint8_t((299 * rgb[3 * i] + 587 * rgb[3 * i + 1] + 114 * rgb[3 * i + 2] + 500) / 1000);
  return g;
}

enum class Sampling { k420, k422, k444, kGray };
const char* name(Sampling s) {
  switch (s) {
    case Sampling::k420: return "4:2:0";
    case Sampling::k422: return "4:2:2";
    case Sampling::k444: return "4:4:4";
    case Sampling::kGray: return "gray";
  }
  return "?";
}

// libjpeg-turbo's libjpeg API: force_baseline true = 8-bit tables (TurboJPEG, xpra), false =
// cjpeg's default (tables up to 32767, extended sequential below quality ~25).
std::vector<uint8_t> encode(const std::vector<uint8_t>& pixels, int w, int h, Sampling s, int quality,
                            bool force_baseline, bool progressive = false) {
  jpeg_compress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_compress(&c);
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  jpeg_mem_dest(&c, &out, &out_size);
  c.image_width = JDIMENSION(w);
  c.image_height = JDIMENSION(h);
  const bool gray = s == Sampling::kGray;
  c.input_components = gray ? 1 : 3;
  c.in_color_space = gray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&c);
  jpeg_set_quality(&c, quality, force_baseline ? TRUE : FALSE);
  if (!gray) {
    c.comp_info[0].h_samp_factor = s == Sampling::k444 ? 1 : 2;
    c.comp_info[0].v_samp_factor = s == Sampling::k420 ? 2 : 1;
  }
  if (progressive) jpeg_simple_progression(&c);
  jpeg_start_compress(&c, TRUE);
  const int stride = w * c.input_components;
  while (c.next_scanline < c.image_height) {
    JSAMPROW r = const_cast<uint8_t*>(&pixels[size_t(c.next_scanline) * stride]);
    jpeg_write_scanlines(&c, &r, 1);
  }
  jpeg_finish_compress(&c);
  jpeg_destroy_compress(&c);
  std::vector<uint8_t> v(out, out + out_size);
  free(out);
  return v;
}

// The CPU path: pixpath's jpeg decoder into RGBX.
Picture cpu_decode(const std::vector<uint8_t>& jpeg) {
  const auto* d = codecs::CodecRegistry::builtin().decoder("jpeg");
  auto r = d->decode(SharedBytes::copy_of(std::span<const uint8_t>(jpeg)), codecs::DecodeParams{},
                     PixelFormat::RGBX);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message());
  return r.ok() ? std::move(r->picture) : Picture();
}

// For diagnostics: the real-valued IDCT (before any range limiting) of a gray JPEG's sample
// (x, y), from its coefficients (libjpeg's jpeg_read_coefficients).
double raw_gray_sample(const std::vector<uint8_t>& jpeg, int x, int y) {
  jpeg_decompress_struct c{};
  jpeg_error_mgr err{};
  c.err = jpeg_std_error(&err);
  jpeg_create_decompress(&c);
  jpeg_mem_src(&c, jpeg.data(), (unsigned long)jpeg.size());
  jpeg_read_header(&c, TRUE);
  jvirt_barray_ptr* coefs = jpeg_read_coefficients(&c);
  const jpeg_component_info* comp = &c.comp_info[0];
  JBLOCKARRAY rows = (*c.mem->access_virt_barray)((j_common_ptr)&c, coefs[0], JDIMENSION(y / 8), 1, FALSE);
  const JCOEF* b = rows[0][x / 8];
  double s = 0;
  for (int v = 0; v < 8; ++v)
    for (int u = 0; u < 8; ++u) {
      const double cu = u ? 1 : std::sqrt(0.5), cv = v ? 1 : std::sqrt(0.5);
      s += cu * cv / 4 * b[v * 8 + u] * comp->quant_table->quantval[v * 8 + u] *
           std::cos((2 * (x % 8) + 1) * u * M_PI / 16) * std::cos((2 * (y % 8) + 1) * v * M_PI / 16);
    }
  jpeg_destroy_decompress(&c);
  return s + 128;
}

struct Cmp {
  int max = 0;
  int64_t over1 = 0;  // channel values off by more than 1
  int wx = 0, wy = 0;  // where the largest difference is
};

// Channels [0, 3) of two packed 4-byte pictures; `b_order` maps R, G, B to b's byte offsets.
Cmp compare(const Picture& a, const Picture& b, const int b_order[3]) {
  Cmp c;
  auto va = a.read();
  auto vb = b.read();
  if (!va.ok() || !vb.ok() || a.width() != b.width() || a.height() != b.height()) {
    c.max = 999;
    return c;
  }
  for (int y = 0; y < a.height(); ++y) {
    const uint8_t* pa = va->plane(0).row(y).data();
    const uint8_t* pb = vb->plane(0).row(y).data();
    for (int x = 0; x < a.width(); ++x)
      for (int k = 0; k < 3; ++k) {
        const int d = std::abs(int(pa[4 * x + k]) - int(pb[4 * x + b_order[k]]));
        if (d > 1) ++c.over1;
        if (d > c.max) c.max = d, c.wx = x, c.wy = y;
      }
  }
  return c;
}
constexpr int kRgbOrder[3] = {0, 1, 2};
constexpr int kBgrOrder[3] = {2, 1, 0};

class ScopedEnv {
 public:
  ScopedEnv(const char* k, const char* v) : k_(k) { setenv(k, v, 1); }
  ~ScopedEnv() { unsetenv(k_); }

 private:
  const char* k_;
};

class GpuExactnessTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto d = GpuJpegDecoder::create();
    if (d.ok())
      decoder_ = std::shared_ptr<const GpuJpegDecoder>(std::move(d).value());
    else
      skip_reason_ = d.error().message();
  }
  static void TearDownTestSuite() { decoder_.reset(); }
  void SetUp() override {
    if (!decoder_) GTEST_SKIP() << "no GPU decoder here: " << skip_reason_;
  }
  static inline std::shared_ptr<const GpuJpegDecoder> decoder_;
  static inline std::string skip_reason_;
};

struct Case {
  Sampling s;
  int quality;
  bool baseline;
  bool progressive;
  std::vector<uint8_t> jpeg;
  Picture cpu;
  std::string refusal;  // empty: the GPU route takes it
};

TEST_F(GpuExactnessTest, EveryAcceptedPictureWithinOneOfTheCpuPath) {
  const int w = 480, h = 272;
  const auto rgb = screen_content(w, h, 17);
  const auto gray = to_gray(rgb);
  const bool engines = decoder_->hardware_engines() > 0;
  std::printf("hardware JPEG engines: %d\n", decoder_->hardware_engines());
  std::vector<Case> cases;
  auto add = [&](Case c) {
    c.cpu = cpu_decode(c.jpeg);
    if (auto why = paint::gpu_exactness_refusal(c.jpeg, engines, true, decoder_->reports_damage())) c.refusal = *why;
    cases.push_back(std::move(c));
  };
  for (Sampling s : {Sampling::k420, Sampling::k422, Sampling::k444, Sampling::kGray}) {
    const auto& px = s == Sampling::kGray ? gray : rgb;
    for (int q = 1; q <= 100; ++q)
      for (bool baseline : {true, false}) {
        Case c{s, q, baseline, false, encode(px, w, h, s, q, baseline), {}, {}};
        if (!baseline && c.jpeg == cases.back().jpeg) continue;  // the same tables: the same file
        add(std::move(c));
      }
    for (int q : {5, 25, 50, 75, 90, 100}) add(Case{s, q, true, true, encode(px, w, h, s, q, true, true), {}, {}});
  }

  std::ostringstream log;
  log << "sampling q tables bytes overshoot-bound(Y,C) | nvJPEG auto: max, values >1 off, where | hybrid | "
         "gpu_hybrid | pixpath's route\n";
  int accepted = 0, refused = 0, accepted_bad = 0;
  for (const Case& c : cases) {
    auto tables = codecs::scan_jpeg_tables(c.jpeg);
    ASSERT_TRUE(tables.ok()) << tables.error().message();
    const double by = codecs::idct_overshoot_bound(tables->components[0].quant);
    const double bc = tables->component_count > 1 ? codecs::idct_overshoot_bound(tables->components[1].quant) : 0;
    char head[120];
    std::snprintf(head, sizeof head, "%-5s %3d %-11s %6zu %6.0f %6.0f", name(c.s), c.quality,
                  c.progressive ? "progressive" : c.baseline ? "baseline" : "cjpeg", c.jpeg.size(), by, bc);
    log << head;
    for (GpuBackend b : {GpuBackend::Auto, GpuBackend::Hybrid, GpuBackend::GpuHybrid}) {
      GpuDecodeParams p;
      p.backend = b;
      ScopedEnv all("PIXPATH_CUDA_ACCEPT_ALL", "1");
      auto r = decoder_->decode_to_host(c.jpeg, p);
      if (!r.ok()) {
        log << " | error(" << r.error().reason().substr(0, 40) << ")";
        continue;
      }
      const Cmp m = compare(r->picture, c.cpu, kRgbOrder);
      char cell[64];
      std::snprintf(cell, sizeof cell, " | %3d %6lld @%d,%d", m.max, (long long)m.over1, m.wx, m.wy);
      log << cell;
      if (c.s == Sampling::kGray && m.max > 1) {  // what the IDCT gave there, before range limiting
        auto vg = r->picture.read();
        auto vc = c.cpu.read();
        std::snprintf(cell, sizeof cell, " [raw %.1f cpu %d gpu %d]", raw_gray_sample(c.jpeg, m.wx, m.wy),
                      vc->plane(0).row(m.wy)[size_t(m.wx) * 4], vg->plane(0).row(m.wy)[size_t(m.wx) * 4]);
        log << cell;
      }
    }
    // Without the knob: the route as pixpath runs it.
    auto routed = decoder_->decode_to_host(c.jpeg, GpuDecodeParams{});
    if (c.refusal.empty()) {
      ++accepted;
      EXPECT_TRUE(routed.ok()) << name(c.s) << " q" << c.quality << ": " << routed.error().message();
      if (routed.ok()) {
        const Cmp m = compare(routed->picture, c.cpu, kRgbOrder);
        if (m.max > 1) ++accepted_bad;
        EXPECT_LE(m.max, 1) << name(c.s) << " q" << c.quality << (c.progressive ? " progressive" : c.baseline ? " baseline" : " cjpeg")
                            << ": accepted by the GPU route but " << m.max << " off at " << m.wx << ","
                            << m.wy << " (" << m.over1 << " channel values off by more than 1)";
      }
      log << " | gpu\n";
    } else {
      ++refused;
      EXPECT_FALSE(routed.ok()) << "refused by the policy but decoded: " << c.refusal;
      if (!routed.ok()) {
        EXPECT_EQ(routed.error().code(), ErrorCode::Unsupported) << routed.error().message();
      }
      log << " | cpu (" << c.refusal << ")\n";
    }
  }
  std::printf("%s", log.str().c_str());
  std::printf("%zu pictures: %d accepted by the GPU route (%d of them more than 1 off), %d refused\n",
              cases.size(), accepted, accepted_bad, refused);
  if (const char* f = std::getenv("PIXPATH_EXACTNESS_LOG")) std::ofstream(f) << log.str();

  // The paint engine's routing: every picture as a draw into its own window; GPU-routed draws
  // are decoded on the GPU (decode_to_host, the CPU backing), refused ones on the CPU.
  paint::CpuBacking backing;
  paint::PaintEngineConfig config;
  config.decoder = paint::DecoderChoice::Gpu;
  config.gpu_decoder = decoder_;
  config.gpu_min_pixels = 0;
  auto engine = paint::PaintEngine::create(backing, config);
  ASSERT_TRUE(engine.ok()) << engine.error().message();
  int64_t wid = 1;
  for (const Case& c : cases) {
    (*engine)->window_new(wid, w, h);
    DrawPacket p;
    p.wid = wid;
    p.sequence = wid;
    p.w = w;
    p.h = h;
    p.coding = "jpeg";
    p.data = SharedBytes::copy_of(std::span<const uint8_t>(c.jpeg));
    (*engine)->submit(std::move(p));
    ++wid;
  }
  ASSERT_TRUE((*engine)->wait_idle(std::chrono::seconds(120)));
  wid = 1;
  int engine_bad = 0;
  for (const Case& c : cases) {
    auto snap = backing.snapshot(wid++);
    ASSERT_TRUE(snap.ok());
    const Cmp m = compare(c.cpu, *snap, kBgrOrder);
    if (m.max > 1) ++engine_bad;
    EXPECT_LE(m.max, 1) << "paint engine, " << name(c.s) << " q" << c.quality
                        << (c.progressive ? " progressive" : c.baseline ? " baseline" : " cjpeg") << ": " << m.max << " off";
  }
  const auto st = (*engine)->stats();
  std::printf("paint engine: %lld GPU decodes, %lld routed to the CPU by their tables (%s), %lld GPU "
              "fallbacks, %d pictures more than 1 off\n",
              (long long)st.gpu_decodes, (long long)st.gpu_routed_to_cpu, st.last_gpu_route_reason.c_str(),
              (long long)st.gpu_fallbacks, engine_bad);
  EXPECT_EQ(st.gpu_routed_to_cpu, refused);
  EXPECT_EQ(st.gpu_decodes, accepted);
  EXPECT_EQ(st.gpu_fallbacks, 0) << st.last_gpu_error;
}

// Files the GPU route refuses before decoding (arithmetic coding, CMYK/YCCK, a truncated
// stream), and a bit-flipped stream, which only a decode can find: what nvJPEG makes of each
// (with the knob) and what the route does (without). tests/data/jpeg/README.md.
TEST_F(GpuExactnessTest, FilesTheGpuCannotDecodeExactlyAreRefused) {
  const char* root = std::getenv("PIXPATH_TEST_DATA");
  ASSERT_NE(root, nullptr) << "PIXPATH_TEST_DATA is not set";
  struct FileCase {
    const char* file;
    const char* refusal;  // nullptr: the route takes it
  };
  for (const FileCase& c : {FileCase{"cjpeg-arithmetic-q80.jpg", "arithmetic"}, FileCase{"cjpeg-extended-q10.jpg", "extended"},
                        FileCase{"cjpeg-progressive-q75.jpg", "progressive"}, FileCase{"pillow-cmyk-q90.jpg", "CMYK"},
                        FileCase{"turbojpeg-ycck-420-q85.jpg", "CMYK"}, FileCase{"cjpeg-q75-truncated.jpg", "EOI"},
                        FileCase{"cjpeg-q75-bitflips.jpg", nullptr}, FileCase{"cjpeg-q75.jpg", nullptr}}) {
    SCOPED_TRACE(c.file);
    std::ifstream in(std::string(root) + "/jpeg/" + c.file, std::ios::binary);
    const std::vector<uint8_t> jpeg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(jpeg.empty());
    {
      ScopedEnv all("PIXPATH_CUDA_ACCEPT_ALL", "1");
      auto raw = decoder_->decode_to_host(jpeg, GpuDecodeParams{});
      std::string what = raw.ok() ? "decoded" : raw.error().message();
      if (raw.ok()) {
        const Picture cpu = cpu_decode(jpeg);
        const Cmp m = compare(raw->picture, cpu, kRgbOrder);
        what += ", " + std::to_string(m.max) + " off the CPU path";
      }
      std::printf("nvJPEG on %s: %s\n", c.file, what.c_str());
    }
    auto routed = decoder_->decode_to_host(jpeg, GpuDecodeParams{});
    if (c.refusal) {
      ASSERT_FALSE(routed.ok());
      EXPECT_EQ(routed.error().code(), ErrorCode::Unsupported);
      EXPECT_EQ(routed.error().stage(), "gpu route");
      EXPECT_NE(routed.error().reason().find(c.refusal), std::string::npos) << routed.error().message();
    } else {
      std::printf("route on %s: %s\n", c.file,
                  !routed.ok()                ? routed.error().message().c_str()
                  : routed->warnings.empty() ? "decoded on the GPU"
                                             : ("decoded on the GPU, warning: " + routed->warnings[0].message()).c_str());
      // The own decoder's route reports the damaged file, as the CPU path does (nvJPEG cannot).
      if (decoder_->reports_damage() && routed.ok()) {
        EXPECT_EQ(routed->warnings.empty(), std::string(c.file) == "cjpeg-q75.jpg");
      }
    }
  }
}

}  // namespace
}  // namespace pixpath::cuda
