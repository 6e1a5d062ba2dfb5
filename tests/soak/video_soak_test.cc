// Video endurance: a ClientPipeline (Session -> PaintEngine -> CpuBacking, as `pixpath
// attach`) against a REAL xpra server whose windows all go out as one video coding, forced
// (XPRA_ENCODING_STRICT_MODE=1 and the client's preferred coding): glxgears at 640x480 and an
// xterm listing /usr without end (fast-changing content), plus a second xterm listing /usr
// opened and killed every 6 seconds (a video stream made, dropped with its window, made again).
// One server per version (3.1.3, 6.5.5), and on it one session per coding (h264, then vp8;
// PIXPATH_VIDEO_SOAK_CODINGS=h264,vp9 names others). Checks per session, and prints for
// docs/performance.md:
//   - draws arrived and were painted in the forced coding; every draw acknowledged exactly
//     once (acks == draws submitted, none unmatched, none outstanding after stop, no decode
//     errors); the observer saw every draw and ack;
//   - resident memory (/proc/self/statm) grows less than 20 MiB from the end of warm-up (60 s,
//     or a quarter of a shorter run) to the end (80 MiB under TSan);
//   - counters() live bytes grow less than 64 MiB over that span; live video frame buffers
//     (codecs::video_buffer_counters()) stay bounded over it; once the pipeline and the
//     backing are gone, live storages, live bytes and live video buffers are back to where
//     they started (every decoder frame released exactly once).
// ctest runs the short form (labels integration, threaded, soak): a total of 28 s (20 s under
// TSan) split over the four sessions, PIXPATH_SOAK_SHORT_SECONDS being the total. The full run
// gives each session PIXPATH_SOAK_SECONDS (per version and coding):
//   PIXPATH_SOAK_SECONDS=600 ctest --preset default -R video_soak --timeout 3600
//   PIXPATH_SOAK_SECONDS=600 PIXPATH_VIDEO_SOAK_CODINGS=h264
//     build/default/tests/soak/video_soak_test --gtest_filter='*xpra31'   (one line)
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "net/xpra/testing/xpra_server.h"
#include "pixpath/client/client_pipeline.h"
#include "pixpath/codecs/video_decoder.h"
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

// Live video frame buffers may differ this much between the end of warm-up and the end: the
// decoders' pools (reference frames, frames a paint still holds) of at most three windows.
constexpr int64_t kVideoBufferSlack = 96;

struct VSample {
  double t = 0, rss = 0;
  int64_t live_storages = 0, live_bytes = 0, video_live = 0, draws = 0, acks = 0;
};

// The codings to soak: PIXPATH_VIDEO_SOAK_CODINGS (comma-separated), else h264 and vp8.
std::vector<std::string> soak_codings() {
  std::vector<std::string> out;
  const char* e = std::getenv("PIXPATH_VIDEO_SOAK_CODINGS");
  std::string list = e && *e ? e : "h264,vp8";
  for (size_t at = 0; at <= list.size();) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    if (end > at) out.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  return out;
}

// As tests/video_integration_test.cc: 6.5.5 sends vp8 (4:2:0 only) below quality 100 only.
int quality(XpraVersion v, const std::string& coding) { return v == XpraVersion::V6 && coding == "vp8" ? 80 : 100; }

