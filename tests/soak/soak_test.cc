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
#include <string>
#include <vector>

#include "net/xpra/testing/xpra_server.h"
#include "pixpath/client/client_pipeline.h"
#include "pixpath/core/counters.h"
#include "pixpath/paint/cpu_backing.h"
#include "soak_support.h"

namespace pixpath::client {
namespace {

using namespace std::chrono_literals;
using xpra::testing::XpraServer;
using xpra::testing::XpraServerOptions;

struct Sample {
  double t = 0;
  double rss = 0;
  int64_t live_storages = 0, live_bytes = 0;
  int64_t queued = 0;
  int64_t draws = 0, acks = 0;
  size_t windows = 0;
  void print() const {
    std::printf("  t=%5.0fs rss=%6.1f MiB live=%4lld storages %7.1f MiB queued=%3lld "
                "draws=%7lld acks=%7lld windows=%zu\n",
                t, rss, (long long)live_storages, double(live_bytes) / 1048576.0, (long long)queued,
                (long long)draws, (long long)acks, windows);
  }
};

class Soak : public soak::ServerVersionTest {};

TEST_P(Soak, BusyRealServer) {
  const int seconds = soak::soak_seconds(2);
  const double warmup = soak::warmup_seconds(seconds);
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

  soak::AckTally tally;
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
    o.observers = {&tally};
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
    const auto samples = soak::run_soak_loop(
        *pipeline, churn, {.seconds = double(seconds), .warmup = warmup, .first_churn = 3, .churn_every = 3},
        [&](double t) {
          auto c = counters();
          auto st = pipeline->stats();
          return Sample{t, soak::rss_mib(), c.live_storages(), c.live_bytes(), st.engine.queued_draws,
                        st.draws_submitted, st.acks, backing.windows().size()};
        });
    const Sample& end = samples.end();
    const auto& warm = samples.warm;
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
                samples.start().rss, warm->t, warm->rss, end.rss, end.rss - warm->rss,
                (long long)samples.start().live_storages, (long long)warm->live_storages,
                (long long)end.live_storages, double(warm->live_bytes) / 1048576.0,
                double(end.live_bytes) / 1048576.0);
    tally.print();

    // Every draw acknowledged exactly once, and the observer saw each draw and each ack.
    EXPECT_GT(st.draws_submitted, 0);
    EXPECT_GT(tally.windows(), 0);
    soak::expect_every_draw_acked_once(st, tally);
    EXPECT_EQ(st.session_draws, uint64_t(st.draws_submitted) + st.session_draws_rejected);
    // No growing queues.
    EXPECT_EQ(st.engine.queued_draws, 0);
    EXPECT_LT(st.engine.max_queued_draws_seen, int64_t(ClientLimits{}.max_queued_draws));
    soak::expect_flat_after_warmup(*warm, end);
    EXPECT_FALSE(server->log_contains("client ping timeout"));
  }
  // Pipeline and backing gone: every storage released.
  const auto after = counters();
  EXPECT_EQ(after.live_storages(), baseline.live_storages());
  EXPECT_EQ(after.live_bytes(), baseline.live_bytes());
  server->stop();
}

INSTANTIATE_TEST_SUITE_P(Versions, Soak, soak::kServerVersions, soak::server_version_name);

}  // namespace
}  // namespace pixpath::client
