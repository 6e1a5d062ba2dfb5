// The paint engine's GPU route for real: nvJPEG decodes into CUDA memory, copies into the GL
// backing's window textures (paint_engine.h, "GPU decoding"). Label gpu: on a machine without
// an NVIDIA GPU (or without the CUDA module, or GL) every test skips, saying why.
// Inputs: tests/data/sample.pxrec (PIXPATH_TEST_DATA) and, when PIXPATH_SCREEN_JPEGS names a
// folder of bench/cuda/make_screen_jpegs.sh output, real 4K screen content; otherwise a 4K
// picture encoded here.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <unistd.h>

#include "cuda_loader/testing/gpu_paint_support.h"
#include "pixpath/codecs/registry.h"
#include "pixpath/codecs/image_io.h"

namespace pixpath::gl {
namespace {

using paint::DecoderChoice;
using testing::compare;
using testing::play_gl;

testing::TestGpu& gpu() {
  static testing::TestGpu g = testing::make_test_gpu();
  return g;
}

#define REQUIRE_GPU() \
  if (!gpu().skip.empty()) GTEST_SKIP() << gpu().skip

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("pixpath-gpu-paint-" + std::to_string(getpid()) + "-" + name))
      .string();
}

// The sample recording cut right after its last jpeg draw (its tail is a lossless refresh that
// would hide any jpeg difference).
std::string sample_up_to_last_jpeg() {
  const char* data = std::getenv("PIXPATH_TEST_DATA");
  if (!data) return "";
  auto reader = paint::RecordingReader::open(std::string(data) + "/sample.pxrec");
  if (!reader.ok()) return "";
  auto events = reader->read_all();
  if (!events.ok()) return "";
  size_t last = 0;
  bool any = false;
  for (size_t i = 0; i < events->size(); ++i)
    if ((*events)[i].type == paint::RecordType::Draw && (*events)[i].draw.coding.rfind("jpeg", 0) == 0)
      last = i, any = true;
  if (!any) return "no-jpeg";
  const std::string path = temp_path("sample-jpeg.pxrec");
  auto w = paint::RecordingWriter::create(path);
  if (!w.ok()) return "";
  for (size_t i = 0; i <= last; ++i)
    if (!w->write((*events)[i]).ok()) return "";
  if (!w->close().ok()) return "";
  return path;
}

// 4K screen JPEGs: PIXPATH_SCREEN_JPEGS, else one patterned picture encoded here (baseline 4:2:0).
std::string screen_recording(int draws) {
  std::vector<std::vector<uint8_t>> jpegs;
  if (const char* dir = std::getenv("PIXPATH_SCREEN_JPEGS")) {
    for (const char* f : {"screen4k_q50_420.jpg", "screen1080_q50_420.jpg", "screen4k_q70_420_rst2.jpg",
                          "screen4k_q90_444.jpg", "crop_512x512_q50_420.jpg"}) {
      auto bytes = codecs::read_file(std::string(dir) + "/" + f);
      if (bytes.ok()) jpegs.push_back(std::move(bytes).value());
    }
  }
  if (jpegs.empty()) {
    auto pic = Picture::allocate(PixelFormat::BGRX, 3840, 2160);
    auto v = pic->write();
    for (int y = 0; y < 2160; ++y) {
      uint8_t* r = v->plane(0).row(y).data();
      for (int x = 0; x < 3840; ++x) {
        r[x * 4] = uint8_t((x / 8) * 37 + y);
        r[x * 4 + 1] = uint8_t(((x / 16) ^ (y / 16)) * 29);
        r[x * 4 + 2] = uint8_t(y / 9 + (x % 13) * 11);
        r[x * 4 + 3] = 255;
      }
    }
    auto e = codecs::CodecRegistry::builtin().encoder("jpeg")->encode(*pic->read(), codecs::EncodeParams{});
    jpegs.push_back(std::move(e->data));
  }
  std::vector<std::pair<int, int>> sizes;
  for (auto& j : jpegs) sizes.push_back(testing::jpeg_size(j));
  const std::string path = temp_path("screen4k.pxrec");
  EXPECT_TRUE(testing::write_jpeg_recording(path, jpegs, sizes, draws).ok());
  return path;
}

void expect_all_acked_gpu(const paint::PlayResult& r, bool expect_gpu) {
  EXPECT_EQ(r.all.errors, 0);
  EXPECT_EQ(r.all.skipped, 0);
  EXPECT_EQ(r.all.painted, r.all.draws);  // every ack > 0
  for (const auto& c : r.per_coding) {
    if (c.coding != "jpeg" && c.coding != "jpega") continue;
    std::printf("  %s: %lld draws, gpu %lld, cpu %lld, fallbacks %lld, total p50 %lld us\n",
                c.coding.c_str(), (long long)c.draws, (long long)c.gpu, (long long)c.cpu,
                (long long)c.gpu_fallbacks, (long long)c.total.p50);
    if (expect_gpu) {
      EXPECT_GT(c.gpu, 0);
    }
  }
}

void expect_snapshots_close(const testing::Played& a, const testing::Played& b, int max_allowed) {
  ASSERT_EQ(a.windows.size(), b.windows.size());
  for (const auto& [wid, pic] : a.windows) {
    auto d = compare(pic, b.windows.at(wid));
    std::printf("  window %lld: max difference %d, %lld channel values differ\n", (long long)wid, d.max,
                (long long)d.differing);
    EXPECT_TRUE(d.same_size);
    EXPECT_LE(d.max, max_allowed) << "window " << wid;
  }
}

