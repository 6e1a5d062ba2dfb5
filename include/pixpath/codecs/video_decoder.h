// VideoDecoder: one window's video stream (h264, vp8, vp9) decoded on the CPU by libavcodec,
// into pixpath storage, handed out as read-only YUV pictures with no copy.
//
// Streams. Unlike the picture decoders (decoder.h), a video decoder has state: each frame may
// reference earlier ones. One VideoDecoder decodes one stream: one coding, one encoded size,
// one input colourspace (xpra's `csc`). The caller (the paint engine, per window) makes a new
// one when a draw says `frame` 0 or changes any of the three (VideoStreamParams::same_stream),
// and drops it when the window goes.
//
// Ownership and lifetime (the zero-copy rule). libavcodec asks for frame memory through
// get_buffer2; every such buffer is a block of a StoragePool owned by the decoder, wrapped in
// an AVBuffer (av_buffer_create) whose free callback drops the pool storage. A decoded frame
// comes out as a Picture whose storage is read-only and holds one more reference to that
// AVBuffer (its release action is av_buffer_unref): while the picture lives, the block is
// neither reused by the pool nor written by the decoder (libavcodec writes only buffers it
// has just been given), and the picture cannot be written through pixpath (read-only). Each
// buffer's free callback runs exactly once, when the last of {the decoder's references, the
// pictures} goes, on whatever thread drops it last; pictures may outlive the decoder.
// video_buffer_counters() counts buffers made and freed, so tests prove it.
//
// Errors (every one names the coding, the stage and the reason): an unsupported coding or
// csc, a size over the limits (refused before anything is allocated), corrupt or truncated
// data (libavcodec's error or a frame flagged corrupt), a stream whose frames do not have the
// size or colourspace the draw says. After an error the caller drops the decoder: the server
// sends a key frame (frame 0) after a -1 ack.
//
// Threading: one VideoDecoder is used by one thread at a time (not synchronised); pictures it
// returned may be read and dropped on any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/codecs/decoder.h"
#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs {

// The largest stream a video decoder takes (the client says so as video_max_size).
inline constexpr int kVideoMaxWidth = 8192;
inline constexpr int kVideoMaxHeight = 8192;

struct VideoStreamParams {
  std::string coding;  // "h264", "vp8", "vp9"
  int width = 0;       // the encoded size (the draw's scaled_size, else its w x h)
  int height = 0;
  std::string csc;     // xpra's input colourspace: "YUV420P", "YUV422P" or "YUV444P"
  DecodeLimits limits;  // also capped at kVideoMax*
  int threads = 1;     // libavcodec slice threads (1: decode on the calling thread only)

  bool same_stream(const VideoStreamParams& o) const {
    return coding == o.coding && width == o.width && height == o.height && csc == o.csc;
  }
};

// How the YUV values map to RGB, as the stream signals it.
struct VideoColor {
  bool bt709 = false;       // else BT.601
  bool full_range = false;  // else studio range (Y 16..235)
  // The planes are G, B, R (no YUV at all): an h264 4:4:4 stream with the identity matrix whose
  // draw says the server encoded RGB; the picture says YUV444P. (xpra 6.x marks every h264
  // stream with the identity matrix: with csc YUV444P its planes are Y, Cb, Cr, not G, B, R.)
  bool gbr = false;
  bool operator==(const VideoColor&) const = default;
};

struct VideoFrame {
  Picture picture;  // YUV420P, YUV422P or YUV444P; read-only; the encoded size
  VideoColor color;
};

struct VideoDecoderStats {
  int64_t packets = 0;     // decode() calls
  int64_t frames = 0;      // pictures returned
  int64_t no_picture = 0;  // decode() calls that returned no picture (held back frames)
};

class VideoDecoder {
 public:
  static Result<std::unique_ptr<VideoDecoder>> create(const VideoStreamParams& params);
  ~VideoDecoder();
  VideoDecoder(const VideoDecoder&) = delete;
  VideoDecoder& operator=(const VideoDecoder&) = delete;

  const VideoStreamParams& params() const;
  // Decodes one packet. Returns the newest frame it produced, or nullopt when the decoder
  // produced none yet (a frame held back; xpra marks such draws `delayed`).
  Result<std::optional<VideoFrame>> decode(std::span<const uint8_t> data);
  // End of stream: the frames still held back, oldest first.
  Result<std::vector<VideoFrame>> flush();
  VideoDecoderStats stats() const;

  struct Impl;

 private:
  explicit VideoDecoder(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The video codings this build decodes, in preference order (the client advertises them).
std::vector<std::string> video_codings();
bool is_video_coding(std::string_view coding);
// The input colourspaces (`csc`) a coding's decoder takes (full_csc_modes).
std::vector<std::string> video_csc_modes(std::string_view coding);
// "libavcodec 59.37.100" (the run-time version) and the decoder's name per coding.
std::string video_library_version();
struct VideoCodecDescription {
  std::string coding;
  std::string decoder;  // libavcodec's decoder name, e.g. "h264"
  std::vector<std::string> csc_modes;
  int max_width = kVideoMaxWidth, max_height = kVideoMaxHeight;
};
std::vector<VideoCodecDescription> describe_video_codecs();

// Frame buffers made through get_buffer2 and freed (process-wide): equal when every frame
// has been released; `live` = made - freed.
struct VideoBufferCounters {
  int64_t made = 0, freed = 0;
  int64_t live() const { return made - freed; }
};
VideoBufferCounters video_buffer_counters();

}  // namespace pixpath::codecs
