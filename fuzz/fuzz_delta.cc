// Delta buckets: a sequence of small uncompressed rgb draws with store / delta / bucket values
// taken from the input, through decode, DeltaBuckets and paint into one window. Checks the
// XOR rule: a successful delta against bucket B paints (stored pixels XOR data), and a failed
// one leaves the buckets unchanged.
// Input: records of 8 bytes: w-1 (0..7), h-1 (0..7), bucket (-1..6), flags (bit 0 store,
// bit 1 delta, bit 2 rgb24 instead of rgb32, bit 3 RGBX instead of BGRX, bit 4 paint=false),
// store sequence, delta sequence, x, fill byte.
#include <cstring>

#include "fuzz_client.h"

using namespace pixpath;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  paint::CpuBacking backing;
  paint::DeltaBuckets buckets;
  if (!backing.create_window(1, 16, 16).ok()) std::abort();
  int64_t seq = 0;
  for (size_t i = 0; i + 8 <= size && seq < 64; i += 8) {
    const uint8_t* r = data + i;
    DrawPacket p;
    p.wid = 1;
    p.w = 1 + r[0] % 8;
    p.h = 1 + r[1] % 8;
    p.x = r[6] % 12;
    p.y = (r[6] >> 4) % 12;
    p.sequence = ++seq;
    const bool rgb24 = r[3] & 4;
    p.coding = rgb24 ? "rgb24" : "rgb32";
    p.options.rgb_format = rgb24 ? ((r[3] & 8) ? "RGB" : "BGR") : ((r[3] & 8) ? "RGBX" : "BGRX");
    p.options.bucket = int(r[2] % 8) - 1;
    if (r[3] & 1) p.options.store = r[4] % 4;
    if (r[3] & 2) p.options.delta = r[5] % 4;
    p.options.paint = !(r[3] & 16);
    const int bpp = rgb24 ? 3 : 4;
    p.rowstride = p.w * bpp;
    std::vector<uint8_t> px(size_t(p.rowstride) * size_t(p.h));
    for (size_t k = 0; k < px.size(); ++k) px[k] = uint8_t(r[7] + k * 7);
    p.data = SharedBytes::copy_of(std::span<const uint8_t>(px));

    // What the XOR must give, from the bucket as it is before this draw.
    std::optional<Picture> before;
    const int b = p.options.bucket;
    if (b >= 0 && b < buckets.count() && buckets.bucket(b)) before = buckets.bucket(b)->picture;
    const int ack = fuzz::paint_draw(backing, buckets, p);
    if (ack > 0 && p.options.delta) {
      // The bucket held sequence *delta with the same size and format: with store, the bucket
      // now holds data XOR what it held.
      if (!before || before->width() != p.w || before->height() != p.h) std::abort();
      if (p.options.store) {
        auto ref = before->read();
        auto now = buckets.bucket(b)->picture.read();
        if (!ref.ok() || !now.ok()) std::abort();
        const size_t row = size_t(p.w) * size_t(bpp);
        for (int y = 0; y < p.h; ++y)
          for (size_t k = 0; k < row; ++k)
            if (now->plane(0).row(y)[k] != uint8_t(px[size_t(y) * row + k] ^ ref->plane(0).row(y)[k]))
              std::abort();
      }
    }
    if (ack < 0 && before) {
      // A failed draw leaves its bucket as it was.
      const auto& now = buckets.bucket(b);
      if (!now || now->picture.content_id() != before->content_id()) std::abort();
    }
  }
  return 0;
}
