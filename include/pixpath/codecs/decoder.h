// Decoder: one picture coding ("jpeg", "png", "rgb24", ...) decoded on the CPU, straight into
// the memory it will be painted from.
//
// Two ways to decode:
//   decode_into(): into a destination the caller owns (a window framebuffer region, a mapped
//     GL upload buffer), any stride, in any format can_write() accepts. Nothing is written
//     outside the destination, and no intermediate copy of the pixels is made unless the
//     coding itself requires one (then it is counted in counters().copies).
//   decode(): into a new picture (from `pool` when given). Where the coding allows it (raw,
//     uncompressed rgb), the picture wraps the packet bytes themselves, read-only, with no
//     copy at all.
// Untrusted input: dimensions are checked against DecodeLimits before anything is allocated;
// corrupt, truncated or lying input fails with an Error naming the coding, the stage and the
// reason; a recoverable problem (a JPEG that ends early but decodes) is a warning in
// DecodeReport, distinct from a fatal Error.
//
// Threading: decoders are immutable and their methods const; call them from any number of
// threads at once (per-thread library handles are kept internally).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pixpath/core/picture.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/result.h"
#include "pixpath/core/shared_bytes.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath {
class StoragePool;
}

namespace pixpath::codecs {

// Limits on what untrusted input may make a decoder allocate or produce. Settable per call
// without changing signatures (add fields, never parameters).
struct DecodeLimits {
  int max_width = 16384;
  int max_height = 16384;
  uint64_t max_pixels = uint64_t{16384} * 16384;
  uint64_t max_decompressed_bytes = uint64_t{1} << 30;  // zlib/lz4 output, PNG inflate
};

struct DecodeParams {
  // Expected size of the encoded picture (the packet's w x h, or its scaled_size); 0 = take
  // it from the stream. When non-zero and the stream disagrees, decoding fails.
  int width = 0, height = 0;
  int rowstride = 0;                     // rgb codings: bytes per row of the decompressed data
  const DrawOptions* options = nullptr;  // rgb_format, zlib, lz4, alpha_offset; may be null
  DecodeLimits limits;
};

// What inspect() learns from the headers without decoding pixels.
struct ImageInfo {
  int width = 0, height = 0;
  PixelFormat natural_format = PixelFormat::RGB;  // what the data holds without conversion
  bool has_alpha = false;
  std::string detail;  // e.g. "baseline 4:2:0", "png palette 8-bit"
};

struct DecodeReport {
  int width = 0, height = 0;
  std::vector<Error> warnings;  // Severity::Warning: the pixels are usable
};

struct DecodeResult {
  Picture picture;
  std::vector<Error> warnings;
};

class Decoder {
 public:
  virtual ~Decoder() = default;

  virtual std::string_view coding() const = 0;
  virtual Result<ImageInfo> inspect(std::span<const uint8_t> data,
                                    const DecodeParams& params) const = 0;
  // Formats decode_into() can write without an intermediate copy.
  virtual bool can_write(PixelFormat format) const = 0;
  // dst must have exactly the picture's size (see inspect()).
  virtual Result<DecodeReport> decode_into(std::span<const uint8_t> data,
                                           const DecodeParams& params,
                                           const PictureView& dst) const = 0;
  // Into a new picture in `format` (default: a natural format, e.g. the rgb_format of rgb
  // data, RGBA for pictures with alpha). May wrap `data` without a copy (see above).
  virtual Result<DecodeResult> decode(const SharedBytes& data, const DecodeParams& params,
                                      std::optional<PixelFormat> format = std::nullopt,
                                      StoragePool* pool = nullptr) const;
};

}  // namespace pixpath::codecs
