// Shared by the network-side fuzz targets: limits small enough for libFuzzer's memory budget,
// and paint_draw(), which takes one parsed draw through what the paint engine does with it —
// decode (straight into the framebuffer when the engine would, else into a private picture),
// delta buckets, paint or scroll — synchronously, on one thread, so that a finding replays
// deterministically.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include "fuzz_common.h"
#include "internal/draw_decoding.h"
#include "pixpath/net/xpra/framing.h"
#include "pixpath/paint/cpu_backing.h"
#include "pixpath/paint/delta_buckets.h"

namespace pixpath::fuzz {

inline xpra::FrameLimits frame_limits() {
  xpra::FrameLimits l;
  l.max_chunk_size = 1 << 20;
  l.max_packet_size = 2 << 20;
  l.max_decompressed_size = 8 << 20;
  return l;
}

// The engine's complete_draw() without threads. Returns the ack it would send (> 0, 0, -1).
inline int paint_draw(paint::CpuBacking& backing, paint::DeltaBuckets& buckets,
                      const DrawPacket& p) {
  using namespace paint;
  if (!backing.window_size(p.wid)) return 0;
  if (p.coding == "void") return 1;
  if (p.coding == "scroll") return backing.scroll(p.wid, p.options.scroll).ok() ? 1 : -1;
  const codecs::Decoder* d = codecs::CodecRegistry::builtin().decoder(p.coding);
  if (!d) return -1;
  const codecs::DecodeLimits limits = codecs::fuzz::fuzz_limits();
  std::vector<Error> warnings;
  if (internal::direct_capable(p, *d, backing.format())) {
    auto target = backing.begin_direct(p.wid, Rect{p.x, p.y, p.w, p.h});
    if (target.ok()) {
      auto r = internal::decode_direct(p, *d, target->view, limits, warnings);
      if (!backing.end_direct(*target, r.ok()).ok()) std::abort();  // must always close
      return r.ok() ? 1 : -1;
    }
  }
  auto pic = internal::decode_private(p, *d, backing.format(), limits, warnings);
  if (!pic.ok()) return -1;
  Picture picture = std::move(pic).value();
  if (p.options.delta || p.options.store) {
    auto r = buckets.apply(std::move(picture), p.options, p.coding);
    if (!r.ok()) return -1;
    picture = std::move(r).value();
  }
  if (p.options.paint && !backing.paint(p.wid, p.x, p.y, picture, p.w, p.h).ok()) return -1;
  return 1;
}

}  // namespace pixpath::fuzz
