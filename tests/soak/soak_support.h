// What the soak tests share: their run time (PIXPATH_SOAK_SECONDS, PIXPATH_SOAK_SHORT_SECONDS),
// resident memory, X clients started on the server's display and killed by pid (never by
// name), the test fixture per server version, the observer that tallies draws and acks, the
// run loop (churn and samples over time) and the checks every soak makes at its end.
#pragma once

#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "net/xpra/testing/xpra_server.h"
#include "pixpath/client/client_observer.h"
#include "pixpath/client/client_pipeline.h"

// Resident-memory growth allowed after warm-up (tests/soak/CMakeLists.txt sets it per build).
#ifndef PIXPATH_SOAK_RSS_BOUND_MIB
#define PIXPATH_SOAK_RSS_BOUND_MIB 20
#endif

extern char** environ;

namespace pixpath::soak {

// Seconds for one case. PIXPATH_SOAK_SECONDS (the user's, per case) wins over
// PIXPATH_SOAK_SHORT_SECONDS (ctest's short form: the total for all `cases`, split evenly).
inline int soak_seconds(int cases) {
  if (const char* s = std::getenv("PIXPATH_SOAK_SECONDS")) return std::max(5, std::atoi(s));
  if (const char* s = std::getenv("PIXPATH_SOAK_SHORT_SECONDS")) return std::max(5, std::atoi(s) / cases);
  return 600;
}

// When the flat-memory checks take their baseline. Resident memory climbs while windows reach
// their sizes and each thread's malloc arena fills, then levels off: against xpra 3.1.3 it
// reached its plateau (~40 MiB) after about 20 s and stayed within 2 MiB of it for 150 s
// (2026-12-03). A quarter of a short run (9 s of 37) sampled the climb, not the plateau, and CI
// once read that climb as growth; short runs therefore wait half their time, long runs a
// quarter (at most 60 s).
inline double warmup_seconds(int seconds) {
  return seconds < 240 ? seconds / 2.0 : std::min(60.0, seconds / 4.0);
}

inline double rss_mib() {
  std::ifstream f("/proc/self/statm");
  long size = 0, resident = 0;
  f >> size >> resident;
  return double(resident) * double(sysconf(_SC_PAGESIZE)) / (1024.0 * 1024.0);
}

// tick() starts the next client (argv from make_argv(n), n = 0, 1, ...), first killing the
// oldest when `max_alive` run; the destructor kills the rest.
class ProcessChurn {
 public:
  ProcessChurn(int display, std::function<std::vector<std::string>(int)> make_argv, size_t max_alive)
      : display_(":" + std::to_string(display)), make_argv_(std::move(make_argv)), max_alive_(max_alive) {}
  ~ProcessChurn() {
    while (!alive_.empty()) kill_oldest();
  }
  ProcessChurn(const ProcessChurn&) = delete;
  ProcessChurn& operator=(const ProcessChurn&) = delete;

  void tick() {
    if (alive_.size() >= max_alive_) kill_oldest();
    std::vector<std::string> args = make_argv_(n_++);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_s;
    for (char** e = environ; *e; ++e) {
      if (std::string_view(*e).substr(0, 8) != "DISPLAY=") env_s.emplace_back(*e);
    }
    env_s.push_back("DISPLAY=" + display_);
    std::vector<char*> envp;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    pid_t pid = -1;
    if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), envp.data()) == 0) {
      alive_.push_back(pid);
      started_++;
    }
  }
  int started() const { return started_; }

 private:
  void kill_oldest() {
    pid_t pid = alive_.front();
    alive_.pop_front();
    ::kill(pid, SIGTERM);
    int status = 0;
    for (int i = 0; i < 50 && ::waitpid(pid, &status, WNOHANG) == 0; ++i) usleep(20000);
    if (::waitpid(pid, &status, WNOHANG) == 0) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
    }
  }
  std::string display_;
  std::function<std::vector<std::string>(int)> make_argv_;
  size_t max_alive_;
  std::deque<pid_t> alive_;
  int n_ = 0, started_ = 0;
};

// A test per server version (xpra 3.1.3 and 6.5.5); a version that is not installed is skipped
// with the reason. Instantiate with kServerVersions and server_version_name.
class ServerVersionTest : public ::testing::TestWithParam<xpra::testing::XpraVersion> {
 protected:
  void SetUp() override {
    if (auto a = xpra::testing::xpra_available(GetParam()); !a.ok()) GTEST_SKIP() << a.error().message();
  }
};

inline const auto kServerVersions =
    ::testing::Values(xpra::testing::XpraVersion::V3_1, xpra::testing::XpraVersion::V6);

inline std::string server_version_name(
    const ::testing::TestParamInfo<xpra::testing::XpraVersion>& info) {
  return info.param == xpra::testing::XpraVersion::V6 ? "xpra6" : "xpra31";
}

