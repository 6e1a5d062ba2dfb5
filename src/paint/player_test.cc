#include "pixpath/paint/player.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "paint/testing/test_support.h"
#include "pixpath/paint/backing_registry.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/paint/recording.h"

namespace pixpath::paint {
namespace {

using testing::bgrx;

namespace fs = std::filesystem;

// A fresh directory per test, removed with everything in it at scope exit. mkdtemp, not the
// test's name: a parameterised test's name holds a '/', which made a nested directory and left
// its parent behind in /tmp after every run.
struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "pixpath-player-test-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) std::abort();
    path = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

RecordedEvent draw_event(int64_t t, DrawPacket p) {
  RecordedEvent e;
  e.type = RecordType::Draw;
  e.time_us = t;
  e.wid = p.wid;
  e.draw = std::move(p);
  return e;
}

RecordedEvent window_event(RecordType type, int64_t t, int64_t wid, int w = 0, int h = 0) {
  RecordedEvent e;
  e.type = type;
  e.time_us = t;
  e.wid = wid;
  e.w = w;
  e.h = h;
  return e;
}

// Window 1 (32x24): a gradient, a scroll up by 8 rows, a delta-coded patch, a resize.
// Window 2: painted and lost. Reference: the same operations done by hand.
std::string write_recording(const fs::path& dir, std::vector<uint32_t>& reference, int& rw,
                            int& rh) {
  const int w = 32, h = 24;
  auto gradient = [](int x, int y) { return bgrx(x * 8, y * 10, 100); };
  auto patch_a = [](int x, int y) { return bgrx(x, y, 1); };
  auto patch_b = [](int x, int y) { return bgrx(x, y, 200); };
  std::vector<RecordedEvent> ev;
  ev.push_back(window_event(RecordType::WindowNew, 0, 1, w, h));
  ev.push_back(window_event(RecordType::WindowNew, 0, 2, 16, 16));
  ev.push_back(draw_event(100, testing::rgb_draw(1, 1, 0, 0, w, h, testing::bgrx_bytes(w, h, gradient), true)));
  ev.push_back(draw_event(100, testing::solid_draw(2, 2, 0, 0, 16, 16, bgrx(9, 9, 9))));
  DrawPacket scroll;
  scroll.wid = 1;
  scroll.sequence = 3;
  scroll.coding = "scroll";
  scroll.options.scroll = {{0, 8, w, h - 8, 0, -8}};
  ev.push_back(draw_event(200, scroll));
  auto a = testing::bgrx_bytes(8, 8, patch_a);
  auto b = testing::bgrx_bytes(8, 8, patch_b);
  DrawPacket store = testing::rgb_draw(1, 4, 4, 4, 8, 8, a, true);
  store.options.store = 4;
  ev.push_back(draw_event(300, store));
  std::vector<uint8_t> x(a.size());
  for (size_t i = 0; i < a.size(); ++i) x[i] = a[i] ^ b[i];
  DrawPacket delta = testing::rgb_draw(1, 5, 4, 4, 8, 8, x, true);
  delta.options.delta = 4;
  delta.options.store = 5;
  ev.push_back(draw_event(400, delta));
  ev.push_back(window_event(RecordType::WindowLost, 450, 2));
  ev.push_back(window_event(RecordType::WindowResize, 500, 1, 40, 20));
  const std::string path = (dir / "test.pxrec").string();
  auto writer = RecordingWriter::create(path);
  EXPECT_TRUE(writer.ok());
  for (const auto& e : ev) EXPECT_TRUE(writer->write(e).ok());
  EXPECT_TRUE(writer->close().ok());

  rw = 40, rh = 20;
  reference.assign(static_cast<size_t>(rw * rh), bgrx(0, 0, 0));
  for (int yy = 0; yy < rh; ++yy)
    for (int xx = 0; xx < w; ++xx) {
      uint32_t v = yy + 8 < h ? gradient(xx, yy + 8) : gradient(xx, yy);
      if (xx >= 4 && xx < 12 && yy >= 4 && yy < 12) v = patch_b(xx - 4, yy - 4);
      reference[static_cast<size_t>(yy * rw + xx)] = v;
    }
  return path;
}

TEST(Player, SnapshotOfAPlayedRecordingEqualsTheReference) {
  TempDir tmp;
  std::vector<uint32_t> reference;
  int rw = 0, rh = 0;
  const std::string file = write_recording(tmp.path, reference, rw, rh);
  for (Pace pace : {Pace::Max, Pace::Recorded}) {
    PlayOptions opt;
    opt.file = file;
    opt.pace = pace;
    opt.decode_threads = 3;
    opt.snapshot_dir = (tmp.path / "snaps").string();
    int progress_calls = 0;
    opt.progress = [&](const PlayProgress&) { progress_calls++; };
    CpuBacking backing;
    auto r = play_recording(opt, backing);
    ASSERT_TRUE(r.ok()) << r.error().message();
    EXPECT_GT(progress_calls, 0);
    EXPECT_EQ(r->all.draws, 5);
    EXPECT_EQ(r->all.painted, 5);
    EXPECT_EQ(r->all.errors, 0);
    EXPECT_EQ(r->snapshots.size(), 2u);
    EXPECT_EQ(r->backing, "cpu");
    EXPECT_EQ(r->pace, pace == Pace::Max ? "max" : "recorded");
    auto png = codecs::read_file(opt.snapshot_dir + "/window-1.png");
    ASSERT_TRUE(png.ok());
    auto pic = codecs::read_image_as(*png, PixelFormat::RGBA);
    ASSERT_TRUE(pic.ok());
    ASSERT_EQ(pic->width(), rw);
    ASSERT_EQ(pic->height(), rh);
    auto v = pic->read();
    int mismatches = 0;
    for (int y = 0; y < rh; ++y)
      for (int x = 0; x < rw; ++x) {
        const uint8_t* p = v->plane(0).row(y).data() + 4 * x;
        uint32_t got = bgrx(p[0], p[1], p[2]);
        if (got != reference[static_cast<size_t>(y * rw + x)] && mismatches++ < 5)
          ADD_FAILURE() << "pixel " << x << "," << y << std::hex << " got " << got << " want "
                        << reference[static_cast<size_t>(y * rw + x)];
      }
    EXPECT_EQ(mismatches, 0);
    EXPECT_TRUE(fs::exists(opt.snapshot_dir + "/window-2-lost-1.png"));
  }
}

TEST(Player, PerCodingFiguresAndBadInput) {
  TempDir tmp;
  std::vector<uint32_t> reference;
  int rw = 0, rh = 0;
  PlayOptions opt;
  opt.file = write_recording(tmp.path, reference, rw, rh);
  opt.pace = Pace::Max;
  CpuBacking backing;
  auto r = play_recording(opt, backing);
  ASSERT_TRUE(r.ok()) << r.error().message();
  std::vector<std::string> codings;
  int64_t draws = 0;
  for (const auto& c : r->per_coding) {
    codings.push_back(c.coding);
    draws += c.draws;
  }
  EXPECT_NE(std::find(codings.begin(), codings.end(), "rgb32"), codings.end());
  EXPECT_NE(std::find(codings.begin(), codings.end(), "scroll"), codings.end());
  EXPECT_TRUE(std::is_sorted(codings.begin(), codings.end()));
  EXPECT_EQ(draws, r->all.draws);
  EXPECT_EQ(r->all.coding, "all");

  opt.file = (tmp.path / "missing.pxrec").string();
  auto missing = play_recording(opt, backing);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("missing.pxrec"), std::string::npos)
      << missing.error().message();
  // `pixpath play --backing NAME` makes the backing by name; an unknown one says so.
  auto none = make_backing("nonesuch");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.error().message().find("no backing 'nonesuch'"), std::string::npos)
      << none.error().message();
}

