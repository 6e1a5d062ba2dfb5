// paint_benchmark: plays recordings through the engine as fast as it goes (Pace::Max) and
// prints frames per second, per-stage latency and the copy counter.
//   1. tests/data/sample.pxrec (real X applications), direct decoding on and off, and once at
//      the recorded pace (the latency a live client would see);
//   2. a synthetic 4K recording generated here (not committed): 3840x2160 full-screen jpeg
//      frames (q 75, 4:2:0) of a desktop-like picture, interleaved with small rgb24+lz4
//      delta updates and scrolls.
// Usage: paint_benchmark [SAMPLE.pxrec] [OUT_DIR] [--threads N]
// (`pixpath play FILE --pace max [--json]` prints the full table of one play.)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "pixpath/codecs/registry.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/player.h"
#include "pixpath/paint/recording.h"

using namespace pixpath;
using namespace pixpath::paint;

namespace {

// A desktop-like BGRX picture: gradient background, "text" rows, a moving box at frame t.
std::vector<uint32_t> desktop(int w, int h, int t) {
  std::vector<uint32_t> px(static_cast<size_t>(w) * h);
  uint32_t seed = 12345;
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint32_t v = 0xFF000000u | ((x * 255 / w) << 16) | ((y * 255 / h) << 8) | 0x60;
      const bool text_band = (y / 18) % 2 == 0 && x > 40 && x < w / 2;
      if (text_band) {
        seed = seed * 1103515245 + 12345;
        if (((x / 9 + y / 18 * 7 + t * 0) % 11) < 7 && (seed >> 28) < 6) v = 0xFF101010u;
        else v = 0xFFF0F0F0u;
      }
      const int bx = (t * 97) % (w - 400), by = (t * 53) % (h - 300);
      if (x >= bx && x < bx + 400 && y >= by && y < by + 300)
        v = 0xFF000000u | (static_cast<uint32_t>(t * 40) & 0xFF) << 16 | 0x8000 | (x & 0xFF);
      px[static_cast<size_t>(y) * w + x] = v;
    }
  return px;
}

Result<std::string> make_4k_recording(const std::string& dir) {
  const int W = 3840, H = 2160, frames = 40;
  const auto& reg = codecs::CodecRegistry::builtin();
  const std::string path = dir + "/synthetic-4k.pxrec";
  PIXPATH_TRY(RecordingWriter w, RecordingWriter::create(path));
  RecordedEvent n;
  n.type = RecordType::WindowNew;
  n.wid = 1;
  n.w = W, n.h = H;
  PIXPATH_CHECK(w.write(n));
  int64_t seq = 1;
  std::vector<uint8_t> last_small;
  int64_t last_small_seq = -1;
  for (int t = 0; t < frames; ++t) {
    auto px = desktop(W, H, t);
    PIXPATH_TRY(ConstPictureView v, make_view(PixelFormat::BGRX, W, H,
                                              reinterpret_cast<const uint8_t*>(px.data()),
                                              static_cast<size_t>(W) * 4));
    codecs::EncodeParams jp;
    jp.quality = 75;
    PIXPATH_TRY(codecs::EncodedPicture e, reg.encoder("jpeg")->encode(v, jp));
    RecordedEvent d;
    d.type = RecordType::Draw;
    d.time_us = t * 33333;
    d.wid = 1;
    d.draw.wid = 1;
    d.draw.w = W, d.draw.h = H;
    d.draw.coding = "jpeg";
    d.draw.sequence = seq++;
    d.draw.options = e.options;
    d.draw.data = SharedBytes::adopt(std::move(e.data));
    PIXPATH_CHECK(w.write(d));
    // three small rgb24 updates (a 128x64 "clock"), delta-coded against the previous one
    for (int k = 0; k < 3; ++k) {
      std::vector<uint8_t> small(128 * 64 * 3);
      for (size_t i = 0; i < small.size(); ++i)
        small[i] = static_cast<uint8_t>((i * 7 + (t * 3 + k) * 13) & 0xFF);
      std::vector<uint8_t> data = small;
      if (last_small_seq >= 0)
        for (size_t i = 0; i < data.size(); ++i) data[i] ^= last_small[i];
      PIXPATH_TRY(ConstPictureView sv, make_view(PixelFormat::BGR, 128, 64, data.data(), 128 * 3));
      codecs::EncodeParams rp;
      rp.compression = codecs::RgbCompression::Lz4;
      PIXPATH_TRY(codecs::EncodedPicture re, reg.encoder("rgb24")->encode(sv, rp));
      RecordedEvent s;
      s.type = RecordType::Draw;
      s.time_us = t * 33333 + (k + 1) * 8000;
      s.wid = 1;
      s.draw.wid = 1;
      s.draw.x = W - 200, s.draw.y = 40, s.draw.w = 128, s.draw.h = 64;
      s.draw.coding = "rgb24";
      s.draw.sequence = seq;
      s.draw.rowstride = re.rowstride;
      s.draw.options = re.options;
      if (last_small_seq >= 0) s.draw.options.delta = last_small_seq;
      s.draw.options.store = seq;
      last_small_seq = seq++;
      last_small = small;
      s.draw.data = SharedBytes::adopt(std::move(re.data));
      PIXPATH_CHECK(w.write(s));
    }
    RecordedEvent sc;
    sc.type = RecordType::Draw;
    sc.time_us = t * 33333 + 32000;
    sc.wid = 1;
    sc.draw.wid = 1;
    sc.draw.coding = "scroll";
    sc.draw.sequence = seq++;
    sc.draw.w = W / 2, sc.draw.h = H;
    sc.draw.options.scroll = {{0, 18, W / 2, H - 18, 0, -18}};
    PIXPATH_CHECK(w.write(sc));
  }
  PIXPATH_CHECK(w.close());
  return path;
}