// One pipeline on `server` asking for `coding` for `seconds`, with its checks.
void soak_coding(XpraServer& server, XpraVersion version, const std::string& coding, int seconds) {
  const double warmup = std::min(60.0, seconds / 4.0);
  std::printf("video soak: %d s of %s against a real xpra %s server (warm-up %.0f s)\n", seconds,
              coding.c_str(), xpra::testing::xpra_version_name(version), warmup);
  const auto baseline = counters();
  const auto video_baseline = codecs::video_buffer_counters();
  std::mutex mu;
  std::map<std::string, std::array<int64_t, 3>> codings;  // painted, error, skipped
  std::vector<std::string> errors;
  int64_t observed_draws = 0, observed_acks = 0;
  struct Tally final : ClientObserver {
    std::function<void(const DamageAck&, const paint::PaintReport&)> ack;
    std::function<void()> draw;
    void on_draw(const DrawPacket&) override { draw(); }
    void on_ack(const DamageAck& a, const paint::PaintReport& r, AckDelivery) override { ack(a, r); }
  } tally;
  tally.ack = [&](const DamageAck& a, const paint::PaintReport& r) {
    std::lock_guard lock(mu);
    observed_acks++;
    codings[r.coding][a.decode_time_us > 0 ? 0 : a.decode_time_us < 0 ? 1 : 2]++;
    if (a.decode_time_us < 0 && errors.size() < 20) errors.push_back(r.coding + ": " + a.message);
  };
  tally.draw = [&] {
    std::lock_guard lock(mu);
    observed_draws++;
  };
  {
    paint::CpuBacking backing;
    ClientPipelineOptions o;
    o.session.url = server.url();
    o.session.encodings = {coding, "rgb24", "png"};
    o.session.preferred_encoding = coding;
    for (const auto& v : codecs::video_codings()) o.session.video_csc_modes[v] = codecs::video_csc_modes(v);
    o.session.quality = quality(version, coding);
    o.session.log = [](std::string_view l) {
      std::fprintf(stderr, "  [client] %.*s\n", int(l.size()), l.data());
    };
    o.engine.decode_threads = 2;
    o.observers = {&tally};
    auto p_r = ClientPipeline::start(backing, std::move(o));
    ASSERT_TRUE(p_r.ok()) << p_r.error().message();
    auto pipeline = std::move(p_r).value();
    ASSERT_TRUE(pipeline->wait_until_ready(30s).ok());

    soak::ProcessChurn churn(server.display(), [](int n) {
      return std::vector<std::string>{"xterm", "-T", "churn " + std::to_string(n), "-geometry",
                                      "60x15", "-e", "sh", "-c", "while :; do ls -lR /usr; done"};
    }, 2);
    std::vector<VSample> samples;
    const auto t0 = Clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - t0).count(); };
    auto sample = [&] {
      auto c = counters();
      auto st = pipeline->stats();
      samples.push_back(VSample{elapsed(), soak::rss_mib(), c.live_storages(), c.live_bytes(),
                                codecs::video_buffer_counters().live(), st.draws_submitted, st.acks});
      const VSample& s = samples.back();
      std::printf("  t=%5.0fs rss=%6.1f MiB live=%4lld storages %7.1f MiB video buffers=%4lld "
                  "draws=%7lld acks=%7lld\n",
                  s.t, s.rss, (long long)s.live_storages, double(s.live_bytes) / 1048576.0,
                  (long long)s.video_live, (long long)s.draws, (long long)s.acks);
      std::fflush(stdout);
    };
    sample();
    double next_sample = 10, next_churn = 2;
    std::optional<VSample> warm;
    while (elapsed() < seconds && !pipeline->closed()) {
      pipeline->run_for(200ms);
      const double t = elapsed();
      if (t >= next_churn) {
        churn.tick();
        next_churn += 6;
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
    const VSample end = samples.back();
    ASSERT_FALSE(pipeline->closed()) << "the session ended early: " << pipeline->end()->message();
    ASSERT_TRUE(warm.has_value());

    EXPECT_TRUE(pipeline->stop("soak done")) << "the engine was still busy after the goodbye";
    const auto st = pipeline->stats();
    std::printf("video soak result (xpra %s, %s): %d s, draws %lld, acks %lld (painted %lld, errors "
                "%lld, skipped %lld), unmatched %lld, outstanding %lld, windows started %d\n",
                xpra::testing::xpra_version_name(version), coding.c_str(), seconds,
                (long long)st.draws_submitted, (long long)st.acks, (long long)st.acks_painted,
                (long long)st.acks_error, (long long)st.acks_skipped, (long long)st.acks_unmatched,
                (long long)st.outstanding, churn.started());
    std::printf("rss: start %.1f MiB, after warm-up (%.0f s) %.1f MiB, end %.1f MiB (growth after "
                "warm-up %.1f MiB); live storages start %lld, warm-up %lld, end %lld; live video "
                "buffers start %lld, warm-up %lld, end %lld\n",
                samples.front().rss, warm->t, warm->rss, end.rss, end.rss - warm->rss,
                (long long)samples.front().live_storages, (long long)warm->live_storages,
                (long long)end.live_storages, (long long)samples.front().video_live,
                (long long)warm->video_live, (long long)end.video_live);
    {
      std::lock_guard lock(mu);
      for (const auto& [c, n] : codings)
        std::printf("  coding %-6s painted %7lld errors %4lld skipped %4lld\n", c.c_str(),
                    (long long)n[0], (long long)n[1], (long long)n[2]);
      for (const auto& e : errors) std::printf("  error: %s\n", e.c_str());
      EXPECT_GT(codings[coding][0], 0) << "no " << coding << " draw painted";
      EXPECT_EQ(observed_draws, st.draws_submitted);
      EXPECT_EQ(observed_acks, st.acks);
    }
    EXPECT_EQ(st.acks_send_failed, 0);
    EXPECT_EQ(st.acks_sent + st.acks_after_close, st.acks);
    EXPECT_EQ(st.acks, st.draws_submitted);
    EXPECT_EQ(st.acks_unmatched, 0);
    EXPECT_EQ(st.outstanding, 0);
    EXPECT_EQ(st.acks_error, 0);
    EXPECT_EQ(st.session_draws_rejected, 0u);
    EXPECT_EQ(st.engine.refused_queue_full, 0);
    EXPECT_LT(end.rss - warm->rss, double(PIXPATH_SOAK_RSS_BOUND_MIB)) << "resident memory grew after warm-up";
    EXPECT_LT(end.live_bytes - warm->live_bytes, int64_t{64} << 20);
    EXPECT_LT(end.video_live - warm->video_live, kVideoBufferSlack) << "live video buffers grew";
    EXPECT_FALSE(server.log_contains("client ping timeout"));
  }
  // Pipeline and backing gone: every storage and every decoder frame released.
  const auto after = counters();
  EXPECT_EQ(after.live_storages(), baseline.live_storages());
  EXPECT_EQ(after.live_bytes(), baseline.live_bytes());
  EXPECT_EQ(codecs::video_buffer_counters().live(), video_baseline.live());
  std::printf("after: live storages %lld (baseline %lld), live video buffers %lld (baseline %lld)\n",
              (long long)after.live_storages(), (long long)baseline.live_storages(),
              (long long)codecs::video_buffer_counters().live(), (long long)video_baseline.live());
}

