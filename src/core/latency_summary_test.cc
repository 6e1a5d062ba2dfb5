#include "pixpath/core/latency_summary.h"

#include <gtest/gtest.h>

#include <numeric>
#include <random>

namespace pixpath {
namespace {

TEST(LatencySummary, EmptyIsAllZero) {
  LatencySummary s = summarize_latency({});
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.p50, 0);
  EXPECT_EQ(s.p99, 0);
  EXPECT_EQ(s.max, 0);
  EXPECT_EQ(s.mean, 0);
}

TEST(LatencySummary, OneSampleIsEveryPercentile) {
  LatencySummary s = summarize_latency({42});
  EXPECT_EQ(s.count, 1);
  EXPECT_EQ(s.p50, 42);
  EXPECT_EQ(s.p90, 42);
  EXPECT_EQ(s.p99, 42);
  EXPECT_EQ(s.max, 42);
  EXPECT_EQ(s.mean, 42);
}

TEST(LatencySummary, NearestRankOfOneToHundred) {
  // 1..100 shuffled: the q-percentile is exactly 100 q (no interpolation, no off-by-one).
  std::vector<int64_t> v(100);
  std::iota(v.begin(), v.end(), 1);
  std::shuffle(v.begin(), v.end(), std::mt19937(7));
  LatencySummary s = summarize_latency(v);
  EXPECT_EQ(s.count, 100);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p99, 99);
  EXPECT_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
}

TEST(LatencySummary, SmallCountsRoundTheRankUp) {
  // Ten samples: p50 is the 5th, p90 the 9th, p99 the 10th (ceil(9.9)).
  LatencySummary s = summarize_latency({10, 9, 8, 7, 6, 5, 4, 3, 2, 1});
  EXPECT_EQ(s.p50, 5);
  EXPECT_EQ(s.p90, 9);
  EXPECT_EQ(s.p99, 10);
  // Three samples: p50 is the 2nd (ceil(1.5)).
  EXPECT_EQ(summarize_latency({300, 100, 200}).p50, 200);
}

TEST(NearestRank, EndsAndDoubles) {
  const std::vector<double> v = {0.5, 1.5, 2.5, 3.5};
  const std::span<const double> s(v);
  EXPECT_EQ(nearest_rank(s, 0.0), 0.5);
  EXPECT_EQ(nearest_rank(s, 0.25), 0.5);
  EXPECT_EQ(nearest_rank(s, 0.26), 1.5);
  EXPECT_EQ(nearest_rank(s, 1.0), 3.5);
  EXPECT_EQ(nearest_rank(s, 2.0), 3.5);   // clamped
  EXPECT_EQ(nearest_rank(s, -1.0), 0.5);  // clamped
}

}  // namespace
}  // namespace pixpath
