// The GPU route's choice by measurement (internal/gpu_route_chooser.h): the prior, learning each
// route's figure, following a changing load, the band's edges, and many threads at once.
#include "internal/gpu_route_chooser.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace pixpath::paint::internal {
namespace {

using Options = GpuRouteChooser::Options;

// Plays `draws` draws of `pixels` through the chooser, each acked after what its route takes
// now (cpu_us / gpu_us); returns how many took the GPU.
int play(GpuRouteChooser& c, int64_t pixels, int draws, int64_t cpu_us, int64_t gpu_us) {
  int gpu = 0;
  for (int i = 0; i < draws; ++i) {
    const auto choice = c.choose(pixels);
    gpu += choice.gpu;
    c.record(choice, choice.gpu ? gpu_us : cpu_us);
  }
  return gpu;
}

TEST(GpuRouteChooser, FollowsTheThresholdUntilBothRoutesAreMeasured) {
  GpuRouteChooser c(Options{});
  // Before any sample the threshold decides (256x256), learn_every (8) aside.
  for (int i = 1; i <= 7; ++i) {
    EXPECT_FALSE(c.choose(200 * 200).gpu) << i;
    EXPECT_TRUE(c.choose(300 * 300).gpu) << i;
  }
  const auto learn_small = c.choose(200 * 200), learn_large = c.choose(300 * 300);
  EXPECT_TRUE(learn_small.gpu);
  EXPECT_TRUE(learn_small.explored);
  EXPECT_FALSE(learn_large.gpu);
  EXPECT_TRUE(learn_large.explored);
  EXPECT_EQ(c.explored(), 2);
}

TEST(GpuRouteChooser, OutsideTheBandTheThresholdAloneAndNothingMeasured) {
  GpuRouteChooser c(Options{});
  for (int i = 0; i < 100; ++i) {
    const auto tiny = c.choose(63 * 64), huge = c.choose(3840 * 2160), edge = c.choose(1024 * 1024);
    EXPECT_FALSE(tiny.gpu);
    EXPECT_EQ(tiny.size_class, -1);
    EXPECT_TRUE(huge.gpu);
    EXPECT_EQ(huge.size_class, -1);
    EXPECT_TRUE(edge.gpu);
    EXPECT_EQ(edge.size_class, -1);
    c.record(huge, 100000);  // ignored
  }
  EXPECT_EQ(c.explored(), 0);
  EXPECT_EQ(c.choose(64 * 64).size_class, 0);
  EXPECT_EQ(c.choose(1024 * 1024 - 1).size_class, 7);
  EXPECT_EQ(c.table().size(), 8u);
  EXPECT_EQ(c.describe(), "");  // no class measured
}

TEST(GpuRouteChooser, MeasurementOffIsTheThresholdAlone) {
  GpuRouteChooser c(Options{.threshold = 256 * 256, .measured = false});
  EXPECT_EQ(play(c, 512 * 512, 200, 100000, 10), 200);  // never explores, whatever the figures
  EXPECT_EQ(play(c, 128 * 128, 200, 100000, 10), 0);
  EXPECT_EQ(c.explored(), 0);
  EXPECT_TRUE(c.table().empty());
  EXPECT_FALSE(c.measured());
}

TEST(GpuRouteChooser, TakesTheFasterRouteOnceMeasuredAndKeepsExploring) {
  GpuRouteChooser c(Options{});
  // 512x512: the threshold says GPU, but here the GPU takes 3 ms and the CPU 1 ms.
  play(c, 512 * 512, 64, 1000, 3000);
  const int gpu = play(c, 512 * 512, 320, 1000, 3000);
  EXPECT_EQ(gpu, 4);  // one in 96 explores the GPU (32 times the 3x ratio)
  const auto row = c.table()[6];
  EXPECT_EQ(row.from_pixels, 512 * 512);
  EXPECT_FALSE(row.prefers_gpu);
  EXPECT_EQ(row.cpu_us, 1000);
  EXPECT_EQ(row.gpu_us, 3000);
  EXPECT_NE(c.describe().find("512x512+ cpu 1.00 ms"), std::string::npos) << c.describe();
  EXPECT_NE(c.describe().find("gpu 3.00 ms"), std::string::npos) << c.describe();
  EXPECT_NE(c.describe().find("-> cpu"), std::string::npos) << c.describe();
  // Other classes are untouched: 300x300 (class 4) still follows the threshold.
  EXPECT_TRUE(c.table()[4].prefers_gpu);
  EXPECT_EQ(c.table()[4].cpu_samples + c.table()[4].gpu_samples, 0);
}

// Exploring costs the explored draw its latency: a route measured 4x slower is explored one
// draw in 128, not 32; 8x or more, one in 256.
TEST(GpuRouteChooser, AFarSlowerRouteIsExploredLess) {
  GpuRouteChooser c(Options{});
  play(c, 128 * 128, 256, 280, 1120);  // learnt
  EXPECT_EQ(play(c, 128 * 128, 1280, 280, 1120), 10);
  play(c, 700 * 700, 256, 20000, 1000);
  EXPECT_EQ(play(c, 700 * 700, 2560, 20000, 1000), 2560 - 10);
}

TEST(GpuRouteChooser, FollowsAChangingLoad) {
  GpuRouteChooser c(Options{});
  // A small class the CPU paints faster ...
  play(c, 100 * 100, 200, 300, 900);
  EXPECT_LE(play(c, 100 * 100, 64, 300, 900), 2);
  // ... until the CPU workers are busy (a long queue) and the GPU is idle: the explored GPU
  // draws show it and the class moves.
  play(c, 100 * 100, 200, 4000, 900);
  EXPECT_GE(play(c, 100 * 100, 64, 4000, 900), 62);
  EXPECT_TRUE(c.table()[1].prefers_gpu);
  // And back when the load goes: the CPU's figure comes down by its explored draws only (one in
  // 128 at a 4x ratio, then 64, then 32; each weighs half), three of them from 4 ms.
  play(c, 100 * 100, 300, 300, 900);
  EXPECT_FALSE(c.table()[1].prefers_gpu);
}

TEST(GpuRouteChooser, FailedDrawsAreNotSamples) {
  GpuRouteChooser c(Options{});
  for (int i = 0; i < 64; ++i) c.record(c.choose(512 * 512), 0);
  EXPECT_EQ(c.table()[6].gpu_samples + c.table()[6].cpu_samples, 0);
  c.record(GpuRouteChooser::Choice{.gpu = true, .size_class = 99}, 5);  // not a class: ignored
}

// Submit threads choose while the UI thread records (TSan runs this: label threaded).
TEST(GpuRouteChooser, ManyThreadsAtOnce) {
  GpuRouteChooser c(Options{});
  std::vector<std::thread> threads;
  std::atomic<int> gpu{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] { gpu += play(c, (100 + 100 * t) * (100 + 100 * t), 2000, 500, 1500); });
  for (auto& t : threads) t.join();
  for (const auto& row : c.table()) {
    if (row.cpu_samples + row.gpu_samples > 0) {
      EXPECT_FALSE(row.prefers_gpu) << row.from_pixels;
    }
  }
  EXPECT_LT(gpu.load(), 4 * 2000 / 10);
  EXPECT_FALSE(c.describe().empty());
}

}  // namespace
}  // namespace pixpath::paint::internal
