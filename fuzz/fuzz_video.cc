// Video draws (h264, vp8, vp9) through the paint engine and the CPU backing, as `pixpath
// attach` paints them: the window's stream decoder made, re-made and dropped by the draws'
// options, libavcodec on hostile bitstreams, frames painted with libyuv (scaled or clipped).
// Input: 4 header bytes — coding (h264, vp8, vp9 by value % 3), csc (YUV420P, YUV422P,
// YUV444P, or none), encoded width and height ((byte % 64 + 1) * 2) — then packets, each a
// 2-byte little-endian length, 1 flag byte (bit 0: frame 0, bit 1: delayed, bit 2: scaled to
// twice the size, bit 3: another size) and that many bytes.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/paint_engine.h"

using namespace pixpath;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 4) return 0;
  static const char* kCodings[] = {"h264", "vp8", "vp9"};
  static const char* kCsc[] = {"YUV420P", "YUV422P", "YUV444P", ""};
  const std::string coding = kCodings[data[0] % 3];
  const std::string csc = kCsc[data[1] % 4];
  const int w = (data[2] % 64 + 1) * 2, h = (data[3] % 64 + 1) * 2;
  paint::CpuBacking backing;
  paint::PaintEngineConfig c;
  c.decode_threads = 1;
  int64_t acks = 0;
  c.on_ack = [&](const DamageAck& a, const paint::PaintReport&) {
    if (a.decode_time_us < 0 && a.message.empty()) std::abort();  // an error says why
    acks++;
  };
  auto engine = paint::PaintEngine::create(backing, std::move(c));
  if (!engine.ok()) std::abort();
  (*engine)->window_new(1, 160, 140);
  size_t at = 4;
  int64_t seq = 0;
  while (at + 3 <= size && seq < 64) {
    const size_t n = data[at] | size_t(data[at + 1]) << 8;
    const uint8_t flags = data[at + 2];
    at += 3;
    const size_t take = std::min(n, size - at);
    DrawPacket p;
    p.wid = 1;
    p.sequence = ++seq;
    p.coding = coding;
    p.x = flags & 16 ? 100 : 0;  // partly outside the window
    p.y = 0;
    p.w = w << (flags & 4 ? 1 : 0);
    p.h = h << (flags & 4 ? 1 : 0);
    if (flags & 8) p.w += 2;
    if (flags & 4) {
      p.options.scaled_width = w;
      p.options.scaled_height = h;
    }
    p.data = SharedBytes::copy_of(std::span<const uint8_t>(data + at, take));
    p.options.csc = csc;
    if (flags & 1) p.options.frame = 0;
    if (flags & 2) p.options.delayed = 1;
    (*engine)->submit(std::move(p));
    at += take;
  }
  if (!(*engine)->wait_idle(std::chrono::seconds(30))) std::abort();
  if (acks != seq) std::abort();  // one ack per draw
  (*engine)->window_lost(1);
  (*engine)->shutdown();
  return 0;
}
