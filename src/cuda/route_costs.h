// Issue 19's routing by measurement: what a picture costs on the own decoder (the SMs) and on
// the hardware JPEG engines, learnt from the decodes themselves, and the split of a batch that
// those costs make finish first. Plain C++ (no CUDA): the module measures, the loader splits.
#pragma once

#include <cstdint>

#include "pixpath/core/thread_annotations.h"

namespace pixpath::cuda {

// A running estimate of milliseconds per megapixel, from samples of whole pictures. Mean: an
// exponential average (1/8 per sample) that the first sample starts. Floor: starts at the prior
// and follows lower samples fast (1/2 of the way) and higher ones slowly (1/32), so it tracks
// the cost of the work itself rather than the time a pass queued behind other work. Why the
// Floor keeps its prior: a process's first hardware passes are slow (engine set-up, passes
// started together queueing on the engines); on the H100 (2026-12-06) an estimate that the
// first one replaced stayed at 2-3 ms/Mpixel after ~9 samples, against 0.6 where the engines
// kept being used: it kept them unused, so never measured again. Any thread.
class CostPerMpixel {
 public:
  enum class Track { Mean, Floor };
  CostPerMpixel(double prior_ms_per_mpixel, Track track) : per_mpixel_(prior_ms_per_mpixel), track_(track) {}

  void add(double ms, int64_t pixels) {
    if (pixels <= 0 || !(ms >= 0)) return;
    const double s = ms * 1e6 / double(pixels);
    MutexLock lock(mu_);
    const double w = track_ == Track::Mean ? 0.125 : (s < per_mpixel_ ? 0.5 : 1.0 / 32);
    const bool replace = samples_ == 0 && track_ == Track::Mean;
    per_mpixel_ = replace ? s : per_mpixel_ + w * (s - per_mpixel_);
    ++samples_;
  }
  double per_mpixel() const {
    MutexLock lock(mu_);
    return per_mpixel_;
  }
  int64_t samples() const {
    MutexLock lock(mu_);
    return samples_;
  }

 private:
  mutable Mutex mu_;
  double per_mpixel_ PIXPATH_GUARDED_BY(mu_);
  int64_t samples_ PIXPATH_GUARDED_BY(mu_) = 0;
  const Track track_;
};

// Priors, from the H100 runs of 2026-12-05 (docs/performance.md, issue 19): a 4K q50 4:2:0
// screen picture (8.3 Mpixel) took 0.92-0.96 ms on the own decoder in the paint engine (one per
// call) and ~4.7 ms on one engine (nvJPEG's single hardware decode); the loader's plan for it
// (parse, unstuffing, subsequences) ~0.2 ms of host time.
inline constexpr double kOwnPriorMsPerMpixel = 0.115;
inline constexpr double kEnginePassPriorMsPerMpixel = 0.57;
inline constexpr double kPlanPriorMsPerMpixel = 0.025;

// How many of a batch's `own_pictures` (all on the own decoder's route) go to one hardware
// batch instead; `candidates` of them qualify for the engines. The own decoder takes its
// pictures one after another (own_ms each); the engines take up to `engines` pictures per pass
// (pass_ms), in parallel with the SMs. The answer is the count whose batch finishes first,
// max((own_pictures - n) * own_ms, ceil(n / engines) * pass_ms); on a tie the fewer on the
// engines (which decode damaged data silently, where the own decoder reports it). Filling the
// pass on a tie instead was tried on the H100 (2026-12-06): 7 of 8 on the engines painted
// eight 4K windows at ~1,220 frames/s, against ~1,460 for this rule's 2-3 and ~1,500 for a
// fixed 6. Never 1: the module batches two or more, and one picture alone would take nvJPEG's
// slow single path.
inline int engine_share(int own_pictures, int candidates, int engines, double own_ms, double pass_ms) {
  if (engines <= 0 || candidates < 2 || own_pictures < 2) return 0;
  if (candidates > own_pictures) candidates = own_pictures;
  int best = 0;
  double best_ms = double(own_pictures) * own_ms;
  for (int n = 2; n <= candidates; ++n) {
    const double sm = double(own_pictures - n) * own_ms;
    const double hw = double((n + engines - 1) / engines) * pass_ms;
    const double ms = sm > hw ? sm : hw;
    if (ms < best_ms * (1 - 1e-9)) best = n, best_ms = ms;
  }
  return best;
}

}  // namespace pixpath::cuda
