#include "pixpath/client/client_limits.h"

#include <algorithm>
#include <limits>
#include <string>

#include "pixpath/net/xpra/session.h"
#include "pixpath/paint/paint_engine.h"

namespace pixpath::client {
namespace {

constexpr int kMaxPictureSide = 65535;

Error refused(std::string stage, std::string reason) {
  return Error(ErrorCode::InvalidArgument, "client limits", std::move(stage), std::move(reason));
}

}  // namespace

Result<void> ClientLimits::set_max_picture_size(int width, int height) {
  if (width < 1 || height < 1 || width > kMaxPictureSide || height > kMaxPictureSide) {
    return refused("max picture size", "each side must be 1.." + std::to_string(kMaxPictureSide) +
                                           ", not " + std::to_string(width) + "x" +
                                           std::to_string(height));
  }
  const uint64_t pixels = uint64_t(width) * uint64_t(height);
  decode.max_width = width;
  decode.max_height = height;
  decode.max_pixels = pixels;
  picture.max_width = width;
  picture.max_height = height;
  picture.max_bytes = std::max<uint64_t>(picture.max_bytes, pixels * 4);
  return ok();
}

Result<void> ClientLimits::set_max_packet_size(uint64_t bytes) {
  if (bytes == 0 || bytes > std::numeric_limits<size_t>::max()) {
    return refused("max packet size", "must be at least 1 byte and fit in memory, not " +
                                          std::to_string(bytes));
  }
  frame.max_packet_size = size_t(bytes);
  frame.max_chunk_size = std::min(frame.max_chunk_size, size_t(bytes));
  return ok();
}

Result<void> ClientLimits::set_max_decompressed_size(uint64_t bytes) {
  if (bytes == 0 || bytes > std::numeric_limits<size_t>::max()) {
    return refused("max decompressed size", "must be at least 1 byte and fit in memory, not " +
                                                std::to_string(bytes));
  }
  frame.max_decompressed_size = size_t(bytes);
  decode.max_decompressed_bytes = bytes;
  return ok();
}

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
