// make_sample_recording: turns screen captures of real X applications into a recording
// (recording.h) encoded the way an xpra 3.1 server would encode them, plus reference PNGs of
// what every window must show once the recording is played.
//
// Usage: make_sample_recording WINDOWS FRAMES OUT.pxrec REFERENCE_DIR
//   WINDOWS: lines "wid x y w h name" (window geometry on the root, from xwininfo)
//   FRAMES:  lines "time_us path.ppm" (root-window captures, binary PPM, in time order)
// Run by scripts/make-sample-recording, which starts Xvfb and the applications. A developer's
// tool beside the `pixpath` command, not part of any library.
//
// Encoding policy (after xpra's window_source.py, simplified):
//   - first frame of a window, and a changed area over 40% of the window: jpeg (q 75);
//   - xterm-like vertical scrolls: a "scroll" packet, then the uncovered lines;
//   - other changes: changed 32x32 tiles merged into bands; a band under 32768 pixels is
//     rgb24 (BGR, lz4) with delta buckets (5 per window; delta against the bucket holding
//     the same rectangle, store=sequence); bigger bands are png;
//   - after the last frame: a lossless png refresh of every window (as xpra's auto-refresh),
//     so the final content is exact and equals the reference PNGs;
//   - the last listed window is lost 0.1 s after the last frame.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "pixpath/codecs/registry.h"
#include "pixpath/core/pixel_ops.h"
#include "pixpath/codecs/image_io.h"
#include "pixpath/paint/recording.h"

using namespace pixpath;
using namespace pixpath::paint;

namespace {

struct Image {  // BGRX
  int w = 0, h = 0;
  std::vector<uint32_t> px;
  uint32_t at(int x, int y) const { return px[static_cast<size_t>(y) * w + x]; }
};

std::optional<Image> read_ppm(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::string magic;
  int w, h, maxval;
  f >> magic >> w >> h >> maxval;
  f.get();
  if (magic != "P6" || maxval != 255 || w <= 0 || h <= 0) return std::nullopt;
  std::vector<uint8_t> rgb(static_cast<size_t>(w) * h * 3);
  f.read(reinterpret_cast<char*>(rgb.data()), static_cast<std::streamsize>(rgb.size()));
  if (!f) return std::nullopt;
  Image img{w, h, std::vector<uint32_t>(static_cast<size_t>(w) * h)};
  for (size_t i = 0; i < img.px.size(); ++i)
    img.px[i] = uint32_t{rgb[3 * i + 2]} | uint32_t{rgb[3 * i + 1]} << 8 |
                uint32_t{rgb[3 * i]} << 16 | 0xFF000000u;
  return img;
}

Image crop(const Image& src, int x, int y, int w, int h) {
  Image out{w, h, std::vector<uint32_t>(static_cast<size_t>(w) * h)};
  for (int j = 0; j < h; ++j)
    std::memcpy(&out.px[static_cast<size_t>(j) * w], &src.px[static_cast<size_t>(y + j) * src.w + x],
                static_cast<size_t>(w) * 4);
  return out;
}

ConstPictureView view(const Image& img, int x, int y, int w, int h) {
  auto v = make_view(PixelFormat::BGRX, w, h,
                     reinterpret_cast<const uint8_t*>(&img.px[static_cast<size_t>(y) * img.w + x]),
                     static_cast<size_t>(img.w) * 4);
  return *v;
}

struct Bucket {
  int x = 0, y = 0, w = 0, h = 0;
  int64_t seq = -1;
  std::vector<uint8_t> px;  // BGR
  int64_t used = 0;
};

struct Window {
  int64_t wid;
  int rx, ry, w, h;
  std::string name;
  std::optional<Image> last;  // what the client shows
  Bucket buckets[5];
};

struct Generator {
  RecordingWriter& out;
  int64_t seq = 1;
  int64_t now = 0;
  std::map<std::string, int64_t> counts;
  const codecs::CodecRegistry& reg = codecs::CodecRegistry::builtin();

  void emit(DrawPacket p) {
    counts[p.coding]++;
    RecordedEvent e;
    e.type = RecordType::Draw;
    e.time_us = now;
    e.wid = p.wid;
    e.draw = std::move(p);
    auto r = out.write(e);
    if (!r.ok()) {
      std::cerr << r.error().message() << "\n";
      std::exit(1);
    }
  }

  DrawPacket packet(const Window& win, int x, int y, int w, int h, const char* coding,
                    codecs::EncodedPicture enc) {
    DrawPacket p;
    p.wid = win.wid;
    p.x = x, p.y = y, p.w = w, p.h = h;
    p.coding = coding;
    p.sequence = seq++;
    p.rowstride = enc.rowstride;
    p.options = enc.options;
    p.data = SharedBytes::adopt(std::move(enc.data));
    return p;
  }

