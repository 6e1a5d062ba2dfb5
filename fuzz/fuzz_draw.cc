// One draw packet, from its bencoded body to the framebuffer: parse_draw (fields and
// options), then what the paint engine does with it — decode (direct or private), delta
// buckets, paint or scroll — into a window as large as the draw's right and bottom edges
// (at most 512 x 512). Input: the list ["draw", wid, x, y, w, h, coding, data, sequence,
// rowstride, options], bencoded (as xpra 3.1 sends it) or, when that does not decode, in
// rencodeplus (xpra 6.x: strings and bytes kept apart, floats, None among the options).
#include "fuzz_client.h"
#include "pixpath/net/xpra/bencode.h"
#include "pixpath/net/xpra/draw_parser.h"
#include "pixpath/net/xpra/rencode.h"

using namespace pixpath;
using namespace pixpath::xpra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const SharedBytes in = SharedBytes::copy_of(std::span<const uint8_t>(data, size));
  auto body = bencode_decode(in);
  if (!body.ok()) body = rencode_decode(in);
  if (!body.ok() || !body->is_list() || body->as_list().empty() || !body->as_list()[0].is_bytes())
    return 0;
  Packet p;
  p.type = std::string(body->as_list()[0].as_view());
  p.body = std::move(*body);
  auto d = parse_draw(p);
  if (!d.ok()) {
    (void)ack_for_rejected_draw(p.body, d.error());
    return 0;
  }
  paint::CpuBacking backing;
  paint::DeltaBuckets buckets;
  const int ww = std::clamp(d->x + d->w, 1, 512), wh = std::clamp(d->y + d->h, 1, 512);
  if (!backing.create_window(d->wid, ww, wh).ok()) std::abort();
  // Twice: a store followed by a delta against it is the common real sequence.
  fuzz::paint_draw(backing, buckets, *d);
  if (d->options.store) {
    DrawPacket again = *d;
    again.options.delta = d->options.store;
    fuzz::paint_draw(backing, buckets, again);
  }
  return 0;
}
