// Issue 19's routing by measurement, for many pictures at once: how large a share of a batch's
// pictures goes to the hardware JPEG engines (the rest to the own decoder on the SMs), chosen by
// the throughput the current load actually gets at each share. Plain C++ (no CUDA): the loader
// asks it per batch; tests drive it with a made-up clock.
//
// Why throughput and not a cost model: on the H100 (docs/performance.md, "Splitting a batch by
// measured cost", 2026-12-06) the best share depends on the load, not on any cost the module can
// time. Eight 4K windows (batches of 8, 16 draws in flight) paint fastest with 5 of 8 on the
// engines (~1,730 draws/s; 4: ~1,625, 6: ~1,640, 7: ~1,300, none: ~1,380); one 4K window (8 in
// flight, painted in order) fastest with none (~1,250 against ~1,140 at every share from 2 of 8
// to 7 of 8). A model of per-picture costs (the own decoder's time, the engines' pass) could not
// see either optimum: the own decoder's time depends on what the engines' work does to the SMs
// beside it, and one window's draws wait for each other.
//
// How: the share is a level, eighths of a batch's candidates (share_for). The tuner times epochs
// of batches at one level (pictures started per second, from batch start to batch start): first
// a survey of a few levels, then the best one, probing one neighbour now and then and moving
// there when it was faster by a margin; a pause in the load (no batch for max_gap) voids the
// epoch, since an idle client's rate says nothing about the share. Any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "pixpath/core/thread_annotations.h"

namespace pixpath::cuda {

// PIXPATH_CUDA_HW_SHARE's value, parsed: unset, empty or "tuned" (the default) -> the tuner;
// "measured" -> the loader's cost split; a number -> that fixed share, clamped to 0..1 (0 keeps
// every picture on the own decoder). Anything else is taken as the default, `recognised` false,
// so a typo cannot quietly switch the engines off.
struct ShareSetting {
  enum class Kind { Tuned, Measured, Fixed } kind = Kind::Tuned;
  double fixed = 0;  // Kind::Fixed: 0..1
  bool recognised = true;
};

inline ShareSetting parse_share_setting(const char* value) {
  if (!value || !*value || std::string_view(value) == "tuned") return {};
  if (std::string_view(value) == "measured") return {ShareSetting::Kind::Measured};
  char* end = nullptr;
  const double s = std::strtod(value, &end);
  if (end == value || *end != '\0' || !(s == s)) return {ShareSetting::Kind::Tuned, 0, false};
  return {ShareSetting::Kind::Fixed, s < 0 ? 0.0 : (s > 1 ? 1.0 : s)};
}

class ShareTuner {
 public:
  using Clock = std::chrono::steady_clock;
  static constexpr int kLevels = 8;  // level / kLevels of a batch's candidates

  struct Options {
    // Levels timed first, in turn; the first is the one used until the survey has a winner.
    std::vector<int> survey{6, 0, 3, 5};
    int settle_pictures = 16;   // an epoch's first pictures, not timed (batches of the old level in flight)
    int measure_pictures = 96;  // then the pictures it times
    int probe_every = 6;        // after a survey: one neighbour's epoch after this many epochs at the best
    double margin = 0.03;       // a level replaces the best only when this much faster
    double resurvey_change = 0.2;  // the best's rate moved this much from when chosen: survey again
    Clock::duration max_gap = std::chrono::milliseconds(50);
  };

  ShareTuner() : ShareTuner(Options{}) {}
  explicit ShareTuner(Options o) : o_(std::move(o)) {
    if (o_.survey.empty()) o_.survey.push_back(kLevels * 3 / 4);
    MutexLock lock(mu_);
    best_ = o_.survey.front();
    start_survey(best_);
    settle_left_ = o_.settle_pictures;
  }

  // A batch of `pictures` starts now: the level its split uses. An epoch's rate counts the
  // pictures of the batches that started from its first timed batch's start to the next epoch's.
  int on_batch(Clock::time_point now, int pictures) {
    MutexLock lock(mu_);
    if (seen_ && now - last_ > o_.max_gap) restart_epoch();
    seen_ = true;
    last_ = now;
    if (timing_ && timed_ >= o_.measure_pictures) {
      const double secs = std::chrono::duration<double>(now - start_).count();
      if (secs > 0) finish_epoch(double(timed_) / secs);
      restart_epoch();
    }
    if (settle_left_ > 0) {
      settle_left_ -= pictures;
      return level_;
    }
    if (!timing_) timing_ = true, start_ = now, timed_ = 0;
    timed_ += pictures;
    return level_;
  }

