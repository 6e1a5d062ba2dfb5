// Endurance: a ClientPipeline (Session -> PaintEngine -> CpuBacking, as `pixpath attach`)
// against a REAL xpra server running busy applications — glxgears, an xterm listing /usr
// without end, and small windows (xclock, xmessage) opened and killed every few seconds —
// for PIXPATH_SOAK_SECONDS (default 600). Checks, and prints for docs/performance.md:
//   - every draw acknowledged exactly once (engine acks == draws submitted, none unmatched,
//     none outstanding after stop) and no decode errors; an observer (as the attach summary
//     is one) saw every draw and every ack; no ack failed on an open session; the stop
//     sequence left the engine idle;
//   - resident memory (/proc/self/statm) grows less than 20 MiB from the end of warm-up
//     (60 s, or a quarter of a shorter run) to the end (80 MiB under TSan, whose shadow
//     memory grows with the addresses touched);
//   - counters() live bytes grow less than 64 MiB over the same span, and live storages come
//     back to where they started once the pipeline and the backing are gone;
//   - the engine queue does not grow: empty once drained, never at its limit.
// It runs against both server versions (xpra 3.1.3 and 6.5.5, a parametrized test; a version
// that is not installed is skipped with the reason).
// ctest runs a short form (label soak): a budget of 75 s (40 s under TSan) split between the
// two versions, PIXPATH_SOAK_SHORT_SECONDS being the total. The full run gives each version
// PIXPATH_SOAK_SECONDS:
//   PIXPATH_SOAK_SECONDS=600 ctest --preset default -L soak   (or run the binary)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>

#include "net/xpra/testing/xpra_server.h"
#include "pixpath/client/client_pipeline.h"
#include "pixpath/core/counters.h"
#include "pixpath/paint/cpu_backing.h"
#include "soak_support.h"

#ifndef PIXPATH_SOAK_RSS_BOUND_MIB
#define PIXPATH_SOAK_RSS_BOUND_MIB 20
#endif

