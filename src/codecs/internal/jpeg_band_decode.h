// One JPEG decoded on several cores: horizontal bands, each on its own thread, with
// libjpeg-turbo's libjpeg API. A band's thread skips the rows above it with
// jpeg_skip_scanlines (Huffman decoding only: about 33-57% of a full decode on the screen
// JPEGs) and decodes its own rows in full; the bands shrink down the picture so that they end
// together. Output is byte for byte tjDecompress2's (same IDCT, fancy upsampling and colour
// conversion; jpeg_band_decode_test checks it).
//
// Threading: a decode spawns its helper threads and joins them before it returns; the only
// shared state is an atomic count of threads decoding JPEGs (this process, every caller), from
// which the number of bands is chosen so that spare cores are used and busy ones are not.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "turbojpeg_decode.h"
#include "pixpath/core/picture_view.h"

namespace pixpath::codecs::internal {

// Bands for this picture now: 1 (decode it whole) for pictures under about a megapixel, for
// progressive or non-YCbCr JPEGs and when every core is busy decoding; up to 4 otherwise.
// PIXPATH_JPEG_BANDS=N caps it (1 turns banding off).
int jpeg_band_count(const JpegHeader& header, PixelFormat format);

// Decodes `data` into the packed destination (RGB..ABGR orders) in `bands` bands, one of them
// on the calling thread. Returns false, having written nothing that counts, when the JPEG is
// not one it takes (progressive, not 3-component YCbCr) or when a band met a libjpeg warning or
// error: the caller then decodes it whole with tjDecompress2, which reports them as always.
bool jpeg_decode_packed_in_bands(std::span<const uint8_t> data, const JpegHeader& header,
                                 const PictureView& dst, int bands);

// Threads decoding a JPEG right now in this process, and the pictures decoded in bands so far
// (tests, benchmarks).
int jpeg_threads_busy();
int64_t jpeg_banded_decodes();

// Marks the calling thread as decoding a JPEG for its lifetime (the count above).
class JpegBusyMark {
 public:
  JpegBusyMark();
  ~JpegBusyMark();
  JpegBusyMark(const JpegBusyMark&) = delete;
  JpegBusyMark& operator=(const JpegBusyMark&) = delete;
};

}  // namespace pixpath::codecs::internal