  // The level that measured best so far (the survey's first until it has finished).
  int best_level() const {
    MutexLock lock(mu_);
    return best_;
  }
  // Epochs timed and surveys begun so far (tests, info).
  int64_t epochs() const {
    MutexLock lock(mu_);
    return epochs_;
  }
  int64_t surveys() const {
    MutexLock lock(mu_);
    return surveys_;
  }

  // How many of `candidates` pictures go to the engines at `level`: never one alone (the module
  // batches two or more; one picture would take nvJPEG's slow single path).
  static int share_for(int candidates, int level) {
    const int n = (candidates * level + kLevels / 2) / kLevels;
    return n < 2 ? 0 : (n > candidates ? candidates : n);
  }

 private:
  void restart_epoch() PIXPATH_REQUIRES(mu_) {
    settle_left_ = o_.settle_pictures;
    timing_ = false;
  }

  // Times the incumbent first, then the other survey levels.
  void start_survey(int incumbent) PIXPATH_REQUIRES(mu_) {
    plan_.assign(1, incumbent);
    for (int l : o_.survey)
      if (l != incumbent) plan_.push_back(l);
    surveyed_ = 0;
    level_ = incumbent;
  }

  void choose(int level, double rate) PIXPATH_REQUIRES(mu_) {
    best_ = level_ = level;
    best_rate_ = chosen_rate_ = rate;
    since_probe_ = 0;
  }

  // An epoch at level_ ran at `rate` pictures/s: the next level to time.
  void finish_epoch(double rate) PIXPATH_REQUIRES(mu_) {
    ++epochs_;
    if (surveyed_ < plan_.size()) {
      if (surveyed_ == 0 || rate > survey_best_rate_ * (1 + o_.margin))
        survey_best_ = level_, survey_best_rate_ = rate;
      if (++surveyed_ < plan_.size()) {
        level_ = plan_[surveyed_];
        return;
      }
      choose(survey_best_, survey_best_rate_);
      return;
    }
    if (level_ != best_) {  // a probe's epoch
      if (rate > best_rate_ * (1 + o_.margin)) return choose(level_, rate);
      level_ = best_;
      return;
    }
    // At the best: its rate follows the load (an average over its last epochs). When that moved
    // far from the rate it was chosen at, the load changed (windows opened or closed): survey again.
    best_rate_ += (rate - best_rate_) / 4;
    if (best_rate_ > chosen_rate_ * (1 + o_.resurvey_change) || best_rate_ < chosen_rate_ * (1 - o_.resurvey_change)) {
      ++surveys_;
      return start_survey(best_);
    }
    if (++since_probe_ < o_.probe_every) return;
    since_probe_ = 0;
    probe_up_ = !probe_up_;
    int next = best_ + (probe_up_ ? 1 : -1);
    if (next < 0 || next > kLevels) next = best_ + (probe_up_ ? -1 : 1);
    level_ = next;
  }

  Options o_;
  mutable Mutex mu_;
  int level_ PIXPATH_GUARDED_BY(mu_) = 0;
  int best_ PIXPATH_GUARDED_BY(mu_) = 0;
  double best_rate_ PIXPATH_GUARDED_BY(mu_) = 0;
  std::vector<int> plan_ PIXPATH_GUARDED_BY(mu_);  // the survey's levels, in turn
  size_t surveyed_ PIXPATH_GUARDED_BY(mu_) = 0;     // of them timed; == size: surveyed
  int survey_best_ PIXPATH_GUARDED_BY(mu_) = 0;
  double survey_best_rate_ PIXPATH_GUARDED_BY(mu_) = 0;
  double chosen_rate_ PIXPATH_GUARDED_BY(mu_) = 0;
  int64_t surveys_ PIXPATH_GUARDED_BY(mu_) = 1;
  int since_probe_ PIXPATH_GUARDED_BY(mu_) = 0;
  bool probe_up_ PIXPATH_GUARDED_BY(mu_) = false;
  bool seen_ PIXPATH_GUARDED_BY(mu_) = false;
  Clock::time_point last_ PIXPATH_GUARDED_BY(mu_){};
  Clock::time_point start_ PIXPATH_GUARDED_BY(mu_){};
  int settle_left_ PIXPATH_GUARDED_BY(mu_) = 0;  // pictures this epoch still lets pass untimed
  bool timing_ PIXPATH_GUARDED_BY(mu_) = false;
  int timed_ PIXPATH_GUARDED_BY(mu_) = 0;  // pictures timed in this epoch
  int64_t epochs_ PIXPATH_GUARDED_BY(mu_) = 0;
};

}  // namespace pixpath::cuda
