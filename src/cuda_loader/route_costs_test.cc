// The batch split of the own decoder's route (route_costs.h): which pictures go to the hardware
// engines, from the measured costs. Plain C++: runs on every machine.
#include "cuda/route_costs.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace pixpath::cuda {
namespace {

// The 4K q50 screen picture's costs measured on the H100 (route_costs.h): ~1.15 ms on the own
// decoder with its plan, ~4.7 ms per engine pass; 7 engines.
constexpr double kOwn = 1.15, kPass = 4.7;
constexpr int kEngines = 7;

TEST(EngineShare, SmallBatchesStayOnTheOwnDecoder) {
  // One 4K window with a few draws in flight: the own decoder finishes them before one pass.
  for (int k = 0; k <= 4; ++k) EXPECT_EQ(engine_share(k, k, kEngines, kOwn, kPass), 0) << k;
}

TEST(EngineShare, LargeBatchesSplitSoBothFinishTogether) {
  // 8 windows: 4 on the engines (one pass, 4.7 ms) and 4 on the own decoder (4.6 ms) beat 8 on
  // the own decoder (9.2 ms); 3 on the own decoder would leave it idle for nothing.
  EXPECT_EQ(engine_share(8, 8, kEngines, kOwn, kPass), 4);
  // 14 pictures: a second pass (9.4 ms) does not pay; 7 on the engines, 7 on the SMs (8.05).
  EXPECT_EQ(engine_share(14, 14, kEngines, kOwn, kPass), 7);
  // Fewer candidates than the split wants (jpega, truncated pictures stay): all of them.
  EXPECT_EQ(engine_share(8, 3, kEngines, kOwn, kPass), 3);
}

TEST(EngineShare, NeverOnePictureOrNoEngines) {
  // 5 pictures: 1 on the engines would finish first (4.7 vs 5.75 ms), but the module batches
  // two or more; 2 (max(3.45, 4.7)) still beats 5.75.
  EXPECT_EQ(engine_share(5, 5, kEngines, kOwn, kPass), 2);
  EXPECT_EQ(engine_share(5, 1, kEngines, kOwn, kPass), 0);
  EXPECT_EQ(engine_share(8, 8, 0, kOwn, kPass), 0);
  // Engines slower than the whole batch on the own decoder: none.
  EXPECT_EQ(engine_share(6, 6, kEngines, kOwn, 7.0), 0);
}

TEST(EngineShare, TiesKeepPicturesOnTheOwnDecoder) {
  // 2 pictures of 1 ms against a 1 ms pass: all on the own decoder (2 ms) loses to 2 on the
  // engines (1 ms); with a 2 ms pass they tie and both stay.
  EXPECT_EQ(engine_share(2, 2, kEngines, 1.0, 1.0), 2);
  EXPECT_EQ(engine_share(2, 2, kEngines, 1.0, 2.0), 0);
}

TEST(CostPerMpixel, PriorThenSamples) {
  CostPerMpixel mean(0.5, CostPerMpixel::Track::Mean);
  EXPECT_DOUBLE_EQ(mean.per_mpixel(), 0.5);
  EXPECT_EQ(mean.samples(), 0);
  mean.add(2.0, 2'000'000);  // the first sample replaces the prior
  EXPECT_DOUBLE_EQ(mean.per_mpixel(), 1.0);
  mean.add(3.0, 1'000'000);
  EXPECT_DOUBLE_EQ(mean.per_mpixel(), 1.0 + (3.0 - 1.0) / 8);
  mean.add(1.0, 0);  // no pixels: ignored
  mean.add(-1.0, 1'000'000);
  EXPECT_EQ(mean.samples(), 2);
}

TEST(CostPerMpixel, FloorFollowsDownFastAndUpSlowly) {
  CostPerMpixel floor(4.0, CostPerMpixel::Track::Floor);
  floor.add(2.0, 1'000'000);  // down: half way
  EXPECT_DOUBLE_EQ(floor.per_mpixel(), 3.0);
  floor.add(35.0, 1'000'000);  // a pass that queued behind others: 1/32 of the way
  EXPECT_DOUBLE_EQ(floor.per_mpixel(), 4.0);
}

TEST(CostPerMpixel, FloorKeepsItsPriorAgainstAColdFirstSample) {
  // The first hardware passes of a process are slow (engine set-up, queueing): a first sample
  // must not become the estimate, or the engines are never picked, so never measured again.
  CostPerMpixel floor(0.5, CostPerMpixel::Track::Floor);
  floor.add(2.2, 1'000'000);
  EXPECT_NEAR(floor.per_mpixel(), 0.5 + 1.7 / 32, 1e-12);
  EXPECT_EQ(floor.samples(), 1);
}

TEST(CostPerMpixel, ManyThreads) {
  CostPerMpixel c(1.0, CostPerMpixel::Track::Mean);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) c.add(2.0, 1'000'000), (void)c.per_mpixel();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.samples(), 4000);
  EXPECT_DOUBLE_EQ(c.per_mpixel(), 2.0);
}

}  // namespace
}  // namespace pixpath::cuda
