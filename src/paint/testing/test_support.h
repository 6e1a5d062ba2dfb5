// Helpers shared by the paint tests: solid and patterned pictures, rgb draw packets, pixel
// reads from backing snapshots.
#pragma once

#include <lz4.h>

#include <cstdint>
#include <string>
#include <vector>

#include "pixpath/core/picture.h"
#include "pixpath/paint/backing.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::paint::testing {

// BGRX bytes of one pixel, packed as 0xXXRRGGBB in memory order B, G, R, X.
inline uint32_t bgrx(uint8_t r, uint8_t g, uint8_t b) {
  return uint32_t{b} | uint32_t{g} << 8 | uint32_t{r} << 16 | 0xFF000000u;
}

// w x h BGRX bytes, pixel (x, y) = f(x, y) (a 0xXXRRGGBB value).
template <class F>
std::vector<uint8_t> bgrx_bytes(int w, int h, F f) {
  std::vector<uint8_t> out(static_cast<size_t>(w) * h * 4);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      uint32_t v = f(x, y);
      uint8_t* p = &out[(static_cast<size_t>(y) * w + x) * 4];
      p[0] = v & 0xFF;
      p[1] = (v >> 8) & 0xFF;
      p[2] = (v >> 16) & 0xFF;
      p[3] = 0xFF;
    }
  return out;
}

inline std::vector<uint8_t> lz4_compress(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(static_cast<size_t>(LZ4_compressBound(static_cast<int>(in.size()))));
  int n = LZ4_compress_default(reinterpret_cast<const char*>(in.data()),
                               reinterpret_cast<char*>(out.data()), static_cast<int>(in.size()),
                               static_cast<int>(out.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

// An rgb32 BGRX draw (lz4-compressed when lz4 is true).
inline DrawPacket rgb_draw(int64_t wid, int64_t seq, int x, int y, int w, int h,
                           const std::vector<uint8_t>& bgrx, bool lz4 = false) {
  DrawPacket p;
  p.wid = wid;
  p.sequence = seq;
  p.x = x;
  p.y = y;
  p.w = w;
  p.h = h;
  p.coding = "rgb32";
  p.rowstride = w * 4;
  p.options.rgb_format = "BGRX";
  if (lz4) {
    p.options.lz4 = 1;
    p.data = SharedBytes::adopt(lz4_compress(bgrx));
  } else {
    p.data = SharedBytes::copy_of(std::span<const uint8_t>(bgrx));
  }
  return p;
}

inline DrawPacket solid_draw(int64_t wid, int64_t seq, int x, int y, int w, int h, uint32_t px,
                             bool lz4 = true) {
  return rgb_draw(wid, seq, x, y, w, h, bgrx_bytes(w, h, [&](int, int) { return px; }), lz4);
}

// The BGRX pixel (x, y) of a BGRX picture, as 0xFFRRGGBB.
inline uint32_t pixel(const Picture& pic, int x, int y) {
  auto v = pic.read();
  const uint8_t* p = v->plane(0).row(y).data() + static_cast<size_t>(x) * 4;
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | 0xFF000000u;
}

inline uint32_t window_pixel(Backing& b, int64_t wid, int x, int y) {
  auto snap = b.snapshot(wid);
  if (!snap.ok()) return 0;
  return pixel(*snap, x, y);
}

}  // namespace pixpath::paint::testing
