// Percentiles of collected samples (nearest rank). Not synchronised.
#pragma once

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "pixpath/paint/player.h"

namespace pixpath::paint::internal {

inline LatencySummary summarize(std::vector<int64_t> v) {
  LatencySummary s;
  s.count = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  auto rank = [&](double q) {
    size_t i = static_cast<size_t>(q * static_cast<double>(v.size()) + 0.999999);
    return v[std::min(v.size() - 1, i == 0 ? 0 : i - 1)];
  };
  s.p50 = rank(0.50);
  s.p90 = rank(0.90);
  s.p99 = rank(0.99);
  s.max = v.back();
  s.mean = static_cast<double>(std::accumulate(v.begin(), v.end(), int64_t{0})) /
           static_cast<double>(v.size());
  return s;
}

}  // namespace pixpath::paint::internal
