// The engines' share chosen by measured throughput (cuda/share_tuner.h), driven by a made-up
// clock: a simulated GPU whose throughput depends on the level each batch was given. Plain C++:
// runs on every machine.
#include "cuda/share_tuner.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <random>
#include <thread>

namespace pixpath::cuda {
namespace {

using Clock = ShareTuner::Clock;
using Rates = std::array<double, ShareTuner::kLevels + 1>;  // pictures/s at each level

// Throughput landscapes measured on the H100 (docs/performance.md, 2026-12-06).
// Eight 4K windows, batches of 8: best at 5 of 8.
constexpr Rates kEightWindows{1380, 1400, 1497, 1560, 1628, 1730, 1640, 1300, 1250};
// One 4K window, 8 in flight: best with none on the engines, flat from 2 of 8 up.
constexpr Rates kOneWindow{1250, 1250, 1140, 1140, 1140, 1140, 1140, 1140, 1140};

// Feeds `batches` batches of `size` pictures; each takes size / rate(its level) seconds. Returns
// how many batches each level was given.
// `noise`: each batch's time is off by up to that fraction either way (a shared, noisy machine).
std::map<int, int> run(ShareTuner& t, Clock::time_point& now, const Rates& rates, int batches, int size = 8,
                       double noise = 0, unsigned seed = 1) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> jitter(1 - noise, 1 + noise);
  std::map<int, int> used;
  for (int i = 0; i < batches; ++i) {
    const int level = t.on_batch(now, size);
    EXPECT_GE(level, 0);
    EXPECT_LE(level, ShareTuner::kLevels);
    ++used[level];
    const double secs = size / rates[size_t(level)] * (noise > 0 ? jitter(random) : 1.0);
    now += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(secs));
  }
  return used;
}

TEST(ShareTuner, SharePerLevelNeverOnePicture) {
  EXPECT_EQ(ShareTuner::share_for(8, 6), 6);
  EXPECT_EQ(ShareTuner::share_for(8, 5), 5);
  EXPECT_EQ(ShareTuner::share_for(4, 6), 3);
  EXPECT_EQ(ShareTuner::share_for(8, 0), 0);
  EXPECT_EQ(ShareTuner::share_for(8, 1), 0);  // one picture: none
  EXPECT_EQ(ShareTuner::share_for(4, 3), 2);  // 1.5 rounds up
  EXPECT_EQ(ShareTuner::share_for(16, 8), 16);
  EXPECT_EQ(ShareTuner::share_for(0, 8), 0);
}

TEST(ShareTuner, StartsAtTheFixedDefaultShare) {
  ShareTuner t;
  EXPECT_EQ(t.best_level(), 6);
  EXPECT_EQ(t.on_batch(Clock::now(), 8), 6);
  EXPECT_EQ(t.epochs(), 0);
}

TEST(ShareTuner, FindsEightWindowsBestShareAndStaysThere) {
  ShareTuner t;
  auto now = Clock::time_point{} + std::chrono::seconds(1);
  run(t, now, kEightWindows, 100);  // 800 pictures: the survey (4 epochs of 112) is over
  EXPECT_EQ(t.best_level(), 5);
  auto used = run(t, now, kEightWindows, 300);
  // Probing the neighbours costs a few epochs; most batches run at the best.
  EXPECT_EQ(t.best_level(), 5);
  EXPECT_GT(used.at(5), 240) << "4: " << used[4] << " 6: " << used[6];
  EXPECT_EQ(t.surveys(), 1);
}

TEST(ShareTuner, NoisyBatchTimesStillFindTheBestShare) {
  // Each batch's time off by up to 10% either way (an epoch of 12 batches: about 1.7%). The
  // survey may then keep the incumbent 6 (5% slower than 5, the margin 3%); the probes still
  // find 5 within a few hundred batches, and after that no noisy probe takes over, nor does
  // the noise look like a changed load.
  for (unsigned seed = 1; seed <= 8; ++seed) {
    ShareTuner t;
    auto now = Clock::time_point{} + std::chrono::seconds(1);
    run(t, now, kEightWindows, 400, 8, 0.10, seed);
    EXPECT_EQ(t.best_level(), 5) << "seed " << seed;
    auto used = run(t, now, kEightWindows, 300, 8, 0.10, seed + 100);
    EXPECT_EQ(t.best_level(), 5) << "seed " << seed;
    EXPECT_GT(used[5], 240) << "seed " << seed << " 4: " << used[4] << " 6: " << used[6];
    EXPECT_EQ(t.surveys(), 1) << "seed " << seed;
  }
}