// Watches the session as `pixpath attach`'s summary does: counts every draw, window and ack,
// and per coding the acks that painted, failed (the first 20 messages kept) or skipped.
class AckTally final : public client::ClientObserver {
 public:
  void on_draw(const DrawPacket&) override {
    std::lock_guard lock(mu_);
    draws_++;
  }
  void on_window_new(const xpra::WindowInfo&) override {
    std::lock_guard lock(mu_);
    windows_++;
  }
  void on_ack(const DamageAck& a, const paint::PaintReport& r, client::AckDelivery) override {
    std::lock_guard lock(mu_);
    acks_++;
    codings_[r.coding][a.decode_time_us > 0 ? 0 : a.decode_time_us < 0 ? 1 : 2]++;
    if (a.decode_time_us < 0 && errors_.size() < 20) errors_.push_back(r.coding + ": " + a.message);
  }

  int64_t draws() const {
    std::lock_guard lock(mu_);
    return draws_;
  }
  int64_t acks() const {
    std::lock_guard lock(mu_);
    return acks_;
  }
  int64_t windows() const {
    std::lock_guard lock(mu_);
    return windows_;
  }
  // Acks that painted a draw of `coding`.
  int64_t painted(const std::string& coding) const {
    std::lock_guard lock(mu_);
    auto it = codings_.find(coding);
    return it == codings_.end() ? 0 : it->second[0];
  }
  // One line per coding, then the errors kept.
  void print() const {
    std::lock_guard lock(mu_);
    for (const auto& [coding, c] : codings_)
      std::printf("  coding %-6s painted %7lld errors %4lld skipped %4lld\n", coding.c_str(),
                  (long long)c[0], (long long)c[1], (long long)c[2]);
    for (const auto& e : errors_) std::printf("  error: %s\n", e.c_str());
  }

 private:
  mutable std::mutex mu_;
  std::map<std::string, std::array<int64_t, 3>> codings_;  // painted, error, skipped
  std::vector<std::string> errors_;
  int64_t draws_ = 0, acks_ = 0, windows_ = 0;
};

// When the run loop churns and samples (seconds from the start).
struct LoopTiming {
  double seconds = 0;
  double warmup = 0;       // one sample when this much has passed
  double first_churn = 0;  // the first churn.tick(), then one every churn_every
  double churn_every = 0;
  double sample_every = 10;
};

// The samples of one run: the first at the start, `warm` at the end of warm-up, the last at
// the end.
template <class S>
struct Samples {
  std::vector<S> all;
  std::optional<S> warm;
  const S& start() const { return all.front(); }
  const S& end() const { return all.back(); }
};

// Runs `pipeline` in 200 ms steps for timing.seconds or until its session closes, ticking
// `churn` on schedule. take(t) makes a sample t seconds from the start (a struct with rss,
// live_bytes and a print() method), printed as it is taken: at the start, at the end of
// warm-up, every timing.sample_every seconds and at the end.
template <class Take>
auto run_soak_loop(client::ClientPipeline& pipeline, ProcessChurn& churn, const LoopTiming& timing,
                   Take take) -> Samples<std::invoke_result_t<Take&, double>> {
  using namespace std::chrono_literals;
  using Clock = std::chrono::steady_clock;
  Samples<std::invoke_result_t<Take&, double>> out;
  const auto t0 = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  auto sample = [&] {
    out.all.push_back(take(elapsed()));
    out.all.back().print();
    std::fflush(stdout);
  };
  sample();
  double next_sample = timing.sample_every, next_churn = timing.first_churn;
  while (elapsed() < timing.seconds && !pipeline.closed()) {
    pipeline.run_for(200ms);
    const double t = elapsed();
    if (t >= next_churn) {
      churn.tick();
      next_churn += timing.churn_every;
    }
    if (!out.warm && t >= timing.warmup) {
      sample();
      out.warm = out.all.back();
    }
    if (t >= next_sample) {
      sample();
      next_sample += timing.sample_every;
    }
  }
  sample();
  return out;
}

// After stop(): every draw acknowledged exactly once, none failed or refused, and the observer
// saw each draw and each ack.
inline void expect_every_draw_acked_once(const client::ClientPipelineStats& st, const AckTally& tally) {
  EXPECT_EQ(tally.draws(), st.draws_submitted);
  EXPECT_EQ(tally.acks(), st.acks);
  // Every ack reached the server or was made after it hung up; none failed on an open session.
  EXPECT_EQ(st.acks_send_failed, 0);
  EXPECT_EQ(st.acks_sent + st.acks_after_close, st.acks);
  EXPECT_EQ(st.acks, st.draws_submitted);
  EXPECT_EQ(st.acks_unmatched, 0);
  EXPECT_EQ(st.outstanding, 0);
  EXPECT_EQ(st.acks_error, 0);
  EXPECT_EQ(st.session_draws_rejected, 0u);
  EXPECT_EQ(st.engine.refused_queue_full, 0);
}

// Flat memory after warm-up: resident memory (PIXPATH_SOAK_RSS_BOUND_MIB) and counters()' live
// bytes (64 MiB).
template <class S>
void expect_flat_after_warmup(const S& warm, const S& end) {
  EXPECT_LT(end.rss - warm.rss, double(PIXPATH_SOAK_RSS_BOUND_MIB)) << "resident memory grew after warm-up";
  EXPECT_LT(end.live_bytes - warm.live_bytes, int64_t{64} << 20);
}

}  // namespace pixpath::soak