  void encode(const Window& win, const Image& img, int x, int y, int w, int h, const char* coding,
              int quality = 75) {
    codecs::EncodeParams params;
    params.quality = quality;
    auto enc = reg.encoder(coding)->encode(view(img, x, y, w, h), params);
    if (!enc.ok()) {
      std::cerr << enc.error().message() << "\n";
      std::exit(1);
    }
    emit(packet(win, x, y, w, h, coding, std::move(enc).value()));
  }

  void rgb_delta(Window& win, const Image& img, int x, int y, int w, int h) {
    // rgb24 as BGR bytes (what an X server's BGRX looks like without padding)
    std::vector<uint8_t> pixels(static_cast<size_t>(w) * h * 3);
    for (int j = 0; j < h; ++j)
      for (int i = 0; i < w; ++i) {
        uint32_t v = img.at(x + i, y + j);
        uint8_t* d = &pixels[(static_cast<size_t>(j) * w + i) * 3];
        d[0] = v & 0xFF, d[1] = (v >> 8) & 0xFF, d[2] = (v >> 16) & 0xFF;
      }
    int bucket = -1;
    std::optional<int64_t> delta;
    std::vector<uint8_t> data = pixels;
    for (int b = 0; b < 5; ++b) {
      Bucket& k = win.buckets[b];
      if (k.seq >= 0 && k.x == x && k.y == y && k.w == w && k.h == h) {
        bucket = b;
        delta = k.seq;
        for (size_t i = 0; i < data.size(); ++i) data[i] ^= k.px[i];
        break;
      }
    }
    if (bucket < 0) {  // an empty bucket, else the least recently used
      bucket = 0;
      for (int b = 0; b < 5; ++b)
        if (win.buckets[b].used < win.buckets[bucket].used) bucket = b;
    }
    codecs::EncodeParams params;
    params.compression = codecs::RgbCompression::Lz4;
    auto v = make_view(PixelFormat::BGR, w, h, data.data(), static_cast<size_t>(w) * 3);
    auto enc = reg.encoder("rgb24")->encode(*v, params);
    if (!enc.ok()) {
      std::cerr << enc.error().message() << "\n";
      std::exit(1);
    }
    DrawPacket p = packet(win, x, y, w, h, "rgb24", std::move(enc).value());
    p.options.delta = delta;
    p.options.store = p.sequence;
    p.options.bucket = bucket;
    win.buckets[bucket] = Bucket{x, y, w, h, p.sequence, std::move(pixels), now + 1};
    emit(std::move(p));
  }

  // dy < 0: content moved up by -dy rows. Returns 0 when no scroll explains the change.
  static int find_scroll(const Image& prev, const Image& cur) {
    const int h = cur.h;
    for (int s = 1; s < h / 2; ++s) {
      int same = 0, rows = h - s;
      for (int y = 0; y < rows; ++y)
        if (std::memcmp(&cur.px[static_cast<size_t>(y) * cur.w], &prev.px[static_cast<size_t>(y + s) * prev.w],
                        static_cast<size_t>(cur.w) * 4) == 0)
          same++;
      if (same >= rows * 9 / 10 && same > 0) {
        // not a scroll if the rows were already equal without moving
        int unmoved = 0;
        for (int y = 0; y < rows; ++y)
          if (std::memcmp(&cur.px[static_cast<size_t>(y) * cur.w], &prev.px[static_cast<size_t>(y) * prev.w],
                          static_cast<size_t>(cur.w) * 4) == 0)
            unmoved++;
        if (unmoved < same) return -s;
      }
    }
    return 0;
  }

