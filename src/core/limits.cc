#include "pixpath/core/limits.h"

#include <atomic>

namespace pixpath {
namespace {
// Written once at start-up (see set_defaults); atomics keep late readers race-free.
std::atomic<int> g_max_width{16384}, g_max_height{16384};
std::atomic<uint64_t> g_max_bytes{uint64_t{1} << 31};
}  // namespace

PictureLimits PictureLimits::defaults() {
  return {g_max_width.load(), g_max_height.load(), g_max_bytes.load()};
}

void PictureLimits::set_defaults(const PictureLimits& limits) {
  g_max_width = limits.max_width;
  g_max_height = limits.max_height;
  g_max_bytes = limits.max_bytes;
}

}  // namespace pixpath
