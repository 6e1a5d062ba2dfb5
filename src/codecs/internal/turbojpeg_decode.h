// TurboJPEG (2.x API) decoding shared by the jpeg and jpega decoders: a per-thread handle, the
// header read with limit checks, and decodes straight into strided destinations.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/codecs/decoder.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs::internal {

struct JpegHeader {
  int width = 0, height = 0;
  int subsampling = 0;  // TJSAMP_*
  int colorspace = 0;   // TJCS_*
  std::string detail;   // "progressive 4:2:0 YCbCr, restart 2"
  bool sequential = false;  // baseline, extended or arithmetic sequential (SOF0, SOF1, SOF9)
};

// Reads and checks the header (size against params).
Result<JpegHeader> read_jpeg_header(std::string_view coding, std::span<const uint8_t> data,
                                    const DecodeParams& params);

// True when TurboJPEG can write `format` directly (packed RGB orders, GRAY8).
bool turbojpeg_packed_format(PixelFormat format);

// Decodes into a packed destination (RGB..ABGR, GRAY8) of exactly the header's size, with the
// destination's pitch. A TurboJPEG warning is appended to `warnings`; a fatal error returned.
// CMYK and YCCK JPEGs are converted to RGB as Pillow converts them (through a scratch buffer).
Result<void> turbojpeg_decode_packed(std::string_view coding, std::span<const uint8_t> data,
                                     const JpegHeader& header, const PictureView& dst,
                                     std::vector<Error>& warnings);

// Decodes into YUV planes (YUV420P/422P/444P matching the JPEG's subsampling) without colour
// conversion.
Result<void> turbojpeg_decode_planes(std::string_view coding, std::span<const uint8_t> data,
                                     const JpegHeader& header, const PictureView& dst,
                                     std::vector<Error>& warnings);

// The planar pixpath format holding this JPEG's samples without conversion (GRAY8, YUV444P,
// YUV422P, YUV420P), or nothing (4:4:0, 4:1:1, RGB-coded JPEGs).
std::optional<PixelFormat> jpeg_planar_format(const JpegHeader& header);

}  // namespace pixpath::codecs::internal