// The figures of one play (docs/performance.md, "Paint engine"): throughput, copies, and per
// coding the decode, paint and total latency p50/p90/p99/max in milliseconds.
void print_summary(const PlayResult& r) {
  std::printf("%lld draws in %.3f s: %.1f draws/s, %.1f MB/s in, %lld pixel copies (%lld bytes)\n",
              static_cast<long long>(r.all.draws), r.wall_s, r.fps, r.mbytes_per_s,
              static_cast<long long>(r.copies), static_cast<long long>(r.copy_bytes));
  std::printf("%-8s %6s %5s %6s  %-27s  %-27s  %s\n", "coding", "draws", "errs", "direct",
              "decode p50/p90/p99/max ms", "paint p50/p90/p99/max ms", "total p50/p90/p99/max ms");
  auto row = [](const CodingStats& c) {
    std::printf("%-8s %6lld %5lld %6lld", c.coding.c_str(), static_cast<long long>(c.draws),
                static_cast<long long>(c.errors), static_cast<long long>(c.direct));
    for (const LatencySummary* l : {&c.decode, &c.paint, &c.total}) {
      auto ms = [](int64_t us) { return static_cast<double>(us) / 1000.0; };
      std::printf("  %6.2f %6.2f %6.2f %6.2f", ms(l->p50), ms(l->p90), ms(l->p99), ms(l->max));
    }
    std::printf("\n");
  };
  for (const auto& c : r.per_coding) row(c);
  row(r.all);
  for (const auto& e : r.errors) std::printf("error: %s\n", e.c_str());
}

int play(const std::string& file, int threads, bool direct, Pace pace = Pace::Max) {
  PlayOptions o;
  o.file = file;
  o.pace = pace;
  o.decode_threads = threads;
  o.direct_decode = direct;
  CpuBacking backing;
  auto r = play_recording(o, backing);
  if (!r.ok()) {
    std::cerr << r.error().message() << "\n";
    return 1;
  }
  std::printf("== %s (direct decode %s, pace %s)\n", file.c_str(), direct ? "on" : "off",
              pace == Pace::Max ? "max" : "recorded");
  print_summary(*r);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::string sample = "tests/data/sample.pxrec", out = "build";
  int threads = 2;
  std::vector<std::string> pos;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) threads = std::stoi(argv[++i]);
    else pos.push_back(a);
  }
  if (pos.size() > 0) sample = pos[0];
  if (pos.size() > 1) out = pos[1];
  std::filesystem::create_directories(out);
  int rc = 0;
  rc |= play(sample, threads, true);
  rc |= play(sample, threads, false);
  rc |= play(sample, threads, true, Pace::Recorded);
  auto synth = make_4k_recording(out);
  if (!synth.ok()) {
    std::cerr << synth.error().message() << "\n";
    return 1;
  }
  rc |= play(*synth, threads, true);
  rc |= play(*synth, threads, false);
  return rc;
}
