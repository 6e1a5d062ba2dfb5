// Encoder: produces the data an xpra server would send for a picture, for tests, the stream
// tools and anyone producing streams.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "pixpath/core/picture_view.h"
#include "pixpath/core/result.h"
#include "pixpath/wire/draw_packet.h"

namespace pixpath::codecs {

enum class Subsampling { S444, S422, S420, Gray };
enum class RgbCompression { None, Zlib, Lz4 };

struct EncodeParams {
  int quality = 90;                    // jpeg, webp (lossy); 100 = lossless webp
  Subsampling subsampling = Subsampling::S420;
  int restart_interval = 0;            // jpeg: MCU rows between restart markers, 0 = none
  RgbCompression compression = RgbCompression::None;  // rgb24/rgb32
  int level = 1;                       // zlib level
};

struct EncodedPicture {
  std::vector<uint8_t> data;
  int width = 0, height = 0;
  int rowstride = 0;    // rgb codings
  DrawOptions options;  // what a draw packet carrying this must say (rgb_format, zlib, lz4,
                        // alpha-offset)
};

class Encoder {
 public:
  virtual ~Encoder() = default;
  virtual std::string_view coding() const = 0;
  virtual bool can_read(PixelFormat format) const = 0;
  virtual Result<EncodedPicture> encode(const ConstPictureView& picture,
                                        const EncodeParams& params) const = 0;
};

}  // namespace pixpath::codecs