// The bundled recordings, each with one reference PNG per window (PREFIX-WID.png), which every
// window must equal exactly (a lost window in its snapshot taken just before it was destroyed):
//   - tests/data/sample.pxrec: a real xpra 3.1 session recorded by `pixpath record`
//     (scripts/record-sample: xterm scrolling text, xclock, xeyes, glxgears, and the xmessage
//     the server's Xsession opens; rgb24 with lz4 and delta buckets), or the synthetic one of
//     scripts/make-sample-recording;
//   - tests/data/sample-xpra6.pxrec: a real xpra 6.5.5 session (scripts/record-sample --xpra6),
//     which must hold webp (lossless and lossy), jpeg and rgb24 draws (no png: 6.5.5 picks it
//     only when neither webp nor jpeg is offered; no scroll: 6.5.5 cannot send it; see
//     docs/xpra-servers.md).
struct Sample {
  const char* file;
  const char* reference_prefix;
  std::vector<std::string> codings;  // each must have been painted at least once
  int min_painted;
};

class SampleRecording : public ::testing::TestWithParam<Sample> {};

TEST_P(SampleRecording, MatchesItsReferencePictures) {
  const char* data = std::getenv("PIXPATH_TEST_DATA");
  ASSERT_NE(data, nullptr);
  const std::string dir = data;
  const Sample& sample = GetParam();
  TempDir tmp;
  PlayOptions opt;
  opt.file = dir + "/" + sample.file;
  opt.pace = Pace::Max;
  opt.decode_threads = 2;
  opt.snapshot_dir = tmp.path.string();
  CpuBacking backing;
  auto result = play_recording(opt, backing);
  ASSERT_TRUE(result.ok()) << result.error().message();
  EXPECT_EQ(result->all.errors, 0) << (result->errors.empty() ? "" : result->errors[0]);
  EXPECT_EQ(result->all.skipped, 0);
  EXPECT_GT(result->all.painted, sample.min_painted);
  for (const std::string& coding : sample.codings) {
    int64_t painted = 0;
    for (const auto& c : result->per_coding)
      if (c.coding == coding) painted = c.painted;
    EXPECT_GT(painted, 0) << "no " << coding << " draw in " << sample.file;
  }
  const std::string prefix = sample.reference_prefix;
  int compared = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string wid = name.substr(prefix.size(), name.size() - prefix.size() - 4);
    std::string snap = opt.snapshot_dir + "/window-" + wid + ".png";
    if (!fs::exists(snap)) snap = opt.snapshot_dir + "/window-" + wid + "-lost-1.png";
    auto want = codecs::read_image_as(*codecs::read_file(entry.path().string()), PixelFormat::RGBA);
    auto got_bytes = codecs::read_file(snap);
    ASSERT_TRUE(got_bytes.ok()) << snap;
    auto got = codecs::read_image_as(*got_bytes, PixelFormat::RGBA);
    ASSERT_TRUE(want.ok() && got.ok());
    ASSERT_EQ(want->width(), got->width()) << name;
    ASSERT_EQ(want->height(), got->height()) << name;
    auto wv = want->read();
    auto gv = got->read();
    int64_t diff = 0;
    for (int y = 0; y < want->height(); ++y)
      diff += std::memcmp(wv->plane(0).row(y).data(), gv->plane(0).row(y).data(),
                          wv->plane(0).row_bytes()) != 0;
    EXPECT_EQ(diff, 0) << name << ": rows differing";
    compared++;
  }
  EXPECT_GE(compared, 4);
}

INSTANTIATE_TEST_SUITE_P(
    Bundled, SampleRecording,
    ::testing::Values(Sample{"sample.pxrec", "sample-window-", {}, 50},
                      Sample{"sample-xpra6.pxrec", "sample-xpra6-window-",
                             {"webp", "jpeg", "rgb24"}, 20}),
    [](const auto& param_info) { return param_info.index == 0 ? std::string("xpra31") : std::string("xpra6"); });

}  // namespace
}  // namespace pixpath::paint
