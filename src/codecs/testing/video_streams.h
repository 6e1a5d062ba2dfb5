// Test and benchmark helper: short video streams made with libavcodec's encoders (libx264,
// libvpx), from synthetic moving content, so the video decoder's tests need no data files.
// Not part of the library.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs::testing {

struct VideoStream {
  std::vector<Picture> sources;                 // the frames encoded (YUV), in order
  std::vector<std::vector<uint8_t>> packets;    // one per source frame (no reordering)
};

// Moving YUV content: a gradient and a box travelling `frame` pixels.
Picture moving_yuv_frame(PixelFormat format, int width, int height, int frame);

// `frames` frames of `coding` ("h264", "vp8", "vp9") at width x height in `csc` (YUV420P or
// YUV444P), one key frame first, then P frames only (low latency, no B-frames).
// `identity_matrix`: the stream says its matrix is the identity (RGB) though it carries YUV, as
// xpra 6.x's x264 encoder marks every stream (libavcodec decodes h264 4:4:4 of it as GBRP).
Result<VideoStream> encode_video(const std::string& coding, int width, int height, int frames,
                                 PixelFormat csc = PixelFormat::YUV420P,
                                 bool identity_matrix = false);

// PSNR (dB) of plane 0 (luma) of two same-size YUV pictures; +inf when identical.
double luma_psnr(const Picture& a, const Picture& b);

// PSNR (dB) over R, G and B of the region of `window` at (x, y) the size of `expected`, both
// 4-byte-per-pixel pictures of the same channel order (BGRX, RGBX; the fourth byte is left
// out); +inf when identical. The region must lie inside `window`.
double region_psnr(const Picture& window, int x, int y, const Picture& expected);

}  // namespace pixpath::codecs::testing
