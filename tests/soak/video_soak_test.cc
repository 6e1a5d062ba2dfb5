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
#include <string>
#include <vector>

#include "net/xpra/testing/xpra_server.h"
#include "pixpath/client/client_pipeline.h"
#include "pixpath/codecs/video_decoder.h"
#include "pixpath/core/counters.h"
#include "pixpath/paint/cpu_backing.h"
#include "soak_support.h"

namespace pixpath::client {
namespace {

using namespace std::chrono_literals;
using xpra::testing::XpraServer;
using xpra::testing::XpraServerOptions;
using xpra::testing::XpraVersion;

// Live video frame buffers may differ this much between the end of warm-up and the end: the
// decoders' pools (reference frames, frames a paint still holds) of at most three windows.
constexpr int64_t kVideoBufferSlack = 96;

struct VSample {
  double t = 0, rss = 0;
  int64_t live_storages = 0, live_bytes = 0, video_live = 0, draws = 0, acks = 0;
  void print() const {
    std::printf("  t=%5.0fs rss=%6.1f MiB live=%4lld storages %7.1f MiB video buffers=%4lld "
                "draws=%7lld acks=%7lld\n",
                t, rss, (long long)live_storages, double(live_bytes) / 1048576.0, (long long)video_live,
                (long long)draws, (long long)acks);
  }
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
  const double warmup = soak::warmup_seconds(seconds);
  std::printf("video soak: %d s of %s against a real xpra %s server (warm-up %.0f s)\n", seconds,
              coding.c_str(), xpra::testing::xpra_version_name(version), warmup);
  const auto baseline = counters();
  const auto video_baseline = codecs::video_buffer_counters();
  soak::AckTally tally;
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
    const auto samples = soak::run_soak_loop(
        *pipeline, churn, {.seconds = double(seconds), .warmup = warmup, .first_churn = 2, .churn_every = 6},
        [&](double t) {
          auto c = counters();
          auto st = pipeline->stats();
          return VSample{t, soak::rss_mib(), c.live_storages(), c.live_bytes(),
                         codecs::video_buffer_counters().live(), st.draws_submitted, st.acks};
        });
    const VSample& end = samples.end();
    const auto& warm = samples.warm;
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
                samples.start().rss, warm->t, warm->rss, end.rss, end.rss - warm->rss,
                (long long)samples.start().live_storages, (long long)warm->live_storages,
                (long long)end.live_storages, (long long)samples.start().video_live,
                (long long)warm->video_live, (long long)end.video_live);
    tally.print();
    EXPECT_GT(tally.painted(coding), 0) << "no " << coding << " draw painted";
    soak::expect_every_draw_acked_once(st, tally);
    soak::expect_flat_after_warmup(*warm, end);
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

class VideoSoak : public soak::ServerVersionTest {};

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

INSTANTIATE_TEST_SUITE_P(Servers, VideoSoak, soak::kServerVersions, soak::server_version_name);

}  // namespace
}  // namespace pixpath::client
