// `pixpath record` and `pixpath play` against a REAL xpra server (3.1.3 and 6.5.5, the same test
// for both, no flag naming the version): one session recorded
// while another client (`pixpath attach`) watches the same windows at the same time (the
// server runs with --sharing=yes, both clients pass --steal), both told to end after the same number of seconds.
//
// "The same snapshots" means:
//   - record's own final snapshots (it paints headless too) == `play --snapshot-dir` of the
//     recording, for every window, pixel for pixel (same packets, same decoders);
//   - attach's final snapshots == record's for the static windows (xterm with fixed text,
//     xeyes), pixel for pixel; the animated ones (xclock, glxgears) are not compared across
//     the two sessions, the clients ended a few milliseconds apart;
//   - both equal the X display for the static windows: pixel for pixel where every coding of
//     the session was lossless (3.1: rgb24 and delta), PSNR >= 30 dB where the server chose a
//     lossy one (6.x picks webp, sometimes lossy, or jpeg for some content).
#include <gtest/gtest.h>

#include "support/live_server.h"

namespace pixpath::testing {
namespace {

using xpra::testing::XpraVersion;

// The bound for lossy codings, as in attach_integration_test.cc.
constexpr double kLossyPsnrDb = 30.0;

class Record : public ::testing::TestWithParam<XpraVersion> {
 protected:
  void SetUp() override {
    if (auto a = xpra::testing::xpra_available(GetParam()); !a.ok()) GTEST_SKIP() << a.error().message();
  }
};

TEST_P(Record, RecordingPlaysBackToTheLiveSnapshots) {
  TempDir tmp;
  auto live = start_live_server({}, {"--sharing=yes"}, GetParam());
  ASSERT_TRUE(live);
  live->start_static_xterm(tmp.path);
  live->start_xeyes(tmp.path);
  live->start_xclock(tmp.path);
  live->start_glxgears(tmp.path);
  live->wait_for_apps(tmp.path);

  const std::string rec = tmp / "session.pxrec";
  BackgroundProcess recorder({pixpath_binary(), "record", live->url(), "-o", rec, "--json",
                              "--snapshot-dir", tmp / "record-snap", "--exit-after", "6", "--steal"},
                             tmp.path);
  BackgroundProcess viewer({pixpath_binary(), "attach", live->url(), "--headless", "--json",
                            "--snapshot-dir", tmp / "attach-snap", "--exit-after", "6", "--steal"},
                           tmp.path);
  auto rr = recorder.wait(90s);
  auto ar = viewer.wait(90s);
  ASSERT_FALSE(rr.timed_out) << rr.err;
  ASSERT_FALSE(ar.timed_out) << ar.err;
  EXPECT_EQ(rr.exit_code, 0) << rr.err;
  EXPECT_EQ(ar.exit_code, 0) << ar.err;
  auto rs = parse_summary(rr);
  auto as = parse_summary(ar);
  ASSERT_TRUE(rs.contains("recording") && as.contains("windows")) << rr.out << ar.out;
  const std::string version = xpra::testing::xpra_version_name(GetParam());
  log_codings("record, xpra " + version, rs);
  log_codings("attach (same time), xpra " + version, as);
  expect_clean_session(rs, *live->server);
  expect_clean_session(as, *live->server);
  std::fprintf(stderr, "== recording: %s bytes\n", rs["recording"]["bytes"].dump().c_str());

  auto pr = run_process({pixpath_binary(), "play", rec, "--pace", "max", "--json", "--snapshot-dir",
                         tmp / "play-snap"},
                        tmp.path, 120s);
  ASSERT_EQ(pr.exit_code, 0) << pr.err;
  auto ps = nlohmann::json::parse(pr.out);
  EXPECT_EQ(ps["all"]["errors"].get<int64_t>(), 0);
  EXPECT_EQ(ps["all"]["draws"].get<int64_t>(), rs["all"]["draws"].get<int64_t>())
      << "the recording holds every draw the recorder painted";

  int compared = 0;
  for (const auto& w : rs["windows"]) {
    SCOPED_TRACE(w.dump());
    const std::string wid = std::to_string(w["wid"].get<int64_t>());
    std::string played = tmp / ("play-snap/window-" + wid + ".png");
    if (w["lost"].get<bool>()) played = tmp / ("play-snap/window-" + wid + "-lost-1.png");
    auto a = load_png(w["snapshot"]);
    auto b = load_png(played);
    ASSERT_TRUE(a && b) << played;
    auto d = compare_rgb(*a, *b);
    EXPECT_TRUE(d.same_size);
    EXPECT_EQ(d.differing_pixels, 0) << "live vs played: " << d.describe();
    compared++;
  }
  EXPECT_GE(compared, 4);

  // 6.x's webp is lossless for text (quality 100), lossy elsewhere; the summary does not say
  // which, so a 6.x session with webp is held to the lossy bound against the X display (record
  // and attach decode the same kind of packets, so they are still compared exactly).
  bool lossy = false;
  for (const auto* s : {&rs, &as})
    for (const auto& c : (*s)["per_coding"])
      lossy |= c["coding"] == "jpeg" || c["coding"] == "jpega" ||
               (GetParam() == XpraVersion::V6 && c["coding"] == "webp");
  for (const std::string& title : {kStaticXterm, std::string("xeyes")}) {
    SCOPED_TRACE(title);
    const auto* rw = window_by_title(rs, title);
    const auto* aw = window_by_title(as, title);
    ASSERT_TRUE(rw && aw);
    auto a = load_png((*aw)["snapshot"]);
    auto b = load_png((*rw)["snapshot"]);
    ASSERT_TRUE(a && b);
    EXPECT_EQ(compare_rgb(*a, *b).differing_pixels, 0) << "attach vs record";
    auto x = compare_with_display(*live, *rw, tmp.path);
    ASSERT_TRUE(x);
    std::fprintf(stderr, "== %s, record vs X display: %s\n", title.c_str(), x->describe().c_str());
    if (lossy)
      EXPECT_GE(x->psnr_db, kLossyPsnrDb) << "record vs X display: " << x->describe();
    else
      EXPECT_EQ(x->differing_pixels, 0) << "record vs X display: " << x->describe();
  }
}

INSTANTIATE_TEST_SUITE_P(Versions, Record, ::testing::Values(XpraVersion::V3_1, XpraVersion::V6),
                         [](const auto& param_info) {
                           return param_info.param == XpraVersion::V6 ? std::string("xpra6")
                                                                : std::string("xpra31");
                         });

}  // namespace
}  // namespace pixpath::testing
