// Turns an xpra 3.1 "draw" packet into pixpath's DrawPacket:
//   ["draw", wid, x, y, w, h, coding, data, packet_sequence, rowstride, options]
// `data` becomes a SharedBytes slice of the received chunk (no copy). For coding "scroll" the
// data item is the list of (x, y, w, h, dx, dy) rectangles; it goes to options.scroll and
// `data` stays empty.
#pragma once

#include <optional>

#include "pixpath/core/result.h"
#include "pixpath/net/xpra/chunk_parser.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::xpra {

// Parses every field and the options that matter for painting (see DrawOptions). A field or
// option of the wrong type, or a size out of range, is an ErrorCode::Protocol error naming
// the field ("xpra parse draw: option 'zlib' is bytes, expected int").
[[nodiscard]] Result<DrawPacket> parse_draw(const Packet& packet);

// For a draw that parse_draw rejected: the acknowledgement the client still owes
// (decode_time -1, the error as message), when at least the sequence number is readable.
// wid / w / h are filled when they are readable too, else 0.
std::optional<DamageAck> ack_for_rejected_draw(const Value& body, const Error& error);

}  // namespace pixpath::xpra
