// Host wall-time helpers of the GPU decode benchmark (cuda_gpu_jpeg_benchmark): percentiles of
// a run, a timed loop with warm-up, a file read, and a GL fence the host polls. Benchmarks only;
// needs a current GL context for fence_poll().
#pragma once

#include <epoxy/gl.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <functional>
#include <iterator>
#include <span>
#include <vector>

#include "pixpath/core/latency_summary.h"

namespace pixpath::cuda::testing {

using BenchClock = std::chrono::steady_clock;

struct Stats {
  double p50 = 0, p10 = 0, p90 = 0;  // ms; -1 when the run failed or was empty
};

// Nearest-rank percentiles (core/latency_summary.h).
inline Stats percentiles(std::vector<double> ms) {
  if (ms.empty()) return {-1, -1, -1};
  std::sort(ms.begin(), ms.end());
  const std::span<const double> sorted(ms);
  return {nearest_rank(sorted, 0.5), nearest_rank(sorted, 0.1), nearest_rank(sorted, 0.9)};
}

// `warmup` untimed calls, then `iters` timed ones; any call returning false fails the run.
inline Stats time_it(int iters, int warmup, const std::function<bool()>& fn) {
  for (int i = 0; i < warmup; ++i)
    if (!fn()) return {-1, -1, -1};
  std::vector<double> ms;
  for (int i = 0; i < iters; ++i) {
    const auto t0 = BenchClock::now();
    if (!fn()) return {-1, -1, -1};
    ms.push_back(std::chrono::duration<double, std::milli>(BenchClock::now() - t0).count());
  }
  return percentiles(std::move(ms));
}

inline std::vector<uint8_t> read_file(const char* path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A GL fence the host polls (no sleeping wait): GL has done everything queued so far.
inline bool fence_poll() {
  GLsync s = glFenceSync(GL_SYNC_GPU_COMMANDS_COMPLETE, 0);
  GLenum r = glClientWaitSync(s, GL_SYNC_FLUSH_COMMANDS_BIT, 0);
  while (r == GL_TIMEOUT_EXPIRED) r = glClientWaitSync(s, 0, 0);
  glDeleteSync(s);
  return r == GL_ALREADY_SIGNALED || r == GL_CONDITION_SATISFIED;
}

}  // namespace pixpath::cuda::testing