TEST(GpuPaint, SampleRecordingMatchesTheCpuDecoder) {
  REQUIRE_GPU();
  const std::string file = sample_up_to_last_jpeg();
  ASSERT_FALSE(file.empty()) << "PIXPATH_TEST_DATA/sample.pxrec";
  if (file == "no-jpeg") {
    GTEST_SKIP() << "the sample recording has no jpeg draw (a stock xpra 3.1 server sent rgb24 "
                    "only); ScreenContent4kMatchesTheCpuDecoder covers real screen content";
  }
  auto cpu = play_gl(file, DecoderChoice::Cpu, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message();
  auto g = play_gl(file, DecoderChoice::Gpu, gpu().decoder);
  ASSERT_TRUE(g.ok()) << g.error().message();
  EXPECT_EQ(g->result.decoder, "gpu") << g->result.decoder_reason;
  expect_all_acked_gpu(g->result, true);
  // Baseline JPEGs on the hardware engines are exact; progressive/gray go to the hybrid
  // backends (at most 4 levels, docs/performance.md "GPU decode").
  expect_snapshots_close(*cpu, *g, 4);
  EXPECT_GT(g->gl.external_writes, 0);
  std::filesystem::remove(file);
}

TEST(GpuPaint, ScreenContent4kMatchesTheCpuDecoder) {
  REQUIRE_GPU();
  const std::string file = screen_recording(20);
  auto cpu = play_gl(file, DecoderChoice::Cpu, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message();
  auto g = play_gl(file, DecoderChoice::Gpu, gpu().decoder);
  ASSERT_TRUE(g.ok()) << g.error().message();
  expect_all_acked_gpu(g->result, true);
  EXPECT_EQ(g->result.all.gpu, g->result.all.draws);
  EXPECT_EQ(g->result.all.gpu_fallbacks, 0) << g->result.last_gpu_error;
  expect_snapshots_close(*cpu, *g, 0);  // baseline, hardware engines: exact
  EXPECT_EQ(g->result.copies, 0);
  EXPECT_EQ(g->gl.host_copies, 0);
  std::filesystem::remove(file);
}

TEST(GpuPaint, ForcedGpuErrorsFallBackToTheCpu) {
  REQUIRE_GPU();
  const std::string file = screen_recording(6);
  auto cpu = play_gl(file, DecoderChoice::Cpu, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message();
  for (const char* stage : {"decode", "texture"}) {
    setenv("PIXPATH_CUDA_INJECT_FAILURE", stage, 1);
    auto g = play_gl(file, DecoderChoice::Gpu, gpu().decoder);
    unsetenv("PIXPATH_CUDA_INJECT_FAILURE");
    ASSERT_TRUE(g.ok()) << g.error().message();
    std::printf("  injected %s: last gpu error: %s\n", stage, g->result.last_gpu_error.c_str());
    expect_all_acked_gpu(g->result, false);
    EXPECT_EQ(g->result.all.gpu_fallbacks, g->result.all.draws) << stage;
    expect_snapshots_close(*cpu, *g, 0);
  }
}

// Two windows, one GL context, one engine: both updated at once, draws batched per run.
TEST(GpuPaint, TwoWindowsOnOneContext) {
  REQUIRE_GPU();
  const std::string file = temp_path("two.pxrec");
  {
    const std::string one = screen_recording(4);
    auto reader = paint::RecordingReader::open(one);
    ASSERT_TRUE(reader.ok());
    auto events = reader->read_all();
    ASSERT_TRUE(events.ok());
    auto w = paint::RecordingWriter::create(file);
    ASSERT_TRUE(w.ok());
    for (auto e : *events) {
      ASSERT_TRUE(w->write(e).ok());
      e.wid = 2;
      e.draw.wid = 2;
      e.draw.sequence += 1000;
      ASSERT_TRUE(w->write(e).ok());
    }
    ASSERT_TRUE(w->close().ok());
    std::filesystem::remove(one);
  }
  auto cpu = play_gl(file, DecoderChoice::Cpu, nullptr);
  ASSERT_TRUE(cpu.ok()) << cpu.error().message();
  auto g = play_gl(file, DecoderChoice::Gpu, gpu().decoder, 4);
  ASSERT_TRUE(g.ok()) << g.error().message();
  ASSERT_EQ(g->windows.size(), 2u);
  expect_all_acked_gpu(g->result, true);
  std::printf("  copy calls %lld for %lld gpu draws\n", (long long)g->result.gpu_copy_calls,
              (long long)g->result.all.gpu);
  expect_snapshots_close(*cpu, *g, 0);
  std::filesystem::remove(file);
}

TEST(GpuPaint, AutoPicksTheGpuWithTheGlBacking) {
  REQUIRE_GPU();
  auto backing = GlBacking::create();
  ASSERT_TRUE(backing.ok());
  paint::PaintEngineConfig c;
  c.decoder = DecoderChoice::Auto;
  c.gpu_decoder = gpu().decoder;
  auto e = paint::PaintEngine::create(**backing, c);
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)->stats().decoder, "gpu") << (*e)->stats().decoder_reason;
}

}  // namespace
}  // namespace pixpath::gl
