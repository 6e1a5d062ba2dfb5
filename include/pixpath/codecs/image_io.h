// Picture files for the command line, snapshots and the tests: read JPEG, PNG, WebP,
// PPM/PGM/PAM or raw rgb bytes into a Picture; write PNG, PPM or PAM; whole-file reads and
// writes. The one PNG writer of pixpath is the registry's "png" encoder (encode_png).
// Threading: stateless; call from any thread.
//
// Reading uses the registry's decoders with their default limits (DecodeLimits), so a file is
// as untrusted as a packet. The format is recognised by content (JPEG SOI, PNG signature,
// RIFF/WEBP, P5/P6/P7); raw rgb needs an explicit RawImageSpec.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pixpath/codecs/decoder.h"
#include "pixpath/core/picture.h"
#include "pixpath/core/result.h"

namespace pixpath::codecs {

struct RawImageSpec {
  int width = 0, height = 0;
  PixelFormat format = PixelFormat::RGB;  // any packed RGB order (an xpra rgb_format)
  int rowstride = 0;                      // 0 = width * bytes per pixel
};

// "jpeg", "png", "webp", "pnm" or "" when the bytes are none of those.
std::string sniff_image(std::span<const uint8_t> bytes);

// Decodes image bytes (as sniff_image recognises them, or raw rgb when `raw` is given).
// JPEG gives RGB (GRAY8 for gray JPEGs; CMYK/YCCK JPEGs are converted to RGB, see the jpeg
// decoder), PNG and WebP RGB or RGBA, PNM RGB, GRAY8 or RGBA. The result carries the decoder's
// warnings (Severity::Warning): a damaged stream that still decoded ("Premature end of JPEG
// file", "Corrupt JPEG data: ..."); its picture is usable but not what was encoded.
Result<DecodeResult> decode_image(std::span<const uint8_t> bytes,
                                  const std::optional<RawImageSpec>& raw = std::nullopt);
Result<DecodeResult> decode_image_file(const std::string& path,
                                       const std::optional<RawImageSpec>& raw = std::nullopt);
// The same without the warnings, for callers that only compare pixels (tests, snapshots).
Result<Picture> read_image(std::span<const uint8_t> bytes,
                           const std::optional<RawImageSpec>& raw = std::nullopt);
Result<Picture> read_image_file(const std::string& path,
                                const std::optional<RawImageSpec>& raw = std::nullopt);
// read_image, then converted to `format` (any packed RGB order or GRAY8; converting to a
// format with alpha gives opaque pixels where the file has none). For comparing pictures.
Result<Picture> read_image_as(std::span<const uint8_t> bytes, PixelFormat format);

// PPM (P6, from RGB), PGM (P5, from GRAY8) or PAM (P7: GRAYSCALE, RGB or RGB_ALPHA). Other
// packed formats are converted first (to RGBA when they have alpha, else RGB).
Result<std::vector<uint8_t>> encode_pnm(const ConstPictureView& picture, bool pam);
// PNG with the registry's "png" encoder (packed RGB orders and GRAY8; alpha is kept when the
// format has it) at zlib `level` (0-9).
Result<std::vector<uint8_t>> encode_png(const ConstPictureView& picture, int level = 6);
// Writes by the extension: .png, .ppm/.pgm/.pnm, .pam.
Result<void> write_image_file(const std::string& path, const ConstPictureView& picture);

// A whole file; ErrorCode::LimitExceeded (nothing returned) when it is larger than
// `max_bytes`, ErrorCode::Io when it cannot be read.
Result<std::vector<uint8_t>> read_file(const std::string& path,
                                       size_t max_bytes = std::numeric_limits<size_t>::max());
// Creates or truncates `path` and writes `bytes`; ErrorCode::Io on any failure.
Result<void> write_file(const std::string& path, std::span<const uint8_t> bytes);

}  // namespace pixpath::codecs
