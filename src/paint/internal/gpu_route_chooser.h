// Routing by measurement (issue 19): whether a GPU-codable jpeg / jpega draw is decoded on the
// CPU or on the GPU, by what each route took lately for draws of about its size.
//
// Why: a fixed size threshold (gpu_min_pixels) was measured once, on one machine, with one load.
// Which route paints a middle-sized picture sooner depends on the CPU's cores, the GPU, and what
// both are doing now: eight windows of 4K frames keep the GPU thread's batches long, so a
// 512x512 draw waits there behind them while the CPU workers are free; a busy CPU does the
// opposite.
//
// How: draws from `floor` up to `ceiling` pixels fall into size classes (powers of two). Each
// class keeps a running estimate per route of received -> pixels in the window (the ack's
// total_us: for the GPU the fence, for the CPU the paint), which includes the wait in that
// route's queue, so load counts. A class takes the route with the lower estimate once both have
// min_samples; until then the threshold's choice (the prior). Either way one draw in
// explore_every takes the other route (one in learn_every while it has too few samples; one in
// explore_every times the whole ratio of the two estimates, at most 8x, when the other route is
// that much slower), so its estimate follows a changing load. Draws outside the band, and every draw when `measured` is
// off, follow the threshold alone and are not measured: tiny ones are always faster on the CPU,
// screen-sized ones always on the GPU, and exploring those would only cost latency.
// Threading: choose() from any thread (submit), record() from the UI thread (ack); one mutex.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "pixpath/core/thread_annotations.h"

namespace pixpath::paint::internal {

class GpuRouteChooser {
 public:
  struct Options {
    int64_t threshold = 256 * 256;  // the prior: the GPU from this many pixels (gpu_min_pixels)
    bool measured = true;           // false: the threshold alone
    int64_t floor = 64 * 64;        // measured from here (a power of two) ...
    int64_t ceiling = int64_t{1} << 20;  // ... up to here (floor times a power of two, at most 2^kMaxClasses)
    int explore_every = 32;
    int learn_every = 8;
    int min_samples = 4;
    double weight = 0.25;           // a new sample's weight in the running estimate
    double explored_weight = 0.5;   // an explored draw's: rare, so each counts more
  };
  // One draw's route. size_class -1: not measured (outside the band, or measurement off).
  struct Choice {
    bool gpu = false;
    int size_class = -1;
    bool explored = false;  // took the route its class does not prefer, to measure it
  };
  // One size class as the chooser sees it now (stats, tests).
  struct ClassView {
    int64_t from_pixels = 0, to_pixels = 0;
    int64_t cpu_us = 0, gpu_us = 0;  // running estimates (0: no sample yet)
    int64_t cpu_samples = 0, gpu_samples = 0;
    bool prefers_gpu = false;  // what a draw of the class's first size takes now (exploring aside)
  };
  static constexpr int kMaxClasses = 16;

  explicit GpuRouteChooser(Options o);
  Choice choose(int64_t pixels) PIXPATH_EXCLUDES(mu_);
  // A measured draw acked as painted: received -> pixels in the window.
  void record(const Choice& c, int64_t total_us) PIXPATH_EXCLUDES(mu_);
  bool measured() const { return o_.measured; }
  int64_t explored() const PIXPATH_EXCLUDES(mu_);
  std::vector<ClassView> table() const PIXPATH_EXCLUDES(mu_);
  // One line: each class's estimates and choice ("64x64+ cpu 0.21 ms (12) gpu 0.48 ms (5) -> cpu; ...").
  std::string describe() const PIXPATH_EXCLUDES(mu_);

 private:
  struct Estimate {
    double us = 0;
    int64_t samples = 0;
  };
  struct SizeClass {
    Estimate cpu, gpu;
    int64_t draws = 0;
  };
  // Under mu_: the class's preferred route for a draw of `pixels`.
  bool prefers_gpu(const SizeClass& c, int64_t pixels) const PIXPATH_REQUIRES(mu_);

  const Options o_;
  const int classes_;
  mutable Mutex mu_;
  std::array<SizeClass, kMaxClasses> sizes_ PIXPATH_GUARDED_BY(mu_){};
  int64_t explored_ PIXPATH_GUARDED_BY(mu_) = 0;
};

}  // namespace pixpath::paint::internal
