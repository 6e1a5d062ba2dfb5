#include "play_report.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace pixpath::tools {
namespace {

paint::CodingStats coding(std::string name, int64_t draws, int64_t errors, int64_t total_p50_us) {
  paint::CodingStats s;
  s.coding = std::move(name);
  s.draws = draws;
  s.painted = draws - errors;
  s.errors = errors;
  s.bytes_in = static_cast<uint64_t>(draws) * 1000;
  s.total.count = draws;
  s.total.p50 = total_p50_us;
  s.total.max = total_p50_us * 2;
  return s;
}

paint::PlayResult sample_result() {
  paint::PlayResult r;
  r.file = "sample.pxrec";
  r.backing = "cpu";
  r.pace = "max";
  r.decode_threads = 2;
  r.events = 12;
  r.wall_s = 0.25;
  r.fps = 40;
  r.decoder = "cpu";
  r.decoder_reason = "asked for";
  r.per_coding = {coding("rgb32", 7, 0, 1500), coding("scroll", 3, 1, 250)};
  r.all = coding("all", 10, 1, 1234);
  r.errors = {"scroll paint: out of the window"};
  r.snapshots = {"snap/window-1.png"};
  return r;
}

TEST(PlayReport, JsonHasEveryFigure) {
  const nlohmann::json j = play_result_json(sample_result());
  EXPECT_EQ(j["file"], "sample.pxrec");
  EXPECT_EQ(j["backing"], "cpu");
  EXPECT_EQ(j["pace"], "max");
  EXPECT_EQ(j["events"], 12);
  EXPECT_EQ(j["all"]["draws"], 10);
  EXPECT_EQ(j["all"]["painted"], 9);
  EXPECT_EQ(j["all"]["errors"], 1);
  EXPECT_EQ(j["all"]["total"]["p50_us"], 1234);
  ASSERT_EQ(j["per_coding"].size(), 2u);
  EXPECT_EQ(j["per_coding"][0]["coding"], "rgb32");
  EXPECT_EQ(j["per_coding"][1]["coding"], "scroll");
  EXPECT_EQ(j["per_coding"][1]["bytes_in"], 3000);
  for (const char* key : {"queue", "decode", "paint", "total"})
    EXPECT_TRUE(j["all"][key].contains("p99_us")) << key;
  EXPECT_EQ(j["errors"].size(), 1u);
  EXPECT_EQ(j["snapshots"][0], "snap/window-1.png");
  EXPECT_EQ(j["gpu_decode_calls"], 0);
}

TEST(PlayReport, TableHasARowPerCodingInMilliseconds) {
  std::ostringstream out;
  print_play_table(sample_result(), out);
  const std::string t = out.str();
  EXPECT_EQ(t.rfind("sample.pxrec: 10 draws in 0.250 s", 0), 0u) << t;
  EXPECT_NE(t.find("40.0 draws/s"), std::string::npos) << t;
  EXPECT_NE(t.find("decoder cpu (asked for)"), std::string::npos) << t;
  for (const char* row : {"\nrgb32 ", "\nscroll ", "\nall "})
    EXPECT_NE(t.find(row), std::string::npos) << row << "\n" << t;
  EXPECT_NE(t.find("1.50"), std::string::npos) << "1500 us shown as 1.50 ms\n" << t;
  EXPECT_NE(t.find("error: scroll paint: out of the window\n"), std::string::npos) << t;
  EXPECT_NE(t.find("snapshot: snap/window-1.png\n"), std::string::npos) << t;
  EXPECT_EQ(t.find("gpu:"), std::string::npos) << "no GPU line without GPU decodes\n" << t;

  paint::PlayResult gpu = sample_result();
  gpu.gpu_decodes = 6;
  gpu.gpu_decode_calls = 2;
  gpu.gpu_batched_max = 4;
  gpu.gpu_max_batch = 8;
  std::ostringstream gpu_out;
  print_play_table(gpu, gpu_out);
  EXPECT_NE(gpu_out.str().find("gpu: 6 pictures in 2 decode calls (largest batch 4, limit 8)"),
            std::string::npos)
      << gpu_out.str();
}

// Damaged draws (decoder warnings) and draws the GPU route kept on the CPU are shown, never
// silent (issue 15).
TEST(PlayReport, WarningsAndGpuRouteRefusalsAreShown) {
  paint::PlayResult r = sample_result();
  r.per_coding.push_back(coding("jpeg", 4, 0, 900));
  r.per_coding.back().warnings = 2;
  r.per_coding.back().warned_draws = 2;
  r.all.warnings = 2;
  r.warnings = {"seq 7 wid 1: jpeg decode: Premature end of JPEG file (warning)"};
  r.gpu_routed_to_cpu = 3;
  r.last_gpu_route_reason = "arithmetic JPEG (nvJPEG decodes Huffman-coded DCT JPEGs only)";
  const auto j = play_result_json(r);
  EXPECT_EQ(j["per_coding"][2]["warnings"], 2);
  EXPECT_EQ(j["per_coding"][2]["warned_draws"], 2);
  EXPECT_EQ(j["all"]["warnings"], 2);
  EXPECT_EQ(j["warnings"][0], r.warnings[0]);
  EXPECT_EQ(j["gpu_routed_to_cpu"], 3);
  EXPECT_EQ(j["last_gpu_route_reason"], r.last_gpu_route_reason);
  std::ostringstream out;
  print_play_table(r, out);
  const std::string t = out.str();
  EXPECT_NE(t.find(" warns "), std::string::npos) << t;
  EXPECT_NE(t.find("warning: seq 7 wid 1: jpeg decode: Premature end of JPEG file"), std::string::npos) << t;
  EXPECT_NE(t.find("gpu route: 3 draws decoded on the CPU instead (last: arithmetic JPEG"), std::string::npos)
      << t;
}

}  // namespace
}  // namespace pixpath::tools
