// ClientLimits: every limit a view-only client puts on what an untrusted xpra server can make
// it allocate, decode, queue or keep, in one struct with safe defaults, and how each reaches
// the part that enforces it:
//
//   limit                         enforced by                        on violation
//   frame.max_chunk_size          ChunkParser (before allocating)    disconnect with the reason
//   frame.max_packet_size         ChunkParser                        disconnect with the reason
//   frame.max_decompressed_size   ChunkParser (zlib/lz4 packets)     disconnect with the reason
//   frame.max_depth, max_items    bencode decoder                    disconnect with the reason
//   decode.max_width/height/pixels  decoders (before allocating)     draw acked -1, logged
//   decode.max_decompressed_bytes   rgb zlib/lz4, PNG inflate         draw acked -1, logged
//   picture (process-wide)        Picture::allocate / wrap           the allocation fails
//   max_windows, max_window_pixels  Session (new-window, resize)     window refused, logged;
//                                                                    its draws acked 0
//   max_queued_draws/bytes        PaintEngine::submit                draw acked -1, logged
//   send_timeout                  SocketTransport (SO_SNDTIMEO)      session ends, reason given
//   stall_timeout                 Session reader                     session ends, reason given
//
// Threading: a plain value. apply_picture_limits() changes process-wide defaults: call it at
// start-up, before other threads make pictures.
#pragma once

#include <chrono>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "pixpath/codecs/decoder.h"
#include "pixpath/core/limits.h"
#include "pixpath/core/result.h"
#include "pixpath/net/xpra/framing.h"

namespace pixpath::xpra {
struct SessionOptions;
}
namespace pixpath::paint {
struct PaintEngineConfig;
}

namespace pixpath::client {

struct ClientLimits {
  // Packet sizes as sent and after packet compression (64 MiB chunks, 128 MiB packets and
  // decompressed packets, bencode nesting 32, 4 raw chunks a packet, 256 Ki values a packet:
  // a 3.1 hello has a few thousand).
  xpra::FrameLimits frame{size_t{64} << 20, size_t{128} << 20, size_t{128} << 20, 32, 4,
                          size_t{1} << 18};
  // Per draw: pictures up to 8192 x 8192, 128 MiB of decompressed rgb / PNG data.
  codecs::DecodeLimits decode{8192, 8192, uint64_t{8192} * 8192, uint64_t{128} << 20};
  // Every picture allocation in the process: 8192 x 8192, 256 MiB (one 8K BGRX picture).
  PictureLimits picture{8192, 8192, uint64_t{256} << 20};
  int max_windows = 64;                                // windows at once
  int64_t max_window_pixels = int64_t{128} << 20;      // all windows' area (x4 bytes in BGRX)
  int max_queued_draws = 256;                          // draws waiting for their paint
  uint64_t max_queued_bytes = uint64_t{256} << 20;     // their data
  std::chrono::milliseconds send_timeout{10000};
  std::chrono::milliseconds stall_timeout{30000};

  // The defaults above (what a default-constructed ClientLimits holds).
  static ClientLimits defaults() { return ClientLimits{}; }

  // Setters for the limits that several fields carry (`pixpath attach`'s --max-... options
  // use them). Each keeps those fields consistent, and refuses (InvalidArgument, nothing
  // changed) a value that would leave nothing allowed.
  //
  // Pictures up to width x height, each 1..65535: the decoders' limits, and the process-wide
  // picture limits, whose byte limit grows to hold one 4-byte-per-pixel picture of that size.
  [[nodiscard]] Result<void> set_max_picture_size(int width, int height);
  // One packet as sent, all its chunks (> 0); a chunk is never allowed more than that.
  [[nodiscard]] Result<void> set_max_packet_size(uint64_t bytes);
  // zlib/lz4 output of one packet, and of one draw's data (> 0).
  [[nodiscard]] Result<void> set_max_decompressed_size(uint64_t bytes);
};

// Copies the limits into the options of the parts that enforce them.
void apply_limits(const ClientLimits& limits, xpra::SessionOptions& session);
void apply_limits(const ClientLimits& limits, paint::PaintEngineConfig& engine);
// PictureLimits::set_defaults(limits.picture): start-up only (see above).
void apply_picture_limits(const ClientLimits& limits);

// The limits as JSON, for `pixpath info --json` (keys named like the command-line options,
// sizes in bytes, times in milliseconds).
nlohmann::json limits_json(const ClientLimits& limits);

}  // namespace pixpath::client
