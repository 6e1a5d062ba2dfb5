// Scroll packets against a window: CpuBacking::scroll (the in-place single-rectangle path and
// the copy-all-first path for several) must equal a plain reference — every rectangle copied
// from the content as it was before any was applied, clipped to the window.
// Input: window w-1, h-1 (1 byte each, 1..64), then rectangles of 12 bytes: x, y, w, h, dx,
// dy as int16 little-endian (the top bit of the first byte selects a 32-bit range instead:
// coordinates scaled by 65536, to reach overflow).
#include <cstring>
#include <vector>

#include "fuzz_client.h"

using namespace pixpath;

namespace {

int32_t rd16(const uint8_t* p) { return int16_t(uint16_t(p[0] | (p[1] << 8))); }

uint32_t pixel(const ConstPictureView& v, int x, int y) {
  uint32_t px;
  std::memcpy(&px, v.plane(0).row(y).data() + size_t(x) * 4, 4);
  return px;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const int W = 1 + data[0] % 64, H = 1 + data[1] % 64;
  std::vector<ScrollRect> rects;
  for (size_t i = 2; i + 12 <= size && rects.size() < 16; i += 12) {
    const uint8_t* r = data + i;
    const bool wide = r[0] & 0x80;
    // |s| <= 32768, so s * 65536 stays inside int32 (down to INT32_MIN).
    auto v = [&](int k) -> int { return wide ? rd16(r + 2 * k) * 65536 : rd16(r + 2 * k); };
    rects.push_back(ScrollRect{v(0), v(1), v(2), v(3), v(4), v(5)});
  }
  paint::CpuBacking backing;
  if (!backing.create_window(1, W, H).ok()) std::abort();
  {  // distinct pixels
    Picture pic = Picture::allocate(PixelFormat::BGRX, W, H).value();
    auto v = pic.write().value();
    for (int y = 0; y < H; ++y)
      for (int x = 0; x < W; ++x) {
        const uint32_t px = uint32_t(y * 64 + x) | 0xFF000000u;
        std::memcpy(v.plane(0).row(y).data() + size_t(x) * 4, &px, 4);
      }
    if (!backing.paint(1, 0, 0, pic).ok()) std::abort();
  }
  Picture before = backing.snapshot(1).value();
  // The reference: copy every pixel a rectangle moves, from `before`.
  std::vector<uint32_t> want(size_t(W) * size_t(H));
  auto bv = before.read().value();
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x) want[size_t(y) * size_t(W) + size_t(x)] = pixel(bv, x, y);
  for (const ScrollRect& r : rects) {
    if (r.w <= 0 || r.h <= 0) continue;
    for (int64_t sy = std::max<int64_t>(r.y, 0); sy < std::min<int64_t>(int64_t(r.y) + r.h, H); ++sy) {
      for (int64_t sx = std::max<int64_t>(r.x, 0); sx < std::min<int64_t>(int64_t(r.x) + r.w, W); ++sx) {
        const int64_t dx = sx + r.dx, dy = sy + r.dy;
        if (dx < 0 || dy < 0 || dx >= W || dy >= H) continue;
        want[size_t(dy) * size_t(W) + size_t(dx)] = pixel(bv, int(sx), int(sy));
      }
    }
  }
  auto r = backing.scroll(1, rects);
  if (!r.ok()) return 0;
  Picture after = backing.snapshot(1).value();
  auto av = after.read().value();
  for (int y = 0; y < H; ++y)
    for (int x = 0; x < W; ++x)
      if (pixel(av, x, y) != want[size_t(y) * size_t(W) + size_t(x)]) std::abort();
  return 0;
}