namespace pixpath::client {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using xpra::testing::XpraServer;
using xpra::testing::XpraServerOptions;
using xpra::testing::XpraVersion;

struct Sample {
  double t = 0;
  double rss = 0;
  int64_t live_storages = 0, live_bytes = 0;
  int64_t queued = 0;
  int64_t draws = 0, acks = 0;
  size_t windows = 0;
};

class Soak : public ::testing::TestWithParam<XpraVersion> {
 protected:
  void SetUp() override {
    if (auto a = xpra::testing::xpra_available(GetParam()); !a.ok()) GTEST_SKIP() << a.error().message();
  }
};

TEST_P(Soak, BusyRealServer) {
  const int seconds = soak::soak_seconds(2);
  const double warmup = std::min(60.0, seconds / 4.0);
  std::printf("soak: %d s against a real xpra %s server (warm-up %.0f s)\n", seconds,
              xpra::testing::xpra_version_name(GetParam()), warmup);
  const auto baseline = counters();

  XpraServerOptions so;
  so.version = GetParam();
  so.start = "xterm -geometry 100x40 -e sh -c 'while :; do ls -lR /usr; done'";
  so.extra_args.push_back("--start=glxgears -geometry 640x480");
  so.extra_args.push_back("--pings=5");
  auto server_r = XpraServer::start(so);
  ASSERT_TRUE(server_r.ok()) << server_r.error().message();
  auto server = std::move(server_r).value();

  std::mutex mu;
  std::map<std::string, std::array<int64_t, 3>> codings;  // painted, error, skipped
  std::vector<std::string> errors;
  int64_t observed_draws = 0, observed_acks = 0, windows_seen = 0;
  // Watches the session as `pixpath attach`'s summary does (a ClientObserver).
  struct CodingTally final : ClientObserver {
    std::function<void(const DamageAck&, const paint::PaintReport&)> ack;
    std::function<void()> draw, window;
    void on_draw(const DrawPacket&) override { draw(); }
    void on_window_new(const xpra::WindowInfo&) override { window(); }
    void on_ack(const DamageAck& a, const paint::PaintReport& r, AckDelivery) override { ack(a, r); }
  } coding_tally;
  coding_tally.ack = [&](const DamageAck& a, const paint::PaintReport& r) {
    std::lock_guard lock(mu);
    observed_acks++;
    auto& c = codings[r.coding];
    c[a.decode_time_us > 0 ? 0 : a.decode_time_us < 0 ? 1 : 2]++;
    if (a.decode_time_us < 0 && errors.size() < 20) errors.push_back(r.coding + ": " + a.message);
  };
  coding_tally.draw = [&] {
    std::lock_guard lock(mu);
    observed_draws++;
  };
  coding_tally.window = [&] {
    std::lock_guard lock(mu);
    windows_seen++;
  };
  {
    paint::CpuBacking backing;
    ClientPipelineOptions o;
    o.session.url = server->url();
    o.session.encodings = {"jpeg", "png", "rgb24", "rgb32", "webp", "png/L", "png/P", "scroll"};
    o.session.log = [](std::string_view l) {
      std::fprintf(stderr, "  [client] %.*s\n", int(l.size()), l.data());
    };
    // Medium quality and scrolling: the server then mixes lossless rgb24/png refreshes with
    // jpeg/webp for glxgears and scroll packets for the xterm (3.1: "encoding.scrolling"; 6.x
    // scrolls whenever "scroll" is a common coding).
    o.session.quality = 50;
    o.session.extra_caps = xpra::Value(xpra::Value::Dict{});
    o.session.extra_caps.set("encoding.scrolling", true);
    o.engine.decode_threads = 2;
    o.observers = {&coding_tally};
    auto p_r = ClientPipeline::start(backing, std::move(o));
    ASSERT_TRUE(p_r.ok()) << p_r.error().message();
    auto pipeline = std::move(p_r).value();
    ASSERT_TRUE(pipeline->wait_until_ready(30s).ok());

    // Small windows (xclock, xmessage) opened and killed: at most three at a time.
    soak::ProcessChurn churn(server->display(), [](int n) {
      return n % 2 == 0 ? std::vector<std::string>{"xclock", "-update", "1"}
                        : std::vector<std::string>{"xmessage", "-timeout", "30",
                                                   "pixpath soak " + std::to_string(n + 1)};
    }, 3);
    std::vector<Sample> samples;
    const auto t0 = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    auto sample = [&] {
      auto c = counters();
      auto st = pipeline->stats();
      samples.push_back(Sample{elapsed(), soak::rss_mib(), c.live_storages(), c.live_bytes(),
                               st.engine.queued_draws, st.draws_submitted, st.acks,
                               backing.windows().size()});
      const Sample& s = samples.back();
      std::printf("  t=%5.0fs rss=%6.1f MiB live=%4lld storages %7.1f MiB queued=%3lld "
                  "draws=%7lld acks=%7lld windows=%zu\n",
                  s.t, s.rss, (long long)s.live_storages, double(s.live_bytes) / 1048576.0,
                  (long long)s.queued, (long long)s.draws, (long long)s.acks, s.windows);
      std::fflush(stdout);
    };
    sample();
    double next_sample = 10, next_churn = 3;
    std::optional<Sample> warm;
    while (elapsed() < seconds && !pipeline->closed()) {
      pipeline->run_for(200ms);
      const double t = elapsed();
      if (t >= next_churn) {
        churn.tick();
        next_churn += 3;
      }
      if (!warm && t >= warmup) {
        sample();
        warm = samples.back();
      }
      if (t >= next_sample) {
        sample();
        next_sample += 10;
      }
    }
    sample();
    const Sample end = samples.back();
    ASSERT_FALSE(pipeline->closed()) << "the session ended early: " << pipeline->end()->message();
    ASSERT_TRUE(warm.has_value());

    EXPECT_TRUE(pipeline->stop("soak done")) << "the engine was still busy after the goodbye";
    const auto st = pipeline->stats();
    std::printf("soak result (xpra %s): %d s, draws %lld, acks %lld (painted %lld, errors %lld, skipped "
                "%lld), unmatched %lld, outstanding %lld, session draws %llu (rejected %llu), "
                "session acks sent %llu, windows started %d, queue max %lld, refused (queue "
                "full) %lld\n",
                xpra::testing::xpra_version_name(GetParam()), seconds, (long long)st.draws_submitted,
                (long long)st.acks,
                (long long)st.acks_painted, (long long)st.acks_error, (long long)st.acks_skipped,
                (long long)st.acks_unmatched, (long long)st.outstanding,
                (unsigned long long)st.session_draws, (unsigned long long)st.session_draws_rejected,
                (unsigned long long)st.session_acks_sent, churn.started(),
                (long long)st.engine.max_queued_draws_seen, (long long)st.engine.refused_queue_full);
    std::printf("rss: start %.1f MiB, after warm-up (%.0f s) %.1f MiB, end %.1f MiB (growth "
                "after warm-up %.1f MiB); live storages start %lld, warm-up %lld, end %lld; "
                "live bytes warm-up %.1f MiB, end %.1f MiB\n",
                samples.front().rss, warm->t, warm->rss, end.rss, end.rss - warm->rss,
                (long long)samples.front().live_storages, (long long)warm->live_storages,
                (long long)end.live_storages, double(warm->live_bytes) / 1048576.0,
                double(end.live_bytes) / 1048576.0);
    {
      std::lock_guard lock(mu);
      for (const auto& [coding, c] : codings)
        std::printf("  coding %-6s painted %7lld errors %4lld skipped %4lld\n", coding.c_str(),
                    (long long)c[0], (long long)c[1], (long long)c[2]);
      for (const auto& e : errors) std::printf("  error: %s\n", e.c_str());
    }

    // Every draw acknowledged exactly once, and the observer saw each draw and each ack.
    EXPECT_GT(st.draws_submitted, 0);
    {
      std::lock_guard lock(mu);
      EXPECT_EQ(observed_draws, st.draws_submitted);
      EXPECT_EQ(observed_acks, st.acks);
      EXPECT_GT(windows_seen, 0);
    }
    // Every ack reached the server or was made after it hung up; none failed on an open session.
    EXPECT_EQ(st.acks_send_failed, 0);
    EXPECT_EQ(st.acks_sent + st.acks_after_close, st.acks);
    EXPECT_EQ(st.acks, st.draws_submitted);
    EXPECT_EQ(st.acks_unmatched, 0);
    EXPECT_EQ(st.outstanding, 0);
    EXPECT_EQ(st.acks_error, 0);
    EXPECT_EQ(st.session_draws, uint64_t(st.draws_submitted) + st.session_draws_rejected);
    EXPECT_EQ(st.session_draws_rejected, 0u);
    // No growing queues.
    EXPECT_EQ(st.engine.queued_draws, 0);
    EXPECT_EQ(st.engine.refused_queue_full, 0);
    EXPECT_LT(st.engine.max_queued_draws_seen, int64_t(ClientLimits{}.max_queued_draws));
    // Flat memory after warm-up.
    EXPECT_LT(end.rss - warm->rss, double(PIXPATH_SOAK_RSS_BOUND_MIB))
        << "resident memory grew after warm-up";
    EXPECT_LT(end.live_bytes - warm->live_bytes, int64_t{64} << 20);
    EXPECT_FALSE(server->log_contains("client ping timeout"));
  }
  // Pipeline and backing gone: every storage released.
  const auto after = counters();
  EXPECT_EQ(after.live_storages(), baseline.live_storages());
  EXPECT_EQ(after.live_bytes(), baseline.live_bytes());
  server->stop();
}

INSTANTIATE_TEST_SUITE_P(Versions, Soak, ::testing::Values(XpraVersion::V3_1, XpraVersion::V6),
                         [](const auto& param_info) {
                           return param_info.param == XpraVersion::V6 ? std::string("xpra6")
                                                                : std::string("xpra31");
                         });

}  // namespace
}  // namespace pixpath::client
