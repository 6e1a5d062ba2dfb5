// Percentiles of collected samples (latencies in microseconds, or any other measure): the one
// implementation behind the player's, the viewer's and the benchmarks' summaries.
//
// Nearest rank: the q-percentile is the smallest sample such that at least a fraction q of all
// samples are less than or equal to it (so p100 is the maximum and no sample is invented by
// interpolation). Threading: stateless functions; call from any thread.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

namespace pixpath {

struct LatencySummary {
  int64_t count = 0;
  int64_t p50 = 0, p90 = 0, p99 = 0, max = 0;  // 0 when count is 0
  double mean = 0;
};

// The nearest-rank q-percentile (q in [0, 1], clamped) of samples sorted ascending.
// Precondition: `sorted` is not empty and sorted ascending.
template <typename T>
T nearest_rank(std::span<const T> sorted, double q) {
  q = std::clamp(q, 0.0, 1.0);
  // ceil(q * n), with a little slack so that 0.99 * 100 is rank 99, not 100.
  const double rank = std::ceil(q * static_cast<double>(sorted.size()) - 1e-9);
  const size_t i = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return sorted[std::min(sorted.size() - 1, i)];
}

// Sorts `samples` (taken by value) and summarises them.
LatencySummary summarize_latency(std::vector<int64_t> samples);

}  // namespace pixpath
