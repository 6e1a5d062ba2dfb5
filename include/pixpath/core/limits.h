// Limits checked before any allocation made on behalf of untrusted input.
#pragma once

#include <cstdint>

namespace pixpath {

struct PictureLimits {
  int max_width = 16384;
  int max_height = 16384;
  uint64_t max_bytes = uint64_t{1} << 31;  // one picture's storage, all planes

  static PictureLimits defaults();  // the process-wide defaults (see set_defaults)
  // Replaces the process-wide defaults. Call at start-up, before other threads use pictures.
  static void set_defaults(const PictureLimits& limits);
};

}  // namespace pixpath
