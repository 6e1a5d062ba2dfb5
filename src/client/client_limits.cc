#include "pixpath/client/client_limits.h"

#include "pixpath/net/xpra/session.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::client {

void apply_limits(const ClientLimits& l, xpra::SessionOptions& s) {
  s.limits = l.frame;
  s.max_windows = l.max_windows;
  s.max_window_pixels = l.max_window_pixels;
  s.send_timeout = l.send_timeout;
  s.stall_timeout = l.stall_timeout;
}

void apply_limits(const ClientLimits& l, paint::PaintEngineConfig& e) {
  e.limits = l.decode;
  e.max_queued_draws = l.max_queued_draws;
  e.max_queued_bytes = l.max_queued_bytes;
}

void apply_picture_limits(const ClientLimits& l) { PictureLimits::set_defaults(l.picture); }

nlohmann::json limits_json(const ClientLimits& l) {
  return {
      {"max_picture_width", l.decode.max_width},
      {"max_picture_height", l.decode.max_height},
      {"max_picture_pixels", l.decode.max_pixels},
      {"max_picture_bytes", l.picture.max_bytes},
      {"max_chunk_size", l.frame.max_chunk_size},
      {"max_packet_size", l.frame.max_packet_size},
      {"max_decompressed_size", l.frame.max_decompressed_size},
      {"max_draw_decompressed_size", l.decode.max_decompressed_bytes},
      {"max_bencode_depth", l.frame.max_depth},
      {"max_bencode_items", l.frame.max_items},
      {"max_raw_chunks", l.frame.max_raw_chunks},
      {"max_windows", l.max_windows},
      {"max_window_pixels", l.max_window_pixels},
      {"max_queued_packets", l.max_queued_draws},
      {"max_queued_bytes", l.max_queued_bytes},
      {"send_timeout_ms", l.send_timeout.count()},
      {"stall_timeout_ms", l.stall_timeout.count()},
  };
}

}  // namespace pixpath::client
