// PNG encoding and decoding of whole pictures for snapshots and tests (libspng directly, so
// snapshots do not depend on which codecs a build registered).
// Threading: stateless; call from any thread.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "pixpath/core/picture.h"
#include "pixpath/core/picture_view.h"
#include "pixpath/core/result.h"

namespace pixpath::paint {

// 8-bit RGB PNG of any packed RGB picture (alpha and X bytes are dropped) or GRAY8.
Result<std::vector<uint8_t>> encode_png(const ConstPictureView& picture);
// Any PNG to a new RGBA picture (for comparing snapshots with reference files).
Result<Picture> decode_png_rgba(std::span<const uint8_t> png);

Result<void> write_file(const std::string& path, std::span<const uint8_t> bytes);
Result<std::vector<uint8_t>> read_file(const std::string& path, size_t max_bytes = size_t{1} << 30);

}  // namespace pixpath::paint
