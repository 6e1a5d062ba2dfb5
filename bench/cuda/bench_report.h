// What the video benchmarks print (gpu_video_benchmark, nvdec_probe): nearest-rank p50/p90 of a
// run in ms, and the JSON items of the closing "json: [...]" line. Benchmarks only, one thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "pixpath/core/latency_summary.h"

namespace pixpath::bench {

struct Pct {
  double p50 = -1, p90 = -1;  // -1: no samples
  size_t n = 0;
};

inline Pct pct(std::vector<double> v) {
  Pct p;
  p.n = v.size();
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.p50 = nearest_rank(std::span<const double>(v), 0.5);
  p.p90 = nearest_rank(std::span<const double>(v), 0.9);
  return p;
}

// The items of the closing JSON line, comma-separated as they come.
class JsonItems {
 public:
  void add(const std::string& item) { text_ += (text_.empty() ? "" : ",") + item; }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace pixpath::bench