  void frame(Window& win, const Image& cur) {
    if (!win.last) {
      encode(win, cur, 0, 0, cur.w, cur.h, "jpeg");
      win.last = cur;
      return;
    }
    Image prev = *win.last;
    if (win.name == "xterm") {
      if (int dy = find_scroll(prev, cur); dy != 0) {
        DrawPacket p;
        p.wid = win.wid;
        p.w = cur.w, p.h = cur.h;
        p.coding = "scroll";
        p.sequence = seq++;
        p.options.scroll = {{0, -dy, cur.w, cur.h + dy, 0, dy}};
        emit(std::move(p));
        Image moved = prev;
        for (int y = 0; y < cur.h + dy; ++y)
          std::memcpy(&moved.px[static_cast<size_t>(y) * cur.w], &prev.px[static_cast<size_t>(y - dy) * cur.w],
                      static_cast<size_t>(cur.w) * 4);
        prev = moved;
      }
    }
    const int T = 32, tw = (cur.w + T - 1) / T, th = (cur.h + T - 1) / T;
    std::vector<char> changed(static_cast<size_t>(tw) * th, 0);
    int n = 0;
    int bx0 = cur.w, by0 = cur.h, bx1 = 0, by1 = 0;
    for (int ty = 0; ty < th; ++ty)
      for (int tx = 0; tx < tw; ++tx) {
        bool c = false;
        for (int y = ty * T; y < std::min(cur.h, ty * T + T) && !c; ++y)
          for (int x = tx * T; x < std::min(cur.w, tx * T + T); ++x)
            if (cur.at(x, y) != prev.at(x, y)) {
              c = true;
              break;
            }
        if (c) {
          changed[static_cast<size_t>(ty) * tw + tx] = 1;
          n++;
          bx0 = std::min(bx0, tx * T), by0 = std::min(by0, ty * T);
          bx1 = std::max(bx1, std::min(cur.w, tx * T + T)), by1 = std::max(by1, std::min(cur.h, ty * T + T));
        }
      }
    if (n == 0) {
      win.last = cur;
      return;
    }
    if (static_cast<int64_t>(bx1 - bx0) * (by1 - by0) * 10 > static_cast<int64_t>(cur.w) * cur.h * 4) {
      encode(win, cur, bx0, by0, bx1 - bx0, by1 - by0, "jpeg");
    } else {
      // bands: per tile row, the span from the first to the last changed tile
      for (int ty = 0; ty < th; ++ty) {
        int a = -1, b = -1;
        for (int tx = 0; tx < tw; ++tx)
          if (changed[static_cast<size_t>(ty) * tw + tx]) {
            if (a < 0) a = tx;
            b = tx;
          }
        if (a < 0) continue;
        int x = a * T, y = ty * T, w = std::min(cur.w, (b + 1) * T) - x, h = std::min(cur.h, y + T) - y;
        if (w * h < 32768)
          rgb_delta(win, cur, x, y, w, h);
        else
          encode(win, cur, x, y, w, h, "png");
      }
    }
    win.last = cur;
  }
};

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "make_sample_recording: encodes root-window captures of real X applications as an xpra "
      "3.1 server would, into a recording plus one reference PNG per window "
      "(scripts/make-sample-recording runs it)"};
  std::string windows_file, frames_file, out_file, reference_dir;
  app.add_option("WINDOWS", windows_file, "Lines \"wid x y w h name\" (from xwininfo)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("FRAMES", frames_file, "Lines \"time_us path.ppm\" (root-window captures)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("OUT", out_file, "The recording to write (.pxrec)")->required();
  app.add_option("REFERENCE_DIR", reference_dir, "Where sample-window-WID.png go")
      ->required()
      ->check(CLI::ExistingDirectory);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // --help: 0; bad arguments: 2, as pixpath
  }

  std::vector<Window> windows;
  {
    std::ifstream f(windows_file);
    Window w;
    while (f >> w.wid >> w.rx >> w.ry >> w.w >> w.h >> w.name) windows.push_back(w);
  }
  std::vector<std::pair<int64_t, std::string>> frames;
  {
    std::ifstream f(frames_file);
    int64_t t;
    std::string path;
    while (f >> t >> path) frames.emplace_back(t, path);
  }
  if (windows.empty() || frames.empty()) {
    std::cerr << "no windows or no frames\n";
    return 1;
  }
  auto writer = RecordingWriter::create(out_file);
  if (!writer.ok()) {
    std::cerr << writer.error().message() << "\n";
    return 1;
  }
  Generator gen{*writer};
  const int64_t t0 = frames.front().first;
  for (const Window& w : windows) {
    RecordedEvent e;
    e.type = RecordType::WindowNew;
    e.wid = w.wid;
    e.x = w.rx, e.y = w.ry, e.w = w.w, e.h = w.h;
    if (!writer->write(e).ok()) return 1;
  }
  Image last_root;
  for (const auto& [t, path] : frames) {
    auto img = read_ppm(path);
    if (!img) {
      std::cerr << "cannot read " << path << "\n";
      return 1;
    }
    gen.now = t - t0;
    for (Window& w : windows) {
      if (w.rx < 0 || w.ry < 0 || w.rx + w.w > img->w || w.ry + w.h > img->h) {
        std::cerr << "window " << w.wid << " is not inside the screen\n";
        return 1;
      }
      gen.frame(w, crop(*img, w.rx, w.ry, w.w, w.h));
    }
    last_root = std::move(*img);
  }
  // lossless refresh, then the references
  gen.now += 50000;
  for (Window& w : windows) {
    gen.encode(w, *w.last, 0, 0, w.w, w.h, "png");
    auto png = codecs::encode_png(view(*w.last, 0, 0, w.w, w.h));
    const std::string ref = reference_dir + "/sample-window-" + std::to_string(w.wid) + ".png";
    if (!png.ok() || !codecs::write_file(ref, *png).ok()) {
      std::cerr << "cannot write " << ref << "\n";
      return 1;
    }
  }
  RecordedEvent lost;
  lost.type = RecordType::WindowLost;
  lost.time_us = gen.now + 100000;
  lost.wid = windows.back().wid;
  if (!writer->write(lost).ok() || !writer->close().ok()) return 1;
  std::cout << out_file << ": " << frames.size() << " frames, " << windows.size() << " windows,";
  for (const auto& [coding, n] : gen.counts) std::cout << " " << coding << "=" << n;
  std::cout << ", " << writer->bytes_written() << " bytes\n";
  return 0;
}
