#include "pixpath/core/latency_summary.h"

#include <numeric>

namespace pixpath {

LatencySummary summarize_latency(std::vector<int64_t> v) {
  LatencySummary s;
  s.count = static_cast<int64_t>(v.size());
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  const std::span<const int64_t> sorted(v);
  s.p50 = nearest_rank(sorted, 0.50);
  s.p90 = nearest_rank(sorted, 0.90);
  s.p99 = nearest_rank(sorted, 0.99);
  s.max = v.back();
  s.mean = static_cast<double>(std::accumulate(v.begin(), v.end(), int64_t{0})) /
           static_cast<double>(v.size());
  return s;
}

}  // namespace pixpath
