// The xpra byte stream: chunk framing, packet compression (zlib, lz4, brotli), raw chunks,
// bencode and rencodeplus packets (each main chunk's protocol flags choose) and the checked
// field readers, fed in arbitrary splits. Input: 1 byte split seed, then the
// stream. Every completed "draw" goes through parse_draw (or ack_for_rejected_draw), every
// window packet through the readers the session uses.
#include <vector>

#include "fuzz_client.h"
#include "pixpath/net/xpra/chunk_parser.h"
#include "pixpath/net/xpra/draw_parser.h"

using namespace pixpath;
using namespace pixpath::xpra;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  uint32_t seed = data[0] * 2654435761u + 1;
  std::span<const uint8_t> stream(data + 1, size - 1);
  ChunkParser parser(fuzz::frame_limits());
  std::vector<Packet> packets;
  size_t pos = 0;
  while (pos < stream.size()) {
    seed = seed * 1103515245u + 12345u;
    const size_t piece = std::min<size_t>(stream.size() - pos, 1 + (seed >> 16) % 64);
    packets.clear();
    auto fed = parser.feed(stream.subspan(pos, piece), packets);
    pos += piece;
    for (const Packet& p : packets) {
      if (p.type == "draw") {
        auto d = parse_draw(p);
        if (!d.ok()) (void)ack_for_rejected_draw(p.body, d.error());
      } else {
        FieldReader r(p.type, p.body);
        (void)r.int_at(1, "wid");
        (void)r.int_in(4, "w", 0, 32767);
        (void)r.string_at(1, "s");
        (void)r.bytes_at(2, "b");
        (void)p.body.debug_string(120);
        if (auto dct = r.dict_at(1, "caps"); dct.ok()) {
          (void)r.dict_int(**dct, "x", 0);
          (void)r.dict_string(**dct, "version", "");
          (void)(*dct)->find("encodings");
        }
      }
    }
    if (!fed.ok()) {
      // Poisoned: every later feed fails the same way.
      std::vector<Packet> more;
      if (parser.feed(stream.subspan(0, std::min<size_t>(stream.size(), 1)), more).ok()) std::abort();
      break;
    }
  }
  return 0;
}
