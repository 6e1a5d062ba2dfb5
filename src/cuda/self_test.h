// The start-up self-test's picture and outcome. The picture is src/cuda/data/selftest.jpg, a
// 320x240 4:2:0 q75 screen crop (xterm text, Xvfb) made by bench/cuda/make_screen_jpegs.sh
// + pnmcut + cjpeg, compiled into the module at build time (cmake/PixpathEmbedFile.cmake).
// The test itself is NvjpegEngine::run_self_test (self_test.cc).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pixpath::cuda {

extern const unsigned char selftest_jpg[];
extern const std::size_t selftest_jpg_size;

struct SelfTest {
  bool ran = false, passed = false;
  int decodes = 0;
  int64_t free_before = 0, free_after = 0;
  double mean_rgb[3] = {};
  std::string detail;
};

}  // namespace pixpath::cuda