class VideoSoak : public ::testing::TestWithParam<XpraVersion> {
 protected:
  void SetUp() override {
    if (auto a = xpra::testing::xpra_available(GetParam()); !a.ok()) GTEST_SKIP() << a.error().message();
  }
};

TEST_P(VideoSoak, FastContentAsVideo) {
  const auto codings = soak_codings();
  ASSERT_FALSE(codings.empty());
  const int seconds = soak::soak_seconds(2 * int(codings.size()));
  XpraServerOptions so;
  so.version = GetParam();
  so.environment = {{"XPRA_ENCODING_STRICT_MODE", "1"}};
  so.start = "xterm -geometry 100x40 -e sh -c 'while :; do ls -lR /usr; done'";
  so.extra_args.push_back("--start=glxgears -geometry 640x480");
  so.extra_args.push_back("--pings=5");
  auto server_r = XpraServer::start(so);
  ASSERT_TRUE(server_r.ok()) << server_r.error().message();
  auto server = std::move(server_r).value();
  for (const auto& coding : codings) {
    SCOPED_TRACE(coding);
    soak_coding(*server, GetParam(), coding, seconds);
  }
  server->stop();
}

INSTANTIATE_TEST_SUITE_P(Servers, VideoSoak, ::testing::Values(XpraVersion::V3_1, XpraVersion::V6),
                         [](const auto& param_info) {
                           return param_info.param == XpraVersion::V6 ? std::string("xpra6")
                                                                      : std::string("xpra31");
                         });

}  // namespace
}  // namespace pixpath::client
