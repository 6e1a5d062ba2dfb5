// Test support: what an X display (the xpra server's Xvfb) shows, to compare with pixpath's
// snapshots. xpra's window ids are not X window ids: windows are matched by title and size
// (`xwininfo -root -tree`), captured with `xwd -id` and converted to PNG by ImageMagick.
// Pictures are compared as RGB (the X byte of pixpath's BGRX framebuffer is ignored).
// Threading: none (one test thread).
#pragma once

#include <cmath>
#include <cstring>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "pixpath/core/picture.h"
#include "pixpath/codecs/image_io.h"
#include "support/processes.h"

namespace pixpath::testing {

struct XWindow {
  std::string xid;  // "0x80000c"
  std::string title;
  int w = 0, h = 0, x = 0, y = 0;  // size and absolute position
};

// The named top-level (and nested) windows of display :N.
inline std::vector<XWindow> x_windows(int display, const std::string& tmp) {
  auto r = run_process({"xwininfo", "-display", ":" + std::to_string(display), "-root", "-tree"}, tmp,
                       std::chrono::seconds(10));
  std::vector<XWindow> v;
  // 0x80000c "xterm": ("xterm" "XTerm")  484x316+0+0  +0+0
  static const std::regex line(
      R"re(\s+(0x[0-9a-f]+) "([^"]*)":.*\s(\d+)x(\d+)[+-]+\d+[+-]+\d+\s+[+](-?\d+)[+](-?\d+)\s*$)re");
  std::istringstream in(r.out);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (std::regex_search(l, m, line)) {
      v.push_back({m[1], m[2], std::stoi(m[3]), std::stoi(m[4]), std::stoi(m[5]), std::stoi(m[6])});
    }
  }
  return v;
}

inline std::optional<XWindow> find_x_window(int display, const std::string& tmp, const std::string& title,
                                            int w = 0, int h = 0) {
  for (const auto& win : x_windows(display, tmp))
    if (win.title == title && (w == 0 || (win.w == w && win.h == h))) return win;
  return std::nullopt;
}

// Waits (bounded) until every title is a mapped window on the display, at least
// min_size x min_size pixels: by default more than an xterm of one character (10x17), which
// a test window only is when the server's window manager shrank it (support/live_server.h,
// xterm_argv).
inline bool wait_for_x_windows(int display, const std::string& tmp, const std::set<std::string>& titles,
                               std::chrono::milliseconds timeout, int min_size = 32) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    std::set<std::string> seen;
    for (const auto& w : x_windows(display, tmp))
      if (w.w >= min_size && w.h >= min_size) seen.insert(w.title);
    bool all = true;
    for (const auto& t : titles) all &= seen.count(t) > 0;
    if (all) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return false;
}

// Captures one X window as a PNG file; false when it cannot be captured (e.g. off-screen).
inline bool capture_x_window(int display, const std::string& xid, const std::string& png_path,
                             const std::string& tmp) {
  const std::string cmd = "xwd -silent -display :" + std::to_string(display) + " -id " + xid +
                          " | convert xwd:- -alpha off png24:" + png_path;
  auto r = run_process({"bash", "-o", "pipefail", "-c", cmd}, tmp, std::chrono::seconds(20));
  return r.exit_code == 0 && std::filesystem::exists(png_path);
}

// An RGBA picture from a PNG file.
inline std::optional<Picture> load_png(const std::string& path) {
  auto bytes = codecs::read_file(path);
  if (!bytes.ok()) return std::nullopt;
  auto pic = codecs::read_image_as(*bytes, PixelFormat::RGBA);
  if (!pic.ok()) return std::nullopt;
  return std::move(*pic);
}

struct PictureDiff {
  bool same_size = false;
  int64_t differing_pixels = 0;
  double psnr_db = 0;  // RGB; +inf when identical
  std::string describe() const {
    if (!same_size) return "different sizes";
    return std::to_string(differing_pixels) + " pixels differ, PSNR " + std::to_string(psnr_db) + " dB";
  }
};

// Compares the RGB of two RGBA pictures.
inline PictureDiff compare_rgb(const Picture& a, const Picture& b) {
  PictureDiff d;
  if (a.width() != b.width() || a.height() != b.height()) return d;
  d.same_size = true;
  auto av = a.read();
  auto bv = b.read();
  double sq = 0;
  for (int y = 0; y < a.height(); ++y) {
    const uint8_t* ra = av->plane(0).row(y).data();
    const uint8_t* rb = bv->plane(0).row(y).data();
    for (int x = 0; x < a.width(); ++x) {
      bool differ = false;
      for (int c = 0; c < 3; ++c) {
        const int e = int(ra[4 * x + c]) - int(rb[4 * x + c]);
        sq += double(e) * e;
        differ |= e != 0;
      }
      d.differing_pixels += differ;
    }
  }
  const double mse = sq / (3.0 * a.width() * a.height());
  d.psnr_db = mse == 0 ? INFINITY : 10.0 * std::log10(255.0 * 255.0 / mse);
  return d;
}

// How many distinct RGB colours (up to `cap`): 1 means blank.
inline int distinct_colours(const Picture& p, int cap = 16) {
  std::set<uint32_t> seen;
  auto v = p.read();
  for (int y = 0; y < p.height() && int(seen.size()) < cap; ++y) {
    const uint8_t* r = v->plane(0).row(y).data();
    for (int x = 0; x < p.width() && int(seen.size()) < cap; ++x)
      seen.insert(uint32_t(r[4 * x]) | uint32_t(r[4 * x + 1]) << 8 | uint32_t(r[4 * x + 2]) << 16);
  }
  return int(seen.size());
}

}  // namespace pixpath::testing