TEST(ShareTuner, OneWindowKeepsItsPicturesOffTheEngines) {
  ShareTuner t;
  auto now = Clock::time_point{} + std::chrono::seconds(1);
  run(t, now, kOneWindow, 100);
  EXPECT_EQ(t.best_level(), 0);
  // Flat neighbours (1 is the same split as 0 for batches of 8) never win by the margin.
  run(t, now, kOneWindow, 300);
  EXPECT_EQ(t.best_level(), 0);
}

TEST(ShareTuner, FlatLoadKeepsTheDefault) {
  ShareTuner t;
  auto now = Clock::time_point{} + std::chrono::seconds(1);
  Rates flat;
  flat.fill(1000);
  run(t, now, flat, 400);
  EXPECT_EQ(t.best_level(), 6);
}

TEST(ShareTuner, AChangedLoadIsSurveyedAgain) {
  ShareTuner t;
  auto now = Clock::time_point{} + std::chrono::seconds(1);
  run(t, now, kEightWindows, 150);
  ASSERT_EQ(t.best_level(), 5);
  // Seven windows close: the best's rate falls by a third, a new survey finds none is best.
  run(t, now, kOneWindow, 200);
  EXPECT_EQ(t.surveys(), 2);
  EXPECT_EQ(t.best_level(), 0);
}

TEST(ShareTuner, APauseVoidsTheEpoch) {
  // Batches 100 ms apart (an idle client): no epoch is ever timed, the level stays.
  ShareTuner t;
  auto now = Clock::time_point{} + std::chrono::seconds(1);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(t.on_batch(now, 8), 6);
    now += std::chrono::milliseconds(100);
  }
  EXPECT_EQ(t.epochs(), 0);
}

TEST(ShareTuner, ManyThreadsAtOnce) {
  // The paint engine's decode threads call it together (TSan checks the locking).
  ShareTuner t;
  std::vector<std::thread> threads;
  for (int k = 0; k < 4; ++k)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        const int level = t.on_batch(Clock::now(), 8);
        ASSERT_GE(level, 0);
        ASSERT_LE(level, ShareTuner::kLevels);
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_GE(t.best_level(), 0);
}

// PIXPATH_CUDA_HW_SHARE's values (read by the loader per batch): the tuner by default, a typo
// taken as the default and marked, numbers clamped.
TEST(ShareSetting, ParsesTheEnvironmentValue) {
  using Kind = ShareSetting::Kind;
  for (const char* v : {static_cast<const char*>(nullptr), "", "tuned"}) {
    const auto s = parse_share_setting(v);
    EXPECT_EQ(s.kind, Kind::Tuned) << (v ? v : "unset");
    EXPECT_TRUE(s.recognised) << (v ? v : "unset");
  }
  EXPECT_EQ(parse_share_setting("measured").kind, Kind::Measured);
  struct Case {
    const char* value;
    double share;
  } fixed[] = {{"0", 0}, {"0.75", 0.75}, {"0.625", 0.625}, {"1", 1}, {"-0.5", 0}, {"3", 1}};
  for (const Case& c : fixed) {
    const auto s = parse_share_setting(c.value);
    EXPECT_EQ(s.kind, Kind::Fixed) << c.value;
    EXPECT_DOUBLE_EQ(s.fixed, c.share) << c.value;
    EXPECT_TRUE(s.recognised) << c.value;
  }
  for (const char* v : {"tunned", "0.75x", "x0.5", "nan", " "}) {
    const auto s = parse_share_setting(v);
    EXPECT_EQ(s.kind, Kind::Tuned) << v;
    EXPECT_FALSE(s.recognised) << v;
  }
}

}  // namespace
}  // namespace pixpath::cuda
