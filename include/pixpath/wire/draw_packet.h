// Wire types (the "wire" area: below codecs, paint and net, above core only): a draw packet as
// an xpra server sends it, already pulled out of the wire format, and the acknowledgement the
// client owes for each one. Shared by the network client (which fills DrawPacket from a "draw"
// packet and sends DamageAck as "damage-sequence"), the recording reader, the decoders and the
// paint engine. Plain values: copy or move them freely; `data` shares its bytes.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pixpath/core/shared_bytes.h"

namespace pixpath {

// One rectangle of a "scroll" draw: copy (x, y, w, h) of the picture as it was before any
// rectangle of this packet was applied, to (x, y + dy)... (xpra sends dx too; it is 0 today).
struct ScrollRect {
  int x = 0, y = 0, w = 0, h = 0;
  int dx = 0, dy = 0;
};

// The draw options that matter for painting (xpra's "options" dict). Unknown keys are dropped
// by the parser; fields left at their defaults were absent.
struct DrawOptions {
  std::string rgb_format;               // "BGRX", "RGBA", ... for rgb24/rgb32
  int zlib = 0;                         // zlib compression level of the data, 0 = none
  int lz4 = 0;                          // lz4 compression, 0 = none
  std::optional<int64_t> store;         // keep the result in `bucket` under this sequence
  std::optional<int64_t> delta;         // XOR with the picture stored in `bucket` under this
  int bucket = 0;
  std::optional<int64_t> flush;         // packets still to come in this batch (present at 0)
  std::optional<int64_t> alpha_offset;  // jpega: byte offset of the alpha JPEG
  std::optional<int> scaled_width, scaled_height;  // the size actually encoded
  std::vector<ScrollRect> scroll;       // coding "scroll"
  bool paint = true;                    // false: decode (and store) but do not paint
  int quality = -1;                     // encoder hint
  // Video codings (h264, vp8, vp9): the input colourspace ("YUV420P", ...; required there),
  // the frame number in the stream (0 = a new stream), and how many frames the encoder still
  // holds back that this one references (> 0: no picture yet is not an error).
  std::string csc;
  std::optional<int64_t> frame;
  int64_t delayed = 0;
};

struct DrawPacket {
  int64_t wid = 0;
  int x = 0, y = 0, w = 0, h = 0;
  std::string coding;  // "rgb24", "rgb32", "jpeg", "jpega", "png", "png/L", "png/P", "webp",
                       // "scroll", "void", ...
  SharedBytes data;
  int64_t sequence = 0;  // packet_sequence, echoed in the acknowledgement
  int rowstride = 0;     // rgb codings: bytes per row of the (decompressed) data
  DrawOptions options;
  // When the packet was taken off the wire (or replayed): decode-to-paint time starts here.
  std::chrono::steady_clock::time_point received{};
};

// The one acknowledgement every draw packet ends in (xpra "damage-sequence").
struct DamageAck {
  int64_t sequence = 0;
  int64_t wid = 0;
  int w = 0, h = 0;
  int64_t decode_time_us = 0;  // > 0 real decode-to-paint time, -1 decode error, 0 skipped
  std::string message;         // the reason, for errors and skips
};

}  // namespace pixpath
